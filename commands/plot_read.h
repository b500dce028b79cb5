/* plot_read.h — a run's series read for a figure, decimated as it is read (core/base/m4.h),
 * so a curve of millions of points costs the memory of a few thousand: the report's
 * curves and the series grid. Not the drawing (plot/). */
#ifndef LM_PLOT_READ_H
#define LM_PLOT_READ_H

#include "plot.h"
#include "runstore.h"

/* Columns of the decimation: finer than any figure's quarter-point columns (a 640-point
 * figure has about 2,300), so the curve drawn is the curve of every point. */
#define PLOT_READ_COLUMNS 8192

typedef struct {
    double *x, *y;    /* (n) the points kept, in step order: malloc'd (plot_read_free) */
    int n;
    long n_all;       /* the points the series has */
    PlotNonFinite nf; /* its NaN and infinite points, every one (PlotSeries.nf) */
} PlotCurve;

/* Series name of run, read through a store cursor: of each of PLOT_READ_COLUMNS columns
 * of its step range the first, lowest, highest and last finite point (m4.h), and every
 * NaN and infinity (one a column of a run of them of one kind: the marks would cover one
 * another), so spikes, dips and gaps stay. c->n < c->n_all says it was decimated. Errors
 * as runstore_series; LM_ENOMEM. */
int plot_read_series(RunStore *st, long run, const char *name, PlotCurve *c, char *err);
/* n series of run into c[0..n), each as plot_read_series reads it, those that share their
 * rows (a run's step metrics, ...) read in one pass (runstore_series_read_many): a
 * figure of several series of a long run reads its rows once, not once a series. One
 * status for all: on a failure every curve is freed. */
int plot_read_many(RunStore *st, long run, const char *const *names, int n, PlotCurve *c,
                   char *err);
void plot_read_free(PlotCurve *c);

#endif
