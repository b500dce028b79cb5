/* job.c — the one control path for a job (see job.h): the session's run and sweep acted
 * on directly, another process's run (or a parallel sweep's trial, owned by its worker
 * process) through a request row in the store that its owner's recorder reads at its own
 * pace and answers; the command waits about 2 s for the answer and says truthfully when
 * there is none yet. The run's own end and progress printing are `wait`'s (cmd_train.c). */
#include "job.h"

#include "checkpoint.h"
#include "output.h"
#include "runrecord.h"
#include "runstore_control.h"
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- another process's run: a request through the store ---- */

#define CONTROL_WAIT_SECONDS 2.0   /* how long a request waits for its answer */

/* Why run r cannot take verb (ended, or its owner is gone), as an error; LM_OK when it
 * can. */
static int control_refusal(Session *s, RunStore *st, const RunRow *r, const char *verb)
{
    if (strcmp(r->status, "running") && strcmp(r->status, "paused"))
        return session_error(s, LM_ESTATE, "%s %ld: run #%ld is not training (it is %s%s%s): "
                             "nothing to %s", verb, r->id, r->id, r->status,
                             r->reason[0] ? ": " : "", r->reason, verb);
    if (!runstore_run_live(st, r)) {
        double age = 0;
        runstore_run_stale(st, r, 0, &age);
        return session_error(s, LM_ESTATE, "%s %ld: run #%ld's owner (pid %ld on %s) is gone%s: "
                             "the run is not training (`train resume=%ld` continues it from "
                             "its last checkpoint)", verb, r->id, r->id, r->pid, r->host,
                             isfinite(age) && strcmp(r->host, "") ? " or silent" : "", r->id);
    }
    return LM_OK;
}

/* Waits (bounded) for request id's answer; 1 when answered (*c filled). */
static int control_wait(Session *s, RunStore *st, long id, RunControl *c)
{
    char err[LM_ERR_LEN];
    double until = sysinfo_wall() + CONTROL_WAIT_SECONDS;
    while (!s->interrupt) {
        if (runstore_control_get(st, id, c, err) == LM_OK && c->acknowledged_at > 0)
            return 1;
        if (sysinfo_wall() >= until)
            return 0;
        usleep(100000);
    }
    return 0;
}

static int job_control_remote(Session *s, long id, const char *verb)
{
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    RunRow r;
    char err[LM_ERR_LEN];
    if (runstore_get(st, id, &r, err)) return session_error(s, LM_EARG, "%s %ld: %s", verb, id, err);
    int rc = control_refusal(s, st, &r, verb);
    long req = 0;
    if (!rc && (rc = runstore_control_request(st, id, verb, &req, err)))
        session_error(s, rc, "%s %ld: %s", verb, id, err);
    RunControl c;
    if (!rc) {
        Output *o = output_create(verb);
        output_int(o, "run", id);
        output_int(o, "request", req);
        output_int(o, "owner_pid", r.pid);
        output_str(o, "owner_host", r.host);
        if (control_wait(s, st, req, &c)) {
            output_bool(o, "answered", 1);
            output_str(o, "reply", c.reply);
            output_line(o, "{reply}");
            rc = output_emit(s, o);
        } else {
            output_bool(o, "answered", 0);
            output_line(o, "requested; run #{run}'s owner (pid {owner_pid} on {owner_host}) "
                        "has not answered yet (request {request}; it acts when it next reads "
                        "the store; if that owner ends first, the request expires)");
            output_emit(s, o);
            rc = LM_EPENDING;
        }
    }
    runstore_row_free(&r);
    return rc;
}

/* 1 (reported) when nothing trains here but the screen follows a live run of another
 * process: `what` without an id does not reach it (`what ID` does, through the store). */
