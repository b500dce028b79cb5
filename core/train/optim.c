/* optim.c — SGD, Adam, AdamW and gradient clipping over flat slabs (see optim.h).
 * Each update is one elementwise loop the compiler vectorises for every CPU level
 * (CPU_CLONES, cpu.h: -fno-math-errno lets sqrtf vectorise); the float operations
 * follow PyTorch 1.13's _single_tensor_{sgd,adam,adamw} in order, so results agree with
 * PyTorch to float rounding. Not a parameter-group system: the only per-tensor choice is
 * whether weight decay applies (ParamInfo.no_decay, when decay_all is 0). */
#include "optim.h"

#include "cpu.h"
#include "err.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest decimal that rounds to f, as a double: 0.9f -> 0.9. Config values are
 * written as decimals and PyTorch keeps them as doubles; this recovers them. */
static double decimal_of(float f)
{
    char buf[32];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
        double d = strtod(buf, NULL);
        if ((float)d == f)
            return d;
    }
    return (double)f;
}

static float *zalloc_floats(size_t n)
{
    size_t bytes = ((n ? n : 1) * sizeof(float) + 63) & ~(size_t)63;
    float *p = aligned_alloc(64, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

int optim_init(Optimizer *o, OptimKind kind, size_t n, float beta1, float beta2, float eps,
               float weight_decay, float momentum, char *err)
{
    memset(o, 0, sizeof *o);
    if (kind != OPTIM_SGD && kind != OPTIM_ADAM && kind != OPTIM_ADAMW)
        return err_set(err, LM_EARG, "unknown optimizer kind %d", (int)kind);
    if (kind != OPTIM_SGD && !(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1))
        return err_set(err, LM_EARG, "Adam betas must lie in [0, 1), got beta1=%g beta2=%g",
                       (double)beta1, (double)beta2);
    if (!(eps >= 0) || !(weight_decay >= 0) || !(momentum >= 0))
        return err_set(err, LM_EARG,
                       "eps, weight_decay and momentum must be >= 0, got %g, %g, %g",
                       (double)eps, (double)weight_decay, (double)momentum);
    o->kind = kind;
    o->beta1 = beta1;
    o->beta2 = beta2;
    o->eps = eps;
    o->weight_decay = weight_decay;
    o->momentum = momentum;
    o->n = n;
    o->decay_all = 1;
    o->beta1_d = decimal_of(beta1);
    o->beta2_d = decimal_of(beta2);
    o->weight_decay_d = decimal_of(weight_decay);
    if (kind != OPTIM_SGD || momentum != 0) {
        o->m = zalloc_floats(n);
        if (!o->m)
            goto nomem;
    }
    if (kind != OPTIM_SGD) {
        o->v = zalloc_floats(n);
        if (!o->v)
            goto nomem;
    }
    return LM_OK;
nomem:
    optim_free(o);
    return err_set(err, LM_ENOMEM, "cannot allocate %zu MB of optimizer state",
                   (kind == OPTIM_SGD ? 1 : 2) * n * sizeof(float) >> 20);
}

void optim_free(Optimizer *o)
{
    if (!o)
        return;
    free(o->m);
    free(o->v);
    memset(o, 0, sizeof *o);
}

int optim_kind_parse(const char *name, OptimKind *kind)
{
    static const struct { const char *name; OptimKind kind; } table[] = {
        {"sgd", OPTIM_SGD}, {"adam", OPTIM_ADAM}, {"adamw", OPTIM_ADAMW},
    };
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) {
            *kind = table[i].kind;
            return LM_OK;
        }
    return LM_EARG;
}

const char *optim_kind_name(OptimKind kind)
{
    switch (kind) {
    case OPTIM_SGD: return "sgd";
    case OPTIM_ADAM: return "adam";
    case OPTIM_ADAMW: return "adamw";
    }
    return "?";
}

CPU_CLONES
void optim_sumsq8(const float *grad, size_t n, double acc[8])
{
    /* eight double lanes so the sum vectorises without reassociating a single chain */
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++)
            acc[j] += (double)grad[i + j] * (double)grad[i + j];
    for (; i < n; i++)
        acc[0] += (double)grad[i] * (double)grad[i];
}

float optim_norm8(const double acc[8])
{
    return (float)sqrt(((acc[0] + acc[1]) + (acc[2] + acc[3])) +
                       ((acc[4] + acc[5]) + (acc[6] + acc[7])));
}

float optim_clip_coef(float norm, float max_norm)
{
    if (!isfinite(norm) || !(max_norm > 0))
        return 1.0f;
    /* PyTorch: clip_coef = max_norm / (total_norm + 1e-6), clamped to at most 1 */
    float coef = (float)((double)max_norm / ((double)norm + 1e-6));
    return coef < 1.0f ? coef : 1.0f;
}

CPU_CLONES
float optim_clip_grad_norm(float *grad, size_t n, float max_norm)
{
    double acc[8] = {0};
    optim_sumsq8(grad, n, acc);
    float norm = optim_norm8(acc), coef = optim_clip_coef(norm, max_norm);
    if (coef < 1.0f)
        for (size_t k = 0; k < n; k++)
            grad[k] *= coef;
    return norm;
}

