/* sweep_runner.c — a sweep's trials, one after another on the runner's thread or K at a
 * time in worker processes (parallel=K, sweep_pool.h), with the sweep's state kept in the
 * run store (see sweep_runner.h). Not here: the spec and the halving rule (sweep.c),
 * printing (commands/cmd_sweep.c). */
#include "sweep_runner.h"
#include "run_trust.h"

#include "dist.h"
#include "run_launch.h"
#include "runrecord.h"
#include "runstore.h"
#include "sweep_pool.h"
#include "trainer.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


typedef struct {
    char status[16];       /* pending | running | done | stopped | failed | diverged */
    long run_id;           /* 0 = no run yet */
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

static int is_settled(const char *status)
{
    return !strcmp(status, "done") || !strcmp(status, "stopped") ||
           !strcmp(status, "failed") || !strcmp(status, "diverged");
}

/* Trial i's status, in memory (under the lock) and in the store. */
static int set_trial(SweepRunner *r, int i, const char *status, char *err)
{
    pthread_mutex_lock(&r->mu);
    snprintf(r->ts[i].status, sizeof r->ts[i].status, "%s", status);
    pthread_mutex_unlock(&r->mu);
    return runstore_sweep_trial_set(r->st, r->id, r->trials[i].k, r->ts[i].run_id,
                                    r->trials[i].params, status, err);
}

static void set_message(SweepRunner *r, const char *msg)
{
    pthread_mutex_lock(&r->mu);
    snprintf(r->message, sizeof r->message, "%s", msg);
    pthread_mutex_unlock(&r->mu);
}

static void set_sweep_status(SweepRunner *r, const char *status)
{
    char err[LM_ERR_LEN];
    pthread_mutex_lock(&r->mu);
    snprintf(r->status, sizeof r->status, "%s", status);
    pthread_mutex_unlock(&r->mu);
    if (r->st && runstore_sweep_set_status(r->st, r->id, status, err))
        set_message(r, err);
}

/* A trial that already has a run continues it: its stored config, its directory and
 * newest checkpoint (none: it restarts from step 0 as the same run). */
static int prepare_resume(SweepRunner *r, int i, Config *cfg, TrainerOptions *o, char *err)
{
    RunRow row;
    char e2[LM_ERR_LEN];
    int rc = runstore_get(r->st, r->ts[i].run_id, &row, err);
    if (rc)
        return rc;
    config_defaults(cfg);
    if (config_from_text(cfg, row.config, e2))
        *cfg = r->trials[i].cfg;
    snprintf(o->run_dir, sizeof o->run_dir, "%s", row.checkpoint_dir);
    if (runrecord_checkpoint_path(r->st, &row, "final", o->resume, sizeof o->resume, NULL, e2))
        o->resume[0] = 0;   /* none: the trial restarts from step 0 as the same run */
    /* stored settings act as this user: checked against its checkpoint, or with none (a
     * restart from step 0) by the code the run's settings carry */
    int bad = o->resume[0] ? run_trust_settings(o->resume, cfg, NULL, e2)
                           : run_trust_stored_paths(r->st, r->ts[i].run_id, row.config, NULL,
                                                    "train it (a trial takes none: re-create the sweep)", e2);
    runstore_row_free(&row);
    if (bad)
        return err_set(err, LM_EARG, "trial %d: %s", r->trials[i].k, e2);
    return LM_OK;
}

/* Blocks while the sweep is paused between trials; 1 when a stop was asked. */
static int hold_while_paused(SweepRunner *r)
{
    int written = 0;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        int stop = r->stop_req, pause = r->pause_req;
        pthread_mutex_unlock(&r->mu);
        if (stop || !pause) {
            if (written)
                set_sweep_status(r, "running");
            return stop;
        }
        if (!written++)
            set_sweep_status(r, "paused");
        usleep(50000);
    }
}

/* Follows the running trial until its recorder has written the end; relays pause,
 * resume and stop. Returns the trainer's final status. */
