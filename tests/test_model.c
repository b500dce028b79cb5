/* test_model.c — whole-LM PyTorch parity (dispatcher_lm, dispatcher_mh_lm, msa_lm):
 * logits, loss, gate coefficients and every parameter gradient against the fixtures
 * written by PyTorch 1.13 (tolerances: logits atol 1e-4; loss rtol 1e-5; gradients
 * rtol 1e-4 / atol 2e-5 — float32 summation order differs between BLAS and PyTorch);
 * a finite-difference check of the whole model for norm=pre, learned positions,
 * GELU and tying (no fixture exists for those); incremental decoding equal to a full
 * recompute (1e-4); for every family of the registry, model_estimate_bytes equal to the
 * bytes model_create + model_alloc take (parameters x 4 for values, gradients and Adam's
 * two moments, plus the activations), exactly. */
#include "check.h"
#include "checkpoint.h"
#include "config.h"
#include "err.h"
#include "model.h"
#include "registry.h"
#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fixture_path(const char *name, char *buf, size_t cap)
{
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(buf, cap, "%s/%s.safetensors", dir ? dir : "tests/fixtures", name);
    return buf;
}

static int meta_int(const SafeTensors *st, const char *key)
{
    const char *v = safetensors_meta(st, key);
    return v ? atoi(v) : -1;
}

/* (T,B,...) -> (B,T,...) for `inner` values per position. */
static void to_batch_major(float *dst, const float *src, int T, int B, int inner)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            memcpy(dst + ((size_t)b * T + t) * inner, src + ((size_t)t * B + b) * inner,
                   (size_t)inner * sizeof(float));
}

static void to_batch_major_i(int *dst, const int *src, int T, int B)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            dst[b * T + t] = src[t * B + b];
}

static void parity(const char *name)
{
    char path[512], err[LM_ERR_LEN];
    SafeTensors *st = NULL;
    printf("%s\n", name);
    if (safetensors_open(fixture_path(name, path, sizeof path), &st, err)) {
        CHECK(0, "%s", err);
        return;
    }
    Config c;
    config_defaults(&c);
    CHECK(config_set(&c, "model", safetensors_meta(st, "model"), err) == LM_OK, "%s", err);
    c.d = meta_int(st, "d"); c.heads = meta_int(st, "heads"); c.nhid = meta_int(st, "nhid");
    c.layers = meta_int(st, "layers"); c.bptt = meta_int(st, "bptt");
    int V = meta_int(st, "ntoken"), T = meta_int(st, "T"), B = meta_int(st, "B"), N = B * T;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "model_create: %s", err);
    if (!m) { safetensors_close(st); return; }
    CHECK(model_alloc(m, B, T, err) == LM_OK, "alloc: %s", err);
    CHECK(checkpoint_read_weights(m, st, "param.", err) == LM_OK, "weights: %s", err);

    int *tok_tb = malloc(N * sizeof(int)), *tgt_tb = malloc(N * sizeof(int));
    int *tok = malloc(N * sizeof(int)), *tgt = malloc(N * sizeof(int));
    safetensors_read_i32(st, "tokens", tok_tb, N, err);
    safetensors_read_i32(st, "targets", tgt_tb, N, err);
    to_batch_major_i(tok, tok_tb, T, B);
    to_batch_major_i(tgt, tgt_tb, T, B);

    /* logits and gates: forward without targets */
    float *ref = malloc((size_t)N * V * sizeof(float)), *ref_bm = malloc((size_t)N * V * sizeof(float));
    safetensors_read_f32(st, "logits", ref, (size_t)N * V, err);
    to_batch_major(ref_bm, ref, T, B, V);
    m->training = 0;
    CHECK(model_forward(m, tok, NULL, B, T, NULL, NULL) == LM_OK, "forward");
    const float *logits = m->ops->logits(m);
    CHECK(logits != NULL, "no logits");
    if (logits) CHECK_CLOSE("logits", logits, ref_bm, (long)N * V, 1e-5, 1e-4);
    for (int l = 0; l < m->n_gate_layers; l++) {
        char key[64];
        snprintf(key, sizeof key, "coefficients.%d", l);
        const StTensor *t = safetensors_find(st, key);
        const float *g = m->ops->gates(m, l);
        CHECK(t && g, "%s missing", key);
        if (!t || !g) continue;
        float *cref = malloc(t->numel * sizeof(float));
        safetensors_read_f32(st, key, cref, t->numel, err);
        CHECK_CLOSE(key, g, cref, (long)t->numel, 1e-5, 1e-6);
        free(cref);
    }

    /* loss and gradients: training forward with targets, backward of the mean */
    m->training = 1;
    double loss_sum;
    long count;
    params_zero_grad(&m->params);
    CHECK(model_forward(m, tok, tgt, B, T, &loss_sum, &count) == LM_OK, "forward(train)");
    model_backward(m, 1.0f / (float)count);
    float loss = (float)(loss_sum / count), ref_loss;
    safetensors_read_f32(st, "loss", &ref_loss, 1, err);
    CHECK_CLOSE("loss", &loss, &ref_loss, 1, 1e-5, 1e-6);
    for (int i = 0; i < m->params.n; i++) {
        const ParamInfo *p = &m->params.info[i];
        char key[PARAMS_NAME_LEN + 8];
        snprintf(key, sizeof key, "grad.%s", p->name);
        float *g = malloc(p->numel * sizeof(float));
        CHECK(safetensors_read_f32(st, key, g, p->numel, err) == LM_OK, "%s", err);
        CHECK_CLOSE(key, params_grad(&m->params, i), g, (long)p->numel, 1e-4, 2e-5);
        free(g);
    }
    free(tok_tb); free(tgt_tb); free(tok); free(tgt); free(ref); free(ref_bm);
    model_destroy(m);
    safetensors_close(st);
}

