/* trainer.c — the training thread: trainer_start and the step loop (one optimizer step,
 * divergence, pauses, the step event, the periodic tasks when due, the ending and its
 * message). The tasks themselves (evaluations, samples, checkpoints) are in trainer_tasks.c;
 * construction in trainer_create.c, the event queue and control in trainer_control.c. */
#include "private/trainer_impl.h"

#include "dist.h"
#include "err.h"
#include "sysinfo.h"
#include "trainer_dist.h"
#include "update.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pushes a batch of named series (diagnostics) as a TEV_SERIES event; NULL: nothing. */
static void trainer_push_series(Trainer *t, SeriesBatch *b)
{
    if (!b) return;
    TrainEvent ev = {.kind = TEV_SERIES, .series = b};
    trainer_push(t, &ev);
}

/* Recurrent models forget their carried state, in every replica. */
void trainer_reset_states(Trainer *t)
{
    if (t->reps)
        replicas_reset_state(t->reps);
}

/* Where the learning-rate schedule stands for the next step: the step, or with
 * schedule_clock=time after the warmup (which counts optimizer steps, however slow they
 * are) the larger of it and the training clock's share of time_budget in steps (the clock
 * as the step begins: under mpirun rank 0's, from the control). */
static long schedule_position(const Trainer *t)
{
    long pos = t->ts.step;
    double budget = t->cfg.time_budget;
    if (budget > 0 && !strcmp(t->cfg.schedule_clock, "time") && pos >= t->cfg.warmup) {
        double by_time = t->ts.elapsed / budget * (double)t->total_steps;
        if (by_time > (double)pos)
            pos = by_time < (double)t->total_steps ? (long)by_time : t->total_steps;
    }
    return pos;
}

/* One optimizer step under step_mu. Returns LM_OK or LM_EDIVERGED (message in err). */
static int train_step(Trainer *t, double *loss, float *gnorm, long *count, char *err)
{
    Model *m = t->m;
    int new_epoch = 0;
    pthread_mutex_lock(&t->step_mu);
    int T = batcher_next(&t->batcher, t->x, t->y, &new_epoch, err);
    if (T < 0) {   /* every rank reads the same windows: they all stop here */
        pthread_mutex_unlock(&t->step_mu);
        t->data_failed = 1;   /* before the step: its weights are the last step's */
        *count = 0;
        return LM_EIO;
    }
    if (new_epoch)
        trainer_reset_states(t);
    double sum = 0;
    long n = 0;
    int rc = trainer_dist_step(t, T, &sum, &n);
    if (!rc) {
        *gnorm = update_grad_norm(t->reps, &m->params);
        *loss = sum / (double)(n ? n : 1);
        int finite = isfinite(*loss) && isfinite(*gnorm);
        /* diagnostics when due, and always at a diverging step (which tensor went bad) */
        if (t->diag && (diag_due(t->diag, t->ts.step + 1) || !finite))
            diag_collect(t->diag, m, t->reps, t->ts.step + 1);
        if (!finite) {
            trainer_push_series(t, diag_finish(t->diag, m, 0));
            char where[PARAMS_NAME_LEN + 32];
            trainer_find_nonfinite(m, where, sizeof where);
            rc = err_set(err, LM_EDIVERGED, "%s at step %ld: first non-finite value in %s; "
                         "lower lr or set clip",
                         isfinite(*loss) ? "gradient norm became non-finite" : "loss became NaN/Inf",
                         t->ts.step + 1, where);
        } else {
            update_apply(t->reps, &t->optim, &m->params, *gnorm, t->cfg.clip,
                         schedule_lr(&t->sched, t->sched_pos));
            trainer_push_series(t, diag_finish(t->diag, m, 1));
            __atomic_store_n(&t->ts.step, t->ts.step + 1, __ATOMIC_RELAXED);   /* trainer_step */
            t->ts.tokens += n;
            t->ts.epoch = batcher_epoch(&t->batcher);
        }
    } else {
        rc = err_set(err, rc, "forward failed at step %ld (%s)", t->ts.step + 1, err_name(rc));
    }
    pthread_mutex_unlock(&t->step_mu);
    *count = n;
    return rc;
}

/* A finite loss far above ln(V), the loss of a uniform guess, for diverge_patience steps
 * in a row: the run is lost even though nothing became NaN. LM_EDIVERGED (err) or LM_OK. */
