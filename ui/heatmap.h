/* heatmap.h — a rows x cols grid of values in [0, 1] (the dispatcher's mean gate per
 * layer and level shift) shaded with block characters and a colour ramp, with a
 * cursor cell; and a small vertical-bar histogram (the gate distribution of the
 * selected cell). Both read plain arrays. Not a general image widget: values outside
 * [0, 1] are clamped, no colour bar legend beyond the title. */
#ifndef LM_UI_HEATMAP_H
#define LM_UI_HEATMAP_H

#include "canvas.h"

typedef struct {
    const char *title;              /* first line, may be NULL */
    const float *values;            /* (rows, cols) row-major in [0,1]; NaN = empty */
    int rows, cols;
    const char *const *row_labels;  /* (rows), or NULL: "L0", "L1", ... */
    const char *const *col_labels;  /* (cols), or NULL: "1", "2", "4", ... (2^col) */
    int cursor_row, cursor_col;     /* highlighted cell; -1 for none */
} HeatmapData;

/* Draws title, column labels, and one line per row: label then cells at least 3
 * columns wide when space allows (the value, "0.73", inside cells >= 6 wide). Shades
 * ' ░▒▓█' (Unicode) or ' .:-=+*#%@' (ASCII), lightest for 0, darkest for 1; coloured
 * by UI_COLOR_HEAT0..4 when caps->colors. The cursor cell is drawn in reverse video
 * and its labels bold. When the grid does not fit, it scrolls to keep the cursor in
 * view. Draws nothing when r.w or r.h < 3. */
void heatmap_draw(Canvas *c, Rect r, const HeatmapData *d, const CanvasCaps *caps);

typedef struct {
    const char *title;   /* first line, may be NULL; the total count is appended */
    const int *counts;   /* (n_bins) */
    int n_bins;
    double lo, hi;       /* bin i covers [lo + i (hi-lo)/n_bins, lo + (i+1) (hi-lo)/n_bins) */
    int color;           /* UI_COLOR_*, 0 = UI_COLOR_SERIES1 */
} HistogramData;

/* Draws the counts as vertical bars scaled to the largest count (eighth blocks in
 * Unicode, '#' in ASCII), bin edges labelled under the bars where they fit, the
 * largest count at the top left. Draws nothing when r.w or r.h < 3. */
void histogram_draw(Canvas *c, Rect r, const HistogramData *d, const CanvasCaps *caps);

#endif
