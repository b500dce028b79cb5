/* trainer_create.c — building a Trainer from a configuration: the dataset and tokenizer,
 * the shard plan, model and replicas, the optimizer and schedule, a start checkpoint's
 * weights and (on resume) training state; and trainer_destroy. Not here: the step loop
 * (trainer.c), the event queue and control (trainer_control.c). */
#include "private/trainer_impl.h"

#include "dist.h"
#include "err.h"
#include "matmul.h"
#include "sysinfo.h"
#include "trainer_dist.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (c->warmup >= t->total_steps) {   /* legal, but most likely a slip: said, not refused */
        char msg[LM_ERR_LEN];
        snprintf(msg, sizeof msg, "warmup=%d is not shorter than the run's %ld steps: the "
                 "learning rate climbs the whole run and ends at %.3g, never reaching lr=%g "
                 "(lower warmup, or raise steps)", c->warmup, t->total_steps,
                 (double)schedule_lr(&t->sched, t->total_steps - 1), c->lr);
        trainer_push_text(t, TEV_LOG, msg);
    }
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
 * schedule, best; a fork's best starts afresh) and the optimizer's moments beside it
 * (fresh ones, said, when missing; a damaged file refuses the resume: its run would not
 * be the one never stopped). */
static int restore_state(Trainer *t, const CheckpointInfo *info, char *err)
{
    t->ts = info->ts;
    t->m->rng = info->ts.model_rng;
    batcher_set_state(&t->batcher, info->ts.batcher);
    t->sched.best = info->ts.sched.best;
    t->sched.bad_evals = info->ts.sched.bad_evals;
    t->sched.plateau_scale = info->ts.sched.plateau_scale;
    /* a fork is a new run with its own best (best.safetensors, `runs`' best val): its
     * parent's best before the fork point is not a bar its evaluations must pass */
    t->best_val = t->ts.best_val = t->opt.fork_of > 0 ? NAN : info->ts.best_val;
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
