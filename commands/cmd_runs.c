/* cmd_runs.c — the history commands: runs (a filtered, sorted list), run (one run in
 * full), compare, tag, rm and export (note: cmd_log.c). Each reads or edits the run store through
 * core/runstore.h and prints an aligned text table or, in JSON mode, one object per line;
 * a run's JSON, its tags and config are runstore_run_json's, the export schema.
 * Not here: SQL and filter semantics (runstore.c), training (cmd_train.c), sweeps
 * (cmd_sweep.c). */
#include "session.h"
#include "tboard.h"
#include "cmd_runs.h"
#include "cmd_analysis.h"
#include "cmd_log.h"
#include "runrecord.h"
#include "runstore_edits.h"
#include "runkeys.h"
#include "runstore_row.h"
#include "series.h"
#include "safetext.h"

#include "err.h"
#include "output.h"
#include "jsonval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define RUNS_MAX_IDS 256

/* ---- small helpers ------------------------------------------------------------------ */

/* "1.2345", with ppl "1.2345 (3.44)"; "-" for NaN. */
static void fmt_loss(char *buf, size_t cap, double v, int ppl)
{
    double p = exp(v);
    if (isnan(v)) snprintf(buf, cap, "-");
    else if (!ppl) snprintf(buf, cap, "%.4f", v);
    else snprintf(buf, cap, p < 1e5 ? "%.4f (%.2f)" : "%.4f (%.3g)", v, p);
}

static void fmt_params(char *buf, size_t cap, long p)
{
    if (p <= 0) snprintf(buf, cap, "-");
    else if (p < 1000) snprintf(buf, cap, "%ld", p);
    else if (p < 1000000) snprintf(buf, cap, "%.1fK", p / 1e3);
    else if (p < 1000000000) snprintf(buf, cap, "%.1fM", p / 1e6);
    else snprintf(buf, cap, "%.2fB", p / 1e9);
}

/* Local time "YYYY-MM-DD HH:MM", or "-" when t is 0. */
static void fmt_time(char *buf, size_t cap, double t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t <= 0 || !localtime_r(&tt, &tm)) snprintf(buf, cap, "-");
    else strftime(buf, cap, "%Y-%m-%d %H:%M", &tm);
}

/* Parses argv word w as a run id into *id; reports and returns LM_EARG otherwise. */
static int parse_id(Session *s, const LexWord *w, long *id)
{
    *id = w && !w->key ? session_parse_run_id(w->text) : -1;
    if (*id > 0) return LM_OK;
    return session_error(s, LM_EARG, "run id expected, got '%s' — `runs` lists the ids",
                         w ? w->text : "");
}

/* runstore_get with the commands' wording for an unknown run. */
static int get_run(Session *s, RunStore *st, long id, RunRow *row)
{
    char err[LM_ERR_LEN];
    int status = runstore_get(st, id, row, err);
    if (status == LM_EARG) return session_error(s, status, "no run %ld — `runs` lists them", id);
    if (status) return session_error(s, status, "%s", err);
    return LM_OK;
}

/* The store and one existing run id from argv[1]; the usage hint when it is missing. */
static int store_and_id(Session *s, int argc, const LexWord *argv, const char *usage,
                        RunStore **st, long *id)
{
    if (argc < 2 || argv[1].key)
        return session_error(s, LM_EARG, "run id expected — usage: %s", usage);
    if (parse_id(s, &argv[1], id)) return LM_EARG;
    if (!(*st = session_store(s))) return LM_EDB;
    RunRow row;
    if (get_run(s, *st, *id, &row)) return LM_EARG;
    runstore_row_free(&row);
    return LM_OK;
}

/* Prints multi-line text, each line with the given indent. */
static void print_indented(Session *s, const char *indent, const char *text)
{
    const char *p = text;
    do {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        if (len || nl) session_printf(s, "%s%.*s", indent, len, p);
        p = nl ? nl + 1 : p + len;
    } while (*p);
}

/* ---- runs ------------------------------------------------------------------------------ */

/* Appends one filter word to buf as runstore expects it: `key OP value`, the value
 * double-quoted when it holds spaces. Returns 0, or -1 after reporting. */
static int filter_append(Session *s, char *buf, size_t cap, const LexWord *w)
{
    char term[1200];
    const char *t = w->key ? NULL : w->text;
    size_t k = w->key ? strlen(w->key) + 1 : strcspn(t, "=!<>~");
    if (!w->key && t[k] && strchr("!<>", t[k]) && t[k + 1] == '=') k += 2;
    else if (!w->key && t[k]) k += 1;
    const char *val = w->key ? w->value : t + k;
    int quote = strpbrk(val, " \t\n") != NULL || val[0] == '"';
    if (quote && strchr(val, '"'))
        return session_error(s, LM_EARG, "filter value '%s' cannot hold a double quote "
                             "together with spaces or at its start", val), -1;
    int n = w->key ? snprintf(term, sizeof term, "%s=%s%s%s", w->key, quote ? "\"" : "", val,
                              quote ? "\"" : "")
                   : snprintf(term, sizeof term, "%.*s%s%s%s", (int)k, t, quote ? "\"" : "",
                              val, quote ? "\"" : "");
    size_t used = strlen(buf);
    if (n < 0 || (size_t)n >= sizeof term || used + (size_t)n + 2 > cap)
        return session_error(s, LM_EARG, "filter too long (at most %zu characters)", cap - 2),
               -1;
    snprintf(buf + used, cap - used, "%s%s", used ? " " : "", term);
    return 0;
}

/* One table line (r NULL: the header); name and model columns nw, mw wide; lineage: a
 * last column "from" (a fork's parent and step, "#7@200") when any listed run is a fork. */
