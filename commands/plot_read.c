/* plot_read.c — a run's series read for a figure, decimated as it is read (plot_read.h):
 * the store gives the points one at a time (the series that share a run's rows in one
 * pass), M4 (core/base/m4.h, over the series' step range) keeps a few a column, the rest are never held (the report held every point of each curve, then kept one in
 * n/2000 by stride, which could drop a spike). Not the drawing (plot/plot.c). */
#include "plot_read.h"

#include "err.h"
#include "m4.h"

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

static void keep_all(Kept *k, const M4Pt *p, int n)
{
    for (int i = 0; i < n; i++) keep(k, p[i].x, p[i].y);
}

/* One series' reading: its curve, its M4 and the kind and column of the non-finite point
 * kept last, while no finite point came after it (-1: none). */
typedef struct {
    Kept k;
    M4 m;
    int last_kind;
    long last_col;
} Reading;

static int read_point(void *ctx, int i, const SeriesPoint *p)
{
    Reading *r = (Reading *)ctx + i;
    PlotCurve *c = r->k.c;
    M4Pt out[M4_KEEP];
    double x = (double)p->step, y = p->value;
    if (r->k.oom) return LM_ENOMEM;
    c->n_all++;
    if (isfinite(y)) {
        keep_all(&r->k, out, m4_add(&r->m, x, y, out));
        r->last_kind = -1;
        return LM_OK;
    }
    keep_all(&r->k, out, m4_flush(&r->m, out));
    int kind = isnan(y) ? 0 : y > 0 ? 1 : 2;
    c->nf.nan += kind == 0, c->nf.pos += kind == 1, c->nf.neg += kind == 2;
    long col = (long)floor((x - r->m.x0) / (r->m.x1 - r->m.x0) * PLOT_READ_COLUMNS);
    if (kind != r->last_kind || col != r->last_col) keep(&r->k, x, y);
    r->last_kind = kind, r->last_col = col;
    return LM_OK;
}

int plot_read_many(RunStore *st, long run, const char *const *names, int n, PlotCurve *c,
                   char *err)
{
    memset(c, 0, (size_t)n * sizeof *c);
    Reading *r = calloc((size_t)n + 1, sizeof *r);
    const char **read = calloc((size_t)n + 1, sizeof *read);
    int nr = 0, status = LM_OK;
    if (!r || !read) status = err_set(err, LM_ENOMEM, "out of memory reading series");
    for (int k = 0; k < n && !status; k++) {   /* an empty series is not read */
        long first, last;
        int any;
        if ((status = runstore_series_span(st, run, names[k], &first, &last, &any, err)) || !any)
            continue;
        r[nr] = (Reading){.k = {&c[k], 0, 0}, .last_kind = -1};
        m4_init_range(&r[nr].m, (double)first, (double)last, 0, PLOT_READ_COLUMNS / 4.0);
        read[nr++] = names[k];
    }
    if (!status && nr)
        status = runstore_series_read_many(st, run, read, nr, read_point, r, err);
    for (int i = 0; i < nr && !status; i++) {
        M4Pt out[M4_KEEP];
        keep_all(&r[i].k, out, m4_flush(&r[i].m, out));
    }
    for (int i = 0; i < nr; i++)
        if (r[i].k.oom) {
            status = err_set(err, LM_ENOMEM, "out of memory reading %s", read[i]);
            break;
        }
    if (status)
        for (int k = 0; k < n; k++) plot_read_free(&c[k]);
    free(r), free(read);
    return status;
}

int plot_read_series(RunStore *st, long run, const char *name, PlotCurve *c, char *err)
{
    return plot_read_many(st, run, &name, 1, c, err);
}

void plot_read_free(PlotCurve *c)
{
    free(c->x);
    free(c->y);
    memset(c, 0, sizeof *c);
}
