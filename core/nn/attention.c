/* attention.c — causal multi-head self-attention (nn.MultiheadAttention with a causal
 * mask): projections as single cblas_sgemm calls over all B*T rows, then per (batch,
 * head) sgemm calls over strided head slices for q k^T and P v, in row blocks of
 * ATTN_BLK so the masked upper triangle is (mostly) never computed.
 * Dropout on the attention weights keeps the undropped softmax P in act and marks dropped
 * entries by their sign bit (P >= 0 otherwise), so backward needs no extra mask buffer.
 * Not a flash-attention kernel: each head's (T,T) weights are materialised. */
#include "attention.h"

#include "fastmath.h"

#include "linear.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#define ATTN_BLK 64

size_t attention_act_floats(const AttentionDims *ad, int B, int T)
{
    size_t bt = (size_t)B * T;
    return bt * 4 * ad->d + (size_t)B * ad->heads * T * T + (size_t)T * T + 1;
}

size_t attention_scratch_floats(const AttentionDims *ad, int B, int T)
{
    return (size_t)B * T * 4 * ad->d + 2 * (size_t)T * T;
}

/* Largest of x[0..n), n >= 1, in 8 lanes so the compiler vectorises it. */
static inline float max8(const float *restrict x, int n)
{
    float a[8];
    int j = 0;
    for (int l = 0; l < 8; l++)
        a[l] = x[0];
    for (; j + 8 <= n; j += 8)
        for (int l = 0; l < 8; l++) {
            float v = x[j + l];
            a[l] = v > a[l] ? v : a[l];
        }
    for (; j < n; j++)
        a[0] = x[j] > a[0] ? x[j] : a[0];
    float m = a[0];
    for (int l = 1; l < 8; l++)
        m = a[l] > m ? a[l] : m;
    return m;
}

/* sum_j x[j] |y[j]| (y = NULL: sum_j x[j]) in 8 lanes. */
static inline float dot8_abs(const float *restrict x, const float *restrict y, int n)
{
    float a[8] = {0};
    int j = 0;
    if (y) {
        for (; j + 8 <= n; j += 8)
            for (int l = 0; l < 8; l++)
                a[l] += x[j + l] * fabsf(y[j + l]);
        for (; j < n; j++)
            a[0] += x[j] * fabsf(y[j]);
    } else {
        for (; j + 8 <= n; j += 8)
            for (int l = 0; l < 8; l++)
                a[l] += x[j + l];
        for (; j < n; j++)
            a[0] += x[j];
    }
    return ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
}

/* Row i (of a row block ending at r1) of the causal softmax, in place: entries j <= i
 * become probabilities, entries i < j < r1 zero. */
static void softmax_row(float *restrict row, int i, int r1)
{
    float m = max8(row, i + 1);
    for (int j = 0; j <= i; j++)
        row[j] = fast_expf(row[j] - m);
    float inv = 1.0f / dot8_abs(row, NULL, i + 1);
    for (int j = 0; j <= i; j++)
        row[j] *= inv;
    for (int j = i + 1; j < r1; j++)
        row[j] = 0.0f;
}

/* Dropout of row i: pw gets the scaled kept weights (zeros elsewhere up to r1); dropped
 * entries of p get their sign bit set. */
static void dropout_row(float *p, float *pw, int i, int r1, float prob, Rng *rng)
{
    float scale = 1.0f / (1.0f - prob);
    for (int j = 0; j <= i; j++) {
        if (rng_uniform(rng) < prob) {
            pw[j] = 0.0f;
            p[j] = copysignf(p[j], -1.0f);   /* the sign bit marks "dropped" (also for 0) */
        } else {
            pw[j] = p[j] * scale;
        }
    }
    for (int j = i + 1; j < r1; j++)
        pw[j] = 0.0f;
}

/* One (batch, head): P = softmax(alpha q k^T + mask) (T,T), o = P v (or the dropped P). */
static void head_forward(float *P, float *pw, float *o, const float *q, const float *k,
                         const float *v, int T, int hd, int ldq, int ldo, float alpha,
                         float prob, Rng *rng)
{
    for (int r0 = 0; r0 < T; r0 += ATTN_BLK) {
        int r1 = r0 + ATTN_BLK < T ? r0 + ATTN_BLK : T;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r1 - r0, r1, hd, alpha,
                    q + (size_t)r0 * ldq, ldq, k, ldq, 0.0f, P + (size_t)r0 * T, T);
        for (int i = r0; i < r1; i++) {
            softmax_row(P + (size_t)i * T, i, r1);
            if (prob > 0.0f)
                dropout_row(P + (size_t)i * T, pw + (size_t)i * T, i, r1, prob, rng);
        }
        const float *use = prob > 0.0f ? pw : P;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, hd, r1, 1.0f,
                    use + (size_t)r0 * T, T, v, ldq, 0.0f, o + (size_t)r0 * ldo, ldo);
    }
}

