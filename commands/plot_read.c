/* plot_read.c — a run's series read for a figure, decimated as it is read (plot_read.h):
 * the store's cursor gives the points one at a time, plot/'s M4 keeps a few a column, the
 * rest are never held (the report held every point of each curve, then kept one in
 * n/2000 by stride, which could drop a spike). Not the drawing (plot/plot.c). */
#include "plot_read.h"

#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PlotCurve *c;
    long cap;
    int oom;
} Kept;

static void keep(Kept *k, double x, double y)
{
    PlotCurve *c = k->c;
    if (k->oom) return;
    if (c->n == k->cap) {
        long cap = k->cap ? 2 * k->cap : 4 * PLOT_READ_COLUMNS + 64;
        double *nx = realloc(c->x, (size_t)cap * sizeof *nx);
        if (nx) c->x = nx;
        double *ny = nx ? realloc(c->y, (size_t)cap * sizeof *ny) : NULL;
        if (ny) c->y = ny;
        if (!nx || !ny) { k->oom = 1; return; }
        k->cap = cap;
    }
    c->x[c->n] = x, c->y[c->n++] = y;
}

static void keep_all(Kept *k, const PlotPt *p, int n)
{
    for (int i = 0; i < n; i++) keep(k, p[i].x, p[i].y);
}

int plot_read_series(RunStore *st, long run, const char *name, PlotCurve *c, char *err)
{
    long first, last;
    int n;
    memset(c, 0, sizeof *c);
    int status = runstore_series_span(st, run, name, &first, &last, &n, err);
    RunStoreCursor *cur = NULL;
    if (status || !n || (status = runstore_series_open(st, run, name, &cur, err)))
        return status;
    PlotM4 m;
    PlotPt out[4];
    Kept k = {c, 0, 0};
    plot_m4_init(&m, (double)first, (double)last, 0, PLOT_READ_COLUMNS / 4.0);
    SeriesPoint p;
    int rc, last_kind = -1;   /* the kind of the non-finite point kept last, while no
                                 finite point came after it */
    long last_col = 0;
    while ((rc = runstore_series_next(cur, &p, err)) == 1 && !k.oom) {
        double x = (double)p.step, y = p.value;
        c->n_all++;
        if (isfinite(y)) {
            keep_all(&k, out, plot_m4_add(&m, c->n_all, x, y, out));
            last_kind = -1;
            continue;
        }
        keep_all(&k, out, plot_m4_flush(&m, out));
        int kind = isnan(y) ? 0 : y > 0 ? 1 : 2;
        c->nf.nan += kind == 0, c->nf.pos += kind == 1, c->nf.neg += kind == 2;
        long col = (long)floor((x - m.x0) / (m.x1 - m.x0) * PLOT_READ_COLUMNS);
        if (kind != last_kind || col != last_col) keep(&k, x, y);
        last_kind = kind, last_col = col;
    }
    keep_all(&k, out, plot_m4_flush(&m, out));
    runstore_cursor_close(cur);
    if (rc < 0) status = LM_EDB;
    else if (k.oom) status = err_set(err, LM_ENOMEM, "out of memory reading %s", name);
    if (status) plot_read_free(c);
    return status;
}

void plot_read_free(PlotCurve *c)
{
    free(c->x);
    free(c->y);
    memset(c, 0, sizeof *c);
}