static int check_high_loss(Trainer *t, double loss, char *err)
{
    const Config *c = &t->cfg;
    double uniform = log((double)(t->m->vocab > 1 ? t->m->vocab : 2));
    if (c->diverge_factor <= 0 || loss <= c->diverge_factor * uniform) {
        t->high_loss_steps = 0;
        return LM_OK;
    }
    if (++t->high_loss_steps < c->diverge_patience)
        return LM_OK;
    return err_set(err, LM_EDIVERGED, "loss %.4g at step %ld stayed above %g x ln(%d) = %.3g "
                   "(the loss of a uniform guess) for %d steps in a row: lower lr or set clip "
                   "(settings diverge_factor, diverge_patience)", loss, t->ts.step,
                   c->diverge_factor, t->m->vocab, c->diverge_factor * uniform,
                   t->high_loss_steps);
}

/* Blocks while paused; returns 1 when a stop was requested. why: the reason recorded with
 * the paused status (a failed checkpoint's message), "" for a pause the user asked for. */
static int trainer_wait_if_paused(Trainer *t, const char *why)
{
    pthread_mutex_lock(&t->mu);
    if (t->pause_req && !t->stop_req) {
        t->status = TRAINER_PAUSED;
        pthread_mutex_unlock(&t->mu);
        char at[64];   /* the exact step: the logged ones lag it by up to log_every */
        snprintf(at, sizeof at, "after step %ld", t->ts.step);
        TrainEvent ev = {.kind = TEV_STATUS, .status = TRAINER_PAUSED,
                         .text = strdup(why[0] ? why : at)};
        trainer_push(t, &ev);
        pthread_mutex_lock(&t->mu);
        while (t->pause_req && !t->stop_req) {
            if (t->ckpt_req && dist_size() == 1) {   /* a paused run's weights, asked for */
                t->ckpt_req = 0;
                pthread_mutex_unlock(&t->mu);
                trainer_checkpoint_or_pause(t, 0);
                pthread_mutex_lock(&t->mu);
                continue;
            }
            pthread_cond_wait(&t->cv, &t->mu);
        }
        t->status = TRAINER_RUNNING;
        pthread_mutex_unlock(&t->mu);
        if (!t->stop_req) {
            TrainEvent r = {.kind = TEV_STATUS, .status = TRAINER_RUNNING, .text = strdup("resumed")};
            trainer_push(t, &r);
        }
        pthread_mutex_lock(&t->mu);
    }
    int stop = t->stop_req;
    pthread_mutex_unlock(&t->mu);
    return stop;
}

static void emit_step(Trainer *t, double loss_acc, int n_acc, double t0, long tok0)
{
    TrainEvent ev = {.kind = TEV_STEP};
    StepMetric *s = &ev.step;
    s->step = t->ts.step;
    s->epoch = t->ts.epoch;
    s->tokens = t->ts.tokens;
    s->loss = (float)(loss_acc / (n_acc ? n_acc : 1));
    s->lr = schedule_lr(&t->sched, t->sched_pos);
    s->elapsed = t->ts.elapsed;
    double dt = sysinfo_now() - t0;
    s->tokens_per_s = dt > 0 ? (float)((t->ts.tokens - tok0) / dt) : 0;
    s->grad_norm = t->last_gnorm;
    trainer_push(t, &ev);
}

static int due(long step, int every)
{
    return every > 0 && step % every == 0;
}

/* The clock of the training time (TrainerOptions.clock). */
static double train_clock(const Trainer *t)
{
    return t->opt.clock ? t->opt.clock() : sysinfo_now();
}

/* Says how long a time mark's whole-split evaluation took (not training time). */
static void note_mark(Trainer *t, double seconds)
{
    char msg[160];
    snprintf(msg, sizeof msg, "evaluation at %.1f s of training (step %ld): the whole "
             "validation split in %.1f s, not counted", t->ts.elapsed, t->ts.step, seconds);
    trainer_push_text(t, TEV_LOG, msg);
}

/* Whether this step crossed a time of eval_at_seconds (rank 0's clock decides, every rank
 * learns it; every rank calls this at the same point). The step that ends the run does
 * not: the final whole-split evaluation is that time's. */
static int mark_due(Trainer *t)
{
    if (!t->n_marks)
        return 0;
    int cross = 0;
    if (dist_rank() == 0) {
        while (t->next_mark < t->n_marks && t->ts.elapsed >= t->marks[t->next_mark]) {
            t->next_mark++;
            cross = 1;
        }
        double budget = t->cfg.time_budget;
        if (t->ts.step >= t->total_steps || (budget > 0 && t->ts.elapsed >= budget))
            cross = 0;
    }
    return trainer_dist_flag(cross);
}

