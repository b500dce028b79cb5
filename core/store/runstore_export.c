/* runstore_export.c — writes runs as long-form CSV (run, step, metric, value: training
 * metrics and evaluations) or JSON (runs in the one schema runstore_run_json also gives
 * `--json runs`, with metrics and evaluations), to a stream or through a temporary file
 * renamed into place. Not an import, and not a dump of gates, samples or checkpoints. */
#include "runstore.h"
#include "series.h"
#include "jsonval.h"
#include "numtext.h"
#include "config.h"
#include "outfile.h"
#include "private/runstore_impl.h"
#include "runstore_row.h"
#include "err.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static json_t *runstore_json_f32(double v);

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

static const char EVAL_SQL[] = "SELECT step, split, loss, ppl, bpc, tokens, elapsed FROM evals"
                               " WHERE run_id=? ORDER BY step, split";
/* schema step 7 (runstore_track.c): the owner's system samples and the run's notes */
static const char SYS_SQL[] = "SELECT step, t AS time, rank, cpu, rss_mb, threads, load1,"
                              " mem_avail_mb, mem_total_mb, tokens_per_s, thread_cpu FROM"
                              " run_sysmetrics WHERE run_id=? ORDER BY t, rank";
static const char NOTES_SQL[] = "SELECT t AS time, text FROM notes WHERE run_id=? ORDER BY t, id";

/* The long-form rows of the metrics table: "run,step,metric,value" per value, written a
 * row of metrics at a time from a line buffer. Integers as integers; reals in the
 * shortest %g form that reads back the same (numtext.h): the same float for the 32-bit
 * training metrics (digits 9: 0.001, not 0.00100000005), the same double otherwise; a
 * NULL (how NaN is stored) has no row. Formatting was nine tenths of the time of the
 * CSV export of a 5 M-step run (printf and strtod several times a value). */
typedef struct {
    char name[STEP_METRIC_N][80];   /* ",name," (quoted when it needs it) */
    int len[STEP_METRIC_N];
} CsvNames;

static int csv_escape(char *out, size_t cap, const char *v)
{
    size_t o = 0;
    int quote = strpbrk(v, ",\"\n\r") != NULL;
    if (quote && o + 1 < cap) out[o++] = '"';
    for (; *v && o + 3 < cap; v++) {
        if (quote && *v == '"') out[o++] = '"';
        out[o++] = *v;
    }
    if (quote) out[o++] = '"';
    out[o] = 0;
    return (int)o;
}

static void csv_names(CsvNames *cn)
{
    for (int c = 0; c < STEP_METRIC_N; c++) {
        cn->name[c][0] = ',';
        int k = 1 + csv_escape(cn->name[c] + 1, sizeof cn->name[c] - 2, STEP_METRICS[c].name);
        cn->name[c][k++] = ',';
        cn->name[c][k] = 0;
        cn->len[c] = k;
    }
}

/* One metrics row's values (columns 1..) as lines into out (room for them all); returns
 * the bytes written. */
static size_t csv_metric_row(char *out, const CsvNames *cn, long run, sqlite3_stmt *st)
{
    char head[48];
    int nh = numtext_long(head, run);
    head[nh++] = ',';
    nh += numtext_long(head + nh, sqlite3_column_int64(st, 0));
    size_t o = 0;
    for (int c = 0; c < STEP_METRIC_N; c++) {
        int type = sqlite3_column_type(st, c + 1);
        if (type == SQLITE_NULL) continue;                 /* NaN is stored as NULL */
        memcpy(out + o, head, (size_t)nh), o += (size_t)nh;
        memcpy(out + o, cn->name[c], (size_t)cn->len[c]), o += (size_t)cn->len[c];
        if (type == SQLITE_INTEGER) {
            o += (size_t)numtext_long(out + o, sqlite3_column_int64(st, c + 1));
        } else {
            double v = sqlite3_column_double(st, c + 1);
            char buf[NUMTEXT_LEN];
            if (isfinite(v)) numtext_shortest(buf, v, STEP_METRICS[c].digits <= 9);
            else snprintf(buf, sizeof buf, "%g", v);
            size_t k = strlen(buf);
            memcpy(out + o, buf, k), o += k;
        }
        out[o++] = '\n';
    }
    return o;
}

/* One long-form value of a series read through the registry: the shortest %g that reads
 * back the same double; a recorded NaN or Inf as nan, inf or -inf (a point exists only
 * where a value was recorded: a diverging step's diagnostics are kept, as TensorBoard's
 * export keeps them). */
