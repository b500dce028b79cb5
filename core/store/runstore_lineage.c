/* runstore_lineage.c — a fork's series continued from its ancestors' (runstore_control.h):
 * whole (runstore_series_lineage), or kept to a bounded number of points as a chart needs
 * them (runstore_series_lineage_m4): read a point at a time (runstore_series_open), each
 * of at most max_buckets step ranges keeping its first, lowest, highest and last point
 * (M4, as plot_curve draws: a spike and a dip stay) and its first NaN, the ranges
 * doubling in width as the steps go on, so that one pass reads every row once and memory
 * does not grow with the run (docs/hostile8.md: marking a 5 M-step run read its loss
 * whole, 6 s and 185 MB). Not drawing (ui/, plot/). */
#include "runstore_control.h"
#include "private/runstore_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runs of run's lineage, itself first, and each one's last step taken (cut: -1 = all):
 * an ancestor's steps go up to its child's fork step. */
static int lineage_chain(RunStore *s, long run, long *chain, long *cut, int *depth, char *err)
{
    int status = LM_OK;
    *depth = 0;
    for (long id = run, upto = -1; id > 0 && *depth < RUNSTORE_LINEAGE_MAX && !status;) {
        RunRow r;
        if ((status = runstore_get(s, id, &r, err))) {
            if (*depth > 0) status = LM_OK;   /* a deleted ancestor: the lineage ends there */
            break;
        }
        chain[*depth] = id;
        cut[(*depth)++] = upto;
        upto = r.parent_step;
        id = r.parent_run;
        for (int k = 0; k < *depth; k++)
            if (chain[k] == id) id = 0;        /* a cycle (hand-edited store): stop */
        runstore_row_free(&r);
    }
    return status;
}

int runstore_series_lineage(RunStore *s, long run, const char *metric, SeriesPoint **pts,
                            int *n, char *err)
{
    long chain[RUNSTORE_LINEAGE_MAX], cut[RUNSTORE_LINEAGE_MAX];  /* run k: steps <= cut[k] */
    int depth = 0, status = lineage_chain(s, run, chain, cut, &depth, err);
    *pts = NULL;
    *n = 0;
    long from = -1;   /* the oldest first: each part takes its steps after the last cut */
    for (int k = depth - 1; k >= 0 && !status; k--) {
        SeriesPoint *p = NULL;
        int m = 0;
        if ((status = runstore_series(s, chain[k], metric, &p, &m, err))) break;
        SeriesPoint *grown = realloc(*pts, (size_t)(*n + m + 1) * sizeof *grown);
        if (!grown) {
            free(p);
            status = err_set(err, LM_ENOMEM, "out of memory reading a lineage");
            break;
        }
        *pts = grown;
        for (int i = 0; i < m; i++)
            if (p[i].step > from && (cut[k] < 0 || p[i].step <= cut[k]))
                (*pts)[(*n)++] = p[i];
        from = cut[k];
        free(p);
    }
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}

/* ---- M4 over step ranges that double ------------------------------------------------- */

/* A bucket's first, lowest, highest and last point, and its first NaN (a chart marks
 * NaN points: one must not vanish in a bucket). */
typedef struct { SeriesPoint first, lo, hi, last, nan; int used, has_nan; } Bucket;

typedef struct {
    Bucket *b;
    int cap;           /* buckets (max_buckets) */
    long origin, width;/* bucket k holds steps [origin + k width, origin + (k+1) width) */
} M4;

static void bucket_add(Bucket *b, const SeriesPoint *p)
{
    if (!b->used) *b = (Bucket){*p, *p, *p, *p, *p, 1, 0};
    b->last = *p;
    if (isnan(p->value) && !b->has_nan) b->nan = *p, b->has_nan = 1;
    if (isnan(p->value)) return;
    if (isnan(b->lo.value) || p->value < b->lo.value) b->lo = *p;
    if (isnan(b->hi.value) || p->value > b->hi.value) b->hi = *p;
}