void attention_forward_dropout(const AttentionDims *ad, float *out, float *act,
                               const float *inp, const float *w_qkv, const float *b_qkv,
                               const float *w_o, const float *b_o, float p, Rng *rng,
                               int B, int T)
{
    int d = ad->d, H = ad->heads, hd = d / H, M = B * T;
    float *qkv = act, *P = act + (size_t)M * 3 * d;
    float *O = P + (size_t)B * H * T * T, *work = O + (size_t)M * d;
    float *pstore = work + (size_t)T * T;
    if (!(p > 0.0f) || !rng)
        p = 0.0f;
    *pstore = p;
    for (int r = 0; r < M; r++)
        memcpy(qkv + (size_t)r * 3 * d, b_qkv, sizeof(float) * 3 * d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, 3 * d, d, 1.0f, inp, d, w_qkv, d,
                1.0f, qkv, 3 * d);
    float alpha = 1.0f / sqrtf((float)hd);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *q = qkv + (size_t)b * T * 3 * d + (size_t)h * hd;
            head_forward(P + ((size_t)b * H + h) * T * T, work,
                         O + (size_t)b * T * d + (size_t)h * hd, q, q + d, q + 2 * d, T, hd,
                         3 * d, d, alpha, p, rng);
        }
    for (int r = 0; r < M; r++)
        memcpy(out + (size_t)r * d, b_o, sizeof(float) * d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, d, d, 1.0f, O, d, w_o, d, 1.0f,
                out, d);
}

void attention_forward(const AttentionDims *ad, float *out, float *act, const float *inp,
                       const float *w_qkv, const float *b_qkv, const float *w_o,
                       const float *b_o, int B, int T)
{
    attention_forward_dropout(ad, out, act, inp, w_qkv, b_qkv, w_o, b_o, 0.0f, NULL, B, T);
}

/* Rows r0..r1 of dS = P o (dP - rowsum(dP o P)) in place in dp, where dp holds the
 * gradient of the weights used (the dropped ones, when prob > 0); pa is P with the
 * dropout sign marks. Entries i < j < r1 become zero. */
static void softmax_backward_rows(float *dp, const float *pa, int r0, int r1, int T,
                                  float prob)
{
    float scale = prob > 0.0f ? 1.0f / (1.0f - prob) : 1.0f;
    for (int i = r0; i < r1; i++) {
        float *restrict g = dp + (size_t)i * T;
        const float *restrict p = pa + (size_t)i * T;
        if (prob > 0.0f)
            for (int j = 0; j <= i; j++)
                g[j] = signbit(p[j]) ? 0.0f : g[j] * scale;
        float dot = dot8_abs(g, p, i + 1);
        for (int j = 0; j <= i; j++)
            g[j] = fabsf(p[j]) * (g[j] - dot);
        for (int j = i + 1; j < r1; j++)
            g[j] = 0.0f;
    }
}

/* One (batch, head): adds dq, dk, dv (strided like q, k, v) from do (T,hd, stride ldo). */
static void head_backward(float *dq, float *dk, float *dv, float *dp, float *pw,
                          const float *P, const float *q, const float *k, const float *v,
                          const float *dO, int T, int hd, int ldq, int ldo, float alpha,
                          float prob)
{
    const float *used = P;
    if (prob > 0.0f) {   /* rebuild the dropped, scaled weights */
        float scale = 1.0f / (1.0f - prob);
        for (int i = 0; i < T; i++) {
            int r1 = (i / ATTN_BLK + 1) * ATTN_BLK < T ? (i / ATTN_BLK + 1) * ATTN_BLK : T;
            for (int j = 0; j < r1; j++) {
                float x = P[(size_t)i * T + j];
                pw[(size_t)i * T + j] = (j > i || signbit(x)) ? 0.0f : x * scale;
            }
        }
        used = pw;
    }
    for (int r0 = 0; r0 < T; r0 += ATTN_BLK) {
        int r1 = r0 + ATTN_BLK < T ? r0 + ATTN_BLK : T, m = r1 - r0;
        float *dpb = dp + (size_t)r0 * T;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, r1, hd, 1.0f,
                    dO + (size_t)r0 * ldo, ldo, v, ldq, 0.0f, dpb, T);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, hd, m, 1.0f,
                    used + (size_t)r0 * T, T, dO + (size_t)r0 * ldo, ldo, 1.0f, dv, ldq);
        softmax_backward_rows(dp, P, r0, r1, T, prob);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, hd, r1, alpha, dpb, T, k,
                    ldq, 1.0f, dq + (size_t)r0 * ldq, ldq);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, hd, m, alpha, dpb, T,
                    q + (size_t)r0 * ldq, ldq, 1.0f, dk, ldq);
    }
}

static void add_colsum(float *restrict db, const float *restrict x, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            db[c] += x[(size_t)r * cols + c];
}

