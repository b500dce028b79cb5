/* runstore_json.c — runs in the one JSON schema of `export format=json` and `--json runs`
 * (runstore_run_json: a run's row, its settings typed by the config table), and the JSON
 * export written as it is read: each run's object, then its metrics, evaluations, system
 * samples and notes a row at a time, the text exactly what jansson's dump of the whole
 * document gave (indent 1, 16 digits), in memory that does not grow with the run (the
 * whole document was built first: 1.1 GB for 1 M steps). Not the CSV export
 * (runstore_export.c) and not a reader. */
#include "runstore.h"
#include "jsonval.h"
#include "numtext.h"
#include "config.h"
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
#include <time.h>

static json_t *runstore_json_f32(double v);

static const char EVAL_SQL[] = "SELECT step, split, loss, ppl, bpc, tokens, elapsed FROM evals"
                               " WHERE run_id=? ORDER BY step, split";
/* schema step 7 (runstore_track.c): the owner's system samples and the run's notes */
static const char SYS_SQL[] = "SELECT step, t AS time, rank, cpu, rss_mb, threads, load1,"
                              " mem_avail_mb, mem_total_mb, tokens_per_s, thread_cpu FROM"
                              " run_sysmetrics WHERE run_id=? ORDER BY t, rank";
static const char NOTES_SQL[] = "SELECT t AS time, text FROM notes WHERE run_id=? ORDER BY t, id";


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
    json_object_set_new(o, "parent_kind", r->parent_run <= 0 ? json_null() : /* or init_from */
                        json_string(r->parent_init ? "init_from" : "fork"));
    json_object_set_new(o, "config", json_config(r->config));
    return o;
}

/* ---- the export, written as it is read ------------------------------------------------ */

#define JSON_FLAGS (JSON_INDENT(1) | JSON_REAL_PRECISION(16))

/* v's dump as it reads at depth in the whole document: every line after its first
 * indented by depth more spaces; cut bytes dropped from the end (the run object's "\n}",
 * its arrays following). 0, or -1 (out of memory or a write failed). */
static int json_put(FILE *f, const json_t *v, int depth, size_t cut)
{
    char small[2048], *t = small;
    size_t n = json_dumpb(v, small, sizeof small, JSON_FLAGS);
    if (n > sizeof small && !(t = json_dumps(v, JSON_FLAGS))) return -1;
    n = n > cut ? n - cut : 0;
    int bad = 0;
    for (size_t i = 0, from = 0; i <= n && !bad; i++) {
        if (i < n && t[i] != '\n') continue;
        bad = fwrite(t + from, 1, i - from, f) != i - from;
        if (i < n) bad |= fprintf(f, "\n%*s", depth, "") < 0;
        from = i + 1;
    }
    if (t != small) free(t);
    return bad ? -1 : 0;
}

/* ,\n  "key": [ rows of sql (bound to run id) ] at depth 2, a row object at a time;
 * f32: the metrics table, whose 32-bit columns are written in their shortest form. */
static int json_array_put(RunStore *s, FILE *f, const char *key, const char *sql, long id,
                          int f32, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, sql, &st, err), rows = 0;
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    fprintf(f, ",\n  \"%s\": [", key);
    while (!status && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int c = 0; o && c < sqlite3_column_count(st); c++)
            json_object_set_new(o, sqlite3_column_name(st, c),
                                json_col(st, c, f32 && f32_column(sqlite3_column_name(st, c))));
        fputs(rows++ ? ",\n   " : "\n   ", f);
        if (!o || json_put(f, o, 3, 0))
            status = err_set(err, LM_EIO, "writing JSON failed: %s", o ? strerror(errno)
                             : "out of memory");
        json_decref(o);
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "exporting", err);
    sqlite3_finalize(st);
    fputs(rows ? "\n  ]" : "]", f);
    return status;
}

static int export_json_run(RunStore *s, FILE *f, const RunRow *r, char *err)
{
    json_t *o = runstore_run_json(r);
    int status = o && !json_put(f, o, 1, 2) ? LM_OK
                 : err_set(err, LM_EIO, "writing JSON failed: %s", o ? strerror(errno)
                           : "out of memory");
    json_decref(o);
    char cols[768], sql[1024];   /* step and metrics.def's metrics, named by their columns */
    runstore_step_columns(cols, sizeof cols);
    snprintf(sql, sizeof sql, "SELECT %s FROM metrics WHERE run_id=? ORDER BY step", cols);
    if (!status) status = json_array_put(s, f, "metrics", sql, r->id, 1, err);
    if (!status) status = json_array_put(s, f, "evals", EVAL_SQL, r->id, 0, err);
    if (!status) status = json_array_put(s, f, "system", SYS_SQL, r->id, 0, err);
    if (!status) status = json_array_put(s, f, "note_list", NOTES_SQL, r->id, 0, err);
    fputs("\n }", f);
    return status;
}

int runstore_export_json(RunStore *s, FILE *f, const RunRow *rows, int n, char *err)
{
    int status = LM_OK;
    fputs("[", f);
    for (int i = 0; i < n && !status; i++) {
        fputs(i ? ",\n " : "\n ", f);
        status = export_json_run(s, f, &rows[i], err);
    }
    fputs(n ? "\n]\n" : "]\n", f);
    if (!status && ferror(f)) status = err_set(err, LM_EIO, "writing JSON failed");
    return status;
}
