/* cmd_train.c — starting and steering a run: train (new or resumed, group=NAME files it
 * into a seed group; `train seeds=N` is the table's rewrite to the sweep path,
 * cmd_train_seeds in cmd_sweep.c), pause, resume and stop (one handler, cmd_control; the
 * control itself is job.c's), status, wait. A run is a Trainer (training thread) plus a Recorder (its events
 * to the run store and the snapshot); the prompt returns at once. */
#include "session.h"
#include "cmd_train.h"
#include "job.h"

#include "err.h"
#include "output.h"
#include "runstore_group.h"
#include "run_launch.h"
#include "runrecord.h"
#include "sysinfo.h"
#include "run_trust.h"
#include "run_weights.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRAIN_MAX_WORDS 64


/* resume=ID: the run's config, its newest checkpoint, and a data identity check. */
static int prepare_resume(Session *s, long id, int force, Config *c, TrainerOptions *o,
                          char *hash, size_t cap)
{
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    RunRow row;
    char err[LM_ERR_LEN];
    if (runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "%s", err);
    int rc = LM_OK;
    double age = 0;
    int stale = runstore_run_stale(st, &row, RUNSTORE_STALE_SECONDS, &age);
    if (stale && !force)
        rc = session_error(s, LM_ESTATE, "run #%ld is marked %s by process %ld on host %s, "
                           "but has sent no heartbeat for %.0f s (stale after %d s): if that "
                           "process is gone, take the run over with `train resume=%ld "
                           "force=true`", id, row.status, row.pid, row.host, age,
                           RUNSTORE_STALE_SECONDS, id);
    else if (!stale && (!strcmp(row.status, "running") || !strcmp(row.status, "paused")))
        rc = session_error(s, LM_ESTATE, "run #%ld is %s in process %ld on host %s; stop it "
                           "there first", id, row.status, row.pid, row.host);
    else if (!strcmp(row.status, "finished"))
        rc = session_error(s, LM_ESTATE, "run #%ld has finished; to train further, start a "
                           "new run with init_from=%ld", id, id);
    config_defaults(c);
    if (!rc && config_from_text(c, row.config, err))
        rc = session_error(s, LM_EFORMAT, "run #%ld: stored configuration unreadable: %s", id,
                           err);
    if (!rc && runrecord_checkpoint_path(st, &row, "final", o->resume, sizeof o->resume, NULL,
                                         err))
        rc = session_error(s, LM_EIO, "run #%ld has no checkpoint in %s to resume from (%s)",
                           id, row.checkpoint_dir, err);
    int own = rc ? LM_OK : checkpoint_verify_owner(o->resume, runstore_store_id(st), id, err);
    if (own == 1)
        session_printf(s, "warning: %s", err);
    else if (own)
        rc = session_error(s, own, "resume=%ld: %s", id, err);
    snprintf(hash, cap, "%s", row.data_hash);
    snprintf(o->run_dir, sizeof o->run_dir, "%s", row.checkpoint_dir);
    runstore_row_free(&row);
    return rc;
}

/* init_from=RUN_ID becomes that run's best checkpoint path (*init_run, *init_step: the
 * run and the checkpoint's step, recorded as the new run's lineage). */
static int resolve_init_from(Session *s, Config *c, long *init_run, long *init_step)
{
    long id = session_parse_run_id(c->init_from);
    if (!c->init_from[0] || id < 0)
        return LM_OK;
    RunStore *st = session_store(s);
    RunRow row;
    char err[LM_ERR_LEN], path[1100];
    if (!st || runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "init_from=%s: %s", c->init_from, st ? err : "no store");
    int rc = runrecord_checkpoint_path(st, &row, "best", path, sizeof path, init_step, err);
    if (rc == LM_EARG)   /* no best: the newest, as before */
        rc = runrecord_checkpoint_path(st, &row, "final", path, sizeof path, init_step, err);
    runstore_row_free(&row);
    if (rc)
        return session_error(s, LM_EIO, "init_from=%ld: the run has no checkpoint (%s)", id,
                             err);
    if ((rc = checkpoint_verify_owner(path, runstore_store_id(st), id, err)) == 1)
        session_printf(s, "warning: %s", err);
    else if (rc)
        return session_error(s, rc, "init_from=%ld: %s", id, err);
    if (strlen(path) >= sizeof c->init_from)
        return session_error(s, LM_EARG, "init_from=%ld: its checkpoint path %s is longer than "
                             "%zu bytes; give a shorter path to the checkpoint", id, path,
                             sizeof c->init_from - 1);
    memcpy(c->init_from, path, strlen(path) + 1);
    *init_run = id;
    return LM_OK;
}

