/* test_dispatcher.c — the Dispatcher layer against finite differences, the PyTorch
 * fixtures (tests/fixtures/dispatcher_*_layer_*.safetensors, made by
 * tests/fixtures/make_fixtures.py; see tests/fixtures/README.md) and its own streaming
 * decoder; the evaluation forward (one level state, in place) against the training
 * forward, and both passes against the level-outer loops they replaced (ref_run), bit
 * for bit.
 * Not a test of level dropout drawing (the caller's job) or of whole models. */
#include "check.h"
#include "dispatcher.h"
#include "err.h"
#include "gemm_bf16.h"
#include "matmul.h"
#include "rng.h"
#include "safetensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double loss_of(const DispatcherDims *dd, float *out, float *act, const float *x,
                      const float *wi, const float *wg, const float *wo,
                      const unsigned char *skip, const float *G, int B, int T)
{
    dispatcher_forward(dd, out, act, x, wi, wg, wo, skip, B, T, NULL, NULL);
    double s = 0;
    for (long i = 0; i < (long)B * T * dd->d; i++)
        s += (double)out[i] * G[i];
    return s;
}

/* Central differences of sum(out*G) w.r.t. every entry of p (n floats) against an.
 * Tolerance: |fd - an| <= 4e-3 + 1e-2 |an| (float forward, eps 1e-3, loss in double). */
static void fd_check(const char *what, float *p, const float *an, long n,
                     const DispatcherDims *dd, float *out, float *act, const float *x,
                     const float *wi, const float *wg, const float *wo,
                     const unsigned char *skip, const float *G, int B, int T)
{
    const float eps = 1e-3f;
    float *fd = malloc(sizeof(float) * n);
    for (long i = 0; i < n; i++) {
        float keep = p[i];
        p[i] = keep + eps;
        double lp = loss_of(dd, out, act, x, wi, wg, wo, skip, G, B, T);
        p[i] = keep - eps;
        double lm = loss_of(dd, out, act, x, wi, wg, wo, skip, G, B, T);
        p[i] = keep;
        fd[i] = (float)((lp - lm) / (2.0 * eps));
    }
    CHECK_CLOSE(what, an, fd, n, 1e-2, 4e-3);
    free(fd);
}

static void test_fd(DispatcherKind kind, int heads, int T, const unsigned char *skip)
{
    DispatcherDims dd = {kind, 8, heads, 3, NULL};   /* bptt 8, T < bptt */
    int B = 2;
    long nx = (long)B * T * dd.d;
    long ni = dispatcher_w_in_floats(&dd), ng = dispatcher_w_gate_floats(&dd);
    Rng r;
    rng_seed(&r, 1234 + heads * 10 + kind + T);
    float *x = malloc(sizeof(float) * nx), *G = malloc(sizeof(float) * nx);
    float *out = malloc(sizeof(float) * nx), *dx = calloc(nx, sizeof(float));
    float *wi = malloc(sizeof(float) * ni), *wo = malloc(sizeof(float) * ni);
    float *wg = malloc(sizeof(float) * ng);
    float *dwi = calloc(ni, sizeof(float)), *dwo = calloc(ni, sizeof(float));
    float *dwg = calloc(ng, sizeof(float));
    float *act = malloc(sizeof(float) * dispatcher_act_floats(&dd, B, T));
    float *scr = malloc(sizeof(float) * dispatcher_scratch_floats(&dd, B, T));
    rng_fill_normal(&r, x, nx, 0, 1);
    rng_fill_normal(&r, G, nx, 0, 1);
    rng_fill_uniform(&r, wi, ni, -0.6f, 0.6f);
    rng_fill_uniform(&r, wo, ni, -0.6f, 0.6f);
    rng_fill_uniform(&r, wg, ng, -0.6f, 0.6f);
    loss_of(&dd, out, act, x, wi, wg, wo, skip, G, B, T);
    dispatcher_backward(&dd, dx, dwi, dwg, dwo, scr, G, act, x, wi, wg, wo, skip, B, T, 0, NULL);
    printf(" FD %s heads=%d T=%d skip=%s\n", kind == DISPATCHER_PAPER ? "paper" : "mh", heads,
           T, skip ? "yes" : "no");
    fd_check("d input", x, dx, nx, &dd, out, act, x, wi, wg, wo, skip, G, B, T);
    fd_check("d linear_in", wi, dwi, ni, &dd, out, act, x, wi, wg, wo, skip, G, B, T);
    fd_check("d internal_attention", wg, dwg, ng, &dd, out, act, x, wi, wg, wo, skip, G, B, T);
    fd_check("d linear_out", wo, dwo, ni, &dd, out, act, x, wi, wg, wo, skip, G, B, T);
    /* backward adds: a second call doubles the gradient */
    float *dx2 = malloc(sizeof(float) * nx);
    memcpy(dx2, dx, sizeof(float) * nx);
    dispatcher_backward(&dd, dx, dwi, dwg, dwo, scr, G, act, x, wi, wg, wo, skip, B, T, 0, NULL);
    for (long i = 0; i < nx; i++)
        dx2[i] *= 2;
    CHECK_CLOSE("backward accumulates (+=)", dx, dx2, nx, 1e-6, 1e-6);
    free(x), free(G), free(out), free(dx), free(dx2), free(wi), free(wo), free(wg);
    free(dwi), free(dwo), free(dwg), free(act), free(scr);
}