/* Loss in double for finite differences, eval mode (no dropout). */
static double loss_of(Model *m, const int *tok, const int *tgt, int B, int T)
{
    double s;
    long n;
    m->training = 0;
    model_forward(m, tok, tgt, B, T, &s, &n);
    return s / n;
}

static void finite_differences(const char *label, const char *const *pairs)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 8; c.heads = 2; c.nhid = 12; c.layers = 2; c.bptt = 8;
    for (int i = 0; pairs[i]; i++)
        CHECK(config_set_pair(&c, pairs[i], err) == LM_OK, "%s", err);
    int V = 11, B = 2, T = 8, N = B * T;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "%s: %s", label, err);
    if (!m) return;
    model_alloc(m, B, T, err);
    int tok[64], tgt[64];
    Rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < N; i++) { tok[i] = (int)rng_below(&r, V); tgt[i] = (int)rng_below(&r, V); }
    tgt[3] = -1;   /* ignored target */
    /* perturb LayerNorm weights away from 1 so their gradients are exercised */
    for (size_t i = 0; i < m->params.total; i++)
        m->params.data[i] += 0.05f * rng_normal(&r);
    m->training = 1;
    double s;
    long n;
    params_zero_grad(&m->params);
    model_forward(m, tok, tgt, B, T, &s, &n);
    model_backward(m, 1.0f / n);
    /* central differences on a sample of parameters; eps 1e-2 with float32 forward: the
     * truncation error is O(eps^2) ~1e-4, rounding ~1e-7/eps ~1e-5 */
    double worst = 0;
    for (int k = 0; k < 60; k++) {
        size_t i = rng_below(&r, (uint32_t)m->params.total);
        float keep = m->params.data[i], eps = 1e-2f;
        m->params.data[i] = keep + eps;
        double lp = loss_of(m, tok, tgt, B, T);
        m->params.data[i] = keep - eps;
        double lm = loss_of(m, tok, tgt, B, T);
        m->params.data[i] = keep;
        double fd = (lp - lm) / (2 * eps), an = m->params.grad[i];
        double e = fabs(fd - an) / (1e-3 + 5e-2 * fabs(fd));
        if (e > worst) worst = e;
    }
    printf("  FD %-30s worst %.2f of tolerance (atol 1e-3, rtol 5e-2)\n", label, worst);
    CHECK(worst <= 1.0, "%s: finite differences disagree (%.2f)", label, worst);
    model_destroy(m);
}

/* Cached incremental decoding equals the full forward's logits at every position. */
static void decode_matches(const char *const *pairs)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 16; c.heads = 1; c.nhid = 24; c.layers = 2; c.bptt = 16;
    for (int i = 0; pairs[i]; i++)
        config_set_pair(&c, pairs[i], err);
    int V = 13, T = 16;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "%s", err);
    if (!m) return;
    model_alloc(m, 1, T, err);
    int tok[16];
    for (int t = 0; t < T; t++) tok[t] = (t * 7 + 3) % V;
    m->training = 0;
    model_forward(m, tok, NULL, 1, T, NULL, NULL);
    const float *full = m->ops->logits(m);
    DecodeState *ds = m->ops->decode_create(m, err);
    CHECK(ds != NULL, "decode_create: %s", err);
    if (ds) {
        float step[13];
        double worst = 0;
        for (int t = 0; t < T; t++) {
            CHECK(m->ops->decode_step(m, ds, tok[t], t, step) == LM_OK, "step %d", t);
            for (int v = 0; v < V; v++) {
                double e = fabs(step[v] - full[t * V + v]);
                if (e > worst) worst = e;
            }
        }
        printf("  decode %-28s max abs diff %.3g\n", pairs[0], worst);
        CHECK(worst < 1e-4, "cached decoding differs by %g", worst);
        m->ops->decode_destroy(ds);
    }
    model_destroy(m);
}

