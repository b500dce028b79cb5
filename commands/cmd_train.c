/* cmd_train.c — starting and steering a run: train (new or resumed), pause, resume,
 * stop, status, wait. A run is a Trainer (training thread) plus a Recorder (its events
 * to the run store and the snapshot); the prompt returns at once. */
#include "session.h"

#include "err.h"
#include "repl.h"
#include "run_launch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* resume=ID: the run's config, its newest checkpoint, and a data identity check. */
static int prepare_resume(Session *s, long id, Config *c, TrainerOptions *o, char *hash,
                          size_t cap)
{
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    RunRow row;
    char err[LM_ERR_LEN];
    if (runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "%s", err);
    int rc = LM_OK;
    if (!strcmp(row.status, "running") || !strcmp(row.status, "paused"))
        rc = session_error(s, LM_ESTATE, "run #%ld is %s in process %ld; stop it there first",
                           id, row.status, row.pid);
    else if (!strcmp(row.status, "finished"))
        rc = session_error(s, LM_ESTATE, "run #%ld has finished; to train further, start a "
                           "new run with init_from=%ld", id, id);
    config_defaults(c);
    if (!rc && config_from_text(c, row.config, err))
        rc = session_error(s, LM_EFORMAT, "run #%ld: stored configuration unreadable: %s", id,
                           err);
    if (!rc && checkpoint_find(row.checkpoint_dir, "last", o->resume, sizeof o->resume))
        rc = session_error(s, LM_EIO, "run #%ld has no checkpoint in %s to resume from", id,
                           row.checkpoint_dir);
    snprintf(hash, cap, "%s", row.data_hash);
    snprintf(o->run_dir, sizeof o->run_dir, "%s", row.checkpoint_dir);
    runstore_row_free(&row);
    return rc;
}

/* init_from=RUN_ID becomes that run's best checkpoint path. */
static int resolve_init_from(Session *s, Config *c)
{
    long id = session_parse_run_id(c->init_from);
    if (!c->init_from[0] || id < 0)
        return LM_OK;
    RunStore *st = session_store(s);
    RunRow row;
    char err[LM_ERR_LEN], path[1100];
    if (!st || runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "init_from=%s: %s", c->init_from, st ? err : "no store");
    int rc = checkpoint_find(row.checkpoint_dir, "best", path, sizeof path);
    runstore_row_free(&row);
    if (rc)
        return session_error(s, LM_EIO, "init_from=%ld: the run has no checkpoint", id);
    snprintf(c->init_from, sizeof c->init_from, "%s", path);
    return LM_OK;
}

/* Refuses while the session trains something. */
static int check_idle(Session *s)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_RUN)
        return session_error(s, LM_ESTATE, "run #%ld is still training: `stop` it (or `wait`) "
                             "before starting another", s->run_id);
    if (k == SESSION_JOB_SWEEP)
        return session_error(s, LM_ESTATE, "sweep #%ld is training its trials: `stop` it (or "
                             "`wait`) before starting a run", sweep_runner_id(s->sweep));
    return LM_OK;
}

/* The run's configuration: the session's (or a resumed run's stored one) with the
 * command's key=value words applied. */
