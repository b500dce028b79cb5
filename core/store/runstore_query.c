/* runstore_query.c — reading the run store: one run, filtered and sorted lists of runs
 * (the filter itself is parsed in runstore_filter.c), a text comparison of
 * runs, samples, gate history and checkpoints, and freeing what these return. Reads never
 * write (the series: runstore_registry.c): they see the committed rows (a handle's own buffered rows are flushed by its
 * writer, runstore_flush, on the writer's schedule). Not writing (runstore_write.c), not
 * exporting files (runstore_export.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "strbuf.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- reading runs ---------------------------------------------------------------------- */

#define RUN_COLS "id, name, status, model, data_name, tags, created, started, ended, params," \
    " last_step, sweep_id, best_val, final_val, config, reason, checkpoint_dir, notes," \
    " data_hash, tokenizer, git_rev, machine, host, pid, coalesce(heartbeat, 0)," \
    " coalesce(parent_run, 0), coalesce(parent_step, 0)," \
    " coalesce((SELECT b.step FROM best_checkpoints b WHERE b.run_id=runs.id), -1)," \
    " (SELECT e.loss FROM best_checkpoints b JOIN evals e ON e.run_id=b.run_id" \
    " AND e.step=b.step AND e.split='valid' WHERE b.run_id=runs.id)," \
    " coalesce((SELECT g.name FROM run_groups g WHERE g.run_id=runs.id), '')," \
    " coalesce(parent_kind = 'init', 0)"
enum { RC_CONFIG = 14 };

static int row_fill(sqlite3_stmt *st, RunRow *r)
{
    r->id = sqlite3_column_int64(st, 0);
    col_copy(st, 1, r->name, sizeof r->name);
    col_copy(st, 2, r->status, sizeof r->status);
    col_copy(st, 3, r->model, sizeof r->model);
    col_copy(st, 4, r->data_name, sizeof r->data_name);
    col_copy(st, 5, r->tags, sizeof r->tags);
    r->created = sqlite3_column_double(st, 6);
    r->started = sqlite3_column_double(st, 7);
    r->ended = sqlite3_column_double(st, 8);
    r->params = sqlite3_column_int64(st, 9);
    r->last_step = sqlite3_column_int64(st, 10);
    r->sweep_id = sqlite3_column_int64(st, 11);
    r->best_val = col_real(st, 12);
    r->final_val = col_real(st, 13);
    r->config = col_dup(st, 14);
    col_copy(st, 15, r->reason, sizeof r->reason);
    col_copy(st, 16, r->checkpoint_dir, sizeof r->checkpoint_dir);
    r->notes = col_dup(st, 17);
    col_copy(st, 18, r->data_hash, sizeof r->data_hash);
    col_copy(st, 19, r->tokenizer, sizeof r->tokenizer);
    col_copy(st, 20, r->git_rev, sizeof r->git_rev);
    col_copy(st, 21, r->machine, sizeof r->machine);
    col_copy(st, 22, r->host, sizeof r->host);
    r->pid = sqlite3_column_int64(st, 23);
    r->heartbeat = sqlite3_column_double(st, 24);
    r->parent_run = sqlite3_column_int64(st, 25);
    r->parent_step = sqlite3_column_int64(st, 26);
    r->best_step = sqlite3_column_int64(st, 27);
    r->best_step_val = col_real(st, 28);
    col_copy(st, 29, r->group, sizeof r->group);
    r->parent_init = sqlite3_column_int(st, 30);
    return r->config && r->notes ? LM_OK : LM_ENOMEM;
}

void runstore_row_free(RunRow *row)
{
    if (!row) return;
    free(row->config);
    free(row->notes);
    row->config = row->notes = NULL;
}

void runstore_rows_free(RunRow *rows, int n)
{
    for (int i = 0; rows && i < n; i++) runstore_row_free(&rows[i]);
    free(rows);
}

int runstore_get(RunStore *s, long id, RunRow *row, char *err)
{
    sqlite3_stmt *st;
    memset(row, 0, sizeof *row);
    int rc, status = prep(s, "SELECT " RUN_COLS " FROM runs WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (row_fill(st, row)) {
            runstore_row_free(row);
            status = err_set(err, LM_ENOMEM, "out of memory reading run %ld", id);
        }
    } else {
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no run %ld", id)
                                   : runstore_db_fail(s, rc, "reading a run", err);
    }
    sqlite3_finalize(st);
    return status;
}

static const char *list_order(const char *sort)
{
    if (!sort || !*sort || !strcmp(sort, "recent")) return " ORDER BY created DESC, id DESC";
    if (!strcmp(sort, "best")) return " ORDER BY best_val IS NULL, best_val, id";
    if (!strcmp(sort, "model")) return " ORDER BY model, created DESC, id DESC";
    if (!strcmp(sort, "name")) return " ORDER BY name, id";
    return NULL;
}

