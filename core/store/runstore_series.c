/* runstore_series.c — named scalar and histogram series of runs (see runstore_series.h):
 * the schema step that adds their tables, writing a batch of points or histograms in one
 * transaction, listing a run's names by pattern and reading one series back. A
 * histogram's 64 counts are one BLOB of little-endian 64-bit integers. Not the fixed
 * tables (metrics, evals, gates: runstore_write.c, runstore_query.c). */
#include "runstore_series.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "textcheck.h"

#include <math.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SCHEMA_SERIES[] =
    "CREATE TABLE IF NOT EXISTS series_names(id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " name TEXT NOT NULL, kind INTEGER NOT NULL, UNIQUE(run_id, name));"
    "CREATE TABLE IF NOT EXISTS series_points(series_id INTEGER NOT NULL"
    " REFERENCES series_names(id) ON DELETE CASCADE, step INTEGER NOT NULL, value REAL,"
    " PRIMARY KEY(series_id, step)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS series_hists(series_id INTEGER NOT NULL"
    " REFERENCES series_names(id) ON DELETE CASCADE, step INTEGER NOT NULL, lo REAL,"
    " hi REAL, num INTEGER, sum REAL, sum_sq REAL, n_nan INTEGER, n_posinf INTEGER,"
    " n_neginf INTEGER, counts BLOB, PRIMARY KEY(series_id, step)) WITHOUT ROWID;";

int runstore_series_migrate(RunStore *s, char *err)
{
    char sql[sizeof SCHEMA_SERIES + 64];
    snprintf(sql, sizeof sql, "%sPRAGMA user_version = %d;", SCHEMA_SERIES,
             RUNSTORE_SERIES_VERSION);
    return exec_sql(s, sql, "adding the named series tables", err);
}

/* ---- writing ------------------------------------------------------------------------- */

static int name_ok(const char *name, char *err)
{
    size_t n = strnlen(name, SERIES_NAME_LEN);
    if (n == 0 || n >= SERIES_NAME_LEN)
        return err_set(err, LM_EARG, "series name '%.60s%s': give 1 to %d bytes", name,
                       n >= SERIES_NAME_LEN ? "..." : "", SERIES_NAME_LEN - 1);
    return textcheck_value("series name", name, 0, err) ? LM_EARG : LM_OK;
}

/* The id of (run, name) of kind, created when missing; LM_EARG when the name has the
 * other kind. */
static int series_id(RunStore *s, sqlite3_stmt *ins, sqlite3_stmt *get, long run,
                     const char *name, SeriesKind kind, sqlite3_int64 *id, char *err)
{
    sqlite3_bind_int64(ins, 1, run);
    bind_str(ins, 2, name);
    sqlite3_bind_int(ins, 3, kind);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    if (rc != SQLITE_DONE) return runstore_db_fail(s, rc, "naming a series", err);
    sqlite3_bind_int64(get, 1, run);
    bind_str(get, 2, name);
    rc = sqlite3_step(get);
    int status = LM_OK;
    if (rc != SQLITE_ROW) status = runstore_db_fail(s, rc, "naming a series", err);
    else if (sqlite3_column_int(get, 1) != (int)kind)
        status = err_set(err, LM_EARG, "series '%s' of run %ld is a %s, not a %s", name, run,
                         kind == SERIES_SCALAR ? "histogram" : "scalar",
                         kind == SERIES_SCALAR ? "scalar" : "histogram");
    else *id = sqlite3_column_int64(get, 0);
    sqlite3_reset(get);
    return status;
}

static void hist_bind(sqlite3_stmt *st, const SeriesHist *h)
{
    unsigned char blob[SERIES_HIST_BINS * 8];
    for (int b = 0; b < SERIES_HIST_BINS; b++)
        for (int k = 0; k < 8; k++)
            blob[b * 8 + k] = (unsigned char)((uint64_t)h->counts[b] >> (8 * k));
    bind_real(st, 3, h->lo);
    bind_real(st, 4, h->hi);
    sqlite3_bind_int64(st, 5, h->num);
    bind_real(st, 6, h->sum);
    bind_real(st, 7, h->sum_sq);
    sqlite3_bind_int64(st, 8, h->n_nan);
    sqlite3_bind_int64(st, 9, h->n_posinf);
    sqlite3_bind_int64(st, 10, h->n_neginf);
    sqlite3_bind_blob(st, 11, blob, sizeof blob, SQLITE_TRANSIENT);
}

