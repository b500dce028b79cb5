/* update.h — the parameter update that ends a training step: the gradient norm, clipping
 * and the optimizer step, spread over the replicas' threads in slices of the parameter
 * slab (replicas_parallel_for) instead of on the caller's thread alone. With one thread
 * it is exactly optim_clip_grad_norm + optim_step; with more, the update is bit-identical
 * (element-wise) and the norm's double sum is grouped by slice (same lanes, a different
 * order of additions: the float norm may differ in its last bit).
 * Not here: the divergence check (the trainer's, between the two calls). */
#ifndef LM_UPDATE_H
#define LM_UPDATE_H

#include "optim.h"
#include "replicas.h"

/* The global L2 norm of ps->grad (before clipping). r may be NULL (one thread). */
float update_grad_norm(Replicas *r, const ParamSet *ps);

/* Clips the gradient as optim_clip_grad_norm does for this norm and max_norm (<= 0: no
 * clipping), then takes one optimizer step with learning rate lr. norm is update_grad_norm
 * of the same gradient and finite (asserted: a NaN norm would poison every weight). */
void update_apply(Replicas *r, Optimizer *o, ParamSet *ps, float norm, float max_norm,
                  float lr);

#endif