/* Allocates room for cap rows. Untouched pages cost nothing, so an upper bound is fine;
 * when the bound is exact the pages are populated in one call, because faulting in
 * ~15 MB of fresh RunRows one page at a time cost more than the query itself on the
 * test VM (about 140 ms against 10 ms for 10,000 runs). */
static RunRow *rows_alloc(long cap, int exact)
{
    RunRow *rows = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *rows);
#ifdef __linux__
    size_t bytes = (size_t)cap * sizeof *rows, page = 4096;
    uintptr_t a = ((uintptr_t)rows + page - 1) & ~(uintptr_t)(page - 1);
    if (rows && exact && bytes > (1u << 20))
        madvise((void *)a, ((uintptr_t)rows + bytes - a) & ~(uintptr_t)(page - 1),
                23 /* MADV_POPULATE_WRITE, Linux 5.14+; older kernels ignore it */);
#else
    (void)exact;
#endif
    return rows;
}

static int list_count(RunStore *s, const Term *terms, int nt, long *count, char *err)
{
    sqlite3_stmt *st;
    int next, rc, status = runstore_list_prepare(s, "count(*)", terms, nt, "", &st, &next, err);
    if (status) return status;
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) *count = sqlite3_column_int64(st, 0);
    else status = runstore_db_fail(s, rc, "counting runs", err);
    sqlite3_finalize(st);
    return status;
}

/* Steps the list query into rows (room for cap), keeping rows that pass config terms. */
static int list_collect(RunStore *s, sqlite3_stmt *st, const Term *terms, int nt, long cap,
                        RunRow *rows, int *n, char *err)
{
    int rc = SQLITE_DONE;
    while (*n < cap && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!runstore_config_terms_match(terms, nt, col_str(st, RC_CONFIG))) continue;
        if (row_fill(st, &rows[(*n)++]))
            return err_set(err, LM_ENOMEM, "out of memory listing runs");
    }
    return *n >= cap || rc == SQLITE_DONE ? LM_OK : runstore_db_fail(s, rc, "listing runs", err);
}

