/* sweep_runner_thread.c — the runner's thread: sweep_runner_start, then the trials in the
 * strategy's order (grid and random: each not yet settled; halving: rung by rung, the
 * entrants decided from the stored losses), each trained here or in a worker, and the
 * sweep's ending status. Not here: one trial (sweep_runner_trial.c), the workers
 * (sweep_runner_pool.c), the halving rule (sweep.c). */
#include "private/sweep_runner_impl.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* 1 when a trial was interrupted (halving then stops before deciding a rung), or with
 * unsettled, when any trial has not settled (the sweep then ends resumable, not finished:
 * a worker stopped by its own SIGTERM leaves its trial pending). */
static int any_left(SweepRunner *r, int unsettled)
{
    int any = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n && !any; i++)
        any = unsettled ? !sweep_runner_settled(r->ts[i].status) : !strcmp(r->ts[i].status, "interrupted");
    pthread_mutex_unlock(&r->mu);
    return any;
}

/* Trains trial i to stop_at: here, to its end (one by one), or started in a worker
 * (parallel=K; drain waits for every started trial). */
static int dispatch(SweepRunner *r, int i, long stop_at, char *err)
{
    return r->pool ? sweep_runner_pool_run(r, i, stop_at, err) : sweep_runner_run_trial(r, i, stop_at, err);
}


/* Grid and random: every trial not yet settled, in order. A trial whose run already
 * finished (the process died before the trial was marked) is marked done. */
static int run_plain(SweepRunner *r, char *err)
{
    for (int i = 0; i < r->n; i++) {
        if (sweep_runner_settled(r->ts[i].status))
            continue;
        RunRow row;
        if (r->ts[i].run_id && runstore_get(r->st, r->ts[i].run_id, &row, err) == LM_OK) {
            int finished = !strcmp(row.status, "finished");
            runstore_row_free(&row);
            if (finished) {
                if (sweep_runner_set_trial(r, i, "done", err))
                    return LM_EDB;
                continue;
            }
        }
        int rc = dispatch(r, i, 0, err);
        if (rc)
            return rc;
    }
    return sweep_runner_drain(r, err);
}

/* metric[t * n_rungs + j]: trial t's stored validation loss at step rungs[j] (NAN). */
static int load_rung_metrics(SweepRunner *r, double *metric, char *err)
{
    for (int t = 0; t < r->n; t++) {
        for (int j = 0; j < r->n_rungs; j++)
            metric[(size_t)t * r->n_rungs + j] = NAN;
        if (!r->ts[t].run_id)
            continue;
        SeriesPoint *pts = NULL;
        int np = 0, rc = runstore_series(r->st, r->ts[t].run_id, "val_loss", &pts, &np, err);
        if (rc)
            return rc;
        for (int k = 0; k < np; k++)
            for (int j = 0; j < r->n_rungs; j++)
                if (pts[k].step == r->rungs[j])
                    metric[(size_t)t * r->n_rungs + j] = pts[k].value;
        free(pts);
    }
    return LM_OK;
}

/* Marks the trials the decisions so far have stopped (idempotent). */
static int mark_stopped(SweepRunner *r, const int *alive, const int *stopped_at, char *err)
{
    char why[128];
    for (int t = 0; t < r->n; t++) {
        if (alive[t] || sweep_runner_settled(r->ts[t].status))
            continue;
        snprintf(why, sizeof why, "stopped early at step %ld (sweep %ld, rung %d)",
                 r->rungs[stopped_at[t]], r->id, stopped_at[t]);
        if (r->ts[t].run_id && runstore_run_set_status(r->st, r->ts[t].run_id, "stopped", why,
                                                       err))
            return LM_EDB;
        r->ts[t].early = 1;   /* by the halving: "stopped early" */
        if (sweep_runner_set_trial(r, t, "stopped", err))
            return LM_EDB;
    }
    return LM_OK;
}

/* One rung: decide who entered it from the stored losses, then train each entrant that
 * has not reached it yet (no loss stored at this rung; at the last rung: not done). */
static int run_rung(SweepRunner *r, int ri, double *metric, int *alive, int *stopped_at,
                    char *err)
{
    int rc = load_rung_metrics(r, metric, err);
    if (rc)
        return rc;
    if (sweep_halving_alive(metric, r->n, r->n_rungs, r->spec.eta, ri, alive, stopped_at) < 0)
        return err_set(err, LM_ENOMEM, "out of memory");
    if ((rc = mark_stopped(r, alive, stopped_at, err)))
        return rc;
    pthread_mutex_lock(&r->mu);
    r->rung = ri;
    pthread_mutex_unlock(&r->mu);
    int last = ri == r->n_rungs - 1;
    for (int t = 0; t < r->n; t++) {
        if (!alive[t] || sweep_runner_settled(r->ts[t].status))
            continue;
        if (!last && isfinite(metric[(size_t)t * r->n_rungs + ri]))
            continue;
        if ((rc = dispatch(r, t, last ? 0 : r->rungs[ri], err)))
            return rc;
    }
    return sweep_runner_drain(r, err); /* the rung's decision needs every entrant's loss at the rung */
}

static int run_halving(SweepRunner *r, char *err)
{
    double *metric = malloc((size_t)r->n * r->n_rungs * sizeof *metric);
    int *alive = malloc((size_t)r->n * 2 * sizeof *alive), rc = LM_OK;
    if (!metric || !alive)
        rc = err_set(err, LM_ENOMEM, "out of memory");
    for (int ri = 0; !rc && ri < r->n_rungs && !any_left(r, 0); ri++)
        rc = run_rung(r, ri, metric, alive, alive + r->n, err);
    free(metric);
    free(alive);
    return rc;
}

static void *runner_main(void *arg)
{
    SweepRunner *r = arg;
    char err[LM_ERR_LEN] = "";
    int rc = runstore_open(r->db_path, &r->st, err);
    if (!rc && r->only) {           /* a worker: its one trial; the sweep is its parent's */
        rc = sweep_runner_run_trial(r, r->only - 1, r->only_stop_at, err);
    } else if (!rc) {
        sweep_runner_set_status(r, "running");
        rc = sweep_runner_make_pool(r, err);
        if (!rc)
            rc = r->spec.strategy == SWEEP_HALVING ? run_halving(r, err) : run_plain(r, err);
    }
    if (rc && rc != LM_ECANCEL)
        sweep_runner_set_message(r, err);
    pthread_mutex_lock(&r->mu);
    r->rc = rc;
    pthread_mutex_unlock(&r->mu);
    if (!r->only)   /* a killed worker's trial left: resumable, not finished */
        sweep_runner_set_status(r, rc == LM_ECANCEL ? "stopped" : rc ? "failed"
                            : any_left(r, 1) ? "interrupted" : "finished");
    sweep_pool_destroy(r->pool); /* none left but after a store failure: those end now */
    r->pool = NULL;
    if (r->locked && r->st)   /* the sweep's end: another process may run it now */
        runstore_sweep_unlock(r->st, r->id);
    r->locked = 0;
    runstore_close(r->st);
    r->st = NULL;
    pthread_mutex_lock(&r->mu);
    r->ended = 1;
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int sweep_runner_start(SweepRunner *r, char *err)
{
    if (r->started)
        return err_set(err, LM_ESTATE, "the sweep has already started");
    if (pthread_create(&r->thread, NULL, runner_main, r))
        return err_set(err, LM_ENOMEM, "cannot start the sweep's thread");
    r->started = 1;
    return LM_OK;
}
