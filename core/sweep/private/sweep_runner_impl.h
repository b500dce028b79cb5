/* sweep_runner_impl.h — the SweepRunner's state, shared by sweep_runner.c (construction,
 * control, progress), sweep_runner_thread.c (the trials in the strategy's order),
 * sweep_runner_trial.c (one trial here; the trial's and sweep's status) and
 * sweep_runner_pool.c (trials in worker processes). Internal: callers use sweep_runner.h. */
#ifndef LM_SWEEP_RUNNER_IMPL_H
#define LM_SWEEP_RUNNER_IMPL_H

#include "err.h"
#include "recorder.h"
#include "runstore.h"
#include "sweep_pool.h"
#include "sweep_runner.h"

#include <pthread.h>
#include <string.h>

typedef struct {
    char status[16];       /* pending | running | done | stopped | failed | diverged */
    long run_id;           /* 0 = no run yet */
    int early;             /* stopped by the halving at a rung (not by `stop ID`) */
} TrialState;

struct SweepRunner {
    char db_path[1024];
    long id;
    SweepSpec spec;
    SweepTrial *trials;    /* (n) */
    TrialState *ts;        /* (n) */
    int n;
    long rungs[SWEEP_MAX_RUNGS];
    int n_rungs;
    RunStore *st;          /* the runner thread's own connection */
    pthread_t thread;
    int started, joined;
    pthread_mutex_t mu;    /* guards everything below and ts[].status */
    Recorder *rec;         /* the current trial's, or the last one's once it ended */
    int current, rung;
    long stop_at;
    int stop_req, pause_req, ended, rc;
    char status[16], message[LM_ERR_LEN];
    SweepPool *pool;       /* parallel=K: the worker processes; NULL = one by one here */
    int threads;           /* > 0: every trial trains with this many threads */
    int workers_paused;    /* parallel=K: the workers are held with SIGSTOP */
    int only;              /* a worker: the one trial it trains (from 1); 0 = the sweep */
    long only_stop_at;     /* a worker: that trial's target step (0 = its budget) */
    int locked;            /* holds the sweep's kernel lock (runstore_sweep_lock) */
};

/* Whether a trial's status is final (done, stopped, failed, diverged). */
static inline int sweep_runner_settled(const char *status)
{
    return !strcmp(status, "done") || !strcmp(status, "stopped") ||
           !strcmp(status, "failed") || !strcmp(status, "diverged");
}

/* sweep_runner_trial.c */
/* Trial i's status, in memory (under the lock) and in the store; the store's status. */
int sweep_runner_set_trial(SweepRunner *r, int i, const char *status, char *err);
/* The message progress shows (the latest failure or notice). */
void sweep_runner_set_message(SweepRunner *r, const char *msg);
/* The sweep's status, in memory and in the store (a store failure becomes the message). */
void sweep_runner_set_status(SweepRunner *r, const char *status);
/* A trial that could not start: failed (its run too, if it has one), the sweep goes on. */
int sweep_runner_fail_trial(SweepRunner *r, int i, const char *why, char *err);
/* Trains trial i to stop_at (0 = its whole budget) here as a new run or a continued one.
 * LM_OK when the trial ended on its own (its status recorded), LM_ECANCEL when the sweep
 * was stopped, another status when the store failed (the sweep cannot go on). */
int sweep_runner_run_trial(SweepRunner *r, int i, long stop_at, char *err);

/* sweep_runner_pool.c */
/* parallel=K (or ranks): creates r->pool and sets the threads each worker trains with;
 * LM_OK with no pool when the trials run one after another. */
int sweep_runner_make_pool(SweepRunner *r, char *err);
/* Starts trial i in a worker once a slot is free (LM_OK at once when the start failed:
 * the trial is recorded as failed and the sweep goes on); LM_ECANCEL once stopped. */
int sweep_runner_pool_run(SweepRunner *r, int i, long stop_at, char *err);
/* parallel=K: waits until every started trial has ended (a no-op one by one). */
int sweep_runner_drain(SweepRunner *r, char *err);

#endif
