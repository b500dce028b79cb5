/* recurrent.c — LSTM / GRU / tanh-RNN layer kernels over a window (see recurrent.h).
 * Matrix products go through cblas_sgemm: the input projection of all T steps at once,
 * one recurrent product per step; the gate nonlinearities are fused per step.
 * Not a stack of layers and not stateful: the caller carries h/c between windows. */
#include "recurrent.h"

#include "cpu.h"
#include "fastmath.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

int recurrent_gates(int kind)
{
    return kind == RECURRENT_LSTM ? 4 : kind == RECURRENT_GRU ? 3 : 1;
}

static inline float sigmoidf(float x)
{
    return 1.0f / (1.0f + fast_expf(-x));
}

/* tanh: (1-e)/(1+e) with e = exp(-2|x|), and its Taylor series below |x| = 0.25 where
 * that form would cancel (series error < 3e-9 there); within ~4e-7 relative of libm. */
static inline float tanh_fast(float x)
{
    float a = fabsf(x), e = fast_expf(-2.0f * a);
    float t = copysignf((1.0f - e) / (1.0f + e), x);
    float x2 = x * x;
    float p = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315 +
                                                                   x2 * (62.0f / 2835)))));
    return a < 0.25f ? p : t;
}

/* y(rows, n) += b (n) broadcast over rows. */
CPU_CLONES
static void add_rows(float *restrict y, const float *restrict b, long rows, int n)
{
    for (long r = 0; r < rows; r++)
        for (int j = 0; j < n; j++)
            y[r * n + j] += b[j];
}

/* db (n) += column sums of d (rows, n). */
CPU_CLONES
static void colsum_add(float *restrict db, const float *restrict d, long rows, int n)
{
    for (long r = 0; r < rows; r++)
        for (int j = 0; j < n; j++)
            db[j] += d[r * n + j];
}

/* One LSTM step: pre = x W_ih^T + b_ih of this step (overwritten by the activations),
 * rec = h_prev W_hh^T. */
CPU_INLINE void lstm_step(float *restrict act, float *restrict h, float *restrict c,
                          const float *restrict rec, const float *restrict cp,
                          const float *restrict b_hh, int B, int H)
{
    int GH = 4 * H;
    for (int b = 0; b < B; b++) {
        float *ab = act + (long)b * GH;
        const float *rb = rec + (long)b * GH;
        for (int k = 0; k < GH; k++)
            ab[k] += rb[k] + b_hh[k];
        for (int j = 0; j < H; j++) {
            float i = sigmoidf(ab[j]), f = sigmoidf(ab[H + j]);
            float g = tanh_fast(ab[2 * H + j]), o = sigmoidf(ab[3 * H + j]);
            float cn = f * cp[(long)b * H + j] + i * g;
            ab[j] = i;
            ab[H + j] = f;
            ab[2 * H + j] = g;
            ab[3 * H + j] = o;
            c[(long)b * H + j] = cn;
            h[(long)b * H + j] = o * tanh_fast(cn);
        }
    }
}

CPU_INLINE void gru_step(float *restrict act, float *restrict hn, float *restrict h,
                         const float *restrict rec, const float *restrict hp,
                         const float *restrict b_hh, int B, int H)
{
    int GH = 3 * H;
    for (int b = 0; b < B; b++) {
        float *ab = act + (long)b * GH;
        const float *rb = rec + (long)b * GH;
        for (int j = 0; j < H; j++) {
            float r = sigmoidf(ab[j] + rb[j] + b_hh[j]);
            float z = sigmoidf(ab[H + j] + rb[H + j] + b_hh[H + j]);
            float hh = rb[2 * H + j] + b_hh[2 * H + j];
            float n = tanh_fast(ab[2 * H + j] + r * hh);
            ab[j] = r;
            ab[H + j] = z;
            ab[2 * H + j] = n;
            hn[(long)b * H + j] = hh;
            h[(long)b * H + j] = (1.0f - z) * n + z * hp[(long)b * H + j];
        }
    }
}

CPU_INLINE void rnn_step(float *restrict h, const float *restrict rec,
                         const float *restrict b_hh, int B, int H)
{
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            long k = (long)b * H + j;
            h[k] = tanh_fast(h[k] + rec[k] + b_hh[j]);
        }
}

CPU_CLONES
void recurrent_forward(int kind, RecurrentActs *a, float *scratch, const float *x,
                       const float *h0, const float *c0, const RecurrentWeights *w, int T,
                       int B, int C_in, int H)
{
    int GH = recurrent_gates(kind) * H;
    long BH = (long)B * H, BG = (long)B * GH;
    float *pre = kind == RECURRENT_RNN ? a->h : a->act;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T * B, GH, C_in, 1.0f, x, C_in,
                w->w_ih, C_in, 0.0f, pre, GH);
    add_rows(pre, w->b_ih, (long)T * B, GH);
    for (int t = 0; t < T; t++) {
        const float *hp = t ? a->h + (t - 1) * BH : h0;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, GH, H, 1.0f, hp, H, w->w_hh,
                    H, 0.0f, scratch, GH);
        if (kind == RECURRENT_LSTM)
            lstm_step(a->act + t * BG, a->h + t * BH, a->c + t * BH, scratch,
                      t ? a->c + (t - 1) * BH : c0, w->b_hh, B, H);
        else if (kind == RECURRENT_GRU)
            gru_step(a->act + t * BG, a->hn + t * BH, a->h + t * BH, scratch, hp, w->b_hh, B,
                     H);
        else
            rnn_step(a->h + t * BH, scratch, w->b_hh, B, H);
    }
}