static int foreign_job(Session *s, const char *what)
{
    long id = session_followed_run(s);
    RunStore *st = id > 0 ? session_store(s) : NULL;
    RunRow r;
    char err[LM_ERR_LEN];
    if (!st || runstore_get(st, id, &r, err))
        return 0;
    int live = runstore_run_live(st, &r);
    char how[96];   /* pause, resume and stop reach it through the store by its id */
    if (!strcmp(what, "wait"))
        snprintf(how, sizeof how, "`watch` follows it here");
    else
        snprintf(how, sizeof how, "`%s %ld` does it from here, through the run store", what, id);
    if (live)
        session_error(s, LM_ESTATE, "%s: run #%ld on screen is trained by another process (pid "
                      "%ld on %s), not by this session: %s", what, id, r.pid,
                      r.host[0] ? r.host : "this host", how);
    runstore_row_free(&r);
    return live;
}

/* What `pause`, `resume`, `stop` and `wait` act on: the run or the sweep; an error
 * naming the command when nothing trains (saying so when the run on screen is another
 * process's). */
SessionJobKind job_need(Session *s, const char *what)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_NONE && !foreign_job(s, what))
        session_error(s, LM_ESTATE, "%s: no run or sweep is training (start one with `train` "
                      "or `sweep`)", what);
    return k;
}

/* 1 when id names a run other than the one this session trains (act through the store). */
static int is_remote(Session *s, long id)
{
    return id > 0 && !(session_job_kind(s) == SESSION_JOB_RUN && s->run_id == id);
}

/* ---- the session's own run ---- */

/* `pause`/`resume` (after the current step) or `stop` (waits for the run to end after its
 * step with a checkpoint) of the run this session trains; the dispatcher reaps it after
 * `stop` (CMD_STEP_AFTER). */
static int control_own_run(Session *s, const char *verb)
{
    if (strcmp(verb, "stop")) {
        int pause = !strcmp(verb, "pause");
        session_job_pause(s, pause);
        Output *o = output_create(verb);
        output_int(o, "run", s->run_id);
        output_line(o, pause ? "run #{run}: pausing after the current step" : "run #{run}: resumed");
        return output_emit(s, o);
    }
    session_job_stop(s);
    Snapshot snap = {0};
    recorder_snapshot(s->rec, &snap);
    Output *o = output_create("stop");
    output_int(o, "run", s->run_id);
    output_str(o, "status", recorder_status_name(snap.status));
    output_int(o, "step", snap.last.step);
    output_str(o, "reason", snap.reason);
    /* one step, the true one (the trainer logs the step it stopped at, the checkpoint's);
     * the reason only when it says more than that */
    output_line(o, strncmp(snap.reason, "stopped at step", 15) && snap.reason[0]
                       ? "run #{run} {status} at step {step} ({reason})"
                       : "run #{run} {status} at step {step}");
    snapshot_free(&snap);
    return output_emit(s, o);
}

int job_control(Session *s, const char *verb, long id)
{
    if (is_remote(s, id))
        return job_control_remote(s, id, verb);
    SessionJobKind k = job_need(s, verb);
    if (k == SESSION_JOB_SWEEP)
        return job_sweep_control(s, verb);
    if (k == SESSION_JOB_NONE)
        return LM_ESTATE;
    return control_own_run(s, verb);
}

/* ---- the session's sweep ---- */

static int need_sweep(Session *s, const char *what)
{
    if (s->sweep)
        return LM_OK;
    return session_error(s, LM_ESTATE, "sweep %s: no sweep in this session; `sweep list` shows "
                         "the stored ones, `sweep resume ID` continues one", what);
}

/* A record of the sweep's progress: counts, status and the current trial; its summary
 * line when summary is 1. */
static Output *progress_record(const SweepProgress *p, const char *event, int summary)
{
    Output *o = output_create(event);
    output_int(o, "sweep", p->sweep_id);
    output_str(o, "name", p->name);
    output_str(o, "status", p->status);
    output_int(o, "total", p->total);
    output_int(o, "done", p->done);
    output_int(o, "running", p->running);
    output_int(o, "pending", p->pending);
    output_int(o, "stopped_early", p->stopped_early);
    output_int(o, "stopped", p->stopped);
    output_int(o, "failed", p->failed);
    output_int(o, "trial", p->current);
    output_int(o, "run", p->current_run);
    output_str(o, "params", p->current_params);
    output_int(o, "stop_at", p->stop_at);
    if (summary)
        output_line(o, "sweep #{sweep} {name} {status}: {total} trials: {done} done, {running} "
                    "running, {pending} pending, {stopped_early} stopped early, {stopped} "
                    "stopped, {failed} failed");
    if (summary && p->message[0]) {
        output_text_str(o, "message", p->message);
        output_line(o, "  note: {message}");
    }
    return o;
}

