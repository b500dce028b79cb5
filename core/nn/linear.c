/* linear.c — nn.Linear forward/backward (see linear.h) on OpenBLAS cblas_sgemm, row-major.
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.Linear.html
 * Products go through matmul (matmul.h): cblas_sgemm, or bf16 under precision=bf16.
 * Not threaded by itself (OpenBLAS may be) and not allocating. */
#include "linear.h"

#include "activation.h"
#include "cpu.h"
#include "matmul.h"

#include <string.h>

/* y[r] = alpha * dot(w[r,:], x) + beta * y[r], single-threaded on purpose: for one row
 * (incremental decoding) BLAS set-up and thread hand-offs cost more than the arithmetic.
 * Four 8-wide accumulators per row in GCC's vector types, so every CPU_CLONES variant
 * runs the same order of operations: with FMA (x86-64-v3 and up) each multiply-add is
 * fused (fp-contract=fast here), on the x86-64 baseline it rounds twice. The dot
 * product's summation order differs from BLAS in the last bits. */
/* The scalar tail, outside the contracted region: unfused, as before. */
__attribute__((noinline)) static float dot_tail(float sum, const float *a, const float *b,
                                                int i, int n)
{
    for (; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float lin_v8 __attribute__((vector_size(32), aligned(4), may_alias));

static inline float dot(const float *restrict a, const float *restrict b, int n)
{
    lin_v8 s0 = {0}, s1 = s0, s2 = s0, s3 = s0;
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 += *(const lin_v8 *)(a + i) * *(const lin_v8 *)(b + i);
        s1 += *(const lin_v8 *)(a + i + 8) * *(const lin_v8 *)(b + i + 8);
        s2 += *(const lin_v8 *)(a + i + 16) * *(const lin_v8 *)(b + i + 16);
        s3 += *(const lin_v8 *)(a + i + 24) * *(const lin_v8 *)(b + i + 24);
    }
    for (; i + 8 <= n; i += 8)
        s0 += *(const lin_v8 *)(a + i) * *(const lin_v8 *)(b + i);
    lin_v8 s = (s0 + s1) + (s2 + s3);
    float q0 = s[0] + s[4], q1 = s[1] + s[5], q2 = s[2] + s[6], q3 = s[3] + s[7];
    float sum = (q0 + q2) + (q1 + q3);   /* the order of the horizontal add before */
    return i < n ? dot_tail(sum, a, b, i, n) : sum;
}

CPU_CLONES
void linear_matvec(float *restrict y, const float *restrict w, int ldw, const float *restrict x,
                   int rows, int cols, float alpha, float beta)
{
    for (int r = 0; r < rows; r++) {
        float v = alpha * dot(w + (size_t)r * ldw, x, cols);
        y[r] = beta != 0.0f ? v + beta * y[r] : v;
    }
}
#pragma GCC diagnostic pop
#pragma GCC pop_options

void linear_forward(float *out, const float *inp, const float *w, const float *b, int N,
                    int C_in, int C_out)
{
    if (N <= 0 || C_out <= 0)
        return;
    if (C_in <= 0) {   /* empty product: only the bias remains */
        for (int n = 0; n < N; n++) {
            if (b)
                memcpy(out + (size_t)n * C_out, b, (size_t)C_out * sizeof *out);
            else
                memset(out + (size_t)n * C_out, 0, (size_t)C_out * sizeof *out);
        }
        return;
    }
    float beta = 0.0f;
    if (b) {   /* start each row at the bias, then accumulate the product onto it */
        for (int n = 0; n < N; n++)
            memcpy(out + (size_t)n * C_out, b, (size_t)C_out * sizeof *out);
        beta = 1.0f;
    }
    if (N == 1)   /* one row (incremental decoding): our own mat-vec, no BLAS threads */
        linear_matvec(out, w, C_in, inp, C_out, C_in, 1.0f, beta);
    else
        matmul(CblasNoTrans, CblasTrans, N, C_out, C_in, 1.0f, inp, C_in, w,
                    C_in, beta, out, C_out);
}

/* db[o] += sum_n dout[n, o]: row by row so the inner loop is a contiguous vector add. */
CPU_CLONES
static void linear_bias_grad(float *db, const float *dout, int N, int C_out)
{
    for (int n = 0; n < N; n++) {
        const float *row = dout + (size_t)n * C_out;
        for (int o = 0; o < C_out; o++)
            db[o] += row[o];
    }
}

void linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                     const float *w, int N, int C_in, int C_out)
{
    if (N <= 0 || C_out <= 0)
        return;
    if (dinp && C_in > 0)   /* (N,C_out) . (C_out,C_in) */
        matmul(CblasNoTrans, CblasNoTrans, N, C_in, C_out, 1.0f, dout,
                    C_out, w, C_in, 1.0f, dinp, C_in);
    if (dw && C_in > 0)     /* (C_out,N) . (N,C_in) */
        matmul(CblasTrans, CblasNoTrans, C_out, C_in, N, 1.0f, dout,
                    C_out, inp, C_in, 1.0f, dw, C_in);
    if (db)
        linear_bias_grad(db, dout, N, C_out);
}

/* act over one row of n, into out from pre (out may be pre). */
static void act_row(float *out, const float *pre, int n, LinearAct act)
{
    if (act == LINEAR_GELU) {
        gelu_forward(out, pre, n);
        return;
    }
    for (int c = 0; c < n; c++)
        out[c] = pre[c] > 0.0f ? pre[c] : 0.0f;
}

