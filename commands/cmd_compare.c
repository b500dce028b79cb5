/* cmd_compare.c — `compare`: runs side by side (the settings that differ, evaluations,
 * speed, every series of the registry any of them has, whether their numbers are the
 * same), as a text table (each column as wide as its widest cell, at most TEXTCOL_MAX:
 * longer cells cut and marked, textcol.h) or one JSON object. Not here: the other history commands
 * (cmd_runs.c, cmd_edits.c, cmd_export.c), which settings differ and how they rank
 * (runkeys.c), parity of two runs' numbers (core/run/runrecord.c). */
#include "session.h"
#include "cmd_compare.h"
#include "runargs.h"
#include "runrecord.h"
#include "runkeys.h"
#include "series.h"

#include "err.h"
#include "jsonval.h"
#include "textcol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- compare --------------------------------------------------------------------------- */

/* {"runs":[ids], "diff":{key:[values]}, "best_val":[...], "final_val":[...]}; the values
 * typed as in runstore_run_json's config. */
static json_t *compare_json(const RunRow *r, int n)
{
    json_t *cfg = json_array(), *diff = json_object(), *ids = json_array();
    json_t *best = json_array(), *fin = json_array();
    for (int i = 0; i < n; i++) {
        json_t *run = runstore_run_json(&r[i]);
        json_array_append(cfg, json_object_get(run, "config"));
        json_decref(run);
        json_array_append_new(ids, json_integer(r[i].id));
        json_array_append_new(best, jsonval_num(r[i].best_val));
        json_array_append_new(fin, jsonval_num(r[i].final_val));
    }
    for (int i = 0; i < n; i++) {
        const char *key;
        json_t *v;
        json_object_foreach(json_array_get(cfg, i), key, v) {
            if (json_object_get(diff, key)) continue;
            json_t *vals = json_array();
            int differ = 0;
            for (int j = 0; j < n; j++) {
                json_t *x = json_object_get(json_array_get(cfg, j), key);
                json_array_append_new(vals, x ? json_copy(x) : json_null());
                differ |= !x || !json_equal(x, v);
            }
            if (differ) json_object_set_new(diff, key, vals);
            else json_decref(vals);
        }
    }
    json_decref(cfg);
    return json_pack("{s:o s:o s:o s:o}", "runs", ids, "diff", diff, "best_val", best,
                     "final_val", fin);
}

/* {"loss": {"agg": "last", "values": [per run, null when none]}, ...}: every series of
 * the registry any of the runs has (core/base/series.h). */
static json_t *compare_series_json(RunStore *st, const RunRow *r, int n)
{
    json_t *o = json_object();
    char (*names)[SERIES_NAME_LEN] = NULL;
    double *x = NULL;
    int nn = 0;
    if (!runstore_series_table(st, r, n, &names, &nn, &x, NULL))
        for (int k = 0; k < nn; k++) {
            SeriesRef ref;
            series_find(names[k], &ref, NULL);
            json_t *vals = json_array();
            for (int i = 0; i < n; i++)
                json_array_append_new(vals, jsonval_num(x[(size_t)k * (size_t)n + (size_t)i]));
            json_object_set_new(o, names[k], json_pack("{s:s s:o}", "agg",
                                series_agg_name(ref.info->agg), "values", vals));
        }
    free(x), free(names);
    return o;
}

static int compare_emit_json(Session *s, RunStore *st, const long *ids, int n)
{
    RunRow *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) return session_error(s, LM_ENOMEM, "out of memory comparing runs");
    int got = 0, status = LM_OK;
    runstore_flush(st, NULL);   /* best/final val of buffered evaluations; failure: stale */
    while (got < n && !(status = runargs_get_run(s, st, ids[got], &rows[got])))
        got++;
    json_t *out = status ? NULL : compare_json(rows, n), *nums = json_array();
    if (out) json_object_set_new(out, "series", compare_series_json(st, rows, n));
    for (int i = 1; out && i < n; i++) {   /* the same numbers as the first run? */
        RunParity p;
        char err[LM_ERR_LEN];
        if ((status = runrecord_parity(st, &rows[0], &rows[i], &p, err))) {
            session_error(s, status, "%s", err);
            break;
        }
        json_array_append_new(nums, json_pack("{s:I s:b s:o s:s s:s s:s}", "run",
            (json_int_t)rows[i].id, "identical", p.identical,
            "part_at", p.identical ? json_null() : json_integer(p.step), "what", p.what,
            "differ", p.kernels, "cause", p.cause));
    }
    if (out && !status) {
        json_object_set_new(out, "numbers", nums);
        session_emit_json(s, out);
    } else {
        json_decref(out);
        json_decref(nums);
    }
    for (int i = 0; i < got; i++) runstore_row_free(&rows[i]);
    free(rows);
    return status;
}

/* The text table, laid out once every row is in: the label column as wide as the
 * longest label, each run's column as wide as its widest value, both at most TEXTCOL_MAX
 * (a longer label is cut at its start, keeping the end that tells series apart; a longer
 * value at its end, both marked '…'), so every value sits under its run. A row without
 * values (note) is printed as it is. */