/* A text corpus being prepared into the token cache on first use: what was found (fresh,
 * stale, incomplete) and the end said always, the progress every 2 s. */
typedef struct {
    Session *s;
    double last;
} PreparePrinter;

static int print_prepare(const TokCacheProgress *p, void *ud)
{
    PreparePrinter *pp = ud;
    Session *s = pp->s;
    if (p->message) {
        Output *o = output_create("prepare");
        output_str(o, "text", p->message);
        output_line(o, "data: {text}");
        output_emit(s, o);
        return s->interrupt != 0;
    }
    double now = sysinfo_now();
    if (now - pp->last < 2)
        return s->interrupt != 0;
    pp->last = now;
    Output *o = output_create("prepare_progress");
    output_str(o, "phase", tokcache_phase_name(p->phase));
    if (p->phase == TOKCACHE_LIST) {   /* a directory of many files: what is found so far */
        output_int(o, "entries", (long)p->tokens);
        output_line(o, "data: listing the corpus's files: {entries} looked at so far "
                    "(Ctrl-C stops)");
        output_emit(s, o);
        return s->interrupt != 0;
    }
    output_real(o, "mb_done", p->bytes_done / 1e6);
    output_real(o, "mb_total", p->bytes_total / 1e6);
    output_real(o, "mtokens", p->tokens / 1e6);
    output_real(o, "mb_per_s", p->mb_per_s);
    output_real(o, "eta_s", p->eta_seconds);
    output_line(o, p->eta_seconds >= 0 ? "data: preparing ({phase}) {mb_done:%.0f} of "
                "{mb_total:%.0f} MB, {mtokens:%.2f}M tokens, {mb_per_s:%.1f} MB/s, ETA "
                "{eta_s:%.0f} s" : "data: preparing ({phase}) {mb_done:%.0f} of {mb_total:%.0f} "
                "MB, {mtokens:%.2f}M tokens");
    output_emit(s, o);
    return s->interrupt != 0;
}

/* The run's configuration: the session's (or a resumed run's stored one) with the
 * command's key=value words applied. */