/* (T,B,C) -> (B,T,C) when to_btc, else the reverse. */
static void transpose_tb(float *dst, const float *src, int T, int B, int C, int to_btc)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            const float *s = to_btc ? src + ((size_t)t * B + b) * C : src + ((size_t)b * T + t) * C;
            float *o = to_btc ? dst + ((size_t)b * T + t) * C : dst + ((size_t)t * B + b) * C;
            memcpy(o, s, sizeof(float) * C);
        }
}

static float *read_t(const SafeTensors *st, const char *name, size_t n)
{
    char err[LM_ERR_LEN];
    float *p = malloc(sizeof(float) * (n ? n : 1));
    int rc = safetensors_read_f32(st, name, p, n, err);
    CHECK(rc == LM_OK, "%s", err);
    if (rc != LM_OK)
        memset(p, 0, sizeof(float) * n);
    return p;
}

static int meta_int(const SafeTensors *st, const char *key)
{
    const char *v = safetensors_meta(st, key);
    CHECK(v != NULL, "metadata %s missing", key);
    return v ? atoi(v) : 1;
}

/* Parity with PyTorch: rtol 1e-5, atol 1e-5 on output, coefficients and every gradient. */
static void test_fixture(const char *name, DispatcherKind kind)
{
    char path[1024], err[LM_ERR_LEN];
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(path, sizeof path, "%s/%s.safetensors", dir ? dir : "tests/fixtures", name);
    SafeTensors *st = NULL;
    int rc = safetensors_open(path, &st, err);
    CHECK(rc == LM_OK, "%s", err);
    if (rc != LM_OK)
        return;
    int d = meta_int(st, "d"), heads = meta_int(st, "heads"), T = meta_int(st, "T");
    int B = meta_int(st, "B");
    DispatcherDims dd = {kind, d, heads, dispatcher_levels(meta_int(st, "bptt")), NULL};
    printf(" parity %s (d=%d heads=%d T=%d B=%d levels=%d)\n", name, d, heads, T, B, dd.levels);
    size_t nx = (size_t)B * T * d, ni = dispatcher_w_in_floats(&dd);
    size_t ng = dispatcher_w_gate_floats(&dd), nc = (size_t)B * heads * T * dd.levels;
    float *x_tb = read_t(st, "input", nx), *y_tb = read_t(st, "output", nx);
    float *g_tb = read_t(st, "grad_output", nx), *gx_tb = read_t(st, "grad_input", nx);
    float *coef = read_t(st, "coefficients", nc);
    float *wi = read_t(st, "param.linear_in.weight", ni);
    float *wg = read_t(st, "param.internal_attention.weight", ng);
    float *wo = read_t(st, "param.linear_out.weight", ni);
    float *gwi = read_t(st, "grad.linear_in.weight", ni);
    float *gwg = read_t(st, "grad.internal_attention.weight", ng);
    float *gwo = read_t(st, "grad.linear_out.weight", ni);
    float *x = malloc(sizeof(float) * nx), *G = malloc(sizeof(float) * nx);
    float *out = malloc(sizeof(float) * nx), *tmp = malloc(sizeof(float) * nx);
    float *dx = calloc(nx, sizeof(float)), *dwi = calloc(ni, sizeof(float));
    float *dwo = calloc(ni, sizeof(float)), *dwg = calloc(ng, sizeof(float));
    float *act = malloc(sizeof(float) * dispatcher_act_floats(&dd, B, T));
    float *scr = malloc(sizeof(float) * dispatcher_scratch_floats(&dd, B, T));
    transpose_tb(x, x_tb, T, B, d, 1);
    transpose_tb(G, g_tb, T, B, d, 1);
    dispatcher_forward(&dd, out, act, x, wi, wg, wo, NULL, B, T, NULL, NULL);
    dispatcher_backward(&dd, dx, dwi, dwg, dwo, scr, G, act, x, wi, wg, wo, NULL, B, T, 0, NULL);
    transpose_tb(tmp, out, T, B, d, 0);
    CHECK_CLOSE("output", tmp, y_tb, nx, 1e-5, 1e-5);
    double ymax = 0;
    for (size_t i = 0; i < nx; i++)
        ymax = fmax(ymax, fabs(y_tb[i]));
    CHECK(ymax > 0.01, "fixture output is (nearly) zero: %g", ymax);   /* guards a bad read */
    CHECK_CLOSE("coefficients", dispatcher_coeffs(&dd, act, B, T), coef, nc, 1e-5, 1e-5);
    transpose_tb(tmp, dx, T, B, d, 0);
    CHECK_CLOSE("grad_input", tmp, gx_tb, nx, 1e-5, 1e-5);
    CHECK_CLOSE("grad.linear_in.weight", dwi, gwi, ni, 1e-5, 1e-5);
    CHECK_CLOSE("grad.internal_attention.weight", dwg, gwg, ng, 1e-5, 1e-5);
    CHECK_CLOSE("grad.linear_out.weight", dwo, gwo, ni, 1e-5, 1e-5);
    free(x_tb), free(y_tb), free(g_tb), free(gx_tb), free(coef), free(wi), free(wg), free(wo);
    free(gwi), free(gwg), free(gwo), free(x), free(G), free(out), free(tmp), free(dx);
    free(dwi), free(dwo), free(dwg), free(act), free(scr);
    safetensors_close(st);
}

