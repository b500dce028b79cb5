/* dash_term_poll.c — the dashboard loop's wake-up (see dash_term_impl.h): the run's
 * snapshot (the session's, a sweep's trial, or one followed through the store), and what
 * follows from it: evaluations, messages and the run's end in the scrollback, a sweep's
 * trials started and ended, the status bar's sweep and opened-weights text, a run reaped
 * by a command settled from the store, dead owners' runs reaped every 2 s, fired alerts.
 * Not the drawing (dash_render.c) and not the terminal (dash_term_tty.c). */
#define NCURSES_WIDECHAR 1
#include "dash_term_impl.h"

#include "alerts.h"
#include "commands.h"

#include "dash_alerts.h"
#include "err.h"
#include "views.h"
#include "sysinfo.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report_end(DashTerm *t)
{
    const Snapshot *sn = &t->snap;
    double el, speed;   /* its own work, as the end of `train` states it */
    snapshot_own_work(sn, &el, &speed);
    char when[32], ppl[METRIC_PPL_TEXT], steps[96];
    session_fmt_duration(when, sizeof when, el);
    if (sn->fork_of > 0)   /* a fork trained from its fork point, not from 0 */
        snprintf(steps, sizeof steps, "%ld steps (#%ld@%ld to %ld)",
                 sn->last.step - sn->origin.step, sn->fork_of, sn->origin.step, sn->last.step);
    else
        snprintf(steps, sizeof steps, "%ld steps", sn->last.step);
    dash_term_out(t, UI_COLOR_ACCENT, "run #%ld %s %s after %s in %s: %.0f tokens/s%s%s%s",
                  sn->run_id, sn->run_name, snapshot_status_name(sn), steps, when, speed,
                  sn->reason[0] ? " (" : "", sn->reason, sn->reason[0] ? ")" : "");
    if (sn->n_val)
        dash_term_out(t, UI_COLOR_ACCENT, "  final val loss %.4f (ppl %s), best %.4f",
                 sn->last_eval.loss, metric_ppl_text(sn->last_eval.ppl, ppl), sn->best_val);
}

/* Evaluations, trainer/store messages and the end of the run go to the scrollback. */
static void follow(DashTerm *t)
{
    const Snapshot *sn = &t->snap;
    char ppl[METRIC_PPL_TEXT];
    Dashboard *d = t->d;
    if (!sn->run_id)
        return;
    if (sn->run_id != t->f_run) {
        t->f_run = sn->run_id;
        t->f_val = t->f_end = 0;
        t->f_msg = 0;
        t->f_sample = -1;
        if (t->follow.active) {   /* read from the store: say so, report only what's new */
            t->f_val = sn->n_val;
            t->f_end = trainer_is_done(sn->status);
            t->f_sample = sn->sample_step;
            dash_term_out(t, UI_COLOR_ACCENT, "run #%ld %s (%s), step %ld: %s the run store", sn->run_id,
                     sn->run_name, snapshot_status_name(sn), sn->last.step,
                     t->f_end ? "replayed from" : "another process's, followed through");
        }
    }
    char tag[32] = "";   /* a sweep's trial: its lines say which */
    SweepRunner *sw = session_job_sweep(t->s);
    if (sw) {
        SweepProgress p;
        sweep_runner_progress(sw, &p);
        if (p.current && p.current_run == sn->run_id)
            snprintf(tag, sizeof tag, "[trial %d] ", p.current);
    }
    for (; t->f_val < sn->n_val; t->f_val++)
        dash_term_out(t, UI_COLOR_DIM, "%seval   step %ld  val loss %.4f  ppl %s", tag,
                 sn->val[t->f_val].step, sn->val[t->f_val].value,
                 metric_ppl_text(exp(sn->val[t->f_val].value), ppl));
    for (long k = t->f_msg + 1; k <= sn->message_seq; k++) {   /* each since the last poll */
        const char *m = snapshot_message(sn, k);
        if (m && m[0])
            dash_term_out(t, UI_COLOR_WARN, "note: %s", m);
    }
    t->f_msg = sn->message_seq;
    if (sn->sample[0] && sn->sample_step != t->f_sample) {
        t->f_sample = sn->sample_step;
        d->sample_from_cmd = 0;  /* a new periodic sample takes the pane */
    }
    if (!t->f_end && trainer_is_done(sn->status)) {
        t->f_end = 1;
        report_end(t);
        if (views_get(d->view)->run_ended)
            views_get(d->view)->run_ended(&t->ctx);
    }
}

