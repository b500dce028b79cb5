/* runstore_registry.c — reading a run's named series through the one registry
 * (core/base/series.h): a series' points, its aggregate as one number (runs columns,
 * compare) and as an SQL expression over runs.id (filters), the list of series a run has,
 * optionally those matching a pattern, and the walk over them with their points
 * (runstore_series_each). The registry says where each series lives (the metrics, evals,
 * run_sysmetrics or gates table, or the named series' tables of runstore_series.c); the SQL here is built from registry text and numbers, and a
 * recorded series' name is quoted by SQLite (%Q), never spliced. Not writing (runstore_write.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "runstore_series.h"
#include "series.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void runstore_series_source(const SeriesRef *r, const char *run, char *from, size_t cap,
                            char *col, size_t ccap)
{
    const SeriesEntry *i = r->info;
    const char *colon = strchr(i->where, ':');
    switch (i->source) {
    case SERIES_SRC_METRICS:
        snprintf(from, cap, "metrics WHERE run_id=%s", run);
        snprintf(col, ccap, "%s", i->where);
        break;
    case SERIES_SRC_EVAL:
        snprintf(from, cap, "evals WHERE run_id=%s AND split='%.*s'", run,
                 (int)(colon ? colon - i->where : 0), i->where);
        snprintf(col, ccap, "%s", colon ? colon + 1 : "loss");
        break;
    case SERIES_SRC_BEST:
        snprintf(from, cap, "evals WHERE run_id=%s AND split='valid'", run);
        snprintf(col, ccap, "loss");   /* its running minimum: the cursor's */
        break;
    case SERIES_SRC_SYS:
        snprintf(from, cap, "run_sysmetrics WHERE run_id=%s AND rank=0", run);
        snprintf(col, ccap, "%s", i->where);
        break;
    case SERIES_SRC_GATE:
        snprintf(from, cap, "gates WHERE run_id=%s AND layer=%d AND level=%d", run, r->arg[0],
                 r->arg[1]);
        snprintf(col, ccap, "%s", i->where);
        break;
    case SERIES_SRC_NAMED:   /* a recorded name: quoted by SQLite's %Q, never spliced */
    case SERIES_SRC_HIST:
        sqlite3_snprintf((int)cap, from, "%s JOIN series_names ON series_names.id ="
                         " series_id WHERE series_names.run_id=%s AND series_names.name=%Q",
                         i->source == SERIES_SRC_NAMED ? "series_points" : "series_hists",
                         run, r->name);
        snprintf(col, ccap, i->source == SERIES_SRC_NAMED ? "value"
                 : "CASE WHEN num > 0 THEN sum / num END");   /* a histogram: its mean */
        break;
    }
}

/* A name with an optional ".last|.min|.max|.mean" into ref and *agg (the registry's when
 * none). LM_OK or LM_EARG (did you mean). */
int runstore_series_ref(const char *name, SeriesRef *ref, SeriesRegAgg *agg, char *err)
{
    static const char *const AGG[] = {"last", "min", "max", "mean"};
    char base[SERIES_NAME_LEN];
    const char *dot = name ? strrchr(name, '.') : NULL;
    for (int a = 0; dot && a < 4; a++)
        if (!strcmp(dot + 1, AGG[a]) && (size_t)(dot - name) < sizeof base) {
            snprintf(base, sizeof base, "%.*s", (int)(dot - name), name);
            if (series_find(base, ref, NULL)) break;
            *agg = (SeriesRegAgg)a;
            return LM_OK;
        }
    int rc = series_find(name, ref, err);
    if (!rc) *agg = ref->info->agg;
    return rc;
}

void runstore_series_value_sql(const SeriesRef *ref, SeriesRegAgg agg, char *sql, size_t cap)
{
    char from[480], col[64];
    static const char *const FN[] = {"", "min", "max", "avg"};
    if (ref->info->source == SERIES_SRC_BEST && agg == SERIES_AGG_LAST) {
        snprintf(sql, cap, "runs.best_val");   /* the runs table keeps it: faster */
        return;
    }
    runstore_series_source(ref, "runs.id", from, sizeof from, col, sizeof col);
    if (agg == SERIES_AGG_LAST)
        snprintf(sql, cap, "(SELECT %s FROM %s ORDER BY step DESC LIMIT 1)", col, from);
    else
        snprintf(sql, cap, "(SELECT %s(%s) FROM %s)", FN[agg], col, from);
}

