/* test_layers.c — tests of the basic layer kernels: linear, embedding, posenc, layernorm,
 * activation, dropout, crossentropy. Every backward gets a central finite-difference check
 * of the scalar L = sum(out * G) (G random, L accumulated in double), forward passes are
 * compared with naive double-precision loops, and posenc with values printed by torch.
 * Not a benchmark and not a PyTorch-fixture test (the model tests do that). Fixed seeds. */
#include "activation.h"
#include "check.h"
#include "crossentropy.h"
#include "dropout.h"
#include "embedding.h"
#include "layernorm.h"
#include "linear.h"
#include "posenc.h"
#include "rng.h"

#include <string.h>

/* FD tolerances. The loss is float32 forward math accumulated in double; with eps = 1e-3
 * the float rounding of the outputs gives numeric-gradient noise of ~1e-4 and the
 * truncation error is O(eps^2), so atol 2e-3 plus rtol 1e-2 separates a correct gradient
 * from a wrong one (a wrong term is off by O(1)). */
#define FD_EPS 1e-3f
#define FD_RTOL 1e-2
#define FD_ATOL 2e-3

typedef double (*LossFn)(void *ctx);

static float *buf(long n)
{
    float *p = calloc((size_t)n, sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static float *rand_buf(Rng *r, long n, float lo, float hi)
{
    float *p = buf(n);
    rng_fill_uniform(r, p, n, lo, hi);
    return p;
}

static double dot_d(const float *a, const float *b, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* Bit-for-bit equality (exact checks, where CHECK_CLOSE's 0/0 would be NaN). */
static int same_bits(const float *a, const float *b, long n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* Central differences of f with respect to every element of x, checked against grad. */
static void fd_check(const char *what, LossFn f, void *ctx, float *x, const float *grad,
                     long n)
{
    float *num = buf(n);
    for (long i = 0; i < n; i++) {
        float keep = x[i];
        x[i] = keep + FD_EPS;
        double lp = f(ctx);
        x[i] = keep - FD_EPS;
        double lm = f(ctx);
        x[i] = keep;
        num[i] = (float)((lp - lm) / (2.0 * FD_EPS));
    }
    CHECK_CLOSE(what, grad, num, n, FD_RTOL, FD_ATOL);
    free(num);
}

/* ---------------------------------------------------------------- linear */

typedef struct {
    float *out, *inp, *w, *b, *G;
    int N, Ci, Co;
} LinCtx;

static double linear_loss(void *p)
{
    LinCtx *c = p;
    linear_forward(c->out, c->inp, c->w, c->b, c->N, c->Ci, c->Co);
    return dot_d(c->out, c->G, (long)c->N * c->Co);
}

static void test_linear_forward(Rng *r, int N, int Ci, int Co, int bias)
{
    float *inp = rand_buf(r, (long)N * Ci, -1, 1), *w = rand_buf(r, (long)Co * Ci, -1, 1);
    float *b = bias ? rand_buf(r, Co, -1, 1) : NULL;
    float *out = buf((long)N * Co), *ref = buf((long)N * Co);
    for (long i = 0; i < (long)N * Co; i++)
        out[i] = 1e9f;   /* must be overwritten, not accumulated */
    for (int n = 0; n < N; n++)
        for (int o = 0; o < Co; o++) {
            double s = b ? b[o] : 0.0;
            for (int i = 0; i < Ci; i++)
                s += (double)inp[n * Ci + i] * w[o * Ci + i];
            ref[n * Co + o] = (float)s;
        }
    linear_forward(out, inp, w, b, N, Ci, Co);
    char what[64];
    snprintf(what, sizeof what, "linear fwd %dx%d->%d bias=%d", N, Ci, Co, bias);
    /* float32 dot products of length <= 96 with |terms| <= 1: error <~ 1e-5 */
    CHECK_CLOSE(what, out, ref, (long)N * Co, 1e-5, 1e-5);
    free(inp), free(w), free(b), free(out), free(ref);
}

static void test_linear_backward(Rng *r)
{
    LinCtx c = {.N = 5, .Ci = 7, .Co = 6};
    long ni = (long)c.N * c.Ci, nw = (long)c.Co * c.Ci, no = (long)c.N * c.Co;
    c.inp = rand_buf(r, ni, -1, 1), c.w = rand_buf(r, nw, -1, 1), c.b = rand_buf(r, c.Co, -1, 1);
    c.G = rand_buf(r, no, -1, 1), c.out = buf(no);
    float *dinp = buf(ni), *dw = buf(nw), *db = buf(c.Co);
    /* gradients start at 0.5: backward must add, so subtract it again afterwards */
    for (long i = 0; i < ni; i++) dinp[i] = 0.5f;
    for (long i = 0; i < nw; i++) dw[i] = 0.5f;
    for (int i = 0; i < c.Co; i++) db[i] = 0.5f;
    linear_forward(c.out, c.inp, c.w, c.b, c.N, c.Ci, c.Co);
    linear_backward(dinp, dw, db, c.G, c.inp, c.w, c.N, c.Ci, c.Co);
    for (long i = 0; i < ni; i++) dinp[i] -= 0.5f;
    for (long i = 0; i < nw; i++) dw[i] -= 0.5f;
    for (int i = 0; i < c.Co; i++) db[i] -= 0.5f;
    fd_check("linear FD dinp", linear_loss, &c, c.inp, dinp, ni);
    fd_check("linear FD dw", linear_loss, &c, c.w, dw, nw);
    fd_check("linear FD db", linear_loss, &c, c.b, db, c.Co);
    /* NULL gradients are skipped; the others are unchanged by the skip */
    float *dw2 = buf(nw);
    linear_backward(NULL, dw2, NULL, c.G, c.inp, c.w, c.N, c.Ci, c.Co);
    CHECK_CLOSE("linear dw alone == dw", dw2, dw, nw, 1e-6, 1e-6);
    free(c.inp), free(c.w), free(c.b), free(c.G), free(c.out), free(dinp), free(dw), free(db);
    free(dw2);
}

/* The fused activation paths against the unfused ones they replace (linear + relu/gelu
 * forward; memset + linear_backward + memset + relu/gelu backward), with and without a
 * bias, and N = 1 (the decoding path). Gradient targets start at 0.5: dw/db must add,
 * dpre overwrite. */
static void test_linear_act_fused(Rng *r, int N, int Ci, int Co, int bias, LinearAct act)
{
    long ni = (long)N * Ci, nw = (long)Co * Ci, no = (long)N * Co;
    float *inp = rand_buf(r, ni, -1, 1), *w = rand_buf(r, nw, -1, 1);
    float *b = bias ? rand_buf(r, Co, -1, 1) : NULL;
    float *pre = buf(no), *out = buf(no), *pre_ref = buf(no), *out_ref = buf(no);
    for (long i = 0; i < no; i++)
        pre[i] = out[i] = 1e9f;
    linear_forward_act(pre, out, inp, w, b, N, Ci, Co, act);
    linear_forward(pre_ref, inp, w, b, N, Ci, Co);
    if (act == LINEAR_GELU)
        gelu_forward(out_ref, pre_ref, no);
    else
        relu_forward(out_ref, pre_ref, no);
    const char *name = act == LINEAR_GELU ? "gelu" : "relu";
    char what[96];
    snprintf(what, sizeof what, "linear+%s fused fwd %dx%d->%d bias=%d", name, N, Ci, Co, bias);
    CHECK_CLOSE(what, pre, pre_ref, no, 1e-5, 1e-6);
    CHECK_CLOSE(what, out, out_ref, no, 1e-5, 1e-6);
    if (act == LINEAR_RELU) {   /* pre == out: relu written once, in place, the same bits */
        float *io = buf(no);
        for (long i = 0; i < no; i++)
            io[i] = 1e9f;
        linear_forward_act(io, io, inp, w, b, N, Ci, Co, act);
        snprintf(what, sizeof what, "linear+relu in place %dx%d->%d bias=%d: out's bits", N,
                 Ci, Co, bias);
        CHECK(!memcmp(io, out, (size_t)no * sizeof(float)), "%s", what);
        free(io);
    }
    /* backward of a layer Co -> Ci fed by `out` (the activation's output): dpre (N, Co) */
    float *dout = rand_buf(r, (long)N * Ci, -1, 1), *w2 = rand_buf(r, nw, -1, 1);
    float *dpre = buf(no), *dh = buf(no), *dpre_ref = buf(no);
    float *dw = buf(nw), *db = buf(Ci), *dw_ref = buf(nw), *db_ref = buf(Ci);
    for (long i = 0; i < no; i++) dpre[i] = 7.0f;
    for (long i = 0; i < nw; i++) dw[i] = dw_ref[i] = 0.5f;
    for (int i = 0; i < Ci; i++) db[i] = db_ref[i] = 0.5f;
    /* ReLU reads its derivative off `out`: its pre may be NULL */
    linear_backward_act(dpre, dw, db, dout, out, act == LINEAR_GELU ? pre : NULL, w2, N, Co,
                        Ci, act);
    linear_backward(dh, dw_ref, db_ref, dout, out, w2, N, Co, Ci);
    if (act == LINEAR_GELU)
        gelu_backward(dpre_ref, dh, pre_ref, no);
    else
        relu_backward(dpre_ref, dh, out, no);
    snprintf(what, sizeof what, "linear+%s fused bwd %dx%d->%d", name, N, Co, Ci);
    CHECK_CLOSE(what, dpre, dpre_ref, no, 1e-5, 1e-6);
    CHECK_CLOSE(what, dw, dw_ref, nw, 1e-5, 1e-6);
    CHECK_CLOSE(what, db, db_ref, Ci, 1e-5, 1e-6);
    free(inp), free(w), free(b), free(pre), free(out), free(pre_ref), free(out_ref);
    free(dout), free(w2), free(dpre), free(dh), free(dpre_ref), free(dw), free(db);
    free(dw_ref), free(db_ref);
}

/* The ReLU kept as sign bits (a bf16 model's packed FFN): the forward writes the same
 * bits as linear_forward_act in place and sets bit c where out > 0; the backward's dpre is
 * linear_backward_act's, bit for bit (widths across and between 32-bit words). */
static void test_linear_relu_bits(Rng *r, int N, int Ci, int Co)
{
    long ni = (long)N * Ci, nw = (long)Co * Ci, no = (long)N * Co;
    size_t W = linear_relu_words(Co);
    float *inp = rand_buf(r, ni, -1, 1), *w = rand_buf(r, nw, -1, 1), *b = rand_buf(r, Co, -1, 1);
    float *out = buf(no), *ref = buf(no);
    uint32_t *bits = malloc((size_t)N * W * sizeof *bits);
    memset(bits, 0xa5, (size_t)N * W * sizeof *bits);
    linear_forward_relu_bits(out, bits, inp, w, b, N, Ci, Co);
    linear_forward_act(ref, ref, inp, w, b, N, Ci, Co, LINEAR_RELU);
    char what[96];
    snprintf(what, sizeof what, "relu bits %dx%d->%d: out's bits", N, Ci, Co);
    CHECK(!memcmp(out, ref, (size_t)no * sizeof(float)), "%s", what);
    long wrong = 0, pos = 0;
    for (long i = 0; i < no; i++) {
        long n = i / Co, c = i % Co;
        int bit = (int)(bits[(size_t)n * W + (size_t)c / 32] >> (c % 32)) & 1;
        wrong += bit != (out[i] > 0.0f);
        pos += out[i] > 0.0f;
    }
    for (long n = 0; n < N && Co % 32; n++)   /* the last word's unused bits stay clear */
        wrong += (bits[(size_t)n * W + W - 1] >> (Co % 32)) != 0;
    CHECK(!wrong && pos > 0 && pos < no, "%s: %ld wrong bits (%ld of %ld positive)", what,
          wrong, pos, no);
    float *dout = rand_buf(r, (long)N * Ci, -1, 1), *w2 = rand_buf(r, nw, -1, 1);
    float *dpre = buf(no), *dpre_ref = buf(no);
    for (long i = 0; i < no; i++) dpre[i] = 7.0f;
    linear_backward_relu_bits(dpre, dout, bits, w2, N, Co, Ci);
    linear_backward_act(dpre_ref, NULL, NULL, dout, out, NULL, w2, N, Co, Ci, LINEAR_RELU);
    CHECK(!memcmp(dpre, dpre_ref, (size_t)no * sizeof(float)), "%s: dpre's bits", what);
    free(inp), free(w), free(b), free(out), free(ref), free(bits), free(dout), free(w2);
    free(dpre), free(dpre_ref);
}

/* ---------------------------------------------------------------- embedding */

typedef struct {
    float *out, *wte, *G;
    const int *tok;
    int N, C;
    float scale;
} EmbCtx;

static double embedding_loss(void *p)
{
    EmbCtx *c = p;
    embedding_forward(c->out, c->tok, c->wte, c->scale, c->N, c->C);
    return dot_d(c->out, c->G, (long)c->N * c->C);
}

static void test_embedding(Rng *r)
{
    static const int tok[6] = {3, 0, 3, 4, 1, 3};   /* repeats must accumulate */
    EmbCtx c = {.tok = tok, .N = 6, .C = 5, .scale = 2.5f};
    int V = 5;
    c.wte = rand_buf(r, (long)V * c.C, -1, 1), c.G = rand_buf(r, (long)c.N * c.C, -1, 1);
    c.out = buf((long)c.N * c.C);
    embedding_forward(c.out, tok, c.wte, c.scale, c.N, c.C);
    int exact = 1;
    for (int n = 0; n < c.N; n++)
        for (int k = 0; k < c.C; k++)
            exact &= c.out[n * c.C + k] == c.wte[tok[n] * c.C + k] * 2.5f;
    CHECK(exact, "embedding forward is not wte[tok] * scale");
    float *dwte = buf((long)V * c.C);
    embedding_backward(dwte, c.G, tok, c.scale, c.N, c.C);
    fd_check("embedding FD dwte", embedding_loss, &c, c.wte, dwte, (long)V * c.C);
    int untouched = 1;   /* token 2 never occurs */
    for (int k = 0; k < c.C; k++)
        untouched &= dwte[2 * c.C + k] == 0.0f;
    CHECK(untouched, "embedding backward wrote a row of an absent token");
    free(c.wte), free(c.G), free(c.out), free(dwte);
}

/* ---------------------------------------------------------------- posenc */

typedef struct {
    float *x, *x0, *table, *G;
    int B, T, C, t0;
} PosCtx;

static double posenc_loss(void *p)
{
    PosCtx *c = p;
    long n = (long)c->B * c->T * c->C;
    memcpy(c->x, c->x0, (size_t)n * sizeof *c->x);
    posenc_add(c->x, c->table, c->B, c->T, c->C, c->t0);
    return dot_d(c->x, c->G, n);
}

static void test_posenc_sinusoid(void)
{
    int T = 5000, C = 512;
    float *pe = buf((long)T * C);
    posenc_sinusoid(pe, T, C);
    int ok = 1;
    for (int c = 0; c < C; c++)
        ok &= pe[c] == (c % 2 ? 1.0f : 0.0f);
    CHECK(ok, "posenc row 0 is not (0, 1, 0, 1, ...)");
    /* Printed by /usr/bin/python3 (torch 1.13.1, CPU capability AVX2) with the
     * word_language_model PositionalEncoding code for max_len=5000, d_model=512:
     * pe[t, c].item(). (4203, 52) needs torch's exact div_i: with glibc expf it was off
     * by 2.4e-4. Tolerance 2e-7 absolute: 1-ulp sin/cos differences are ~6e-8. */
    static const struct { int t, c; float v; } known[] = {
        {1, 0, 0.8414709568023682f},     {1, 1, 0.5403023362159729f},
        {7, 3, 0.8918191194534302f},     {100, 10, 0.9599284529685974f},
        {4999, 511, 0.8687057495117188f}, {4999, 0, -0.6639495491981506f},
        {123, 257, 0.3342377245426178f}, {4203, 52, -0.0008929980685934424f},
        {2500, 100, -0.833811342716217f},
    };
    int n = (int)(sizeof known / sizeof known[0]);
    float got[16], want[16];
    for (int i = 0; i < n; i++) {
        got[i] = pe[(long)known[i].t * C + known[i].c];
        want[i] = known[i].v;
    }
    CHECK_CLOSE("posenc vs torch values", got, want, n, 0.0, 2e-7);
    free(pe);
}

static void test_posenc_learned(Rng *r)
{
    PosCtx c = {.B = 3, .T = 4, .C = 5, .t0 = 2};
    long n = (long)c.B * c.T * c.C, nt = (long)(c.t0 + c.T + 1) * c.C;
    c.x = buf(n), c.x0 = rand_buf(r, n, -1, 1), c.G = rand_buf(r, n, -1, 1);
    c.table = rand_buf(r, nt, -1, 1);
    posenc_loss(&c);
    int ok = 1;
    for (int b = 0; b < c.B; b++)
        for (int t = 0; t < c.T; t++)
            for (int k = 0; k < c.C; k++) {
                long i = ((long)b * c.T + t) * c.C + k;
                ok &= c.x[i] == c.x0[i] + c.table[(c.t0 + t) * c.C + k];
            }
    CHECK(ok, "posenc_add is not x + table[t0 + t]");
    float *dtable = buf(nt);
    posenc_backward(dtable, c.G, c.B, c.T, c.C, c.t0);
    fd_check("posenc FD dtable", posenc_loss, &c, c.table, dtable, nt);
    free(c.x), free(c.x0), free(c.G), free(c.table), free(dtable);
}

/* ---------------------------------------------------------------- layernorm */

typedef struct {
    float *out, *inp, *w, *b, *G;
    int N, C;
} LnCtx;

static double layernorm_loss(void *p)
{
    LnCtx *c = p;
    layernorm_forward(c->out, NULL, NULL, c->inp, c->w, c->b, c->N, c->C);
    return dot_d(c->out, c->G, (long)c->N * c->C);
}

static void test_layernorm_stats(Rng *r)
{
    int N = 8, C = 100;
    float *x = rand_buf(r, (long)N * C, -2, 4), *w = buf(C), *b = buf(C);
    float *out = buf((long)N * C), *mean = buf(N), *rstd = buf(N);
    for (int c = 0; c < C; c++)
        w[c] = 1.0f;
    layernorm_forward(out, mean, rstd, x, w, b, N, C);
    float mu[8], var[8], ref_mean[8], ref_rstd[8], zero[8] = {0}, one[8];
    for (int n = 0; n < N; n++) {
        double s = 0, s2 = 0, m = 0, v = 0;
        for (int c = 0; c < C; c++)
            s += out[n * C + c], m += x[n * C + c];
        mu[n] = (float)(s / C), m /= C;
        for (int c = 0; c < C; c++) {
            s2 += (out[n * C + c] - mu[n]) * (out[n * C + c] - mu[n]);
            v += (x[n * C + c] - m) * (x[n * C + c] - m);
        }
        var[n] = (float)(s2 / C), one[n] = 1.0f;
        ref_mean[n] = (float)m, ref_rstd[n] = (float)(1.0 / sqrt(v / C + 1e-5));
    }
    /* inputs have variance ~3: the eps shifts the output variance by ~3e-6 */
    CHECK_CLOSE("layernorm row mean ~ 0", mu, zero, N, 0.0, 1e-6);
    CHECK_CLOSE("layernorm row var ~ 1", var, one, N, 0.0, 1e-5);
    CHECK_CLOSE("layernorm saved mean", mean, ref_mean, N, 1e-6, 1e-6);
    CHECK_CLOSE("layernorm saved rstd", rstd, ref_rstd, N, 1e-5, 0.0);
    free(x), free(w), free(b), free(out), free(mean), free(rstd);
}

static void test_layernorm_backward(Rng *r)
{
    LnCtx c = {.N = 4, .C = 19};   /* C not a multiple of the 16 lanes */
    long n = (long)c.N * c.C;
    c.inp = rand_buf(r, n, -1, 3), c.w = rand_buf(r, c.C, 0.5f, 1.5f);
    c.b = rand_buf(r, c.C, -1, 1), c.G = rand_buf(r, n, -1, 1), c.out = buf(n);
    float *mean = buf(c.N), *rstd = buf(c.N), *dinp = buf(n), *dw = buf(c.C), *db = buf(c.C);
    layernorm_forward(c.out, mean, rstd, c.inp, c.w, c.b, c.N, c.C);
    layernorm_backward(dinp, dw, db, c.G, c.inp, c.w, mean, rstd, c.N, c.C);
    fd_check("layernorm FD dinp", layernorm_loss, &c, c.inp, dinp, n);
    fd_check("layernorm FD dw", layernorm_loss, &c, c.w, dw, c.C);
    fd_check("layernorm FD db", layernorm_loss, &c, c.b, db, c.C);
    free(c.inp), free(c.w), free(c.b), free(c.G), free(c.out);
    free(mean), free(rstd), free(dinp), free(dw), free(db);
}

/* The fused residual + norm gives the bits of residual_forward then layernorm_forward
 * (C = 128, the presets' width: the vector path; C = 19: the tails). The one-pass
 * backward gives the bits of the three loops it merged: the separate loops of the
 * no-dw/no-db calls, run into fresh buffers. */
static void test_layernorm_fused(Rng *r, int N, int C)
{
    long n = (long)N * C;
    float *x = rand_buf(r, n, -2, 2), *y = rand_buf(r, n, -2, 2), *w = rand_buf(r, C, 0.5f, 1.5f);
    float *b = rand_buf(r, C, -1, 1), *G = rand_buf(r, n, -1, 1);
    float *res1 = buf(n), *res2 = buf(n), *o1 = buf(n), *o2 = buf(n);
    float *m1 = buf(N), *m2 = buf(N), *s1 = buf(N), *s2 = buf(N);
    layernorm_residual_forward(o1, res1, m1, s1, x, y, w, b, N, C);
    residual_forward(res2, x, y, n);
    layernorm_forward(o2, m2, s2, res2, w, b, N, C);
    CHECK(!memcmp(res1, res2, sizeof(float) * n) && !memcmp(o1, o2, sizeof(float) * n) &&
              !memcmp(m1, m2, sizeof(float) * N) && !memcmp(s1, s2, sizeof(float) * N),
          "residual + layernorm fused: the bits of the two passes");
    float *d1 = buf(n), *d2 = buf(n), *dw1 = buf(C), *dw2 = buf(C), *db1 = buf(C), *db2 = buf(C);
    layernorm_backward(d1, dw1, db1, G, res1, w, m1, s1, N, C);   /* one pass */
    layernorm_backward(d2, NULL, NULL, G, res1, w, m1, s1, N, C); /* the loops apart */
    for (int i = 0; i < N; i++) {
        layernorm_backward(res2, dw2, NULL, G + (size_t)i * C, res1 + (size_t)i * C, w, m1 + i,
                           s1 + i, 1, C);
        layernorm_backward(res2, NULL, db2, G + (size_t)i * C, res1 + (size_t)i * C, w, m1 + i,
                           s1 + i, 1, C);
    }
    CHECK(!memcmp(d1, d2, sizeof(float) * n) && !memcmp(dw1, dw2, sizeof(float) * C) &&
              !memcmp(db1, db2, sizeof(float) * C),
          "layernorm backward in one pass: the bits of the separate loops");
    free(x), free(y), free(w), free(b), free(G), free(res1), free(res2), free(o1), free(o2);
    free(m1), free(m2), free(s1), free(s2), free(d1), free(d2), free(dw1), free(dw2);
    free(db1), free(db2);
}

/* ---------------------------------------------------------------- activations */

typedef struct {
    float *out, *inp, *G, *mask;
    long n;
    int kind;   /* 0 relu, 1 gelu, 2 dropout */
    float p;
} ActCtx;

static double act_loss(void *p)
{
    ActCtx *c = p;
    if (c->kind == 0)
        relu_forward(c->out, c->inp, c->n);
    else if (c->kind == 1)
        gelu_forward(c->out, c->inp, c->n);
    else {
        DropKey k = {.seed = 77};   /* the same mask on every evaluation */
        dropout_forward(c->out, c->mask, c->inp, c->p, &k, 1, 1, (int)c->n, 0);
    }
    return dot_d(c->out, c->G, c->n);
}

static void test_activations(Rng *r)
{
    ActCtx c = {.n = 64};
    c.inp = rand_buf(r, c.n, -3, 3), c.G = rand_buf(r, c.n, -1, 1), c.out = buf(c.n);
    for (long i = 0; i < c.n; i++)   /* keep ReLU's kink out of the FD stencil */
        if (fabsf(c.inp[i]) < 0.05f)
            c.inp[i] = 0.5f;
    float *d = buf(c.n), *ref = buf(c.n);
    relu_forward(c.out, c.inp, c.n);
    relu_backward(d, c.G, c.out, c.n);
    fd_check("relu FD dinp", act_loss, &c, c.inp, d, c.n);
    c.kind = 1;
    for (long i = 0; i < c.n; i++)
        ref[i] = (float)(0.5 * c.inp[i] * (1.0 + erf(c.inp[i] / sqrt(2.0))));
    gelu_forward(c.out, c.inp, c.n);
    /* erf is A&S 7.1.26 as in torch's vectorised kernel (abs error <= 1.5e-7, times
     * |x|/2 <= 1.5): over [-10, 10] both torch and gelu_forward are within ~4.6e-7 of
     * double precision, so atol 5e-7 */
    CHECK_CLOSE("gelu fwd vs double erf", c.out, ref, c.n, 1e-6, 5e-7);
    memset(d, 0, (size_t)c.n * sizeof *d);
    gelu_backward(d, c.G, c.inp, c.n);
    fd_check("gelu FD dinp", act_loss, &c, c.inp, d, c.n);
    /* residual with aliasing, add_inplace */
    float *a = rand_buf(r, c.n, -1, 1), *b = rand_buf(r, c.n, -1, 1), *sum = buf(c.n);
    for (long i = 0; i < c.n; i++)
        sum[i] = a[i] + b[i];
    float *acc = buf(c.n);
    memcpy(acc, a, (size_t)c.n * sizeof *a);
    add_inplace(acc, b, c.n);
    residual_forward(a, a, b, c.n);
    CHECK(same_bits(a, sum, c.n), "residual_forward with out == a is not a + b");
    CHECK(same_bits(acc, sum, c.n), "add_inplace is not acc + x");
    free(c.inp), free(c.G), free(c.out), free(d), free(ref), free(a), free(b), free(sum);
    free(acc);
}

/* ---------------------------------------------------------------- dropout */

static void test_dropout(Rng *r)
{
    long n = 100000;
    float p = 0.3f;
    float *x = rand_buf(r, n, 0.5f, 1.5f), *out = buf(n), *mask = buf(n), *d = buf(n);
    DropKey dk = {.seed = 5};
    dropout_forward(out, mask, x, p, &dk, 1, 1, (int)n, 0);
    long zeros = 0, bad = 0;
    for (long i = 0; i < n; i++) {
        zeros += out[i] == 0.0f;
        if (out[i] != 0.0f && fabsf(out[i] - x[i] / (1.0f - p)) > 1e-6f * fabsf(out[i]))
            bad++;
        if (mask[i] != 0.0f && mask[i] != 1.0f / (1.0f - p))
            bad++;
    }
    double frac = (double)zeros / n;
    printf("  dropout p=0.3 zeroed fraction %.4f\n", frac);
    /* binomial std sqrt(p(1-p)/n) = 0.0014: 0.01 is ~7 sigma */
    CHECK(fabs(frac - p) < 0.01, "zeroed fraction %.4f, expected ~%.2f", frac, (double)p);
    CHECK(bad == 0, "%ld kept values are not x/(1-p) or masks not in {0, 1/(1-p)}", bad);
    /* backward uses the same mask */
    float *g = rand_buf(r, n, -1, 1);
    dropout_backward(d, g, mask, n);
    long mism = 0;
    for (long i = 0; i < n; i++)
        mism += (d[i] == 0.0f) != (out[i] == 0.0f) || d[i] != g[i] * mask[i];
    CHECK(mism == 0, "dropout backward disagrees with the forward mask at %ld places", mism);
    /* FD check on a small piece with the mask replayed from a fixed seed */
    ActCtx c = {.n = 50, .kind = 2, .p = 0.4f, .inp = x, .G = g, .out = out, .mask = mask};
    memset(d, 0, 50 * sizeof *d);
    act_loss(&c);
    dropout_backward(d, g, mask, 50);
    fd_check("dropout FD dinp", act_loss, &c, x, d, 50);
    /* p = 0: identity, mask 1; in place; the call site still advances */
    memcpy(out, x, (size_t)n * sizeof *x);
    dropout_forward(out, mask, out, 0.0f, &dk, 1, 1, (int)n, 0);
    long diff = 0;
    for (long i = 0; i < n; i++)
        diff += out[i] != x[i] || mask[i] != 1.0f;
    CHECK(diff == 0, "p=0 dropout is not the identity at %ld places", diff);
    CHECK(dk.site == 2, "two calls left the site at %u", dk.site);
    /* The mask is keyed by (seed, site, global row, position in row): the same batch split
     * into row shares with their offsets, or laid out time-major, gets the same mask. */
    enum { B = 5, T = 7, W = 3 };
    float one[B * T * W], whole[B * T * W], shares[B * T * W], tm[B * T * W], o[B * T * W];
    for (int i = 0; i < B * T * W; i++)
        one[i] = 1.0f;
    DropKey k1 = {.seed = 9, .site = 4}, k2 = {.seed = 9, .site = 4, .row0 = 0};
    dropout_forward(o, whole, one, 0.5f, &k1, B, T, W, 0);
    dropout_forward(o, shares, one, 0.5f, &k2, 2, T, W, 0);
    k2 = (DropKey){.seed = 9, .site = 4, .row0 = 2};
    dropout_forward(o, shares + 2 * T * W, one, 0.5f, &k2, B - 2, T, W, 0);
    k2 = (DropKey){.seed = 9, .site = 4};
    dropout_forward(o, tm, one, 0.5f, &k2, B, T, W, 1);
    long split_diff = 0, tm_diff = 0, dropped = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < W; j++) {
                float w = whole[(b * T + t) * W + j];
                split_diff += shares[(b * T + t) * W + j] != w;
                tm_diff += tm[(t * B + b) * W + j] != w;
                dropped += w == 0.0f;
            }
    CHECK(split_diff == 0 && tm_diff == 0, "masks differ: %ld split, %ld time-major",
          split_diff, tm_diff);
    CHECK(dropped > 0 && dropped < B * T * W, "p=0.5 dropped %ld of %d", dropped, B * T * W);
    k2 = (DropKey){.seed = 9, .site = 5};   /* another site: another mask */
    dropout_forward(o, shares, one, 0.5f, &k2, B, T, W, 0);
    CHECK(memcmp(shares, whole, sizeof whole) != 0, "two call sites gave the same mask");
    free(x), free(out), free(mask), free(d), free(g);
}

/* ---------------------------------------------------------------- cross-entropy */

typedef struct {
    float *logits;
    const int *tgt;
    int N, V;
} CeCtx;

static double ce_loss(void *p)
{
    CeCtx *c = p;
    return crossentropy_forward(NULL, c->logits, c->tgt, c->N, c->V);
}

/* Naive double softmax / loss of one row. */
static double ce_naive_row(double *prob, const float *x, int V, int t)
{
    double m = x[0], s = 0;
    for (int i = 1; i < V; i++)
        m = x[i] > m ? x[i] : m;
    for (int i = 0; i < V; i++)
        s += exp((double)x[i] - m);
    for (int i = 0; i < V; i++)
        prob[i] = exp((double)x[i] - m) / s;
    return log(s) + m - x[t];
}

static void test_crossentropy(Rng *r)
{
    enum { N = 6, V = 1003 };   /* V not a multiple of the 16 lanes */
    static const int tgt[N] = {5, -1, 1002, 0, 17, -1};
    long n = (long)N * V;
    float *x = rand_buf(r, n, -8, 8), *losses = buf(N), *d = buf(n), *dref = buf(n);
    for (int i = 0; i < V; i++)   /* row 3: logits ~ 1e4 (naive exp would overflow) */
        x[3 * V + i] = 1e4f + (float)i * 0.01f;
    for (int i = 0; i < V; i++)   /* row 4: a wide range, -50 .. 50 */
        x[4 * V + i] = -50.0f + 100.0f * (float)i / V;
    double *prob = calloc(V, sizeof *prob), total = 0;
    float ref_loss[N];
    float scale = 0.25f;
    for (int k = 0; k < N; k++) {
        ref_loss[k] = 0;
        if (tgt[k] < 0)
            continue;
        double l = ce_naive_row(prob, x + (long)k * V, V, tgt[k]);
        ref_loss[k] = (float)l, total += l;
        for (int i = 0; i < V; i++)
            dref[(long)k * V + i] = (float)((prob[i] - (i == tgt[k])) * scale);
    }
    double got = crossentropy_forward(losses, x, tgt, N, V);
    /* row losses are O(1..100): float log-sum-exp, relative 1e-5 */
    CHECK_CLOSE("ce per-row loss vs double", losses, ref_loss, N, 1e-5, 1e-5);
    CHECK(fabs(got - total) < 1e-5 * total, "ce sum %.9g vs %.9g", got, total);
    double got2 = crossentropy_forward_backward(d, x, tgt, N, V, scale);
    CHECK(got2 == got, "forward_backward returns %.9g, forward %.9g", got2, got);
    /* probabilities scaled by 0.25: absolute 1e-7 (the polynomial exp is ~2e-7 relative) */
    CHECK_CLOSE("ce dlogits vs double", d, dref, n, 1e-5, 1e-8);
    /* in place must give the same bits */
    float *xi = buf(n);
    memcpy(xi, x, (size_t)n * sizeof *x);
    double got3 = crossentropy_forward_backward(xi, xi, tgt, N, V, scale);
    CHECK(got3 == got2, "in-place loss %.9g vs %.9g", got3, got2);
    CHECK(same_bits(xi, d, n), "in-place dlogits differ from out-of-place");
    /* FD on a small problem (loss is the plain sum, scale 1) */
    static const int t2[3] = {2, -1, 0};
    CeCtx c = {.logits = rand_buf(r, 3 * 9, -2, 2), .tgt = t2, .N = 3, .V = 9};
    float *d2 = buf(3 * 9);
    crossentropy_forward_backward(d2, c.logits, t2, 3, 9, 1.0f);
    fd_check("ce FD dlogits", ce_loss, &c, c.logits, d2, 3 * 9);
    free(x), free(losses), free(d), free(dref), free(prob), free(xi), free(c.logits), free(d2);
}

static void test_softmax(Rng *r)
{
    enum { N = 3, V = 1003 };
    float temp = 0.7f;
    float *x = rand_buf(r, (long)N * V, -8, 8), *p = buf((long)N * V), *ref = buf(V);
    double *prob = calloc(V, sizeof *prob);
    for (int i = 0; i < V; i++)   /* row 2: logits ~ 1e4 */
        x[2 * V + i] = 1e4f + (float)i * 0.01f;
    for (int i = 0; i < V; i++)
        p[i] = x[i] / temp;   /* row 0 divided by hand for the reference */
    ce_naive_row(prob, p, V, 0);
    for (int i = 0; i < V; i++)
        ref[i] = (float)prob[i];
    memcpy(p, x, (size_t)N * V * sizeof *x);
    softmax_forward(p, p, N, V, temp);   /* in place */
    /* probabilities ~1e-3 with exp accurate to ~2e-7 relative: rtol 1e-5 */
    CHECK_CLOSE("softmax T=0.7 vs double", p, ref, V, 1e-5, 1e-9);
    double rowsum = 0;
    for (int i = 0; i < V; i++)
        rowsum += p[2 * V + i];
    CHECK(fabs(rowsum - 1.0) < 1e-5, "softmax row with logits 1e4 sums to %.9g", rowsum);
    free(x), free(p), free(ref), free(prob);
}

int main(void)
{
    Rng r;
    rng_seed(&r, 1234);
    test_linear_forward(&r, 7, 13, 5, 1);
    test_linear_forward(&r, 7, 13, 5, 0);
    test_linear_forward(&r, 64, 96, 80, 1);
    test_linear_backward(&r);
    for (int act = LINEAR_RELU; act <= LINEAR_GELU; act++) {
        test_linear_act_fused(&r, 9, 13, 11, 1, (LinearAct)act);
        test_linear_act_fused(&r, 9, 13, 11, 0, (LinearAct)act);
        test_linear_act_fused(&r, 1, 16, 24, 1, (LinearAct)act);
    }
    test_linear_relu_bits(&r, 9, 13, 70);
    test_linear_relu_bits(&r, 5, 24, 64);
    test_linear_relu_bits(&r, 3, 7, 20);
    test_embedding(&r);
    test_posenc_sinusoid();
    test_posenc_learned(&r);
    test_layernorm_stats(&r);
    test_layernorm_backward(&r);
    test_layernorm_fused(&r, 6, 128);
    test_layernorm_fused(&r, 5, 19);
    test_activations(&r);
    test_dropout(&r);
    test_crossentropy(&r);
    test_softmax(&r);
    return check_summary();
}
