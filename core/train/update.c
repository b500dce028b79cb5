/* update.c — the end-of-step update over the replicas' threads (see update.h). */
#include "update.h"

#include <assert.h>
#include <math.h>
#include "matmul.h"

#include <string.h>

typedef struct {
    ParamSet *ps;
    Optimizer *o;
    float coef, lr;
    double lanes[REPLICAS_MAX][8];   /* each slice's squares, lane by lane */
} UpdateJob;

static void sumsq_slice(void *ctx, int slice, size_t lo, size_t hi)
{
    UpdateJob *j = ctx;
    memset(j->lanes[slice], 0, sizeof j->lanes[slice]);
    optim_sumsq8(j->ps->grad + lo, hi - lo, j->lanes[slice]);
}

float update_grad_norm(Replicas *r, const ParamSet *ps)
{
    UpdateJob j = {.ps = (ParamSet *)ps};
    int n = r ? replicas_count(r) : 1;
    replicas_parallel_for(r, sumsq_slice, &j, ps->total);
    double acc[8] = {0};
    for (int s = 0; s < n; s++)   /* in slice order: the same grouping every step */
        for (int k = 0; k < 8; k++)
            acc[k] += j.lanes[s][k];
    return optim_norm8(acc);
}

static void apply_slice(void *ctx, int slice, size_t lo, size_t hi)
{
    (void)slice;
    UpdateJob *j = ctx;
    if (j->coef < 1.0f)
        for (size_t k = lo; k < hi; k++)
            j->ps->grad[k] *= j->coef;
    optim_step_range(j->o, j->ps, j->lr, lo, hi);
}

void update_apply(Replicas *r, Optimizer *o, ParamSet *ps, float norm, float max_norm,
                  float lr)
{
    assert(isfinite(norm) && "update_apply needs the finite norm of update_grad_norm");
    UpdateJob j = {.ps = ps, .o = o, .coef = optim_clip_coef(norm, max_norm), .lr = lr};
    optim_step_begin(o);
    replicas_parallel_for(r, apply_slice, &j, ps->total);
    matmul_weights_changed(ps->data);   /* bf16 packed weights are stale now */
}