static int train_config(Session *s, int argc, const LexWord *argv, Config *c, long init[2],
                        TrainerOptions *o, long *resume, char *hash, size_t cap)
{
    char err[LM_ERR_LEN];
    int force = 0;   /* force=true: take over a run whose other-host heartbeat is stale */
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "force"))
            force = !strcmp(argv[i].value, "true");
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "resume")) {
            *resume = session_parse_run_id(argv[i].value);
            if (*resume < 0)
                return session_error(s, LM_EARG, "resume=%s: expected a run id", argv[i].value);
            if (prepare_resume(s, *resume, force, c, o, hash, cap))
                return LM_EARG;
        }
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && (!strcmp(argv[i].key, "resume") || !strcmp(argv[i].key, "force")))
            continue;
        if (config_set(c, argv[i].key ? argv[i].key : argv[i].text, argv[i].value, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (*resume > 0) {   /* stored settings that name files act as this user: checked */
        const char *given[64];
        int n = 0;
        for (int i = 1; i < argc && n < 63; i++)
            if (argv[i].key) given[n++] = argv[i].key;
        given[n] = NULL;
        if (run_trust_settings(o->resume, c, given, err))
            return session_error(s, LM_EARG, "resume=%ld: %s", *resume, err);
    }
    if (!session_store(s) || resolve_init_from(s, c, &init[0], &init[1]))
        return LM_EARG;
    return LM_OK;
}

/* The run just started, filed into seed group `group`. */
static int file_into_group(Session *s, const char *group)
{
    char err[LM_ERR_LEN];
    RunStore *st = session_store(s);
    if (!st || runstore_group_set(st, &s->run_id, 1, group, err))
        return session_error(s, LM_EDB, "run #%ld started but not filed into group %s: %s",
                             s->run_id, group, st ? err : "no store");
    if (!s->json) session_printf(s, "run #%ld is in group %s", s->run_id, group);
    return LM_OK;
}

int cmd_train(Session *s, int argc, const LexWord *argv)
{
    char err[LM_ERR_LEN];
    const char *group = NULL;   /* group=NAME: the run is filed into seed group NAME */
    LexWord words[TRAIN_MAX_WORDS];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        int grouping = i && argv[i].key && !strcmp(argv[i].key, "group");
        if (grouping)
            group = argv[i].value;
        /* seeds=1 (the table routes larger ones to the sweep path): one run, as without */
        else if (!(i && argv[i].key && (!strcmp(argv[i].key, "seeds") ||
                                        !strcmp(argv[i].key, "repeat"))) && n < TRAIN_MAX_WORDS)
            words[n++] = argv[i];
    }
    if (n == TRAIN_MAX_WORDS)
        return session_error(s, LM_EARG, "too many words (at most %d)", TRAIN_MAX_WORDS - 1);
    if (group && !runstore_group_name_ok(group))
        return session_error(s, LM_EARG, "group=%s: a name of 1 to %d characters without "
                             "spaces or commas", group, RUNSTORE_GROUP_LEN - 1);
    argc = n;
    argv = words;
    if (session_check_idle(s, "a run"))
        return LM_ESTATE;
    Config c = s->cfg;
    TrainerOptions o = {0};
    long resume = 0;
    char want_hash[80] = "";
    long init[2] = {0, 0};
    if (train_config(s, argc, argv, &c, init, &o, &resume, want_hash, sizeof want_hash))
        return LM_EARG;
    PreparePrinter pp = {s, 0};
    RunLaunchOptions lo = {.db_path = s->db_path, .store = session_store(s),
                           .resume_id = resume, .resume_from = o.resume,
                           .resume_dir = o.run_dir, .data_hash = want_hash,
                           .init_run = init[0], .init_step = init[1],
                           .prepare_fn = print_prepare, .prepare_ud = &pp};
    RunHandle h;
    int rc = run_launch(&c, &lo, &h, err);
    if (rc)
        return session_error(s, rc, "%s%s", rc == LM_EDB && !resume ? "cannot record the run: "
                             : "", err);
    session_job_set_run(s, &h);
    session_set_prior(s, resume ? h.run_id : 0);   /* a resumed run keeps its history shown */
    Output *out = output_create(NULL);
    output_bool(out, "ok", 1);
    output_int(out, "run", h.run_id);
    output_str(out, "action", resume ? "resumed" : "started");
    output_str(out, "model", c.model);
    output_str(out, "data", trainer_dataset(h.trainer)->name);
    output_int(out, "params", trainer_param_count(h.trainer));
    output_int(out, "steps", trainer_total_steps(h.trainer));
    output_str(out, "precision", trainer_config(h.trainer)->precision);   /* what runs */
    output_str(out, "dir", h.run_dir);
    const Config *tc = trainer_config(h.trainer);   /* what trains, overrides applied: the
                                                       `using` line said the preset's */
    output_int(out, "d", tc->d);
    output_int(out, "layers", tc->layers);
    output_int(out, "bptt", tc->bptt);
    output_line(out, "run #{run} {action}: {model} d={d} layers={layers} bptt={bptt} on "
                "{data}, {params} parameters, {steps} steps in {precision}; checkpoints in "
                "{dir}");
    output_emit(s, out);
    if (h.unsigned_why[0] && !resume)
        session_printf(s, "note: run #%ld is not signed under your key (%s): `fork %ld` will "
                       "need its file settings given and `rm %ld checkpoints=true` will keep "
                       "its files, as for another user's run", h.run_id, h.unsigned_why,
                       h.run_id, h.run_id);
    return group ? file_into_group(s, group) : LM_OK;
}

