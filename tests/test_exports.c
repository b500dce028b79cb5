/* test_exports.c — what lmlab tells other tools (issue 16), through the real command
 * table and real tiny training runs: printed step events against the run store (JSON and
 * text), the long-form CSV export read back, the JSON export sharing `--json runs`'s
 * schema, export to stdout, plots written as SVG/PNG/PDF and checked by their magic bytes
 * and size, scripts with `file:line:` errors and --keep-going, word-level sampling joins
 * and unknown words, sample positions=slide, refusal of binary data files. Not a test of
 * the store's SQL (test_runstore.c) nor of training itself (test_trainer.c). */
#include "check.h"
#include "series.h"
#include "err.h"
#include "metrics.h"
#include "repl.h"
#include "runstore.h"
#include "session.h"
#include "session_util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The JSON objects of the output whose "event" is ev (all when NULL), in an array. */
static json_t *json_events(const char *ev)
{
    json_t *a = json_array();
    char *copy = strdup(out);
    for (char *sv = NULL, *l = strtok_r(copy, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
        json_t *o = json_loads(l, 0, NULL);
        const char *e = o ? json_string_value(json_object_get(o, "event")) : NULL;
        if (o && (!ev || (e && !strcmp(e, ev))))
            json_array_append_new(a, o);
        else
            json_decref(o);
    }
    free(copy);
    return a;
}

/* The value of metric at step in the store's series, NAN when absent. */
static double stored(const SeriesPoint *p, int n, long step)
{
    for (int i = 0; i < n; i++)
        if (p[i].step == step) return p[i].value;
    return NAN;
}

static long json_run;   /* the run of test_events_json: 90 steps, evaluations at 30, 60, 90 */

static long train_run(Session *s, const char *settings)
{
    char line[256];
    snprintf(line, sizeof line, "set %s", settings);
    CHECK(run(s, "use quick") == LM_OK, "use quick: %s", out);
    CHECK(run(s, line) == LM_OK, "%s: %s", line, out);
    int json = s->json;
    s->json = 1;
    CHECK(run(s, "train") == LM_OK, "train: %s", out);
    json_t *a = json_events(NULL);
    json_t *o = json_array_get(a, json_array_size(a) - 1);
    long id = o ? (long)json_integer_value(json_object_get(o, "run")) : 0;
    json_decref(a);
    s->json = json;
    CHECK(run(s, "wait") == LM_OK, "wait: %s", out);
    return id;
}

/* --json: every step event carries that step's own tokens, elapsed, grad_norm, loss. */
static void test_events_json(Session *s)
{
    s->json = 1;
    long id = train_run(s, "runs_dir=runs steps=90 log_every=10 eval_every=30 sample_every=0 lr=0.001 "
                           "checkpoint_every=0");
    json_run = id;
    /* issue 33 item 8: 32-bit values as they were set, not float noise */
    CHECK(strstr(out, "\"lr\":0.001,") && !strstr(out, "0.0010000000"), "lr noise: %.300s", out);
    json_t *a = json_events("step");
    RunStore *st = NULL;
    char err[LM_ERR_LEN];
    CHECK(runstore_open("test.db", &st, err) == LM_OK, "%s", err);
    const char *metrics[] = {"tokens", "elapsed", "grad_norm", "loss", "tokens_per_s"};
    CHECK(json_array_size(a) == 9, "%zu step events for 90 steps at log_every=10: %s",
          json_array_size(a), out);
    for (int m = 0; m < 5; m++) {
        SeriesPoint *p = NULL;
        int n = 0;
        CHECK(runstore_series(st, id, metrics[m], &p, &n, err) == LM_OK, "%s", err);
        CHECK(n == 9, "store has %d %s points", n, metrics[m]);
        int distinct = 0;
        double prev = NAN;
        for (size_t i = 0; i < json_array_size(a); i++) {
            json_t *o = json_array_get(a, i);
            long step = (long)json_integer_value(json_object_get(o, "step"));
            CHECK(step == (long)(i + 1) * 10, "event %zu is step %ld", i, step);
            double v = json_number_value(json_object_get(o, metrics[m]));
            double want = stored(p, n, step);
            CHECK(fabs(v - want) <= 1e-6 * (1 + fabs(want)), "step %ld %s printed %.9g, "
                  "stored %.9g", step, metrics[m], v, want);
            distinct += i == 0 || v != prev;
            prev = v;
        }
        CHECK(distinct >= 8, "%s takes only %d distinct values over 9 steps", metrics[m],
              distinct);
        free(p);
    }
    runstore_close(st);
    json_decref(a);
}

/* Text mode: one line per logged step (none skipped), with that step's |g|. */
static void test_events_text(Session *s)
{
    s->json = 0;
    long id = train_run(s, "runs_dir=runs steps=300 log_every=50 eval_every=0 sample_every=0 "
                           "checkpoint_every=0");
    RunStore *st = NULL;
    char err[LM_ERR_LEN];
    CHECK(runstore_open("test.db", &st, err) == LM_OK, "%s", err);
    SeriesPoint *p = NULL;
    int n = 0;
    CHECK(runstore_series(st, id, "grad_norm", &p, &n, err) == LM_OK, "%s", err);
    for (long step = 50; step <= 300; step += 50) {
        char want[64];
        snprintf(want, sizeof want, "step %6ld/300", step);
        const char *l = strstr(out, want);
        CHECK(l != NULL, "no line for step %ld: %s", step, out);
        const char *g = l ? strstr(l, "|g| ") : NULL;
        double v = g ? atof(g + 4) : NAN;
        CHECK(fabs(v - stored(p, n, step)) < 6e-4, "step %ld |g| printed %.4f, stored %.4f",
              step, v, stored(p, n, step));
    }
    free(p);
    runstore_close(st);
    s->json = 1;
}

/* CSV to stdout, long form, read back: every (step, metric) equals the store's series,
 * evaluations included, integers written as integers. */
static void test_export_csv(Session *s)
{
    char line[128];
    s->json = 0;
    snprintf(line, sizeof line, "export %ld", json_run);
    CHECK(run(s, line) == LM_OK && n_errors == 0, "%s", out);
    CHECK(!strncmp(out, "run,step,metric,value\n", 22), "header: %.100s", out);
    CHECK(strstr(out + 1, "run,step") == NULL, "a second header: %.100s", out);
    RunStore *st = NULL;
    char err[LM_ERR_LEN];
    CHECK(runstore_open("test.db", &st, err) == LM_OK, "%s", err);
    const char *evals[] = {"val_loss", "val_ppl", "val_bpc"};   /* and metrics.def's */
    int rows = 0, matched = 0, n_val = 0, int_tokens = 1, n_sys = 0, n_best = 0;
    char *copy = strdup(out + 22);
    for (char *sv = NULL, *l = strtok_r(copy, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
        long r = 0, step = 0;
        char metric[32], value[64];
        rows++;
        if (sscanf(l, "%ld,%ld,%31[^,],%63s", &r, &step, metric, value) != 4 || r != json_run) {
            CHECK(0, "bad row '%s'", l);
            continue;
        }
        if (!strncmp(metric, "sys/", 4)) {   /* issue 37: the owner's system samples */
            n_sys += !strcmp(metric, "sys/rss_mb") && atof(value) > 0;
            rows--;
            continue;
        }
        if (!strcmp(metric, "tokens") && strpbrk(value, ".eE")) int_tokens = 0;
        n_val += !strcmp(metric, "val_loss");
        int best = !strcmp(metric, "best_checkpoint_val_loss");   /* issue 33 */
        n_best += best;
        const char *series = best ? "val_loss" : metric;
        SeriesRef ref;   /* every row is a series of the registry (issue 48) */
        int known = series_find(series, &ref, NULL) == LM_OK;
        for (int m = 0; m < 3; m++) known |= !strcmp(series, evals[m]);
        if (known) {
            SeriesPoint *p = NULL;
            int n = 0;
            runstore_series(st, json_run, series, &p, &n, err);
            double want = stored(p, n, step), v = atof(value);
            matched += fabs(v - want) <= 1e-6 * (1 + fabs(want));
            free(p);
        }
    }
    free(copy);
    CHECK(rows >= 9 * STEP_METRIC_N + n_val * 2 && matched == rows, "%d rows, %d match the store", rows,
          matched);
    CHECK(n_val == 3, "%d validation rows (evaluations at 30, 60 and the end)", n_val);
    CHECK(n_sys >= 1, "no sys/rss_mb row: the run's system metrics are not exported");
    CHECK(int_tokens, "tokens written as a float");
    /* issue 27: the shortest form that reads back: lr=0.001 stored as a float is 0.001 */
    CHECK(strstr(out, ",lr,0.001\n") && !strstr(out, "0.00100000005"),
          "lr not in its shortest form: %.300s", strstr(out, ",lr,") ? strstr(out, ",lr,") : out);
    CHECK(n_val == 3 && strstr(out, ",30,val_bpc,") && strstr(out, ",60,val_bpc,"),
          "val_bpc not at every evaluation");
    runstore_close(st);
    snprintf(line, sizeof line, "export %ld file=back.csv", json_run);
    char copy_out[1 << 16];
    snprintf(copy_out, sizeof copy_out, "%s", out);
    CHECK(run(s, line) == LM_OK, "%s", out);
    FILE *f = fopen("back.csv", "r");
    char buf[1 << 16] = "";
    size_t nb = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[nb] = 0;
    if (f) fclose(f);
    CHECK(!strcmp(buf, copy_out), "file and stdout differ");
}

/* `export format=json` and `--json runs` share one schema: the same run object. */
static void test_export_schema(Session *s)
{
    char line[128];
    s->json = 1;
    snprintf(line, sizeof line, "tag %ld paper", json_run);
    CHECK(run(s, line) == LM_OK, "%s", out);
    snprintf(line, sizeof line, "runs id=%ld", json_run);
    CHECK(run(s, line) == LM_OK, "%s", out);
    json_t *listed = json_loads(out, 0, NULL);
    snprintf(line, sizeof line, "export %ld format=json", json_run);
    CHECK(run(s, line) == LM_OK, "%s", out);
    /* under --json the export is one object a line (issue 25): the run and its event */
    json_t *arr = json_loads(out, 0, NULL), *ex = arr;
    CHECK(listed && json_is_object(ex), "runs: %p export: %s", (void *)listed, out);
    if (!listed || !json_is_object(ex)) return;
    CHECK(json_is_string(json_object_get(ex, "event")) &&
          !strcmp(json_string_value(json_object_get(ex, "event")), "export"),
          "not one export object a line: %s", out);
    json_object_del(ex, "event");
    json_t *metrics = json_incref(json_object_get(ex, "metrics"));
    json_t *evals = json_incref(json_object_get(ex, "evals"));
    json_object_del(ex, "metrics");
    json_object_del(ex, "evals");
    json_t *sys = json_object_get(ex, "system");   /* issue 37: system samples and notes */
    CHECK(json_array_size(sys) >= 1 && json_real_value(json_object_get(json_array_get(sys, 0),
                                                                       "rss_mb")) > 0,
          "system samples in the export: %s", json_dumps(sys, 0));
    CHECK(json_is_array(json_object_get(ex, "note_list")), "note_list in the export");
    json_object_del(ex, "system");
    json_object_del(ex, "note_list");
    CHECK(json_equal(listed, ex), "schemas differ:\n%s\n%s", json_dumps(listed, 0),
          json_dumps(ex, 0));
    json_t *cfg = json_object_get(ex, "config");
    CHECK(json_is_integer(json_object_get(cfg, "d")) &&
          json_integer_value(json_object_get(cfg, "d")) == 32, "d is not the integer 32");
    CHECK(json_is_real(json_object_get(cfg, "lr")), "lr is not a number");
    /* issue 27: booleans are JSON booleans, a newline in a value a newline */
    CHECK(json_is_false(json_object_get(cfg, "tie")), "tie is not the boolean false: %s",
          json_dumps(cfg, 0));
    CHECK(!strcmp(json_string_value(json_object_get(cfg, "sample_prompt")), "\n"),
          "sample_prompt is not one newline: %s", json_dumps(json_object_get(cfg,
          "sample_prompt"), JSON_ENCODE_ANY));
    json_t *tags = json_object_get(ex, "tags");
    CHECK(json_is_array(tags) && !strcmp(json_string_value(json_array_get(tags, 0)), "paper"),
          "tags is not a list");
    const char *iso = json_string_value(json_object_get(ex, "created"));
    int Y, M, D, h, m, sec;
    CHECK(iso && sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2dZ", &Y, &M, &D, &h, &m, &sec) == 6 &&
          strlen(iso) == 20, "created is not ISO 8601: %s", iso ? iso : "null");
    double unix_s = json_real_value(json_object_get(ex, "created_unix"));
    CHECK(unix_s > 1.7e9 && unix_s != floor(unix_s) && fabs(unix_s - time(NULL)) < 600,
          "created_unix %.6f is not this run's time in seconds with a fraction", unix_s);
    CHECK(json_array_size(metrics) == 9 && json_is_integer(json_object_get(
          json_array_get(metrics, 0), "tokens")), "metrics: %s", json_dumps(metrics, 0));
    char *md = json_dumps(json_array_get(metrics, 0), 0);   /* issue 33 item 8 */
    CHECK(md && strstr(md, "\"lr\": 0.001,") && !strstr(md, "0.0010000000"), "lr: %s", md);
    free(md);
    CHECK(json_is_null(json_object_get(ex, "group")) && json_is_integer(json_object_get(ex,
          "best_step")), "group/best_step: %s", json_dumps(ex, 0));
    CHECK(run(s, "show config") == LM_OK && strstr(out, "\"d\":") &&
          !strstr(out, "\"d\":\"") && strstr(out, "\"tie\":false") &&
          strstr(out, "\"model\":\""), "--json show config: %.300s", out);
    snprintf(line, sizeof line, "sample runs=%ld tokens=2 temp=0.7", json_run);
    CHECK(run(s, line) == LM_OK && strstr(out, "\"temp\":0.7,"), "sample temp: %s", out);
    CHECK(json_array_size(evals) >= 2, "evals: %s", json_dumps(evals, 0));
    json_decref(metrics);
    json_decref(evals);
    json_decref(arr);
    json_decref(listed);
}

/* best_estimated (issue 33's "best is an estimate" in every JSON): `--json runs`, `--json
 * run ID` and `export format=json` all say it, agree with the ~ that the `runs` table prints
 * and with `run`'s best_eval.whole_split. A run stopped before its final whole-split
 * evaluation (made in the store: a stop cannot be timed here) has an estimated best. */
static int json_estimated(Session *s, const char *fmt, long id, int *whole)
{
    char line[128];
    snprintf(line, sizeof line, fmt, id);
    CHECK(run(s, line) == LM_OK, "%s: %s", line, out);
    json_t *o = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *b = json_object_get(o, "best_estimated");
    CHECK(json_is_boolean(b), "%s: no boolean best_estimated in %.400s", line, out);
    int v = json_is_true(b);
    json_t *be = json_object_get(json_object_get(o, "best_eval"), "whole_split");
    if (whole) *whole = json_is_boolean(be) ? json_is_true(be) : -1;
    json_decref(o);
    return v;
}

static void test_best_estimated(Session *s)
{
    RunStore *st = NULL;
    char err[LM_ERR_LEN], line[64];
    long stopped = 0;
    CHECK(runstore_open("test.db", &st, err) == LM_OK, "%s", err);
    if (!st) return;
    RunInfo info = {.name = "stopped-early", .config = "eval_batches=5\nlr_min=0\n",
                    .model = "lstm", .data_name = "tiny", .tokenizer = "char"};
    CHECK(runstore_run_create(st, &info, &stopped, err) == LM_OK, "create: %s", err);
    for (int i = 0; i < 3; i++) {
        EvalMetric e = {.step = 30L * (i + 1), .split = "valid", .loss = 3.0 - 0.4 * i,
                        .ppl = exp(3.0 - 0.4 * i), .bpc = NAN, .tokens = 100};
        CHECK(runstore_log_eval(st, stopped, &e, err) == LM_OK, "eval: %s", err);
    }
    CHECK(runstore_flush(st, err) == LM_OK &&
          runstore_run_set_status(st, stopped, "stopped", "stopped by the user", err) == LM_OK,
          "stop: %s", err);
    runstore_close(st);
    long ids[2] = {stopped, json_run};
    for (int i = 0; i < 2; i++) {
        s->json = 0;
        snprintf(line, sizeof line, "runs id=%ld", ids[i]);
        CHECK(run(s, line) == LM_OK, "%s: %s", line, out);
        int tilde = strstr(out, " ~") != NULL;   /* the table's mark of an estimated best */
        s->json = 1;
        int whole = -1;
        int listed = json_estimated(s, "runs id=%ld", ids[i], NULL);
        int shown = json_estimated(s, "run %ld", ids[i], &whole);
        int exported = json_estimated(s, "export %ld format=json", ids[i], NULL);
        CHECK(listed == tilde && shown == tilde && exported == tilde,
              "run %ld: runs prints %s, JSON runs/run/export say %d/%d/%d", ids[i],
              tilde ? "~" : "no ~", listed, shown, exported);
        CHECK(whole == !shown, "run %ld: best_eval.whole_split %d but best_estimated %d",
              ids[i], whole, shown);
        CHECK(listed == !i, i ? "a finished run whose best is its final whole-split evaluation: "
              "best_estimated %d" : "a run stopped before its final evaluation: best_estimated "
              "%d", listed);
    }
}

/* The first n bytes of a file into buf; returns the file's size (-1 when missing). */
static long head_of(const char *path, unsigned char *buf, size_t n)
{
    struct stat sb;
    FILE *f = fopen(path, "rb");
    if (!f || stat(path, &sb)) {
        if (f) fclose(f);
        return -1;
    }
    memset(buf, 0, n);
    if (fread(buf, 1, n, f)) {}
    fclose(f);
    return (long)sb.st_size;
}

/* plot: curves of three runs and a gate heatmap as PNG, SVG and PDF, checked by their
 * magic bytes, size and (PNG) pixel dimensions; bad requests give one clear error. */
static void test_plot(Session *s, long a, long b)
{
    char line[256];
    unsigned char h[64];
    s->json = 0;
    snprintf(line, sizeof line, "plot %ld %ld %ld metric=val x=tokens file=cmp.png", a, b, a);
    CHECK(run(s, line) == LM_OK && strstr(out, "wrote cmp.png"), "%s", out);
    long size = head_of("cmp.png", h, sizeof h);
    unsigned w = (unsigned)h[16] << 24 | h[17] << 16 | h[18] << 8 | h[19];
    unsigned ht = (unsigned)h[20] << 24 | h[21] << 16 | h[22] << 8 | h[23];
    CHECK(size > 10000 && !memcmp(h, "\x89PNG\r\n\x1a\n", 8) && !memcmp(h + 12, "IHDR", 4) &&
          w == 1280 && ht == 800, "cmp.png: %ld bytes, %ux%u", size, w, ht);
    snprintf(line, sizeof line, "plot %ld %ld smooth=3 x=time file=cmp.svg", a, b);
    CHECK(run(s, line) == LM_OK, "%s", out);
    size = head_of("cmp.svg", h, sizeof h - 1);
    CHECK(size > 5000 && strstr((char *)h, "<svg") , "cmp.svg: %ld bytes: %.60s", size, h);
    snprintf(line, sizeof line, "plot %ld file=cmp.pdf", b);
    CHECK(run(s, line) == LM_OK, "%s", out);
    size = head_of("cmp.pdf", h, sizeof h);
    CHECK(size > 2000 && !memcmp(h, "%PDF-", 5), "cmp.pdf: %ld bytes", size);
    s->json = 1;
    snprintf(line, sizeof line, "plot gates %ld step=60 file=gates.png", a);
    CHECK(run(s, line) == LM_OK, "%s", out);
    json_t *o = json_loads(out, 0, NULL);
    CHECK(o && json_integer_value(json_object_get(o, "step")) == 60 &&
          json_integer_value(json_object_get(o, "layers")) == 2, "gates reply: %s", out);
    json_decref(o);
    size = head_of("gates.png", h, sizeof h);
    CHECK(size > 5000 && !memcmp(h + 1, "PNG", 3), "gates.png: %ld bytes", size);
    s->json = 0;
    struct { const char *line, *says; } bad[] = {
        {"plot 1 file=x.gif", ".svg, .png or .pdf"},
        {"plot 1", "file=PATH"},
        {"plot file=x.png", "run ids"},
        {"plot 1 metric=bogus file=x.png", "metric=bogus"},
        {"plot 1 x=epochs file=x.png", "step|tokens|time"},
        {"plot 1 smooth=0 file=x.png", "smooth=0"},
        {"plot 99 file=x.png", "no run 99"},
        {"plot 1 file=/nonexistent-dir/x.png", "/nonexistent-dir/x.png"},
        {"plot gates 1 2 file=x.png", "one id"},
        {"plot gates 1 step=5 file=x.png", "no gate statistics at or before step 5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(run(s, bad[i].line) != LM_OK && n_errors == 1 && strstr(out, bad[i].says),
              "'%s' gave: %s", bad[i].line, out);
    CHECK(access("x.gif", F_OK) && access("x.png", F_OK), "a refused plot left a file");
}

/* Scripts: -c honours --keep-going across ';', and a script's errors say file:line:. */
static void test_scripts(Session *s)
{
    s->json = 0;
    reset();
    int rc = repl_run_lines(s, "plot 1 file=x.gif; show config; bogus", 1);
    CHECK(rc != LM_OK && n_errors == 2 && strstr(out, "lr "), "-c --keep-going ran: %s", out);
    reset();
    rc = repl_run_lines(s, "plot 1 file=x.gif; show config", 0);
    CHECK(rc != LM_OK && n_errors == 1 && !strstr(out, "lr "), "-c without it went on: %s", out);
    FILE *f = fopen("bad.lmlab", "w");
    if (f) {
        fputs("# a comment\nshow config\nset lr=abc\n\nbogus x=1\n", f);
        fclose(f);
    }
    f = fopen("bad.lmlab", "r");
    reset();
    rc = f ? repl_run_file(s, f, "bad.lmlab", 1) : LM_EIO;
    if (f) fclose(f);
    CHECK(rc != LM_OK && n_errors == 2 && strstr(out, "bad.lmlab:3: error: ") &&
          strstr(out, "bad.lmlab:5: error: "), "file:line: %s", out);
    s->json = 1;
    f = fopen("bad.lmlab", "r");
    reset();
    rc = f ? repl_run_file(s, f, "bad.lmlab", 0) : LM_EIO;
    if (f) fclose(f);
    json_t *a = json_events(NULL), *e = NULL;
    for (size_t i = 0; i < json_array_size(a); i++)
        if (json_object_get(json_array_get(a, i), "error")) e = json_array_get(a, i);
    CHECK(rc != LM_OK && n_errors == 1 && e &&
          !strcmp(json_string_value(json_object_get(e, "file")), "bad.lmlab") &&
          json_integer_value(json_object_get(e, "line")) == 3, "JSON error place: %s", out);
    json_decref(a);
}

/* Word-level sampling: the first sampled word is joined to the prompt by the tokenizer's
 * rule (a space), and prompt words outside the vocabulary are named. */
static void test_word_sampling(Session *s)
{
    s->json = 1;
    long id = train_run(s, "runs_dir=runs tokenizer=word vocab_size=500 steps=20 eval_every=0 "
                           "sample_every=0 checkpoint_every=0 log_every=10");
    char line[64];
    snprintf(line, sizeof line, "open %ld", id);
    CHECK(run(s, line) == LM_OK, "%s", out);
    CHECK(run(s, "sample prompt=\"the king\" tokens=3 seed=1") == LM_OK, "%s", out);
    json_t *a = json_events("sample"), *o = json_array_get(a, 0);
    const char *text = o ? json_string_value(json_object_get(o, "text")) : NULL;
    CHECK(text && text[0] == ' ' && text[1] != ' ', "the first word is glued to the prompt: %s",
          out);
    CHECK(json_array_size(json_object_get(o, "unknown")) == 0, "known words listed: %s", out);
    json_decref(a);
    CHECK(run(s, "sample prompt=\"the zzqx king qqvv\" tokens=2 seed=1") == LM_OK, "%s", out);
    a = json_events("sample"), o = json_array_get(a, 0);
    json_t *unk = json_object_get(o, "unknown");
    CHECK(json_array_size(unk) == 2 && !strcmp(json_string_value(json_array_get(unk, 0)), "zzqx")
          && !strcmp(json_string_value(json_array_get(unk, 1)), "qqvv"), "unknown: %s", out);
    json_decref(a);
    s->json = 0;
    CHECK(run(s, "sample prompt=\"the zzqx king\" tokens=2 seed=1") == LM_OK &&
          strstr(out, "the zzqx king ") && strstr(out, "not in the vocabulary") &&
          strstr(out, "zzqx"), "text mode: %s", out);
    CHECK(run(s, "sample prompt=\"the king \" tokens=2 seed=1") == LM_OK &&
          !strstr(out, "king  "), "a prompt ending in a space gets no second one: %s", out);
    s->json = 1;
}

/* A binary file given as data= is refused with a message that says so; text with UTF-8
 * accents and a stray control character still trains. */
static void test_binary_data(Session *s)
{
    s->json = 0;
    CHECK(system("cp /bin/true prog.bin") == 0, "cannot copy /bin/true");
    FILE *f = fopen("ctrl.txt", "wb");
    for (int i = 0; f && i < 4000; i++) fputc(i % 3 ? 0x01 + i % 20 : 'a', f);
    if (f) fclose(f);
    f = fopen("ok.txt", "wb");
    for (int i = 0; f && i < 300; i++) fputs("Ca\xc3\xa7" "a, na\xc3\xaf" "ve \x1b" " caf\xc3\xa9.\n", f);
    if (f) fclose(f);
    CHECK(run(s, "use quick") == LM_OK, "%s", out);
    CHECK(run(s, "train data=prog.bin steps=5 runs_dir=runs") != LM_OK && n_errors == 1 &&
          strstr(out, "prog.bin") && strstr(out, "binary") && strstr(out, "NUL"),
          "an ELF file was not refused: %s", out);
    CHECK(run(s, "train data=ctrl.txt steps=5 runs_dir=runs") != LM_OK && n_errors == 1 &&
          strstr(out, "ctrl.txt") && strstr(out, "control"), "control bytes: %s", out);
    CHECK(run(s, "train data=ok.txt steps=5 eval_every=0 sample_every=0 checkpoint_every=0 "
              "runs_dir=runs") == LM_OK, "accented text refused: %s", out);
    CHECK(run(s, "wait") == LM_OK, "%s", out);
}

static char *sample_text(Session *s, const char *line)
{
    CHECK(run(s, line) == LM_OK, "%s: %s", line, out);
    json_t *a = json_events("sample");
    const char *t = json_string_value(json_object_get(json_array_get(a, 0), "text"));
    char *copy = strdup(t ? t : "");
    json_decref(a);
    return copy;
}

/* positions=slide: identical to the default while the positions are inside the training
 * window (bptt=32 for quick), different after it; `help sample` says what the default does. */
static void test_positions_slide(Session *s)
{
    char line[64];
    s->json = 1;
    snprintf(line, sizeof line, "open %ld", json_run);
    CHECK(run(s, line) == LM_OK, "%s", out);
    char *count = sample_text(s, "sample prompt=\"A\" tokens=300 seed=5");
    char *count2 = sample_text(s, "sample prompt=\"A\" tokens=300 seed=5 positions=count");
    char *slide = sample_text(s, "sample prompt=\"A\" tokens=300 seed=5 positions=slide");
    CHECK(!strcmp(count, count2), "positions=count is not the default");
    CHECK(strlen(slide) == 300 && strlen(count) == 300 && !strncmp(count, slide, 25) &&
          strcmp(count, slide), "slide vs count:\n%s\n%s", count, slide);
    free(count), free(count2), free(slide);
    CHECK(run(s, "sample tokens=5 positions=wrap") != LM_OK && strstr(out, "count|slide"),
          "%s", out);
    s->json = 0;
    CHECK(run(s, "help sample") == LM_OK && strstr(out, "positions=slide") &&
          strstr(out, "5000"), "help sample: %s", out);
    s->json = 1;
}

int main(void)
{
    char dir[] = "/tmp/lmlab_exports_XXXXXX";
    if (!mkdtemp(dir) || chdir(dir))
        return 1;
    Session s;
    session_init(&s, "test.db");
    session_set_writer(&s, capture, NULL);
    test_events_json(&s);
    test_events_text(&s);
    test_export_csv(&s);
    test_export_schema(&s);
    test_best_estimated(&s);
    test_plot(&s, 1, 2);
    test_scripts(&s);
    test_word_sampling(&s);
    test_positions_slide(&s);
    test_binary_data(&s);
    session_free(&s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return check_summary();
}
