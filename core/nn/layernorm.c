/* layernorm.c — nn.LayerNorm forward/backward (see layernorm.h).
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.LayerNorm.html and the
 * backward of llm.c's layernorm_backward. Per row: two passes in float (mean, then the
 * centred variance, which avoids the cancellation of E[x^2] - E[x]^2), each a reduction
 * over 16 independent lanes so gcc vectorises it without -ffast-math. No doubles.
 * layernorm_residual_forward fuses the residual add before a norm (one pass over the row
 * while it is in L1). Not RMSNorm. */
#include "layernorm.h"

#include "cpu.h"

#include <math.h>
#include <stddef.h>

#define LN_LANES 16

/* sum_c x[c] in 16 lanes. */
CPU_INLINE float ln_sum(const float *x, int C)
{
    float lane[LN_LANES] = {0};
    int c = 0;
    for (; c + LN_LANES <= C; c += LN_LANES)
        for (int j = 0; j < LN_LANES; j++)
            lane[j] += x[c + j];
    float s = 0.0f;
    for (; c < C; c++)
        s += x[c];
    for (int j = 0; j < LN_LANES; j++)
        s += lane[j];
    return s;
}

/* sum_c (x[c] - m)^2 in 16 lanes. */
CPU_INLINE float ln_sum_sq_centred(const float *x, float m, int C)
{
    float lane[LN_LANES] = {0};
    int c = 0;
    for (; c + LN_LANES <= C; c += LN_LANES)
        for (int j = 0; j < LN_LANES; j++) {
            float d = x[c + j] - m;
            lane[j] += d * d;
        }
    float s = 0.0f;
    for (; c < C; c++)
        s += (x[c] - m) * (x[c] - m);
    for (int j = 0; j < LN_LANES; j++)
        s += lane[j];
    return s;
}

/* One row of the forward: o = (x - m) * s * w + b; mean and rstd of row n saved. */
CPU_INLINE void ln_row_forward(float *o, float *mean, float *rstd, const float *x,
                               const float *w, const float *b, int n, int C)
{
    float m = ln_sum(x, C) / (float)C;
    float var = ln_sum_sq_centred(x, m, C) / (float)C;
    float s = 1.0f / sqrtf(var + LAYERNORM_EPS);
    if (w && b)
        for (int c = 0; c < C; c++)
            o[c] = (x[c] - m) * s * w[c] + b[c];
    else
        for (int c = 0; c < C; c++)
            o[c] = (x[c] - m) * s * (w ? w[c] : 1.0f) + (b ? b[c] : 0.0f);
    if (mean)
        mean[n] = m;
    if (rstd)
        rstd[n] = s;
}

CPU_CLONES
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int N, int C)
{
    for (int n = 0; n < N; n++)
        ln_row_forward(out + (size_t)n * C, mean, rstd, inp + (size_t)n * C, w, b, n, C);
}

CPU_CLONES
void layernorm_residual_forward(float *out, float *res, float *mean, float *rstd,
                                const float *x, const float *y, const float *w, const float *b,
                                int N, int C)
{
    for (int n = 0; n < N; n++) {
        float *r = res + (size_t)n * C;
        const float *xr = x + (size_t)n * C, *yr = y + (size_t)n * C;
        for (int c = 0; c < C; c++)
            r[c] = xr[c] + yr[c];
        ln_row_forward(out + (size_t)n * C, mean, rstd, r, w, b, n, C);
    }
}

/* For one row: the means over c of g = dout*w and of g*xhat (16-lane reductions). */
CPU_INLINE void ln_row_means(float *g_mean, float *gx_mean, const float *d, const float *x,
                             const float *w, float m, float s, int C)
{
    float lg[LN_LANES] = {0}, lgx[LN_LANES] = {0};
    float a = 0.0f, bsum = 0.0f;
    int c = 0;
    for (; c + LN_LANES <= C; c += LN_LANES)
        for (int j = 0; j < LN_LANES; j++) {
            float g = d[c + j] * (w ? w[c + j] : 1.0f);
            lg[j] += g;
            lgx[j] += g * (x[c + j] - m) * s;
        }
    for (; c < C; c++) {
        float g = d[c] * (w ? w[c] : 1.0f);
        a += g;
        bsum += g * (x[c] - m) * s;
    }
    for (int j = 0; j < LN_LANES; j++) {
        a += lg[j];
        bsum += lgx[j];
    }
    *g_mean = a / (float)C;
    *gx_mean = bsum / (float)C;
}

/* One row's dinp, dw and db terms in one loop; restrict (the caller's buffers are
 * distinct) so the loop vectorises without run-time overlap checks on five arrays. */
CPU_INLINE void ln_row_backward_all(float *restrict di, float *restrict dw, float *restrict db,
                                    const float *restrict d, const float *restrict x,
                                    const float *restrict w, float m, float s, float g_mean,
                                    float gx_mean, int C)
{
    for (int c = 0; c < C; c++) {
        float xhat = (x[c] - m) * s;
        float g = d[c] * (w ? w[c] : 1.0f);
        di[c] += (g - g_mean - xhat * gx_mean) * s;
        dw[c] += d[c] * (x[c] - m) * s;
        db[c] += d[c];
    }
}

CPU_CLONES
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const float *d = dout + (size_t)n * C;
        const float *x = inp + (size_t)n * C;
        float *di = dinp + (size_t)n * C;
        float m = mean[n], s = rstd[n];
        float g_mean, gx_mean;
        ln_row_means(&g_mean, &gx_mean, d, x, w, m, s, C);
        /* one pass: each element's dinp, dw and db terms as three loops computed them */
        if (dw && db)
            ln_row_backward_all(di, dw, db, d, x, w, m, s, g_mean, gx_mean, C);
        else {
            for (int c = 0; c < C; c++) {
                float xhat = (x[c] - m) * s;
                float g = d[c] * (w ? w[c] : 1.0f);
                di[c] += (g - g_mean - xhat * gx_mean) * s;
            }
            if (dw)
                for (int c = 0; c < C; c++)
                    dw[c] += d[c] * (x[c] - m) * s;
            if (db)
                for (int c = 0; c < C; c++)
                    db[c] += d[c];
        }
    }
}