static void runs_line(Session *s, const RunRow *r, int nw, int mw, int lineage)
{
    char id[24] = "id", steps[24] = "steps", best[48] = " best val (ppl)", fin[24] = "final val",
         par[16] = "params", created[32] = "created", line[1024];
    if (r) {
        snprintf(id, sizeof id, "%ld", r->id);
        snprintf(steps, sizeof steps, "%ld", r->last_step);
        fmt_loss(best + 1, sizeof best - 1, r->best_val, 1);
        best[0] = runstore_best_estimated(r) ? '~' : ' ';   /* an estimate, said so */
        fmt_loss(fin, sizeof fin, r->final_val, 0);
        fmt_params(par, sizeof par, r->params);
        fmt_time(created, sizeof created, r->created);
    }
    char from[48] = "from", model[64] = "model", prec[16];
    if (r) {   /* a run not in fp32 says its precision beside its model (issue 33 item 11) */
        runrecord_precision(r, prec, sizeof prec);
        snprintf(model, sizeof model, "%s%s%s", r->model, strcmp(prec, "fp32") ? " " : "",
                 strcmp(prec, "fp32") ? prec : "");
    }
    if (r && r->parent_run) snprintf(from, sizeof from, "#%ld@%ld", r->parent_run, r->parent_step);
    else if (r && r->parent_step > 0) snprintf(from, sizeof from, "(rm)@%ld", r->parent_step);
    else if (r) snprintf(from, sizeof from, "-");
    int n = snprintf(line, sizeof line, "%4s  %-*.*s  %-*s  %-11s %7s %-16s %9s %7s  %-16s  %-*s"
                     "  %s", id, nw, nw, r ? r->name : "name", mw, model,
                     r ? r->status : "status", steps, best, fin, par, created,
                     lineage ? 16 : 0, r ? r->tags : "tags", lineage ? from : "");
    while (n > 0 && n < (int)sizeof line && line[n - 1] == ' ') line[--n] = 0;
    session_printf(s, "%s", line);
}

static void runs_table(Session *s, const RunRow *rows, int n)
{
    int nw = 4, mw = 5, lineage = 0;
    for (int i = 0; i < n; i++) {
        lineage |= rows[i].parent_run != 0 || rows[i].parent_step > 0;
        char prec[16];
        runrecord_precision(&rows[i], prec, sizeof prec);
        int l = (int)strlen(rows[i].name),
            m = (int)strlen(rows[i].model) + (strcmp(prec, "fp32") ? 1 + (int)strlen(prec) : 0);
        nw = l > nw ? (l > 40 ? 40 : l) : nw;
        mw = m > mw ? m : mw;
    }
    runs_line(s, NULL, nw, mw, lineage);
    int est = 0;
    for (int i = 0; i < n; i++) {
        runs_line(s, &rows[i], nw, mw, lineage);
        est |= runstore_best_estimated(&rows[i]);
    }
    if (est)
        session_printf(s, "~ best val is an estimate over eval_batches batches, not a whole-split "
                       "evaluation (`run ID` gives its step; final val of a finished run is "
                       "whole-split)");
}

static int runs_read(Session *s, int argc, const LexWord *argv)
{
    const char *sort = "recent", *columns = NULL, *group_by = NULL, *own_sort = NULL;
    int limit = 0, keep = 0;
    char filter[4096] = "";
    for (int i = 1; i < argc; i++) {
        const LexWord *w = &argv[i];
        if (w->key && !strcmp(w->key, "columns")) {         /* cmd_runs_table.c */
            columns = w->value;
        } else if (w->key && !strcmp(w->key, "keep")) {     /* keep columns= as the layout */
            if (strcmp(w->value, "true") && strcmp(w->value, "false"))
                return session_error(s, LM_EARG, "keep takes true or false (keep=true keeps "
                                     "columns= as the layout of later `runs` and the "
                                     "dashboard), got '%s'", w->value);
            keep = !strcmp(w->value, "true");
        } else if (w->key && !strcmp(w->key, "group_by")) {
            group_by = w->value;
        } else if (w->key && !strcmp(w->key, "sort")) {
            sort = w->value;
        } else if (w->key && !strcmp(w->key, "limit")) {
            char *end;
            long v = strtol(w->value, &end, 10);
            if (!*w->value || *end || v < 0 || v > 1000000000)
                return session_error(s, LM_EARG, "limit takes a whole number >= 0 (0 = all), "
                                     "got '%s'", w->value);
            limit = (int)v;
        } else if (filter_append(s, filter, sizeof filter, w)) {
            return LM_EARG;
        }
    }
    char err[LM_ERR_LEN], clean[sizeof filter];
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    if (runkeys_filter(filter, clean, sizeof clean, runkeys_store_has, st, err))
        return session_error(s, LM_EARG, "%s", err);
    if (runkeys_check_sort(sort, runkeys_store_has, st, err)) {
        /* the columns only the shaped table computes: sorted there */
        const char *k = sort[0] == '-' ? sort + 1 : sort;
        SeriesRef ref;   /* a series of the registry: read by the shaped table */
        SeriesRegAgg agg;
        if (strcmp(k, "final_smooth") && strcmp(k, "group") &&
            runstore_series_ref(k, &ref, &agg, NULL))
            return session_error(s, LM_EARG, "%s", err);
        own_sort = sort;
        sort = "recent";
    }
    RunRow *rows = NULL;
    int n = 0, mine = !runkeys_store_sort(sort);   /* any other column: sorted here */
    int status = runstore_list(st, clean, mine ? "recent" : sort, mine || own_sort ? 0 : limit,
                               &rows, &n, err);
    if (status) return session_error(s, status, "%s", err);
    if (mine) {
        runkeys_sort_rows(rows, n, sort);
        if (limit > 0 && n > limit) {
            for (int i = limit; i < n; i++) runstore_row_free(&rows[i]);
            n = limit;
        }
    }
    int shaped = 0;   /* columns=, group_by=, a kept layout or a computed sort (cmd_runs_table.c) */
    if (keep && !columns) {
        runstore_rows_free(rows, n);
        return session_error(s, LM_EARG, "keep=true keeps a columns= layout: give the columns, "
                             "e.g. `runs columns=id,name,lr,best_val keep=true`");
    }
    status = cmd_runs_table_render(s, st, rows, n, columns, keep, own_sort, group_by, limit,
                                   &shaped);
    if (shaped) {
        runstore_rows_free(rows, n);
        return status;
    }
    if (s->json) {
        for (int i = 0; i < n; i++) session_emit_json(s, runstore_run_json(&rows[i]));
    } else if (n == 0) {
        session_printf(s, "no runs match%s%s", filter[0] ? ": " : "", filter);
    } else {
        runs_table(s, rows, n);
    }
    runstore_rows_free(rows, n);
    return LM_OK;
}