/* A trial's status as the user reads it: a pending trial whose run is already
 * training (a parallel sweep's worker started it) is running. */
static const char *trial_state(const SweepTrialRow *r)
{
    return !strcmp(r->status, "pending") && r->run_id > 0 &&
                   (!strcmp(r->run_status, "running") || !strcmp(r->run_status, "paused"))
               ? "running" : r->status;
}

/* The session's sweep in the scrollback, whichever view is on screen and however many
 * trials run at once (parallel=K: in other processes): a line when a trial starts and
 * when it ends (with its best val), and one when the sweep ends. Read from the store at
 * most once a second. */
static void sweep_lines(DashTerm *t, SweepRunner *sw)
{
    double now = sysinfo_now();
    if (!sw || now < t->sw_next)
        return;
    t->sw_next = now + 1.0;
    SweepProgress p;
    sweep_runner_progress(sw, &p);
    if (p.sweep_id != t->sw_id) {
        t->sw_id = p.sweep_id;
        memset(t->sw_seen, 0, sizeof t->sw_seen);
        t->sw_end_said = 0;
    }
    RunStore *st = t->s->store;
    SweepTrialRow *rows = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (!st || runstore_sweep_trials(st, p.sweep_id, &rows, &n, err))
        return;
    for (int i = 0; i < n && i < 256; i++) {
        const char *now_st = trial_state(&rows[i]);
        if (!strcmp(now_st, t->sw_seen[i]) || !strcmp(now_st, "pending"))
            continue;
        if (!strcmp(now_st, "running"))
            dash_term_out(t, UI_COLOR_ACCENT, "sweep #%ld: trial %d/%d (run #%ld, %s) started",
                     p.sweep_id, rows[i].trial, p.total, rows[i].run_id, rows[i].params);
        else if (isfinite(rows[i].best_val))
            dash_term_out(t, UI_COLOR_ACCENT, "sweep #%ld: trial %d/%d (run #%ld, %s) %s: best val "
                     "%.4f", p.sweep_id, rows[i].trial, p.total, rows[i].run_id,
                     rows[i].params, now_st, rows[i].best_val);
        else
            dash_term_out(t, UI_COLOR_ACCENT, "sweep #%ld: trial %d/%d (run #%ld, %s) %s",
                     p.sweep_id, rows[i].trial, p.total, rows[i].run_id, rows[i].params,
                     now_st);
        snprintf(t->sw_seen[i], sizeof t->sw_seen[i], "%s", now_st);
        t->dirty = 1;
    }
    free(rows);
    if (p.ended && !t->sw_end_said) {
        t->sw_end_said = 1;
        dash_term_out(t, UI_COLOR_ACCENT, "sweep #%ld %s %s: %d trials: %d done, %d stopped early, "
                 "%d stopped, %d failed (`sweep show %ld` ranks them)", p.sweep_id, p.name,
                 p.status, p.total, p.done, p.stopped_early, p.stopped, p.failed, p.sweep_id);
        t->dirty = 1;
    }
}

/* The sweep's progress for the status bar ("" without a sweep). */
static void sweep_status(DashTerm *t, SweepRunner *sw)
{
    char text[sizeof t->d->sweep] = "";
    if (sw) {
        SweepProgress p;
        sweep_runner_progress(sw, &p);
        if (p.ended)   /* no current trial then: the trials that ran to an end */
            snprintf(text, sizeof text, "#%ld %d/%d trials done %s", p.sweep_id,
                     p.done + p.stopped_early + p.stopped + p.failed, p.total, p.status);
        else if (p.running > 1 || (p.running && !p.current))   /* parallel=K */
            snprintf(text, sizeof text, "#%ld %d running, %d/%d done", p.sweep_id, p.running,
                     p.done + p.stopped_early + p.stopped + p.failed, p.total);
        else
            snprintf(text, sizeof text, "#%ld trial %d/%d", p.sweep_id, p.current, p.total);
    }
    if (strcmp(text, t->d->sweep)) {
        snprintf(t->d->sweep, sizeof t->d->sweep, "%s", text);
        t->dirty = 1;
    }
}

/* Which weights `open` loaded, when they belong to the run on screen: its bar then says
 * the step and file (the run's own step is where it ended, not what was loaded). */