/* After a step: evaluation (rank 0; under mpirun the others do their share of a shared
 * one), sample and checkpoint when due, the other ranks' mirror of those. Sets *end when
 * the loop must end (a failed evaluation, a checkpoint that paused and was stopped) and
 * returns the status it ends with (err set), LM_OK otherwise. */
static int step_tasks(Trainer *t, int lead, int *end, char *err)
{
    const Config *c = &t->cfg;
    long s = t->ts.step;
    int improved = 0, whole = mark_due(t);   /* a time mark: the whole split */
    int evaluate = whole || (due(s, c->eval_every) && s < t->total_steps);
    if (!lead && evaluate && trainer_eval_shared(t, whole))
        trainer_do_eval(t, whole, err);   /* this rank's share of rank 0's evaluation */
    if (lead && evaluate) {
        double before = t->best_val, e0 = train_clock(t);
        int rc = trainer_do_eval(t, whole, err);
        if (rc && rc != LM_ECANCEL) {
            *end = 1;
            t->data_failed = rc == LM_EIO || rc == LM_EFORMAT;   /* tokseq_read's failures */
            return rc;
        }
        if (whole && !rc)
            note_mark(t, train_clock(t) - e0);
        improved = isnan(before) || t->best_val < before;
        if (improved)
            trainer_write_best(t);
    }
    if (lead && due(s, c->sample_every) && s < t->total_steps)
        trainer_do_sample(t);
    if (lead && due(s, c->checkpoint_every) && s < t->total_steps &&
        trainer_checkpoint_or_pause(t, improved)) {
        *end = 1;
        return t->fatal[0] ? err_set(err, LM_EFORMAT, "%s", t->fatal) : LM_OK;
    }
    if (!lead && s < t->total_steps)
        trainer_dist_mirror_tasks(t, evaluate,
                                  due(s, c->sample_every) || due(s, c->checkpoint_every));
    return LM_OK;
}

/* Rank 0's ending of a run that did not fail: the final evaluation and checkpoint (or
 * only the checkpoint when stopped) and the message saying how it ended, into err.
 * Returns its status; TRAINER_FAILED with t->fatal when the final checkpoint cannot be
 * written. */
static TrainerStatus lead_finish(Trainer *t, int stopped, char *err)
{
    const Config *c = &t->cfg;
    double final_s = -1;   /* wall seconds of the final evaluation (not training time) */
    if (!stopped) {
        double before = t->best_val, e0 = train_clock(t);
        int erc = trainer_do_eval(t, 1, err);
        final_s = erc ? -1 : train_clock(t) - e0;
        if (erc && erc != LM_ECANCEL)
            trainer_push_text(t, TEV_LOG, err);
        stopped = trainer_stopping(t);
        if (!stopped || !isnan(t->best_val))
            trainer_checkpoint_or_pause(t, !erc && (isnan(before) || t->best_val < before));
    } else {
        trainer_checkpoint_or_pause(t, 0);
    }
    if (t->fatal[0])
        return TRAINER_FAILED;
    stopped = stopped || t->unsaved[0];   /* a stop ended the wait for the checkpoint */
    int rung = t->opt.stop_at > 0 && t->ts.step >= t->opt.stop_at && t->ts.step < t->total_steps;
    if (rung)
        snprintf(err, LM_ERR_LEN, "reached step %ld (stop_at)", t->ts.step);
    else if (!stopped && c->time_budget > 0 && t->ts.step < t->total_steps)
        snprintf(err, LM_ERR_LEN, "time budget of %.0f s reached at step %ld", c->time_budget,
                 t->ts.step);
    else if (stopped) {   /* with its cause when one was given (SIGTERM, `stop ID`) */
        pthread_mutex_lock(&t->mu);
        snprintf(err, LM_ERR_LEN, "stopped at step %ld%s%s", t->ts.step,
                 t->stop_why[0] ? ": " : "", t->stop_why);
        pthread_mutex_unlock(&t->mu);
    }
    else if (t->opt.fork_of > 0)   /* a fork trained from its parent's step, not from 0 */
        snprintf(err, LM_ERR_LEN, "finished at step %ld: trained %ld steps from #%ld@%ld",
                 t->ts.step, t->ts.step - t->start_step, t->opt.fork_of, t->start_step);
    else
        snprintf(err, LM_ERR_LEN, "finished %ld steps", t->ts.step);
    size_t len = strlen(err);
    if (t->unsaved[0]) {   /* the store then lists the checkpoints that do exist */
        char last[96];
        if (t->saved_step >= 0)
            snprintf(last, sizeof last, "the last written is step %ld's", t->saved_step);
        else if (t->start_step > 0)
            snprintf(last, sizeof last, "the last is the one it started from (step %ld)",
                     t->start_step);
        else
            snprintf(last, sizeof last, "it has no checkpoint");
        snprintf(err + len, LM_ERR_LEN - len, "; the step-%ld checkpoint was not written "
                 "(%.300s): %s", t->ts.step, t->unsaved, last);
        len = strlen(err);
        final_s = -1;
    }
    if (final_s >= 0)   /* a fork's own seconds, not its parent's before the fork point */
        snprintf(err + len, LM_ERR_LEN - len, " after %.1f s of training; the final "
                 "evaluation took %.1f s more", t->ts.elapsed -
                 (t->opt.fork_of > 0 ? t->start_elapsed : 0), final_s);
    return stopped || rung ? TRAINER_STOPPED : TRAINER_FINISHED;
}