CPU_CLONES
void linear_forward_act(float *pre, float *out, const float *inp, const float *w,
                        const float *b, int N, int C_in, int C_out, LinearAct act)
{
    if (N <= 0 || C_out <= 0)
        return;
    if (N == 1 || C_in <= 0 || !b) {   /* decoding, empty products, no bias: plain path */
        linear_forward(pre, inp, w, b, N, C_in, C_out);
        for (int n = 0; n < N; n++)
            act_row(out + (size_t)n * C_out, pre + (size_t)n * C_out, C_out, act);
        return;
    }
    matmul(CblasNoTrans, CblasTrans, N, C_out, C_in, 1.0f, inp, C_in, w,
                C_in, 0.0f, pre, C_out);
    if (pre == out && act == LINEAR_RELU) {   /* written once: bias and relu in place */
        for (int n = 0; n < N; n++) {
            float *restrict o = out + (size_t)n * C_out;
            for (int c = 0; c < C_out; c++) {
                float v = o[c] + b[c];
                o[c] = v > 0.0f ? v : 0.0f;
            }
        }
        return;
    }
    for (int n = 0; n < N; n++) {
        float *restrict p = pre + (size_t)n * C_out, *restrict o = out + (size_t)n * C_out;
        if (act == LINEAR_GELU) {   /* the row is in cache: bias, then the activation */
            for (int c = 0; c < C_out; c++)
                p[c] += b[c];
            gelu_forward(o, p, C_out);
            continue;
        }
        for (int c = 0; c < C_out; c++) {
            float v = p[c] + b[c];
            p[c] = v;
            o[c] = v > 0.0f ? v : 0.0f;
        }
    }
}

CPU_CLONES
void linear_backward_act(float *dpre, float *dw, float *db, const float *dout,
                         const float *inp, const float *pre, const float *w, int N, int C_in,
                         int C_out, LinearAct act)
{
    if (N <= 0 || C_out <= 0)
        return;
    if (C_in > 0) {
        matmul(CblasNoTrans, CblasNoTrans, N, C_in, C_out, 1.0f, dout,
                    C_out, w, C_in, 0.0f, dpre, C_in);
        size_t n = (size_t)N * C_in;
        if (act == LINEAR_GELU)
            gelu_grad_mul(dpre, pre, (long)n);
        else
            for (size_t i = 0; i < n; i++)
                dpre[i] = inp[i] > 0.0f ? dpre[i] : 0.0f;
    }
    linear_backward(NULL, dw, db, dout, inp, w, N, C_in, C_out);
}

size_t linear_relu_words(int C)
{
    return ((size_t)C + 31) / 32;
}

/* The bits of 32 values (n of them, the rest 0): bit c where v[c] > 0. A fixed-length
 * loop GCC vectorises (compare, shift by the lane's index, OR-reduce). */
static inline uint32_t sign_bits32(const float *v, int n)
{
    uint32_t w = 0;
    if (n == 32) {
        for (int c = 0; c < 32; c++)
            w |= (uint32_t)(v[c] > 0.0f) << c;
        return w;
    }
    for (int c = 0; c < n; c++)
        w |= (uint32_t)(v[c] > 0.0f) << c;
    return w;
}

/* d[c] = 0 where bit c of w is clear, for n <= 32 values. */
static inline void mask_bits32(float *d, uint32_t w, int n)
{
    if (n == 32) {
        for (int c = 0; c < 32; c++)
            d[c] = (w >> c) & 1u ? d[c] : 0.0f;
        return;
    }
    for (int c = 0; c < n; c++)
        d[c] = (w >> c) & 1u ? d[c] : 0.0f;
}

CPU_CLONES
void linear_forward_relu_bits(float *out, uint32_t *bits, const float *inp, const float *w,
                              const float *b, int N, int C_in, int C_out)
{
    linear_forward_act(out, out, inp, w, b, N, C_in, C_out, LINEAR_RELU);
    size_t W = linear_relu_words(C_out);
    for (int n = 0; n < N; n++) {   /* the rows are in cache: the product just wrote them */
        const float *o = out + (size_t)n * C_out;
        for (size_t q = 0; q < W; q++) {
            int c0 = (int)q * 32;
            bits[(size_t)n * W + q] = sign_bits32(o + c0, C_out - c0 < 32 ? C_out - c0 : 32);
        }
    }
}

CPU_CLONES
void linear_backward_relu_bits(float *dpre, const float *dout, const uint32_t *bits,
                               const float *w, int N, int C_in, int C_out)
{
    if (N <= 0 || C_in <= 0)
        return;
    if (C_out <= 0) {
        memset(dpre, 0, (size_t)N * C_in * sizeof *dpre);
        return;
    }
    matmul(CblasNoTrans, CblasNoTrans, N, C_in, C_out, 1.0f, dout, C_out, w, C_in, 0.0f, dpre,
           C_in);
    size_t W = linear_relu_words(C_in);
    for (int n = 0; n < N; n++) {
        float *d = dpre + (size_t)n * C_in;
        for (size_t q = 0; q < W; q++) {
            int c0 = (int)q * 32;
            mask_bits32(d + c0, bits[(size_t)n * W + q], C_in - c0 < 32 ? C_in - c0 : 32);
        }
    }
}
