/* trainer_control.c — talking to a Trainer from other threads: the event queue (rank 0
 * alone reports), the status, the requests (pause, resume, stop, a checkpoint now, stop_at)
 * and the read-only accessors. Not here: building a run (trainer_create.c), the training
 * thread that answers the requests (trainer.c). */
#include "private/trainer_impl.h"

#include "dist.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *trainer_status_name(TrainerStatus s)
{
    static const char *names[] = {"idle", "running", "paused", "evaluating", "finished",
                                  "stopped", "diverged", "failed"};
    return s <= TRAINER_FAILED ? names[s] : "unknown";
}

int trainer_is_done(TrainerStatus s)
{
    return s == TRAINER_FINISHED || s == TRAINER_STOPPED || s == TRAINER_DIVERGED ||
           s == TRAINER_FAILED;
}

/* ---- events ---- */

void trainer_push(Trainer *t, TrainEvent *ev)
{
    EventNode *n = dist_rank() == 0 ? calloc(1, sizeof *n) : NULL; /* rank 0 alone reports */
    if (!n) {
        trainer_event_free(ev);
        return;
    }
    n->ev = *ev;
    n->ev.at_step = t->ts.step;
    pthread_mutex_lock(&t->mu);
    if (t->tail) t->tail->next = n; else t->head = n;
    t->tail = n;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

void trainer_push_text(Trainer *t, TrainEventKind kind, const char *text)
{
    TrainEvent ev = {.kind = kind, .text = strdup(text ? text : "")};
    trainer_push(t, &ev);
}

void trainer_set_status(Trainer *t, TrainerStatus s, const char *reason)
{
    pthread_mutex_lock(&t->mu);
    t->status = s;
    pthread_mutex_unlock(&t->mu);
    TrainEvent ev = {.kind = TEV_STATUS, .status = s, .text = strdup(reason ? reason : "")};
    trainer_push(t, &ev);
}

int trainer_poll(Trainer *t, TrainEvent *ev, double timeout)
{
    pthread_mutex_lock(&t->mu);
    if (!t->head && timeout > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)((timeout - floor(timeout)) * 1e9);
        ts.tv_sec += (time_t)floor(timeout) + ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        while (!t->head)
            if (pthread_cond_timedwait(&t->cv, &t->mu, &ts) == ETIMEDOUT)
                break;
    }
    EventNode *n = t->head;
    if (n) {
        t->head = n->next;
        if (!t->head) t->tail = NULL;
    }
    pthread_mutex_unlock(&t->mu);
    if (!n)
        return 0;
    *ev = n->ev;
    free(n);
    return 1;
}

void trainer_event_free(TrainEvent *ev)
{
    free(ev->gates);
    free(ev->sys);
    free(ev->text);
    free(ev->prompt);
    series_batch_free(ev->series);
    ev->series = NULL;
    ev->gates = NULL;
    ev->sys = NULL;
    ev->text = ev->prompt = NULL;
}

void trainer_set_run(Trainer *t, long run_id, const char *run_dir)
{
    t->opt.run_id = run_id;
    t->ts.run_id = run_id;
    snprintf(t->opt.run_dir, sizeof t->opt.run_dir, "%s", run_dir ? run_dir : "");
}

void trainer_set_store_id(Trainer *t, const char *store_id)
{
    snprintf(t->ts.store_id, sizeof t->ts.store_id, "%s", store_id ? store_id : "");
}

void trainer_checkpoint_now(Trainer *t)
{
    pthread_mutex_lock(&t->mu);
    t->ckpt_req = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

void trainer_set_stop_at(Trainer *t, long step)
{
    t->opt.stop_at = step;
}

void trainer_pause(Trainer *t)
{
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->pause_req, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t->mu);
}

void trainer_resume(Trainer *t)
{
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->pause_req, 0, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

void trainer_stop_because(Trainer *t, const char *why)
{
    pthread_mutex_lock(&t->mu);
    if (!t->stop_why[0])   /* the first cause stands */
        snprintf(t->stop_why, sizeof t->stop_why, "%s", why ? why : "");
    pthread_mutex_unlock(&t->mu);
    trainer_stop(t);
}

void trainer_stop(Trainer *t)
{
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->stop_req, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

void trainer_join(Trainer *t)
{
    if (t->started) {
        pthread_join(t->thread, NULL);
        t->started = 0;
    }
}

TrainerStatus trainer_status(Trainer *t)
{
    pthread_mutex_lock(&t->mu);
    TrainerStatus s = t->status;
    pthread_mutex_unlock(&t->mu);
    return s;
}

const Config *trainer_config(const Trainer *t) { return &t->cfg; }
const char *trainer_run_dir(const Trainer *t) { return t->opt.run_dir; }
const Dataset *trainer_dataset(const Trainer *t) { return &t->ds; }
long trainer_total_steps(const Trainer *t) { return t->total_steps; }
long trainer_step(const Trainer *t) { return __atomic_load_n(&t->ts.step, __ATOMIC_RELAXED); }
long trainer_param_count(const Trainer *t) { return model_param_count(t->m); }

void trainer_origin(const Trainer *t, StepMetric *at, long *fork_of)
{
    memset(at, 0, sizeof *at);
    at->step = t->start_step;
    at->tokens = t->start_tokens;
    at->elapsed = t->start_elapsed;
    *fork_of = t->opt.fork_of;
}
int trainer_vocab(const Trainer *t) { return t->m->vocab; }

void trainer_copy_params(Trainer *t, float *dst)
{
    pthread_mutex_lock(&t->step_mu);
    memcpy(dst, t->m->params.data, t->m->params.total * sizeof(float));
    pthread_mutex_unlock(&t->step_mu);
}
