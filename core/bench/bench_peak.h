/* bench_peak.h — the matmul peak measured the way a workload runs: with the kernel of its
 * precision (OpenBLAS sgemm for fp32, gemm_bf16's selected kernel for bf16) on as many
 * threads as its replicas, each thread one single product of its slice of the rows, and
 * sampled between the workload's own steps so that the peak and the workload see the same
 * machine (a peak measured once, at another moment, gave shares over 100% under load).
 * Not a general benchmark harness: one square shape, no statistics beyond the samples. */
#ifndef LM_BENCH_PEAK_H
#define LM_BENCH_PEAK_H

typedef struct BenchPeak BenchPeak;

/* Prepares n x n x n products in `precision` ("fp32" or "bf16") on `threads` threads
 * (1..16). Returns NULL with a message in err for an unknown precision, a bf16 peak on a
 * CPU without a bf16 kernel, or no memory. The caller owns the result
 * (bench_peak_destroy). */
BenchPeak *bench_peak_create(const char *precision, int threads, int n, char *err);
/* One timed product on every thread at once: its GFLOP/s (2 n^3 / wall time). For bf16, B
 * is packed once (as a cached weight is) and A per product (as activations are). */
double bench_peak_sample(BenchPeak *p);
/* destroy(NULL) is a no-op. */
void bench_peak_destroy(BenchPeak *p);

/* The share of a peak a measurement reached: gflops / peak, or -1 when there is no peak. */
double bench_peak_share(double gflops, double peak);
/* "71% of the bf16 peak", or, for a share over 100%, a sentence saying that it is a
 * measurement error and not a figure (a share of a peak cannot pass 100%), or "no bf16
 * peak" when share < 0. Returns buf. */
const char *bench_peak_share_text(char *buf, int cap, double share, const char *precision);

#endif
