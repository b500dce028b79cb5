/* bench_peak.c — the matmul peak on the workload's kernel and threads (see bench_peak.h).
 * Each sample starts threads-1 helper threads and runs the first slice on the caller, as
 * the replicas do; the operands are allocated once per BenchPeak. */
#include "bench_peak.h"

#include "err.h"
#include "gemm_bf16.h"
#include "sysinfo.h"

#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEAK_MAX_THREADS 16

struct BenchPeak {
    int bf16, threads, n;
    GemmBf16Kernel kernel;
    float *a, *b, *c;
    GemmBf16PackedB pb;       /* bf16: B packed once */
    char *scratch;            /* bf16: one gemm_bf16 scratch per thread */
    size_t scratch_stride;
};

typedef struct {
    const BenchPeak *p;
    int m0, m1, t;            /* rows m0..m1, thread t (its scratch) */
} PeakSlice;

static void *peak_slice(void *arg)
{
    const PeakSlice *s = arg;
    const BenchPeak *p = s->p;
    int n = p->n, rows = s->m1 - s->m0;
    const float *a = p->a + (size_t)s->m0 * n;
    float *c = p->c + (size_t)s->m0 * n;
    if (rows <= 0)
        return NULL;
    if (p->bf16)
        gemm_bf16(p->kernel, 0, 0, rows, n, n, 1.0f, a, n, NULL, 0, &p->pb, 0.0f, c, n,
                  p->scratch + p->scratch_stride * (size_t)s->t);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n, n, 1.0f, a, n, p->b,
                    n, 0.0f, c, n);
    return NULL;
}

BenchPeak *bench_peak_create(const char *precision, int threads, int n, char *err)
{
    int bf16 = !strcmp(precision, "bf16");
    if (!bf16 && strcmp(precision, "fp32")) {
        err_set(err, LM_EARG, "no peak for precision '%s' (fp32 or bf16)", precision);
        return NULL;
    }
    GemmBf16Kernel k = bf16 ? gemm_bf16_select_kernel() : GEMM_BF16_NONE;
    if (bf16 && k == GEMM_BF16_NONE) {
        err_set(err, LM_EARG, "no bf16 peak: this CPU has no AVX512-BF16");
        return NULL;
    }
    BenchPeak *p = calloc(1, sizeof *p);
    size_t nn = (size_t)n * n;
    if (p) {
        p->bf16 = bf16;
        p->kernel = k;
        p->n = n;
        p->threads = threads < 1 ? 1 : threads > PEAK_MAX_THREADS ? PEAK_MAX_THREADS : threads;
        p->a = malloc(nn * sizeof(float));
        p->b = malloc(nn * sizeof(float));
        p->c = malloc(nn * sizeof(float));
    }
    int ok = p && p->a && p->b && p->c;
    if (ok && bf16) {
        p->scratch_stride = (gemm_bf16_scratch_bytes() + 63) & ~(size_t)63;
        p->scratch = aligned_alloc(64, p->scratch_stride * (size_t)p->threads);
        p->pb.data = aligned_alloc(64, (gemm_bf16_packed_b_elems(n, n) * 2 + 63) & ~(size_t)63);
        ok = p->scratch && p->pb.data;
    }
    if (!ok) {
        bench_peak_destroy(p);
        err_set(err, LM_ENOMEM, "out of memory for the peak's %d x %d operands", n, n);
        return NULL;
    }
    for (size_t i = 0; i < nn; i++) {
        p->a[i] = (float)(i % 7) * 0.1f;
        p->b[i] = (float)(i % 5) * 0.1f;
    }
    if (bf16)
        gemm_bf16_pack_b(&p->pb, 0, n, n, p->b, n);
    return p;
}

double bench_peak_sample(BenchPeak *p)
{
    PeakSlice js[PEAK_MAX_THREADS];
    pthread_t th[PEAK_MAX_THREADS];
    int started[PEAK_MAX_THREADS] = {0};
    double t0 = sysinfo_now();
    for (int t = 0; t < p->threads; t++)
        js[t] = (PeakSlice){p, (int)((long)p->n * t / p->threads),
                            (int)((long)p->n * (t + 1) / p->threads), t};
    for (int t = 1; t < p->threads; t++)
        started[t] = !pthread_create(&th[t], NULL, peak_slice, &js[t]);
    peak_slice(&js[0]);
    for (int t = 1; t < p->threads; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            peak_slice(&js[t]);   /* no thread to be had: the work still gets done */
    }
    double dt = sysinfo_now() - t0;
    return dt > 0 ? 2.0 * p->n * (double)p->n * p->n / dt / 1e9 : 0;
}

void bench_peak_destroy(BenchPeak *p)
{
    if (!p)
        return;
    free(p->a); free(p->b); free(p->c); free(p->pb.data); free(p->scratch);
    free(p);
}

double bench_peak_share(double gflops, double peak)
{
    return peak > 0 ? gflops / peak : -1;
}

const char *bench_peak_share_text(char *buf, int cap, double share, const char *precision)
{
    if (share < 0)
        snprintf(buf, (size_t)cap, "no %s peak", precision);
    else if (share > 1.0)
        snprintf(buf, (size_t)cap, "share of the %s peak not printed: %.0f%% would be a "
                 "measurement error, a share cannot pass 100%%", precision, 100 * share);
    else
        snprintf(buf, (size_t)cap, "%.0f%% of the %s peak", 100 * share, precision);
    return buf;
}