/* LSTM step backward: da (B,4H) pre-activation gradients; ch, cc carried dh, dc. */
CPU_INLINE void lstm_step_back(float *restrict da, float *restrict cc, const float *restrict ch,
                               const float *restrict dh_out, const float *restrict act,
                               const float *restrict c, const float *restrict cp, int B, int H)
{
    int GH = 4 * H;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            long k = (long)b * H + j, q = (long)b * GH + j;
            float dh = dh_out[k] + ch[k];
            float i = act[q], f = act[q + H], g = act[q + 2 * H], o = act[q + 3 * H];
            float tc = tanh_fast(c[k]);
            float dc = cc[k] + dh * o * (1.0f - tc * tc);
            da[q] = dc * g * i * (1.0f - i);
            da[q + H] = dc * cp[k] * f * (1.0f - f);
            da[q + 2 * H] = dc * i * (1.0f - g * g);
            da[q + 3 * H] = dh * tc * o * (1.0f - o);
            cc[k] = dc * f;
        }
}

/* GRU step backward: dai / dah are the input- and hidden-side pre-activation gradients;
 * ch receives the direct part z*dh of the gradient into h_prev. */
CPU_INLINE void gru_step_back(float *restrict dai, float *restrict dah, float *restrict ch,
                              const float *restrict dh_out, const float *restrict act,
                              const float *restrict hn, const float *restrict hp, int B, int H)
{
    int GH = 3 * H;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            long k = (long)b * H + j, q = (long)b * GH + j;
            float dh = dh_out[k] + ch[k];
            float r = act[q], z = act[q + H], n = act[q + 2 * H];
            float dnp = dh * (1.0f - z) * (1.0f - n * n);
            float daz = dh * (hp[k] - n) * z * (1.0f - z);
            float dar = dnp * hn[k] * r * (1.0f - r);
            dai[q] = dah[q] = dar;
            dai[q + H] = dah[q + H] = daz;
            dai[q + 2 * H] = dnp;
            dah[q + 2 * H] = dnp * r;
            ch[k] = dh * z;
        }
}

CPU_INLINE void rnn_step_back(float *restrict da, const float *restrict ch,
                              const float *restrict dh_out, const float *restrict h, int B, int H)
{
    for (long k = 0; k < (long)B * H; k++)
        da[k] = (dh_out[k] + ch[k]) * (1.0f - h[k] * h[k]);
}

/* Weight and input gradients once every step's pre-activation gradient is known. */
static void backward_weights(float *dx, RecurrentGrads *g, const float *da_ih,
                             const float *dA, const RecurrentActs *a, const float *x,
                             const float *h0, const RecurrentWeights *w, int T, int B,
                             int C_in, int H, int GH)
{
    int N = T * B;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, GH, C_in, N, 1.0f, da_ih, GH, x,
                C_in, 1.0f, g->w_ih, C_in);
    colsum_add(g->b_ih, da_ih, N, GH);
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C_in, GH, 1.0f, da_ih, GH,
                    w->w_ih, C_in, 1.0f, dx, C_in);
    /* dW_hh += sum_t dA[t]^T h_{t-1}: steps 1..T-1 read h[0..T-2] in one product */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, GH, H, B, 1.0f, dA, GH, h0, H, 1.0f,
                g->w_hh, H);
    if (T > 1)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, GH, H, (T - 1) * B, 1.0f,
                    dA + (long)B * GH, GH, a->h, H, 1.0f, g->w_hh, H);
    colsum_add(g->b_hh, dA, N, GH);
}

CPU_CLONES
void recurrent_backward(int kind, float *dx, RecurrentGrads *g, float *da_ih, float *da_hh,
                        float *carry, const float *dh_out, const RecurrentActs *a,
                        const float *x, const float *h0, const float *c0,
                        const RecurrentWeights *w, int T, int B, int C_in, int H)
{
    int GH = recurrent_gates(kind) * H;
    long BH = (long)B * H, BG = (long)B * GH;
    float *ch = carry, *cc = carry + BH;
    float *dA = kind == RECURRENT_GRU ? da_hh : da_ih;   /* hidden-side gradients */
    memset(carry, 0, 2 * (size_t)BH * sizeof(float));
    for (int t = T - 1; t >= 0; t--) {
        const float *hp = t ? a->h + (t - 1) * BH : h0;
        if (kind == RECURRENT_LSTM)
            lstm_step_back(da_ih + t * BG, cc, ch, dh_out + t * BH, a->act + t * BG,
                           a->c + t * BH, t ? a->c + (t - 1) * BH : c0, B, H);
        else if (kind == RECURRENT_GRU)
            gru_step_back(da_ih + t * BG, da_hh + t * BG, ch, dh_out + t * BH,
                          a->act + t * BG, a->hn + t * BH, hp, B, H);
        else
            rnn_step_back(da_ih + t * BG, ch, dh_out + t * BH, a->h + t * BH, B, H);
        if (t > 0)   /* truncated: nothing flows into h0 */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, GH, 1.0f,
                        dA + t * BG, GH, w->w_hh, H, kind == RECURRENT_GRU ? 1.0f : 0.0f,
                        ch, H);
    }
    backward_weights(dx, g, da_ih, dA, a, x, h0, w, T, B, C_in, H, GH);
}