/* `pause ID`, `resume ID`, `stop ID`: the id named (LM_OK with *id 0 when none is
 * given); a run this session does not train is controlled through the store. */
static int control_target(Session *s, int argc, const LexWord *argv, const char *what,
                          long *id)
{
    *id = 0;
    if (argc > 2 || (argc == 2 && (argv[1].key || (*id = session_parse_run_id(argv[1].text)) <= 0)))
        return session_error(s, LM_EARG, "%s: give one run id (`%s 12`; `jobs` lists the "
                             "running runs), or nothing for this session's run", what, what);
    return LM_OK;
}

int cmd_control(Session *s, int argc, const LexWord *argv)
{
    const char *verb = argv[0].text;   /* pause, resume or stop: the table's words */
    long id;
    if (control_target(s, argc, argv, verb, &id))
        return LM_EARG;
    return job_control(s, verb, id);
}

/* `checkpoint [RUN_ID]`: the run's owner (any process, through the store) writes a
 * checkpoint of its current weights now; this waits for the file and names it, so a live
 * run can be sampled, opened or evaluated from any shell (issue 49 item 7). */
int cmd_checkpoint(Session *s, int argc, const LexWord *argv)
{
    long id;
    if (control_target(s, argc, argv, "checkpoint", &id))
        return LM_EARG;
    if (!id && !(id = s->rec ? s->run_id : 0))
        return session_error(s, LM_EARG, "checkpoint: give the run id of a training run "
                             "(`jobs` lists them)");
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    char path[1024], err[LM_ERR_LEN];
    long step = 0;
    int rc = run_weights_request(st, id, RUN_WEIGHTS_WAIT_S, path, sizeof path, &step, err);
    if (rc)
        return session_error(s, rc, "%s", err);
    Output *o = output_create("checkpoint");
    output_int(o, "run", id);
    output_int(o, "step", step);
    output_str(o, "path", path);
    output_line(o, "run #{run} wrote a checkpoint at step {step}: {path} (`sample runs={run} "
                "which=final` or `open {run} which=final` reads it)");
    return output_emit(s, o);
}

/* One logged step's own fields: run, step and the metrics of core/base/metrics.def. */
static void step_fields(Output *o, long run, const StepMetric *m)
{
    output_int(o, "run", run);
    output_int(o, "step", m->step);
    for (int i = 0; i < STEP_METRIC_N; i++) {
        double v = step_metric_get(m, i);
        if (STEP_METRICS[i].kind == STEP_INT) output_int(o, STEP_METRICS[i].name, (long)v);
        else output_real(o, STEP_METRICS[i].name,   /* 32-bit values as set */
                         STEP_METRICS[i].digits == 9 ? runstore_f32_decimal(v) : v);
    }
}

static void print_status(Session *s, const Snapshot *sn)
{
    int paused = sn->status == TRAINER_PAUSED;   /* no time left while nothing runs */
    double left = sn->last.tokens_per_s > 0 && !trainer_is_done(sn->status) && !paused
                      ? metric_eta(sn->last.step, sn->total_steps, sn->last.elapsed,
                                   sn->cfg.time_budget)
                      : NAN;
    char el[32], eta[32];
    session_fmt_duration(el, sizeof el, sn->last.elapsed);
    session_fmt_duration(eta, sizeof eta, left);
    if (paused) snprintf(eta, sizeof eta, "- (paused)");
    Output *o = output_create("status");
    step_fields(o, sn->run_id, &sn->last);
    output_str(o, "status", recorder_status_name(sn->status));
    output_int(o, "total_steps", sn->total_steps);
    output_real(o, "best_val", sn->best_val); /* NAN (left out) before an evaluation */
    output_text_str(o, "elapsed_text", el);
    output_text_str(o, "eta", eta);
    output_line(o, "run #{run} {status}  step {step}/{total_steps}  loss {loss:%.4f}  lr "
                "{lr:%.2e}  {tokens_per_s:%.0f} tok/s  elapsed {elapsed_text}  ETA {eta}");
    if (sn->n_val) {
        output_real(o, "val_loss", sn->last_eval.loss);
        output_real(o, "val_ppl", sn->last_eval.ppl);
        output_int(o, "val_step", sn->last_eval.step);
        output_line(o, sn->last_eval.step == sn->last.step
                           ? "  val loss {val_loss:%.4f}  ppl {val_ppl:%.2f}  (best {best_val:%.4f})"
                           : "  val loss {val_loss:%.4f}  ppl {val_ppl:%.2f} at step {val_step}"
                             "  (best {best_val:%.4f})");   /* older than the last step */
    }
    if (sn->status == TRAINER_PAUSED && sn->reason[0]) {
        output_str(o, "reason", sn->reason);
        output_line(o, "  paused: {reason}");
    }
    output_emit(s, o);
}

