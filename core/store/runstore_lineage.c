/* runstore_lineage.c — a fork's series continued from its ancestors' (runstore_control.h):
 * whole (runstore_series_lineage), or kept to a bounded number of points as a chart needs
 * them (runstore_series_lineage_m4): read a point at a time (runstore_series_open), each
 * of at most max_buckets step ranges keeping its first, lowest, highest and last point
 * and its first NaN (core/base/m4.h's doubling mode, the M4 plot_curve draws through: a
 * spike, a dip and a NaN stay), the ranges doubling in width as the steps go on, so that
 * one pass reads every row once and memory does not grow with the run (docs/hostile8.md: marking a 5 M-step run read its loss
 * whole, 6 s and 185 MB). Not drawing (ui/, plot/). */
#include "runstore_control.h"
#include "private/runstore_impl.h"
#include "m4.h"

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
        id = r.parent_init ? 0 : r.parent_run;   /* init_from: its own steps from 0 */
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

/* ---- M4 over step ranges that double (core/base/m4.h) ------------------------------- */

/* The kept points in step order, each step once, into *pts (malloc'd). */
static int m4_steps(const M4 *m, SeriesPoint **pts, int *n, char *err)
{
    M4Pt *k = malloc((size_t)m->max * M4_KEEP * sizeof *k + 1);
    *pts = malloc((size_t)m->max * M4_KEEP * sizeof **pts + 1);
    if (!k || !*pts) {
        free(k);
        return err_set(err, LM_ENOMEM, "out of memory reading a lineage");
    }
    int nk = m4_points(m, k);
    for (int i = 0; i < nk; i++)
        if (*n == 0 || (long)k[i].x > (*pts)[*n - 1].step)
            (*pts)[(*n)++] = (SeriesPoint){(long)k[i].x, k[i].y};
    free(k);
    return LM_OK;
}

/* The M4 points of runs chain[depth-1] .. chain[0], each up to its cut, into *pts. */
static int m4_read(RunStore *s, const long *chain, const long *cut, int depth,
                   const char *metric, int max_buckets, SeriesPoint **pts, int *n, char *err)
{
    M4 m;
    int status = m4_init_doubling(&m, max_buckets) ? err_set(err, LM_ENOMEM, "out of memory "
                                                             "reading a lineage") : LM_OK;
    long from = -1;
    for (int k = depth - 1; k >= 0 && !status; k--) {
        RunStoreCursor *c = NULL;
        SeriesPoint p;
        int rc = 0;
        if ((status = runstore_series_open(s, chain[k], metric, &c, err))) break;
        while ((rc = runstore_series_next(c, &p, err)) > 0)
            if (p.step > from && (cut[k] < 0 || p.step <= cut[k]))
                m4_add(&m, (double)p.step, p.value, NULL);
        runstore_cursor_close(c);
        status = rc < 0 ? LM_EDB : LM_OK;
        from = cut[k];
    }
    if (!status) status = m4_steps(&m, pts, n, err);
    m4_free(&m);
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