/* Buckets 2k and 2k+1 into k: the width doubles. */
static void m4_halve(M4 *m)
{
    for (int k = 0; k < m->cap; k++) {
        Bucket a = 2 * k < m->cap ? m->b[2 * k] : (Bucket){0};
        Bucket c = 2 * k + 1 < m->cap ? m->b[2 * k + 1] : (Bucket){0};
        if (a.used && c.used) {
            a.last = c.last;
            if (!a.has_nan) a.nan = c.nan, a.has_nan = c.has_nan;
            if (isnan(a.lo.value) || (!isnan(c.lo.value) && c.lo.value < a.lo.value)) a.lo = c.lo;
            if (isnan(a.hi.value) || (!isnan(c.hi.value) && c.hi.value > a.hi.value)) a.hi = c.hi;
        } else if (c.used) {
            a = c;
        }
        m->b[k] = a;
    }
    m->width *= 2;
}

static void m4_add(M4 *m, const SeriesPoint *p)
{
    if (m->width == 0) m->origin = p->step, m->width = 1;
    long k = (p->step - m->origin) / m->width;
    while (k >= m->cap) {
        m4_halve(m);
        k = (p->step - m->origin) / m->width;
    }
    bucket_add(&m->b[k < 0 ? 0 : k], p);
}

/* The buckets' points in step order, each once, into *pts (malloc'd). */
static int m4_points(const M4 *m, SeriesPoint **pts, int *n, char *err)
{
    *pts = malloc((size_t)m->cap * 5 * sizeof **pts + 1);
    if (!*pts) return err_set(err, LM_ENOMEM, "out of memory reading a lineage");
    for (int k = 0; k < m->cap; k++) {
        const Bucket *b = &m->b[k];
        if (!b->used) continue;
        SeriesPoint q[5] = {b->first, b->lo, b->hi, b->last, b->nan};
        int nq = b->has_nan ? 5 : 4;
        for (int i = 1; i < nq; i++)   /* step order */
            for (int j = i; j > 0 && q[j].step < q[j - 1].step; j--) {
                SeriesPoint t = q[j];
                q[j] = q[j - 1], q[j - 1] = t;
            }
        for (int i = 0; i < nq; i++)
            if (*n == 0 || q[i].step > (*pts)[*n - 1].step) (*pts)[(*n)++] = q[i];
    }
    return LM_OK;
}

/* The M4 points of runs chain[depth-1] .. chain[0], each up to its cut, into *pts. */
static int m4_read(RunStore *s, const long *chain, const long *cut, int depth,
                   const char *metric, int max_buckets, SeriesPoint **pts, int *n, char *err)
{
    M4 m = {calloc((size_t)(max_buckets > 0 ? max_buckets : 1), sizeof *m.b),
            max_buckets > 0 ? max_buckets : 1, 0, 0};
    int status = m.b ? LM_OK : err_set(err, LM_ENOMEM, "out of memory reading a lineage");
    long from = -1;
    for (int k = depth - 1; k >= 0 && !status; k--) {
        RunStoreCursor *c = NULL;
        SeriesPoint p;
        int rc = 0;
        if ((status = runstore_series_open(s, chain[k], metric, &c, err))) break;
        while ((rc = runstore_series_next(c, &p, err)) > 0)
            if (p.step > from && (cut[k] < 0 || p.step <= cut[k])) m4_add(&m, &p);
        runstore_cursor_close(c);
        status = rc < 0 ? LM_EDB : LM_OK;
        from = cut[k];
    }
    if (!status) status = m4_points(&m, pts, n, err);
    free(m.b);
    return status;
}

int runstore_series_lineage_m4(RunStore *s, long run, const char *metric, int max_buckets,
                               SeriesPoint **pts, int *n, char *err)
{
    long chain[RUNSTORE_LINEAGE_MAX], cut[RUNSTORE_LINEAGE_MAX];
    int depth = 0, status = lineage_chain(s, run, chain, cut, &depth, err);
    *pts = NULL;
    *n = 0;
    if (!status) status = m4_read(s, chain, cut, depth, metric, max_buckets, pts, n, err);
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}

int runstore_series_m4(RunStore *s, long run, const char *metric, int max_buckets,
                       SeriesPoint **pts, int *n, char *err)
{
    const long chain[1] = {run}, cut[1] = {-1};
    *pts = NULL;
    *n = 0;
    int status = runstore_check_run(s, run, err);
    if (!status) status = m4_read(s, chain, cut, 1, metric, max_buckets, pts, n, err);
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}