/* The run followed from the store (session_followed_run): its status, and where it
 * comes from. 1 when one was printed. */
static int status_followed(Session *s, Snapshot *sn)
{
    long id = session_followed_run(s);
    RunStore *st = id > 0 ? session_store(s) : NULL;
    char err[LM_ERR_LEN];
    if (!st || snapshot_from_store(st, id, sn, err))
        return 0;
    print_status(s, sn);
    if (!s->json)
        session_printf(s, "  (%s from the run store%s)",
                       trainer_is_done(sn->status) ? "replayed" : "another process; followed",
                       s->attached > 0 ? ": attached" : "");
    if (s->view && s->view_run == id) {   /* the weights open loaded are not its last step's */
        Output *o = output_create("status_open");
        output_int(o, "run", id);
        output_str(o, "open", s->view_source);
        output_int(o, "open_step", s->view_step);
        output_line(o, "  open model: {open}");
        output_emit(s, o);
    }
    return 1;
}

int cmd_status(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    Snapshot sn = {0};
    if (!session_snapshot(s, &sn)) { /* the run, or a sweep's current trial */
        snapshot_free(&sn);
        Output *o = output_create("status");
        if (session_job_kind(s) == SESSION_JOB_SWEEP) { /* between trials, or before the first */
            output_str(o, "status", "sweep");
            output_int(o, "sweep", sweep_runner_id(s->sweep));
            output_line(o, "sweep #{sweep} has no trial training at the moment; `sweep status` "
                        "shows its progress");
        } else if (status_followed(s, &sn)) {
            output_destroy(o);
            snapshot_free(&sn);
            return LM_OK;
        } else {
            output_str(o, "status", "idle");
            output_line(o, "no run is training; `runs` lists the stored ones");
        }
        snapshot_free(&sn);
        return output_emit(s, o);
    }
    print_status(s, &sn);
    snapshot_free(&sn);
    return LM_OK;
}

/* Prints what appeared in the snapshot since the last call (progress for `wait`). */
typedef struct {
    long n_steps;           /* step events printed (or passed over) */
    int n_val;
    long sample_step, message_seq;
    char checkpoint[METRICS_PATH_LEN];
    char eval_progress[LM_ERR_LEN];   /* the last whole-split evaluation progress printed */
    double eval_progress_at;          /* when (sysinfo_now) */
} Printed;

/* Prints every logged step since the last call, each with its own values (the snapshot
 * keeps the latest SNAP_RECENT_STEPS whole; a printer further behind says so). */
static void print_steps(Session *s, const Snapshot *sn, Printed *p)
{
    if (sn->n_steps - p->n_steps > SNAP_RECENT_STEPS) {
        long missed = sn->n_steps - SNAP_RECENT_STEPS - p->n_steps;
        Output *o = output_create("message");
        output_int(o, "missed", missed);
        output_str(o, "text", "logged steps not printed; `export` has them all");
        output_line(o, "({missed} {text})");
        output_emit(s, o);
        p->n_steps += missed;
    }
    for (; p->n_steps < sn->n_steps; p->n_steps++) {
        const StepMetric *m = &sn->recent[p->n_steps % SNAP_RECENT_STEPS];
        Output *o = output_create("step");
        step_fields(o, sn->run_id, m);
        output_int(o, "total_steps", sn->total_steps);
        output_line(o, "step {step:%6ld}/{total_steps}  loss {loss:%.4f}  lr {lr:%.2e}  |g| "
                    "{grad_norm:%.3f}  {tokens_per_s:%6.0f} tok/s");
        output_emit(s, o);
    }
}