/* ---- run ------------------------------------------------------------------------------- */

static json_t *eval_json(const RunEval *e)
{
    if (isnan(e->loss))
        return json_null();
    json_t *o = json_pack("{s:I s:o s:b}", "step", (json_int_t)e->step, "loss",
                          jsonval_num(e->loss), "whole_split", e->whole);
    if (!e->whole)
        json_object_set_new(o, "batches", json_integer(e->batches));
    return o;
}

/* Adds the run record's facts (group, precision, owner, lineage), the existing
 * checkpoints (each with its own evaluation), the best and final evaluations and the last
 * 3 samples to a run's object. */
static void run_lists_json(json_t *o, const RunRecord *f, const SampleRow *r, int ns)
{
    json_t *ck = json_array(), *sm = json_array();
    for (int i = 0; i < f->n_ckpts; i++) {
        const RunCkpt *c = &f->ckpts[i];
        json_array_append_new(ck, json_pack("{s:I s:o s:o s:b s:b s:b}", "step",
                                            (json_int_t)c->step, "path",
                                            jsonval_str(c->path), "val_loss",
                                            jsonval_num(c->eval.loss), "whole_split",
                                            c->eval.whole, "best_file", c->best_file, "best",
                                            c->best));
    }
    for (int i = ns > 3 ? ns - 3 : 0; i < ns; i++)
        json_array_append_new(sm, json_pack("{s:I s:o s:o s:o}", "step", (json_int_t)r[i].step,
                                            "prompt", jsonval_str(r[i].prompt),
                                            "settings", jsonval_str(r[i].settings),
                                            "text", jsonval_str(r[i].text)));
    json_object_set_new(o, "group", f->group[0] ? jsonval_str(f->group) : json_null());
    json_object_set_new(o, "precision", jsonval_str(f->precision));
    json_object_set_new(o, "owner", f->owner_pid <= 0 && !f->owner_host[0] ? json_null() :
                        json_pack("{s:I s:o s:s}", "pid", (json_int_t)f->owner_pid, "host",
                                  jsonval_str(f->owner_host), "state",
                                  runrecord_owner_state(f)));
    json_object_set_new(o, "parent", f->parent_run ? json_integer(f->parent_run) : json_null());
    json_object_set_new(o, "parent_step", f->parent_step > 0 ? json_integer(f->parent_step)
                                                             : json_null());
    json_object_set_new(o, "parent_deleted", json_boolean(!f->parent_run && f->parent_step > 0));
    json_object_set_new(o, "checkpoints", ck);
    json_object_set_new(o, "checkpoints_gone", json_integer(f->n_gone));
    json_object_set_new(o, "best_eval", eval_json(&f->best));
    json_object_set_new(o, "best_whole_eval", eval_json(&f->best_whole));
    json_object_set_new(o, "final_eval", eval_json(&f->final));
    json_object_set_new(o, "samples", sm);
}

