/* runstore_export.c — writes runs to a CSV file (one row per logged step, config keys as
 * columns) or a JSON file (runs with config, metrics and evaluations), through a temporary
 * file renamed into place. Not an import, and not a dump of gates, samples or checkpoints. */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- export ----------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *v)
{
    if (!strpbrk(v, ",\"\n\r")) {
        fputs(v, f);
        return;
    }
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"') fputc('"', f);
        fputc(*v, f);
    }
    fputc('"', f);
}

static const char METRIC_SQL[] = "SELECT step, epoch, tokens, loss, lr, grad_norm,"
                                 " tokens_per_s, elapsed FROM metrics WHERE run_id=? ORDER BY step";
static const char *METRIC_COLS[] = {"step", "epoch", "tokens", "loss", "lr", "grad_norm",
                                    "tokens_per_s", "elapsed"};

static int export_csv_run(RunStore *s, FILE *f, const RunRow *r, const Cfg *cfg,
                          const char **keys, int n_keys, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, METRIC_SQL, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fprintf(f, "%ld,", r->id);
        csv_field(f, r->name);
        for (int k = 0; k < n_keys; k++) {
            const char *v = runstore_cfg_get(cfg, keys[k]);
            fputc(',', f);
            csv_field(f, v ? v : "");
        }
        for (int c = 0; c < 8; c++) {
            int type = sqlite3_column_type(st, c);
            if (type == SQLITE_INTEGER) fprintf(f, ",%lld", sqlite3_column_int64(st, c));
            else if (type == SQLITE_FLOAT) fprintf(f, ",%.9g", sqlite3_column_double(st, c));
            else fputc(',', f);
        }
        fputc('\n', f);
    }
    if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "exporting metrics", err);
    sqlite3_finalize(st);
    return status;
}

static int export_csv(RunStore *s, FILE *f, const RunRow *rows, const Cfg *cfgs, int n,
                      char *err)
{
    int n_keys = 0, status = LM_OK;
    const char **keys = runstore_cfg_union(cfgs, n, &n_keys);
    if (!keys) return err_set(err, LM_ENOMEM, "out of memory exporting");
    fputs("run_id,run_name", f);
    for (int k = 0; k < n_keys; k++) {
        char h[128];
        snprintf(h, sizeof h, "config.%s", keys[k]);
        fputc(',', f);
        csv_field(f, h);
    }
    for (int c = 0; c < 8; c++) fprintf(f, ",%s", METRIC_COLS[c]);
    fputc('\n', f);
    for (int i = 0; i < n && !status; i++)
        status = export_csv_run(s, f, &rows[i], &cfgs[i], keys, n_keys, err);
    free(keys);
    return status;
}

static json_t *json_col(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, c));
    case SQLITE_TEXT: return json_string(col_str(st, c));
    default: return json_null();
    }
}

/* An array of objects, one per row of the query (bound to run id). */
static int json_rows(RunStore *s, const char *sql, long id, json_t **out, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    json_t *arr = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int c = 0; c < sqlite3_column_count(st); c++)
            json_object_set_new(o, sqlite3_column_name(st, c), json_col(st, c));
        json_array_append_new(arr, o);
    }
    if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "exporting", err);
    sqlite3_finalize(st);
    if (status) json_decref(arr);
    else *out = arr;
    return status;
}

static json_t *json_num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

static int export_json_run(RunStore *s, const RunRow *r, const Cfg *cfg, json_t *arr,
                           char *err)
{
    json_t *o = json_object(), *config = json_object(), *metrics = NULL, *evals = NULL;
    json_object_set_new(o, "id", json_integer(r->id));
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "status", json_string(r->status));
    json_object_set_new(o, "model", json_string(r->model));
    json_object_set_new(o, "data", json_string(r->data_name));
    json_object_set_new(o, "tags", json_string(r->tags));
    json_object_set_new(o, "notes", json_string(r->notes));
    json_object_set_new(o, "created", json_real(r->created));
    json_object_set_new(o, "params", json_integer(r->params));
    json_object_set_new(o, "last_step", json_integer(r->last_step));
    json_object_set_new(o, "best_val", json_num_or_null(r->best_val));
    json_object_set_new(o, "final_val", json_num_or_null(r->final_val));
    for (int k = 0; k < cfg->n; k++) {
        double x;
        json_object_set_new(config, cfg->key[k],
                            runstore_parse_number(cfg->val[k], &x) ? json_real(x)
                                                                   : json_string(cfg->val[k]));
    }
    json_object_set_new(o, "config", config);
    json_array_append_new(arr, o);
    int status = json_rows(s, METRIC_SQL, r->id, &metrics, err);
    if (!status)
        status = json_rows(s, "SELECT step, split, loss, ppl, bpc, tokens, elapsed FROM evals"
                           " WHERE run_id=? ORDER BY step, split", r->id, &evals, err);
    if (!status) {
        json_object_set_new(o, "metrics", metrics);
        json_object_set_new(o, "evals", evals);
    } else {
        json_decref(metrics);
    }
    return status;
}

static int export_json(RunStore *s, FILE *f, const RunRow *rows, const Cfg *cfgs, int n,
                       char *err)
{
    json_t *arr = json_array();
    int status = LM_OK;
    for (int i = 0; i < n && !status; i++)
        status = export_json_run(s, &rows[i], &cfgs[i], arr, err);
    if (!status && json_dumpf(arr, f, JSON_INDENT(1) | JSON_REAL_PRECISION(9)))
        status = err_set(err, LM_EIO, "writing JSON failed");
    json_decref(arr);
    return status;
}

/* Writes through a temporary file in the same directory, then renames it over path. */
static int export_write(RunStore *s, const char *path, int json, const RunRow *rows,
                        const Cfg *cfgs, int n, char *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd), unlink(tmp);
        return err_set(err, e == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot write %s: %s", path,
                       strerror(e));
    }
    fchmod(fd, 0644);
    int status = json ? export_json(s, f, rows, cfgs, n, err)
                      : export_csv(s, f, rows, cfgs, n, err);
    int bad = ferror(f) || fflush(f) || fsync(fd);
    int e = errno;
    bad |= fclose(f) != 0;
    if (!status && bad)
        status = err_set(err, e == ENOSPC ? LM_ENOSPC : LM_EIO, "writing %s failed: %s", path,
                         strerror(e));
    if (!status && rename(tmp, path))
        status = err_set(err, LM_EIO, "cannot rename into %s: %s", path, strerror(errno));
    if (status) unlink(tmp);
    return status;
}

int runstore_export(RunStore *s, const long *ids, int n, const char *format,
                    const char *path, char *err)
{
    int json = format && !strcmp(format, "json");
    if (!json && !(format && !strcmp(format, "csv")))
        return err_set(err, LM_EARG, "unknown export format '%s' (csv, json)",
                       format ? format : "");
    if (n < 1) return err_set(err, LM_EARG, "export needs at least one run");
    if (runstore_pending(s)) runstore_flush(s, NULL);
    RunRow *rows = calloc((size_t)n, sizeof *rows);
    Cfg *cfgs = calloc((size_t)n, sizeof *cfgs);
    if (!rows || !cfgs) {
        free(rows), free(cfgs);
        return err_set(err, LM_ENOMEM, "out of memory exporting");
    }
    int status = runstore_load_runs(s, ids, n, rows, cfgs, err);
    if (status) {
        free(rows), free(cfgs);
        return status;
    }
    status = export_write(s, path, json, rows, cfgs, n, err);
    runstore_free_runs(rows, cfgs, n);
    return status;
}