#define CMP_LABEL_LEN (SERIES_NAME_LEN * 4 + 16)

typedef struct {
    int n;                         /* runs: values a row */
    int rows, cap, oom;
    char (*label)[CMP_LABEL_LEN];  /* rows */
    char *note;                    /* rows: 1 = a line of text, no values */
    char (*val)[64];               /* rows x n */
} CmpTable;

/* Appends a row: label and v[0..n) (v NULL: label is a note). Out of memory: t->oom. */
static void table_add(CmpTable *t, const char *label, char (*v)[64])
{
    if (t->oom) return;
    if (t->rows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        void *l = realloc(t->label, (size_t)cap * sizeof *t->label);
        if (l) t->label = l;
        void *o = realloc(t->note, (size_t)cap);
        if (o) t->note = o;
        void *x = realloc(t->val, (size_t)cap * (size_t)t->n * sizeof *t->val);
        if (x) t->val = x;
        if (!l || !o || !x) {
            t->oom = 1;
            return;
        }
        t->cap = cap;
    }
    snprintf(t->label[t->rows], CMP_LABEL_LEN, "%s", label);
    t->note[t->rows] = !v;
    for (int i = 0; v && i < t->n; i++)
        memcpy(t->val[(size_t)t->rows * (size_t)t->n + (size_t)i], v[i], 64);
    t->rows++;
}

/* Prints the table's rows (see CmpTable), trailing spaces trimmed. */
static void table_print(Session *s, const CmpTable *t)
{
    int lw = 1, *w = calloc((size_t)t->n, sizeof *w);
    char *line = malloc(8192), cellbuf[TEXTCOL_MAX * 4 + 8];
    if (!w || !line) {
        free(w), free(line);
        session_error(s, LM_ENOMEM, "out of memory laying out the table");
        return;
    }
    for (int r = 0; r < t->rows; r++) {
        if (t->note[r]) continue;
        int l = textcol_width(t->label[r]);
        lw = l > lw ? l : lw;
        for (int i = 0; i < t->n; i++) {
            int c = textcol_width(t->val[(size_t)r * (size_t)t->n + (size_t)i]);
            w[i] = c > w[i] ? c : w[i];
        }
    }
    lw = lw > TEXTCOL_MAX ? TEXTCOL_MAX : lw;
    for (int i = 0; i < t->n; i++) w[i] = w[i] > TEXTCOL_MAX ? TEXTCOL_MAX : w[i] ? w[i] : 1;
    for (int r = 0; r < t->rows; r++) {
        if (t->note[r]) {
            session_printf(s, "%s", t->label[r]);
            continue;
        }
        int o = snprintf(line, 8192, "%s", textcol_fit(cellbuf, sizeof cellbuf, t->label[r],
                                                       lw, TEXTCOL_KEEP_END));
        for (int i = 0; i < t->n && o < 8192 - (int)sizeof cellbuf - 4; i++)
            o += snprintf(line + o, 8192 - (size_t)o, "  %s", textcol_fit(cellbuf,
                          sizeof cellbuf, t->val[(size_t)r * (size_t)t->n + (size_t)i], w[i],
                          TEXTCOL_KEEP_START));
        while (o > 0 && line[o - 1] == ' ') line[--o] = 0;
        session_printf(s, "%s", line);
    }
    free(w), free(line);
}

static void table_free(CmpTable *t)
{
    free(t->label), free(t->note), free(t->val);
}

/* A run's own speed (runrecord_work: a fork's from its fork point), NAN when unknown. */
static double own_speed(RunStore *st, const RunRow *r)
{
    RunWork w;
    char err[LM_ERR_LEN];
    return runrecord_work(st, r, &w, err) == LM_OK ? w.tokens_per_s : NAN;
}

/* A row per series of the registry (core/base/series.h) that any of the runs has: its
 * aggregate ("loss (last)", "tokens_per_s (mean)"), names escaped. */
static void compare_series(CmpTable *t, RunStore *st, const RunRow *r, int n, char (*v)[64])
{
    char (*names)[SERIES_NAME_LEN] = NULL, label[SERIES_NAME_LEN * 4 + 16], shown[SERIES_NAME_LEN * 4];
    double *vals = NULL;
    int nn = 0;
    if (!runstore_series_table(st, r, n, &names, &nn, &vals, NULL))
        for (int k = 0; k < nn; k++) {
            SeriesRef ref;
            series_find(names[k], &ref, NULL);
            for (int i = 0; i < n; i++) {
                double x = vals[(size_t)k * (size_t)n + (size_t)i];
                snprintf(v[i], 64, isnan(x) ? "-" : "%.6g", x);
            }
            snprintf(label, sizeof label, "%s (%s)", series_escape(shown, sizeof shown,
                     names[k]), series_agg_name(ref.info->agg));
            table_add(t, label, v);
        }
    free(vals), free(names);
}

/* Each run's best and final evaluation (labelled when an estimate) and the step of its best
 * checkpoint: three rows from one read of each run's record. */