/* Estimate == allocation for one configuration of every family. */
static void estimate_is_allocation(const char *label, const char *const *pairs, int V, int B,
                                   int T)
{
    char err[LM_ERR_LEN];
    for (int f = 0; f < registry_count(); f++) {
        const ModelFamily *fam = registry_family((ModelKind)f);
        Config c;
        config_defaults(&c);
        c.d = 16; c.nhid = 24; c.layers = 2; c.bptt = 32; /* pairs may change these */
        for (int i = 0; pairs[i]; i++)
            CHECK(config_set_pair(&c, pairs[i], err) == LM_OK, "%s", err);
        CHECK(config_set(&c, "model", fam->name, err) == LM_OK, "%s", err);
        CHECK(c.model_kind == fam->kind && registry_find(fam->name) == fam &&
              !strcmp(config_model_name(fam->kind), fam->name), "%s: kind", fam->name);
        if (c.tie && config_is_recurrent(&c))
            c.nhid = c.d;
        double est = model_estimate_bytes(&c, V, B, T);
        Model *m = model_create(&c, V, err);
        CHECK(m != NULL, "%s %s: %s", label, fam->name, err);
        if (!m)
            continue;
        CHECK(model_alloc(m, B, T, err) == LM_OK, "%s %s alloc: %s", label, fam->name, err);
        double actual = 4.0 * sizeof(float) * (double)m->params.total + (double)m->act_bytes;
        CHECK(est == actual && est > 0, "%s %s: estimate %.0f bytes, allocated %.0f", label,
              fam->name, est, actual);
        model_destroy(m);
    }
}

int main(void)
{
    parity("dispatcher_lm");
    parity("dispatcher_mh_lm");
    parity("msa_lm");
    const char *post[] = {"model=dispatcher", NULL};
    const char *pre[] = {"model=dispatcher", "norm=pre", "pos=learned", "act=gelu", "tie=true", NULL};
    const char *mh[] = {"model=dispatcher-mh", "norm=pre", NULL};
    const char *msa[] = {"model=msa", "tie=true", "act=gelu", NULL};
    const char *msapre[] = {"model=msa", "norm=pre", "pos=learned", NULL};
    finite_differences("dispatcher post", post);
    finite_differences("dispatcher pre/learned/gelu/tie", pre);
    finite_differences("dispatcher-mh pre", mh);
    finite_differences("msa tie/gelu", msa);
    finite_differences("msa pre/learned", msapre);
    const char *d1[] = {"model=dispatcher", NULL};
    const char *d2[] = {"model=dispatcher-mh", NULL};
    const char *d3[] = {"model=msa", "heads=4", NULL};
    const char *d4[] = {"model=dispatcher", "norm=pre", "pos=learned", NULL};
    decode_matches(d1);
    decode_matches(d2);
    decode_matches(d3);
    decode_matches(d4);
    const char *plain[] = {NULL};
    const char *drop[] = {"dropout=0.2", "tie=true", NULL};
    const char *prenorm[] = {"norm=pre", "pos=learned", "heads=2", NULL};
    estimate_is_allocation("defaults", plain, 50, 3, 32);
    estimate_is_allocation("dropout/tie", drop, 50, 2, 16);
    estimate_is_allocation("pre-norm/heads", prenorm, 70, 4, 32);
    /* 70000 x 4 x 64 logits exceed the transformer's 16M-float budget: chunked rows */
    const char *long_ctx[] = {"bptt=64", NULL};
    estimate_is_allocation("chunked logits", long_ctx, 70000, 4, 64);
    char err[LM_ERR_LEN];
    Config bad;
    config_defaults(&bad);
    bad.model_kind = MODEL_N_KINDS;
    CHECK(model_create(&bad, 50, err) == NULL && strstr(err, "unknown model"),
          "a kind outside the registry is refused: %s", err);
    CHECK(model_estimate_bytes(&bad, 50, 2, 8) == 0, "no estimate outside the registry");
    return check_summary();
}
