/* recorder.c — trainer events to the run store and the snapshot (see recorder.h); and
 * the run's control requests from other processes (runstore_control.h), read about once
 * a second and handed to the trainer through trainer_pause/resume/stop, the path the
 * session's own `pause`/`stop` take; each is answered in the store. */
#include "recorder.h"

#include "dist.h"

#include "alerts.h"
#include "alertseen.h"
#include "console.h"
#include "err.h"
#include "runstore_control.h"
#include "runstore_series.h"
#include "sysmetrics.h"
#include "sysinfo.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct Recorder {
    Trainer *t;
    char db_path[1024];
    long run_id;
    RecorderCallback cb;
    void *ud;
    pthread_t thread;
    pthread_mutex_t mu;
    Snapshot snap;
    int done;
    /* the loss series keeps at most SNAP_MAX_LOSS points: each is the mean of `stride`
     * logged steps, stride doubling whenever the series is halved */
    int stride, acc_n;
    double acc;
    double next_control, next_beat;   /* monotonic seconds of the next poll / heartbeat */
    /* what a tracker keeps beside the metrics (runstore_track.h): system metrics every
     * sys_every seconds, the console, the alerts */
    SysMeter meter;
    double sys_every, next_sys, last_step_at;
    ConsoleState console;
    AlertEngine alerts;
    AlertSeen seen;                   /* every series' newest value, for the alert rules */
    long alert_seen;                  /* the newest alert event told (-1: not read yet) */
    double next_alert_news;
    RunOwner me;                      /* this process as the run's owner (pid 0: not) */
};

#define RECORDER_CONTROL_EVERY 1.0    /* seconds between polls of the control requests */
#define RECORDER_BEAT_EVERY 30.0      /* a paused run logs nothing: its heartbeat, then */


const char *recorder_status_name(int s)
{
    /* trainer_status_name's one table; the store knows no idle or evaluating run */
    if (s == TRAINER_IDLE || s == TRAINER_EVALUATING || s < 0 || s > TRAINER_FAILED)
        return "running";
    return trainer_status_name((TrainerStatus)s);
}

static int push_point(SeriesPoint **a, int *n, int *cap, long step, double v)
{
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 256;
        SeriesPoint *p = realloc(*a, (size_t)c * sizeof *p);
        if (!p)
            return -1;
        *a = p;
        *cap = c;
    }
    (*a)[*n].step = step;
    (*a)[*n].value = v;
    (*n)++;
    return 0;
}

static void set_message(Snapshot *s, const char *text)
{
    s->message_seq++;
    snprintf(s->messages[s->message_seq % SNAP_MESSAGES], LM_ERR_LEN, "%s", text);
}

/* Adds a logged loss to the bounded series: a point per `stride` steps (their mean, at
 * the last one's step); when full, neighbouring points are averaged in pairs, so memory
 * stays flat however long the run and the curve keeps its whole span. */
static void push_loss(Recorder *r, Snapshot *s, long step, double v)
{
    r->acc += v;
    if (++r->acc_n < r->stride)
        return;
    push_point(&s->loss, &s->n_loss, &s->cap_loss, step, r->acc / r->acc_n);
    r->acc = 0;
    r->acc_n = 0;
    if (s->n_loss < SNAP_MAX_LOSS)
        return;
    int h = 0;
    for (int i = 0; i + 1 < s->n_loss; i += 2, h++) {
        s->loss[h].step = s->loss[i + 1].step;
        s->loss[h].value = 0.5 * (s->loss[i].value + s->loss[i + 1].value);
    }
    if (s->n_loss % 2)
        s->loss[h++] = s->loss[s->n_loss - 1];
    s->n_loss = h;
    r->stride *= 2;
}