int runstore_list(RunStore *s, const char *filter, const char *sort, int limit,
                  RunRow **rows, int *n, char *err)
{
    Term terms[MAX_TERMS];
    int nt = 0, n_config = 0, next;
    long cap = 0;
    *rows = NULL;
    *n = 0;
    const char *order = list_order(sort);
    if (!order)
        return err_set(err, LM_EARG, "unknown sort '%s' (best, recent, model, name)", sort);
    int status = runstore_parse_filter(filter, terms, &nt, err);
    for (int i = 0; i < nt; i++) n_config += terms[i].kind == K_CONFIG;
    if (!status) status = list_count(s, terms, nt, &cap, err);
    if (status || cap == 0) return status;
    if (limit > 0 && cap > limit) cap = limit;
    sqlite3_stmt *st;
    if ((status = runstore_list_prepare(s, RUN_COLS, terms, nt, order, &st, &next, err)))
        return status;
    if (!(*rows = rows_alloc(cap, n_config == 0))) {
        sqlite3_finalize(st);
        return err_set(err, LM_ENOMEM, "out of memory listing %ld runs", cap);
    }
    status = list_collect(s, st, terms, nt, cap, *rows, n, err);
    sqlite3_finalize(st);
    if (status) {
        runstore_rows_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

/* ---- compare ---------------------------------------------------------------------------- */

/* Loads n runs and their parsed configs; on failure frees what it loaded. */
int runstore_load_runs(RunStore *s, const long *ids, int n, RunRow *rows, Cfg *cfgs,
                       char *err)
{
    for (int i = 0; i < n; i++) {
        int status = runstore_get(s, ids[i], &rows[i], err);
        if (!status && runstore_cfg_parse(rows[i].config, &cfgs[i])) {
            runstore_row_free(&rows[i]);
            status = err_set(err, LM_ENOMEM, "out of memory");
        }
        if (status) {
            for (int j = 0; j < i; j++) {
                runstore_row_free(&rows[j]);
                runstore_cfg_free(&cfgs[j]);
            }
            return status;
        }
    }
    return LM_OK;
}

void runstore_free_runs(RunRow *rows, Cfg *cfgs, int n)
{
    for (int i = 0; rows && cfgs && i < n; i++) {
        runstore_row_free(&rows[i]);
        runstore_cfg_free(&cfgs[i]);
    }
    free(rows);
    free(cfgs);
}

static void cmp_line(StrBuf *b, const char *label, char (*cells)[64], int n, int w0, int w)
{
    strbuf_printf(b, "%-*s", w0, label);
    for (int i = 0; i < n; i++) strbuf_printf(b, "  %-*.*s", w, w, cells[i]);
    strbuf_printf(b, "\n");
}

/* Config lines of keys whose values differ; returns how many. */
static int cmp_config(StrBuf *b, const Cfg *cfgs, int n, char (*cells)[64], int w0, int w)
{
    int n_keys = 0, shown = 0;
    const char **keys = runstore_cfg_union(cfgs, n, &n_keys);
    for (int k = 0; keys && k < n_keys; k++) {
        int differ = 0;
        for (int i = 0; i < n; i++) {
            const char *v = runstore_cfg_get(&cfgs[i], keys[k]);
            snprintf(cells[i], 64, "%s", v ? v : "-");
            differ |= strcmp(cells[i], cells[0]) != 0;
        }
        if (differ) {
            cmp_line(b, keys[k], cells, n, w0, w);
            shown++;
        }
    }
    free(keys);
    return shown;
}

static void cmp_results(RunStore *s, StrBuf *b, const RunRow *r, int n, char (*cells)[64],
                        int w0, int w)
{
    static const char *labels[] = {"best val loss", "final val loss", "steps", "params"};
    for (int line = 0; line < 4; line++) {
        for (int i = 0; i < n; i++) {
            double v = line == 0 ? r[i].best_val : line == 1 ? r[i].final_val
                     : line == 2 ? (double)r[i].last_step : (double)r[i].params;
            if (isnan(v)) snprintf(cells[i], 64, "-");
            else if (line < 2) snprintf(cells[i], 64, "%.4f", v);
            else snprintf(cells[i], 64, "%.0f", v);
        }
        cmp_line(b, labels[line], cells, n, w0, w);
    }
    char (*names)[SERIES_NAME_LEN] = NULL, label[SERIES_NAME_LEN + 16];   /* then every */
    double *vals = NULL;                                                 /* registry series */
    int nn = 0;
    if (!runstore_series_table(s, r, n, &names, &nn, &vals, NULL))
        for (int k = 0; k < nn; k++) {
            SeriesRef ref;
            series_find(names[k], &ref, NULL);
            for (int i = 0; i < n; i++) {
                double v = vals[(size_t)k * (size_t)n + (size_t)i];
                if (isnan(v)) snprintf(cells[i], 64, "-");
                else snprintf(cells[i], 64, "%.6g", v);
            }
            snprintf(label, sizeof label, "%s (%s)", names[k], series_agg_name(ref.info->agg));
            cmp_line(b, label, cells, n, w0, w);
        }
    free(vals), free(names);
}

int runstore_compare(RunStore *s, const long *ids, int n, char **text, char *err)
{
    *text = NULL;
    if (n < 1) return err_set(err, LM_EARG, "compare needs at least one run");
    RunRow *rows = calloc((size_t)n, sizeof *rows);
    Cfg *cfgs = calloc((size_t)n, sizeof *cfgs);
    char (*cells)[64] = calloc((size_t)n, sizeof *cells);
    if (!rows || !cfgs || !cells) {
        free(rows), free(cfgs), free(cells);
        return err_set(err, LM_ENOMEM, "out of memory comparing runs");
    }
    int status = runstore_load_runs(s, ids, n, rows, cfgs, err);
    if (status) {
        free(rows), free(cfgs), free(cells);
        return status;
    }
    int w0 = 16, w = 12;
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(rows[i].name);
        w = l > w ? (l > 40 ? 40 : l) : w;
        for (int k = 0; k < cfgs[i].n; k++) {
            int kl = (int)strlen(cfgs[i].key[k]), vl = (int)strlen(cfgs[i].val[k]);
            w0 = kl + 1 > w0 ? kl + 1 : w0;
            w = vl > w ? (vl > 40 ? 40 : vl) : w;
        }
    }
    StrBuf b = {0};
    for (int i = 0; i < n; i++) snprintf(cells[i], 64, "run %ld", rows[i].id);
    cmp_line(&b, "", cells, n, w0, w);
    for (int i = 0; i < n; i++) snprintf(cells[i], 64, "%s", rows[i].name);
    cmp_line(&b, "name", cells, n, w0, w);
    for (int i = 0; i < n; i++) snprintf(cells[i], 64, "%s", rows[i].status);
    cmp_line(&b, "status", cells, n, w0, w);
    if (!cmp_config(&b, cfgs, n, cells, w0, w)) strbuf_printf(&b, "(no config differences)\n");
    cmp_results(s, &b, rows, n, cells, w0, w);
    runstore_free_runs(rows, cfgs, n);
    free(cells);
    if (b.oom || !b.p) {
        free(b.p);
        return err_set(err, LM_ENOMEM, "out of memory comparing runs");
    }
    *text = b.p;
    return LM_OK;
}

/* ---- samples, gates, checkpoints --------------------------------------------------------- */

void runstore_samples_free(SampleRow *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].prompt);
        free(rows[i].settings);
        free(rows[i].text);
    }
    free(rows);
}