int runstore_series_named(RunStore *s, long run, const char *name)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (prep(s, "SELECT 1 FROM series_names WHERE run_id=? AND name=?", &st, NULL)) return 0;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
    yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* name escaped for a message (one buffer: one use per statement). */
static const char *escaped(const char *name)
{
    static _Thread_local char buf[SERIES_NAME_LEN * 4];
    return series_escape(buf, sizeof buf, name);
}

/* runstore_series_open from step `from` on (LONG_MIN: every step). A running best is
 * computed over every evaluation, so it is read whole (runstore_series_from skips). */
static int series_open(RunStore *s, long run, const char *metric, long from,
                       RunStoreCursor **c, char *err)
{
    SeriesRef ref;
    char src[480], col[64], sql[680];
    *c = NULL;
    int status = series_find(metric, &ref, err);
    if (!status) status = runstore_check_run(s, run, err);
    if (status) return status;
    if ((ref.info->source == SERIES_SRC_NAMED || ref.info->source == SERIES_SRC_HIST) &&
        !runstore_series_named(s, run, ref.name))
        return err_set(err, LM_EARG, "run %ld has no series '%s' (`series %ld` lists its "
                       "series)", run, escaped(ref.name), run);
    runstore_series_source(&ref, "?1", src, sizeof src, col, sizeof col);
    int best = ref.info->source == SERIES_SRC_BEST;   /* the running minimum, kept here (a
                                                         window function buffers the run) */
    if (best || from == LONG_MIN)
        snprintf(sql, sizeof sql, "SELECT step, %s FROM %s ORDER BY step", col, src);
    else
        snprintf(sql, sizeof sql, "SELECT step, %s FROM %s AND step >= %ld ORDER BY step", col,
                 src, from);
    status = runstore_cursor_new(s, sql, run, "reading a series", c, err);
    if (!status) (*c)->running_min = best, (*c)->best = NAN;
    return status;
}

int runstore_series_open(RunStore *s, long run, const char *metric, RunStoreCursor **c,
                         char *err)
{
    return series_open(s, run, metric, LONG_MIN, c, err);
}

int runstore_series_span(RunStore *s, long run, const char *metric, long *first, long *last,
                         int *any, char *err)
{
    SeriesRef ref;
    char from[480], col[64], sql[1100];
    *first = *last = 0;
    *any = 0;
    int status = series_find(metric, &ref, err);
    if (!status) status = runstore_check_run(s, run, err);
    if (status) return status;
    runstore_series_source(&ref, "?1", from, sizeof from, col, sizeof col);
    snprintf(sql, sizeof sql, "SELECT (SELECT min(step) FROM %s), (SELECT max(step) FROM %s)",
             from, from);   /* each from an end of the index, where there is one */
    sqlite3_stmt *st;
    if ((status = prep(s, sql, &st, err))) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *first = (long)sqlite3_column_int64(st, 0);
        *last = (long)sqlite3_column_int64(st, 1);
        *any = sqlite3_column_type(st, 0) != SQLITE_NULL;
    } else {
        status = runstore_db_fail(s, rc, "reading a series", err);
    }
    sqlite3_finalize(st);
    return status;
}

int runstore_series_next(RunStoreCursor *c, SeriesPoint *p, char *err)
{
    int rc = runstore_cursor_step(c, err);
    if (rc == 1) {
        c->s->rows_read++;
        p->step = sqlite3_column_int64(c->st, 0);
        p->value = col_real(c->st, 1);   /* NULL was NaN */
        if (c->running_min) {            /* as min() OVER (ORDER BY step): NULLs skipped */
            if (!isnan(p->value) && (isnan(c->best) || p->value < c->best)) c->best = p->value;
            p->value = c->best;
        }
    }
    return rc;
}