static int train_config(Session *s, int argc, const LexWord *argv, Config *c,
                        TrainerOptions *o, long *resume, char *hash, size_t cap)
{
    char err[LM_ERR_LEN];
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "resume")) {
            *resume = session_parse_run_id(argv[i].value);
            if (*resume < 0)
                return session_error(s, LM_EARG, "resume=%s: expected a run id", argv[i].value);
            if (prepare_resume(s, *resume, c, o, hash, cap))
                return LM_EARG;
        }
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && !strcmp(argv[i].key, "resume"))
            continue;
        if (config_set(c, argv[i].key ? argv[i].key : argv[i].text, argv[i].value, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (!session_store(s) || resolve_init_from(s, c))
        return LM_EARG;
    return LM_OK;
}

int cmd_train(Session *s, int argc, const LexWord *argv)
{
    char err[LM_ERR_LEN];
    if (check_idle(s))
        return LM_ESTATE;
    Config c = s->cfg;
    TrainerOptions o = {0};
    long resume = 0;
    char want_hash[80] = "";
    if (train_config(s, argc, argv, &c, &o, &resume, want_hash, sizeof want_hash))
        return LM_EARG;
    RunLaunchOptions lo = {.db_path = s->db_path, .store = session_store(s),
                           .resume_id = resume, .resume_from = o.resume,
                           .resume_dir = o.run_dir, .data_hash = want_hash};
    RunHandle h;
    int rc = run_launch(&c, &lo, &h, err);
    if (rc)
        return session_error(s, rc, "%s%s", rc == LM_EDB && !resume ? "cannot record the run: "
                             : "", err);
    s->trainer = h.trainer;
    s->rec = h.rec;
    s->run_id = h.run_id;
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:I s:s s:I s:I s:s}", "ok", 1, "run",
                                       (json_int_t)h.run_id, "model", c.model, "params",
                                       (json_int_t)trainer_param_count(h.trainer), "steps",
                                       (json_int_t)trainer_total_steps(h.trainer), "dir",
                                       h.run_dir));
    else
        session_printf(s, "run #%ld %s: %s on %s, %ld parameters, %ld steps; checkpoints in %s",
                       h.run_id, resume ? "resumed" : "started", c.model,
                       trainer_dataset(h.trainer)->name, trainer_param_count(h.trainer),
                       trainer_total_steps(h.trainer), h.run_dir);
    return LM_OK;
}

/* What `pause`, `resume`, `stop` and `wait` act on: the run or the sweep; an error
 * naming the command when nothing trains. */
static SessionJobKind need_job(Session *s, const char *what)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_NONE)
        session_error(s, LM_ESTATE, "%s: no run or sweep is training (start one with `train` "
                      "or `sweep`)", what);
    return k;
}

int cmd_pause(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    SessionJobKind k = need_job(s, "pause");
    if (k == SESSION_JOB_SWEEP)
        return cmd_sweep_control(s, "pause");
    if (k == SESSION_JOB_NONE)
        return LM_ESTATE;
    session_job_pause(s, 1);
    session_printf(s, "run #%ld: pausing after the current step", s->run_id);
    return LM_OK;
}

int cmd_resume(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    SessionJobKind k = need_job(s, "resume");
    if (k == SESSION_JOB_SWEEP)
        return cmd_sweep_control(s, "resume");
    if (k == SESSION_JOB_NONE)
        return LM_ESTATE;
    session_job_pause(s, 0);
    session_printf(s, "run #%ld: resumed", s->run_id);
    return LM_OK;
}

int cmd_stop(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    SessionJobKind k = need_job(s, "stop");
    if (k == SESSION_JOB_SWEEP)
        return cmd_sweep_control(s, "stop");
    if (k == SESSION_JOB_NONE)
        return LM_ESTATE;
    session_job_stop(s);
    Snapshot snap = {0};
    recorder_snapshot(s->rec, &snap);
    session_printf(s, "run #%ld %s at step %ld (%s)", s->run_id,
                   recorder_status_name(snap.status), snap.last.step, snap.reason);
    snapshot_free(&snap);
    session_job_reap(s);
    return LM_OK;
}

static json_t *step_json(const Snapshot *sn)
{
    return json_pack("{s:s s:I s:I s:I s:f s:f s:f s:f s:f s:f}", "event", "step", "run",
                     (json_int_t)sn->run_id, "step", (json_int_t)sn->last.step, "tokens",
                     (json_int_t)sn->last.tokens, "loss", sn->last.loss, "lr", sn->last.lr,
                     "grad_norm", sn->last.grad_norm, "tokens_per_s", sn->last.tokens_per_s,
                     "elapsed", sn->last.elapsed, "epoch", sn->last.epoch);
}