static void csv_point(FILE *f, long run, long step, const char *metric, double v)
{
    char buf[NUMTEXT_LEN] = "nan";
    if (isfinite(v)) numtext_shortest(buf, v, 0);
    else if (!isnan(v)) snprintf(buf, sizeof buf, "%s", v > 0 ? "inf" : "-inf");
    fprintf(f, "%ld,%ld,", run, step);
    csv_field(f, metric);
    fprintf(f, ",%s\n", buf);
}

/* The run's best checkpoint as one row: its step, metric best_checkpoint_val_loss, the
 * validation loss evaluated at that step (empty when none). */
static void csv_best(FILE *f, const RunRow *r)
{
    if (r->best_step < 0)
        return;
    fprintf(f, "%ld,%ld,best_checkpoint_val_loss,", r->id, r->best_step);
    char buf[40] = "";
    if (isfinite(r->best_step_val)) numtext_shortest(buf, r->best_step_val, 0);   /* as csv_point */
    fprintf(f, "%s\n", buf);
}

/* A series' points as long-form rows (runstore_series_each's visit); a series that
 * cannot be read stops the export with its status. */
typedef struct {
    FILE *f;
    long run;
} CsvSeries;

static int csv_series(void *ctx, const char *name, const SeriesPoint *p, int n, int status)
{
    CsvSeries *cs = ctx;
    for (int i = 0; i < n; i++) csv_point(cs->f, cs->run, p[i].step, name, p[i].value);
    return status;
}

static int export_csv_run(RunStore *s, FILE *f, long run, char *err)
{
    char cols[768], sql[1024];   /* metrics.def's metrics, its names and digits */
    runstore_step_columns(cols, sizeof cols);
    snprintf(sql, sizeof sql, "SELECT %s FROM metrics WHERE run_id=? ORDER BY step", cols);
    sqlite3_stmt *st;
    int rc, status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    CsvNames cn;
    csv_names(&cn);
    char rows[STEP_METRIC_N * (48 + 80 + NUMTEXT_LEN + 2)];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t k = csv_metric_row(rows, &cn, run, st);
        if (fwrite(rows, 1, k, f) != k) break;
    }
    if (rc == SQLITE_ROW) status = err_set(err, LM_EIO, "writing the export failed: %s",
                                           strerror(errno));
    else if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "exporting metrics", err);
    sqlite3_finalize(st);
    if (status) return status;
    /* then every other series of the registry the run has (core/base/series.h), by its
     * name there: evaluations (val_loss ...), system samples of rank 0 (sys/cpu ...),
     * gates (gate/L/K) and the named series (grad/<tensor> ...); histograms are the
     * TensorBoard export's, the best so far is the best_checkpoint row's */
    CsvSeries cs = {f, run};
    return runstore_series_each(s, run, 1u << SERIES_SRC_METRICS | 1u << SERIES_SRC_BEST |
                                1u << SERIES_SRC_HIST, csv_series, &cs, err);
}

static int export_csv(RunStore *s, FILE *f, const RunRow *rows, int n, char *err)
{
    int status = LM_OK;
    fputs("run,step,metric,value\n", f);
    for (int i = 0; i < n && !status; i++)
        if (!(status = export_csv_run(s, f, rows[i].id, err)))
            csv_best(f, &rows[i]);
    return status;
}

static int f32_column(const char *name);

/* One column's value; f32: a 32-bit training value, written in its shortest form. */
static json_t *json_col(sqlite3_stmt *st, int c, int f32)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return f32 ? runstore_json_f32(sqlite3_column_double(st, c))
                                  : json_real(sqlite3_column_double(st, c));
    case SQLITE_TEXT: return json_string(col_str(st, c));
    default: return json_null();
    }
}

/* An array of objects, one per row of the query (bound to run id); f32: the metrics
 * table, whose 32-bit columns are written in their shortest form. */
static int json_rows(RunStore *s, const char *sql, long id, int f32, json_t **out, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    json_t *arr = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int c = 0; c < sqlite3_column_count(st); c++)
            json_object_set_new(o, sqlite3_column_name(st, c),
                                json_col(st, c, f32 && f32_column(sqlite3_column_name(st, c))));
        json_array_append_new(arr, o);
    }
    if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "exporting", err);
    sqlite3_finalize(st);
    if (status) json_decref(arr);
    else *out = arr;
    return status;
}

double runstore_f32_decimal(double v)
{
    if (!isfinite(v))
        return v;
    char buf[NUMTEXT_LEN];
    numtext_shortest(buf, (double)(float)v, 1);
    return strtod(buf, NULL);
}

/* jsonval_num of runstore_f32_decimal(v). */
static json_t *runstore_json_f32(double v)
{
    return jsonval_num(runstore_f32_decimal(v));
}

