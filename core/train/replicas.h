/* replicas.h — a training step's shards (shardplan.h) computed on the machine's cores. A
 * process holds one model per shard it owns (all of them on one process; a contiguous
 * range under mpirun): the primary model for the first, and replicas that share the
 * primary's weights (one slab, read-only during a step) for the others, each with its own
 * activations and gradient slab. Worker threads (`threads=`, at most one per model) each
 * run a contiguous range of the models, shard after shard, with single-threaded BLAS; the
 * shards' gradients are then folded into the primary's in the plan's one order (the right
 * fold, element by element, spread over the threads). So the step's numbers depend on the
 * plan only: any thread count gives the same bits.
 * Dropout masks are keyed by the step's seed (one draw from the primary's stream) and the
 * global batch row (dropout.h); recurrent state is carried per shard, in the shard's model.
 * The optimizer step and the norm are update.h's, run on these threads through
 * replicas_parallel_for / replicas_parallel_chunks. */
#ifndef LM_REPLICAS_H
#define LM_REPLICAS_H

#include "model.h"
#include "shardplan.h"

typedef struct Replicas Replicas;

/* Creates the models for shards [lo, hi) of plan (m, already allocated for the whole batch,
 * computes shard lo; the others get activations for ceil(B/S) rows x T) and
 * min(threads, hi - lo) - 1 worker threads; sets BLAS to one thread. NULL with a message
 * on failure. */
Replicas *replicas_create(Model *m, const ShardPlan *plan, int lo, int hi, int threads, int T,
                          char *err);
void replicas_destroy(Replicas *r);
int replicas_count(const Replicas *r);    /* threads (the caller's included) */
/* Thread i's models (0 <= i < replicas_count): [*lo, *hi), model k computing this
 * process's k-th shard in a training step. */
void replicas_thread_models(const Replicas *r, int i, int *lo, int *hi);
const ShardPlan *replicas_plan(const Replicas *r);
/* The model that computes shard `shard` of the plan on this process, or NULL when another
 * process holds it (its activations are the shard's last forward: diagnostics). */
Model *replicas_shard_model(Replicas *r, int shard);
/* Recurrent models: every shard's model forgets its carried state. */
void replicas_reset_state(Replicas *r);

/* The whole batch x, y (B,T) on this process: training (m->training, B = the plan's
 * batch, every shard owned): forward, backward of the mean loss and the fold, the
 * gradient in the primary's params.grad; evaluation (not training): the forward only, the
 * rows cut into shardplan_shards_for(B) shards over the models. *loss_sum (shard sums
 * added in shard order) and *count cover the whole batch.
 * Training runs two phases on the threads (the loss's token count is known from y:
 * decoder_loss_count): each shard's forward and backward, then the fold, which
 * also sums the squares of each fixed chunk of the gradient it made while the chunk is
 * in cache (for update_grad_norm: replicas_take_sumsq). The same bits as the three parts
 * below. */
int replicas_step(Replicas *r, const int *x, const int *y, int B, int T, double *loss_sum,
                  long *count);

/* When the primary's gradient ps->grad is still the one the last training replicas_step
 * folded (nothing of this Replicas ran since), copies that fold's chunk squares
 * (update_sumsq_chunks' lanes, SHARDPLAN_NORM_CHUNKS of them) into lanes and returns 1,
 * once; else 0. */
int replicas_take_sumsq(Replicas *r, const ParamSet *ps, double lanes[][8]);

/* A training step in its three parts, for a caller that holds a share of the shards
 * (trainer_dist.c). replicas_forward: the forward of this process's shards of the batch
 * x, y (the plan's B rows, T), gradients zeroed; shard s's loss sum and tokens in
 * loss[s], count[s] for s in [lo, hi) (the other entries are left alone). */
int replicas_forward(Replicas *r, const int *x, const int *y, int T, double *loss,
                     long *count);
/* The backward of every shard held, gradients scaled by `scale` (1 / the tokens the loss
 * is a mean over). No-op when the model is not training. */
void replicas_backward(Replicas *r, float scale);
/* The fold: the primary's params.grad = g_lo + (g_lo+1 + (... + (g_hi-1 + init))), init
 * being the fold of the shards after hi (another process's), or NULL when hi = S. */
void replicas_fold(Replicas *r, const float *init);

/* Runs fn(ctx, slice, lo, hi) for the replicas_count(r) slices of [0, n) (contiguous, in
 * order, each a multiple of 16 elements but the last, some possibly empty), each on its
 * thread, and returns when all are done. For element-wise work on the parameter slab
 * between steps (update.c); fn must touch only its slice. r may be NULL (one slice, on the
 * caller's thread). */
void replicas_parallel_for(Replicas *r, void (*fn)(void *ctx, int slice, size_t lo, size_t hi),
                           void *ctx, size_t n);
/* The same for n items that are not elements (update.c's fixed chunks): contiguous shares
 * of [0, n) with no rounding. */
void replicas_parallel_items(Replicas *r, void (*fn)(void *ctx, int slice, size_t lo, size_t hi),
                             void *ctx, size_t n);

#endif