/* Applies one event to the snapshot (under the lock). */
static void apply(Recorder *r, Snapshot *s, const TrainEvent *ev)
{
    switch (ev->kind) {
    case TEV_STEP:
        s->last = ev->step;
        s->recent[s->n_steps++ % SNAP_RECENT_STEPS] = ev->step;
        push_loss(r, s, ev->step.step, ev->step.loss);
        break;
    case TEV_EVAL:
        s->last_eval = ev->eval;
        push_point(&s->val, &s->n_val, &s->cap_val, ev->eval.step, ev->eval.loss);
        if (isnan(s->best_val) || ev->eval.loss < s->best_val)
            s->best_val = ev->eval.loss;
        break;
    case TEV_GATES: {
        int n = ev->n_gates < SNAP_MAX_GATES ? ev->n_gates : SNAP_MAX_GATES;
        memcpy(s->gates, ev->gates, (size_t)n * sizeof *s->gates);
        s->n_gates = n;
        s->gate_levels = 0;
        for (int i = 0; i < n; i++)
            if (ev->gates[i].level + 1 > s->gate_levels) s->gate_levels = ev->gates[i].level + 1;
        s->gate_layers = s->gate_levels ? n / s->gate_levels : 0;
        break;
    }
    case TEV_SAMPLE_PIECE: {
        if (!s->sample_live) {
            s->sample[0] = 0;
            s->sample_live = 1;
            s->sample_step = ev->at_step;
        }
        size_t have = strlen(s->sample), add = strlen(ev->text);
        if (have + add < sizeof s->sample)
            memcpy(s->sample + have, ev->text, add + 1);
        break;
    }
    case TEV_SAMPLE:
        snprintf(s->sample, sizeof s->sample, "%s", ev->text);
        s->sample_live = 0;
        s->sample_step = ev->at_step;
        break;
    case TEV_CHECKPOINT:
        snprintf(s->checkpoint, sizeof s->checkpoint, "%s", ev->ckpt.path);
        break;
    case TEV_STATUS:
        if (s->status == TRAINER_EVALUATING || ev->status == TRAINER_EVALUATING)
            s->reason[0] = 0;   /* an evaluation's reason is its progress, its own alone */
        s->status = ev->status;
        if (ev->status == TRAINER_PAUSED || (ev->text && ev->text[0])) /* a pause's own reason */
            snprintf(s->reason, sizeof s->reason, "%s", ev->text ? ev->text : "");
        break;
    case TEV_LOG:
        set_message(s, ev->text);
        break;
    case TEV_SYS:   /* stored only (runstore_sys_log) */
    case TEV_SERIES:   /* stored only (runstore_series.h) */
        break;
    }
    s->seq++;
}

/* Writes one event; LM_OK or the store's error (the row stays pending in the store). */
static int record(RunStore *st, long run, const TrainEvent *ev, char *err)
{
    switch (ev->kind) {
    case TEV_STEP: return runstore_log_step(st, run, &ev->step, err);
    case TEV_EVAL: return runstore_log_eval(st, run, &ev->eval, err);
    case TEV_GATES: return runstore_log_gates(st, run, ev->gates, ev->n_gates, err);
    case TEV_SAMPLE: return runstore_log_sample(st, run, ev->at_step, ev->prompt, "periodic",
                                                ev->text, err);
    case TEV_CHECKPOINT: return runstore_log_checkpoint(st, run, &ev->ckpt, err);
    case TEV_SYS:   /* under mpirun: the other ranks' samples (rank 0's is track_poll's) */
        for (int i = 0; i < ev->n_sys; i++) {
            int rc = runstore_sys_log(st, run, &ev->sys[i], err);
            if (rc) return rc;
        }
        return LM_OK;
    case TEV_SERIES: {   /* diagnostics: named scalars, then histograms */
        const SeriesBatch *b = ev->series;
        int rc = b ? runstore_series_log(st, run, b->step, b->scalars, b->n_scalars, err) : 0;
        return rc || !b ? rc : runstore_hist_log(st, run, b->step, b->hists, b->n_hists, err);
    }
    case TEV_STATUS:
        if (ev->status == TRAINER_EVALUATING)
            return LM_OK;
        return runstore_run_set_status(st, run, recorder_status_name(ev->status),
                                       ev->text && ev->text[0] ? ev->text : NULL, err);
    default: return LM_OK;
    }
}

/* Acts on one control request and words the answer. ended: the run is over (nothing is
 * done, the answer says so). */