/* Streaming decoding of T tokens equals the full forward over them (B = 1), tol 1e-4;
 * T may exceed 2^levels (positions keep counting, as in the reference). */
static void test_step(DispatcherKind kind, int T)
{
    DispatcherDims dd = {kind, 16, 1, 4, NULL};   /* bptt 16 */
    long nx = (long)T * dd.d, ni = dispatcher_w_in_floats(&dd);
    long ng = dispatcher_w_gate_floats(&dd);
    Rng r;
    rng_seed(&r, 77 + T + kind);
    float *x = malloc(sizeof(float) * nx), *out = malloc(sizeof(float) * nx);
    float *so = malloc(sizeof(float) * nx), *sc = malloc(sizeof(float) * T * dd.levels);
    float *wi = malloc(sizeof(float) * ni), *wo = malloc(sizeof(float) * ni);
    float *wg = malloc(sizeof(float) * ng);
    float *act = malloc(sizeof(float) * dispatcher_act_floats(&dd, 1, T));
    rng_fill_normal(&r, x, nx, 0, 1);
    rng_fill_uniform(&r, wi, ni, -0.4f, 0.4f);
    rng_fill_uniform(&r, wo, ni, -0.4f, 0.4f);
    rng_fill_uniform(&r, wg, ng, -0.4f, 0.4f);
    dispatcher_forward(&dd, out, act, x, wi, wg, wo, NULL, 1, T, NULL, NULL);
    DispatcherCache *c = dispatcher_cache_create(&dd);
    CHECK(c != NULL, "cache_create");
    if (!c)
        return;
    for (int pass = 0; pass < 2; pass++) {   /* the second pass checks reset */
        dispatcher_cache_reset(c);
        for (int t = 0; t < T; t++)
            dispatcher_step(&dd, c, so + (long)t * dd.d, sc + (long)t * dd.levels,
                            x + (long)t * dd.d, wi, wg, wo, t);
    }
    printf(" step %s T=%d\n", kind == DISPATCHER_PAPER ? "paper" : "mh", T);
    CHECK_CLOSE("step output == forward", so, out, nx, 1e-4, 1e-4);
    CHECK_CLOSE("step coefficients == forward", sc, dispatcher_coeffs(&dd, act, 1, T),
                (long)T * dd.levels, 1e-4, 1e-4);
    DispatcherDims d4 = dd;
    d4.heads = 4;
    CHECK(dispatcher_cache_create(&d4) == NULL, "no streaming cache with heads > 1");
    dispatcher_cache_destroy(c);
    dispatcher_cache_destroy(NULL);
    free(x), free(out), free(so), free(sc), free(wi), free(wo), free(wg), free(act);
}

