/* cmd_train.c — starting and steering a run: train (new or resumed), pause, resume,
 * stop, status, wait. A run is a Trainer (training thread) plus a Recorder (its events
 * to the run store and the snapshot); the prompt returns at once. */
#include "session.h"

#include "cmd_sweep.h"
#include "dist.h"
#include "err.h"
#include "repl.h"
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Frees a finished run's trainer and recorder, keeping its final weights as the model
 * `sample`, `eval` and `coeffs` use. */
static void reap(Session *s)
{
    if (s->trainer && trainer_is_done(trainer_status(s->trainer))) {
        trainer_join(s->trainer);
        session_prepare_view(s);
        snprintf(s->view_source, sizeof s->view_source, "run #%ld (final weights)", s->run_id);
        recorder_destroy(s->rec);
        trainer_destroy(s->trainer);
        s->rec = NULL;
        s->trainer = NULL;
    }
}

static int active(Session *s)
{
    reap(s);
    return s->trainer != NULL;
}

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

static int record_run(Session *s, Trainer *t, long *id, char *err)
{
    const Dataset *ds = trainer_dataset(t);
    const Config *c = trainer_config(t);
    char *cfg = config_to_text(c), hash[32], thash[32], machine[256], name[96];
    snprintf(hash, sizeof hash, "%016llx", ds->hash);
    snprintf(thash, sizeof thash, "%016llx", tokenizer_hash(ds->tok));
    sysinfo_describe(machine, sizeof machine);
    dist_append_machine(machine, sizeof machine);   /* under mpirun: the ranks and hosts */
    if (c->name[0])
        snprintf(name, sizeof name, "%s", c->name);
    else
        snprintf(name, sizeof name, "%s-%s", c->model, ds->name);
    RunInfo info = {.name = name, .config = cfg, .model = c->model, .data_name = ds->name,
                    .data_hash = hash, .tokenizer = c->tokenizer, .tokenizer_hash = thash,
                    .machine = machine, .git_rev = sysinfo_git_rev(),
                    .params = trainer_param_count(t)};
    int rc = runstore_run_create(session_store(s), &info, id, err);
    free(cfg);
    return rc;
}