/* A run that failed reading its tokens (a file changed, truncated or damaged under it):
 * its weights are those of the last step it trained, so rank 0 writes them as a step
 * checkpoint (unless that step's is written) and says what to do, after the reason in err:
 * nothing trained is lost to a data failure. */
static void keep_after_data_failure(Trainer *t, char *err)
{
    size_t len = strlen(err);
    char resume[64] = "`train resume=ID`";
    if (t->opt.run_id > 0)
        snprintf(resume, sizeof resume, "`train resume=%ld`", t->opt.run_id);
    if (t->saved_step != t->ts.step && t->ts.step > t->start_step &&
        trainer_checkpoint_or_pause(t, 0) != LM_OK) {
        snprintf(err + len, LM_ERR_LEN - len, "; the step-%ld checkpoint could not be written",
                 t->ts.step);
        return;
    }
    if (t->ts.step > t->start_step || t->saved_step == t->ts.step)
        snprintf(err + len, LM_ERR_LEN - len, "; the step-%ld checkpoint keeps every step "
                 "trained: %s goes on from it", t->ts.step, resume);
}

/* A diverged run: which checkpoint is left to go on from, after the reason in err (the
 * diverged weights are never written), and whether the loss had already risen above the
 * bound when it was written (then going on from it diverges again). Before, every
 * divergence said "the last good checkpoint is kept", also when none had been written. */
static void say_kept_checkpoint(Trainer *t, char *err)
{
    size_t len = strlen(err);
    long last = t->saved_step >= 0 ? t->saved_step : t->start_step;
    long rose = t->high_loss_steps > 0 ? t->ts.step - t->high_loss_steps + 1 : -1;
    char id[24] = "ID";
    if (t->opt.run_id > 0)
        snprintf(id, sizeof id, "%ld", t->opt.run_id);
    if (last <= 0)
        snprintf(err + len, LM_ERR_LEN - len, "; no checkpoint was written before it "
                 "(checkpoint_every=%ld): nothing to go on from, start again with a lower lr",
                 (long)t->cfg.checkpoint_every);
    else if (rose > 0 && last >= rose)
        snprintf(err + len, LM_ERR_LEN - len, "; the last checkpoint, step %ld's, was "
                 "written after the loss rose above the bound (from step %ld): going on from "
                 "it diverges again, start again with a lower lr", last, rose);
    else if (t->saved_step >= 0)
        snprintf(err + len, LM_ERR_LEN - len, "; the last checkpoint, step %ld's, is kept: "
                 "`fork %s step=%ld lr=...` goes on from it", last, id, last);
    else
        snprintf(err + len, LM_ERR_LEN - len, "; no checkpoint since the step-%ld one it "
                 "started from: go on from that one with a lower lr", last);
}

/* The end of the run after its loop ended with rc: the final evaluation (rank 0 decides,
 * and the others join it when it is shared: the one decision, rank 0 must not change its
 * mind after saying so), then the status. */
static void train_finish(Trainer *t, int rc, int lead, char *err)
{
    int stopped = lead ? trainer_stopping(t) : 0;
    int final_eval = trainer_dist_flag(lead && !rc && !stopped);
    if (!lead && final_eval && trainer_eval_shared(t, 1))
        trainer_do_eval(t, 1, err);   /* this rank's share of rank 0's */
    TrainerStatus end;
    if (rc == LM_EDIVERGED) {
        end = TRAINER_DIVERGED;
        if (lead && t->opt.run_dir[0])
            say_kept_checkpoint(t, err);
    }
    else if (rc) {
        end = TRAINER_FAILED;
        if (lead && t->data_failed && t->opt.run_dir[0])
            keep_after_data_failure(t, err);
    }
    else if (!lead)
        end = TRAINER_FINISHED;   /* rank 0 evaluates, saves and reports the ending */
    else if ((end = lead_finish(t, stopped, err)) == TRAINER_FAILED)
        snprintf(err, LM_ERR_LEN, "%s", t->fatal);
    trainer_set_status(t, end, err);
}

