/* test_replicas.c — a step's shards (shardplan.h) computed on 1, 2 or 3 threads give the
 * same loss and gradients TO THE BIT, for the Dispatcher, MSA and LSTM with dropout, for
 * shard plans of 1, 2, 3 and 5 shards of a 5-row batch (3 cuts it unevenly: 2+2+1), twice
 * in a row (the grads are zeroed, not accumulated, between steps); different plans agree
 * to float rounding (1e-4: another order of sums). The shard plan itself: rows, shares,
 * the auto default, bad settings refused with a message.
 * And the end-of-step update on the threads (update.h): with 1, 2 and 3 threads the norm
 * and the parameters and moments are the same bits (the norm's sum follows the fixed
 * chunks, not the threads); unclipped, the parameters are the serial optim_step's to the
 * bit and the norm is optim_clip_grad_norm's to 1e-6, for AdamW with no_decay tensors
 * (slices cut through tensors), SGD with momentum, and Adam. */
#include "check.h"
#include "config.h"
#include "err.h"
#include "model.h"
#include "optim.h"
#include "replicas.h"
#include "rng.h"
#include "shardplan.h"
#include "update.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 5, T = 16, V = 11 };

/* Loss and a copy of the gradients after two steps of `family` (dropout 0.3, the same
 * RNG stream) with the batch in `shards` shards on `threads` threads. */
static double step_with(const char *family, int shards, int threads, const int *x,
                        const int *y, float **grad, long *np)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    CHECK(config_set(&c, "model", family, err) == LM_OK, "model=%s: %s", family, err);
    c.d = 16; c.nhid = 32; c.layers = 2; c.bptt = T; c.batch = B; c.dropout = 0.3f;
    if (!strcmp(family, "msa")) c.heads = 2;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "model_create: %s", err);
    if (!m)
        return -1;
    CHECK(model_alloc(m, B, T, err) == LM_OK, "model_alloc: %s", err);
    ShardPlan plan;
    CHECK(shardplan_init(&plan, B, shards, err) == LM_OK, "plan: %s", err);
    Replicas *r = replicas_create(m, &plan, 0, plan.S, threads, T, err);
    int want = threads < plan.S ? threads : plan.S;
    CHECK(r != NULL && replicas_count(r) == want, "replicas_create(%d shards, %d threads): %s",
          shards, threads, err);
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

/* One training step of a fresh Dispatcher (dropout 0.3) in 3 shards on `threads`
 * threads: replicas_step when `whole`, else its three parts as trainer_dist.c calls them;
 * the gradient into grad (malloc'd), update_grad_norm's norm into *norm. Returns the loss
 * sum; *cnt the tokens. */
static double one_step(int whole, int threads, const int *x, const int *y, float **grad,
                       long *np, long *cnt, float *norm)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 16; c.nhid = 32; c.layers = 2; c.bptt = T; c.batch = B; c.dropout = 0.3f;
    Model *m = model_create(&c, V, err);
    CHECK(m && model_alloc(m, B, T, err) == LM_OK, "model: %s", err);
    ShardPlan plan;
    shardplan_init(&plan, B, 3, err);
    Replicas *r = m ? replicas_create(m, &plan, 0, plan.S, threads, T, err) : NULL;
    CHECK(r != NULL, "replicas: %s", err);
    if (!r) {
        model_destroy(m);
        return -1;
    }
    m->training = 1;
    double loss = 0, lw[SHARDPLAN_MAX];
    long cw[SHARDPLAN_MAX];
    double lanes[SHARDPLAN_NORM_CHUNKS][8];
    *cnt = 0;
    if (whole) {
        CHECK(replicas_step(r, x, y, B, T, &loss, cnt) == LM_OK, "replicas_step");
    } else {
        CHECK(replicas_forward(r, x, y, T, lw, cw) == LM_OK, "replicas_forward");
        for (int s = 0; s < plan.S; s++)
            loss += lw[s], *cnt += cw[s];
        if (*cnt > 0) {
            replicas_backward(r, 1.0f / (float)*cnt);
            replicas_fold(r, NULL);
        }
        CHECK(!replicas_take_sumsq(r, &m->params, lanes), "the parts leave no squares");
    }
    *np = (long)m->params.total;
    *grad = malloc(m->params.total * sizeof(float));
    memcpy(*grad, m->params.grad, m->params.total * sizeof(float));
    *norm = update_grad_norm(r, &m->params);
    CHECK(!replicas_take_sumsq(r, &m->params, lanes), "the squares are taken once");
    replicas_destroy(r);
    model_destroy(m);
    return loss;
}