static TrainerStatus follow_trial(SweepRunner *r, Trainer *t, Recorder *rec)
{
    int paused = 0, stopped = 0;
    while (!recorder_done(rec)) {
        pthread_mutex_lock(&r->mu);
        int stop = r->stop_req, pause = r->pause_req;
        pthread_mutex_unlock(&r->mu);
        if (stop && !stopped) {
            trainer_stop(t);
            stopped = 1;
        } else if (pause != paused && !stopped) {
            if (pause)
                trainer_pause(t);
            else
                trainer_resume(t);
            paused = pause;
            set_sweep_status(r, pause ? "paused" : "running");
        }
        usleep(50000);
    }
    trainer_join(t);
    if (paused)
        set_sweep_status(r, "running");
    return trainer_status(t);
}

/* Makes rec the current trial's recorder (readers snapshot it), freeing the previous
 * trial's, whose run has ended; rec NULL: trial i has ended, its recorder stays readable. */
static void publish(SweepRunner *r, int i, Recorder *rec, long stop_at)
{
    Recorder *old = NULL;
    pthread_mutex_lock(&r->mu);
    if (rec) {
        old = r->rec;
        r->rec = rec;
    }
    r->current = rec ? r->trials[i].k : 0;
    r->stop_at = stop_at;
    pthread_mutex_unlock(&r->mu);
    recorder_destroy(old);
}

/* The trial's status after its trainer ended; LM_ECANCEL when the sweep was stopped. */
static int settle_trial(SweepRunner *r, int i, TrainerStatus end, long stop_at, char *err)
{
    pthread_mutex_lock(&r->mu);
    int stop = r->stop_req;
    pthread_mutex_unlock(&r->mu);
    const char *status = end == TRAINER_FINISHED ? "done"
                         : end == TRAINER_DIVERGED ? "diverged"
                         : end == TRAINER_FAILED ? "failed" : "pending";
    RunRow row;
    char e2[LM_ERR_LEN];
    /* stopped by its own `stop RUN` (not the sweep's stop, not at a halving rung): the
     * trial is stopped, as its run says, not pending (issue 46 item 7) */
    if (end == TRAINER_STOPPED && !stop && r->ts[i].run_id &&
        !runstore_get(r->st, r->ts[i].run_id, &row, e2)) {
        if (!strcmp(row.status, "stopped") && (stop_at <= 0 || row.last_step < stop_at))
            status = "stopped";
        runstore_row_free(&row);
    }
    int rc = set_trial(r, i, status, err);
    if (rc)
        return rc;
    return stop && !is_settled(status) ? LM_ECANCEL : LM_OK;
}

/* A trial that could not start: failed (its run too, if it has one), the sweep goes on. */
static int fail_trial(SweepRunner *r, int i, const char *why, char *err)
{
    char msg[LM_ERR_LEN];
    snprintf(msg, sizeof msg, "trial %d: %.480s", r->trials[i].k, why);
    set_message(r, msg);
    if (r->ts[i].run_id)
        runstore_run_set_status(r->st, r->ts[i].run_id, "failed", why, err);
    return set_trial(r, i, "failed", err);
}

/* Trains trial i to stop_at (0 = its whole budget) as a new run or a continued one.
 * LM_OK when the trial ended on its own (its status recorded), LM_ECANCEL when the sweep
 * was stopped, another status when the store failed (the sweep cannot go on). */