static void control_act(Recorder *r, const RunControl *c, int ended, char *reply, size_t cap)
{
    TrainerStatus ts = trainer_status(r->t);
    /* the trainer's own step: the recorder's last logged one lags it by up to log_every
     * steps, and by more while the store is failing (issue 46 item 6) */
    long step = trainer_step(r->t);
    int verb = c->verb_id;
    if (verb < 0)
        snprintf(reply, cap, "unknown control '%s': ignored (pause, resume, stop or "
                 "checkpoint)", c->verb);
    else if (ended || trainer_is_done(ts))
        snprintf(reply, cap, "run #%ld had already ended (%s at step %ld): nothing to %s",
                 r->run_id, trainer_status_name(ts), step, c->verb);
    else if (verb == RUNCTL_PAUSE && ts == TRAINER_PAUSED)
        snprintf(reply, cap, "run #%ld is already paused at step %ld", r->run_id, step);
    else if (verb == RUNCTL_RESUME && ts != TRAINER_PAUSED)
        snprintf(reply, cap, "run #%ld is not paused (running at step %ld)", r->run_id, step);
    else if (verb == RUNCTL_PAUSE) {
        trainer_pause(r->t);
        snprintf(reply, cap, "run #%ld pauses after its current step (it was at step %ld; "
                 "`status` then says \"paused: after step N\")", r->run_id, step);   /* no guess */
    } else if (verb == RUNCTL_RESUME) {
        trainer_resume(r->t);
        snprintf(reply, cap, "run #%ld resumed at step %ld", r->run_id, step);
    } else if (verb == RUNCTL_CHECKPOINT && dist_size() > 1) {
        snprintf(reply, cap, "run #%ld trains under mpirun: it writes checkpoints only at "
                 "checkpoint_every (no checkpoint on request)", r->run_id);
    } else if (verb == RUNCTL_CHECKPOINT) {
        trainer_checkpoint_now(r->t);
        snprintf(reply, cap, "run #%ld writes a checkpoint %s (it was at step %ld)", r->run_id,
                 ts == TRAINER_PAUSED ? "now, paused" : "after its current step", step);
    } else {
        char why[128];
        snprintf(why, sizeof why, "`stop` from pid %ld on %.40s", c->requester_pid,
                 c->requester_host);
        trainer_stop_because(r->t, why);
        snprintf(reply, cap, "run #%ld stops after its current step (a checkpoint is written)",
                 r->run_id);
    }
}

/* This process as the run's owner, read once from the run's row (written by the launch
 * before the recorder starts): requests addressed to it are the only ones it reads. */
static void read_owner(Recorder *r, RunStore *st)
{
    char err[LM_ERR_LEN];
    RunOwner o;
    memset(&r->me, 0, sizeof r->me);
    if (st && runstore_run_owner(st, r->run_id, &o, err) == LM_OK && o.pid == (long)getpid()
        && !strcmp(o.host, runstore_host(st)))
        r->me = o;
}

/* Reads and answers this run's newest control request to this owner when due (always
 * when ended: then every request still unanswered expires with the run). A store failure
 * only delays it: it stays unanswered and is read again at the next poll. */
static void poll_controls(Recorder *r, RunStore *st, int ended)
{
    double now = sysinfo_now();
    if (!st || (!ended && now < r->next_control))
        return;
    r->next_control = now + RECORDER_CONTROL_EVERY;
    char err[LM_ERR_LEN], reply[256];
    if (!ended && now >= r->next_beat) {
        r->next_beat = now + RECORDER_BEAT_EVERY;
        runstore_control_heartbeat(st, r->run_id, err);
    }
    RunControl c;
    int found = 0;
    if (runstore_control_take(st, r->run_id, &r->me, &c, &found, err) == LM_OK && found) {
        control_act(r, &c, ended, reply, sizeof reply);
        runstore_control_answer(st, c.id, reply, err);
        pthread_mutex_lock(&r->mu);
        char msg[LM_ERR_LEN];
        snprintf(msg, sizeof msg, "control from pid %ld on %.60s: %.250s", c.requester_pid,
                 c.requester_host, reply);
        set_message(&r->snap, msg);
        r->snap.seq++;
        pthread_mutex_unlock(&r->mu);
    }
    if (ended && r->me.pid > 0)
        runstore_control_expire(st, r->run_id, "the run ended before its owner read it", err);
}

/* The run's facts for its alert rules (under the lock). */
static void alert_facts(Recorder *r, AlertFacts *f, double now)
{
    const Snapshot *s = &r->snap;
    f->status = recorder_status_name(s->status);
    f->step = s->last.step;
    f->loss = s->n_steps ? s->last.loss : NAN;
    f->val_loss = s->n_val ? s->last_eval.loss : NAN;
    f->best_val = s->best_val;
    f->value = alertseen_value;   /* any series of the registry: seen on this thread */
    f->ud = &r->seen;
    f->since_step = s->status == TRAINER_RUNNING ? now - r->last_step_at : 0;
}