/* replicas_step (forward and backward in one phase, the fold summing the norm's squares)
 * against its three parts: the same loss, tokens, gradient and norm, to the bit, on 1, 2
 * and 3 threads; with some targets ignored (-1), and with all of them (no gradient). */
static void test_step_parts(const int *x, const int *y0)
{
    int y[B * T];
    memcpy(y, y0, sizeof y);
    for (int i = 0; i < B * T; i += 7)
        y[i] = -1;
    for (int all = 0; all < 2; all++) {
        if (all)
            for (int i = 0; i < B * T; i++)
                y[i] = -1;
        for (int th = 1; th <= 3; th++) {
            float *ga, *gb, na, nb;
            long pa, pb, ca, cb;
            double la = one_step(1, th, x, y, &ga, &pa, &ca, &na);
            double lb = one_step(0, th, x, y, &gb, &pb, &cb, &nb);
            CHECK(la == lb && ca == cb && pa == pb && !memcmp(ga, gb, (size_t)pa * sizeof(float)),
                  "%s targets ignored, %d threads: replicas_step (loss %.17g, %ld tokens) "
                  "differs from its parts (%.17g, %ld)", all ? "all" : "some", th, la, ca, lb,
                  cb);
            CHECK(na == nb, "%d threads: norm %.9g from the fold's squares vs %.9g", th, na, nb);
            CHECK(all ? ca == 0 && na == 0 : ca == B * T - (B * T + 6) / 7 && na > 0,
                  "%ld tokens, norm %g", ca, na);
            free(ga);
            free(gb);
        }
    }
}

