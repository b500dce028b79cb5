/* session_job.c — the session's job (see session.h): the run or sweep it trains, pure
 * queries of it, the one reap that closes an ended run (keeping its final weights as the
 * open model), pausing and stopping it, and what the screen follows: the job's snapshot
 * (a resumed run with its earlier history in front), else the attached run or another
 * process's live one. */
#include "session.h"

#include "err.h"
#include "run_launch.h"
#include "sysinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void session_set_prior(Session *s, long run)
{
    free(s->prior_loss);
    free(s->prior_val);
    s->prior_loss = s->prior_val = NULL;
    s->n_prior_loss = s->n_prior_val = 0;
    RunStore *st = run > 0 ? session_store(s) : NULL;
    char err[LM_ERR_LEN];
    if (st && runstore_series(st, run, "loss", &s->prior_loss, &s->n_prior_loss, err))
        s->n_prior_loss = 0;
    if (st && runstore_series(st, run, "val_loss", &s->prior_val, &s->n_prior_val, err))
        s->n_prior_val = 0;
}

/* The points of prior before the first of *v (n), put in front of it. */
static void prepend(SeriesPoint **v, int *n, int *cap, const SeriesPoint *prior, int np)
{
    long first = *n ? (*v)[0].step : -1;
    int k = 0;
    while (k < np && (first < 0 || prior[k].step < first))
        k++;
    if (!k)
        return;
    SeriesPoint *m = malloc((size_t)(k + *n) * sizeof *m);
    if (!m)
        return;
    memcpy(m, prior, (size_t)k * sizeof *m);
    if (*n)
        memcpy(m + k, *v, (size_t)*n * sizeof *m);
    free(*v);
    *v = m;
    *n += k;
    *cap = *n;
}

/* ---- the job ---- */

/* Frees the run's trainer and recorder once it has ended (or, with stop, after stopping
 * it), keeping its final weights as the model `sample`, `eval` and `coeffs` use. */
static void close_run(Session *s, int stop)
{
    if (!s->trainer)
        return;
    if (!stop && !trainer_is_done(trainer_status(s->trainer)))
        return;
    RunHandle h = {.trainer = s->trainer, .rec = s->rec, .run_id = s->run_id};
    if (stop) {
        run_launch_close(&h, 1);
    } else {
        trainer_join(s->trainer);
        session_prepare_view(s);
        snprintf(s->view_source, sizeof s->view_source, "run #%ld final weights (step %ld)",
                 s->run_id, s->view_step);
        run_launch_close(&h, 0);
    }
    s->trainer = NULL;
    s->rec = NULL;
}

int session_check_idle(Session *s, const char *starting)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_RUN)
        return session_error(s, LM_ESTATE, "run #%ld is still training: `stop` it (or `wait`) "
                             "before starting %s", s->run_id, starting);
    if (k == SESSION_JOB_SWEEP)
        return session_error(s, LM_ESTATE, "sweep #%ld is training its trials: `stop` it (or "
                             "`wait`) before starting %s", sweep_runner_id(s->sweep), starting);
    return LM_OK;
}

void session_job_reap(Session *s)
{
    close_run(s, 0);
}

void session_job_set_run(Session *s, const RunHandle *h)
{
    close_run(s, 0);   /* a run that ended since the command's reap: closed, not lost */
    s->trainer = h->trainer;
    s->rec = h->rec;
    s->run_id = h->run_id;
    s->left_job = NULL;   /* a new job shows (a freed recorder's address may be reused) */
    s->end_seen = 0;
    s->attached = 0;   /* the run trained here is the one on screen */
}

SessionJobKind session_job_kind(const Session *s)
{
    if (s->trainer && !trainer_is_done(trainer_status(s->trainer)))
        return SESSION_JOB_RUN;
    if (s->sweep && !sweep_runner_done(s->sweep))
        return SESSION_JOB_SWEEP;
    return SESSION_JOB_NONE;
}

int session_job_holds_run(const Session *s)
{
    return s->rec != NULL;
}

void session_job_name(const Session *s, char *buf, size_t cap)
{
    switch (session_job_kind(s)) {
    case SESSION_JOB_RUN: snprintf(buf, cap, "run #%ld", s->run_id); break;
    case SESSION_JOB_SWEEP: snprintf(buf, cap, "sweep #%ld", sweep_runner_id(s->sweep)); break;
    default: if (cap) buf[0] = 0; break;
    }
}