/* runstore_run_json's object plus what only `run` shows. */
static json_t *run_full_json(const RunRow *r)
{
    json_t *o = runstore_run_json(r);
    const char *fields[][2] = {
        {"data_hash", r->data_hash}, {"machine", r->machine}, {"host", r->host},
        {"git_rev", r->git_rev}, {"checkpoint_dir", r->checkpoint_dir}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        json_object_set_new(o, fields[i][0], jsonval_str(fields[i][1]));
    json_object_set_new(o, "started", runstore_json_time(r->started));
    json_object_set_new(o, "started_unix", r->started > 0 ? json_real(r->started) : json_null());
    json_object_set_new(o, "ended", runstore_json_time(r->ended));
    json_object_set_new(o, "ended_unix", r->ended > 0 ? json_real(r->ended) : json_null());
    json_object_set_new(o, "final_ppl", jsonval_num(exp(r->final_val)));
    return o;
}

/* The run's config lines that differ from the defaults (every line with all). */
static void print_config(Session *s, const RunRow *r, int all)
{
    Config d;
    config_defaults(&d);
    char *def = config_to_text(&d);
    int shown = 0, total = 0;
    const char *p = r->config;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        int same = 0;
        for (const char *q = def; q && *q && !same;) {   /* the same line among the defaults */
            const char *qn = strchr(q, '\n');
            size_t ql = qn ? (size_t)(qn - q) : strlen(q);
            same = ql == len && !memcmp(p, q, len);
            q = qn ? qn + 1 : NULL;
        }
        if (len) {
            total++;
            if (all || !same) {
                session_printf(s, "  %.*s", (int)len, p);
                shown++;
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    free(def);
    if (!all)
        session_printf(s, "  (%d of %d settings differ from the defaults; `run %ld all` lists "
                       "every one)", shown, total, r->id);
}

/* The run record's own facts (core/run's runrecord.h, asked once): group, precision,
 * owner, lineage and the best and final evaluations. */
static void run_text_record(Session *s, const RunRecord *f)
{
    char e1[160], e2[160];
    session_printf(s, "  group:       %s", f->group[0] ? f->group : "-");
    session_printf(s, "  precision:   %s", f->precision);
    runrecord_fmt_owner(e1, sizeof e1, f);
    session_printf(s, "  owner:       %s", e1);
    if (f->parent_run && f->parent_data[0])
        session_printf(s, "  initialised from: run #%ld at step %ld (trained on %s)",
                       f->parent_run, f->parent_step, f->parent_data);
    else if (f->parent_run)
        session_printf(s, "  forked from: run #%ld at step %ld", f->parent_run, f->parent_step);
    else if (f->parent_step > 0)   /* the parent was deleted (parent_run set NULL) */
        session_printf(s, "  forked from: a deleted run, at its step %ld", f->parent_step);
    runrecord_fmt_eval(e1, sizeof e1, &f->best);
    runrecord_fmt_eval(e2, sizeof e2, &f->final);
    session_printf(s, "  best val:    %s", e1);
    if (!isnan(f->best_whole.loss) && f->best_whole.step != f->best.step) {
        runrecord_fmt_eval(e1, sizeof e1, &f->best_whole);
        session_printf(s, "  best whole:  %s", e1);
    }
    /* a run still training has no final evaluation yet: its last one is the latest */
    session_printf(s, "  %s   %s", f->owner_live ? "last val: " : "final val:", e2);
}

static void run_text_fields(Session *s, const RunRow *r, const RunRecord *f, int all)
{
    char a[64], b[64], c[64];
    session_printf(s, "run %ld  %s  (%s)", r->id, r->name, r->model[0] ? r->model : "-");
    session_printf(s, "  status:      %s%s%s", r->status, r->reason[0] ? " — " : "", r->reason);
    fmt_time(a, sizeof a, r->created), fmt_time(b, sizeof b, r->started);
    fmt_time(c, sizeof c, r->ended);
    session_printf(s, "  created:     %s   started: %s   ended: %s", a, b, c);
    session_printf(s, "  data:        %s  (hash %s)", r->data_name[0] ? r->data_name : "-",
                   r->data_hash[0] ? r->data_hash : "-");
    session_printf(s, "  tokenizer:   %s", r->tokenizer[0] ? r->tokenizer : "-");
    fmt_params(a, sizeof a, r->params);
    session_printf(s, "  params:      %s (%ld)", a, r->params);
    session_printf(s, "  machine:     %s%s%s", r->machine[0] ? r->machine : "-",
                   r->host[0] ? "  host " : "", r->host);
    session_printf(s, "  git rev:     %s", r->git_rev[0] ? r->git_rev : "-");
    session_printf(s, "  ckpt dir:    %s", r->checkpoint_dir[0] ? r->checkpoint_dir : "-");
    session_printf(s, "  tags:        %s", r->tags[0] ? r->tags : "-");
    if (r->sweep_id) session_printf(s, "  sweep:       %ld", r->sweep_id);
    run_text_record(s, f);
    session_printf(s, "  last step:   %ld", r->last_step);
    session_printf(s, "config:%s", r->config[0] ? "" : " (none)");
    print_config(s, r, all);
}

static void run_text_lists(Session *s, const RunRecord *f, const SampleRow *sm, int ns)
{
    char v[32];
    session_printf(s, "checkpoints:%s", f->n_ckpts ? " (each with its own evaluation)" : " none");
    for (int i = 0; i < f->n_ckpts; i++) {
        const RunCkpt *c = &f->ckpts[i];
        fmt_loss(v, sizeof v, c->eval.loss, 0);
        char how[48] = "";
        if (!isnan(c->eval.loss) && !c->eval.whole)
            snprintf(how, sizeof how, " (est., %ld batches)", c->eval.batches);
        session_printf(s, "  step %-8ld val %-8s%-20s %s%s", c->step, v, how, c->path,
                       c->best ? "  * best" : "");
    }
    if (f->n_gone)
        session_printf(s, "  (%d older checkpoint file%s removed by keep_checkpoints)", f->n_gone,
                       f->n_gone == 1 ? "" : "s");
    session_printf(s, "samples:%s", ns ? (ns > 3 ? " (last 3)" : "") : " none");
    for (int i = ns > 3 ? ns - 3 : 0; i < ns; i++) {
        session_printf(s, "  step %ld:", sm[i].step);
        print_indented(s, "    ", sm[i].text);
    }
}

static int run_read(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = NULL;
    long id = 0;
    int all = argc == 3 && !argv[2].key && !strcmp(argv[2].text, "all");
    if (argc > 2 && !all)
        return session_error(s, LM_EARG, "run takes one run id and optionally `all` (every "
                             "setting); `compare` takes several runs");
    if (store_and_id(s, all ? 2 : argc, argv, "run RUN_ID [all]", &st, &id)) return LM_EARG;
    RunRow r;
    if (get_run(s, st, id, &r)) return LM_EARG;
    RunRecord f;
    SampleRow *sm = NULL;
    int ns = 0;
    char err[LM_ERR_LEN];
    int status = runrecord_read(st, &r, &f, err);
    if (!status && (status = runstore_samples(st, id, &sm, &ns, err)))
        runrecord_free(&f);
    if (status) {
        session_error(s, status, "%s", err);
    } else if (s->json) {
        json_t *o = run_full_json(&r);
        run_lists_json(o, &f, sm, ns);
        cmd_log_run_json(o, st, id);
        session_emit_json(s, o);
    } else {
        run_text_fields(s, &r, &f, all);
        run_text_lists(s, &f, sm, ns);
        cmd_log_run_text(s, st, id);
    }
    if (!status)
        runrecord_free(&f);
    runstore_samples_free(sm, ns);
    runstore_row_free(&r);
    return status;
}

/* ---- compare --------------------------------------------------------------------------- */

/* Parses argv[1..] as existing run ids (no key=value words). */
static int parse_ids(Session *s, RunStore *st, int argc, const LexWord *argv, long *ids, int *n)
{
    *n = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i].key) continue;
        if (*n == RUNS_MAX_IDS)
            return session_error(s, LM_EARG, "too many runs (at most %d)", RUNS_MAX_IDS);
        if (parse_id(s, &argv[i], &ids[*n])) return LM_EARG;
        RunRow r;
        if (get_run(s, st, ids[*n], &r)) return LM_EARG;
        runstore_row_free(&r);
        (*n)++;
    }
    return LM_OK;
}

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
    long *ids = calloc((size_t)n, sizeof *ids);
    char (*names)[SERIES_NAME_LEN] = NULL;
    int nn = 0;
    for (int i = 0; ids && i < n; i++) ids[i] = r[i].id;
    if (ids && !runstore_series_union(st, ids, n, &names, &nn, NULL))
        for (int k = 0; k < nn; k++) {
            SeriesRef ref;
            series_find(names[k], &ref, NULL);
            json_t *vals = json_array();
            for (int i = 0; i < n; i++) {
                double x = NAN;
                runstore_series_summary(st, r[i].id, names[k], &x, NULL);
                json_array_append_new(vals, jsonval_num(x));
            }
            json_object_set_new(o, names[k], json_pack("{s:s s:o}", "agg",
                                series_agg_name(ref.info->agg), "values", vals));
        }
    free(ids), free(names);
    return o;
}