static void print_new(Session *s, const Snapshot *sn, Printed *p)
{
    print_steps(s, sn, p);
    if (sn->status == TRAINER_EVALUATING && sn->reason[0] &&   /* a whole split's tokens, */
        strcmp(sn->reason, p->eval_progress) &&                /* rate and ETA, every 10 s */
        sysinfo_now() - p->eval_progress_at >= 10) {
        snprintf(p->eval_progress, sizeof p->eval_progress, "%s", sn->reason);
        p->eval_progress_at = sysinfo_now();
        Output *o = output_create("eval_progress");
        output_str(o, "text", sn->reason);
        output_line(o, "       {text}");
        output_emit(s, o);
    }
    for (; p->n_val < sn->n_val; p->n_val++) {
        Output *o = output_create("eval");
        output_int(o, "step", sn->val[p->n_val].step);
        output_str(o, "split", "valid");
        output_real(o, "loss", sn->val[p->n_val].value);
        output_real(o, "ppl", exp(sn->val[p->n_val].value));
        if (p->n_val == sn->n_val - 1)   /* last_eval is the newest one's, not older ones' */
            output_int(o, "tokens", sn->last_eval.tokens);
        output_line(o, "eval   step {step}  val loss {loss:%.4f}  ppl {ppl:ppl}");
        output_emit(s, o);
    }
    if (!sn->sample_live && sn->sample_step != p->sample_step && sn->sample[0]) {
        p->sample_step = sn->sample_step;
        Output *o = output_create("sample");
        output_int(o, "step", sn->sample_step);
        output_str(o, "text", sn->sample);
        output_line(o, "sample at step {step}:\n{text}\n");
        output_emit(s, o);
    }
    if (sn->message_seq != p->message_seq) {
        p->message_seq = sn->message_seq;
        Output *o = output_create("message");
        output_str(o, "text", sn->message);
        output_line(o, "note: {text}");
        output_emit(s, o);
    }
    if (strcmp(sn->checkpoint, p->checkpoint)) {
        snprintf(p->checkpoint, sizeof p->checkpoint, "%s", sn->checkpoint);
        if (!s->json) /* text only: JSON readers get the path with the end */
            session_printf(s, "checkpoint %s", sn->checkpoint);
    }
}