/* The current trial's fields and lines: step, loss, validation. */
static void trial_record(Output *o, const SweepProgress *p, const Snapshot *sn)
{
    char el[32], rung[64] = "";
    session_fmt_duration(el, sizeof el, sn->last.elapsed);
    if (p->stop_at)
        snprintf(rung, sizeof rung, "  [rung %d/%d: to step %ld]", p->rung + 1, p->n_rungs,
                 p->stop_at);
    output_str(o, "trial_status", recorder_status_name(sn->status));
    output_int(o, "step", sn->last.step);
    output_int(o, "total_steps", sn->total_steps);
    output_real(o, "loss", sn->last.loss);
    output_real(o, "tokens_per_s", sn->last.tokens_per_s);
    output_text_str(o, "elapsed", el);
    output_text_str(o, "rung", rung);
    output_line(o, "  trial {trial} (run #{run}, {params}): {trial_status} step {step}/"
                "{total_steps}  loss {loss:%.4f}  {tokens_per_s:%.0f} tok/s  elapsed "
                "{elapsed}{rung}");
    if (sn->n_val) {
        output_real(o, "val_loss", sn->last_eval.loss);
        output_real(o, "best_val", sn->best_val);
        output_line(o, "  val loss {val_loss:%.4f} (best {best_val:%.4f})");
    }
}

/* Sweep id (text) of `sweep status|wait ID` into *id: 0 none given, 1 given, -1 bad (said). */
static int sweep_id_arg(Session *s, const char *what, const char *text, long *id)
{
    *id = 0;
    if (!text)
        return 0;
    char *e;
    *id = strtol(text[0] == '#' ? text + 1 : text, &e, 10);
    if (*e || *id <= 0) {
        session_error(s, LM_EARG, "sweep %s %s: expected a sweep id (`sweep list` shows them)",
                      what, text);
        return -1;
    }
    return 1;
}

/* The session's own runner answers for its sweep; any other id is read from the store. */
static int sweep_is_own(const Session *s, long id)
{
    return s->sweep && (!id || sweep_runner_id(s->sweep) == id);
}

/* `sweep status ID` of a sweep this session does not run: the store's counts and status,
 * and its training trial's latest step from the store (issue 49 item 9). */
static int stored_sweep_status(Session *s, long id)
{
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    SweepProgress p;
    int live;
    char err[LM_ERR_LEN];
    int rc = sweep_stored_progress(st, id, &p, &live, err);
    if (rc)
        return session_error(s, rc, "%s", err);
    Output *o = progress_record(&p, "sweep_status", 1);
    output_bool(o, "live", live);
    Snapshot sn = {0};
    if (p.current && snapshot_from_store(st, p.current_run, &sn, err) == LM_OK)
        trial_record(o, &p, &sn);
    else if (!p.ended && !live) {
        output_line(o, "  no trial's process is alive: if the sweep's process is gone, "
                    "`sweep resume {sweep}` continues it");
    }
    snapshot_free(&sn);
    return output_emit(s, o);
}

int job_sweep_status(Session *s, const char *id_text)
{
    long id;
    if (sweep_id_arg(s, "status", id_text, &id) < 0)
        return LM_EARG;
    if (id && !sweep_is_own(s, id))
        return stored_sweep_status(s, id);
    SweepRunner *sw = s->sweep;
    if (!sw) {
        Output *o = output_create("sweep_status");
        output_str(o, "status", "idle");
        output_line(o, "no sweep in this session; `sweep status ID` shows a stored one, "
                    "`sweep list` lists them");
        return output_emit(s, o);
    }
    SweepProgress p;
    Snapshot sn = {0};
    sweep_runner_progress(sw, &p);
    Output *o = progress_record(&p, "sweep_status", 1);
    if (p.current && sweep_runner_snapshot(sw, &sn))
        trial_record(o, &p, &sn);
    snapshot_free(&sn);
    return output_emit(s, o);
}