int runstore_samples(RunStore *s, long run, SampleRow **rows, int *n, char *err)
{
    sqlite3_stmt *st;
    long cap = 0;
    *rows = NULL;
    *n = 0;
    int rc, status = prep(s, "SELECT id, step, created, prompt, settings, text FROM samples"
                          " WHERE run_id=? ORDER BY step, id", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(rows, &cap, *n + 1, sizeof **rows)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading samples");
            break;
        }
        SampleRow *r = &(*rows)[(*n)++];
        r->id = sqlite3_column_int64(st, 0);
        r->step = sqlite3_column_int64(st, 1);
        r->created = sqlite3_column_double(st, 2);
        r->prompt = col_dup(st, 3);
        r->settings = col_dup(st, 4);
        r->text = col_dup(st, 5);
        if (!r->prompt || !r->settings || !r->text) {
            status = err_set(err, LM_ENOMEM, "out of memory reading samples");
            break;
        }
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading samples", err);
    sqlite3_finalize(st);
    if (status) {
        runstore_samples_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

/* A gate histogram's stored text ("3,0,12,...") into GATE_HIST_BINS counts. */
static void parse_hist(const char *text, int *hist)
{
    memset(hist, 0, sizeof(int) * GATE_HIST_BINS);
    for (int b = 0; b < GATE_HIST_BINS && *text; b++) {
        char *end;
        hist[b] = (int)strtol(text, &end, 10);
        text = *end == ',' ? end + 1 : end;
    }
}

/* A row of (step, layer, level, mean, std, hist) into g. */
static void gate_read(sqlite3_stmt *st, GateStat *g)
{
    g->step = sqlite3_column_int64(st, 0);
    g->layer = sqlite3_column_int(st, 1);
    g->level = sqlite3_column_int(st, 2);
    g->mean = (float)col_real(st, 3);
    g->std = (float)col_real(st, 4);
    parse_hist(col_str(st, 5), g->hist);
}

int runstore_read_gates(RunStore *s, sqlite3_stmt *st, GateStat **stats, int *n, char *err)
{
    long cap = 0;
    int rc, status = LM_OK;
    *stats = NULL;
    *n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(stats, &cap, *n + 1, sizeof **stats)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading gate statistics");
            break;
        }
        gate_read(st, &(*stats)[(*n)++]);
    }
    if (!status && rc != SQLITE_DONE)
        status = runstore_db_fail(s, rc, "reading gate statistics", err);
    sqlite3_finalize(st);
    if (status) {
        free(*stats);
        *stats = NULL;
        *n = 0;
    }
    return status;
}

int runstore_gate_history(RunStore *s, long run, int layer, int level, GateStat **stats,
                          int *n, char *err)
{
    sqlite3_stmt *st;
    *stats = NULL;
    *n = 0;
    int status = prep(s, "SELECT step, layer, level, mean, std, hist FROM gates WHERE"
                      " run_id=? AND layer=? AND level=? ORDER BY step", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, layer);
    sqlite3_bind_int(st, 3, level);
    return runstore_read_gates(s, st, stats, n, err);
}

int runstore_gates_open(RunStore *s, long run, int layer, int level, RunStoreCursor **c,
                        char *err)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT step, layer, level, mean, std, hist FROM gates WHERE"
             " run_id=?1 AND layer=%d AND level=%d ORDER BY step", layer, level);
    return runstore_cursor_new(s, sql, run, "reading gate statistics", c, err);
}

int runstore_gate_next(RunStoreCursor *c, GateStat *g, char *err)
{
    int rc = runstore_cursor_step(c, err);
    if (rc == 1) gate_read(c->st, g);
    return rc;
}

int runstore_run_stale(const RunStore *s, const RunRow *r, double stale_seconds, double *age)
{
    *age = r->heartbeat > 0 ? sysinfo_wall() - r->heartbeat : INFINITY;
    if (strcmp(r->status, "running") && strcmp(r->status, "paused"))
        return 0;
    if (!strcmp(r->host, s->host))   /* this host: the run lock decides (store_repair) */
        return 0;
    return *age > stale_seconds;
}