int runstore_series(RunStore *s, long run, const char *metric, SeriesPoint **pts, int *n,
                    char *err)
{
    return runstore_series_from(s, run, metric, LONG_MIN, pts, n, err);
}

int runstore_series_from(RunStore *s, long run, const char *metric, long from,
                         SeriesPoint **pts, int *n, char *err)
{
    RunStoreCursor *c;
    *pts = NULL;
    *n = 0;
    int status = series_open(s, run, metric, from, &c, err), rc = 0;
    long cap = 0;
    SeriesPoint p;
    while (!status && (rc = runstore_series_next(c, &p, err)) == 1) {
        if (p.step < from) continue;   /* a running best's earlier steps */
        if (runstore_grow(pts, &cap, *n + 1, sizeof **pts)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading a series");
            break;
        }
        (*pts)[(*n)++] = p;
    }
    if (!status && rc < 0) status = LM_EDB;
    runstore_cursor_close(c);
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}

/* The statement "SELECT step, value FROM <ref's source> [AND step=?2] ORDER BY step
 * [DESC] [LIMIT 1]" of series name of run (?1 bound) into *st. */
static int series_stmt(RunStore *s, long run, const char *name, const char *tail,
                       sqlite3_stmt **st, char *err)
{
    SeriesRef ref;
    char from[480], col[64], sql[700];
    int status = series_find(name, &ref, err);
    if (status) return status;
    runstore_series_source(&ref, "?1", from, sizeof from, col, sizeof col);
    snprintf(sql, sizeof sql, "SELECT step, %s FROM %s %s", col, from, tail);
    if ((status = prep(s, sql, st, err))) return status;
    sqlite3_bind_int64(*st, 1, run);
    return LM_OK;
}

int runstore_series_point(RunStore *s, long run, const char *name, long step, SeriesPoint *p,
                          int *found, char *err)
{
    sqlite3_stmt *st;
    *found = 0;
    p->step = -1;
    p->value = NAN;
    int status = series_stmt(s, run, name, step == RUNSTORE_STEP_FIRST ? "ORDER BY step LIMIT 1"
                             : step == RUNSTORE_STEP_LAST ? "ORDER BY step DESC LIMIT 1"
                             : "AND step=?2 LIMIT 1", &st, err);
    if (status) return status;
    if (step >= 0) sqlite3_bind_int64(st, 2, step);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        p->step = sqlite3_column_int64(st, 0);
        p->value = col_real(st, 1);
        *found = 1;
        s->rows_read++;
    } else if (rc != SQLITE_DONE) {
        status = runstore_db_fail(s, rc, "reading a series", err);
    }
    sqlite3_finalize(st);
    return status;
}

long runstore_rows_read(const RunStore *s) { return s->rows_read; }

int runstore_series_summary(RunStore *s, long run, const char *name, double *v, char *err)
{
    SeriesRef ref;
    SeriesRegAgg agg;
    char expr[640], sql[720];
    *v = NAN;
    int status = runstore_series_ref(name, &ref, &agg, err);
    if (status) return status;
    runstore_series_value_sql(&ref, agg, expr, sizeof expr);
    snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE id=?", expr);
    sqlite3_stmt *st;
    if ((status = prep(s, sql, &st, err))) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *v = col_real(st, 0);
    else if (rc == SQLITE_DONE) status = err_set(err, LM_EARG, "no run %ld", run);
    else status = runstore_db_fail(s, rc, "reading a series", err);
    sqlite3_finalize(st);
    return status;
}

/* Appends name to *names (grown), when it matches pattern (NULL: any). */
static int add_name(char (**names)[SERIES_NAME_LEN], int *n, long *cap, const char *name,
                    const char *pattern)
{
    if (pattern && !series_match(pattern, name)) return LM_OK;
    if (runstore_grow(names, cap, *n + 1, sizeof **names)) return LM_ENOMEM;
    snprintf((*names)[(*n)++], SERIES_NAME_LEN, "%s", name);
    return LM_OK;
}