static void print_status(Session *s, const Snapshot *sn)
{
    double left = sn->last.tokens_per_s > 0 && sn->last.step > 0
                      ? sn->last.elapsed / sn->last.step * (sn->total_steps - sn->last.step)
                      : NAN;
    char el[32], eta[32];
    session_fmt_duration(el, sizeof el, sn->last.elapsed);
    session_fmt_duration(eta, sizeof eta, left);
    if (s->json) {
        json_t *o = step_json(sn);
        json_object_set_new(o, "event", json_string("status"));
        json_object_set_new(o, "status", json_string(recorder_status_name(sn->status)));
        json_object_set_new(o, "total_steps", json_integer(sn->total_steps));
        if (sn->status == TRAINER_PAUSED && sn->reason[0])
            json_object_set_new(o, "reason", json_string(sn->reason));
        if (!isnan(sn->best_val))
            json_object_set_new(o, "best_val", json_real(sn->best_val));
        session_emit_json(s, o);
        return;
    }
    session_printf(s, "run #%ld %s  step %ld/%ld  loss %.4f  lr %.2e  %.0f tok/s  elapsed %s  "
                   "ETA %s", sn->run_id, recorder_status_name(sn->status), sn->last.step,
                   sn->total_steps, sn->last.loss, sn->last.lr, sn->last.tokens_per_s, el, eta);
    if (sn->n_val)
        session_printf(s, "  val loss %.4f  ppl %.2f  (best %.4f)", sn->last_eval.loss,
                       sn->last_eval.ppl, sn->best_val);
    if (sn->status == TRAINER_PAUSED && sn->reason[0])
        session_printf(s, "  paused: %s", sn->reason);
}

int cmd_status(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    session_job_reap(s);
    Snapshot sn = {0};
    if (!session_snapshot(s, &sn)) { /* the run, or a sweep's current trial */
        if (s->json)
            session_emit_json(s, json_pack("{s:s s:s}", "event", "status", "status", "idle"));
        else
            session_printf(s, "no run is training; `runs` lists the stored ones");
        snapshot_free(&sn);
        return LM_OK;
    }
    print_status(s, &sn);
    snapshot_free(&sn);
    return LM_OK;
}

/* Prints what appeared in the snapshot since the last call (progress for `wait`). */
typedef struct {
    long loss_step, n_loss; /* the last loss point printed (by step: the series may be
                               halved on long runs), and how many were printed */
    int n_val;
    long sample_step, message_seq;
    char checkpoint[METRICS_PATH_LEN];
} Printed;

static void print_new(Session *s, const Snapshot *sn, Printed *p)
{
    int first = sn->n_loss;
    while (first > 0 && sn->loss[first - 1].step > p->loss_step)
        first--;
    for (int i = first; i < sn->n_loss; i++, p->n_loss++) {
        const SeriesPoint *pt = &sn->loss[i];
        p->loss_step = pt->step;
        if (s->json) {
            json_t *o = step_json(sn);
            json_object_set_new(o, "step", json_integer(pt->step));
            json_object_set_new(o, "loss", json_real(pt->value));
            session_emit_json(s, o);
        } else if (i + 1 == sn->n_loss || p->n_loss % 10 == 9) {
            session_printf(s, "step %6ld/%ld  loss %.4f  lr %.2e  |g| %.3f  %6.0f tok/s", pt->step,
                           sn->total_steps, pt->value, sn->last.lr, sn->last.grad_norm,
                           sn->last.tokens_per_s);
        }
    }
    for (; p->n_val < sn->n_val; p->n_val++) {
        const EvalMetric *e = &sn->last_eval;
        if (s->json)
            session_emit_json(s, json_pack("{s:s s:I s:s s:f s:f s:I}", "event", "eval", "step",
                                           (json_int_t)sn->val[p->n_val].step, "split", "valid",
                                           "loss", sn->val[p->n_val].value, "ppl",
                                           exp(sn->val[p->n_val].value), "tokens",
                                           (json_int_t)e->tokens));
        else
            session_printf(s, "eval   step %ld  val loss %.4f  ppl %.3f", sn->val[p->n_val].step,
                           sn->val[p->n_val].value, exp(sn->val[p->n_val].value));
    }
    if (!sn->sample_live && sn->sample_step != p->sample_step && sn->sample[0]) {
        p->sample_step = sn->sample_step;
        if (s->json)
            session_emit_json(s, json_pack("{s:s s:I s:s}", "event", "sample", "step",
                                           (json_int_t)sn->sample_step, "text", sn->sample));
        else
            session_printf(s, "sample at step %ld:\n%s\n", sn->sample_step, sn->sample);
    }
    if (sn->message_seq != p->message_seq) {
        p->message_seq = sn->message_seq;
        if (s->json)
            session_emit_json(s, json_pack("{s:s s:s}", "event", "message", "text", sn->message));
        else
            session_printf(s, "note: %s", sn->message);
    }
    if (strcmp(sn->checkpoint, p->checkpoint)) {
        snprintf(p->checkpoint, sizeof p->checkpoint, "%s", sn->checkpoint);
        if (!s->json)
            session_printf(s, "checkpoint %s", sn->checkpoint);
    }
}

