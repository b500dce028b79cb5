/* test_timemix.c — the causal time-mixing kernel and seed 004's linear LM: FD checks of
 * the kernel and of the whole model, PyTorch parity on the linear_lm fixture (logits,
 * zero-padded prefix, loss, every gradient including the masked time_mix gradient),
 * decode == full forward (also past ctx, with a sliding window), init and limits.
 * Not a training test. */
#include "check.h"
#include "err.h"
#include "model.h"
#include "safetensors.h"
#include "timemix.h"

#include <string.h>

static float *rnd(Rng *r, long n, float s)
{
    float *p = malloc((size_t)n * sizeof(float));
    rng_fill_uniform(r, p, n, -s, s);
    return p;
}

typedef struct {
    int T, N, ctx;
    float *x, *w, *b, *y, *R;
} Mix;

static double mix_loss(Mix *k)
{
    timemix_forward(k->y, k->x, k->w, k->b, k->T, k->N, k->ctx);
    double s = 0;
    for (long i = 0; i < (long)k->T * k->N; i++)
        s += (double)k->R[i] * k->y[i];
    return s;
}

static void fd(Mix *k, const char *what, float *p, const float *g, long n)
{
    float *num = malloc((size_t)n * sizeof(float));
    for (long i = 0; i < n; i++) {
        float keep = p[i], eps = 1e-2f;
        p[i] = keep + eps;
        double lp = mix_loss(k);
        p[i] = keep - eps;
        double lm = mix_loss(k);
        p[i] = keep;
        num[i] = (float)((lp - lm) / (2 * eps));
    }
    /* the loss is linear in each input: FD is exact up to float rounding */
    CHECK_CLOSE(what, g, num, n, 1e-3, 1e-3);
    free(num);
}

static void test_kernel(void)
{
    Rng r;
    rng_seed(&r, 3);
    Mix k = {.T = 5, .N = 6, .ctx = 7};
    long TN = (long)k.T * k.N;
    k.x = rnd(&r, TN, 1);
    k.w = rnd(&r, (long)k.ctx * k.ctx, 1);   /* upper triangle deliberately non-zero */
    k.b = rnd(&r, k.ctx, 1);
    k.R = rnd(&r, TN, 1);
    k.y = malloc((size_t)TN * sizeof(float));
    mix_loss(&k);
    /* reference: explicit lower-triangular sum */
    double worst = 0;
    for (int i = 0; i < k.T; i++)
        for (int n = 0; n < k.N; n++) {
            double s = k.b[i];
            for (int j = 0; j <= i; j++)
                s += (double)k.w[i * k.ctx + j] * k.x[j * k.N + n];
            worst = fmax(worst, fabs(s - k.y[i * k.N + n]));
        }
    CHECK(worst < 1e-5, "forward == explicit tril sum (%g); the upper triangle is ignored", worst);
    float *dx = calloc((size_t)TN, 4), *dw = calloc((size_t)k.ctx * k.ctx, 4);
    float *db = calloc((size_t)k.ctx, 4);
    float *scratch = malloc((size_t)timemix_scratch_floats(k.T, k.N) * 4);
    timemix_backward(dx, dw, db, scratch, k.R, k.x, k.w, k.T, k.N, k.ctx);
    fd(&k, "FD timemix input", k.x, dx, TN);
    fd(&k, "FD timemix bias", k.b, db, k.ctx);
    /* weight: lower triangle against FD, upper triangle and rows >= T exactly zero */
    float *num = calloc((size_t)k.ctx * k.ctx, 4);
    int upper_zero = 1;
    for (int i = 0; i < k.ctx; i++)
        for (int j = 0; j < k.ctx; j++) {
            long q = (long)i * k.ctx + j;
            if (j > i || i >= k.T) {
                upper_zero &= dw[q] == 0.0f;
                num[q] = 0;
                continue;
            }
            float keep = k.w[q];
            k.w[q] = keep + 1e-2f;
            double lp = mix_loss(&k);
            k.w[q] = keep - 1e-2f;
            double lm = mix_loss(&k);
            k.w[q] = keep;
            num[q] = (float)((lp - lm) / 2e-2);
        }
    CHECK(upper_zero, "weight gradient masked to the lower triangle");
    CHECK_CLOSE("FD timemix weight (lower)", dw, num, (long)k.ctx * k.ctx, 1e-3, 1e-3);
    free(num); free(k.x); free(k.w); free(k.b); free(k.R); free(k.y);
    free(dx); free(dw); free(db); free(scratch);
}

/* ---- the model ---- */