/* dispatcher_forward_infer (one level state, coefficients apart) writes exactly the
 * output and coefficients of dispatcher_forward, bit for bit: the
 * same float operations in the same order. The states start as NaN, so a level that
 * read a state it had not written would show; the coefficient buffer is guarded on both
 * sides, so a write outside it would show. */
static void test_infer(DispatcherKind kind, int heads, int T)
{
    DispatcherDims dd = {kind, 16, heads, 4, NULL};   /* bptt 16 */
    int B = 3;
    size_t nx = (size_t)B * T * dd.d, ni = dispatcher_w_in_floats(&dd);
    size_t ng = dispatcher_w_gate_floats(&dd), nc = dispatcher_coeff_floats(&dd, B, T);
    CHECK(nc == (size_t)B * heads * T * dd.levels, "coefficients (B*heads,T,levels)");
    CHECK(dispatcher_infer_floats(&dd, B, T) == nx, "one (B,T,d) level state");
    CHECK(dispatcher_act_floats(&dd, B, T) == nc + 2 * nx, "act = coef + V_0 + last state");
    Rng r;
    rng_seed(&r, 4242 + T + 10 * heads + kind);
    float *x = malloc(sizeof(float) * nx), *wi = malloc(sizeof(float) * ni);
    float *wo = malloc(sizeof(float) * ni), *wg = malloc(sizeof(float) * ng);
    float *out = malloc(sizeof(float) * nx), *out2 = malloc(sizeof(float) * nx);
    float *act = malloc(sizeof(float) * dispatcher_act_floats(&dd, B, T));
    float *states = malloc(sizeof(float) * nx), *coef = malloc(sizeof(float) * (nc + 32));
    rng_fill_normal(&r, x, (long)nx, 0, 1);
    rng_fill_uniform(&r, wi, (long)ni, -0.4f, 0.4f);
    rng_fill_uniform(&r, wo, (long)ni, -0.4f, 0.4f);
    rng_fill_uniform(&r, wg, (long)ng, -0.4f, 0.4f);
    for (size_t i = 0; i < nx; i++)
        states[i] = NAN;
    for (size_t i = 0; i < nc + 32; i++)
        coef[i] = -7.0f;
    dispatcher_forward(&dd, out, act, x, wi, wg, wo, NULL, B, T, NULL, NULL);
    dispatcher_forward_infer(&dd, out2, coef + 16, states, x, wi, wg, wo, B, T);
    printf(" infer %s heads=%d T=%d\n", kind == DISPATCHER_PAPER ? "paper" : "mh", heads, T);
    CHECK(!memcmp(out, out2, sizeof(float) * nx), "infer output differs from forward's");
    CHECK(!memcmp(coef + 16, dispatcher_coeffs(&dd, act, B, T), sizeof(float) * nc),
          "infer coefficients differ from forward's");
    int guard = 1;
    for (int i = 0; i < 16; i++)
        guard &= coef[i] == -7.0f && coef[16 + nc + i] == -7.0f;
    CHECK(guard, "infer wrote outside its coefficients");
    free(x), free(wi), free(wo), free(wg), free(out), free(out2), free(act), free(states);
    free(coef);
}