void attention_backward(const AttentionDims *ad, float *dinp, float *dw_qkv, float *db_qkv,
                        float *dw_o, float *db_o, float *scratch, const float *dout,
                        const float *act, const float *inp, const float *w_qkv,
                        const float *w_o, int B, int T)
{
    int d = ad->d, H = ad->heads, hd = d / H, M = B * T;
    const float *qkv = act, *P = act + (size_t)M * 3 * d;
    const float *O = P + (size_t)B * H * T * T;
    float prob = O[(size_t)M * d + (size_t)T * T];
    float *dqkv = scratch, *dO = scratch + (size_t)M * 3 * d;
    float *dp = dO + (size_t)M * d, *pw = dp + (size_t)T * T;

    add_colsum(db_o, dout, M, d);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, M, 1.0f, dout, d, O, d, 1.0f,
                dw_o, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, d, d, 1.0f, dout, d, w_o, d,
                0.0f, dO, d);
    memset(dqkv, 0, sizeof(float) * (size_t)M * 3 * d);
    float alpha = 1.0f / sqrtf((float)hd);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            size_t off = (size_t)b * T * 3 * d + (size_t)h * hd;
            head_backward(dqkv + off, dqkv + off + d, dqkv + off + 2 * d, dp, pw,
                          P + ((size_t)b * H + h) * T * T, qkv + off, qkv + off + d,
                          qkv + off + 2 * d, dO + (size_t)b * T * d + (size_t)h * hd, T, hd,
                          3 * d, d, alpha, prob);
        }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 3 * d, d, M, 1.0f, dqkv, 3 * d, inp,
                d, 1.0f, dw_qkv, d);
    add_colsum(db_qkv, dqkv, M, 3 * d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, d, 3 * d, 1.0f, dqkv, 3 * d,
                w_qkv, d, 1.0f, dinp, d);
}

/* ---- incremental decoding ---- */

struct AttentionCache {
    int d, heads, max_T, n;   /* n: positions held */
    float *k, *v;             /* (max_T, d) each */
    float *qkv;               /* (3d) */
    float *o;                 /* (d) */
    float *s;                 /* (max_T) scores of one head */
};

AttentionCache *attention_cache_create(const AttentionDims *ad, int max_T)
{
    if (max_T < 1 || ad->d < 1 || ad->heads < 1)
        return NULL;
    AttentionCache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->d = ad->d;
    c->heads = ad->heads;
    c->max_T = max_T;
    c->k = malloc(sizeof(float) * (size_t)max_T * ad->d);
    c->v = malloc(sizeof(float) * (size_t)max_T * ad->d);
    c->qkv = malloc(sizeof(float) * 3 * (size_t)ad->d);
    c->o = malloc(sizeof(float) * (size_t)ad->d);
    c->s = malloc(sizeof(float) * (size_t)max_T);
    if (!c->k || !c->v || !c->qkv || !c->o || !c->s) {
        attention_cache_destroy(c);
        return NULL;
    }
    return c;
}

void attention_cache_destroy(AttentionCache *c)
{
    if (!c)
        return;
    free(c->k);
    free(c->v);
    free(c->qkv);
    free(c->o);
    free(c->s);
    free(c);
}

void attention_cache_reset(AttentionCache *c)
{
    c->n = 0;
}

int attention_step(const AttentionDims *ad, AttentionCache *c, float *out, const float *inp,
                   const float *w_qkv, const float *b_qkv, const float *w_o,
                   const float *b_o, int t)
{
    int d = c->d, H = ad->heads, hd = d / H;
    if (t < 0 || t >= c->max_T || t > c->n || H != c->heads || d != ad->d)
        return LM_EARG;
    memcpy(c->qkv, b_qkv, sizeof(float) * 3 * d);
    linear_matvec(c->qkv, w_qkv, d, inp, 3 * d, d, 1.0f, 1.0f);
    memcpy(c->k + (size_t)t * d, c->qkv + d, sizeof(float) * d);
    memcpy(c->v + (size_t)t * d, c->qkv + 2 * d, sizeof(float) * d);
    c->n = t + 1;
    float alpha = 1.0f / sqrtf((float)hd);
    for (int h = 0; h < H; h++) {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, t + 1, hd, alpha, c->k + (size_t)h * hd, d,
                    c->qkv + (size_t)h * hd, 1, 0.0f, c->s, 1);
        softmax_row(c->s, t, t + 1);
        cblas_sgemv(CblasRowMajor, CblasTrans, t + 1, hd, 1.0f, c->v + (size_t)h * hd, d,
                    c->s, 1, 0.0f, c->o + (size_t)h * hd, 1);
    }
    memcpy(out, b_o, sizeof(float) * d);
    linear_matvec(out, w_o, d, c->o, d, d, 1.0f, 1.0f);
    return LM_OK;
}