/* The run's end: status, validation, speed, checkpoint. */
static void print_end(Session *s, const Snapshot *sn)
{
    char el[32];
    session_fmt_duration(el, sizeof el, sn->last.elapsed);
    Output *o = output_create("end");
    output_int(o, "run", s->run_id);
    output_str(o, "status", recorder_status_name(sn->status));
    output_str(o, "reason", sn->reason);
    output_int(o, "steps", sn->last.step);
    output_real(o, "elapsed", sn->last.elapsed);
    /* best over the whole run, from the run's own record: after `train resume=ID` the
     * snapshot has seen only the resumed part */
    double best = sn->best_val;
    RunStore *st = session_store(s);
    RunRow row;
    char err[LM_ERR_LEN];
    if (st && runstore_get(st, s->run_id, &row, err) == LM_OK) {
        if (isfinite(row.best_val) && !(row.best_val > best))
            best = row.best_val;
        runstore_row_free(&row);
    }
    output_real(o, "best_val", best); /* NAN (left out) without evaluations */
    output_line(o, "run #{run} {status}: {reason}");
    if (sn->n_val) {
        output_real(o, "final_val", sn->last_eval.loss);
        output_real(o, "final_ppl", sn->last_eval.ppl);
        output_real(o, "best_ppl", exp(best));
        output_int(o, "final_val_step", sn->last_eval.step);
        if (sn->last_eval.step == sn->last.step)
            output_line(o, "  final val loss {final_val:%.4f} (ppl {final_ppl:ppl}), best "
                        "{best_val:%.4f} (ppl {best_ppl:ppl})");
        else   /* stopped between evaluations: the last one is older than the weights */
            output_line(o, "  last val loss {final_val:%.4f} (ppl {final_ppl:ppl}) at step "
                        "{final_val_step}, before the run's last step {steps} (no final "
                        "evaluation), best {best_val:%.4f} (ppl {best_ppl:ppl})");
        if (!isnan(sn->last_eval.bpc)) {
            output_real(o, "bpc", sn->last_eval.bpc);
            output_line(o, "  bits per character {bpc:%.4f}");
        }
    }
    /* a fork states its own work: the steps, seconds and tokens since its fork point (a
       resume is the same run, whose totals carry on) */
    const StepMetric *from = sn->fork_of > 0 ? &sn->origin : &(StepMetric){0};
    double secs = sn->last.elapsed - from->elapsed;
    output_real(o, "tokens_per_s", secs > 0 ? (double)(sn->last.tokens - from->tokens) / secs : 0);
    if (sn->fork_of > 0) {
        session_fmt_duration(el, sizeof el, secs);
        output_real(o, "elapsed", secs);
        output_int(o, "trained_steps", sn->last.step - from->step);
        output_int(o, "fork_of", sn->fork_of);
        output_int(o, "fork_step", from->step);
        output_line(o, sn->checkpoint[0]
                    ? "  {trained_steps} steps (#{fork_of}@{fork_step} to {steps}) in "
                      "{elapsed_text} ({elapsed:%.1f} s of training), {tokens_per_s:%.0f} "
                      "tokens/s; checkpoint {checkpoint}"
                    : "  {trained_steps} steps (#{fork_of}@{fork_step} to {steps}) in "
                      "{elapsed_text} ({elapsed:%.1f} s of training), {tokens_per_s:%.0f} "
                      "tokens/s; no checkpoint written");
    } else {
        output_line(o, sn->checkpoint[0]
                    ? "  {steps} steps in {elapsed_text} ({elapsed:%.1f} s of training), "
                      "{tokens_per_s:%.0f} tokens/s; checkpoint {checkpoint}"
                    : "  {steps} steps in {elapsed_text} ({elapsed:%.1f} s of training), "
                      "{tokens_per_s:%.0f} tokens/s; no checkpoint written");
    }
    output_text_str(o, "elapsed_text", el);
    if (sn->checkpoint[0])   /* a run that diverged or failed before its first checkpoint
                                has none to name */
        output_str(o, "checkpoint", sn->checkpoint);
    output_emit(s, o);
}

int cmd_wait(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    SessionJobKind k = s->rec ? SESSION_JOB_RUN : job_need(s, "wait");
    if (k == SESSION_JOB_SWEEP)
        return job_sweep_wait(s, NULL);
    if (k == SESSION_JOB_NONE)
        return LM_ESTATE;
    Printed p = {0};
    Snapshot sn = {0};
    s->interrupt = 0;
    for (;;) {
        int done = recorder_done(s->rec);
        recorder_snapshot(s->rec, &sn);
        print_new(s, &sn, &p);
        if (done)
            break;
        if (s->interrupt) {
            if (s->terminating)   /* SIGTERM/SIGHUP: the session ends and stops the run */
                session_printf(s, "signal received: stopping run #%ld cleanly (a second signal "
                               "exits at once)", s->run_id);
            else
                session_printf(s, "(stopped waiting; run #%ld continues — `stop` ends it)",
                               s->run_id);
            snapshot_free(&sn);
            return LM_ECANCEL;
        }
        usleep(100000);
    }
    int status = sn.status;
    print_end(s, &sn);
    long unrecorded = sn.unrecorded;
    if (unrecorded)   /* the training ended, but the store does not have all of it */
        session_error(s, LM_EIO, "%s", sn.unrecorded_why);
    snapshot_free(&sn);
    if (unrecorded)
        return LM_EIO;
    return status == TRAINER_FINISHED || status == TRAINER_STOPPED ? LM_OK : LM_EDIVERGED;
}
