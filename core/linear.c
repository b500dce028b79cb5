/* linear.c — nn.Linear forward/backward (see linear.h) on OpenBLAS cblas_sgemm, row-major.
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.Linear.html
 * Not threaded by itself (OpenBLAS may be) and not allocating. */
#include "linear.h"

#include <cblas.h>
#include <string.h>

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