static int compare_emit_json(Session *s, RunStore *st, const long *ids, int n)
{
    RunRow *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) return session_error(s, LM_ENOMEM, "out of memory comparing runs");
    int got = 0, status = LM_OK;
    runstore_flush(st, NULL);   /* best/final val of buffered evaluations; failure: stale */
    while (got < n && !(status = get_run(s, st, ids[got], &rows[got])))
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

/* One row of the compare table: a label, then a value per run, each column w wide. */
static void compare_row(Session *s, const char *label, char (*vals)[64], int n, int w)
{
    char line[8192];
    int o = snprintf(line, sizeof line, "%-18s", label);
    for (int i = 0; i < n && o < (int)sizeof line - 70; i++)
        o += snprintf(line + o, sizeof line - (size_t)o, "  %-*s", w, vals[i]);
    while (o > 0 && line[o - 1] == ' ') line[--o] = 0;
    session_printf(s, "%s", line);
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
static void compare_series(Session *s, RunStore *st, const RunRow *r, int n, char (*v)[64],
                           int w)
{
    long *ids = calloc((size_t)n, sizeof *ids);
    char (*names)[SERIES_NAME_LEN] = NULL, label[SERIES_NAME_LEN * 4 + 16], shown[SERIES_NAME_LEN * 4];
    int nn = 0;
    for (int i = 0; ids && i < n; i++) ids[i] = r[i].id;
    if (ids && !runstore_series_union(st, ids, n, &names, &nn, NULL))
        for (int k = 0; k < nn; k++) {
            SeriesRef ref;
            series_find(names[k], &ref, NULL);
            for (int i = 0; i < n; i++) {
                double x = NAN;
                runstore_series_summary(st, r[i].id, names[k], &x, NULL);
                snprintf(v[i], 64, isnan(x) ? "-" : "%.6g", x);
            }
            snprintf(label, sizeof label, "%s (%s)", series_escape(shown, sizeof shown,
                     names[k]), series_agg_name(ref.info->agg));
            compare_row(s, label, v, n, w);
        }
    free(ids), free(names);
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
    for (int i = 0; !status && i < n; i++, got++)
        if ((status = runstore_get(st, ids[i], &r[i], err)) == LM_OK) cfg[i] = r[i].config;
    if (status) {
        session_error(s, status, "%s", status == LM_ENOMEM ? "out of memory" : err);
    } else {
        int w = 13;   /* "2.2417 (est.)", the widest evaluation */
        for (int i = 0; i < n; i++) w = (int)strlen(r[i].name) > w ? (int)strlen(r[i].name) : w;
        w = w > 40 ? 40 : w;
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "run %ld", r[i].id);
        compare_row(s, "", v, n, w);
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%.40s", r[i].name);
        compare_row(s, "name", v, n, w);
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%s", r[i].status);
        compare_row(s, "status", v, n, w);
        long sweeps[RUNS_MAX_IDS] = {0};
        for (int i = 0; i < n && i < RUNS_MAX_IDS; i++) sweeps[i] = r[i].sweep_id;
        int nk = runkeys_diff(cfg, n <= RUNS_MAX_IDS ? sweeps : NULL, n, keys, 64), shown = 0;
        for (int k = 0; k < nk && k < 64; k++) {
            if (!strcmp(keys[k], "name")) continue;   /* the name row above */
            for (int i = 0; i < n; i++) runkeys_config_value(r[i].config, keys[k], v[i], 64);
            compare_row(s, !strcmp(keys[k], "steps") ? "steps (budget)" : keys[k], v, n, w);
            shown++;
        }
        if (!shown) session_printf(s, "(no config differences)");
        for (int e = 0; e < 3; e++) {   /* best val, the best checkpoint's step, final */
            for (int i = 0; i < n; i++) {
                RunRecord f;
                snprintf(v[i], 64, "-");
                if (runrecord_read(st, &r[i], &f, err) == LM_OK) {
                    const RunEval *ev = e == 2 ? &f.final : &f.best;
                    if (e == 1 && f.best_step >= 0)
                        snprintf(v[i], 64, "step %ld", f.best_step);
                    else if (e != 1 && !isnan(ev->loss))
                        snprintf(v[i], 64, "%.4f%s", ev->loss, ev->whole ? "" : " (est.)");
                    runrecord_free(&f);
                }
            }
            compare_row(s, e == 2 ? "final val loss" : e ? "best checkpoint" : "best val loss",
                        v, n, w);
        }
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%ld", r[i].last_step);
        compare_row(s, "last step", v, n, w);
        for (int i = 0; i < n; i++) snprintf(v[i], 64, "%ld", r[i].params);
        compare_row(s, "params", v, n, w);
        for (int i = 0; i < n; i++) {
            double sp = own_speed(st, &r[i]);
            snprintf(v[i], 64, isnan(sp) ? "-" : "%.0f", sp);
        }
        compare_row(s, "tokens/s", v, n, w);
        compare_series(s, st, r, n, v, w);
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
    return status;
}

int cmd_compare(Session *s, int argc, const LexWord *argv)
{
    long ids[RUNS_MAX_IDS];
    int n;
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    if (parse_ids(s, st, argc, argv, ids, &n)) return LM_EARG;
    if (n < 2) return session_error(s, LM_EARG, "compare needs at least two run ids, e.g. "
                                    "`compare 3 7`; `runs` lists them");
    if (s->json) return compare_emit_json(s, st, ids, n);
    return compare_text(s, st, ids, n);
}

/* ---- tag, note, rm ------------------------------------------------------------------- */

int cmd_tag(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = NULL;
    long id = 0;
    if (store_and_id(s, argc, argv, "tag RUN_ID TAG", &st, &id)) return LM_EARG;
    if (argc != 3 || argv[2].key)
        return session_error(s, LM_EARG, "tag takes one tag after the run id: `tag %ld TAG`",
                             id);
    if (argv[2].text[0] == '-')   /* `tag 12 -baseline` is not a removal */
        return session_error(s, LM_EARG, "tag '%s' starts with '-': to remove a tag, `untag %ld "
                             "%s`", argv[2].text, id, argv[2].text + 1);
    char err[LM_ERR_LEN], what[96];
    int status = runstore_add_tag(st, id, argv[2].text, err);
    snprintf(what, sizeof what, "tagged '%.64s'", argv[2].text);
    if (!status) status = runstore_edit_log(st, id, 0, what, err);
    if (status) return session_error(s, status, "%s", err);
    RunRow r;
    if (get_run(s, st, id, &r)) return LM_EARG;
    if (s->json) {
        json_t *run = runstore_run_json(&r);
        session_emit_json(s, json_pack("{s:b s:I s:O}", "ok", 1, "run", (json_int_t)id, "tags",
                                       json_object_get(run, "tags")));
        json_decref(run);
    } else {
        session_printf(s, "run %ld tagged '%s' (tags: %s)", id, argv[2].text, r.tags);
    }
    runstore_row_free(&r);
    return LM_OK;
}

int cmd_untag(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = NULL;
    long id = 0;
    if (store_and_id(s, argc, argv, "untag RUN_ID TAG", &st, &id)) return LM_EARG;
    if (argc != 3 || argv[2].key)
        return session_error(s, LM_EARG, "untag takes one tag after the run id: `untag %ld "
                             "TAG`", id);
    char err[LM_ERR_LEN];
    int status = runstore_untag(st, id, argv[2].text, err);
    if (status) return session_error(s, status, "%s", err);
    RunRow r;
    if (get_run(s, st, id, &r)) return LM_EARG;
    if (s->json) {
        json_t *run = runstore_run_json(&r);
        session_emit_json(s, json_pack("{s:b s:I s:O}", "ok", 1, "run", (json_int_t)id, "tags",
                                       json_object_get(run, "tags")));
        json_decref(run);
    } else {
        session_printf(s, "run %ld untagged '%s' (tags: %s)", id, argv[2].text,
                       r.tags[0] ? r.tags : "none");
    }
    runstore_row_free(&r);
    return LM_OK;
}

int cmd_rename(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = NULL;
    long id = 0;
    if (store_and_id(s, argc, argv, "rename RUN_ID NAME", &st, &id)) return LM_EARG;
    if (argc != 3 || argv[2].key)
        return session_error(s, LM_EARG, "rename takes one name after the run id: `rename %ld "
                             "NAME` (quote a name with spaces)", id);
    char err[LM_ERR_LEN];
    int status = runstore_rename(st, id, argv[2].text, err);
    if (status) return session_error(s, status, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:I s:s}", "ok", 1, "run", (json_int_t)id, "name",
                                       argv[2].text));
    else
        session_printf(s, "run %ld renamed '%s' (`run %ld` lists the edits)", id, argv[2].text,
                       id);
    return LM_OK;
}

