/* test_replicas.c — data-parallel replicas give the single model's loss and gradients:
 * the same batch through 1, 2 and 3 replicas (3 splits 5 rows unevenly: 2+2+1), with the
 * gradient sum spread over the workers (phase 2), and twice in a row (the grads are
 * zeroed, not accumulated, between steps). Tolerance: float sums in a different order.
 * And the end-of-step update on the replicas' threads (update.h): with 1, 2 and 3
 * threads it gives the serial optim_clip_grad_norm + optim_step's parameters and moments
 * to the bit, for AdamW with no_decay tensors (slices cut through tensors), SGD with
 * momentum, and Adam, clipped and not; the norm to 1e-6. */
#include "check.h"
#include "config.h"
#include "err.h"
#include "model.h"
#include "optim.h"
#include "replicas.h"
#include "rng.h"
#include "update.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 5, T = 16, V = 11 };

/* Loss and a copy of the gradients after one step with n replicas. */
static double step_with(int n, const int *x, const int *y, float **grad, long *np)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 16; c.nhid = 32; c.layers = 2; c.bptt = T; c.batch = B; c.dropout = 0;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "model_create: %s", err);
    if (!m)
        return -1;
    CHECK(model_alloc(m, B, T, err) == LM_OK, "model_alloc: %s", err);
    Replicas *r = replicas_create(m, n, B, T, err);
    CHECK(r != NULL && replicas_count(r) == n, "replicas_create(%d): %s", n, err);
    m->training = 1;
    double loss = 0;
    long cnt = 0;
    for (int rep = 0; rep < 2 && r; rep++)
        CHECK(replicas_step(r, x, y, B, T, &loss, &cnt) == LM_OK, "step");
    CHECK(cnt == (long)B * T, "count %ld", cnt);
    *np = (long)m->params.total;
    *grad = malloc(m->params.total * sizeof(float));
    memcpy(*grad, m->params.grad, m->params.total * sizeof(float));
    replicas_destroy(r);
    model_destroy(m);
    return loss;
}

/* One update of a fresh copy of m's weights with `threads` threads (0: the serial
 * functions); the weights and moments after it into p, mo, vo; returns the norm. */
static float update_with(Model *m, const float *w0, const float *g0, int threads, OptimKind kind,
                         float clip, float *p, float *mo, float *vo)
{
    char err[LM_ERR_LEN];
    ParamSet *ps = &m->params;
    size_t n = ps->total;
    memcpy(ps->data, w0, n * sizeof(float));
    memcpy(ps->grad, g0, n * sizeof(float));
    Optimizer o;
    CHECK(optim_init(&o, kind, n, 0.9f, 0.999f, 1e-8f, 0.1f, 0.9f, err) == LM_OK, "%s", err);
    o.decay_all = 0;   /* biases and norms without decay: per-tensor work inside a slice */
    float norm;
    for (int rep = 0; rep < 2; rep++) {   /* twice: the second step has moments and t = 2 */
        memcpy(ps->grad, g0, n * sizeof(float));
        if (threads == 0) {
            norm = optim_clip_grad_norm(ps->grad, n, clip);
            optim_step(&o, ps, 1e-2f);
        } else {
            Replicas *r = replicas_create(m, threads, B, T, err);
            CHECK(r != NULL, "replicas_create(%d): %s", threads, err);
            norm = update_grad_norm(r, ps);
            update_apply(r, &o, ps, norm, clip, 1e-2f);
            replicas_destroy(r);
        }
    }
    memcpy(p, ps->data, n * sizeof(float));
    memset(mo, 0, n * sizeof(float));
    memset(vo, 0, n * sizeof(float));
    if (o.m) memcpy(mo, o.m, n * sizeof(float));
    if (o.v) memcpy(vo, o.v, n * sizeof(float));
    optim_free(&o);
    return norm;
}

static void test_update(void)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 16; c.nhid = 32; c.layers = 2; c.bptt = T; c.batch = B;
    Model *m = model_create(&c, V, err);
    CHECK(m && model_alloc(m, B, T, err) == LM_OK, "model: %s", err);
    if (!m)
        return;
    size_t n = m->params.total;
    float *w0 = malloc(n * sizeof(float)), *g0 = malloc(n * sizeof(float));
    float *p[2], *mo[2], *vo[2];
    for (int k = 0; k < 2; k++)
        p[k] = malloc(n * sizeof(float)), mo[k] = malloc(n * sizeof(float)),
        vo[k] = malloc(n * sizeof(float));
    Rng rng;
    rng_seed(&rng, 3);
    for (size_t i = 0; i < n; i++) {
        w0[i] = m->params.data[i];
        g0[i] = rng_normal(&rng) * 0.05f;
    }
    OptimKind kinds[] = {OPTIM_ADAMW, OPTIM_SGD, OPTIM_ADAM};
    float clips[] = {0.0f, 0.5f};   /* the gradient's norm is ~0.05 sqrt(n) > 0.5 */
    for (int ki = 0; ki < 3; ki++)
        for (int ci = 0; ci < 2; ci++) {
            float ref = update_with(m, w0, g0, 0, kinds[ki], clips[ci], p[0], mo[0], vo[0]);
            for (int th = 1; th <= 3; th++) {
                float got = update_with(m, w0, g0, th, kinds[ki], clips[ci], p[1], mo[1], vo[1]);
                CHECK(fabsf(got - ref) <= 1e-6f * ref, "%s clip %g, %d threads: norm %.9g vs %.9g",
                      optim_kind_name(kinds[ki]), clips[ci], th, got, ref);
                CHECK(!memcmp(p[0], p[1], n * sizeof(float)) &&
                      !memcmp(mo[0], mo[1], n * sizeof(float)) &&
                      !memcmp(vo[0], vo[1], n * sizeof(float)),
                      "%s clip %g, %d threads: parameters or moments differ from the serial step",
                      optim_kind_name(kinds[ki]), clips[ci], th);
            }
            CHECK(memcmp(p[0], w0, n * sizeof(float)) != 0, "the step changed nothing");
        }
    for (int k = 0; k < 2; k++)
        free(p[k]), free(mo[k]), free(vo[k]);
    free(w0);
    free(g0);
    model_destroy(m);
}

int main(void)
{
    test_update();
    int x[B * T], y[B * T];
    Rng rng;
    rng_seed(&rng, 7);
    for (int i = 0; i < B * T; i++) {
        x[i] = (int)rng_below(&rng, V);
        y[i] = (int)rng_below(&rng, V);
    }
    float *g1 = NULL, *gn = NULL;
    long n1 = 0, nn = 0;
    double l1 = step_with(1, x, y, &g1, &n1);
    for (int n = 2; n <= 3; n++) {
        double ln = step_with(n, x, y, &gn, &nn);
        CHECK(nn == n1 && nn > 0, "param counts %ld vs %ld", nn, n1);
        CHECK(fabs(ln - l1) <= 1e-4 * fabs(l1), "loss %d replicas %.7f vs 1: %.7f", n, ln, l1);
        if (nn == n1) {
            char what[64];
            snprintf(what, sizeof what, "grads, %d replicas vs 1", n);
            CHECK_CLOSE(what, gn, g1, n1, 1e-4, 1e-6);
        }
        free(gn);
    }
    free(g1);
    return check_summary();
}
