/* sweep_runner.h — runs a sweep's trials ONE AFTER ANOTHER on a thread of its own (the
 * default: one trial uses every core), or with parallel=K, K at a time in worker
 * processes (sweep_pool.h) that share the store and split the cores (parallel=ranks
 * under mpirun: one local worker and ranks 1..N-1, each training alone); the runner's thread
 * then hands out trials, waits, and reads each trial's result back from the store, and a
 * halving rung's survivors are chosen only once every trial of the rung has ended. Each trial is a normal run in the
 * run store (sweep_id set, tagged `sweep-<id>`), started by run_launch exactly as
 * `train` starts its run (record, checkpoint folder, trainer, recorder). Successive
 * halving (sweep.h) stops a trial at its rung with trainer_set_stop_at and later
 * continues a promoted one from its newest checkpoint as the same run.
 *
 * The sweep's state lives in the run store (sweeps.status, sweep_trials: pending,
 * running, done, stopped (early, by halving), failed, diverged, interrupted (its worker
 * process was killed; the sweep then ends `interrupted`, resumable), refused (the spec was
 * not written by this user: never trained until `sweep trust`)), so a stored sweep can be
 * continued after a quit or a crash (sweep_runner_open): trials done are not run again;
 * a trial that was running (its run now `interrupted` or `stopped`) continues from its
 * newest checkpoint, or restarts as the same run when it has none; halving decisions
 * are recomputed from the stored validation losses, so a half-written decision is
 * completed, never redone differently.
 * Not here: parsing specs (sweep.h), printing, or deciding what the user sees. */
#ifndef LM_SWEEP_RUNNER_H
#define LM_SWEEP_RUNNER_H

#include "err.h"
#include "recorder.h"
#include "sweep.h"

typedef struct SweepRunner SweepRunner;

typedef struct {
    long sweep_id;
    char name[48];
    char status[16];       /* the sweep: running | paused | finished | stopped | failed */
    SweepStrategy strategy;
    int total, done, running, pending, stopped_early, failed; /* failed includes diverged */
    int stopped;           /* trials whose run was stopped with `stop ID` (stopped_early:
                              by the halving at a rung); neither is ranked */
    int current;           /* the trial being trained (from 1), 0 = none */
    long current_run;      /* its run id */
    char current_params[SWEEP_PARAMS_LEN]; /* its swept values */
    long stop_at;          /* its target step (a halving rung), 0 = the whole budget */
    int rung, n_rungs;     /* halving: the rung being trained (from 0) and how many */
    int ended;             /* the runner's thread has finished */
    char message[LM_ERR_LEN]; /* the latest problem (a trial that failed, the store) */
} SweepProgress;

/* A new sweep from a finished spec (sweep_spec_finish): records it in the store at
 * db_path (status running; every trial pending with its values) and returns the runner,
 * not yet started. NULL with a message on failure (nothing is recorded then). */
SweepRunner *sweep_runner_create(const SweepSpec *spec, const char *db_path, char *err);

/* What a worker of a parallel sweep (sweep_pool.h) trains: trial `trial` (from 1) to
 * stop_at (0 = its budget) with `threads` threads (0 = its config's). */
typedef struct {
    int trial;
    long stop_at;
    int threads;
} SweepWorkerJob;

/* A stored sweep, to continue (job NULL): re-reads its spec and base configuration,
 * re-expands the trials and checks them against the stored ones; trials done are not run
 * again, interrupted and pending ones are. Or, with a job, a worker of a parallel sweep:
 * it trains that one trial as the one-by-one runner trains a trial (a new run, or its run
 * continued from its newest checkpoint), recording the trial's status; the sweep's own
 * status and the halving decisions stay with the parent. Started, stopped (stop:
 * checkpoint, trial pending) and destroyed like any runner. NULL with a message: no such
 * sweep or trial, the sweep has finished (job NULL), or one of its runs is being trained
 * by another live process; or a spec this user did not write (its code, runstore.h's
 * runstore_sweep_refusal: planted, edited, made by an older lmlab): its unsettled trials
 * (a worker's: its one) are recorded `refused` and nothing trains. */
SweepRunner *sweep_runner_open(long sweep_id, const char *db_path, const SweepWorkerJob *job,
                               char *err);

/* Once the thread has ended: LM_OK (every trial settled, or a worker's trial settled),
 * LM_ECANCEL (stopped) or the store's failure; LM_ESTATE while it runs. */
int sweep_runner_result(SweepRunner *r);

/* Starts the runner's thread. LM_OK, LM_ESTATE (already started) or LM_ENOMEM. */
int sweep_runner_start(SweepRunner *r, char *err);

/* Pause holds the current trial after its step (and does not start the next one);
 * resume releases it; stop ends the current trial cleanly (checkpoint written, the
 * trial stays pending so `sweep resume ID` continues it) and then the sweep (stored as
 * stopped). All return at once; the thread acts within ~50 ms. */
void sweep_runner_pause(SweepRunner *r);
void sweep_runner_resume(SweepRunner *r);
void sweep_runner_stop(SweepRunner *r);

/* Waits for the thread to end. */
void sweep_runner_join(SweepRunner *r);
/* 1 once the thread has ended (every trial settled, stopped, or a store failure). */
int sweep_runner_done(SweepRunner *r);
/* Stops (as sweep_runner_stop), joins and frees. NULL is a no-op. */
void sweep_runner_destroy(SweepRunner *r);

long sweep_runner_id(const SweepRunner *r);
/* The spec being run (valid for the runner's lifetime). */
const SweepSpec *sweep_runner_spec(const SweepRunner *r);

/* Progress counts and the current trial, copied under the runner's lock. */
void sweep_runner_progress(SweepRunner *r, SweepProgress *p);
/* Counts one trial of status (pending | running | done | stopped | failed | diverged) into
 * p; a stopped one as stopped_early when the halving stopped it (early), else as stopped:
 * the one tally of a live runner's trials and of a stored sweep's. */
void sweep_progress_count(SweepProgress *p, const char *status, int early);

/* Sweep id's progress from the store alone (sweep_stored.c), for any process: the counts
 * of its trials' stored statuses, its stored status (ended once it is neither running nor
 * paused), and as current the first running trial whose process is alive; *live says
 * whether any of its trials' processes is alive (a sweep "running" in the store with none
 * alive for long has lost its process). LM_OK, LM_EARG "no sweep N", or the store's error. */
int sweep_stored_progress(RunStore *st, long id, SweepProgress *p, int *live, char *err);

/* The current trial's snapshot (or the last trial's once it ended), copied under a lock
 * into dst (its series arrays are reused; free with snapshot_free). Returns 1 when a
 * trial has a snapshot, 0 when none has started (dst untouched). */
int sweep_runner_snapshot(SweepRunner *r, Snapshot *dst);

#endif