/* 1 when the source of ref holds a value for run. */
static int has_values(RunStore *s, long run, const SeriesRef *ref)
{
    char from[480], col[64], sql[640];
    runstore_series_source(ref, "?", from, sizeof from, col, sizeof col);
    if (ref->info->source == SERIES_SRC_NAMED || ref->info->source == SERIES_SRC_HIST)
        snprintf(col, sizeof col, "step");   /* recorded, NaN (NULL) or not */
    snprintf(sql, sizeof sql, "SELECT EXISTS(SELECT 1 FROM %s AND %s IS NOT NULL)", from, col);
    sqlite3_stmt *st;
    int yes = 0;
    if (prep(s, sql, &st, NULL)) return 0;
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) == SQLITE_ROW) yes = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return yes;
}

/* The members of a gate family run has, added to names. */
static int add_gates(RunStore *s, long run, const SeriesEntry *info, const char *pattern,
                     char (**names)[SERIES_NAME_LEN], int *n, long *cap, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT DISTINCT layer, level FROM gates WHERE run_id=?"
                          " ORDER BY layer, level", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    while (!status && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        SeriesRef ref;
        series_ref_member(info, sqlite3_column_int(st, 0), sqlite3_column_int(st, 1), &ref);
        if (add_name(names, n, cap, ref.name, pattern))
            status = err_set(err, LM_ENOMEM, "out of memory listing series");
    }
    sqlite3_finalize(st);
    return status;
}

/* The names of the series run recorded, in name order (their points not counted: a
 * name list reads series_names only, whatever the runs' lengths). */
static int recorded_names(RunStore *s, long run, char (**out)[SERIES_NAME_LEN], int *n,
                          char *err)
{
    sqlite3_stmt *st;
    long cap = 0;
    *out = NULL;
    *n = 0;
    int status = prep(s, "SELECT name FROM series_names WHERE run_id=? ORDER BY name", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(out, &cap, *n + 1, sizeof **out)) {
            status = err_set(err, LM_ENOMEM, "out of memory listing series");
            break;
        }
        col_copy(st, 0, (*out)[(*n)++], SERIES_NAME_LEN);
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "listing series", err);
    sqlite3_finalize(st);
    return status;
}

/* The recorded series (rec, nr) that are members of the family info, added to names. */
static int add_named(char (*rec)[SERIES_NAME_LEN], int nr, const SeriesEntry *info,
                     const char *pattern, char (**names)[SERIES_NAME_LEN], int *n, long *cap,
                     char *err)
{
    for (int i = 0; i < nr; i++) {
        SeriesRef ref;
        if (!series_find(rec[i], &ref, NULL) && ref.info == info &&
            add_name(names, n, cap, rec[i], pattern))
            return err_set(err, LM_ENOMEM, "out of memory listing series");
    }
    return LM_OK;
}

int runstore_series_list(RunStore *s, long run, const char *pattern,
                          char (**names)[SERIES_NAME_LEN], int *n, char *err)
{
    long cap = 0;
    int status = LM_OK;
    *names = NULL;
    *n = 0;
    if (pattern && (status = series_pattern_check(pattern, err))) return status;
    if ((status = runstore_check_run(s, run, err))) return status;
    char (*rec)[SERIES_NAME_LEN] = NULL;
    int nr = 0;
    if ((status = recorded_names(s, run, &rec, &nr, err))) return status;
    for (int i = 0; !status && i < series_count(); i++) {
        const SeriesEntry *info = series_info(i);
        SeriesRef ref = {.info = info};
        snprintf(ref.name, sizeof ref.name, "%s", info->name);
        if (info->source == SERIES_SRC_GATE)
            status = add_gates(s, run, info, pattern, names, n, &cap, err);
        else if (info->source == SERIES_SRC_NAMED || info->source == SERIES_SRC_HIST)
            status = add_named(rec, nr, info, pattern, names, n, &cap, err);
        else if (!info->family && has_values(s, run, &ref) &&
                 add_name(names, n, &cap, info->name, pattern))
            status = err_set(err, LM_ENOMEM, "out of memory listing series");
    }
    if (!status && pattern && *n == 0) {
        char shown[SERIES_NAME_LEN * 4], all[1024];
        size_t o = 0;
        char (*every)[SERIES_NAME_LEN] = NULL;
        int ne = 0;
        runstore_series_list(s, run, NULL, &every, &ne, NULL);
        for (int i = 0; i < ne && o < sizeof all - 1; i++)
            o += (size_t)snprintf(all + o, sizeof all - o, "%s%s", i ? " " : "", every[i]);
        free(every);
        status = err_set(err, LM_EARG, "no series of run %ld matches '%s' (it has: %s)", run,
                         series_escape(shown, sizeof shown, pattern), ne ? all : "none yet");
    }
    free(rec);
    if (status) {
        free(*names);
        *names = NULL;
        *n = 0;
    }
    return status;
}

