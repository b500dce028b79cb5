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

/* Chunks [lo, hi) of the slab's SHARDPLAN_NORM_CHUNKS, whichever thread runs them. */
static void sumsq_chunks(void *ctx, int slice, size_t lo, size_t hi)
{
    (void)slice;
    UpdateJob *j = ctx;
    for (size_t c = lo; c < hi; c++) {
        size_t a, b;
        shardplan_chunk(j->ps->total, (int)c, &a, &b);
        memset(j->lanes[c], 0, sizeof j->lanes[c]);
        optim_sumsq8(j->ps->grad + a, b - a, j->lanes[c]);
    }
}

float update_grad_norm(Replicas *r, const ParamSet *ps)
{
    UpdateJob j = {.ps = (ParamSet *)ps};
    replicas_parallel_items(r, sumsq_chunks, &j, SHARDPLAN_NORM_CHUNKS);
    double acc[8] = {0};
    for (int c = 0; c < SHARDPLAN_NORM_CHUNKS; c++)   /* in chunk order: one grouping */
        for (int k = 0; k < 8; k++)
            acc[k] += j.lanes[c][k];
    return optim_norm8(acc);
}

/* The slice's part of every tensor in turn (elementwise: the same values as one call over
 * [lo, hi)); a tensor the slice holds whole is repacked for bf16 products right after its
 * update, while it is in cache (matmul_repack; nothing for fp32 models). */
static void apply_slice(void *ctx, int slice, size_t lo, size_t hi)
{
    (void)slice;
    UpdateJob *j = ctx;
    ParamSet *ps = j->ps;
    if (j->coef < 1.0f)
        for (size_t k = lo; k < hi; k++)
            ps->grad[k] *= j->coef;
    size_t done = lo;
    for (int i = 0; i < ps->n && done < hi; i++) {
        size_t a = ps->info[i].offset, b = i + 1 < ps->n ? ps->info[i + 1].offset : ps->total;
        a = a > done ? a : done;   /* [a, b): the tensor and its padding, within the slice */
        b = b < hi ? b : hi;
        if (b <= a)
            continue;
        optim_step_range(j->o, ps, j->lr, a, b);
        done = b;
        if (a == ps->info[i].offset && b >= a + ps->info[i].numel)
            matmul_repack(ps->data, ps->data + a, ps->info[i].numel);
    }
    if (done < hi)
        optim_step_range(j->o, ps, j->lr, done, hi);
}

void update_apply(Replicas *r, Optimizer *o, ParamSet *ps, float norm, float max_norm,
                  float lr)
{
    assert(isfinite(norm) && "update_apply needs the finite norm of update_grad_norm");
    UpdateJob j = {.ps = ps, .o = o, .coef = optim_clip_coef(norm, max_norm), .lr = lr};
    optim_step_begin(o);
    matmul_weights_changed(ps->data);   /* bf16 packed weights are stale from here */
    replicas_parallel_for(r, apply_slice, &j, ps->total);
}
