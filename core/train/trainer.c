/* trainer.c — the training thread: construction from a configuration, control (start,
 * pause, resume, stop), the event queue and the step loop (see trainer.h). The periodic
 * tasks (evaluations, samples, checkpoints) are in trainer_tasks.c. */
#include "private/trainer_impl.h"

#include "dist.h"
#include "err.h"
#include "matmul.h"
#include "sysinfo.h"
#include "trainer_dist.h"
#include "update.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Pushes a batch of named series (diagnostics) as a TEV_SERIES event; NULL: nothing. */
static void trainer_push_series(Trainer *t, SeriesBatch *b)
{
    if (!b) return;
    TrainEvent ev = {.kind = TEV_SERIES, .series = b};
    trainer_push(t, &ev);
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

/* ---- construction ---- */

static int load_data(Trainer *t, Tokenizer *given, char *err)
{
    TokenizerKind kind;
    TokenizerOptions opt;
    int rc = dataset_tokenizer_options(&t->cfg, &kind, &opt, err);
    if (rc) {
        tokenizer_destroy(given);   /* dataset_load owned it from here on */
        return rc;
    }
    if (!t->opt.data_dir[0])
        return dataset_load_opts(&t->ds, t->cfg.data, kind, &opt, t->cfg.train_frac, given, err);
    rc = dataset_load_opts(&t->ds, t->opt.data_dir, kind, &opt, t->cfg.train_frac, given, err);
    if (!rc)   /* the corpus's name, as the user gave it; its source is the cache */
        snprintf(t->ds.name, sizeof t->ds.name, "%.255s", t->cfg.data);
    return rc;
}

/* The tokenizer and weights a run starts from: resume (same run) or init_from. */
static int open_start_checkpoint(Trainer *t, const char *path, CheckpointInfo *info,
                                 SafeTensors **st, Tokenizer **tok, char *err)
{
    int rc = checkpoint_open(path, info, st, err);
    if (rc)
        return rc;
    if (info->tokenizer_json && (rc = tokenizer_load(info->tokenizer_json, tok, err))) {
        char e2[LM_ERR_LEN];
        snprintf(e2, sizeof e2, "%.200s: its tokenizer is damaged: %.280s", path, err);
        strcpy(err, e2);
    }
    (void)t;
    return rc;
}

static long compute_total_steps(Trainer *t)
{
    const Config *c = &t->cfg;
    size_t n = t->ds.n[SPLIT_TRAIN];
    size_t per_stream = n / (size_t)c->batch;
    if (c->batching_kind == CONFIG_BATCHING_STREAM)
        t->steps_per_epoch = per_stream > 1 ? (long)((per_stream - 2) / (size_t)c->bptt) + 1 : 1;
    else
        t->steps_per_epoch = (long)(n / ((size_t)c->batch * (size_t)c->bptt));
    if (t->steps_per_epoch < 1)
        t->steps_per_epoch = 1;
    return c->steps > 0 ? c->steps : (long)c->epochs * t->steps_per_epoch;
}

static int setup_training(Trainer *t, char *err)
{
    Config *c = &t->cfg;
    OptimKind ok;
    SchedKind sk;
    optim_kind_parse(c->optimizer, &ok);
    schedule_kind_parse(c->schedule, &sk);
    int rc = optim_init(&t->optim, ok, t->m->params.total, c->beta1, c->beta2, c->eps,
                        c->weight_decay, c->momentum, err);
    if (rc)
        return rc;
    t->optim.decay_all = config_decays_all(c);
    t->total_steps = compute_total_steps(t);
    schedule_init(&t->sched, sk, c->lr, t->total_steps, c->warmup, c->step_size, c->gamma,
                  c->min_lr, c->patience, c->factor);
    size_t n = t->ds.n[SPLIT_TRAIN];
    if (n < (size_t)c->bptt + 2 || n / (size_t)c->batch < 3)
        return err_set(err, LM_EARG, "the training split (%zu tokens) is too short for "
                       "batch=%d x bptt=%d", n, c->batch, c->bptt);
    batcher_init(&t->batcher, &t->ds.split[SPLIT_TRAIN], c->batch, c->bptt,
                 c->batching_kind == CONFIG_BATCHING_STREAM ? BATCH_STREAM : BATCH_RANDOM,
                 (unsigned long long)c->seed);
    t->x = malloc((size_t)c->batch * c->bptt * sizeof(int));
    t->y = malloc((size_t)c->batch * c->bptt * sizeof(int));
    if (!t->x || !t->y)
        return err_set(err, LM_ENOMEM, "out of memory for batches");
    t->m->carry_state = c->batching_kind == CONFIG_BATCHING_STREAM;
    if ((rc = config_parse_eval_marks(c->eval_at_seconds, t->marks, &t->n_marks, err)))
        return rc;
    t->best_val = NAN;
    t->ts.best_val = NAN;
    t->best_written = -1;
    t->saved_step = -1;
    return LM_OK;
}

static int build_model(Trainer *t, char *err)
{
    Config *c = &t->cfg;
    /* the shard plan: from the settings alone (resolved into the settings the run and its
     * checkpoints record); the processes own contiguous shares of it */
    ShardPlan plan;
    int rc = shardplan_init(&plan, c->batch, c->shards, err);
    if (rc)
        return rc;
    int N = dist_size(), lo, hi;
    if (c->batch < N)
        return err_set(err, LM_EARG, "batch=%d is smaller than the %d processes: every "
                       "process needs at least one row of the batch (raise batch or lower "
                       "-np)", c->batch, N);
    if (plan.S < N)
        return err_set(err, LM_EARG, "shards=%d is fewer than the %d processes: every process "
                       "computes whole shards (set shards=%d or more, at most batch=%d; the "
                       "numbers then match any run with that shards= setting)", plan.S, N, N,
                       c->batch);
    shardplan_share(plan.S, N, dist_rank(), &lo, &hi);
    c->shards = plan.S;
    int V = tokenizer_vocab_size(t->ds.tok);
    rc = model_check_memory(c, V, c->batch, c->bptt, err);
    if (rc == LM_ENOMEM)
        return rc;
    t->m = model_create(c, V, err);
    if (!t->m)
        return LM_EARG;
    rc = model_alloc(t->m, c->batch, c->bptt, err);
    if (rc)
        return rc;
    int threads = c->threads > 0 ? c->threads : sysinfo_cores();
    t->reps = replicas_create(t->m, &plan, lo, hi, threads, c->bptt, err);
    if (t->reps && threads > hi - lo) {   /* a thread computes whole shards */
        char msg[LM_ERR_LEN];
        snprintf(msg, sizeof msg, "%d threads but %d shard%s here: %d thread%s compute "
                 "(shards=%d would let them all share a step; another shards= sums in "
                 "another order, so the numbers differ in rounding)", threads, hi - lo,
                 hi - lo == 1 ? "" : "s", hi - lo, hi - lo == 1 ? "" : "s",
                 threads * N < c->batch ? (threads * N < SHARDPLAN_MAX ? threads * N
                                                                        : SHARDPLAN_MAX)
                                        : (c->batch < SHARDPLAN_MAX ? c->batch : SHARDPLAN_MAX));
        trainer_push_text(t, TEV_LOG, msg);
    }
    if (t->reps && c->diagnostics > 0 &&
        !(t->diag = diag_create(t->m, t->reps, c->diagnostics, err)))
        return LM_ENOMEM;
    return t->reps ? LM_OK : LM_ENOMEM;
}

/* A resume that crosses a change of what decides the numbers besides the settings and the
 * seed (issue 35) says so: another shard plan sums in another order, another BLAS kernel
 * family or precision rounds differently, so the run goes on well but not bit-identically
 * to one that was never interrupted. */
static void note_resume_changes(Trainer *t, const Config *was, int has_config,
                                const char *kernels)
{
    char now[64], msg[LM_ERR_LEN];
    sysinfo_blas_kernels(now, sizeof now);
    if (kernels[0] && strcmp(kernels, now)) {
        snprintf(msg, sizeof msg, "resumed on other BLAS kernels (the checkpoint's: %s; "
                 "now: %s): products may round differently from here on, so the run is not "
                 "bit-identical to an uninterrupted one", kernels, now);
        trainer_push_text(t, TEV_LOG, msg);
    }
    if (!has_config)
        return;
    if (was->shards != t->cfg.shards) {
        if (was->shards)
            snprintf(msg, sizeof msg, "resumed with shards=%d where the checkpoint was "
                     "trained with shards=%d: the gradient is summed in another order from "
                     "here on (not bit-identical to an uninterrupted run; shards=%d keeps it)",
                     t->cfg.shards, was->shards, was->shards);
        else
            snprintf(msg, sizeof msg, "the checkpoint is from before shard plans (its steps "
                     "split the batch by thread): from here on the numbers follow shards=%d",
                     t->cfg.shards);
        trainer_push_text(t, TEV_LOG, msg);
    }
    if (strcmp(was->precision, t->cfg.precision)) {
        snprintf(msg, sizeof msg, "resumed in precision=%s where the checkpoint was trained "
                 "in %s: products round differently from here on", t->cfg.precision,
                 was->precision);
        trainer_push_text(t, TEV_LOG, msg);
    }
}

/* Recurrent models forget their carried state, in every replica. */
void trainer_reset_states(Trainer *t)
{
    if (t->reps)
        replicas_reset_state(t->reps);
}

/* precision=bf16: the model's products run in bf16 (matmul.h) where the CPU has a kernel;
 * elsewhere the run says why and trains in fp32, and its settings record fp32 (what ran). */
static void setup_precision(Trainer *t)
{
    if (strcmp(t->cfg.precision, "bf16"))
        return;
    char e[LM_ERR_LEN], msg[LM_ERR_LEN + 200];
    if (matmul_bf16_attach(t->m->params.data, t->m->params.total, e) == LM_OK)
        return;
    snprintf(msg, sizeof msg, "precision=bf16 is not available: %s; this run trains in fp32 "
             "(its settings say precision=fp32; `show machine` lists the CPU's bf16 support)", e);
    trainer_push_text(t, TEV_LOG, msg);
    snprintf(t->cfg.precision, sizeof t->cfg.precision, "fp32");
}

/* A resume: the training state the checkpoint info holds (step, RNGs, data position,
 * schedule, best) and the optimizer's moments beside it (fresh ones, said, when missing;
 * a damaged file refuses the resume: its run would not be the one never stopped). */
static int restore_state(Trainer *t, const CheckpointInfo *info, char *err)
{
    t->ts = info->ts;
    t->m->rng = info->ts.model_rng;
    batcher_set_state(&t->batcher, info->ts.batcher);
    t->sched.best = info->ts.sched.best;
    t->sched.bad_evals = info->ts.sched.bad_evals;
    t->sched.plateau_scale = info->ts.sched.plateau_scale;
    t->best_val = info->ts.best_val;
    while (t->next_mark < t->n_marks && t->marks[t->next_mark] <= t->ts.elapsed)
        t->next_mark++;   /* evaluated before the checkpoint */
    char e2[LM_ERR_LEN];
    int rc = checkpoint_read_optim(t->opt.resume, t->m, &t->optim, e2);
    if (rc == LM_EIO)
        trainer_push_text(t, TEV_LOG, "optimizer state not found next to the checkpoint: "
                              "continuing with fresh moments");
    else if (rc)
        return err_set(err, rc, "the optimizer state beside the checkpoint is damaged: %.300s; "
                       "resuming would go on with fresh moments, not as the run never stopped "
                       "would: restore the file, start a new run from an earlier checkpoint "
                       "(`fork ID step=N`), or delete the file to go on with fresh moments", e2);
    return LM_OK;
}

static Trainer *create_local(const Config *cfg, const TrainerOptions *opt, char *err)
{
    Trainer *t = calloc(1, sizeof *t);
    if (!t) {
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    t->cfg = *cfg;
    if (opt) t->opt = *opt;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    pthread_mutex_init(&t->step_mu, NULL);
    if (config_validate(&t->cfg, err))
        goto fail;
    sysinfo_set_threads(cfg->threads > 0 ? cfg->threads : sysinfo_cores());
    const char *start = t->opt.resume[0] ? t->opt.resume : t->cfg.init_from;
    CheckpointInfo info = {0};
    SafeTensors *st = NULL;
    Tokenizer *tok = NULL;
    if (start[0] && open_start_checkpoint(t, start, &info, &st, &tok, err))
        goto fail;
    int rc = load_data(t, tok, err);
    if (!rc) {   /* the tokenizer a start checkpoint fixed is the run's: its record, its
                  * checkpoints' settings and whether it has bits per character say so */
        TokenizerKind used = tokenizer_kind(t->ds.tok);
        t->cfg.tokenizer_kind = used;
        snprintf(t->cfg.tokenizer, sizeof t->cfg.tokenizer, "%s", tokenizer_kind_name(used));
    }
    if (!rc && st && !tok && info.vocab && info.vocab != tokenizer_vocab_size(t->ds.tok))
        rc = err_set(err, LM_EFORMAT, "%s has no tokenizer and a vocabulary of %d, but the "
                     "data gives %d", start, info.vocab, tokenizer_vocab_size(t->ds.tok));
    if (!rc && st) {   /* every tensor present with its shape before anything is allocated */
        rc = checkpoint_check_fits(&t->cfg, tokenizer_vocab_size(t->ds.tok), st, "", err);
        if (rc) {
            char e2[LM_ERR_LEN];
            snprintf(e2, sizeof e2, "%.200s: %.300s", start, err);
            strcpy(err, e2);
        }
    }
    if (!rc) rc = build_model(t, err);
    if (!rc) rc = setup_training(t, err);
    if (!rc && st && (rc = checkpoint_read_weights(t->m, st, "", err))) {
        char e2[LM_ERR_LEN];
        snprintf(e2, sizeof e2, "%.200s: %.300s", start, err);
        strcpy(err, e2);
    }
    char bad[96];   /* NaN/Inf weights warn on every way in, as open and import do */
    long n_bad = !rc && st ? checkpoint_count_nonfinite(t->m, bad, sizeof bad) : 0;
    if (n_bad) {
        char msg[LM_ERR_LEN];
        snprintf(msg, sizeof msg, "warning: %.200s holds %ld non-finite weights (NaN/Inf), "
                 "first in %s: training from them diverges at once", start, n_bad, bad);
        trainer_push_text(t, TEV_LOG, msg);
    }
    if (!rc && t->opt.resume[0] && info.has_state)
        rc = restore_state(t, &info, err);
    t->start_step = t->ts.step;
    t->start_tokens = t->ts.tokens;
    t->start_elapsed = t->ts.elapsed;
    Config was = info.cfg;   /* what trained the checkpoint (for note_resume_changes) */
    int resumed = !rc && t->opt.resume[0] && info.has_state, had_config = info.has_config;
    char kernels[sizeof info.kernels];
    snprintf(kernels, sizeof kernels, "%s", info.kernels);
    checkpoint_info_free(&info);
    safetensors_close(st);
    if (rc)
        goto fail;
    if (!(t->tok_json = tokenizer_save(t->ds.tok))) {
        err_set(err, LM_ENOMEM, "out of memory");
        goto fail;
    }
    setup_precision(t);
    if (resumed)
        note_resume_changes(t, &was, had_config, kernels);
    t->m->training = 1;
    return t;
fail:
    trainer_destroy(t);
    return NULL;
}

/* Under mpirun every rank builds the run rank 0 builds (trainer_dist.h). */
Trainer *trainer_create(const Config *cfg, const TrainerOptions *opt, char *err)
{
    trainer_dist_announce(cfg, opt);
    return trainer_dist_agree(create_local(cfg, opt, err), err);
}

void trainer_destroy(Trainer *t)
{
    if (!t)
        return;
    trainer_stop(t);
    trainer_join(t);
    trainer_dist_start(t, 0);  /* the other ranks drop it too, if it never started */
    TrainEvent ev;
    while (trainer_poll(t, &ev, 0))
        trainer_event_free(&ev);
    replicas_destroy(t->reps);
    diag_destroy(t->diag);
    if (t->m)
        matmul_bf16_detach(t->m->params.data);
    model_destroy(t->m);
    optim_free(&t->optim);
    dataset_free(&t->ds);
    free(t->tok_json);
    free(t->fold_buf);
    free(t->x);
    free(t->y);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->step_mu);
    free(t);
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
                         "lower lr or set clip (the last good checkpoint is kept)",
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
    if (rc == LM_EDIVERGED)
        end = TRAINER_DIVERGED;
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
        if (rc || (rc = check_high_loss(t, loss, err)))
            break;
        t->last_gnorm = gnorm;
        w->window_loss += loss;
        w->window_steps++;
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
    if ((!rc || t->data_failed) && w->window_steps > 0)   /* the steps since the last log
                                         row: the true last step is logged (a stop between
                                         log_every rows, a time budget, a failed read of the
                                         next batch); the window stays open for the checkpoint */
        emit_step(t, w->window_loss, w->window_steps, t_log, tok_log);
    trainer_dist_end(t);
    train_finish(t, rc, lead, err);
    return NULL;
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
