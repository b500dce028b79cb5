/* update.h — the parameter update that ends a training step: the gradient norm, clipping
 * and the optimizer step, spread over the replicas' threads in slices of the parameter
 * slab (replicas_parallel_for) instead of on the caller's thread alone. With one thread
 * it is optim_step after clipping; with any number the update is bit-identical
 * (element-wise) and so is the norm: its double sum is grouped by the plan's fixed chunks
 * (SHARDPLAN_NORM_CHUNKS, shardplan.h), not by thread, so it may differ in its last bit
 * from optim_clip_grad_norm's one long sum but never between thread counts.
 * Not here: the divergence check (the trainer's, between the two calls). */
#ifndef LM_UPDATE_H
#define LM_UPDATE_H

#include "optim.h"
#include "replicas.h"

/* The global L2 norm of ps->grad (before clipping). r may be NULL (one thread). Takes
 * the chunks' squares replicas_step's fold made of this gradient when there are some
 * (replicas_take_sumsq), else sums them here. */
float update_grad_norm(Replicas *r, const ParamSet *ps);

/* The squares of grad's fixed chunks c0 .. c1 - 1 (shardplan_chunk of a slab of total
 * floats), each into its 8 lanes (optim_sumsq8, from zero): the norm's one grouping,
 * whoever computes which chunk. */
void update_sumsq_chunks(const float *grad, size_t total, int c0, int c1,
                         double lanes[][8]);

/* Clips the gradient as optim_clip_grad_norm does for this norm and max_norm (<= 0: no
 * clipping), then takes one optimizer step with learning rate lr. norm is update_grad_norm
 * of the same gradient and finite (asserted: a NaN norm would poison every weight). */
void update_apply(Replicas *r, Optimizer *o, ParamSet *ps, float norm, float max_norm,
                  float lr);

#endif
