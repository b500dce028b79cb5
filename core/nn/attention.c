/* attention.c — causal multi-head self-attention (nn.MultiheadAttention with a causal
 * mask): the q, k, v projections as ONE matrix product over all B*T rows (in_proj packs
 * them), then the fused tiled kernel of attention_flash.c per (batch, head) on strided
 * slices of that qkv buffer (online softmax; only a log-sum-exp per row is kept for the
 * backward, no (T,T) matrix), then out_proj as one product. The projections and their
 * backward products go through matmul (matmul.h): sgemm, or bf16 under precision=bf16.
 * Dropout on the attention weights uses a counter-based mask (one seed per forward),
 * recomputed in the backward. Also the key/value cache for incremental decoding. Not the
 * tile products themselves (attention_flash.c). */
#include "attention.h"

#include "attention_flash.h"
#include "cpu.h"
#include "fastmath.h"

#include "linear.h"
#include "matmul.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* The forward's saved state, carved from act in this order:
 *   qkv (M,3d) | O (M,d) head outputs | lse (B,H,T) | work (one head's forward) | meta:
 *   meta[0] the dropout p, meta[1..2] the dropout seed's two halves. */
typedef struct {
    float *qkv, *O, *lse, *work, *meta;
} ActLayout;

static size_t r16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static size_t act_layout(const AttentionDims *ad, float *act, int B, int T, ActLayout *L)
{
    size_t M = (size_t)B * T, d = (size_t)ad->d, off = 0;
    size_t sizes[5] = {M * 3 * d, M * d, (size_t)B * ad->heads * T,
                       attention_flash_forward_floats(T, ad->d / ad->heads), 3};
    float **slots[5] = {&L->qkv, &L->O, &L->lse, &L->work, &L->meta};
    for (int i = 0; i < 5; i++) {
        if (act)
            *slots[i] = act + off;
        off += i < 4 ? r16(sizes[i]) : sizes[i];
    }
    return off;
}

size_t attention_act_floats(const AttentionDims *ad, int B, int T)
{
    ActLayout L;
    return act_layout(ad, NULL, B, T, &L);
}

size_t attention_scratch_floats(const AttentionDims *ad, int B, int T)
{
    size_t M = (size_t)B * T;
    return r16(M * 3 * ad->d) + r16(M * ad->d) +
           attention_flash_backward_floats(T);
}

/* The FlashHead of (batch b, head h) for the forward whose meta is given. */
static FlashHead flash_head(const AttentionDims *ad, const float *meta, int b, int h, int T)
{
    int hd = ad->d / ad->heads;
    uint32_t lo, hi;
    memcpy(&lo, &meta[1], sizeof lo);
    memcpy(&hi, &meta[2], sizeof hi);
    FlashHead fh = {.T = T, .hd = hd, .alpha = 1.0f / sqrtf((float)hd), .p = meta[0],
                    .seed = (uint64_t)hi << 32 | lo, .stream = (uint64_t)b * ad->heads + h};
    return fh;
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
CPU_INLINE void softmax_row(float *restrict row, int i, int r1)
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

CPU_CLONES
void attention_forward_dropout(const AttentionDims *ad, float *out, float *act,
                               const float *inp, const float *w_qkv, const float *b_qkv,
                               const float *w_o, const float *b_o, float p, Rng *rng,
                               int B, int T)
{
    int d = ad->d, H = ad->heads, hd = d / H, M = B * T;
    ActLayout L;
    act_layout(ad, act, B, T, &L);
    uint32_t lo = 0, hi = 0;
    if (!(p > 0.0f) || !rng) {
        p = 0.0f;
    } else {
        lo = rng_u32(rng);
        hi = rng_u32(rng);
    }
    L.meta[0] = p;
    memcpy(&L.meta[1], &lo, sizeof lo);
    memcpy(&L.meta[2], &hi, sizeof hi);
    for (int r = 0; r < M; r++)
        memcpy(L.qkv + (size_t)r * 3 * d, b_qkv, sizeof(float) * 3 * d);
    matmul(CblasNoTrans, CblasTrans, M, 3 * d, d, 1.0f, inp, d, w_qkv, d,
                1.0f, L.qkv, 3 * d);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            FlashHead fh = flash_head(ad, L.meta, b, h, T);
            const float *q = L.qkv + (size_t)b * T * 3 * d + (size_t)h * hd;
            attention_flash_forward(&fh, L.O + (size_t)b * T * d + (size_t)h * hd, d,
                                    L.lse + ((size_t)b * H + h) * T, L.work, q, q + d,
                                    q + 2 * d, 3 * d);
        }
    for (int r = 0; r < M; r++)
        memcpy(out + (size_t)r * d, b_o, sizeof(float) * d);
    matmul(CblasNoTrans, CblasTrans, M, d, d, 1.0f, L.O, d, w_o, d, 1.0f,
                out, d);
}

void attention_forward(const AttentionDims *ad, float *out, float *act, const float *inp,
                       const float *w_qkv, const float *b_qkv, const float *w_o,
                       const float *b_o, int B, int T)
{
    attention_forward_dropout(ad, out, act, inp, w_qkv, b_qkv, w_o, b_o, 0.0f, NULL, B, T);
}

int attention_weight_kept(const AttentionDims *ad, const float *act, int B, int T, int b,
                          int h, int i, int j)
{
    ActLayout L;
    act_layout(ad, (float *)act, B, T, &L);
    FlashHead fh = flash_head(ad, L.meta, b, h, T);
    return attention_flash_kept(&fh, i, j);
}

CPU_CLONES
static void add_colsum(float *restrict db, const float *restrict x, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            db[c] += x[(size_t)r * cols + c];
}

CPU_CLONES
void attention_backward(const AttentionDims *ad, float *dinp, float *dw_qkv, float *db_qkv,
                        float *dw_o, float *db_o, float *scratch, const float *dout,
                        const float *act, const float *inp, const float *w_qkv,
                        const float *w_o, int B, int T)
{
    int d = ad->d, H = ad->heads, hd = d / H, M = B * T;
    ActLayout L;
    act_layout(ad, (float *)act, B, T, &L);
    float *dqkv = scratch, *dO = scratch + r16((size_t)M * 3 * d);
    float *work = dO + r16((size_t)M * d);

    add_colsum(db_o, dout, M, d);
    matmul(CblasTrans, CblasNoTrans, d, d, M, 1.0f, dout, d, L.O, d, 1.0f,
                dw_o, d);
    matmul(CblasNoTrans, CblasNoTrans, M, d, d, 1.0f, dout, d, w_o, d,
                0.0f, dO, d);
    memset(dqkv, 0, sizeof(float) * (size_t)M * 3 * d);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            FlashHead fh = flash_head(ad, L.meta, b, h, T);
            size_t off = (size_t)b * T * 3 * d + (size_t)h * hd;
            size_t oo = (size_t)b * T * d + (size_t)h * hd;
            attention_flash_backward(&fh, dqkv + off, dqkv + off + d, dqkv + off + 2 * d,
                                     3 * d, work, dO + oo, L.O + oo, d,
                                     L.lse + ((size_t)b * H + h) * T, L.qkv + off,
                                     L.qkv + off + d, L.qkv + off + 2 * d, 3 * d);
        }
    matmul(CblasTrans, CblasNoTrans, 3 * d, d, M, 1.0f, dqkv, 3 * d, inp,
                d, 1.0f, dw_qkv, d);
    add_colsum(db_qkv, dqkv, M, 3 * d);
    matmul(CblasNoTrans, CblasNoTrans, M, d, 3 * d, 1.0f, dqkv, 3 * d,
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

CPU_CLONES
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

void attention_entropy_sum(const AttentionDims *ad, const float *act, int B, int T,
                           double *sum, double *row)
{
    int d = ad->d, H = ad->heads, hd = d / H;
    double alpha = 1.0 / sqrt((double)hd);
    ActLayout L;
    act_layout(ad, (float *)act, B, T, &L);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                const float *q = L.qkv + ((size_t)b * T + i) * 3 * d + (size_t)h * hd;
                double mx = -INFINITY, z = 0, ps = 0;
                for (int j = 0; j <= i; j++) {
                    const float *k = L.qkv + ((size_t)b * T + j) * 3 * d + d + (size_t)h * hd;
                    double s = 0;
                    for (int c = 0; c < hd; c++)
                        s += (double)q[c] * k[c];
                    row[j] = s * alpha;
                    mx = row[j] > mx ? row[j] : mx;
                }
                for (int j = 0; j <= i; j++) {
                    double e = exp(row[j] - mx);
                    z += e;
                    ps += e * row[j];
                }
                /* H = log Z - sum p s, with Z = sum exp(s) = z e^mx and p = e^(s - mx) / z */
                sum[h] += log(z) + mx - ps / z;
            }
}