/* What rm does to one run's files, in words. */
static void rm_describe(Session *s, RunStore *st, long id, int files, int done)
{
    RunRow r;
    char err[LM_ERR_LEN], name[200];
    if (runstore_get(st, id, &r, err)) return;
    RunRecord f;   /* the checkpoint files that exist, best.safetensors included */
    int nc = 0;
    if (runrecord_read(st, &r, &f, err) == LM_OK) {
        nc = f.n_ckpts;
        runrecord_free(&f);
    }
    const char *dir = r.checkpoint_dir[0] ? r.checkpoint_dir : "(no folder)";
    session_printf(s, "  run %ld '%s' (%s, %d checkpoint%s in %s): %s", id,
                   safetext_escape(name, sizeof name, r.name, 0), r.status, nc,
                   nc == 1 ? "" : "s", dir,
                   files ? (done ? "deleting the run and the files it wrote"
                                 : "the run and the files it wrote will be deleted (other "
                                   "files in its folder are left)")
                         : (done ? "run deleted; its checkpoint files are kept"
                                 : "the run will be deleted; its checkpoint files are kept "
                                   "(checkpoints=true deletes them too)"));
    runstore_row_free(&r);
}

/* What rm did: the files removed, the entries it left (not written by the run), the folder. */
static void rm_report(Session *s, long id, int files, const RunFilesReport *rep)
{
    if (!files) {
        session_printf(s, "deleted run %ld (checkpoint files kept)", id);
        return;
    }
    if (rep->refused[0]) {   /* a run this user did not write: its paths are not theirs */
        session_printf(s, "deleted run %ld; no file was removed: its settings and folder were"
                       " not written by you (%s) — delete its files yourself if they are"
                       " yours", id, rep->refused);
        return;
    }
    session_printf(s, "deleted run %ld and the %d file%s it wrote", id, rep->removed,
                   rep->removed == 1 ? "" : "s");
    char dir[1100], left[1100];   /* names come from the disk: escaped */
    safetext_escape(dir, sizeof dir, rep->dir, 0);
    safetext_escape(left, sizeof left, rep->left_names, 0);
    if (rep->left)
        session_printf(s, "  left in %s (not written by run %ld): %s — the folder stays", dir,
                       id, left);
    else if (rep->dir_removed)
        session_printf(s, "  removed the empty folder %s", dir);
}