int cmd_train(Session *s, int argc, const LexWord *argv)
{
    char err[LM_ERR_LEN];
    if (active(s))
        return session_error(s, LM_ESTATE, "run #%ld is still training: `stop` it (or `wait`) "
                             "before starting another", s->run_id);
    SweepRunner *sw = cmd_sweep_runner();
    if (sw && !sweep_runner_done(sw))
        return session_error(s, LM_ESTATE, "sweep #%ld is training its trials: `sweep stop` "
                             "(or `sweep wait`) before starting a run", sweep_runner_id(sw));
    Config c = s->cfg;
    TrainerOptions o = {0};
    long resume = 0;
    char want_hash[80] = "";
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "resume")) {
            resume = session_parse_run_id(argv[i].value);
            if (resume < 0)
                return session_error(s, LM_EARG, "resume=%s: expected a run id", argv[i].value);
            if (prepare_resume(s, resume, &c, &o, want_hash, sizeof want_hash))
                return LM_EARG;
        }
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && !strcmp(argv[i].key, "resume"))
            continue;
        if (config_set(&c, argv[i].key ? argv[i].key : argv[i].text, argv[i].value, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (!session_store(s) || resolve_init_from(s, &c))
        return LM_EARG;
    Trainer *t = trainer_create(&c, &o, err);
    if (!t)
        return session_error(s, LM_EARG, "%s", err);
    long id = resume;
    if (resume) {
        char have[32];
        snprintf(have, sizeof have, "%016llx", trainer_dataset(t)->hash);
        if (want_hash[0] && strcmp(have, want_hash)) {
            trainer_destroy(t);
            return session_error(s, LM_EFORMAT, "run #%ld was trained on data with hash %s, "
                                 "but %s now hashes to %s: the dataset changed since the run "
                                 "started", resume, want_hash, c.data, have);
        }
        if (runstore_run_claim(session_store(s), resume, err)) {
            trainer_destroy(t);
            return session_error(s, LM_EDB, "%s", err);
        }
    } else {
        if (record_run(s, t, &id, err)) {
            trainer_destroy(t);
            return session_error(s, LM_EDB, "cannot record the run: %s", err);
        }
        snprintf(o.run_dir, sizeof o.run_dir, "%.400s/run-%ld", c.runs_dir, id);
        mkdir(c.runs_dir, 0777);
        runstore_set_checkpoint_dir(session_store(s), id, o.run_dir, err);
    }
    trainer_set_run(t, id, o.run_dir);
    char name[64];
    snprintf(name, sizeof name, "%s", c.name[0] ? c.name : c.model);
    if (trainer_start(t, err)) {
        trainer_destroy(t);
        return session_error(s, LM_ENOMEM, "%s", err);
    }
    /* the trainer's events queue up until the recorder drains them */
    Recorder *r = recorder_create(t, s->db_path, id, name, NULL, NULL, err);
    if (!r) {
        trainer_destroy(t); /* stops and joins */
        return session_error(s, LM_ENOMEM, "%s", err);
    }
    s->trainer = t;
    s->rec = r;
    s->run_id = id;
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:I s:s s:I s:I s:s}", "ok", 1, "run",
                                       (json_int_t)id, "model", c.model, "params",
                                       (json_int_t)trainer_param_count(t), "steps",
                                       (json_int_t)trainer_total_steps(t), "dir", o.run_dir));
    else
        session_printf(s, "run #%ld %s: %s on %s, %ld parameters, %ld steps; checkpoints in %s",
                       id, resume ? "resumed" : "started", c.model, trainer_dataset(t)->name,
                       trainer_param_count(t), trainer_total_steps(t), o.run_dir);
    return LM_OK;
}

static int need_run(Session *s, const char *what)
{
    if (active(s))
        return LM_OK;
    return session_error(s, LM_ESTATE, "%s: no run is training (start one with `train`)", what);
}

int cmd_pause(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    if (need_run(s, "pause"))
        return LM_ESTATE;
    trainer_pause(s->trainer);
    session_printf(s, "run #%ld: pausing after the current step", s->run_id);
    return LM_OK;
}

int cmd_resume(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    if (need_run(s, "resume"))
        return LM_ESTATE;
    trainer_resume(s->trainer);
    session_printf(s, "run #%ld: resumed", s->run_id);
    return LM_OK;
}

int cmd_stop(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    if (need_run(s, "stop"))
        return LM_ESTATE;
    trainer_stop(s->trainer);
    trainer_join(s->trainer);
    while (!recorder_done(s->rec))
        usleep(20000);
    Snapshot snap = {0};
    recorder_snapshot(s->rec, &snap);
    session_printf(s, "run #%ld %s at step %ld (%s)", s->run_id,
                   recorder_status_name(snap.status), snap.last.step, snap.reason);
    snapshot_free(&snap);
    reap(s);
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
                   "ETA %s%s", sn->run_id, recorder_status_name(sn->status), sn->last.step,
                   sn->total_steps, sn->last.loss, sn->last.lr, sn->last.tokens_per_s, el, eta,
                   isnan(sn->best_val) ? "" : "");
    if (sn->n_val)
        session_printf(s, "  val loss %.4f  ppl %.2f%s  (best %.4f)", sn->last_eval.loss,
                       sn->last_eval.ppl, "", sn->best_val);
    if (sn->status == TRAINER_PAUSED && sn->reason[0])
        session_printf(s, "  paused: %s", sn->reason);
}

int cmd_status(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    reap(s);
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
    if (!s->rec)
        return session_error(s, LM_ESTATE, "wait: no run is training");
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
    reap(s);
    return status == TRAINER_FINISHED || status == TRAINER_STOPPED ? LM_OK : LM_EDIVERGED;
}
