/* optim.h — the optimizers (SGD with momentum, Adam, AdamW) over a ParamSet's flat slabs,
 * and global gradient-norm clipping. Update rules follow PyTorch 1.13 exactly
 * (pytorch.org/docs/1.13/generated/torch.optim.{SGD,Adam,AdamW}.html and
 * torch.nn.utils.clip_grad_norm_), including the order of the float operations, so a
 * run can be checked step by step against PyTorch.
 * Not a scheduler (schedule.h gives the lr of each step), not a divergence detector:
 * the trainer checks the norm optim_clip_grad_norm returns before stepping.
 * Checkpoint state: m, v (n floats each, when allocated) and t are the whole state. */
#ifndef LM_OPTIM_H
#define LM_OPTIM_H

#include "params.h"

#include <stddef.h>

typedef enum { OPTIM_SGD, OPTIM_ADAM, OPTIM_ADAMW } OptimKind;

typedef struct {
    OptimKind kind;
    float beta1, beta2, eps, weight_decay, momentum;
    float *m;          /* (n) first moment (Adam) / momentum buffer (SGD); NULL when unused */
    float *v;          /* (n) second moment (Adam, AdamW); NULL for SGD */
    size_t n;          /* floats in m and v: the ParamSet's total */
    long t;            /* steps taken */
    /* 1 (the default, PyTorch's behaviour): weight decay applies to every parameter.
     * 0: parameters whose ParamInfo.no_decay is set (biases, norms) get none, the usual
     * practice for transformers, which PyTorch only offers through parameter groups. */
    int decay_all;
    /* betas and weight decay as the decimals they were written as (0.9, not the float
     * 0.899999976): PyTorch keeps these as Python doubles, so bias corrections match. */
    double beta1_d, beta2_d, weight_decay_d;
} Optimizer;   /* caller-owned: optim_init / optim_free */

/* Sets up an optimizer for a ParamSet of n floats (ps->total) and allocates its zeroed
 * moments: SGD needs a momentum buffer only when momentum != 0, Adam/AdamW need m and v.
 * Returns LM_OK, LM_EARG (a beta outside [0,1), a negative eps, weight decay or
 * momentum, an unknown kind) or LM_ENOMEM, with a message in err. On failure *o holds
 * nothing to free (optim_free is still safe). */
int optim_init(Optimizer *o, OptimKind kind, size_t n, float beta1, float beta2, float eps,
               float weight_decay, float momentum, char *err);

/* Releases the moments and zeroes the struct; NULL is a no-op. */
void optim_free(Optimizer *o);

/* "sgd", "adam", "adamw" -> *kind. LM_OK, or LM_EARG for any other name. */
int optim_kind_parse(const char *name, OptimKind *kind);

/* The name optim_kind_parse accepts for kind ("adam"), or "?" for an invalid one. */
const char *optim_kind_name(OptimKind kind);

/* Returns the global L2 norm of grad[0..n) BEFORE clipping (accumulated in double).
 * When max_norm > 0 and the norm exceeds it, scales grad by max_norm/(norm + 1e-6) as
 * torch.nn.utils.clip_grad_norm_ does (PyTorch also "scales" by a clamped 1.0, a no-op).
 * A NaN or Inf norm is returned as is and grad is left untouched: the caller must then
 * not call optim_step (the run has diverged). max_norm <= 0 only measures. */
float optim_clip_grad_norm(float *grad,   /* (n) */
                           size_t n, float max_norm);

/* optim_clip_grad_norm and optim_step in parts, for a caller that runs them over slices
 * of the slab on several threads (update.h); one slice [0, total) gives the same bits.
 * optim_sumsq8 adds grad[0..n)'s squares into 8 double lanes (element i into lane i mod 8,
 * so a slice must start at a multiple of 8; the last n mod 8 go to lane 0);
 * optim_norm8 is the norm of the lanes' sum; optim_clip_coef the factor clipping
 * multiplies the gradient by (1 when it leaves it alone: max_norm <= 0, a norm within
 * it, or a non-finite norm). optim_step_begin counts the step; optim_step_range then
 * updates the parameters [lo, hi) of that step (any split of [0, ps->total) into ranges,
 * each once, gives optim_step's result). */
void optim_sumsq8(const float *grad, size_t n, double acc[8]);
float optim_norm8(const double acc[8]);
float optim_clip_coef(float norm, float max_norm);
void optim_step_begin(Optimizer *o);
void optim_step_range(Optimizer *o, const ParamSet *ps, float lr, size_t lo, size_t hi);

/* One update of every parameter in ps with learning rate lr, using ps->grad (which is
 * read, never modified). PyTorch 1.13 semantics:
 *   SGD:   g += wd*p; m = momentum*m + g (first step m = g); p -= lr*(momentum ? m : g)
 *   Adam:  g += wd*p (L2); m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
 *          p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 *   AdamW: p *= 1 - lr*wd (decoupled), then the Adam update without the L2 term.
 * With decay_all == 0, tensors marked no_decay get no weight decay. The optimizer must
 * have been initialised for n >= ps->total floats. Never fails, never allocates. */
void optim_step(Optimizer *o, const ParamSet *ps, float lr);

#endif