int cmd_wait(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    SessionJobKind k = s->rec ? SESSION_JOB_RUN : need_job(s, "wait");
    if (k == SESSION_JOB_SWEEP)
        return cmd_sweep_wait(s);
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
            if (repl_terminating())   /* SIGTERM/SIGHUP: the session ends and stops the run */
                session_printf(s, "signal received: stopping run #%ld cleanly", s->run_id);
            else
                session_printf(s, "(stopped waiting; run #%ld continues — `stop` ends it)",
                               s->run_id);
            snapshot_free(&sn);
            return LM_ECANCEL;
        }
        usleep(100000);
    }
    int status = sn.status;
    if (s->json) {
        json_t *o = json_pack("{s:s s:I s:s s:s s:I s:f}", "event", "end", "run",
                              (json_int_t)s->run_id, "status", recorder_status_name(status),
                              "reason", sn.reason, "steps", (json_int_t)sn.last.step,
                              "elapsed", sn.last.elapsed);
        if (!isnan(sn.best_val))
            json_object_set_new(o, "best_val", json_real(sn.best_val));
        if (sn.n_val)
            json_object_set_new(o, "final_val", json_real(sn.last_eval.loss));
        json_object_set_new(o, "tokens_per_s", json_real(sn.last.elapsed > 0
                                                   ? sn.last.tokens / sn.last.elapsed : 0));
        json_object_set_new(o, "checkpoint", json_string(sn.checkpoint));
        session_emit_json(s, o);
    } else {
        char el[32];
        session_fmt_duration(el, sizeof el, sn.last.elapsed);
        session_printf(s, "run #%ld %s: %s", s->run_id, recorder_status_name(status), sn.reason);
        if (sn.n_val)
            session_printf(s, "  final val loss %.4f (ppl %.3f%s), best %.4f (ppl %.3f)",
                           sn.last_eval.loss, sn.last_eval.ppl, "", sn.best_val, exp(sn.best_val));
        if (!isnan(sn.last_eval.bpc) && sn.n_val)
            session_printf(s, "  bits per character %.4f", sn.last_eval.bpc);
        session_printf(s, "  %ld steps in %s (%.1f s of training), %.0f tokens/s; checkpoint %s",
                       sn.last.step, el, sn.last.elapsed,
                       sn.last.elapsed > 0 ? sn.last.tokens / sn.last.elapsed : 0, sn.checkpoint);
    }
    snapshot_free(&sn);
    session_job_reap(s);
    return status == TRAINER_FINISHED || status == TRAINER_STOPPED ? LM_OK : LM_EDIVERGED;
}