/* What `sweep stop` did to the trial it interrupted, from the run's own record: the
 * checkpoint it kept (and its step), or that it has none. */
static void stopped_trial_words(Session *s, Output *o, const SweepProgress *before)
{
    RunStore *st = before->current_run > 0 ? session_store(s) : NULL;
    RunRow row;
    char err[LM_ERR_LEN], path[1024];
    if (!st || runstore_get(st, before->current_run, &row, err)) {
        output_line(o, "  no trial was training: `sweep resume {sweep}` continues the sweep");
        return;
    }
    output_int(o, "stopped_trial", before->current);
    output_int(o, "stopped_run", row.id);
    output_int(o, "stopped_step", row.last_step);
    if (!strcmp(row.status, "finished")) {   /* the stop came after its last step */
        output_str(o, "stopped_status", row.status);
        output_line(o, "  trial {stopped_trial} (run #{stopped_run}) had finished its "
                    "{stopped_step} steps when the stop arrived: it is done and ranked");
        runstore_row_free(&row);
        return;
    }
    char cerr[LM_ERR_LEN];
    long ck_step = 0;   /* the run record's newest step checkpoint, with its own step */
    int kept = !runrecord_checkpoint_path(st, &row, "final", path, sizeof path, &ck_step,
                                          cerr);
    output_bool(o, "checkpoint_kept", kept);
    if (kept) {
        output_int(o, "checkpoint_step", ck_step);
        output_text_str(o, "checkpoint", path);
        output_line(o, ck_step ? "  trial {stopped_trial} (run #{stopped_run}) was stopped (not "
                                 "finished, not ranked) and kept its checkpoint at step "
                                 "{checkpoint_step}, {checkpoint}: `sweep resume {sweep}` "
                                 "continues it"
                               : "  trial {stopped_trial} (run #{stopped_run}) was stopped (not "
                                 "finished, not ranked) and kept its checkpoint {checkpoint}: "
                                 "`sweep resume {sweep}` continues it");
    } else {
        output_line(o, "  trial {stopped_trial} (run #{stopped_run}) was stopped at step "
                    "{stopped_step} (not finished, not ranked) with no checkpoint to continue "
                    "from: `sweep resume {sweep}` trains it again from step 0");
    }
    runstore_row_free(&row);
}

int job_sweep_control(Session *s, const char *what)
{
    if (need_sweep(s, what))
        return LM_ESTATE;
    Output *o;
    if (!strcmp(what, "pause") || !strcmp(what, "resume")) {
        int pause = !strcmp(what, "pause");
        (pause ? sweep_runner_pause : sweep_runner_resume)(s->sweep);
        o = output_create(what);
        output_int(o, "sweep", sweep_runner_id(s->sweep));
        output_line(o, pause ? "sweep #{sweep}: pausing the current trial after its step"
                             : "sweep #{sweep}: resumed");
    } else {
        SweepProgress before, p;
        sweep_runner_progress(s->sweep, &before);
        sweep_runner_stop(s->sweep);
        sweep_runner_join(s->sweep);
        sweep_runner_progress(s->sweep, &p);
        o = progress_record(&p, "sweep_end", 0);
        output_line(o, "sweep #{sweep} {status}: {done} of {total} trials done, {stopped_early} "
                    "stopped early, {stopped} stopped");
        stopped_trial_words(s, o, &before);
    }
    return output_emit(s, o);
}

/* Seconds a stored sweep may stay "running" with no trial process alive before `sweep
 * wait ID` stops waiting on it (between two trials there is none for a moment). */
#define SWEEP_WAIT_ORPHAN_S 30

/* The next progress of the sweep `sweep wait` follows: the own runner's, or the store's for
 * a sweep of another process (or an ended one). *orphan: the stored sweep has had no live
 * trial for SWEEP_WAIT_ORPHAN_S seconds. LM_OK or the store's error (said). */
