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
    status = json ? runstore_export_json(s, f, rows, n, err) : export_csv(s, f, rows, n, err);
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
