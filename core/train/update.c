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
    double lanes[SHARDPLAN_NORM_CHUNKS][8];   /* each fixed chunk's squares, lane by lane */
} UpdateJob;

void update_sumsq_chunks(const float *grad, size_t total, int c0, int c1, double lanes[][8])
{
    for (int c = c0; c < c1; c++) {
        size_t a, b;
        shardplan_chunk(total, c, &a, &b);
        memset(lanes[c], 0, sizeof lanes[c]);
        optim_sumsq8(grad + a, b - a, lanes[c]);
    }
}

/* Chunks [lo, hi) of the slab's SHARDPLAN_NORM_CHUNKS, whichever thread runs them. */
static void sumsq_chunks(void *ctx, int slice, size_t lo, size_t hi)
{
    (void)slice;
    UpdateJob *j = ctx;
    update_sumsq_chunks(j->ps->grad, j->ps->total, (int)lo, (int)hi, j->lanes);
}

float update_grad_norm(Replicas *r, const ParamSet *ps)
{
    UpdateJob j = {.ps = (ParamSet *)ps};
    if (!r || !replicas_take_sumsq(r, ps, j.lanes))
        replicas_parallel_items(r, sumsq_chunks, &j, SHARDPLAN_NORM_CHUNKS);
    double acc[8] = {0};
    for (int c = 0; c < SHARDPLAN_NORM_CHUNKS; c++)   /* in chunk order: one grouping */
        for (int k = 0; k < 8; k++)
            acc[k] += j.lanes[c][k];
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