static void opened_status(DashTerm *t)
{
    const Session *s = t->s;
    char text[sizeof t->d->opened] = "";
    if (s->view && s->view_run > 0 && s->view_run == t->snap.run_id && !s->trainer &&
        s->view_step >= 0) {
        const char *slash = strrchr(s->view_path, '/');   /* the file's own name */
        snprintf(text, sizeof text, "step %ld %.60s", s->view_step,
                 slash ? slash + 1 : s->view_path);
    }
    if (strcmp(text, t->d->opened)) {
        snprintf(t->d->opened, sizeof t->d->opened, "%s", text);
        t->dirty = 1;
    }
}

/* The run on screen was live but no longer has a snapshot: a command (`stop`) ended and
 * reaped it. Its final state comes from the store (STOPPED when the store cannot say),
 * so the status bar stops saying TRAINING with an ETA. The command reported the end. */
static void settle_reaped(DashTerm *t)
{
    Snapshot *sn = &t->snap;
    int status = TRAINER_STOPPED;
    RunStore *st = session_store(t->s);
    RunRow row;
    char err[LM_ERR_LEN];
    if (st && runstore_get(st, sn->run_id, &row, err) == LM_OK) {
        static const int ends[] = {TRAINER_FINISHED, TRAINER_STOPPED, TRAINER_DIVERGED,
                                   TRAINER_FAILED};
        for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
            if (!strcmp(row.status, recorder_status_name(ends[i])))
                status = ends[i];
        sn->interrupted = !strcmp(row.status, "interrupted");
        if (row.last_step > sn->last.step)
            sn->last.step = row.last_step;
        snprintf(sn->reason, sizeof sn->reason, "%s", row.reason);
        runstore_row_free(&row);
    }
    sn->status = status;
    if (t->f_run == sn->run_id)
        t->f_end = 1;
    t->dirty = 1;
}

/* Every 2 s, the explicit reaping step of the dashboard's long-lived store handle: this
 * host's runs whose process died are marked interrupted in the store at once, not when the
 * next process happens to open it (a query never does it). */
static void reap_dead(DashTerm *t)
{
    double now = sysinfo_now();
    if (now < t->next_reap)
        return;
    t->next_reap = now + 2.0;
    RunStore *st = t->s->store;   /* only an open store: never opens one for this */
    char err[LM_ERR_LEN];
    if (!st)
        return;
    /* first the alerts no owner can judge (a silent owner's stalled, a dead one's ended):
       the alerts view shows those that fire, from the store */
    alerts_watch_judge(st, t->s->db_path, "dashboard", NULL, NULL);
    runstore_reap_dead(st, err);   /* a failure: the next call retries */
}

/* Takes a snapshot of the run — a running sweep's trial, else the session's run, else
 * an ended sweep's last trial — or, without any, shows the configuration `train` would
 * use; then updates what depends on it. */
void dash_term_poll(DashTerm *t)
{
    Session *s = t->s;
    Dashboard *d = t->d;
    SweepRunner *sw = session_job_sweep(s);
    int have = session_snapshot(s, &t->snap);   /* its rules say when following resumes */
    int stored = dash_follow_poll(&t->follow, s, have, &t->snap, sysinfo_now());
    if (stored != d->from_store) {
        d->from_store = stored;
        t->dirty = 1;
    }
    if (!have && !stored && t->snap.run_id && !trainer_is_done(t->snap.status))
        settle_reaped(t);
    if (!have && !t->snap.run_id &&
        (strcmp(t->snap.cfg.model, s->cfg.model) || strcmp(t->snap.cfg.data, s->cfg.data) ||
         t->snap.cfg.steps != s->cfg.steps)) {
        t->snap.cfg = s->cfg;
        t->dirty = 1;
    }
    sweep_status(t, sw);
    sweep_lines(t, sw);
    opened_status(t);
    reap_dead(t);
    if (strcmp(d->experiment, s->experiment)) {
        snprintf(d->experiment, sizeof d->experiment, "%s", s->experiment);
        t->dirty = 1;
    }
    if (t->snap.run_id != t->drawn_run || t->snap.seq != t->drawn_seq)
        t->dirty = 1;
    follow(t);
    if (dash_alerts_poll(&t->ctx) > 0) {   /* a line was printed; the bell for attention */
        beep();
        t->dirty = 1;
    }
    const DashView *v = views_get(d->view);
    if (v->tick && v->tick(&t->ctx))
        t->dirty = 1;
}