/* The alerts of the run that fired since the last look, whoever fired them (this process
 * or another that saw it stalled), as the snapshot's message: the owner's terminal and
 * dashboard print it (issue 49 item 6). Those fired before this recorder began are not
 * told again. */
static void alert_news(Recorder *r, RunStore *st, double now, int force)
{
    if (!st || (!force && now < r->next_alert_news))
        return;
    r->next_alert_news = now + 1.0;
    AlertEvent *ev = NULL;
    int n = 0;
    char err[LM_ERR_LEN], msg[LM_ERR_LEN];
    if (runstore_alert_events(st, r->run_id, r->alert_seen > 0 ? r->alert_seen : 0, 0, &ev,
                              &n, err))
        return;
    for (int i = 0; i < n; i++) {
        if (r->alert_seen >= 0) {
            snprintf(msg, sizeof msg, "alert %.60s fired: %.400s", ev[i].rule, ev[i].message);
            pthread_mutex_lock(&r->mu);
            set_message(&r->snap, msg);
            r->snap.seq++;
            pthread_mutex_unlock(&r->mu);
        }
    }
    long newest = r->alert_seen > 0 ? r->alert_seen : 0;
    for (int i = 0; i < n; i++)
        if (ev[i].id > newest)
            newest = ev[i].id;
    r->alert_seen = newest;
    free(ev);
}

/* System metrics when due (always when force), then the alert rules. */
static void track_poll(Recorder *r, RunStore *st, int force)
{
    double now = sysinfo_now();
    char err[LM_ERR_LEN];
    if (st && (force || now >= r->next_sys)) {
        r->next_sys = now + r->sys_every;
        SysSample x = {0};
        sysmetrics_sample(&r->meter, &x);
        x.rank = 0;
        pthread_mutex_lock(&r->mu);
        x.step = r->snap.last.step;
        x.tokens_per_s = r->snap.n_steps ? r->snap.last.tokens_per_s : NAN;
        pthread_mutex_unlock(&r->mu);
        runstore_sys_log(st, r->run_id, &x, err);
        alertseen_sys(&r->seen, &x);
    }
    AlertFacts f;
    pthread_mutex_lock(&r->mu);
    alert_facts(r, &f, now);
    pthread_mutex_unlock(&r->mu);
    if (alerts_poll(&r->alerts, st, &f, force) > 0) {
        pthread_mutex_lock(&r->mu);
        r->snap.seq++;
        pthread_mutex_unlock(&r->mu);
    }
    alert_news(r, st, now, force);
}

/* The console line of one event, when it makes one. */
static void track_event(Recorder *r, RunStore *st, const TrainEvent *ev)
{
    char kind[16], line[RUNSTORE_CONSOLE_LINE_MAX + 64], err[LM_ERR_LEN];
    double now = sysinfo_now();
    alertseen_event(&r->seen, ev);
    if (ev->kind == TEV_STEP || ev->kind == TEV_STATUS)   /* a pause or an evaluation */
        r->last_step_at = now;                            /* restarts the stalled clock */
    if (st && console_line(&r->console, ev, now, kind, line, sizeof line))
        runstore_console_append(st, r->run_id, kind, line, err);
}

/* The configuration's alerts= rules, stored once per run (a resumed run keeps its own). */
static void track_config_alerts(Recorder *r, RunStore *st)
{
    const char *list = r->snap.cfg.alerts;
    AlertRow *have = NULL;
    int n = 0;
    char err[LM_ERR_LEN], word[ALERTRULE_LEN + 8], canon[ALERTRULE_LEN];
    if (!st || !list[0] || runstore_alerts(st, r->run_id, &have, &n, err)) return;
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        snprintf(word, sizeof word, "%.*s", (int)(k < sizeof word - 1 ? k : sizeof word - 1), p);
        p += k + (p[k] == ',');
        AlertRule rule;
        int dup = 0;
        if (!word[0] || alertrule_parse(word, &rule, canon, sizeof canon, err)) continue;
        for (int i = 0; i < n && !dup; i++)
            dup = have[i].run_id == r->run_id && !strcmp(have[i].rule, canon) &&
                  !strcmp(have[i].origin, "config");
        if (!dup) runstore_alert_add(st, r->run_id, 0, canon, "", "config", NULL, err);
    }
    free(have);
}

