/* replicas.h — data-parallel training on the machine's cores: n model replicas share the
 * primary model's weights (one slab, read-only during a step), each runs a slice of the
 * batch's rows on its own thread with single-threaded BLAS, and their gradients are
 * summed into the primary's. For the sizes lmlab trains, this beats letting BLAS split
 * every (small) matrix product across threads: one fork-join per step instead of one
 * hand-off per product. n = 1 is the plain single-model path.
 * Dropout masks are keyed by the step's seed (one draw from the primary's stream) and the
 * global batch row (dropout.h), so a step is the same for any number of replicas and a run
 * stays reproducible (and resumable) from the primary's RNG alone.
 * The optimizer step and clipping are update.h's, run on these threads through
 * replicas_parallel_for. */
#ifndef LM_REPLICAS_H
#define LM_REPLICAS_H

#include "model.h"

#define REPLICAS_MAX 16

typedef struct Replicas Replicas;

/* Creates n-1 replicas of m (same configuration and vocabulary, activations for batch
 * rows ceil(B/n) x T) and n-1 worker threads. NULL with a message on failure. */
Replicas *replicas_create(Model *m, int n, int B, int T, char *err);
void replicas_destroy(Replicas *r);
int replicas_count(const Replicas *r);
/* Recurrent models: every replica forgets its carried state. */
void replicas_reset_state(Replicas *r);

/* Forward (and, when m->training, backward of the mean loss over the whole batch) of
 * x, y (B,T) split by rows across the replicas; gradients end up summed in the primary's
 * params.grad (zeroed first). *loss_sum and *count cover the whole batch. */
int replicas_step(Replicas *r, const int *x, const int *y, int B, int T, double *loss_sum,
                  long *count);

/* replicas_step in its two halves, for a caller that must learn the loss's token count
 * over several processes before the backward (trainer_dist.c): the forward of x, y (B,T)
 * (gradients zeroed when m->training), then the backward of every replica with gradients
 * scaled by `scale` (1 / the tokens the loss is a mean over) and summed into the
 * primary's params.grad. The backward is a no-op when m is not training. row0 is the
 * global index of x's first row when x is one process's share of a larger batch (dropout
 * masks follow the global row); 0 otherwise. */
int replicas_forward(Replicas *r, const int *x, const int *y, int B, int T, long row0,
                     double *loss_sum, long *count);
void replicas_backward(Replicas *r, float scale);

/* Runs fn(ctx, slice, lo, hi) for the replicas_count(r) slices of [0, n) (contiguous, in
 * order, each a multiple of 16 elements but the last, some possibly empty), each on its
 * replica's thread, and returns when all are done. For element-wise work on the
 * parameter slab between steps (update.c); fn must touch only its slice. r may be NULL
 * (one slice, on the caller's thread). */
void replicas_parallel_for(Replicas *r, void (*fn)(void *ctx, int slice, size_t lo, size_t hi),
                           void *ctx, size_t n);

#endif
