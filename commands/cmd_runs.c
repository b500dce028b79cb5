/* cmd_runs.c — the reading history commands: runs (a filtered, sorted list) and run (one
 * run in full). Each reads the run store through core/runstore.h and prints an aligned text
 * table or, in JSON mode, one object per line; a run's JSON, its tags and config are
 * runstore_run_json's, the export schema. Not here: compare (cmd_compare.c), tag, untag,
 * rename and rm (cmd_edits.c), export (cmd_export.c), the run-id arguments they share
 * (runargs.c), notes (cmd_log.c), SQL and filter semantics (runstore.c), training
 * (cmd_train.c), sweeps (cmd_sweep.c). */
#include "session.h"
#include "cmd_runs.h"
#include "runargs.h"
#include "cmd_analysis.h"
#include "cmd_log.h"
#include "runrecord.h"
#include "runkeys.h"
#include "runstore_row.h"
#include "series.h"

#include "err.h"
#include "jsonval.h"
#include "textcol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- small helpers ------------------------------------------------------------------ */

/* "1.2345", with ppl "1.2345 (3.44)"; "-" for NaN; a loss of 10000 or more (a diverged
 * run) in 4 significant digits, "2.857e+04 (inf)", so that the columns stay aligned. */
static void fmt_loss(char *buf, size_t cap, double v, int ppl)
{
    double p = exp(v);
    const char *lf = fabs(v) < 1e4 ? "%.4f" : "%.4g";
    char l[20];   /* "-9999.9999", "-1.235e+300" */
    snprintf(l, sizeof l, lf, v);
    if (isnan(v)) snprintf(buf, cap, "-");
    else if (!ppl) snprintf(buf, cap, "%s", l);
    else snprintf(buf, cap, p < 1e5 ? "%s (%.2f)" : "%s (%.3g)", l, p);
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
    if (r) runrecord_fmt_parent(from, sizeof from, r);
    if (r && !from[0]) snprintf(from, sizeof from, "-");
    char name[TEXTCOL_MAX * 4 + 8];   /* a long name cut, marked '…' */
    textcol_fit(name, sizeof name, r ? r->name : "name", nw, TEXTCOL_KEEP_START);
    int n = snprintf(line, sizeof line, "%4s  %s  %-*s  %-11s %7s %-16s %9s %7s  %-16s  %-*s"
                     "  %s", id, name, mw, model,
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
        int l = textcol_width(rows[i].name),
            m = (int)strlen(rows[i].model) + (strcmp(prec, "fp32") ? 1 + (int)strlen(prec) : 0);
        nw = l > nw ? (l > TEXTCOL_MAX ? TEXTCOL_MAX : l) : nw;
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
    json_object_set_new(o, "checkpoints_lost", json_integer(f->n_lost));
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
    const char *how = f->parent_init ? "initialised from" : "forked from";
    if (f->parent_run && f->parent_data[0])
        session_printf(s, "  %s: run #%ld at step %ld (trained on %s)", how,
                       f->parent_run, f->parent_step, f->parent_data);
    else if (f->parent_run)
        session_printf(s, "  %s: run #%ld at step %ld", how, f->parent_run, f->parent_step);
    else if (f->parent_step > 0)   /* the parent was deleted (parent_run set NULL) */
        session_printf(s, "  %s: a deleted run, at its step %ld", how, f->parent_step);
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
    if (f->n_lost && f->dir_gone)
        session_printf(s, "  (its folder is gone, deleted or moved outside lmlab, with the %d "
                       "newer checkpoint file%s it recorded, up to step %ld)", f->n_lost,
                       f->n_lost == 1 ? "" : "s", f->lost_step);
    else if (f->n_lost)
        session_printf(s, "  (%d recorded checkpoint file%s missing, not removed by "
                       "keep_checkpoints: deleted or moved outside lmlab; the newest was step "
                       "%ld's)", f->n_lost, f->n_lost == 1 ? " is" : "s are", f->lost_step);
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
    if (runargs_store_and_id(s, all ? 2 : argc, argv, "run RUN_ID [all]", &st, &id)) return LM_EARG;
    RunRow r;
    if (runargs_get_run(s, st, id, &r)) return LM_EARG;
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

int cmd_runs(Session *s, int argc, const LexWord *argv)
{
    return runargs_read_checked(s, runs_read, argc, argv);
}

int cmd_run(Session *s, int argc, const LexWord *argv)
{
    return runargs_read_checked(s, run_read, argc, argv);
}