int runstore_series_each(RunStore *s, long run, unsigned skip, RunStoreSeriesVisit visit,
                         void *ctx, char *err)
{
    char (*names)[SERIES_NAME_LEN] = NULL;
    int nn = 0, status = runstore_series_list(s, run, NULL, &names, &nn, err);
    SeriesPoint *chunk = nn ? malloc(RUNSTORE_SERIES_CHUNK * sizeof *chunk) : NULL;
    if (!status && nn && !chunk) status = err_set(err, LM_ENOMEM, "out of memory");
    for (int k = 0; !status && k < nn; k++) {
        SeriesRef ref;
        if (series_find(names[k], &ref, NULL) || (skip & (1u << ref.info->source)))
            continue;
        RunStoreCursor *c;
        int rc = runstore_series_open(s, run, names[k], &c, err), calls = 0, more = 1;
        if (rc) {
            status = visit(ctx, names[k], NULL, 0, rc);
            continue;
        }
        while (more == 1 && !status) {   /* a chunk at a time; a short or empty one ends */
            int np = 0;
            while (np < RUNSTORE_SERIES_CHUNK &&
                   (more = runstore_series_next(c, &chunk[np], err)) == 1)
                np++;
            if (more < 0) status = visit(ctx, names[k], NULL, 0, LM_EDB);
            else if (np || !calls) status = visit(ctx, names[k], chunk, np, LM_OK);
            calls++;
        }
        runstore_cursor_close(c);
    }
    free(chunk);
    free(names);
    return status;
}

int runstore_series_union(RunStore *s, const long *ids, int n_ids,
                          char (**names)[SERIES_NAME_LEN], int *n, char *err)
{
    long cap = 0;
    *names = NULL;
    *n = 0;
    for (int i = 0; i < series_count(); i++) {
        const SeriesEntry *info = series_info(i);
        SeriesRef ref = {.info = info};
        snprintf(ref.name, sizeof ref.name, "%s", info->name);
        int has = 0;
        for (int r = 0; !info->family && r < n_ids && !has; r++)
            has = has_values(s, ids[r], &ref);
        if (has && add_name(names, n, &cap, info->name, NULL)) {
            free(*names);
            *names = NULL;
            *n = 0;
            return err_set(err, LM_ENOMEM, "out of memory listing series");
        }
    }
    return LM_OK;
}

int runstore_series_table(RunStore *s, const RunRow *runs, int n_runs,
                          char (**names)[SERIES_NAME_LEN], int *n, double **values, char *err)
{
    long *ids = calloc((size_t)n_runs + 1, sizeof *ids);
    int status = ids ? LM_OK : err_set(err, LM_ENOMEM, "out of memory comparing series");
    *names = NULL, *n = 0, *values = NULL;
    for (int i = 0; ids && i < n_runs; i++) ids[i] = runs[i].id;
    if (!status) status = runstore_series_union(s, ids, n_runs, names, n, err);
    free(ids);
    if (!status && !(*values = malloc(((size_t)*n * (size_t)n_runs + 1) * sizeof **values))) {
        free(*names), *names = NULL, *n = 0;
        status = err_set(err, LM_ENOMEM, "out of memory comparing series");
    }
    for (int k = 0; !status && k < *n; k++)
        for (int i = 0; i < n_runs; i++) {
            double *v = &(*values)[(size_t)k * (size_t)n_runs + (size_t)i];
            *v = NAN;
            runstore_series_summary(s, runs[i].id, (*names)[k], v, NULL);
        }
    return status;
}