/* After the run's last event: answers the requests that came too late, flushes and
 * closes the store (what it cannot take is spilled into the journal), and says in the
 * snapshot what was not recorded, where it is kept and why (final_rc and final_err: the
 * final status's write); then the recorder is done. */
static void record_end(Recorder *r, RunStore *st, const char *journal, int final_rc,
                       const char *final_err, char *err)
{
    long left = 0, journaled = 0;
    poll_controls(r, st, 1);   /* requests that came too late are answered as such */
    track_poll(r, st, 1);      /* the last sample; finished/diverged/ended alerts */
    alerts_finish(&r->alerts, st, 5.0);
    if (st) {
        if (runstore_flush(st, err) == LM_OK) err[0] = 0;
        left = runstore_pending(st) + runstore_journal_rows(st);
        runstore_close(st);   /* spills what is still in memory into the journal */
        journaled = journal[0] && access(journal, F_OK) == 0;
    }
    pthread_mutex_lock(&r->mu);
    /* never report success for what was not recorded: say what, where and why */
    r->snap.unrecorded = left + (final_rc != LM_OK || !st);
    if (r->snap.unrecorded)
        snprintf(r->snap.unrecorded_why, sizeof r->snap.unrecorded_why,
                 "%ld metric row%s%s of run #%ld could not be written to the run store %.100s "
                 "(%.250s)%s%.200s%s", left, left == 1 ? "" : "s",
                 final_rc != LM_OK || !st ? " and its final status" : "", r->run_id,
                 r->db_path[0] ? r->db_path : "(default)",
                 final_err[0] ? final_err : err[0] ? err : "unknown reason",
                 journaled ? "; the rows are kept in " : "", journaled ? journal : "",
                 journaled ? " and land in the store when this run is resumed" : "");
    r->done = 1;
    r->snap.seq++;
    pthread_mutex_unlock(&r->mu);
}

static void *record_main(void *arg)
{
    Recorder *r = arg;
    char err[LM_ERR_LEN];
    RunStore *st = NULL;
    if (runstore_open(r->db_path, &st, err)) {
        pthread_mutex_lock(&r->mu);
        set_message(&r->snap, err);
        pthread_mutex_unlock(&r->mu);
    }
    char journal[1100] = "";
    if (st && trainer_run_dir(r->t)[0]) {   /* rows the store cannot take wait here */
        snprintf(journal, sizeof journal, "%.1000s/unrecorded-rows.tsv", trainer_run_dir(r->t));
        runstore_set_journal(st, journal, 0);
    }
    read_owner(r, st);
    int ended = 0, final_rc = LM_OK, gone = 0;
    char final_err[LM_ERR_LEN] = "";
    r->next_beat = sysinfo_now() + RECORDER_BEAT_EVERY;
    r->last_step_at = sysinfo_now();
    r->next_sys = r->last_step_at + r->sys_every;
    SysSample prime;
    sysmetrics_sample(&r->meter, &prime);   /* the first stored sample has a CPU % */
    track_config_alerts(r, st);
    while (!ended) {
        TrainEvent ev;
        poll_controls(r, st, 0);
        track_poll(r, st, 0);
        if (!trainer_poll(r->t, &ev, 0.25)) {
            if (st && runstore_pending(st) && runstore_flush(st, err) == LM_OK)
                continue;
            continue;
        }
        ended = ev.kind == TEV_STATUS && trainer_is_done(ev.status);
        int rc = st ? record(st, r->run_id, &ev, err) : LM_OK;
        if (rc && !gone && runstore_gone(st)) {   /* moved, deleted, damaged: stop */
            gone = 1;
            trainer_stop(r->t);
        }
        /* a final status must reach the store: retry for a while before giving up */
        for (int i = 0; ended && st && rc && !gone && i < 40; i++) {
            usleep(250000);
            rc = runstore_flush(st, err) ? LM_EDB : record(st, r->run_id, &ev, err);
        }
        if (ended) {
            final_rc = st ? rc : LM_EIO;
            snprintf(final_err, sizeof final_err, "%s", st ? err : "the store did not open");
        }
        pthread_mutex_lock(&r->mu);
        apply(r, &r->snap, &ev);
        pthread_mutex_unlock(&r->mu);
        track_event(r, st, &ev);
        pthread_mutex_lock(&r->mu);
        if (rc) {
            char msg[LM_ERR_LEN];
            if (ev.kind == TEV_SERIES && !gone)   /* written at once, not buffered */
                snprintf(msg, sizeof msg, "run store: the diagnostics of step %ld were not "
                         "recorded: %.400s", ev.series ? ev.series->step : ev.at_step, err);
            else
                snprintf(msg, sizeof msg, gone ? "run store: %.400s; the run stops, its rows "
                         "are kept in its journal" : "run store: %.400s (rows kept in memory, "
                         "retrying)", err);
            set_message(&r->snap, msg);
        }
        r->snap.pending_rows = st ? runstore_pending(st) : 0;
        pthread_mutex_unlock(&r->mu);
        if (r->cb)
            r->cb(r->ud, &ev, &r->snap);
        trainer_event_free(&ev);
    }
    record_end(r, st, journal, final_rc, final_err, err);
    return NULL;
}