static int run_trial(SweepRunner *r, int i, long stop_at, char *err)
{
    if (hold_while_paused(r))
        return LM_ECANCEL;
    char why[LM_ERR_LEN], tag[32];
    Config cfg = r->trials[i].cfg;
    TrainerOptions o = {0};
    int rc = r->ts[i].run_id ? prepare_resume(r, i, &cfg, &o, why) : LM_OK;
    if (rc == LM_EARG)   /* its stored settings are refused: the trial fails, saying why */
        return fail_trial(r, i, why, err);
    if (rc)
        return err_set(err, rc, "%s", why);
    if (r->threads > 0)
        cfg.threads = r->threads;
    snprintf(tag, sizeof tag, "sweep-%ld", r->id);
    RunLaunchOptions lo = {.db_path = r->db_path, .store = r->st, .resume_id = r->ts[i].run_id,
                           .resume_from = o.resume, .resume_dir = o.run_dir, .tags = tag,
                           .sweep_id = r->id, .stop_at = stop_at};
    RunHandle h;
    rc = run_launch(&cfg, &lo, &h, why);
    if (h.run_id && !r->ts[i].run_id) {
        pthread_mutex_lock(&r->mu);
        r->ts[i].run_id = h.run_id;
        pthread_mutex_unlock(&r->mu);
    }
    if (rc == LM_ESTATE || rc == LM_EDB) /* the sweep cannot go on */
        return err_set(err, rc, "trial %d: %s", r->trials[i].k, why);
    if (rc)
        return fail_trial(r, i, why, err);
    if ((rc = set_trial(r, i, "running", err))) {
        run_launch_close(&h, 1);
        return rc;
    }
    publish(r, i, h.rec, stop_at);
    TrainerStatus end = follow_trial(r, h.trainer, h.rec);
    publish(r, i, NULL, 0);
    h.rec = NULL; /* published: stays readable until the next trial's replaces it */
    run_launch_close(&h, 0);
    return settle_trial(r, i, end, stop_at, err);
}

/* ---- parallel=K: trials in worker processes ------------------------------------------- */

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
    set_message(r, msg);
    RunRow row;
    if (r->ts[i].run_id && runstore_get(r->st, r->ts[i].run_id, &row, err) == LM_OK) {
        int open_run = !strcmp(row.status, "running") || !strcmp(row.status, "paused");
        runstore_row_free(&row);
        if (open_run && runstore_run_set_status(r->st, r->ts[i].run_id, "interrupted", why, err))
            return LM_EDB;
    }
    return set_trial(r, i, "interrupted", err);
}

/* 1 when a trial was interrupted (halving then stops before deciding a rung), or with
 * unsettled, when any trial has not settled (the sweep then ends resumable, not finished:
 * a worker stopped by its own SIGTERM leaves its trial pending). */
static int any_left(SweepRunner *r, int unsettled)
{
    int any = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n && !any; i++)
        any = unsettled ? !is_settled(r->ts[i].status) : !strcmp(r->ts[i].status, "interrupted");
    pthread_mutex_unlock(&r->mu);
    return any;
}

/* A worker ended: read its trial back (pending at a halving rung, or settled). One killed
 * by a signal is interrupted; one that exited with an error without settling its trial
 * (the sweep not being stopped) failed. */