/* The shift-and-sum as it was written before it was blocked by head sequence: level k
 * over the whole (N,T,hd) buffer before level k+1, every level's state stored, backward
 * reading them. dispatcher_forward/backward (sequence-outer, in place, backward
 * recomputing the states) must give the same bits: the same float operations per element
 * in the same order. The projections are the layer's own matmul calls. */
static void ref_run(const DispatcherDims *dd, int B, int T, const unsigned char *skip,
                    const float *x, const float *wi, const float *wg, const float *wo,
                    const float *G, float *out, float *coef, float *dx, float *dwi,
                    float *dwg, float *dwo)
{
    int hd = dd->d / dd->heads, L = dd->levels, N = B * dd->heads, paper = dd->kind == DISPATCHER_PAPER;
    int r = paper ? hd : dd->d, g = paper ? L : L * dd->heads, M = paper ? B * T * dd->heads : B * T;
    int used = dispatcher_used_levels(dd, T);
    size_t nv = (size_t)B * T * dd->d, nc = dispatcher_coeff_floats(dd, B, T);
    float *V = malloc(sizeof(float) * nv * (used + 1)), *dv = malloc(sizeof(float) * nv);
    float *dg = calloc(nc, sizeof(float));
    matmul(CblasNoTrans, CblasTrans, M, r, r, 1.0f, x, r, wi, r, 0.0f, V, r);
    matmul(CblasNoTrans, CblasTrans, M, g, r, 1.0f, x, r, wg, r, 0.0f, coef, g);
    for (size_t i = 0; i < nc; i++) {
        int t = (int)(i / L % T), k = (int)(i % L);
        float a = paper ? 1.0f / (1.0f + expf(-coef[i])) : coef[i];
        coef[i] = t >= (1L << k) ? a : 0.0f;
    }
    int j = 0;
    for (int k = 0; k < used; k++) {
        if (skip && skip[k])
            continue;
        const float *src = V + (size_t)j * nv;
        float *dst = V + (size_t)(j + 1) * nv;
        for (int n = 0; n < N; n++)
            for (int t = 0; t < T; t++)
                for (int i = 0; i < hd; i++) {
                    size_t o = ((size_t)n * T + t) * hd + i;
                    float c = coef[((size_t)n * T + t) * L + k];
                    dst[o] = t < (1 << k) ? src[o] : src[o] + c * src[o - ((size_t)hd << k)];
                }
        j++;
    }
    matmul(CblasNoTrans, CblasTrans, M, r, r, 1.0f, V + (size_t)j * nv, r, wo, r, 0.0f, out, r);
    matmul(CblasTrans, CblasNoTrans, r, r, M, 1.0f, G, r, V + (size_t)j * nv, r, 1.0f, dwo, r);
    matmul(CblasNoTrans, CblasNoTrans, M, r, r, 1.0f, G, r, wo, r, 0.0f, dv, r);
    for (int k = used - 1; k >= 0; k--) {
        if (skip && skip[k])
            continue;
        j--;
        int s = 1 << k;
        for (int n = 0; n < N; n++)
            for (int t = s; t < T; t++) {
                float *drow = dv + ((size_t)n * T + t) * hd, *prev = drow - (size_t)s * hd;
                const float *vrow = V + (size_t)j * nv + ((size_t)n * T + t - s) * hd;
                float acc[32] = {0};
                for (int i = 0; i < hd; i++)
                    acc[i & 31] += drow[i] * vrow[i];
                for (int w = 16; w >= 1; w /= 2)
                    for (int l = 0; l < w; l++)
                        acc[l] += acc[l + w];
                dg[((size_t)n * T + t) * L + k] = acc[0];
                float c = coef[((size_t)n * T + t) * L + k];
                for (int i = 0; i < hd; i++)
                    prev[i] += c * drow[i];
            }
    }
    if (paper)
        for (size_t i = 0; i < nc; i++)
            dg[i] *= coef[i] * (1.0f - coef[i]);
    matmul(CblasTrans, CblasNoTrans, r, r, M, 1.0f, dv, r, x, r, 1.0f, dwi, r);
    matmul(CblasNoTrans, CblasNoTrans, M, r, r, 1.0f, dv, r, wi, r, 1.0f, dx, r);
    matmul(CblasTrans, CblasNoTrans, g, r, M, 1.0f, dg, g, x, r, 1.0f, dwg, r);
    matmul(CblasNoTrans, CblasNoTrans, M, r, g, 1.0f, dg, g, wg, r, 1.0f, dx, r);
    free(V), free(dv), free(dg);
}

