/* cmd_sweep.c — the `sweep` command: start a sweep in the background from key=value
 * words or a sweep file, follow and steer it (status, pause, resume, stop, wait),
 * continue a stored one (resume ID), and compare its trials (show ID, list); and
 * cmd_train_seeds, the handler the table routes `train seeds=N` to (N runs differing only
 * in their seed, as a sweep whose runs form one group). The runner (core/sweep_runner.c)
 * does the work and is the session's job (session_job_*); steering it is job.c's; this
 * file parses and prints text or JSON lines. Not here: the spec rules (core/sweep.c). */
#include "dist.h"
#include "output.h"
#include "session.h"
#include "cmd_analysis.h"
#include "cmd_sweep.h"
#include "job.h"
#include "jsonval.h"
#include "runstore_group.h"
#include "checkpoint.h"
#include "runrecord.h"
#include "runstore.h"
#include "runstore_row.h"
#include "sweep_pool.h"
#include "sweep_analysis.h"
#include "tokenizer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Drops an earlier value of a swept key (the command line overrides the sweep file). */
static void drop_param(SweepSpec *sp, const char *key)
{
    for (int i = 0; i < sp->n_params; i++)
        if (!strcmp(sp->params[i].key, key)) {
            memmove(&sp->params[i], &sp->params[i + 1],
                    (size_t)(sp->n_params - i - 1) * sizeof sp->params[0]);
            sp->n_params--;
            return;
        }
}