static Model *make_model(int V, int d, int ctx, char *err)
{
    Model *m = calloc(1, sizeof *m);
    if (config_set(&m->cfg, "model", "linear", err)) {
        free(m);
        return NULL;
    }
    m->cfg.d = d;
    m->cfg.bptt = ctx;
    m->vocab = V;
    params_init(&m->params);
    rng_seed(&m->rng, 1337);
    if (model_linear_init(m, err) != LM_OK) {
        params_free(&m->params);
        free(m);
        return NULL;
    }
    return m;
}

static void test_parity(void)
{
    char err[LM_ERR_LEN] = "", path[1024], label[192];
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(path, sizeof path, "%s/linear_lm.safetensors", dir ? dir : "tests/fixtures");
    SafeTensors *st;
    if (safetensors_open(path, &st, err) != LM_OK) {
        CHECK(0, "%s", err);
        return;
    }
    int V = atoi(safetensors_meta(st, "ntoken")), d = atoi(safetensors_meta(st, "d"));
    int ctx = atoi(safetensors_meta(st, "ctx")), B = atoi(safetensors_meta(st, "B"));
    int T = atoi(safetensors_meta(st, "T")), N = B * T;
    Model *m = make_model(V, d, ctx, err);
    CHECK(m != NULL, "%s", err);
    if (!m) {
        safetensors_close(st);
        return;
    }
    CHECK(m->params.n == 5, "5 tensors, lm_head tied once (%d)", m->params.n);
    for (int i = 0; i < m->params.n; i++) {
        char name[PARAMS_NAME_LEN + 8];
        snprintf(name, sizeof name, "param.%s", m->params.info[i].name);
        CHECK(safetensors_read_f32(st, name, params_data(&m->params, i),
                                   m->params.info[i].numel, err) == LM_OK, "%s", err);
    }
    int *tok = malloc(N * sizeof(int)), *tgt = malloc(N * sizeof(int)), tok5[64];
    safetensors_read_i32(st, "tokens", tok, N, err);
    safetensors_read_i32(st, "targets", tgt, N, err);
    float *ref = malloc((size_t)N * V * 4), *ref5 = malloc((size_t)B * 5 * V * 4);
    safetensors_read_f32(st, "logits", ref, (size_t)N * V, err);
    safetensors_read_f32(st, "logits_prefix5", ref5, (size_t)B * 5 * V, err);
    CHECK(m->ops->alloc(m, B, T, err) == LM_OK, "%s", err);
    m->ops->forward(m, tok, NULL, B, T, NULL, NULL);
    CHECK_CLOSE("linear logits", m->ops->logits(m), ref, (long)N * V, 1e-5, 1e-5);
    for (int b = 0; b < B; b++)
        memcpy(tok5 + b * 5, tok + b * T, 5 * sizeof(int));
    m->ops->forward(m, tok5, NULL, B, 5, NULL, NULL);
    CHECK_CLOSE("linear logits_prefix5 (zero padded)", m->ops->logits(m), ref5,
                (long)B * 5 * V, 1e-5, 1e-5);
    m->training = 1;
    double loss_sum;
    long count;
    m->ops->forward(m, tok, tgt, B, T, &loss_sum, &count);
    float loss = (float)(loss_sum / count), ref_loss;
    safetensors_read_f32(st, "loss", &ref_loss, 1, err);
    CHECK_CLOSE("linear loss", &loss, &ref_loss, 1, 1e-5, 1e-6);
    params_zero_grad(&m->params);
    m->ops->backward(m, 1.0f / (float)count);
    for (int i = 0; i < m->params.n; i++) {
        char name[PARAMS_NAME_LEN + 8];
        size_t n = m->params.info[i].numel;
        float *g = malloc(n * sizeof(float));
        snprintf(name, sizeof name, "grad.%s", m->params.info[i].name);
        CHECK(safetensors_read_f32(st, name, g, n, err) == LM_OK, "%s", err);
        snprintf(label, sizeof label, "linear %s", name);
        CHECK_CLOSE(label, params_grad(&m->params, i), g, (long)n, 1e-5, 1e-5);
        free(g);
    }
    const float *gw = params_grad(&m->params, params_find(&m->params, "time_mix.weight"));
    int upper_zero = 1;
    for (int i = 0; i < ctx; i++)
        for (int j = i + 1; j < ctx; j++)
            upper_zero &= gw[i * ctx + j] == 0.0f;
    CHECK(upper_zero, "time_mix.weight gradient exactly zero above the diagonal");
    free(tok); free(tgt); free(ref); free(ref5);
    model_destroy(m);
    safetensors_close(st);
}