static int same_bits(const float *a, const float *b, size_t n)
{
    return !memcmp(a, b, sizeof(float) * n);
}

/* dispatcher_forward + dispatcher_backward against ref_run, bit for bit, at the row width
 * of the presets (hd = 128: the vector path) and at odd widths (hd = 12: the tails). */
static void test_same_bits(DispatcherKind kind, int d, int heads, int T,
                           const unsigned char *skip)
{
    DispatcherDims dd = {kind, d, heads, dispatcher_levels(16), NULL};
    int B = 3;
    size_t nx = (size_t)B * T * d, ni = dispatcher_w_in_floats(&dd);
    size_t ng = dispatcher_w_gate_floats(&dd), nc = dispatcher_coeff_floats(&dd, B, T);
    Rng r;
    rng_seed(&r, 99 + T + heads + d + kind);
    float *x = malloc(sizeof(float) * nx), *G = malloc(sizeof(float) * nx);
    float *wi = malloc(sizeof(float) * ni), *wo = malloc(sizeof(float) * ni);
    float *wg = malloc(sizeof(float) * ng);
    float *o1 = malloc(sizeof(float) * nx), *o2 = malloc(sizeof(float) * nx);
    float *c2 = malloc(sizeof(float) * nc);
    float *dx1 = calloc(nx, sizeof(float)), *dx2 = calloc(nx, sizeof(float));
    float *dwi1 = calloc(ni, sizeof(float)), *dwi2 = calloc(ni, sizeof(float));
    float *dwo1 = calloc(ni, sizeof(float)), *dwo2 = calloc(ni, sizeof(float));
    float *dwg1 = calloc(ng, sizeof(float)), *dwg2 = calloc(ng, sizeof(float));
    float *act = malloc(sizeof(float) * dispatcher_act_floats(&dd, B, T));
    float *scr = malloc(sizeof(float) * dispatcher_scratch_floats(&dd, B, T));
    rng_fill_normal(&r, x, (long)nx, 0, 1);
    rng_fill_normal(&r, G, (long)nx, 0, 1);
    rng_fill_uniform(&r, wi, (long)ni, -0.3f, 0.3f);
    rng_fill_uniform(&r, wo, (long)ni, -0.3f, 0.3f);
    rng_fill_uniform(&r, wg, (long)ng, -0.6f, 0.6f);
    dispatcher_forward(&dd, o1, act, x, wi, wg, wo, skip, B, T, NULL, NULL);
    dispatcher_backward(&dd, dx1, dwi1, dwg1, dwo1, scr, G, act, x, wi, wg, wo, skip, B, T, 0,
                        NULL);
    ref_run(&dd, B, T, skip, x, wi, wg, wo, G, o2, c2, dx2, dwi2, dwg2, dwo2);
    printf(" same bits %s d=%d heads=%d T=%d skip=%s\n", kind == DISPATCHER_PAPER ? "paper" : "mh",
           d, heads, T, skip ? "yes" : "no");
    CHECK(same_bits(o1, o2, nx), "output differs from the level-outer loops'");
    CHECK(same_bits(dispatcher_coeffs(&dd, act, B, T), c2, nc), "coefficients differ");
    CHECK(same_bits(dx1, dx2, nx), "d input differs from the level-outer loops'");
    CHECK(same_bits(dwi1, dwi2, ni), "d linear_in differs");
    CHECK(same_bits(dwg1, dwg2, ng), "d internal_attention differs");
    CHECK(same_bits(dwo1, dwo2, ni), "d linear_out differs");
    free(x), free(G), free(wi), free(wo), free(wg), free(o1), free(o2), free(c2);
    free(dx1), free(dx2), free(dwi1), free(dwi2), free(dwo1), free(dwo2), free(dwg1), free(dwg2);
    free(act), free(scr);
}