/* The metrics columns that hold 32-bit training values (as export_csv_run's digits 9). */
static int f32_column(const char *name)
{
    int i = step_metric_find(name);   /* metrics.def's float metrics (9 digits) */
    return i >= 0 && STEP_METRICS[i].digits == 9;
}

/* A config value as the config table types it (core/base/config.h): a bool key's true or
 * false a JSON boolean, int and float keys numbers, string and enum keys strings (the
 * stored text's quotes removed and its \n \t \\ escapes undone: a newline in a value is
 * a newline). A key the table does not know (an older lmlab's): "64" an integer, "3e-4"
 * a number, anything else a string. */
static json_t *json_typed(const char *key, const char *stored)
{
    char v[1024];
    size_t n = strlen(stored);
    if (n >= 2 && stored[0] == '"' && stored[n - 1] == '"')
        snprintf(v, sizeof v, "%.*s", (int)(n - 2), stored + 1);
    else
        snprintf(v, sizeof v, "%s", stored);
    char *o = v;   /* config.c's escapes, undone */
    for (const char *p = v; *p; p++)
        *o++ = *p == '\\' && p[1] ? (++p, *p == 'n' ? '\n' : *p == 't' ? '\t' : *p) : *p;
    *o = 0;
    return runstore_json_setting(key, v);
}

json_t *runstore_json_setting(const char *key, const char *v)
{
    const ConfigKey *k = config_find_key(key);
    char *end;
    errno = 0;
    long long i = strtoll(v, &end, 10);
    int is_int = *v && !*end && !errno;
    double x;
    int is_num = runstore_parse_number(v, &x);
    if (k && k->type == CFG_BOOL && (!strcmp(v, "true") || !strcmp(v, "false")))
        return json_boolean(!strcmp(v, "true"));
    if (k && (k->type == CFG_STRING || k->type == CFG_ENUM))
        return jsonval_str(v);
    if (is_int && (!k || k->type == CFG_INT))
        return json_integer(i);
    return is_num ? json_real(x) : jsonval_str(v);
}

/* "key=value\n" lines as a typed JSON object (keys in their order). */
static json_t *json_config(const char *cfg)
{
    json_t *o = json_object();
    for (const char *p = cfg; p && *p;) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq && eq > p) {
            char key[128], val[1024];
            snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
            snprintf(val, sizeof val, "%.*s", (int)(end - eq - 1), eq + 1);
            json_object_set_new(o, key, json_typed(key, val));
        }
        p = nl ? nl + 1 : end;
    }
    return o;
}

static json_t *json_tags(const char *tags)
{
    json_t *a = json_array();
    char copy[256];
    snprintf(copy, sizeof copy, "%s", tags);
    for (char *sv = NULL, *t = strtok_r(copy, ", \t", &sv); t; t = strtok_r(NULL, ", \t", &sv))
        json_array_append_new(a, jsonval_str(t));
    return a;
}

json_t *runstore_json_time(double t)
{
    char buf[32] = "";
    time_t tt = (time_t)t;
    struct tm tm;
    if (t > 0 && gmtime_r(&tt, &tm)) strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf[0] ? json_string(buf) : json_null();
}

json_t *runstore_run_json(const RunRow *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(r->id));
    json_object_set_new(o, "name", jsonval_str(r->name));
    json_object_set_new(o, "model", jsonval_str(r->model));
    json_object_set_new(o, "status", jsonval_str(r->status));
    json_object_set_new(o, "steps", json_integer(r->last_step));
    json_object_set_new(o, "best_val", jsonval_num(r->best_val));
    json_object_set_new(o, "best_ppl", jsonval_num(exp(r->best_val)));
    json_object_set_new(o, "best_estimated", json_boolean(runstore_best_estimated(r)));
    json_object_set_new(o, "best_step", r->best_step >= 0 ? json_integer(r->best_step)
                                                          : json_null());
    json_object_set_new(o, "best_step_val", jsonval_num(r->best_step_val));
    json_object_set_new(o, "final_val", jsonval_num(r->final_val));
    json_object_set_new(o, "params", json_integer(r->params));
    json_object_set_new(o, "created", runstore_json_time(r->created));
    json_object_set_new(o, "created_unix", r->created > 0 ? json_real(r->created) : json_null());
    json_object_set_new(o, "tags", json_tags(r->tags));
    json_object_set_new(o, "reason", jsonval_str(r->reason));
    json_object_set_new(o, "data", jsonval_str(r->data_name));
    json_object_set_new(o, "tokenizer", jsonval_str(r->tokenizer));
    json_object_set_new(o, "notes", jsonval_str(r->notes));
    json_object_set_new(o, "group", r->group[0] ? jsonval_str(r->group) : json_null());
    json_object_set_new(o, "sweep", r->sweep_id > 0 ? json_integer(r->sweep_id) : json_null());
    json_object_set_new(o, "parent", r->parent_run > 0 ? json_integer(r->parent_run) : json_null());
    json_object_set_new(o, "parent_step", r->parent_run > 0 ? json_integer(r->parent_step)
                                                            : json_null());
    json_object_set_new(o, "config", json_config(r->config));
    return o;
}