Recorder *recorder_create(Trainer *t, const char *db_path, long run_id, const char *run_name,
                          RecorderCallback cb, void *ud, char *err)
{
    Recorder *r = calloc(1, sizeof *r);
    if (!r) {
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    r->t = t;
    snprintf(r->db_path, sizeof r->db_path, "%s", db_path ? db_path : "");
    r->run_id = run_id;
    r->stride = 1;
    r->cb = cb;
    sysmetrics_init(&r->meter);
    r->sys_every = sysmetrics_every();
    r->console.total_steps = trainer_total_steps(t);
    alerts_init(&r->alerts, run_id, run_name, db_path);
    alertseen_init(&r->seen);
    r->alert_seen = -1;
    r->ud = ud;
    pthread_mutex_init(&r->mu, NULL);
    Snapshot *s = &r->snap;
    s->run_id = run_id;
    snprintf(s->run_name, sizeof s->run_name, "%s", run_name ? run_name : "");
    s->cfg = *trainer_config(t);
    s->total_steps = trainer_total_steps(t);
    s->params = trainer_param_count(t);
    s->vocab = trainer_vocab(t);
    trainer_origin(t, &s->origin, &s->fork_of);
    s->last = s->origin;   /* a resume or fork stands at its step until it logs one (one
                            * already at its last step logs none: its end names that step) */
    s->status = TRAINER_RUNNING;
    s->best_val = NAN;
    if (pthread_create(&r->thread, NULL, record_main, r)) {
        pthread_mutex_destroy(&r->mu);
        free(r);
        err_set(err, LM_ENOMEM, "cannot start the recorder thread");
        return NULL;
    }
    return r;
}

void recorder_destroy(Recorder *r)
{
    if (!r)
        return;
    pthread_join(r->thread, NULL);
    snapshot_free(&r->snap);
    alertseen_free(&r->seen);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int recorder_done(Recorder *r)
{
    pthread_mutex_lock(&r->mu);
    int d = r->done;
    pthread_mutex_unlock(&r->mu);
    return d;
}

long recorder_snapshot(Recorder *r, Snapshot *dst)
{
    pthread_mutex_lock(&r->mu);
    SeriesPoint *loss = dst->loss, *val = dst->val;
    int cap_loss = dst->cap_loss, cap_val = dst->cap_val;
    const Snapshot *s = &r->snap;
    if (cap_loss < s->n_loss) {
        SeriesPoint *p = realloc(loss, (size_t)s->cap_loss * sizeof *p);
        if (p) { loss = p; cap_loss = s->cap_loss; }
    }
    if (cap_val < s->n_val) {
        SeriesPoint *p = realloc(val, (size_t)s->cap_val * sizeof *p);
        if (p) { val = p; cap_val = s->cap_val; }
    }
    *dst = *s;
    dst->loss = loss;
    dst->val = val;
    dst->cap_loss = cap_loss;
    dst->cap_val = cap_val;
    dst->n_loss = s->n_loss <= cap_loss ? s->n_loss : 0;
    dst->n_val = s->n_val <= cap_val ? s->n_val : 0;
    if (dst->n_loss) memcpy(loss, s->loss, (size_t)dst->n_loss * sizeof *loss);
    if (dst->n_val) memcpy(val, s->val, (size_t)dst->n_val * sizeof *val);
    long seq = s->seq;
    pthread_mutex_unlock(&r->mu);
    return seq;
}
