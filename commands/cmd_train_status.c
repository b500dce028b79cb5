/* cmd_train_status.c — watching the session's run (or the one it follows from the
 * store): `status` (the latest step, evaluation and ETA) and `wait` (every step,
 * evaluation, sample and checkpoint as they arrive, then the run's end: validation,
 * speed, checkpoint). Not starting or steering a run (cmd_train.c); a sweep's wait is
 * job.c's. */
#include "session.h"
#include "cmd_train.h"
#include "job.h"

#include "err.h"
#include "output.h"
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    double secs, speed;   /* its own seconds (a fork's since its fork point); an ended
                             run's speed is its own mean, as its end said, not its last
                             logged window's */
    snapshot_own_work(sn, &secs, &speed);
    session_fmt_duration(el, sizeof el, secs);
    session_fmt_duration(eta, sizeof eta, left);
    if (paused) snprintf(eta, sizeof eta, "- (paused)");
    Output *o = output_create("status");
    step_fields(o, sn->run_id, &sn->last);
    output_str(o, "status", snapshot_status_name(sn));
    output_int(o, "total_steps", sn->total_steps);
    output_real(o, "best_val", sn->best_val); /* NAN (left out) before an evaluation */
    output_text_str(o, "elapsed_text", el);
    output_text_str(o, "eta", eta);
    output_real(o, "run_elapsed", secs);
    output_real(o, "speed", trainer_is_done(sn->status) ? speed : sn->last.tokens_per_s);
    output_line(o, "run #{run} {status}  step {step}/{total_steps}  loss {loss:%.4f}  lr "
                "{lr:%.2e}  {speed:%.0f} tok/s  elapsed {elapsed_text}  ETA {eta}");
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
    for (long k = p->message_seq + 1; k <= sn->message_seq; k++) {   /* each since the last */
        const char *m = snapshot_message(sn, k);
        if (!m)
            continue;
        Output *o = output_create("message");
        output_str(o, "text", m);
        output_line(o, "note: {text}");
        output_emit(s, o);
    }
    p->message_seq = sn->message_seq;
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
    output_str(o, "status", snapshot_status_name(sn));
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
    double secs, speed;
    snapshot_own_work(sn, &secs, &speed);
    output_real(o, "tokens_per_s", speed);
    if (sn->fork_of > 0) {
        session_fmt_duration(el, sizeof el, secs);
        output_real(o, "elapsed", secs);
        output_int(o, "trained_steps", sn->last.step - sn->origin.step);
        output_int(o, "fork_of", sn->fork_of);
        output_int(o, "fork_step", sn->origin.step);
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
    int signalled = 0;
    s->interrupt = 0;
    for (;;) {
        int done = recorder_done(s->rec);
        recorder_snapshot(s->rec, &sn);
        print_new(s, &sn, &p);
        if (done)
            break;
        if (s->interrupt && s->terminating && s->trainer) {
            /* SIGTERM/SIGHUP: the run is stopped here and waited for, so that its end line
             * (the step, the checkpoint, the reason) is the last the output shows, as for
             * any other end; the session's shutdown then finds it stopped */
            session_printf(s, "signal received: stopping run #%ld cleanly (a second signal "
                           "exits at once)", s->run_id);
            trainer_stop_because(s->trainer, SESSION_TERM_REASON);
            s->interrupt = 0;
            signalled = 1;
        } else if (s->interrupt) {
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
    if (signalled)   /* the command did not run its course: exit status 1, as before */
        return LM_ECANCEL;
    return status == TRAINER_FINISHED || status == TRAINER_STOPPED ? LM_OK : LM_EDIVERGED;
}