static void test_model_fd(void)
{
    char err[LM_ERR_LEN] = "", label[192];
    int V = 13, d = 6, ctx = 5, B = 3, T = 4;
    Model *m = make_model(V, d, ctx, err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    Rng r;
    rng_seed(&r, 5);
    int tok[12], tgt[12];
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int)rng_below(&r, V);
        tgt[i] = i == 2 ? -1 : (int)rng_below(&r, V);
    }
    m->ops->alloc(m, B, T, err);
    m->training = 1;
    double base, lp, lm;
    long count;
    m->ops->forward(m, tok, tgt, B, T, &base, &count);
    CHECK(count == B * T - 1, "ignored target not counted (%ld)", count);
    params_zero_grad(&m->params);
    m->ops->backward(m, 0.5f);
    for (int i = 0; i < m->params.n; i++) {
        float *p = params_data(&m->params, i), *g = params_grad(&m->params, i);
        int n = (int)m->params.info[i].numel, k = n < 16 ? n : 16;
        float num[16], ana[16];
        for (int j = 0; j < k; j++) {
            int idx = (int)((long)j * 7919 % n);
            if (i == 1 && idx % ctx > idx / ctx)   /* time_mix: upper triangle unused */
                idx = (idx / ctx) * ctx;
            float keep = p[idx];
            p[idx] = keep + 1e-2f;
            m->ops->forward(m, tok, tgt, B, T, &lp, &count);
            p[idx] = keep - 1e-2f;
            m->ops->forward(m, tok, tgt, B, T, &lm, &count);
            p[idx] = keep;
            num[j] = (float)(0.5 * (lp - lm) / 2e-2);
            ana[j] = g[idx];
        }
        snprintf(label, sizeof label, "FD linear %s", m->params.info[i].name);
        CHECK_CLOSE(label, ana, num, k, 2e-2, 2e-3);
    }
    model_destroy(m);
}

static void test_decode(void)
{
    char err[LM_ERR_LEN] = "";
    int V = 17, d = 8, ctx = 6, L = 15;
    Model *m = make_model(V, d, ctx, err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    Rng r;
    rng_seed(&r, 11);
    int seq[15];
    for (int i = 0; i < L; i++)
        seq[i] = (int)rng_below(&r, V);
    m->ops->alloc(m, 1, ctx, err);
    DecodeState *ds = m->ops->decode_create(m, err);
    float step[17];
    double worst = 0;
    for (int p = 0; p < L; p++) {
        m->ops->decode_step(m, ds, seq[p], p, step);
        int start = p + 1 > ctx ? p + 1 - ctx : 0, n = p + 1 - start;
        m->ops->forward(m, seq + start, NULL, 1, n, NULL, NULL);
        const float *full = m->ops->logits(m) + (long)(n - 1) * V;
        for (int v = 0; v < V; v++)
            worst = fmax(worst, fabs(step[v] - full[v]));
    }
    printf("  %-40s max abs err %.3g\n", "linear decode vs forward (sliding)", worst);
    CHECK(worst <= 1e-5, "decode vs forward %g", worst);
    /* pos 0 restarts */
    float again[17];
    m->ops->decode_step(m, ds, seq[0], 0, again);
    m->ops->forward(m, seq, NULL, 1, 1, NULL, NULL);
    CHECK_CLOSE("linear decode restart at pos 0", again, m->ops->logits(m), V, 1e-5, 1e-6);
    m->ops->decode_destroy(ds);
    model_destroy(m);
}

static void test_init(void)
{
    char err[LM_ERR_LEN] = "";
    Model *m = make_model(40, 16, 9, err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    const ParamSet *ps = &m->params;
    const float *w = params_data(ps, params_find(ps, "time_mix.weight"));
    int upper_zero = 1;
    float mx = 0;
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++) {
            if (j > i)
                upper_zero &= w[i * 9 + j] == 0.0f;
            else
                mx = fmaxf(mx, fabsf(w[i * 9 + j]));
        }
    CHECK(upper_zero && mx <= 1.0f / 3 && mx > 0.25f, "time_mix init tril, bound 1/sqrt(ctx)");
    const float *h = params_data(ps, params_find(ps, "lm_head.weight"));
    mx = 0;
    for (int i = 0; i < 40 * 16; i++)
        mx = fmaxf(mx, fabsf(h[i]));
    CHECK(mx <= 0.25f && mx > 0.2f, "lm_head init bound 1/sqrt(d) (%g)", mx);
    CHECK(m->ops->alloc(m, 2, 10, err) == LM_EARG && strstr(err, "9"), "T > ctx refused: %s",
          err);
    CHECK(m->ops->alloc(m, 2, 9, err) == LM_OK, "%s", err);
    int tok[20] = {0};
    CHECK(m->ops->forward(m, tok, NULL, 3, 9, NULL, NULL) == LM_ESTATE, "B beyond alloc");
    model_destroy(m);
}

int main(void)
{
    test_kernel();
    test_parity();
    test_model_fd();
    test_decode();
    test_init();
    return check_summary();
}