static void compare_evals(CmpTable *t, RunStore *st, const RunRow *r, int n, char (*v)[64])
{
    char (*cell)[3][64] = calloc((size_t)n, sizeof *cell), err[LM_ERR_LEN];
    if (!cell) {
        t->oom = 1;
        return;
    }
    for (int i = 0; i < n; i++) {
        RunRecord f;
        for (int e = 0; e < 3; e++) snprintf(cell[i][e], 64, "-");
        if (runrecord_read(st, &r[i], &f, err) != LM_OK) continue;
        for (int e = 0; e < 3; e++) {   /* best val, the best checkpoint's step, final */
            const RunEval *ev = e == 2 ? &f.final : &f.best;
            if (e == 1 && f.best_step >= 0)
                snprintf(cell[i][e], 64, "step %ld", f.best_step);
            else if (e != 1 && !isnan(ev->loss))
                snprintf(cell[i][e], 64, "%.4f%s", ev->loss, ev->whole ? "" : " (est.)");
        }
        runrecord_free(&f);
    }
    for (int e = 0; e < 3; e++) {
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%s", cell[i][e]);
        table_add(t, e == 2 ? "final val loss" : e ? "best checkpoint" : "best val loss", v);
    }
    free(cell);
}

/* The runs side by side: name and status once, the settings that differ (ranked by how
 * many distinct values they take, runkeys_diff: a swept setting first), then each run's
 * best and final evaluation (labelled when an estimate), last step, params, and every
 * series of the registry any of them has. */
static int compare_text(Session *s, RunStore *st, const long *ids, int n)
{
    RunRow *r = calloc((size_t)n, sizeof *r);
    const char **cfg = calloc((size_t)n, sizeof *cfg);
    char (*v)[64] = calloc((size_t)n, sizeof *v), keys[64][32], err[LM_ERR_LEN];
    int status = r && cfg && v ? LM_OK : LM_ENOMEM, got = 0;
    CmpTable t = {.n = n};
    for (int i = 0; !status && i < n; i++, got++)
        if ((status = runstore_get(st, ids[i], &r[i], err)) == LM_OK) cfg[i] = r[i].config;
    if (status) {
        session_error(s, status, "%s", status == LM_ENOMEM ? "out of memory" : err);
    } else {
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "run %ld", r[i].id);
        table_add(&t, "", v);
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%s", r[i].name);
        table_add(&t, "name", v);
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%s", r[i].status);
        table_add(&t, "status", v);
        long sweeps[RUNARGS_MAX_IDS] = {0};
        for (int i = 0; i < n && i < RUNARGS_MAX_IDS; i++) sweeps[i] = r[i].sweep_id;
        int nk = runkeys_diff(cfg, n <= RUNARGS_MAX_IDS ? sweeps : NULL, n, keys, 64), shown = 0;
        for (int k = 0; k < nk && k < 64; k++) {
            if (!strcmp(keys[k], "name")) continue;   /* the name row above */
            for (int i = 0; i < n; i++) runkeys_config_value(r[i].config, keys[k], v[i], 64);
            table_add(&t, !strcmp(keys[k], "steps") ? "steps (budget)" : keys[k], v);
            shown++;
        }
        if (!shown) table_add(&t, "(no config differences)", NULL);
        compare_evals(&t, st, r, n, v);
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%ld", r[i].last_step);
        table_add(&t, "last step", v);
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%ld", r[i].params);
        table_add(&t, "params", v);
        for (int i = 0; i < n; i++) {
            double sp = own_speed(st, &r[i]);
            snprintf(v[i], 64, isnan(sp) ? "-" : "%.0f", sp);
        }
        table_add(&t, "tokens/s", v);
        compare_series(&t, st, r, n, v);
        if (t.oom) status = session_error(s, LM_ENOMEM, "out of memory comparing runs");
        else table_print(s, &t);
        for (int i = 1; i < n && !status; i++) {   /* the same numbers as the first run? */
            RunParity p;
            char line[400];
            if ((status = runrecord_parity(st, &r[0], &r[i], &p, err))) {
                session_error(s, status, "%s", err);
                break;
            }
            runrecord_fmt_parity(line, sizeof line, &p);
            session_printf(s, "numbers, run %ld vs run %ld: %s", r[0].id, r[i].id, line);
        }
    }
    for (int i = 0; r && i < got; i++) runstore_row_free(&r[i]);
    free(r), free(cfg), free(v);
    table_free(&t);
    return status;
}

int cmd_compare(Session *s, int argc, const LexWord *argv)
{
    long ids[RUNARGS_MAX_IDS];
    int n;
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    if (runargs_parse_ids(s, st, argc, argv, ids, &n)) return LM_EARG;
    if (n < 2) return session_error(s, LM_EARG, "compare needs at least two run ids, e.g. "
                                    "`compare 3 7`; `runs` lists them");
    if (s->json) return compare_emit_json(s, st, ids, n);
    return compare_text(s, st, ids, n);
}
