/* crossentropy.c — fused softmax + cross-entropy (see crossentropy.h).
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html
 * Each row costs three simple passes (max, exp + sum, scale) written so that gcc -O3
 * vectorises them: glibc's expf is a library call that blocks vectorisation unless
 * -ffast-math, so exp is computed here by a branch-free Cephes-style polynomial
 * (relative error ~2e-7 over the range used), and float reductions use 16 independent
 * lanes (a vectorisable order that needs no -ffast-math). Not a general math library. */
#include "crossentropy.h"

#include "cpu.h"
#include "fastmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define CE_LANES 16

CPU_INLINE float ce_row_max(const float *x, int V)
{
    float lane[CE_LANES];
    int i = 0;
    for (int j = 0; j < CE_LANES; j++)
        lane[j] = -INFINITY;
    for (; i + CE_LANES <= V; i += CE_LANES)
        for (int j = 0; j < CE_LANES; j++)
            lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
    float m = -INFINITY;
    for (; i < V; i++)
        m = x[i] > m ? x[i] : m;
    for (int j = 0; j < CE_LANES; j++)
        m = lane[j] > m ? lane[j] : m;
    return m;
}

/* sum_i exp((x[i] - m) * k); when e is not NULL also stores each exp there (e may
 * alias x: each element is read before it is written). */
CPU_INLINE float ce_row_expsum(float *e, const float *x, int V, float m, float k)
{
    float lane[CE_LANES] = {0};
    int i = 0;
    if (e) {
        for (; i + CE_LANES <= V; i += CE_LANES)
            for (int j = 0; j < CE_LANES; j++) {
                float v = fast_expf((x[i + j] - m) * k);
                e[i + j] = v;
                lane[j] += v;
            }
    } else {
        for (; i + CE_LANES <= V; i += CE_LANES)
            for (int j = 0; j < CE_LANES; j++)
                lane[j] += fast_expf((x[i + j] - m) * k);
    }
    float s = 0.0f;
    for (; i < V; i++) {
        float v = fast_expf((x[i] - m) * k);
        if (e)
            e[i] = v;
        s += v;
    }
    for (int j = 0; j < CE_LANES; j++)
        s += lane[j];
    return s;
}

/* -log softmax(x)[t] = log(sum exp(x - m)) + m - x[t], evaluated in double. */
static double ce_row_loss(float m, float sum, float xt)
{
    return log((double)sum) + (double)m - (double)xt;
}

CPU_CLONES
double crossentropy_forward(float *losses, const float *logits, const int *targets, int N,
                            int V)
{
    double total = 0.0;
    for (int n = 0; n < N; n++) {
        const float *x = logits + (size_t)n * V;
        int t = targets[n];
        double l = 0.0;
        if (t >= 0) {
            float m = ce_row_max(x, V);
            l = ce_row_loss(m, ce_row_expsum(NULL, x, V, m, 1.0f), x[t]);
            total += l;
        }
        if (losses)
            losses[n] = (float)l;
    }
    return total;
}

CPU_CLONES
double crossentropy_forward_backward(float *dlogits, const float *logits, const int *targets,
                                     int N, int V, float scale)
{
    double total = 0.0;
    for (int n = 0; n < N; n++) {
        const float *x = logits + (size_t)n * V;
        float *d = dlogits + (size_t)n * V;
        int t = targets[n];
        if (t < 0) {
            memset(d, 0, (size_t)V * sizeof *d);
            continue;
        }
        float xt = x[t];   /* read before d (possibly == x) is overwritten */
        float m = ce_row_max(x, V);
        float sum = ce_row_expsum(d, x, V, m, 1.0f);
        total += ce_row_loss(m, sum, xt);
        float k = scale / sum;
        for (int i = 0; i < V; i++)
            d[i] *= k;
        d[t] -= scale;
    }
    return total;
}

CPU_CLONES
void softmax_forward(float *probs, const float *logits, int N, int V, float temperature)
{
    float k = 1.0f / temperature;
    for (int n = 0; n < N; n++) {
        const float *x = logits + (size_t)n * V;
        float *p = probs + (size_t)n * V;
        float m = ce_row_max(x, V);
        float inv = 1.0f / ce_row_expsum(p, x, V, m, k);
        for (int i = 0; i < V; i++)
            p[i] *= inv;
    }
}