static void *train_main(void *arg)
{
    Trainer *t = arg;
    const Config *c = &t->cfg;
    char err[LM_ERR_LEN] = "";
    double t_log = sysinfo_now();
    long tok_log = t->ts.tokens;
    int rc = LM_OK, end = 0;
    /* the log window lives in the training state: a checkpoint carries its open part, so
       a resumed run's rows are the same window means as an uninterrupted run's (issue 49) */
    TrainState *w = &t->ts;
    char how[96];   /* a fork is a new run: not "resumed" */
    if (t->opt.fork_of > 0)
        snprintf(how, sizeof how, "forked from run #%ld at step %ld", t->opt.fork_of,
                 t->ts.step);
    else
        snprintf(how, sizeof how, "%s", t->ts.step ? "resumed from a checkpoint" : "started");
    trainer_set_status(t, TRAINER_RUNNING, how);
    int lead = dist_rank() == 0;   /* under mpirun rank 0 alone evaluates, samples, saves */
    while (t->ts.step < t->total_steps && !end) {
        double p0 = sysinfo_now();
        int go = !trainer_wait_if_paused(t, "") &&
                 !(c->time_budget > 0 && t->ts.elapsed >= c->time_budget) &&
                 !(t->opt.stop_at > 0 && t->ts.step >= t->opt.stop_at);
        t_log += sysinfo_now() - p0;   /* a pause is no time of the window's speed */
        if (!trainer_dist_control(t, go))   /* rank 0's decision on every rank */
            break;
        double loss = 0;
        float gnorm = 0;
        long count = 0;
        double ts0 = train_clock(t);
        t->sched_pos = schedule_position(t);
        rc = train_step(t, &loss, &gnorm, &count, err);
        t->ts.elapsed += train_clock(t) - ts0;
        if (rc)
            break;
        t->last_gnorm = gnorm;
        w->window_loss += loss;   /* a step trained: counted, even one that ends the run */
        w->window_steps++;
        if ((rc = check_high_loss(t, loss, err)))
            break;
        if (due(t->ts.step, c->log_every) || t->ts.step == t->total_steps) {
            emit_step(t, w->window_loss, w->window_steps, t_log, tok_log);
            w->window_loss = 0;
            w->window_steps = 0;
            t_log = sysinfo_now();
            tok_log = t->ts.tokens;
        }
        rc = step_tasks(t, lead, &end, err);
        if (!rc && !end && __atomic_load_n(&t->ckpt_req, __ATOMIC_ACQUIRE) &&
            dist_size() == 1) {   /* asked for by `checkpoint ID` (trainer_checkpoint_now) */
            __atomic_store_n(&t->ckpt_req, 0, __ATOMIC_RELEASE);
            if (!due(t->ts.step, c->checkpoint_every) && trainer_checkpoint_or_pause(t, 0)) {
                end = 1;   /* as a periodic checkpoint's failure ends the loop */
                if (t->fatal[0])
                    rc = err_set(err, LM_EFORMAT, "%s", t->fatal);
            }
        }
    }
    if ((!rc || t->data_failed || rc == LM_EDIVERGED) && w->window_steps > 0)
        /* the steps since the last log row: the true last step is logged (a stop between
           log_every rows, a time budget, a failed read of the next batch, a divergence);
           the window stays open for the checkpoint */
        emit_step(t, w->window_loss, w->window_steps, t_log, tok_log);
    trainer_dist_end(t);
    train_finish(t, rc, lead, err);
    return NULL;
}

int trainer_start(Trainer *t, char *err)
{
    if (t->started)
        return err_set(err, LM_ESTATE, "the run has already started");
    t->status = TRAINER_RUNNING;
    trainer_dist_start(t, 1);
    if (pthread_create(&t->thread, NULL, train_main, t)) {
        dist_abort(1);   /* the other ranks wait for this one's steps */
        return err_set(err, LM_ENOMEM, "cannot start the training thread");
    }
    t->started = 1;
    return LM_OK;
}