/* One batch: scalars (v) or histograms (h), n of them, in one transaction. */
static int log_batch(RunStore *s, long run, long step, const NamedScalar *v,
                     const NamedHist *h, int n, char *err)
{
    SeriesKind kind = v ? SERIES_SCALAR : SERIES_HISTOGRAM;
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_check_run(s, run, err);
    for (int i = 0; i < n && !status; i++) status = name_ok(v ? v[i].name : h[i].name, err);
    if (status || n <= 0) return status;
    sqlite3_stmt *ins = NULL, *get = NULL, *put = NULL;
    status = prep(s, "INSERT OR IGNORE INTO series_names(run_id, name, kind) VALUES(?,?,?)",
                  &ins, err);
    if (!status)
        status = prep(s, "SELECT id, kind FROM series_names WHERE run_id=? AND name=?", &get,
                      err);
    if (!status)
        status = prep(s, v ? "INSERT OR REPLACE INTO series_points(series_id, step, value)"
                             " VALUES(?,?,?)"
                           : "INSERT OR REPLACE INTO series_hists(series_id, step, lo, hi,"
                             " num, sum, sum_sq, n_nan, n_posinf, n_neginf, counts)"
                             " VALUES(?,?,?,?,?,?,?,?,?,?,?)", &put, err);
    if (!status) status = exec_sql(s, "BEGIN IMMEDIATE", "writing named series", err);
    for (int i = 0; i < n && !status; i++) {
        sqlite3_int64 id = 0;
        status = series_id(s, ins, get, run, v ? v[i].name : h[i].name, kind, &id, err);
        if (status) break;
        sqlite3_bind_int64(put, 1, id);
        sqlite3_bind_int64(put, 2, step);
        if (v) bind_real(put, 3, v[i].value);   /* NaN -> NULL; ±Inf kept as REAL */
        else hist_bind(put, &h[i].h);
        int rc = sqlite3_step(put);
        sqlite3_reset(put);
        if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "writing named series", err);
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(get);
    sqlite3_finalize(put);
    if (!status) return tx_commit(s, "writing named series", err);
    tx_rollback(s);
    return status;
}

int runstore_series_log(RunStore *s, long run, long step, const NamedScalar *v, int n,
                        char *err)
{
    static const NamedScalar none;
    return log_batch(s, run, step, v ? v : &none, NULL, v ? n : 0, err);
}

int runstore_hist_log(RunStore *s, long run, long step, const NamedHist *h, int n,
                      char *err)
{
    static const NamedHist none;
    return log_batch(s, run, step, NULL, h ? h : &none, h ? n : 0, err);
}

/* ---- reading ------------------------------------------------------------------------- */

