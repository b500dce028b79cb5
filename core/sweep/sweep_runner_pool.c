/* sweep_runner_pool.c — parallel=K and parallel=ranks: trials started in worker processes
 * (sweep_pool.h), the workers waited on with pause and stop relayed as signals, and each
 * ended worker's trial read back from the store (a killed one interrupted, one that failed
 * to settle it failed). Not here: the processes themselves (sweep_pool.c). */
#include "private/sweep_runner_impl.h"

#include "dist.h"
#include "sweep_pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Trial i's status and run as its worker left them in the store ("running" from a worker
 * that died reads as pending). */
static int reload_trial(SweepRunner *r, int i, char *err)
{
    SweepTrialRow *rows = NULL;
    int n = 0, rc = runstore_sweep_trials(r->st, r->id, &rows, &n, err);
    for (int j = 0; !rc && j < n; j++) {
        if (rows[j].trial != r->trials[i].k)
            continue;
        pthread_mutex_lock(&r->mu);
        r->ts[i].run_id = rows[j].run_id;
        snprintf(r->ts[i].status, sizeof r->ts[i].status, "%s",
                 !strcmp(rows[j].status, "running") ? "pending" : rows[j].status);
        pthread_mutex_unlock(&r->mu);
    }
    free(rows);
    return rc;
}

/* A trial whose worker was killed (kill -9, the OOM killer): interrupted, its run too,
 * so `sweep resume` continues it from its newest checkpoint; the sweep goes on. */
static int interrupt_trial(SweepRunner *r, int i, int sig, char *err)
{
    char why[200];
    snprintf(why, sizeof why, "its worker process was killed by signal %d; `sweep resume %ld`"
             " continues it from its newest checkpoint", sig, r->id);
    char msg[LM_ERR_LEN];
    snprintf(msg, sizeof msg, "trial %d: %s", r->trials[i].k, why);
    sweep_runner_set_message(r, msg);
    RunRow row;
    if (r->ts[i].run_id && runstore_get(r->st, r->ts[i].run_id, &row, err) == LM_OK) {
        int open_run = !strcmp(row.status, "running") || !strcmp(row.status, "paused");
        runstore_row_free(&row);
        if (open_run && runstore_run_set_status(r->st, r->ts[i].run_id, "interrupted", why, err))
            return LM_EDB;
    }
    return sweep_runner_set_trial(r, i, "interrupted", err);
}

/* A worker ended: read its trial back (pending at a halving rung, or settled). One killed
 * by a signal is interrupted; one that exited with an error without settling its trial
 * (the sweep not being stopped) failed. */
static int worker_ended(SweepRunner *r, int k, int code, int stopping, char *err)
{
    int i = k - 1, rc = reload_trial(r, i, err);
    if (rc)
        return rc;
    if (sweep_runner_settled(r->ts[i].status) || stopping || code == 0)
        return LM_OK;
    if (!strcmp(r->ts[i].status, "refused")) {   /* its worker found the spec not ours */
        char msg[LM_ERR_LEN];
        snprintf(msg, sizeof msg, "trial %d: refused: sweep %ld's spec was not written by you"
                 " (`sweep show %ld` says why)", k, r->id, r->id);
        sweep_runner_set_message(r, msg);
        return LM_OK;
    }
    if (code > 128)
        return interrupt_trial(r, i, code - 128, err);
    char why[128];
    snprintf(why, sizeof why, "its worker process ended with status %d before the trial "
             "settled", code);
    return sweep_runner_fail_trial(r, i, why, err);
}

/* Waits on the workers, relaying pause (SIGSTOP/SIGCONT) and stop (SIGTERM: each trial
 * checkpoints and stays pending), until a worker slot is free and the sweep is not paused
 * (want_free) or none runs.
 * LM_ECANCEL once a stopped sweep's workers have all ended. */
static int pool_wait(SweepRunner *r, int want_free, char *err)
{
    int stopping = 0, k, code, rc;
    for (;;) {
        while (sweep_pool_reap(r->pool, &k, &code))
            if ((rc = worker_ended(r, k, code, stopping, err)))
                return rc;
        pthread_mutex_lock(&r->mu);
        int stop = r->stop_req, pause = r->pause_req;
        pthread_mutex_unlock(&r->mu);
        if (stop && !stopping) {
            sweep_pool_signal(r->pool, SIGCONT);
            sweep_pool_signal(r->pool, SIGTERM);
            stopping = 1;
        } else if (!stopping && pause != r->workers_paused) {
            sweep_pool_signal(r->pool, pause ? SIGSTOP : SIGCONT);
            sweep_runner_set_status(r, pause ? "paused" : "running");
            r->workers_paused = pause;
        }
        int running = sweep_pool_running(r->pool);
        if (stopping && !running)
            return LM_ECANCEL;
        if (!stopping && (want_free ? sweep_pool_free(r->pool) > 0 && !pause : running == 0))
            return LM_OK;
        usleep(50000);
    }
}

/* Starts trial i in a worker once a slot is free (LM_OK at once when the start failed:
 * the trial is recorded as failed and the sweep goes on). */
int sweep_runner_pool_run(SweepRunner *r, int i, long stop_at, char *err)
{
    int rc = pool_wait(r, 1, err);
    if (rc)
        return rc;
    char why[LM_ERR_LEN];
    if (sweep_pool_spawn(r->pool, r->db_path, r->id, r->trials[i].k, stop_at, r->threads, why))
        return sweep_runner_fail_trial(r, i, why, err);
    pthread_mutex_lock(&r->mu);
    snprintf(r->ts[i].status, sizeof r->ts[i].status, "running");
    r->current = r->trials[i].k;
    r->stop_at = stop_at;
    pthread_mutex_unlock(&r->mu);
    /* the store says so at once, not when the worker has loaded its data (seconds later);
     * a failure only leaves it pending until the worker records it */
    char e2[LM_ERR_LEN];
    runstore_sweep_trial_started(r->st, r->id, r->trials[i].k, e2);
    return LM_OK;
}

/* parallel=K: waits until every started trial has ended (a no-op one by one). */
int sweep_runner_drain(SweepRunner *r, char *err)
{
    if (!r->pool)
        return LM_OK;
    int rc = pool_wait(r, 0, err);
    pthread_mutex_lock(&r->mu);
    r->current = 0;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* The cores split between K workers: each gets cores/K threads (at least 1), or the base's
 * threads= when that is fewer (0 = keep the trial's own setting). */
static int worker_threads(int k, int base_threads)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int per = cores > k ? (int)(cores / k) : 1;
    return base_threads > 0 && base_threads <= per ? 0 : per;
}

/* parallel=K: K local workers splitting this machine's cores; parallel=ranks under
 * mpirun -np N: rank 0's share as one local worker plus ranks 1..N-1, each host's cores
 * split between the ranks on it (hosts alike: rank 0's count is used for all). */
int sweep_runner_make_pool(SweepRunner *r, char *err)
{
    int par = r->spec.parallel, ranks = 0;
    if (par == SWEEP_PARALLEL_RANKS && dist_world_size() < 2) {
        sweep_runner_set_message(r, "parallel=ranks outside mpirun -np N (N >= 2): the trials run one "
                    "after another");
        return LM_OK;
    }
    if (par == SWEEP_PARALLEL_RANKS) {
        ranks = dist_world_size() - 1;
        par = 1;
    }
    if (par <= 1 && !ranks)
        return LM_OK;
    if (!(r->pool = sweep_pool_create(par, ranks, err)))
        return LM_EIO;
    r->threads = worker_threads(ranks ? dist_local_size() : par, r->spec.base_cfg.threads);
    return LM_OK;
}