/* In a bf16 scope, the packed forward (the last level state through vrows, kept with
 * inp as bf16 packs) and its backward against the fp32 rows' passes: the same output,
 * coefficients and gradients, bit for bit; inp itself is not read by the backward. */
static void test_packed(DispatcherKind kind, int d, int heads, int B, int T)
{
    DispatcherDims dd = {kind, d, heads, dispatcher_levels(16), NULL};
    size_t nx = (size_t)B * T * d, ni = dispatcher_w_in_floats(&dd);
    size_t ng = dispatcher_w_gate_floats(&dd), nc = dispatcher_coeff_floats(&dd, B, T);
    size_t na = dispatcher_act_floats(&dd, B, T), ns = dispatcher_scratch_floats(&dd, B, T);
    Rng r;
    rng_seed(&r, 7 + T + heads + d + kind);
    float *slab = malloc(sizeof(float) * (2 * ni + ng));   /* the weights, attached */
    float *wi = slab, *wo = slab + ni, *wg = slab + 2 * ni;
    float *x = malloc(sizeof(float) * nx), *G = malloc(sizeof(float) * nx);
    float *room = malloc(sizeof(float) * nx), *x2 = malloc(sizeof(float) * nx);
    float *o[2], *act[2], *scr[2], *dx[2], *dwi[2], *dwo[2], *dwg[2];
    for (int k = 0; k < 2; k++) {
        o[k] = malloc(sizeof(float) * nx);
        act[k] = malloc(sizeof(float) * na);
        scr[k] = malloc(sizeof(float) * ns);
        dx[k] = calloc(nx, sizeof(float));
        dwi[k] = calloc(ni, sizeof(float));
        dwo[k] = calloc(ni, sizeof(float));
        dwg[k] = calloc(ng, sizeof(float));
    }
    rng_fill_normal(&r, x, (long)nx, 0, 1);
    rng_fill_normal(&r, G, (long)nx, 0, 1);
    rng_fill_uniform(&r, slab, (long)(2 * ni + ng), -0.3f, 0.3f);
    char err[LM_ERR_LEN];
    CHECK(matmul_bf16_attach(slab, 2 * ni + ng, err) == LM_OK, "attach: %s", err);
    const void *prev = matmul_scope_enter(slab);
    CHECK(matmul_packs() && dispatcher_packs_fit(&dd, B, T), "packs in this scope");
    dispatcher_forward(&dd, o[0], act[0], x, wi, wg, wo, NULL, B, T, NULL, NULL);
    dispatcher_backward(&dd, dx[0], dwi[0], dwg[0], dwo[0], scr[0], G, act[0], x, wi, wg, wo,
                        NULL, B, T, 0, NULL);
    dispatcher_forward(&dd, o[1], act[1], x, wi, wg, wo, NULL, B, T, scr[1],
                       (uint16_t *)room);
    memcpy(x2, x, sizeof(float) * nx);
    for (size_t i = 0; i < nx; i++)   /* the backward must read inp's pack, not inp */
        x2[i] = -x2[i];
    dispatcher_backward(&dd, dx[1], dwi[1], dwg[1], dwo[1], scr[1], G, act[1], x2, wi, wg, wo,
                        NULL, B, T, 1, (const uint16_t *)room);
    matmul_scope_exit(prev);
    matmul_bf16_detach(slab);
    printf(" packed %s d=%d heads=%d B=%d T=%d\n", kind == DISPATCHER_PAPER ? "paper" : "mh",
           d, heads, B, T);
    CHECK(same_bits(o[0], o[1], nx), "packed: output differs");
    CHECK(same_bits(dispatcher_coeffs(&dd, act[0], B, T), dispatcher_coeffs(&dd, act[1], B, T),
                    nc), "packed: coefficients differ");
    CHECK(same_bits(dx[0], dx[1], nx), "packed: d input differs");
    CHECK(same_bits(dwi[0], dwi[1], ni), "packed: d linear_in differs");
    CHECK(same_bits(dwg[0], dwg[1], ng), "packed: d internal_attention differs");
    CHECK(same_bits(dwo[0], dwo[1], ni), "packed: d linear_out differs");
    for (int k = 0; k < 2; k++) {
        free(o[k]), free(act[k]), free(scr[k]), free(dx[k]), free(dwi[k]), free(dwo[k]);
        free(dwg[k]);
    }
    free(slab), free(x), free(G), free(room), free(x2);
}