static void test_plan(void)
{
    char err[LM_ERR_LEN] = "";
    ShardPlan p;
    CHECK(shardplan_init(&p, 12, 0, err) == LM_OK && p.S == SHARDPLAN_AUTO_MAX,
          "auto shards of batch 12: %d", p.S);
    CHECK(shardplan_init(&p, 1, 0, err) == LM_OK && p.S == 1, "auto shards of batch 1: %d", p.S);
    CHECK(shardplan_init(&p, 4, 5, err) == LM_EARG && strstr(err, "shards=5 is more than batch=4"),
          "shards above batch: %s", err);
    CHECK(shardplan_init(&p, 64, 17, err) == LM_EARG && strstr(err, "more than 16"), "17 shards: %s",
          err);
    int lo, hi, next = 0;   /* 10 rows in 4 shards: 3 3 2 2, consecutive */
    for (int s = 0; s < 4; s++) {
        shardplan_rows(10, 4, s, &lo, &hi);
        CHECK(lo == next && hi - lo == (s < 2 ? 3 : 2), "shard %d of 10 rows: [%d, %d)", s, lo, hi);
        next = hi;
    }
    CHECK(next == 10, "the shards cover %d of 10 rows", next);
    shardplan_share(3, 2, 1, &lo, &hi);
    CHECK(lo == 2 && hi == 3, "rank 1 of 2 owns shards [%d, %d) of 3", lo, hi);
    size_t a, b, end = 0;
    for (int c = 0; c < SHARDPLAN_NORM_CHUNKS; c++) {
        shardplan_chunk(1000, c, &a, &b);
        CHECK(a == end && (a % 16 == 0 || a == 1000), "chunk %d starts at %zu", c, a);
        end = b;
    }
    CHECK(end == 1000, "the chunks cover %zu of 1000", end);
    CHECK(shardplan_init(&p, 10, 4, err) == LM_OK, "plan: %s", err);
    char d[64];
    shardplan_describe(&p, d, sizeof d);
    CHECK(!strcmp(d, "4 shards of 2-3 rows (batch 10)"), "describe: %s", d);
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
            ShardPlan plan;
            shardplan_init(&plan, B, 3, err);
            Replicas *r = replicas_create(m, &plan, 0, plan.S, threads, T, err);
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
    float *p[3], *mo[3], *vo[3];
    for (int k = 0; k < 3; k++)
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
            float one = update_with(m, w0, g0, 1, kinds[ki], clips[ci], p[1], mo[1], vo[1]);
            CHECK(fabsf(one - ref) <= 1e-6f * ref, "%s clip %g: norm %.9g vs serial %.9g",
                  optim_kind_name(kinds[ki]), clips[ci], one, ref);
            if (clips[ci] == 0)
                CHECK(!memcmp(p[0], p[1], n * sizeof(float)), "%s unclipped: the parameters "
                      "differ from the serial step", optim_kind_name(kinds[ki]));
            for (int th = 2; th <= 3; th++) {
                float got = update_with(m, w0, g0, th, kinds[ki], clips[ci], p[2], mo[2], vo[2]);
                CHECK(got == one, "%s clip %g, %d threads: norm %.9g vs one thread's %.9g",
                      optim_kind_name(kinds[ki]), clips[ci], th, got, one);
                CHECK(!memcmp(p[1], p[2], n * sizeof(float)) &&
                      !memcmp(mo[1], mo[2], n * sizeof(float)) &&
                      !memcmp(vo[1], vo[2], n * sizeof(float)),
                      "%s clip %g, %d threads: parameters or moments differ from one thread's",
                      optim_kind_name(kinds[ki]), clips[ci], th);
            }
            CHECK(memcmp(p[0], w0, n * sizeof(float)) != 0, "the step changed nothing");
        }
    for (int k = 0; k < 3; k++)
        free(p[k]), free(mo[k]), free(vo[k]);
    free(w0);
    free(g0);
    model_destroy(m);
}

int main(void)
{
    test_plan();
    test_update();
    int x[B * T], y[B * T];
    Rng rng;
    rng_seed(&rng, 7);
    for (int i = 0; i < B * T; i++) {
        x[i] = (int)rng_below(&rng, V);
        y[i] = (int)rng_below(&rng, V);
    }
    test_step_parts(x, y);
    const char *families[] = {"dispatcher", "msa", "lstm"};
    int plans[] = {1, 2, 3, 5};
    for (int f = 0; f < 3; f++) {
        float *g1 = NULL, *gp = NULL, *gn = NULL;
        long n1 = 0, np = 0, nn = 0;
        double l1 = step_with(families[f], 1, 1, x, y, &g1, &n1);
        for (int pi = 0; pi < 4; pi++) {
            int S = plans[pi];
            double lp = step_with(families[f], S, 1, x, y, &gp, &np);
            for (int th = 2; th <= 3; th++) {   /* any thread count: the same bits */
                double ln = step_with(families[f], S, th, x, y, &gn, &nn);
                CHECK(ln == lp && nn == np && !memcmp(gn, gp, (size_t)np * sizeof(float)),
                      "%s, %d shards: %d threads differ from 1 (loss %.17g vs %.17g)",
                      families[f], S, th, ln, lp);
                free(gn);
            }
            /* another plan: another order of sums, the same numbers to rounding */
            CHECK(fabs(lp - l1) <= 1e-4 * fabs(l1), "%s: loss %d shards %.7f vs 1: %.7f",
                  families[f], S, lp, l1);
            if (np == n1) {
                char what[64];
                snprintf(what, sizeof what, "%s grads, %d shards vs 1", families[f], S);
                CHECK_CLOSE(what, gp, g1, n1, 1e-4, 1e-6);
            }
            free(gp);
        }
        free(g1);
    }
    return check_summary();
}