SweepRunner *session_job_sweep(Session *s)
{
    return s->sweep;
}

void session_job_set_sweep(Session *s, SweepRunner *r)
{
    if (s->sweep != r)
        sweep_runner_destroy(s->sweep);
    s->sweep = r;
    s->left_job = NULL;   /* the new sweep shows (a freed runner's address may be reused) */
}

SessionJobKind session_job_pause(Session *s, int on)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_RUN)
        (on ? trainer_pause : trainer_resume)(s->trainer);
    else if (k == SESSION_JOB_SWEEP)
        (on ? sweep_runner_pause : sweep_runner_resume)(s->sweep);
    return k;
}

SessionJobKind session_job_stop(Session *s)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_RUN) {
        trainer_stop(s->trainer);
        trainer_join(s->trainer);
        while (!recorder_done(s->rec))
            usleep(20000);
    } else if (k == SESSION_JOB_SWEEP) {
        sweep_runner_stop(s->sweep);
        sweep_runner_join(s->sweep);
    }
    return k;
}

void session_job_shutdown(Session *s)
{
    if (s->trainer && s->terminating)   /* the run's end says why it stopped */
        trainer_stop_because(s->trainer, SESSION_TERM_REASON);
    sweep_runner_destroy(s->sweep); /* stops and joins */
    s->sweep = NULL;
    close_run(s, 1);
}

/* The newest live run among those with this stored status, not this process's own. */
static long newest_live(RunStore *st, const char *filter, const char *host)
{
    RunRow *rows;
    int n;
    char err[LM_ERR_LEN];
    if (runstore_list(st, filter, "recent", 16, &rows, &n, err))
        return 0;
    long id = 0;
    for (int i = 0; i < n && !id; i++) {
        int own = rows[i].pid == (long)getpid() && !strcmp(rows[i].host, host);
        if (!own && runstore_run_live(st, &rows[i]))
            id = rows[i].id;
    }
    runstore_rows_free(rows, n);
    return id;
}

long session_followed_run(Session *s)
{
    if (s->attached > 0)
        return s->attached;
    RunStore *st = session_store(s);
    if (!st)
        return 0;
    char host[64] = "";
    if (gethostname(host, sizeof host - 1))
        snprintf(host, sizeof host, "localhost");
    long a = newest_live(st, "status=running", host), b = newest_live(st, "status=paused", host);
    return a > b ? a : b;
}

/* 1 when the screen should leave the session's ended job: `attach ID`/`open ID` chose a
 * run, or another process trains one (asked of the store at most once a second). */
static int follow_elsewhere(Session *s)
{
    if (s->attached > 0)
        return 1;
    double now = sysinfo_now();
    if (now >= s->live_checked + 1.0) {
        s->live_checked = now;
        s->live_elsewhere = session_followed_run(s);
    }
    return s->live_elsewhere > 0;
}

int session_snapshot(Session *s, Snapshot *dst)
{
    if (s->rec) {   /* the session's run, until its end has been seen and another is due */
        if (s->left_job == (const void *)s->rec ||
            (recorder_done(s->rec) && s->end_seen && follow_elsewhere(s))) {
            s->left_job = s->rec;   /* left once: it does not come back when that one ends */
            return 0;
        }
        recorder_snapshot(s->rec, dst);
        s->end_seen = recorder_done(s->rec) && trainer_is_done(dst->status);
        if (dst->run_id == s->run_id) {   /* a resumed run: its whole history on screen */
            prepend(&dst->loss, &dst->n_loss, &dst->cap_loss, s->prior_loss, s->n_prior_loss);
            prepend(&dst->val, &dst->n_val, &dst->cap_val, s->prior_val, s->n_prior_val);
        }
        return 1;
    }
    if (!s->sweep)
        return 0;
    /* a training sweep's current trial; an ended sweep's last trial only until another run
     * is to be followed (auto-follow resumes after the session's own job), then never again */
    if (sweep_runner_done(s->sweep) &&
        (s->left_job == (const void *)s->sweep || follow_elsewhere(s))) {
        s->left_job = s->sweep;
        return 0;
    }
    return sweep_runner_snapshot(s->sweep, dst) == 1;
}

