/* chart.h — the dashboard's line/point chart of up to CHART_MAX_SERIES series, auto-scaled to the
 * finite data (x over every point, so NaN and infinite points are marked where they are), with "nice" (1, 2, 5 x 10^k) ticks on both axes, linear or log y, a
 * legend, braille (2x4 dots per cell) when Unicode is available, ASCII markers
 * otherwise. Reads plain arrays; smoothing, decimation of history and data collection
 * are the caller's business (huge n is still drawn in O(n) by bucketing per dot
 * column). chart_draw_bands also fills a band (lo..hi per point) under a series' line.
 * Not an interactive chart: no zoom; a cursor is drawn by the caller (plot_frame). */
#ifndef LM_UI_CHART_H
#define LM_UI_CHART_H

#include "canvas.h"
#include "chart_ticks.h"

#define CHART_MAX_SERIES 8

enum { CHART_LINE = 0, CHART_POINTS = 1 };

typedef struct {
    const double *x;       /* (n), or NULL: x = 0, 1, 2, ... */
    const double *y;       /* (n); NaN and +-Inf are marked, not joined (see chart_draw);
                              y <= 0 in log mode is skipped */
    long n;
    const char *label;     /* legend text, may be NULL */
    int color;             /* UI_COLOR_*; 0 picks UI_COLOR_SERIES1 + index */
    int style;             /* CHART_LINE (consecutive points joined) or CHART_POINTS */
} ChartSeries;

typedef struct {
    const ChartSeries *series;  /* (n_series) */
    int n_series;              /* extra series beyond CHART_MAX_SERIES are ignored */
    const char *x_label;       /* "step", "tokens", "seconds"; may be NULL */
    int log_y;                 /* 1: logarithmic y axis */
    int fixed_y;               /* 1: use [y_lo, y_hi] instead of auto-scaling */
    double y_lo, y_hi;
    int x_log10;               /* 1: the series' x are log10 of the values (a log x axis):
                                  ticks at 1-2-5 values, labelled with the values */
} ChartData;

/* Draws the chart into r: legend on the first row (when r.h >= 6), y tick labels on
 * the left, the x axis and its tick labels at the bottom, "no data yet" when no series
 * has a point, "no finite value to draw" when none of its points is drawable (every one
 * NaN or infinite: a perplexity that overflowed). The x range spans every point whose x
 * is finite; a point whose y is NaN or +inf is marked × / ▲ (ASCII ! / ^) on the plot's
 * top row at its x, -inf ▼ (v) on the bottom row, bold in UI_COLOR_ERROR, and the legend
 * row ends with their count ("3 non-finite points marked: 2 nan ×, 1 +inf ▲", shorter
 * when the row is narrow). Draws nothing when r.w or r.h < 3. */
void chart_draw(Canvas *c, Rect r, const ChartData *d, const CanvasCaps *caps);

/* A series' band: (n of its series) lower and upper values, NULL = none. */
typedef struct {
    const double *lo, *hi;
} ChartBand;

/* chart_draw with bands: bands (d->n_series entries, or NULL) fill the dots between lo
 * and hi of each point (linear between points), dimmed in the series' colour, under
 * all lines; the y range covers them. */
void chart_draw_bands(Canvas *c, Rect r, const ChartData *d, const ChartBand *bands,
                     const CanvasCaps *caps);

/* Where chart_draw puts data: the plot area in cells and the data range it shows, so a
 * caller can place a cursor. Filled by chart_draw_bands when frame is not NULL. */
typedef struct {
    int x0, y0, cols, rows;    /* cells */
    double xmin, xmax, ymin, ymax; /* data range (ymin/ymax log10 when log_y) */
    int log_y, valid;
} ChartFrame;
void chart_draw_framed(Canvas *c, Rect r, const ChartData *d, const ChartBand *bands,
                      const CanvasCaps *caps, ChartFrame *frame);


#endif