/* rm ID... [checkpoints=true] [yes|--yes]: without yes it only says what would happen
 * (at an interactive prompt, s->can_ask: then the prompt asks y/N and runs it with yes;
 * at a terminal otherwise: repeat with yes; in a script: an error, nothing deleted). */
int cmd_rm(Session *s, int argc, const LexWord *argv)
{
    RunStore *st;
    long ids[RUNS_MAX_IDS];
    int n = 0, files = 0, yes = 0;
    const char *usage = "rm RUN_ID... [checkpoints=true] [yes]";
    if (argc < 2 || argv[1].key)
        return session_error(s, LM_EARG, "run id expected — usage: %s", usage);
    if (!(st = session_store(s))) return LM_EDB;
    for (int i = 1; i < argc; i++) {
        if (argv[i].key) {
            if (strcmp(argv[i].key, "checkpoints"))
                return session_error(s, LM_EARG, "rm: unknown setting %s= — usage: %s",
                                     argv[i].key, usage);
            files = !strcmp(argv[i].value, "true");
        } else if (!strcmp(argv[i].text, "yes") || !strcmp(argv[i].text, "--yes")) {
            yes = 1;
        } else {
            RunRow row;
            if (n == RUNS_MAX_IDS)
                return session_error(s, LM_EARG, "too many runs (at most %d)", RUNS_MAX_IDS);
            if (parse_id(s, &argv[i], &ids[n]) || get_run(s, st, ids[n], &row)) return LM_EARG;
            runstore_row_free(&row);
            if (s->trainer && s->run_id == ids[n])
                return session_error(s, LM_ESTATE, "run %ld is the run of this session — "
                                     "`stop` it and `wait` for it to end before deleting it",
                                     ids[n]);
            n++;
        }
    }
    if (!yes) {   /* the plan, always; then at a terminal a hint, in a script an error */
        int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
        if (!s->json) {
            session_printf(s, "rm would delete %d run%s:", n, n == 1 ? "" : "s");
            for (int i = 0; i < n; i++) rm_describe(s, st, ids[i], files, 0);
        }
        if (!tty && !s->json)
            return session_error(s, LM_EARG, "rm deletes runs for good: in a script add "
                                 "--yes (or yes) to confirm; nothing was deleted");
        if (!tty)
            return session_error(s, LM_EARG, "rm needs yes (or --yes) to delete; nothing "
                                 "was deleted");
        if (s->can_ask && !s->json) {   /* the prompt asks y/N and runs this with yes */
            size_t o = (size_t)snprintf(s->ask_cmd, sizeof s->ask_cmd, "rm");
            for (int i = 0; i < n && o < sizeof s->ask_cmd; i++)
                o += (size_t)snprintf(s->ask_cmd + o, sizeof s->ask_cmd - o, " %ld", ids[i]);
            if (o < sizeof s->ask_cmd)
                snprintf(s->ask_cmd + o, sizeof s->ask_cmd - o, "%s yes",
                         files ? " checkpoints=true" : "");
            snprintf(s->ask_text, sizeof s->ask_text, "delete %d run%s%s for good? (y/N) ", n,
                     n == 1 ? "" : "s", files ? " and their checkpoint files" : "");
            return LM_OK;
        }
        session_printf(s, "nothing deleted yet: repeat the command with yes to delete");
        return LM_OK;
    }
    char err[LM_ERR_LEN];
    for (int i = 0; i < n; i++) {
        if (!s->json) rm_describe(s, st, ids[i], files, 1);
        RunFilesReport rep;
        int status = runstore_delete_run_report(st, ids[i], files, &rep, err);
        if (status && files && rep.left)
            rm_report(s, ids[i], files, &rep);
        if (status) return session_error(s, status, "%s", err);
        if (s->view && s->view_run == ids[i]) s->view_run = 0; /* the open copy stays usable */
        if (s->json) {
            json_t *o = json_pack("{s:b s:I s:b s:i s:i s:s s:b}", "ok", 1, "deleted",
                                  (json_int_t)ids[i], "checkpoints", files, "files_removed",
                                  rep.removed, "entries_left", rep.left, "left",
                                  rep.left_names, "folder_removed", rep.dir_removed);
            if (o && rep.refused[0])
                json_object_set_new(o, "files_refused", json_string(rep.refused));
            session_emit_json(s, o);
        } else
            rm_report(s, ids[i], files, &rep);
    }
    return LM_OK;
}

/* ---- export -------------------------------------------------------------------------- */

/* Appends the run ids of sweep `word` to ids. */
static int sweep_ids(Session *s, RunStore *st, const char *word, long *ids, int *n)
{
    long sw = session_parse_run_id(word);
    if (sw <= 0) return session_error(s, LM_EARG, "sweep id expected, got '%s'", word);
    SweepTrialRow *t = NULL;
    SweepRow row;
    int nt = 0, added = 0;
    char err[LM_ERR_LEN];
    int status = runstore_sweep_get(st, sw, &row, err);
    if (status == LM_EARG) return session_error(s, status, "no sweep %ld", sw);
    if (!status) free(row.spec);
    if (!status) status = runstore_sweep_trials(st, sw, &t, &nt, err);
    if (status) return session_error(s, status, "%s", err);
    for (int i = 0; i < nt && *n < RUNS_MAX_IDS; i++)
        if (t[i].run_id > 0) ids[(*n)++] = t[i].run_id, added++;
    free(t);
    if (!added) return session_error(s, LM_EARG, "sweep %ld has no runs to export yet", sw);
    return LM_OK;
}

/* format= or the file's extension. NULL after reporting. */
static const char *export_format(Session *s, const char *format, const char *file)
{
    if (format) return format;
    const char *dot = strrchr(file, '.');
    if (dot && !strcmp(dot, ".csv")) return "csv";
    if (dot && !strcmp(dot, ".json")) return "json";
    session_error(s, LM_EARG, "cannot tell the format from '%s': name it .csv or .json, or "
                  "add format=csv|json", file);
    return NULL;
}

