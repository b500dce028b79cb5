/* sweep_runner.c — a sweep runner built and read (see sweep_runner.h): a new sweep recorded
 * in the run store with its pending trials, or a stored one opened again (its spec parsed,
 * its trials' statuses checked against the expansion, a spec this user did not write
 * refused); pause, resume, stop, join and the progress the UI reads. Not here: the trials'
 * training (sweep_runner_thread.c, sweep_runner_trial.c, sweep_runner_pool.c), the spec
 * and the halving rule (sweep.c), printing (commands/cmd_sweep.c). */
#include "private/sweep_runner_impl.h"

#include "runstore.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int *ks = calloc((size_t)r->n + 1, sizeof *ks);
    const char **params = calloc((size_t)r->n + 1, sizeof *params);
    int rc = !text || !cfg || !ks || !params ? err_set(err, LM_ENOMEM, "out of memory") : LM_OK;
    for (int i = 0; !rc && i < r->n; i++) {
        ks[i] = r->trials[i].k;
        params[i] = r->trials[i].params;
    }
    if (!rc) {   /* the sweep and its pending trials at once */
        snprintf(text, len, "%s\n%s", words, cfg);
        rc = runstore_sweep_create_trials(st, r->spec.name, text,
                                          sweep_strategy_name(spec->strategy), ks, params,
                                          r->n, &id, err);
    }
    free(text);
    free(cfg);
    free(ks);
    free(params);
    if (!rc)
        name_trials(r, id);
    if (!rc && !(rc = runstore_sweep_lock(st, id, err)))   /* a new id: nobody else has it */
        r->locked = 1;
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
        r->ts[i].early = rows[j].stopped_early;
        snprintf(r->ts[i].status, sizeof r->ts[i].status, "%s",
                 !strcmp(rows[j].status, "running") ? "pending" : rows[j].status);
        if (!sweep_runner_settled(r->ts[i].status) && (!only || rows[j].trial == only) &&
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
        if (sweep_runner_settled(r->ts[i].status) || (only && r->trials[i].k != only))
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

void sweep_progress_count(SweepProgress *p, const char *status, int early)
{
    if (!strcmp(status, "done")) p->done++;
    else if (!strcmp(status, "running")) p->running++;
    else if (!strcmp(status, "stopped") && early) p->stopped_early++;
    else if (!strcmp(status, "stopped")) p->stopped++;
    else if (!strcmp(status, "failed") || !strcmp(status, "diverged")) p->failed++;
    else p->pending++;
}

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
    for (int i = 0; i < r->n; i++)
        sweep_progress_count(p, r->ts[i].status, r->ts[i].early);
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
