/* plot.h — figures for papers, drawn with cairo (Debian's libcairo2): line charts of
 * several curves with a legend and labelled axes, and a labelled heatmap. The file type
 * comes from the path's extension (.svg, .png, .pdf); every file is written to a
 * temporary name and renamed into place, so a path is either the old file or the whole
 * new one. Takes plain arrays: it knows nothing of runs or stores (commands/cmd_plot.c
 * reads those) and is kept out of core/ so the training library never links a drawing
 * library. */
#ifndef LM_PLOT_H
#define LM_PLOT_H

typedef struct {
    const char *label;     /* legend text */
    const double *x, *y;   /* (n) points in x order; a NaN or infinite y leaves a gap
                              and is marked at its x (see plot_curves) */
    int n;
    const double *lo, *hi; /* (n) or NULL: a band filled between lo and hi (a group's
                              mean ± std or min..max), drawn under the line, same colour */
    const struct PlotNonFinite *nf; /* NULL, or the NaN and infinite points of the whole
                              series when x, y are a decimation of it (core/base/m4.h):
                              the note under the plot counts these */
} PlotSeries;

typedef struct {
    const char *title, *xlabel, *ylabel;
} PlotAxes;

/* Points whose x is finite and y NaN or infinite (a run that diverged), by kind. */
typedef struct PlotNonFinite {
    long nan, pos, neg;
} PlotNonFinite;

/* 1 when path ends in .svg, .png or .pdf (case-insensitive), else 0. */
int plot_format_ok(const char *path);

/* Draws n curves (colours from a colour-blind-safe palette, in order) with axes, ticks,
 * labels, a title and a legend into path (640x400 points; PNG at 2x, 1280x800 pixels).
 * Series with fewer than 40 points also get a marker per point. The x range spans every
 * point whose x is finite: a NaN y is marked by a cross and +inf by a triangle at the top
 * edge, -inf by a triangle at the bottom edge, in the curve's colour, and a note under the
 * plot counts them ("3 non-finite points marked: 2 nan ×, 1 +inf ▲"); with no finite y at
 * all the plot says "no finite value to draw". LM_EARG for an unknown extension, n < 1 or
 * no point with a finite x; LM_EIO when the file cannot be written. */
int plot_curves(const char *path, const PlotSeries *s, int n, const PlotAxes *ax, char *err);

/* Draws a (rows, cols) grid of values in [lo, hi] as coloured cells (viridis), each
 * with its value written in, row and column labels, axis labels, a title and a colour
 * bar. v is row-major; NaN cells are left blank. Errors as plot_curves. */
int plot_heatmap(const char *path, const double *v, int rows, int cols, double lo, double hi,
                 const char *const *row_labels, const char *const *col_labels,
                 const PlotAxes *ax, char *err);

/* One small chart of a grid: a title (the series' name) and its points, or a heat
 * strip (a histogram over time): heat (heat_rows, n) column-major in [0, 1] (column i
 * at step x[i], row 0 the lowest bin), NaN blank. */
typedef struct {
    const char *title;
    const double *x, *y;   /* (n) in x order; NaN and infinite y values leave a gap and
                              are marked as plot_curves marks them (in red) */
    int n;
    const double *heat;    /* NULL: a line */
    int heat_rows;
} PlotPanel;

/* Small multiples: n panels in rows of up to four (250 x 170 points each) under a title,
 * each with its own ranges (a heat strip: viridis); a panel with no finite point says so. Errors as plot_curves
 * (n < 1: LM_EARG). */
int plot_grid(const char *path, const PlotPanel *p, int n, const char *title, char *err);

typedef struct {
    const char *label;     /* the axis's name, drawn above it */
    int n_ticks;           /* labelled positions along the axis (<= 12) */
    const double *tick_pos;        /* (n_ticks) in [0, 1], 0 = bottom */
    const char *const *tick_label; /* (n_ticks) */
} PlotParAxis;

/* Parallel coordinates: n_axes vertical axes left to right, and n_lines polylines, line
 * i crossing axis k at height pos[i * n_axes + k] in [0, 1] (NaN: the line breaks there).
 * Each line is coloured by value[i] on viridis from c_lo (dark) to c_hi (yellow), with a
 * colour bar labelled c_label; lines are drawn from the highest value to the lowest so
 * the lowest (the best loss) lies on top, and the lowest is drawn thicker. Errors as
 * plot_curves (n_axes < 2 or n_lines < 1: LM_EARG). */
int plot_parallel(const char *path, const PlotParAxis *axes, int n_axes, const double *pos,
                  const double *value, int n_lines, double c_lo, double c_hi,
                  const char *c_label, const PlotAxes *ax, char *err);

#endif