int main(void)
{
    CHECK(dispatcher_levels(16) == 4 && dispatcher_levels(64) == 6 && dispatcher_levels(20) == 4,
          "levels = floor(log2(bptt))");
    DispatcherDims dd = {DISPATCHER_PAPER, 16, 2, 6, NULL};
    CHECK(dispatcher_used_levels(&dd, 11) == 4, "T=11: shifts 1,2,4,8 only");
    static const unsigned char skip[3] = {1, 0, 1}, skip_mh[3] = {0, 1, 0};
    for (int heads = 1; heads <= 4; heads *= 4) {
        test_fd(DISPATCHER_PAPER, heads, 6, NULL);
        test_fd(DISPATCHER_PAPER, heads, 5, skip);
        test_fd(DISPATCHER_PAPER, heads, 3, NULL);   /* level 2 (shift 4) skipped for length */
        test_fd(DISPATCHER_MH, heads, 6, NULL);
        test_fd(DISPATCHER_MH, heads, 7, skip_mh);
    }
    test_fixture("dispatcher_layer_h1", DISPATCHER_PAPER);
    test_fixture("dispatcher_layer_h4", DISPATCHER_PAPER);
    test_fixture("dispatcher_layer_short", DISPATCHER_PAPER);
    test_fixture("dispatcher_mh_layer_h4", DISPATCHER_MH);
    test_step(DISPATCHER_PAPER, 16);
    test_step(DISPATCHER_PAPER, 5);
    test_step(DISPATCHER_MH, 16);
    test_step(DISPATCHER_MH, 11);
    test_step(DISPATCHER_PAPER, 40);   /* past bptt: all levels apply */
    test_step(DISPATCHER_MH, 40);
    for (int heads = 1; heads <= 4; heads *= 2) {   /* even and odd level counts, T < 2 */
        test_infer(DISPATCHER_PAPER, heads, 16);
        test_infer(DISPATCHER_PAPER, heads, 5);
        test_infer(DISPATCHER_MH, heads, 11);
        test_infer(DISPATCHER_MH, heads, 1);
    }
    static const unsigned char skip4[4] = {0, 1, 0, 1}, skip_all[4] = {1, 1, 1, 1};
    test_same_bits(DISPATCHER_PAPER, 128, 1, 32, NULL);    /* past bptt: the 4 levels apply */
    test_same_bits(DISPATCHER_PAPER, 128, 1, 13, skip4);
    test_same_bits(DISPATCHER_PAPER, 48, 4, 16, NULL);     /* hd = 12: the tails */
    test_same_bits(DISPATCHER_PAPER, 48, 4, 9, skip_all);
    test_same_bits(DISPATCHER_MH, 256, 2, 16, NULL);
    test_same_bits(DISPATCHER_MH, 48, 4, 11, skip4);
    test_same_bits(DISPATCHER_MH, 48, 2, 1, NULL);         /* one position: no level */
    setenv(GEMM_BF16_EMULATE_ENV, "1", 1);   /* the emulation where the CPU has no kernel */
    test_packed(DISPATCHER_PAPER, 128, 1, 3, 16);
    test_packed(DISPATCHER_PAPER, 64, 2, 3, 13);   /* hd = 32, odd rows */
    test_packed(DISPATCHER_MH, 96, 2, 5, 11);       /* 96 columns: a partial panel */
    return check_summary();
}
