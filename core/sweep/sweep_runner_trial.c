/* sweep_runner_trial.c — one trial on the runner's thread: its settings (a continued
 * trial's stored ones, checked as this user's), its run launched, followed (relaying pause,
 * resume, stop) and settled; and the trial's and sweep's status, in memory and in the
 * store. Not here: the order of the trials (sweep_runner_thread.c), workers
 * (sweep_runner_pool.c). */
#include "private/sweep_runner_impl.h"

#include "run_launch.h"
#include "run_trust.h"
#include "runrecord.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Trial i's status, in memory (under the lock) and in the store. */
int sweep_runner_set_trial(SweepRunner *r, int i, const char *status, char *err)
{
    pthread_mutex_lock(&r->mu);
    snprintf(r->ts[i].status, sizeof r->ts[i].status, "%s", status);
    pthread_mutex_unlock(&r->mu);
    return runstore_sweep_trial_set(r->st, r->id, r->trials[i].k, r->ts[i].run_id,
                                    r->trials[i].params, status, err);
}

void sweep_runner_set_message(SweepRunner *r, const char *msg)
{
    pthread_mutex_lock(&r->mu);
    snprintf(r->message, sizeof r->message, "%s", msg);
    pthread_mutex_unlock(&r->mu);
}

void sweep_runner_set_status(SweepRunner *r, const char *status)
{
    char err[LM_ERR_LEN];
    pthread_mutex_lock(&r->mu);
    snprintf(r->status, sizeof r->status, "%s", status);
    pthread_mutex_unlock(&r->mu);
    if (r->st && runstore_sweep_set_status(r->st, r->id, status, err))
        sweep_runner_set_message(r, err);
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
                sweep_runner_set_status(r, "running");
            return stop;
        }
        if (!written++)
            sweep_runner_set_status(r, "paused");
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
            sweep_runner_set_status(r, pause ? "paused" : "running");
        }
        usleep(50000);
    }
    trainer_join(t);
    if (paused)
        sweep_runner_set_status(r, "running");
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
            status = "stopped", r->ts[i].early = 0;   /* by `stop ID`, not the halving */
        runstore_row_free(&row);
    }
    int rc = sweep_runner_set_trial(r, i, status, err);
    if (rc)
        return rc;
    return stop && !sweep_runner_settled(status) ? LM_ECANCEL : LM_OK;
}

/* A trial that could not start: failed (its run too, if it has one), the sweep goes on. */
int sweep_runner_fail_trial(SweepRunner *r, int i, const char *why, char *err)
{
    char msg[LM_ERR_LEN];
    snprintf(msg, sizeof msg, "trial %d: %.480s", r->trials[i].k, why);
    sweep_runner_set_message(r, msg);
    if (r->ts[i].run_id)
        runstore_run_set_status(r->st, r->ts[i].run_id, "failed", why, err);
    return sweep_runner_set_trial(r, i, "failed", err);
}

/* Trains trial i to stop_at (0 = its whole budget) as a new run or a continued one.
 * LM_OK when the trial ended on its own (its status recorded), LM_ECANCEL when the sweep
 * was stopped, another status when the store failed (the sweep cannot go on). */
int sweep_runner_run_trial(SweepRunner *r, int i, long stop_at, char *err)
{
    if (hold_while_paused(r))
        return LM_ECANCEL;
    char why[LM_ERR_LEN], tag[32];
    Config cfg = r->trials[i].cfg;
    TrainerOptions o = {0};
    int rc = r->ts[i].run_id ? prepare_resume(r, i, &cfg, &o, why) : LM_OK;
    if (rc == LM_EARG)   /* its stored settings are refused: the trial fails, saying why */
        return sweep_runner_fail_trial(r, i, why, err);
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
        return sweep_runner_fail_trial(r, i, why, err);
    if ((rc = sweep_runner_set_trial(r, i, "running", err))) {
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