/* The per-step constants of an Adam/AdamW update. */
typedef struct {
    float b1, c1, b2, c2;   /* beta1, 1-beta1, beta2, 1-beta2 */
    float neg_step;         /* -lr / (1 - beta1^t) */
    float bc2_sqrt;         /* sqrt(1 - beta2^t) */
    float eps;
} AdamCoef;

/* x, or a zero of its sign when x is subnormal. A moment whose gradient stays 0 (a dead
 * ReLU unit's weights) decays by beta each step into the subnormal range and, rounded,
 * never leaves it: every vector holding one then took a microcode assist in every step
 * (thread 1's optimizer slice, which held the last layer's dead units, ran 1.6x as long
 * as thread 0's at step 850 of `small`). Flushed, it is 0 from then on. What it would
 * add to a weight is below the weight's rounding, so the weights keep their bits, but
 * for a weight itself near 0 (Adam's coupled decay drives a dead unit's weights to
 * ~1e-34; they move by ~1e-37). */
CPU_INLINE float flush_subnormal(float x)
{
    return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x;
}

/* Adam on one slice: l2 is the coupled weight decay (Adam), shrink the decoupled factor
 * 1 - lr*wd (AdamW); pass 0 and 1 for none. The moments are flushed (flush_subnormal)
 * before they are used and stored. */
CPU_CLONES
static void adam_slice(float *restrict p, const float *restrict g, float *restrict m,
                       float *restrict v, size_t n, const AdamCoef *k, float l2, float shrink)
{
    const float b1 = k->b1, c1 = k->c1, b2 = k->b2, c2 = k->c2;
    const float neg_step = k->neg_step, bc2s = k->bc2_sqrt, eps = k->eps;
    for (size_t i = 0; i < n; i++) {
        float pi = p[i] * shrink;
        float gi = g[i] + l2 * pi;
        float mi = flush_subnormal(m[i] * b1 + c1 * gi);
        float vi = flush_subnormal(v[i] * b2 + c2 * gi * gi);
        float denom = sqrtf(vi) / bc2s + eps;
        m[i] = mi;
        v[i] = vi;
        p[i] = pi + neg_step * mi / denom;
    }
}

/* SGD on one slice; m is NULL without momentum (flushed as Adam's). */
CPU_CLONES
static void sgd_slice(float *restrict p, const float *restrict g, float *restrict m, size_t n,
                      float lr, float l2, float momentum)
{
    const float neg_lr = -lr;
    if (!m) {
        for (size_t i = 0; i < n; i++)
            p[i] = p[i] + neg_lr * (g[i] + l2 * p[i]);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        float mi = flush_subnormal(m[i] * momentum + (g[i] + l2 * p[i]));
        m[i] = mi;
        p[i] = p[i] + neg_lr * mi;
    }
}

static void step_slice(Optimizer *o, const ParamSet *ps, const AdamCoef *k, size_t off,
                       size_t n, int decay, float lr)
{
    float *p = ps->data + off;
    const float *g = ps->grad + off;
    float *m = o->m ? o->m + off : NULL;
    float *v = o->v ? o->v + off : NULL;
    float wd = decay ? o->weight_decay : 0.0f;
    switch (o->kind) {
    case OPTIM_SGD:
        sgd_slice(p, g, m, n, lr, wd, o->momentum);
        break;
    case OPTIM_ADAM:
        adam_slice(p, g, m, v, n, k, wd, 1.0f);
        break;
    case OPTIM_ADAMW: {
        float shrink = decay ? (float)(1.0 - (double)lr * o->weight_decay_d) : 1.0f;
        adam_slice(p, g, m, v, n, k, 0.0f, shrink);
        break;
    }
    }
}

void optim_step_begin(Optimizer *o)
{
    o->t++;
}

void optim_step_range(Optimizer *o, const ParamSet *ps, float lr, size_t lo, size_t hi)
{
    assert(o->n >= ps->total && hi <= ps->total);
    AdamCoef k = {0};
    if (o->kind != OPTIM_SGD) {
        double bc1 = 1.0 - pow(o->beta1_d, (double)o->t);
        double bc2 = 1.0 - pow(o->beta2_d, (double)o->t);
        k.b1 = o->beta1;
        k.c1 = (float)(1.0 - o->beta1_d);
        k.b2 = o->beta2;
        k.c2 = (float)(1.0 - o->beta2_d);
        k.neg_step = (float)(-((double)lr / bc1));
        k.bc2_sqrt = (float)sqrt(bc2);
        k.eps = o->eps;
    }
    if (o->decay_all || o->weight_decay == 0) {
        if (hi > lo)
            step_slice(o, ps, &k, lo, hi - lo, 1, lr);
        return;
    }
    for (int i = 0; i < ps->n; i++) {   /* each tensor's part of [lo, hi) */
        size_t a = ps->info[i].offset, b = a + ps->info[i].numel;
        a = a > lo ? a : lo;
        b = b < hi ? b : hi;
        if (b > a)
            step_slice(o, ps, &k, a, b - a, !ps->info[i].no_decay, lr);
    }
}

void optim_step(Optimizer *o, const ParamSet *ps, float lr)
{
    optim_step_begin(o);
    optim_step_range(o, ps, lr, 0, ps->total);
}
