/* timemix.c — causal time mixing y = tril(W) x + b over a fixed context (see timemix.h).
 * The triangular products use cblas_strmm so the upper triangle of W is never read,
 * and the weight gradient is masked to the lower triangle as seed 004's hook does.
 * Not a general triangular-solve module. */
#include "timemix.h"

#include "cpu.h"

#include <cblas.h>
#include <string.h>

long timemix_scratch_floats(int T, int N)
{
    return (long)T * N + (long)T * T;
}

CPU_CLONES
void timemix_forward(float *y, const float *x, const float *w, const float *b, int T, int N,
                     int ctx)
{
    memcpy(y, x, (size_t)T * N * sizeof(float));
    cblas_strmm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, T, N, 1.0f,
                w, ctx, y, N);
    for (int i = 0; i < T; i++) {
        float bi = b[i];
        float *yi = y + (long)i * N;
        for (int n = 0; n < N; n++)
            yi[n] += bi;
    }
}

CPU_CLONES
void timemix_backward(float *dx, float *dw, float *db, float *scratch, const float *dy,
                      const float *x, const float *w, int T, int N, int ctx)
{
    float *t = scratch, *g = scratch + (long)T * N;
    memcpy(t, dy, (size_t)T * N * sizeof(float));
    cblas_strmm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, T, N, 1.0f, w,
                ctx, t, N);
    for (long k = 0; k < (long)T * N; k++)
        dx[k] += t[k];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, N, 1.0f, dy, N, x, N, 0.0f, g,
                T);
    for (int i = 0; i < T; i++) {
        for (int j = 0; j <= i; j++)
            dw[(long)i * ctx + j] += g[(long)i * T + j];
        float s = 0;
        const float *di = dy + (long)i * N;
        for (int n = 0; n < N; n++)
            s += di[n];
        db[i] += s;
    }
}