static int export_json_run(RunStore *s, const RunRow *r, json_t *arr, char *err)
{
    json_t *o = runstore_run_json(r), *metrics = NULL, *evals = NULL, *sys = NULL, *notes = NULL;
    json_array_append_new(arr, o);
    char cols[768], sql[1024];   /* step and metrics.def's metrics, named by their columns */
    runstore_step_columns(cols, sizeof cols);
    snprintf(sql, sizeof sql, "SELECT %s FROM metrics WHERE run_id=? ORDER BY step", cols);
    int status = json_rows(s, sql, r->id, 1, &metrics, err);
    if (!status)
        status = json_rows(s, EVAL_SQL, r->id, 0, &evals, err);
    if (!status)
        status = json_rows(s, SYS_SQL, r->id, 0, &sys, err);
    if (!status)
        status = json_rows(s, NOTES_SQL, r->id, 0, &notes, err);
    if (!status) {
        json_object_set_new(o, "metrics", metrics);
        json_object_set_new(o, "evals", evals);
        json_object_set_new(o, "system", sys);
        json_object_set_new(o, "note_list", notes);
    } else {
        json_decref(metrics);
        json_decref(evals);
        json_decref(sys);
    }
    return status;
}

static int export_json(RunStore *s, FILE *f, const RunRow *rows, int n, char *err)
{
    json_t *arr = json_array();
    int status = LM_OK;
    for (int i = 0; i < n && !status; i++)
        status = export_json_run(s, &rows[i], arr, err);
    if (!status && (json_dumpf(arr, f, JSON_INDENT(1) | JSON_REAL_PRECISION(16)) ||
                    fputc('\n', f) == EOF))
        status = err_set(err, LM_EIO, "writing JSON failed");
    json_decref(arr);
    return status;
}

static int export_check(const char *format, int n, int *json, char *err)
{
    *json = format && !strcmp(format, "json");
    if (!*json && !(format && !strcmp(format, "csv")))
        return err_set(err, LM_EARG, "unknown export format '%s' (csv, json)",
                       format ? format : "");
    if (n < 1) return err_set(err, LM_EARG, "export needs at least one run");
    return LM_OK;
}

int runstore_export_stream(RunStore *s, const long *ids, int n, const char *format, FILE *f,
                           char *err)
{
    int json, status = export_check(format, n, &json, err);
    if (status) return status;
    RunRow *rows = calloc((size_t)n, sizeof *rows);
    Cfg *cfgs = calloc((size_t)n, sizeof *cfgs);
    if (!rows || !cfgs) {
        free(rows), free(cfgs);
        return err_set(err, LM_ENOMEM, "out of memory exporting");
    }
    status = runstore_load_runs(s, ids, n, rows, cfgs, err);
    if (status) {
        free(rows), free(cfgs);
        return status;
    }
    status = json ? export_json(s, f, rows, n, err) : export_csv(s, f, rows, n, err);
    runstore_free_runs(rows, cfgs, n);
    return status;
}

/* Writes through outfile: a regular file is replaced atomically (at a link's target), a
 * FIFO, a device or - is streamed, anything else is refused. */
int runstore_export(RunStore *s, const long *ids, int n, const char *format,
                    const char *path, char *err)
{
    int json, status = export_check(format, n, &json, err);
    if (status) return status;
    OutFile o;
    if ((status = outfile_open(&o, path, err))) return status;
    int fd = dup(o.fd);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        outfile_abort(&o);
        return err_set(err, LM_ENOMEM, "cannot write %s: out of memory", path);
    }
    status = runstore_export_stream(s, ids, n, format, f, err);
    int bad = ferror(f) || fflush(f);
    int e = errno;
    bad |= fclose(f) != 0;
    if (!status && bad)
        status = err_set(err, e == ENOSPC ? LM_ENOSPC : LM_EIO, "writing %s failed: %s", path,
                         strerror(e));
    if (status) {
        outfile_abort(&o);
        return status;
    }
    return outfile_commit(&o, path, err);
}