/* file=NAME first, then every other word; then the checks over every trial. */
static int build_spec(Session *s, int argc, const LexWord *argv, SweepSpec *sp)
{
    char err[LM_ERR_LEN], path[1024];
    sweep_spec_init(sp);
    for (int i = 1; i < argc; i++) {
        if (!argv[i].key || strcmp(argv[i].key, "file"))
            continue;
        if (sweep_find_file(argv[i].value, path, sizeof path))
            return session_error(s, LM_EARG, "file=%s: no such sweep (experiments/sweeps/%s"
                                 ".sweep)", argv[i].value, argv[i].value);
        if (sweep_spec_load_file(sp, path, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    int from_file = sp->n_params;
    for (int i = 1; i < argc; i++) {
        if (!argv[i].key)
            return session_error(s, LM_EARG, "'%s': expected key=value (or status, pause, "
                                 "resume, stop, wait, show ID, list)", argv[i].text);
        if (!strcmp(argv[i].key, "file"))
            continue;
        if (from_file)
            drop_param(sp, argv[i].key);
        if (sweep_spec_set(sp, argv[i].key, argv[i].value, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (sweep_spec_finish(sp, &s->cfg, err))
        return session_error(s, LM_EARG, "%s", err);
    return LM_OK;
}

static void announce(Session *s, SweepRunner *r, const char *verb)
{
    SweepProgress p;
    sweep_runner_progress(r, &p);
    const SweepSpec *sp = sweep_runner_spec(r);
    Output *o = output_create(NULL);
    output_bool(o, "ok", 1);
    output_int(o, "sweep", p.sweep_id);
    output_str(o, "name", p.name);
    output_str(o, "strategy", sweep_strategy_name(sp->strategy));
    output_int(o, "trials", p.total);
    output_int(o, "done", p.done);
    output_str(o, "action", verb);
    output_str(o, "metric", sweep_metric_name(sp->metric));
    output_int(o, "left", p.total - p.done - p.stopped_early - p.stopped - p.failed);
    output_line(o, "sweep #{sweep} {name} {action}: {trials} trials ({strategy}, metric "
                "{metric}), {left} left to train; runs named {name}-t1.., tagged "
                "sweep-{sweep}. Follow with `sweep status` or `sweep wait`");
    output_emit(s, o);
}

static int start_runner(Session *s, SweepRunner *r, const char *verb)
{
    char err[LM_ERR_LEN];
    if (sweep_runner_start(r, err)) {
        sweep_runner_destroy(r);
        return session_error(s, LM_ENOMEM, "%s", err);
    }
    session_job_set_sweep(s, r);
    announce(s, r, verb);
    return LM_OK;
}

static int sweep_start(Session *s, int argc, const LexWord *argv)
{
    if (session_check_idle(s, "a sweep"))
        return LM_ESTATE;
    SweepSpec *sp = malloc(sizeof *sp);
    if (!sp)
        return session_error(s, LM_ENOMEM, "out of memory");
    char err[LM_ERR_LEN];
    int rc = build_spec(s, argc, argv, sp);
    if (!rc && sp->parallel == SWEEP_PARALLEL_RANKS && dist_world_size() < 2)
        rc = session_error(s, LM_EARG, "parallel=ranks trains one trial on each rank of an MPI "
                           "job: start lmlab with `mpirun -np N` (N >= 2), or use parallel=K "
                           "for K trials at once on this machine");
    SweepRunner *r = rc ? NULL : sweep_runner_create(sp, s->db_path, err);
    free(sp);
    if (rc)
        return rc;
    if (!r)
        return session_error(s, LM_EDB, "%s", err);
    return start_runner(s, r, "started");
}

static int sweep_continue(Session *s, const char *word)
{
    long id = session_parse_run_id(word);
    if (id <= 0)
        return session_error(s, LM_EARG, "sweep resume %s: expected a sweep id", word);
    if (session_check_idle(s, "a sweep"))
        return LM_ESTATE;
    char err[LM_ERR_LEN];
    SweepRunner *r = sweep_runner_open(id, s->db_path, NULL, err);
    if (!r)
        return session_error(s, LM_ESTATE, "%s", err);
    return start_runner(s, r, "resumed");
}

/* ---- show and list ------------------------------------------------------------------ */

typedef struct {
    const SweepTrialRow *t;
    double metric, seconds;
} Ranked;

/* Trials with a metric first, lowest first; then the others in trial order. */
static int by_metric(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int fx = isfinite(x->metric), fy = isfinite(y->metric);
    if (fx != fy)
        return fy - fx;
    if (fx && x->metric != y->metric)
        return x->metric < y->metric ? -1 : 1;
    return x->t->trial - y->t->trial;
}

/* The value of key in "k=v k=v" params, into out ("-" when absent). */
static void param_value(const char *params, const char *key, char *out, size_t cap)
{
    if (!sweep_param_value(params, key, out, cap))   /* core/sweep: the one params reader */
        snprintf(out, cap, "-");
}

/* The swept keys, from the first trial's params. */
static int param_keys(const char *params, char keys[][32], int cap)
{
    int n = 0;
    for (const char *p = params; p && *p && n < cap; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL) {
        const char *eq = strchr(p, '=');
        if (!eq)
            break;
        snprintf(keys[n++], 32, "%.*s", (int)(eq - p) < 31 ? (int)(eq - p) : 31, p);
    }
    return n;
}

static void trial_status(const SweepTrialRow *t, char *out, size_t cap)
{
    if (!strcmp(t->status, "stopped"))   /* by the halving, or by `stop RUN` (item 7) */
        snprintf(out, cap, "stopped %sat step %ld", t->stopped_early ? "early " : "",
                 t->last_step);
    else
        snprintf(out, cap, "%s", t->status);
}

static json_t *trial_json(long id, int rank, const Ranked *r, char keys[][32], int nk, int best)
{
    char v[SWEEP_VALUE_LEN], st[64];
    json_t *params = json_object();
    for (int k = 0; k < nk; k++) {
        param_value(r->t->params, keys[k], v, sizeof v);
        json_object_set_new(params, keys[k], json_string(v));
    }
    trial_status(r->t, st, sizeof st);
    json_t *o = json_pack("{s:s s:I s:i s:i s:I s:o s:s s:I s:f s:b}", "event", "sweep_trial",
                          "sweep", (json_int_t)id, "rank", rank, "trial", r->t->trial, "run",
                          (json_int_t)r->t->run_id, "params", params, "status", st, "steps",
                          (json_int_t)r->t->last_step, "seconds",
                          isfinite(r->seconds) ? r->seconds : 0.0, "best", best);
    if (o && !isfinite(r->seconds))   /* no run yet (pending, refused): not a number */
        json_object_set_new(o, "seconds", json_null());
    if (!isfinite(r->metric)) json_object_set_new(o, "rank", json_null()); /* not finished */
    if (isfinite(r->t->best_val)) {
        json_object_set_new(o, "best_val", json_real(r->t->best_val));
        json_object_set_new(o, "best_estimated", json_boolean(r->t->best_estimated));
    }
    if (isfinite(r->t->final_val)) json_object_set_new(o, "final_val", json_real(r->t->final_val));
    return o;
}

/* One text row of the ranking table. */
static void trial_line(Session *s, int rank, const Ranked *r, char keys[][32], int nk,
                       const int *width, int best)
{
    char line[2048], v[SWEEP_VALUE_LEN], st[64], tm[32], bv[16] = "-", fv[16] = "-";
    char rank_s[16] = "  -";   /* not ranked: not finished */
    if (isfinite(r->metric)) snprintf(rank_s, sizeof rank_s, "%3d", rank);
    char run[24] = "-";   /* a pending trial has no run yet */
    if (r->t->run_id > 0) snprintf(run, sizeof run, "#%ld", r->t->run_id);
    int o = snprintf(line, sizeof line, "%s%s  t%-3d %-6s", best ? "*" : " ", rank_s,
                     r->t->trial, run);
    for (int k = 0; k < nk && o < (int)sizeof line; k++) {
        param_value(r->t->params, keys[k], v, sizeof v);
        o += snprintf(line + o, sizeof line - (size_t)o, "  %-*s", width[k], v);
    }
    runstore_fmt_best(bv, sizeof bv, r->t->best_val, r->t->best_estimated);
    if (isfinite(r->t->final_val)) snprintf(fv, sizeof fv, "%.4f", r->t->final_val);
    trial_status(r->t, st, sizeof st);
    session_fmt_duration(tm, sizeof tm, r->seconds);
    if (o < (int)sizeof line)
        snprintf(line + o, sizeof line - (size_t)o, "  %8s  %9s  %6ld  %6s  %s", bv, fv,
                 r->t->last_step, tm, st);
    session_printf(s, "%s", line);
}

static void show_table(Session *s, long id, Ranked *rk, int n, int final)
{
    char keys[SWEEP_MAX_PARAMS][32], v[SWEEP_VALUE_LEN], head[2048];
    int nk = n ? param_keys(rk[0].t->params, keys, SWEEP_MAX_PARAMS) : 0, width[SWEEP_MAX_PARAMS];
    int o = snprintf(head, sizeof head, " rank trial run   ");
    for (int k = 0; k < nk; k++) {
        width[k] = (int)strlen(keys[k]);
        for (int i = 0; i < n; i++) {
            param_value(rk[i].t->params, keys[k], v, sizeof v);
            if ((int)strlen(v) > width[k]) width[k] = (int)strlen(v);
        }
        o += snprintf(head + o, o < (int)sizeof head ? sizeof head - (size_t)o : 0, "  %-*s",
                      width[k], keys[k]);
    }
    if (o < (int)sizeof head)
        snprintf(head + o, sizeof head - (size_t)o, "  %8s  %9s  %6s  %6s  status", "best val",
                 "final val", "steps", "time");
    if (!s->json)
        session_printf(s, "%s", head);
    for (int i = 0; i < n; i++) {
        int best = i == 0 && isfinite(rk[i].metric);
        if (s->json)
            session_emit_json(s, trial_json(id, i + 1, &rk[i], keys, nk, best));
        else
            trial_line(s, i + 1, &rk[i], keys, nk, width, best);
    }
    if (!s->json && n && isfinite(rk[0].metric))
        session_printf(s, "* best by %s: trial %d (run #%ld), %.4f", final ? "final_val"
                       : "best_val", rk[0].t->trial, rk[0].t->run_id, rk[0].metric);
    int est = 0;
    for (int i = 0; i < n; i++) est |= isfinite(rk[i].t->best_val) && rk[i].t->best_estimated;
    if (!s->json && est)   /* as `runs` says it */
        session_printf(s, "~ best val is an estimate over eval_batches batches, not a "
                       "whole-split evaluation (the trial ended before its final one)");
}

/* Seconds a trial's run trained: the trainer's elapsed time at its last logged step
 * (evaluations and the pauses between halving rungs excluded). */
static double run_seconds(RunStore *st, long run)
{
    SeriesPoint *pts = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (run <= 0 || runstore_series(st, run, "elapsed", &pts, &n, err) || n == 0) {
        free(pts);
        return NAN;
    }
    double sec = pts[n - 1].value;
    free(pts);
    return sec;
}

static int sweep_show(Session *s, const char *word)
{
    long id = word ? session_parse_run_id(word) : s->sweep ? sweep_runner_id(s->sweep) : -1;
    if (id <= 0)
        return session_error(s, LM_EARG, "sweep show: expected a sweep id (`sweep list`)");
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    SweepRow row = {0};
    SweepTrialRow *t = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (runstore_sweep_get(st, id, &row, err) || runstore_sweep_trials(st, id, &t, &n, err)) {
        free(row.spec);
        return session_error(s, LM_EARG, "%s", err);
    }
    if (!row.name[0])
        snprintf(row.name, sizeof row.name, "sweep%ld", id);
    const char *nl = strchr(row.spec, '\n');
    const char *m = strstr(row.spec, "metric=final_val");
    int final = m && (!nl || m < nl);
    Ranked *rk = calloc((size_t)(n ? n : 1), sizeof *rk);
    for (int i = 0; rk && i < n; i++) {
        rk[i].t = &t[i];
        /* only finished trials are ranked: one stopped early or interrupted has no metric */
        rk[i].metric = strcmp(t[i].status, "done") ? NAN : final ? t[i].final_val
                                                                  : t[i].best_val;
        rk[i].seconds = run_seconds(st, t[i].run_id);
    }
    if (rk)
        qsort(rk, (size_t)n, sizeof *rk, by_metric);
    char refusal[LM_ERR_LEN] = "";   /* a spec this user did not write trains nothing */
    runstore_sweep_refusal(st, &row, refusal, sizeof refusal);
    if (s->json) {
        json_t *o = json_pack("{s:s s:I s:s s:s s:s s:i s:s}", "event", "sweep", "sweep",
                              (json_int_t)id, "name", row.name, "strategy", row.strategy,
                              "status", row.status, "trials", n, "metric",
                              final ? "final_val" : "best_val");
        if (o && refusal[0]) json_object_set_new(o, "refused", json_string(refusal));
        session_emit_json(s, o);
    } else {
        session_printf(s, "sweep #%ld %s (%s, %d trials, %s, ranked by %s)\n  %.*s", id,
                       row.name, row.strategy, n, row.status,
                       final ? "final_val" : "best_val", nl ? (int)(nl - row.spec) : 400,
                       row.spec);
        if (refusal[0]) session_printf(s, "  %s", refusal);
    }
    if (rk)
        show_table(s, id, rk, n, final);
    double *metric = malloc((size_t)(n ? n : 1) * sizeof *metric);
    for (int i = 0; metric && i < n; i++)   /* seed groups ranked by their mean (cmd_analysis.c) */
        metric[i] = strcmp(t[i].status, "done") ? NAN : final ? t[i].final_val : t[i].best_val;
    if (metric)
        cmd_sweep_groups_print(s, id, t, metric, n);
    free(metric);
    free(rk);
    free(t);
    free(row.spec);
    return LM_OK;
}

/* `sweep trust N [spec=HEX]`: shows the whole stored spec (its words and the base settings
 * every trial trains with, files named included) and why it is refused; with spec= (the
 * fingerprint of the text shown, so a spec changed since it was read is never signed)
 * signs it as this user's, so `sweep resume N` trains it. At an interactive prompt it asks
 * y/N instead. */
static int sweep_trust(Session *s, int argc, const LexWord *argv)
{
    long id = argc > 2 && !argv[2].key ? session_parse_run_id(argv[2].text) : -1;
    const char *print = argc > 3 && argv[3].key && !strcmp(argv[3].key, "spec")
                            ? argv[3].value : NULL;
    if (id <= 0 || argc > 4 || (argc == 4 && !print))
        return session_error(s, LM_EARG, "sweep trust: usage `sweep trust ID` (shows the spec),"
                             " then `sweep trust ID spec=FINGERPRINT` to sign it as yours");
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    SweepRow row = {0};
    char err[LM_ERR_LEN], refusal[LM_ERR_LEN] = "", fp[24];
    if (runstore_sweep_get(st, id, &row, err)) {
        free(row.spec);
        return session_error(s, LM_EARG, "sweep trust: %s", err);
    }
    snprintf(fp, sizeof fp, "%016llx",   /* the fingerprint of the text shown */
             tokenizer_fnv1a(row.spec, strlen(row.spec), TOKENIZER_FNV_SEED));
    runstore_sweep_refusal(st, &row, refusal, sizeof refusal);
    int rc = LM_OK;
    if (!print) {
        if (!s->json) {
            session_printf(s, "sweep #%ld's stored spec (its words, then the settings every"
                           " trial trains with):\n%s", id, row.spec);
            session_printf(s, "%s", refusal[0] ? refusal : "it is already signed by you");
        }
        if (refusal[0] && s->can_ask && !s->json) {
            snprintf(s->ask_cmd, sizeof s->ask_cmd, "sweep trust %ld spec=%s", id, fp);
            snprintf(s->ask_text, sizeof s->ask_text, "sign sweep %ld's spec as yours, so its"
                     " trials train as you? (y/N) ", id);
        } else if (refusal[0] && !s->json) {
            session_printf(s, "nothing signed: after reading it, `sweep trust %ld spec=%s`"
                           " signs this text as yours", id, fp);
        }
        if (s->json)
            session_emit_json(s, json_pack("{s:s s:I s:s s:s s:b}", "event", "sweep_trust",
                                           "sweep", (json_int_t)id, "spec", row.spec,
                                           "fingerprint", fp, "trusted", !refusal[0]));
    } else if (strcmp(print, fp)) {
        rc = session_error(s, LM_EARG, "sweep trust: sweep %ld's spec is not the text"
                           " fingerprinted %s (it changed since it was shown, or the"
                           " fingerprint is mistyped); nothing signed: `sweep trust %ld` shows"
                           " it again", id, print, id);
    } else if ((rc = runstore_sweep_sign(st, id, row.spec, row.created, err))) {
        session_error(s, rc, "sweep trust: %s", err);
    } else {
        Output *o = output_create(NULL);
        output_bool(o, "ok", 1);
        output_int(o, "sweep", id);
        output_str(o, "action", "trusted");
        output_line(o, "sweep #{sweep}'s spec is now signed as yours: `sweep resume {sweep}`"
                    " trains its trials");
        rc = output_emit(s, o);
    }
    free(row.spec);
    return rc;
}

/* The store has no listing of sweeps: ids are probed upward until 20 in a row are
 * missing (sweeps are never deleted by lmlab). */
static int sweep_list(Session *s)
{
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    int misses = 0, shown = 0;
    char err[LM_ERR_LEN];
    for (long id = 1; misses < 20; id++) {
        SweepRow row = {0};
        if (runstore_sweep_get(st, id, &row, err)) {
            misses++;
            continue;
        }
        misses = 0;
        if (!row.name[0])
            snprintf(row.name, sizeof row.name, "sweep%ld", id);
        SweepTrialRow *t = NULL;
        int n = 0, done = 0;
        double best = NAN;
        int best_est = 0;
        runstore_sweep_trials(st, id, &t, &n, err);
        for (int i = 0; i < n; i++) {
            done += !strcmp(t[i].status, "done");
            if (isfinite(t[i].best_val) && !(t[i].best_val >= best))
                best = t[i].best_val, best_est = t[i].best_estimated;
        }
        if (s->json)   /* no best yet (no trial evaluated): null (jsonval_num), JSON has no NaN */
            session_emit_json(s, json_pack("{s:s s:I s:s s:s s:s s:i s:i s:o}", "event",
                                           "sweep", "sweep", (json_int_t)id, "name", row.name,
                                           "strategy", row.strategy, "status", row.status,
                                           "trials", n, "done", done, "best_val",
                                           jsonval_num(best)));
        else {
            char bv[16];
            runstore_fmt_best(bv, sizeof bv, best, best_est);
            session_printf(s, "#%-4ld %-20s %-8s %-9s %3d trials, %3d done  best val %s", id,
                           row.name, row.strategy, row.status, n, done, bv);
        }
        shown++;
        free(t);
        free(row.spec);
    }
    if (!shown && !s->json)
        session_printf(s, "no sweeps yet: `help sweep` shows how to start one");
    return LM_OK;
}

/* `sweep worker=ID trial=K [stop_at=N] [threads=T]`: what a parallel sweep's worker
 * process runs for trial K of sweep ID (sweep_pool.h); not for people (a key word, not a
 * subcommand, so it stays out of `help sweep`). Trains the one trial in the foreground;
 * SIGTERM (s->interrupt) stops it with a checkpoint. Quiet: the parent reads the store. */
static int sweep_worker(Session *s, int argc, const LexWord *argv)
{
    long v[4] = {0, 0, 0, 0};  /* sweep, trial, stop_at, threads */
    const char *keys[4] = {"worker", "trial", "stop_at", "threads"};
    for (int i = 1; i < argc; i++) {
        int k = 0;
        while (k < 4 && (!argv[i].key || strcmp(argv[i].key, keys[k])))
            k++;
        char *end = NULL;
        if (k == 4 || (v[k] = strtol(argv[i].value, &end, 10)) < 0 || !end || *end)
            return session_error(s, LM_EARG, "sweep worker: '%s': expected worker=ID trial=K "
                                 "stop_at=N threads=T (numbers)", argv[i].text);
    }
    if (v[0] <= 0 || v[1] <= 0)
        return session_error(s, LM_EARG, "sweep worker: worker=ID and trial=K are required");
    char err[LM_ERR_LEN];
    SweepWorkerJob job = {.trial = (int)v[1], .stop_at = v[2], .threads = (int)v[3]};
    SweepRunner *r = sweep_runner_open(v[0], s->db_path, &job, err);
    if (!r)
        return session_error(s, LM_ESTATE, "%s", err);
    int rc = sweep_runner_start(r, err);
    sweep_pool_worker_ready();   /* a stop sent while this process started arrives now */
    for (int stopping = 0; !rc && !sweep_runner_done(r); usleep(50000))
        if (s->interrupt && !stopping++)
            sweep_runner_stop(r);
    sweep_runner_join(r);
    SweepProgress p;
    sweep_runner_progress(r, &p);
    if (!rc && (rc = sweep_runner_result(r)))
        snprintf(err, sizeof err, "%s", p.message);
    sweep_runner_destroy(r);
    return rc == LM_ECANCEL ? LM_OK : rc ? session_error(s, rc, "sweep worker: %s", err) : LM_OK;
}

#define TRAIN_MAX_WORDS 64

/* train's words as sweep words: seeds/repeat -> seeds, group -> name, a bare experiment
 * -> base. Returns the count, or -1 after reporting. */
static int sweep_words(Session *s, int argc, const LexWord *argv, LexWord *out, char *seeds,
                       size_t cap)
{
    int n = 0;
    out[n++] = (LexWord){.text = "sweep", .value = "sweep"};
    for (int i = 1; i < argc && n < TRAIN_MAX_WORDS; i++) {
        LexWord w = argv[i];
        if (!w.key) {
            w.key = "base", w.value = w.text;   /* train EXP seeds=N */
        } else if (!strcmp(w.key, "seeds") || !strcmp(w.key, "repeat")) {
            char *end;
            long k = strtol(w.value, &end, 10);
            if (!*w.value || *end || k < 1 || k > 64)
                return session_error(s, LM_EARG, "%s=%s: give how many seeds, 1 to 64 (each "
                                     "a run)", w.key, w.value), -1;
            snprintf(seeds, cap, "%ld", k);
            w.key = "seeds", w.value = seeds;
        } else if (!strcmp(w.key, "group")) {
            w.key = "name";
        } else if (!strcmp(w.key, "resume")) {
            return session_error(s, LM_EARG, "resume= continues one run; seeds=N starts new "
                                 "ones: give one or the other"), -1;
        }
        out[n++] = w;
    }
    if (n == TRAIN_MAX_WORDS)
        return session_error(s, LM_EARG, "too many words (at most %d)", TRAIN_MAX_WORDS - 1), -1;
    return n;
}

int cmd_train_seeds(Session *s, int argc, const LexWord *argv)
{
    const char *group = NULL;
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "group"))
            group = argv[i].value;
    if (group && !runstore_group_name_ok(group))
        return session_error(s, LM_EARG, "group=%s: a name of 1 to %d characters without "
                             "spaces or commas", group, RUNSTORE_GROUP_LEN - 1);
    LexWord words[TRAIN_MAX_WORDS];
    char num[16];
    int n = sweep_words(s, argc, argv, words, num, sizeof num);
    return n < 0 ? LM_EARG : sweep_start(s, n, words);
}

int cmd_sweep(Session *s, int argc, const LexWord *argv)
{
    const char *sub = argc > 1 && !argv[1].key ? argv[1].text : NULL;
    const char *arg = argc > 2 && !argv[2].key ? argv[2].text : NULL;
    if (argc == 1 || (sub && !strcmp(sub, "status")))
        return argc > 3 ? session_error(s, LM_EARG, "sweep status: too many arguments")
                        : job_sweep_status(s, argc > 2 ? argv[2].text : NULL);
    if (!sub && argv[1].key && !strcmp(argv[1].key, "worker"))
        return sweep_worker(s, argc, argv);
    if (!sub)
        return sweep_start(s, argc, argv);
    if (!strcmp(sub, "trust"))
        return sweep_trust(s, argc, argv);
    if (argc > 3 || (argc == 3 && !arg))
        return session_error(s, LM_EARG, "sweep %s: too many arguments", sub);
    if (!strcmp(sub, "resume") && arg)
        return sweep_continue(s, arg);
    if (!strcmp(sub, "pause") || !strcmp(sub, "resume") || !strcmp(sub, "stop"))
        return job_sweep_control(s, sub);
    if (!strcmp(sub, "wait"))
        return job_sweep_wait(s, arg);
    if (!strcmp(sub, "show"))
        return sweep_show(s, arg);
    if (!strcmp(sub, "list"))
        return sweep_list(s);
    if (!strcmp(sub, "importance"))
        return cmd_analysis_sweep_importance(s, arg);
    return session_error(s, LM_EARG, "sweep %s: expected status, pause, resume [ID], stop, "
                         "wait, show [ID], list, importance ID, trust ID, or a spec (base=... key=v1,v2 ...)", sub);
}