static long count_steps(RunStore *st, const long *ids, int n)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        SeriesPoint *p = NULL;
        int np = 0;
        if (runstore_series(st, ids[i], "loss", &p, &np, NULL) == LM_OK) total += np;
        free(p);
    }
    return total;
}

/* export without file=: the CSV or JSON itself as the command's output. */
/* Under --json the export joins the one-object-per-line stream: format=json as one
 * {"event":"export", ...run} object a run, csv as one {"event":"export","csv":TEXT}. */
static void export_emit_json(Session *s, const char *format, const char *buf)
{
    if (strcmp(format, "json")) {
        session_emit_json(s, json_pack("{s:s s:s s:s}", "event", "export", "format", format,
                                       "csv", buf));
        return;
    }
    json_t *arr = json_loads(buf, JSON_DECODE_ANY, NULL);
    size_t i;
    json_t *run;
    json_array_foreach(arr, i, run) {
        json_object_set_new(run, "event", json_string("export"));
        session_emit_json(s, json_incref(run));
    }
    json_decref(arr);
}

static int export_print(Session *s, RunStore *st, const long *ids, int n, const char *format)
{
    char err[LM_ERR_LEN], *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return session_error(s, LM_ENOMEM, "out of memory exporting");
    int status = runstore_export_stream(st, ids, n, format, f, err);
    if (fclose(f) && !status) status = err_set(err, LM_ENOMEM, "out of memory exporting");
    if (!status && s->json) export_emit_json(s, format, buf);
    else if (!status) session_stream(s, buf);
    free(buf);
    return status ? session_error(s, status, "%s", err) : LM_OK;
}

/* export format=tensorboard dir=D (core/run/tboard.h). */
static int export_tensorboard(Session *s, RunStore *st, const long *ids, int n,
                              const char *dir)
{
    char err[LM_ERR_LEN];
    TboardReport rep;
    int status = tboard_export(st, ids, n, dir, &rep, err);
    if (status) return session_error(s, status, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:o s:s s:i s:I s:I s:I s:o}", "ok", 1, "dir",
                                       jsonval_str(dir), "format", "tensorboard", "runs",
                                       rep.runs, "scalars", (json_int_t)rep.scalars,
                                       "histograms", (json_int_t)rep.histograms, "texts",
                                       (json_int_t)rep.texts, "first", jsonval_str(rep.first)));
    else
        session_printf(s, "wrote %d run%s to %s (TensorBoard event files: %ld scalars, %ld "
                       "histograms, %ld texts), e.g. %s; view with `tensorboard --logdir %s`",
                       rep.runs, rep.runs == 1 ? "" : "s", dir, rep.scalars, rep.histograms,
                       rep.texts, rep.first, dir);
    return LM_OK;
}

static int export_read(Session *s, int argc, const LexWord *argv)
{
    const char *format = NULL, *file = NULL, *sweep = NULL, *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && !strcmp(argv[i].key, "format")) format = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "file")) file = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "sweep")) sweep = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "dir")) dir = argv[i].value;
    }
    int tb = format && !strcmp(format, "tensorboard");
    if (tb && file)
        return session_error(s, LM_EARG, "format=tensorboard writes a folder: give dir=FOLDER "
                             "(a new folder), not file=");
    if (dir && !tb)
        return session_error(s, LM_EARG, "dir= is for format=tensorboard (csv and json take "
                             "file=PATH)");
    if (file && !*file)
        return session_error(s, LM_EARG, "file= is empty: give a path, e.g. `export 3 4 "
                             "file=runs.csv`, or leave file= out to print the export");
    if (!file && !format) format = "csv";
    if (file && !(format = export_format(s, format, file))) return LM_EARG;
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    long ids[RUNS_MAX_IDS];
    int n = 0;
    if (parse_ids(s, st, argc, argv, ids, &n)) return LM_EARG;
    if (sweep && sweep_ids(s, st, sweep, ids, &n)) return LM_EARG;
    if (n == 0) return session_error(s, LM_EARG, "export needs run ids or sweep=ID, e.g. "
                                     "`export 3 4 file=runs.csv`");
    char err[LM_ERR_LEN];
    if (tb) return export_tensorboard(s, st, ids, n, dir);
    if (!file) return export_print(s, st, ids, n, format);
    int status = runstore_export(st, ids, n, format, file, err);
    if (status) return session_error(s, status, "%s", err);
    long steps = count_steps(st, ids, n);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:o s:s s:i s:I}", "ok", 1,
                                       "file", jsonval_str(file), "format", format,
                                       "runs", n, "steps", (json_int_t)steps));
    else
        session_printf(s, "wrote %d run%s (%ld step rows) to %s (%s)", n, n == 1 ? "" : "s",
                       steps, file, format);
    return LM_OK;
}

/* ---- reading a damaged store ---------------------------------------------------------- */

/* runs, run and export read whatever the store still gives, but never silently: a store
 * whose whole quick_check fails (damage in the per-step tables, which the open's check of
 * the run list does not read) is said first, and the command exits non-zero. */
static int read_checked(Session *s, int (*read)(Session *, int, const LexWord *), int argc,
                        const LexWord *argv)
{
    RunStore *st = session_store(s);
    char err[LM_ERR_LEN];
    int damaged = st && runstore_check_whole(st, err) != LM_OK;
    if (damaged)
        session_error(s, LM_EFORMAT, "%s; what follows is what could still be read, and may "
                      "be incomplete", err);
    int rc = read(s, argc, argv);
    return damaged && !rc ? LM_EFORMAT : rc;
}

int cmd_runs(Session *s, int argc, const LexWord *argv)
{
    return read_checked(s, runs_read, argc, argv);
}

int cmd_run(Session *s, int argc, const LexWord *argv)
{
    return read_checked(s, run_read, argc, argv);
}

int cmd_export(Session *s, int argc, const LexWord *argv)
{
    return read_checked(s, export_read, argc, argv);
}