int runstore_series_match(const char *p, const char *n)
{
    const char *star = NULL, *resume = NULL;
    while (*n) {
        if (*p == '*') {
            star = ++p;
            resume = n;
        } else if (*p && (*p == '?' || *p == *n)) {
            p++;
            n++;
        } else if (star) {
            p = star;
            n = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*') p++;
    return !*p;
}

int runstore_series_names(RunStore *s, long run, const char *pattern, SeriesInfo **out,
                          int *n, char *err)
{
    *out = NULL;
    *n = 0;
    int status = runstore_check_run(s, run, err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "SELECT n.name, n.kind,"
        " CASE n.kind WHEN 0 THEN (SELECT count(*) FROM series_points p WHERE p.series_id=n.id)"
        " ELSE (SELECT count(*) FROM series_hists h WHERE h.series_id=n.id) END,"
        " CASE n.kind WHEN 0 THEN (SELECT min(step) FROM series_points p WHERE p.series_id=n.id)"
        " ELSE (SELECT min(step) FROM series_hists h WHERE h.series_id=n.id) END,"
        " CASE n.kind WHEN 0 THEN (SELECT max(step) FROM series_points p WHERE p.series_id=n.id)"
        " ELSE (SELECT max(step) FROM series_hists h WHERE h.series_id=n.id) END"
        " FROM series_names n WHERE n.run_id=? ORDER BY n.name", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = col_str(st, 0);
        if (pattern && *pattern && !runstore_series_match(pattern, name)) continue;
        if (runstore_grow(out, &cap, *n + 1, sizeof **out)) {
            status = err_set(err, LM_ENOMEM, "out of memory listing series");
            break;
        }
        SeriesInfo *x = &(*out)[(*n)++];
        col_copy(st, 0, x->name, sizeof x->name);
        x->kind = sqlite3_column_int(st, 1) ? SERIES_HISTOGRAM : SERIES_SCALAR;
        x->n_points = sqlite3_column_int64(st, 2);
        x->first_step = x->n_points ? sqlite3_column_int64(st, 3) : -1;
        x->last_step = x->n_points ? sqlite3_column_int64(st, 4) : -1;
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "listing series", err);
    sqlite3_finalize(st);
    if (status) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return status;
}

/* The id of run's series name, which must be of kind; LM_EARG naming what is missing. */
static int find_series(RunStore *s, long run, const char *name, SeriesKind kind,
                       sqlite3_int64 *id, char *err)
{
    int status = runstore_check_run(s, run, err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "SELECT id, kind FROM series_names WHERE run_id=? AND"
                                 " name=?", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    bind_str(st, 2, name ? name : "");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        status = err_set(err, LM_EARG, "run %ld has no series '%s'", run, name ? name : "");
    else if (rc != SQLITE_ROW) status = runstore_db_fail(s, rc, "reading a series", err);
    else if (sqlite3_column_int(st, 1) != (int)kind)
        status = err_set(err, LM_EARG, "series '%s' of run %ld is a %s", name, run,
                         kind == SERIES_SCALAR ? "histogram" : "scalar series");
    else *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return status;
}

int runstore_named_series(RunStore *s, long run, const char *name, SeriesPoint **pts,
                          int *n, char *err)
{
    *pts = NULL;
    *n = 0;
    sqlite3_int64 id = 0;
    sqlite3_stmt *st;
    int status = find_series(s, run, name, SERIES_SCALAR, &id, err);
    if (status || (status = prep(s, "SELECT step, value FROM series_points WHERE series_id=?"
                                 " ORDER BY step", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, id);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(pts, &cap, *n + 1, sizeof **pts)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading a series");
            break;
        }
        (*pts)[*n].step = sqlite3_column_int64(st, 0);
        (*pts)[(*n)++].value = col_real(st, 1);   /* NULL was NaN */
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading a series", err);
    sqlite3_finalize(st);
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}

static void hist_read(sqlite3_stmt *st, HistPoint *p)
{
    memset(p, 0, sizeof *p);
    p->step = sqlite3_column_int64(st, 0);
    p->h.lo = col_real(st, 1);
    p->h.hi = col_real(st, 2);
    p->h.num = sqlite3_column_int64(st, 3);
    p->h.sum = col_real(st, 4);
    p->h.sum_sq = col_real(st, 5);
    p->h.n_nan = sqlite3_column_int64(st, 6);
    p->h.n_posinf = sqlite3_column_int64(st, 7);
    p->h.n_neginf = sqlite3_column_int64(st, 8);
    const unsigned char *blob = sqlite3_column_blob(st, 9);
    int bytes = sqlite3_column_bytes(st, 9);
    for (int b = 0; blob && b < SERIES_HIST_BINS && (b + 1) * 8 <= bytes; b++) {
        uint64_t c = 0;
        for (int k = 7; k >= 0; k--) c = c << 8 | blob[b * 8 + k];
        p->h.counts[b] = (long)c;
    }
}

int runstore_hist_series(RunStore *s, long run, const char *name, HistPoint **pts, int *n,
                         char *err)
{
    return runstore_hist_series_from(s, run, name, LONG_MIN, pts, n, err);
}

int runstore_hist_series_from(RunStore *s, long run, const char *name, long from,
                              HistPoint **pts, int *n, char *err)
{
    *pts = NULL;
    *n = 0;
    sqlite3_int64 id = 0;
    sqlite3_stmt *st;
    int status = find_series(s, run, name, SERIES_HISTOGRAM, &id, err);
    if (status || (status = prep(s, "SELECT step, lo, hi, num, sum, sum_sq, n_nan, n_posinf,"
                                 " n_neginf, counts FROM series_hists WHERE series_id=?"
                                 " AND step >= ? ORDER BY step", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(pts, &cap, *n + 1, sizeof **pts)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading a histogram series");
            break;
        }
        hist_read(st, &(*pts)[(*n)++]);
    }
    if (!status && rc != SQLITE_DONE)
        status = runstore_db_fail(s, rc, "reading a histogram series", err);
    sqlite3_finalize(st);
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}

int runstore_named_open(RunStore *s, long run, const char *name, SeriesKind kind,
                        RunStoreCursor **c, char *err)
{
    sqlite3_int64 id = 0;
    *c = NULL;
    int status = find_series(s, run, name, kind, &id, err);
    if (status) return status;
    return runstore_cursor_new(s, kind == SERIES_SCALAR
                               ? "SELECT step, value FROM series_points WHERE series_id=?1"
                                 " ORDER BY step"
                               : "SELECT step, lo, hi, num, sum, sum_sq, n_nan, n_posinf,"
                                 " n_neginf, counts FROM series_hists WHERE series_id=?1"
                                 " ORDER BY step", (long)id, "reading a named series", c, err);
}

int runstore_hist_next(RunStoreCursor *c, HistPoint *p, char *err)
{
    int rc = runstore_cursor_step(c, err);
    if (rc == 1) hist_read(c->st, p);
    return rc;
}

int runstore_hist_nonfinite(RunStore *s, long run, const char *name, long *n, char *err)
{
    sqlite3_int64 id = 0;
    sqlite3_stmt *st;
    *n = 0;
    int status = find_series(s, run, name, SERIES_HISTOGRAM, &id, err);
    if (status || (status = prep(s, "SELECT sum(ifnull(n_nan, 0) + ifnull(n_posinf, 0) +"
                                 " ifnull(n_neginf, 0)) FROM series_hists WHERE series_id=?",
                                 &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = (long)sqlite3_column_int64(st, 0);
    else status = runstore_db_fail(s, rc, "reading a histogram series", err);
    sqlite3_finalize(st);
    return status;
}