static int wait_progress(Session *s, long id, SweepProgress *p, double *no_live_since,
                         int *orphan)
{
    *orphan = 0;
    if (!id) {
        sweep_runner_progress(s->sweep, p);
        return LM_OK;
    }
    RunStore *st = session_store(s);
    char err[LM_ERR_LEN];
    int live, rc = st ? sweep_stored_progress(st, id, p, &live, err) : LM_EDB;
    if (rc)
        return st ? session_error(s, rc, "%s", err) : rc;
    double now = sysinfo_now();
    if (live || p->ended)
        *no_live_since = 0;
    else if (*no_live_since == 0)
        *no_live_since = now;
    *orphan = !p->ended && *no_live_since > 0 && now - *no_live_since >= SWEEP_WAIT_ORPHAN_S;
    return LM_OK;
}

/* `sweep wait [ID]`: one line per change of trial or counts, until the sweep ends; ID a
 * sweep of any process (read from the store) or the session's own. */
int job_sweep_wait(Session *s, const char *id_text)
{
    long id;
    if (sweep_id_arg(s, "wait", id_text, &id) < 0)
        return LM_EARG;
    if (sweep_is_own(s, id))
        id = 0;
    else if (!id && need_sweep(s, "wait"))
        return LM_ESTATE;
    SweepProgress p, last = {0};
    last.current = -1;
    s->interrupt = 0;
    double no_live_since = 0;
    for (;;) {
        int orphan, rc = wait_progress(s, id, &p, &no_live_since, &orphan);
        if (rc)
            return rc;
        if (p.current != last.current || p.done != last.done || p.failed != last.failed ||
            p.running != last.running || p.ended != last.ended ||
            p.stopped_early != last.stopped_early || p.stopped != last.stopped ||
            strcmp(p.status, last.status)) {
            Output *o = progress_record(&p, p.ended ? "sweep_end" : "sweep_progress", 0);
            if (!p.ended && p.current) { /* text: the trial being trained; none at the end */
                output_text_str(o, "to_rung", p.stop_at ? " to its rung" : "");
                if (p.running > 1) /* parallel=K: the latest trial handed to a worker */
                    output_line(o, "sweep #{sweep}: {done}/{total} done, {stopped_early} "
                                "stopped early, {stopped} stopped, {failed} failed; {running} "
                                "trials training at once, the latest trial {trial} "
                                "({params}){to_rung}");
                else if (p.current_run <= 0)   /* its run is not created yet: no "run #0" */
                    output_line(o, "sweep #{sweep}: {done}/{total} done, {stopped_early} "
                                "stopped early, {stopped} stopped, {failed} failed; starting "
                                "trial {trial} ({params}){to_rung}");
                else
                    output_line(o, "sweep #{sweep}: {done}/{total} done, {stopped_early} "
                                "stopped early, {stopped} stopped, {failed} failed; training "
                                "trial {trial} (run #{run}, {params}){to_rung}");
            }
            output_emit(s, o);
            last = p;
        }
        if (p.ended)
            break;
        if (orphan)
            return session_error(s, LM_ESTATE, "sweep #%ld is %s in the store but no trial "
                                 "of it has trained for %d s: its process is gone or stuck "
                                 "(`sweep resume %ld` continues it)", p.sweep_id, p.status,
                                 SWEEP_WAIT_ORPHAN_S, p.sweep_id);
        if (s->interrupt) {
            session_printf(s, "(stopped waiting; sweep #%ld continues: `sweep stop` ends it)",
                           p.sweep_id);
            return LM_ECANCEL;
        }
        usleep(200000);
    }
    if (!s->json) /* the summary; JSON readers had it as the sweep_end record */
        output_emit(s, progress_record(&p, NULL, 1));
    int cut = !strcmp(p.status, "stopped") || !strcmp(p.status, "interrupted");
    if (!strcmp(p.status, "interrupted") && !s->json)
        session_printf(s, "sweep #%ld ended with trials left (%s): `sweep resume %ld` "
                       "continues them", p.sweep_id, p.message[0] ? p.message : "interrupted",
                       p.sweep_id);
    return !strcmp(p.status, "finished") ? LM_OK : cut ? LM_ECANCEL : LM_EDB;
}