static int worker_ended(SweepRunner *r, int k, int code, int stopping, char *err)
{
    int i = k - 1, rc = reload_trial(r, i, err);
    if (rc)
        return rc;
    if (is_settled(r->ts[i].status) || stopping || code == 0)
        return LM_OK;
    if (!strcmp(r->ts[i].status, "refused")) {   /* its worker found the spec not ours */
        char msg[LM_ERR_LEN];
        snprintf(msg, sizeof msg, "trial %d: refused: sweep %ld's spec was not written by you"
                 " (`sweep show %ld` says why)", k, r->id, r->id);
        set_message(r, msg);
        return LM_OK;
    }
    if (code > 128)
        return interrupt_trial(r, i, code - 128, err);
    char why[128];
    snprintf(why, sizeof why, "its worker process ended with status %d before the trial "
             "settled", code);
    return fail_trial(r, i, why, err);
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
            set_sweep_status(r, pause ? "paused" : "running");
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
static int pool_run(SweepRunner *r, int i, long stop_at, char *err)
{
    int rc = pool_wait(r, 1, err);
    if (rc)
        return rc;
    char why[LM_ERR_LEN];
    if (sweep_pool_spawn(r->pool, r->db_path, r->id, r->trials[i].k, stop_at, r->threads, why))
        return fail_trial(r, i, why, err);
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

/* Trains trial i to stop_at: here, to its end (one by one), or started in a worker
 * (parallel=K; drain waits for every started trial). */
static int dispatch(SweepRunner *r, int i, long stop_at, char *err)
{
    return r->pool ? pool_run(r, i, stop_at, err) : run_trial(r, i, stop_at, err);
}

/* parallel=K: waits until every started trial has ended (a no-op one by one). */
static int drain(SweepRunner *r, char *err)
{
    if (!r->pool)
        return LM_OK;
    int rc = pool_wait(r, 0, err);
    pthread_mutex_lock(&r->mu);
    r->current = 0;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* Grid and random: every trial not yet settled, in order. A trial whose run already
 * finished (the process died before the trial was marked) is marked done. */
static int run_plain(SweepRunner *r, char *err)
{
    for (int i = 0; i < r->n; i++) {
        if (is_settled(r->ts[i].status))
            continue;
        RunRow row;
        if (r->ts[i].run_id && runstore_get(r->st, r->ts[i].run_id, &row, err) == LM_OK) {
            int finished = !strcmp(row.status, "finished");
            runstore_row_free(&row);
            if (finished) {
                if (set_trial(r, i, "done", err))
                    return LM_EDB;
                continue;
            }
        }
        int rc = dispatch(r, i, 0, err);
        if (rc)
            return rc;
    }
    return drain(r, err);
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
        if (alive[t] || is_settled(r->ts[t].status))
            continue;
        snprintf(why, sizeof why, "stopped early at step %ld (sweep %ld, rung %d)",
                 r->rungs[stopped_at[t]], r->id, stopped_at[t]);
        if (r->ts[t].run_id && runstore_run_set_status(r->st, r->ts[t].run_id, "stopped", why,
                                                       err))
            return LM_EDB;
        if (set_trial(r, t, "stopped", err))
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
        if (!alive[t] || is_settled(r->ts[t].status))
            continue;
        if (!last && isfinite(metric[(size_t)t * r->n_rungs + ri]))
            continue;
        if ((rc = dispatch(r, t, last ? 0 : r->rungs[ri], err)))
            return rc;
    }
    return drain(r, err); /* the rung's decision needs every entrant's loss at the rung */
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
static int make_pool(SweepRunner *r, char *err)
{
    int par = r->spec.parallel, ranks = 0;
    if (par == SWEEP_PARALLEL_RANKS && dist_world_size() < 2) {
        set_message(r, "parallel=ranks outside mpirun -np N (N >= 2): the trials run one "
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

static void *runner_main(void *arg)
{
    SweepRunner *r = arg;
    char err[LM_ERR_LEN] = "";
    int rc = runstore_open(r->db_path, &r->st, err);
    if (!rc && r->only) {           /* a worker: its one trial; the sweep is its parent's */
        rc = run_trial(r, r->only - 1, r->only_stop_at, err);
    } else if (!rc) {
        set_sweep_status(r, "running");
        rc = make_pool(r, err);
        if (!rc)
            rc = r->spec.strategy == SWEEP_HALVING ? run_halving(r, err) : run_plain(r, err);
    }
    if (rc && rc != LM_ECANCEL)
        set_message(r, err);
    pthread_mutex_lock(&r->mu);
    r->rc = rc;
    pthread_mutex_unlock(&r->mu);
    if (!r->only)   /* a killed worker's trial left: resumable, not finished */
        set_sweep_status(r, rc == LM_ECANCEL ? "stopped" : rc ? "failed"
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

/* ---- construction and control ---------------------------------------------------------- */

static SweepRunner *runner_alloc(const SweepSpec *spec, const char *db_path, char *err)
{
    if (spec->n_trials < 1) {
        err_set(err, LM_EARG, "the sweep spec is not finished (sweep_spec_finish)");
        return NULL;
    }
    SweepRunner *r = calloc(1, sizeof *r);
    if (!r) {
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    r->spec = *spec;
    snprintf(r->db_path, sizeof r->db_path, "%s", db_path ? db_path : "");
    pthread_mutex_init(&r->mu, NULL);
    snprintf(r->status, sizeof r->status, "running");
    if (sweep_expand(&r->spec, &r->trials, &r->n, err) ||
        !(r->ts = calloc((size_t)r->n, sizeof *r->ts))) {
        if (r->trials)
            err_set(err, LM_ENOMEM, "out of memory");
        sweep_runner_destroy(r);
        return NULL;
    }
    for (int i = 0; i < r->n; i++)
        snprintf(r->ts[i].status, sizeof r->ts[i].status, "pending");
    if (spec->strategy == SWEEP_HALVING)
        r->n_rungs = sweep_halving_rungs(spec->min_steps, spec->eta, spec->base_cfg.steps,
                                         r->rungs, SWEEP_MAX_RUNGS);
    else
        r->n_rungs = 1;
    return r;
}

/* Once the id is known: the default name sweep<id> and the trials' run names. */
static void name_trials(SweepRunner *r, long id)
{
    r->id = id;
    if (!r->spec.name[0])
        snprintf(r->spec.name, sizeof r->spec.name, "sweep%ld", id);
    for (int i = 0; i < r->n; i++)
        snprintf(r->trials[i].cfg.name, sizeof r->trials[i].cfg.name, "%s-t%d", r->spec.name,
                 r->trials[i].k);
}

SweepRunner *sweep_runner_create(const SweepSpec *spec, const char *db_path, char *err)
{
    SweepRunner *r = runner_alloc(spec, db_path, err);
    if (!r)
        return NULL;
    RunStore *st;
    if (runstore_open(r->db_path, &st, err)) {
        sweep_runner_destroy(r);
        return NULL;
    }
    /* the spec words, then the base configuration, so a resume needs no experiment file */
    char words[8192];
    sweep_spec_to_text(&r->spec, words, sizeof words);
    char *cfg = config_to_text(&r->spec.base_cfg);
    size_t len = strlen(words) + strlen(cfg ? cfg : "") + 2;
    char *text = malloc(len);
    long id = 0;
    int rc = !text || !cfg ? err_set(err, LM_ENOMEM, "out of memory") : LM_OK;
    if (!rc) {
        snprintf(text, len, "%s\n%s", words, cfg);
        rc = runstore_sweep_create(st, r->spec.name, text, sweep_strategy_name(spec->strategy),
                                   &id, err);
    }
    free(text);
    free(cfg);
    if (!rc)
        name_trials(r, id);
    if (!rc && !(rc = runstore_sweep_lock(st, id, err)))   /* a new id: nobody else has it */
        r->locked = 1;
    for (int i = 0; !rc && i < r->n; i++)
        rc = runstore_sweep_trial_set(st, id, r->trials[i].k, 0, r->trials[i].params,
                                      "pending", err);
    runstore_close(st);
    if (rc) {
        sweep_runner_destroy(r);
        return NULL;
    }
    return r;
}

/* A stored spec: the words on the first line, the base configuration after it. */
static int parse_stored_spec(const char *text, SweepSpec *sp, char *err)
{
    sweep_spec_init(sp);
    const char *nl = strchr(text, '\n');
    size_t n = nl ? (size_t)(nl - text) : strlen(text);
    char *line = strndup(text, n), *save = NULL, e2[LM_ERR_LEN];
    int rc = line ? LM_OK : LM_ENOMEM;
    for (char *w = line ? strtok_r(line, " ", &save) : NULL; w && !rc;
         w = strtok_r(NULL, " ", &save))
        rc = sweep_spec_set_pair(sp, w, e2);
    free(line);
    config_defaults(&sp->base_cfg);
    if (!rc && nl && (rc = config_from_text(&sp->base_cfg, nl + 1, e2)) == LM_OK)
        sp->has_base_cfg = 1;
    if (!rc)
        rc = sweep_spec_finish(sp, NULL, e2);
    return rc ? err_set(err, LM_EFORMAT, "the stored spec is unreadable: %s", e2) : LM_OK;
}

/* Copies the stored trials' statuses and runs, checking they match the expansion. */
static int load_trials(SweepRunner *r, RunStore *st, int only, char *err)
{
    SweepTrialRow *rows = NULL;
    int n = 0, rc = runstore_sweep_trials(st, r->id, &rows, &n, err);
    for (int j = 0; !rc && j < n; j++) {
        int i = rows[j].trial - 1;
        if (i < 0 || i >= r->n || strcmp(rows[j].params, r->trials[i].params)) {
            rc = err_set(err, LM_EFORMAT, "sweep %ld: stored trial %d (%s) does not match its "
                         "spec", r->id, rows[j].trial, rows[j].params);
            break;
        }
        r->ts[i].run_id = rows[j].run_id;
        snprintf(r->ts[i].status, sizeof r->ts[i].status, "%s",
                 !strcmp(rows[j].status, "running") ? "pending" : rows[j].status);
        if (!is_settled(r->ts[i].status) && (!only || rows[j].trial == only) &&
            (!strcmp(rows[j].run_status, "running") || !strcmp(rows[j].run_status, "paused")))
            rc = err_set(err, LM_ESTATE, "sweep %ld: trial %d's run #%ld is %s in another "
                         "process; stop it there first", r->id, rows[j].trial,
                         rows[j].run_id, rows[j].run_status);
    }
    free(rows);
    return rc;
}

/* A spec this user did not write: every trial not settled (or a worker's one trial) is
 * recorded `refused`, never trained; `sweep trust` then `sweep resume` trains them. */
static int refuse_trials(SweepRunner *r, RunStore *st, int only, const char *why, char *err)
{
    for (int i = 0; i < r->n; i++) {
        if (is_settled(r->ts[i].status) || (only && r->trials[i].k != only))
            continue;
        if (runstore_sweep_trial_set(st, r->id, r->trials[i].k, r->ts[i].run_id,
                                     r->trials[i].params, "refused", err))
            return LM_EDB;
    }
    return err_set(err, LM_EARG, "%s", why);
}

SweepRunner *sweep_runner_open(long sweep_id, const char *db_path, const SweepWorkerJob *job,
                               char *err)
{
    RunStore *st;
    if (runstore_open(db_path, &st, err))
        return NULL;
    SweepRow row = {0};
    SweepSpec sp;
    SweepRunner *r = NULL;
    char refusal[LM_ERR_LEN] = "";
    int rc = runstore_sweep_get(st, sweep_id, &row, err);
    if (!rc && !job && !strcmp(row.status, "finished"))
        rc = err_set(err, LM_ESTATE, "sweep %ld has finished; `sweep show %ld` ranks its trials",
                     sweep_id, sweep_id);
    int locked = 0;   /* one runner of a sweep at a time (a worker job is its runner's) */
    if (!rc && !job && !(rc = runstore_sweep_lock(st, sweep_id, err)))
        locked = 1;
    if (!rc)   /* the stored spec trains as this user: only when this user wrote it */
        runstore_sweep_refusal(st, &row, refusal, sizeof refusal);
    if (!rc && (rc = parse_stored_spec(row.spec, &sp, err)) && refusal[0])
        err_set(err, LM_EARG, "%s", refusal);
    if (!rc && !(r = runner_alloc(&sp, db_path, err)))
        rc = LM_EARG;
    if (!rc && job && (job->trial < 1 || job->trial > r->n))
        rc = err_set(err, LM_EARG, "sweep %ld has trials 1..%d, not %d", sweep_id, r->n,
                     job->trial);
    if (!rc) {
        name_trials(r, sweep_id);
        rc = load_trials(r, st, job ? job->trial : 0, err);
    }
    if (!rc && refusal[0])
        rc = refuse_trials(r, st, job ? job->trial : 0, refusal, err);
    free(row.spec);
    if (rc && locked)
        runstore_sweep_unlock(st, sweep_id);
    runstore_close(st);
    if (rc) {
        sweep_runner_destroy(r);
        return NULL;
    }
    r->locked = locked;
    if (job) {
        r->only = job->trial;
        r->only_stop_at = job->stop_at > 0 ? job->stop_at : 0;
        r->threads = job->threads > 0 ? job->threads : 0;
    }
    return r;
}

int sweep_runner_result(SweepRunner *r)
{
    pthread_mutex_lock(&r->mu);
    int rc = r->ended ? r->rc : LM_ESTATE;
    pthread_mutex_unlock(&r->mu);
    return rc;
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

static void set_flag(SweepRunner *r, int *flag, int v)
{
    pthread_mutex_lock(&r->mu);
    *flag = v;
    pthread_mutex_unlock(&r->mu);
}

void sweep_runner_pause(SweepRunner *r) { set_flag(r, &r->pause_req, 1); }
void sweep_runner_resume(SweepRunner *r) { set_flag(r, &r->pause_req, 0); }
void sweep_runner_stop(SweepRunner *r) { set_flag(r, &r->stop_req, 1); }

void sweep_runner_join(SweepRunner *r)
{
    if (r->started && !r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = 1;
    }
}

int sweep_runner_done(SweepRunner *r)
{
    pthread_mutex_lock(&r->mu);
    int d = r->ended || !r->started;
    pthread_mutex_unlock(&r->mu);
    return d;
}

void sweep_runner_destroy(SweepRunner *r)
{
    if (!r)
        return;
    sweep_runner_stop(r);
    sweep_runner_join(r);
    RunStore *st;   /* never started: its lock is let go here, not at runner_main's end */
    char err[LM_ERR_LEN];
    if (r->locked && runstore_open(r->db_path, &st, err) == LM_OK) {
        runstore_sweep_unlock(st, r->id);
        runstore_close(st);
    }
    free(r->trials);
    free(r->ts);
    recorder_destroy(r->rec);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

long sweep_runner_id(const SweepRunner *r) { return r->id; }
const SweepSpec *sweep_runner_spec(const SweepRunner *r) { return &r->spec; }

void sweep_runner_progress(SweepRunner *r, SweepProgress *p)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_lock(&r->mu);
    p->sweep_id = r->id;
    snprintf(p->name, sizeof p->name, "%s", r->spec.name);
    snprintf(p->status, sizeof p->status, "%s", r->status);
    snprintf(p->message, sizeof p->message, "%s", r->message);
    p->strategy = r->spec.strategy;
    p->total = r->n;
    for (int i = 0; i < r->n; i++) {
        const char *s = r->ts[i].status;
        if (!strcmp(s, "done")) p->done++;
        else if (!strcmp(s, "running")) p->running++;
        else if (!strcmp(s, "stopped")) p->stopped_early++;
        else if (!strcmp(s, "failed") || !strcmp(s, "diverged")) p->failed++;
        else p->pending++;
    }
    p->current = r->current;
    p->current_run = r->current ? r->ts[r->current - 1].run_id : 0;
    if (r->current)
        snprintf(p->current_params, sizeof p->current_params, "%s",
                 r->trials[r->current - 1].params);
    p->stop_at = r->stop_at;
    p->rung = r->rung;
    p->n_rungs = r->n_rungs;
    p->ended = r->ended;
    pthread_mutex_unlock(&r->mu);
}

int sweep_runner_snapshot(SweepRunner *r, Snapshot *dst)
{
    pthread_mutex_lock(&r->mu);
    int have = r->rec != NULL;
    if (have)
        recorder_snapshot(r->rec, dst);
    pthread_mutex_unlock(&r->mu);
    return have;
}
