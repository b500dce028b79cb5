/* linear.c — nn.Linear forward/backward (see linear.h) on OpenBLAS cblas_sgemm, row-major.
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.Linear.html
 * Not threaded by itself (OpenBLAS may be) and not allocating. */
#include "linear.h"

#include <cblas.h>
#include <string.h>

/* y[r] = alpha * dot(w[r,:], x) + beta * y[r]. Eight partial sums per row so the
 * compiler vectorises the dot product (with FMA under -march=native) without
 * reassociation flags; single-threaded on purpose: for one row, BLAS thread hand-offs
 * cost more than the arithmetic. */
void linear_matvec(float *restrict y, const float *restrict w, int ldw, const float *restrict x,
                   int rows, int cols, float alpha, float beta)
{
    int c8 = cols & ~7;
    for (int r = 0; r < rows; r++) {
        const float *wr = w + (size_t)r * ldw;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int c = 0; c < c8; c += 8)
            for (int k = 0; k < 8; k++)
                acc[k] += wr[c + k] * x[c + k];
        float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for (int c = c8; c < cols; c++)
            sum += wr[c] * x[c];
        y[r] = alpha * sum + (beta != 0.0f ? beta * y[r] : 0.0f);
    }
}

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
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, C_out, C_in, 1.0f, inp, C_in, w,
                    C_in, beta, out, C_out);
}

/* db[o] += sum_n dout[n, o]: row by row so the inner loop is a contiguous vector add. */
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
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C_in, C_out, 1.0f, dout,
                    C_out, w, C_in, 1.0f, dinp, C_in);
    if (dw && C_in > 0)     /* (C_out,N) . (N,C_in) */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C_out, C_in, N, 1.0f, dout,
                    C_out, inp, C_in, 1.0f, dw, C_in);
    if (db)
        linear_bias_grad(db, dout, N, C_out);
}
