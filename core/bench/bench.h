/* bench.h — measured performance of lmlab on this machine: the sgemm peak, training
 * throughput of named workloads (tokens/s, the time split by stage, forward and backward,
 * achieved model FLOP/s against the measured peak of the precision, the bottleneck, peak
 * memory) and sampling speed with and without the incremental cache.
 * Workloads use random tokens (speed does not depend on the data). Not a timed test:
 * nothing here asserts; the `bench` command prints and scripts compare. */
#ifndef LM_BENCH_H
#define LM_BENCH_H

#include "config.h"
#include "model.h"

#define BENCH_MAX_THREADS 16   /* of work_s: shardplan.h's SHARDPLAN_MAX */

typedef struct {
    char name[40];
    Config cfg;            /* model, sizes, optimizer */
    int vocab;             /* V */
    int steps;             /* timed steps (after one warm-up step) */
    int peak_n;            /* the peak's products are peak_n^3 (0: 1024) */
} BenchWorkload;

typedef struct {
    char name[40], model[32];
    int vocab, d, layers, bptt, batch, heads;
    long params;
    double step_s;         /* median seconds per training step */
    double tokens_per_s;
    double cpu_step_s;     /* median CPU seconds of a step, all its threads together */
    double tokens_per_cpu_s; /* tokens per CPU-second: what a step costs in work, which
                              other people's jobs on the machine do not change (wall
                              time does: a descheduled replica waits) */
    double flops_per_token;/* training (forward + backward) matrix FLOPs */
    double gflops;         /* achieved model GFLOP/s */
    char precision[8];     /* the matmul precision it ran in ("fp32") */
    double peak_gflops;    /* the (lower) median of the peak samples taken between the
                              steps (each the best of 3 products), on the precision's
                              kernel and the workload's threads */
    double peak_share;     /* the lower median over steps of (the step's GFLOP/s / the peak
                              sampled right after it); > 1 is a measurement error */
    int peak_threads;      /* threads the peak ran on (the workload's replicas) */
    double part_s[PROF_N]; /* seconds per step in each part's forward, and in each of the
                              step's stages (bench_part_is_step_stage: the optimizer,
                              the gradient's zeroing and sum, the waits for the other
                              threads; model.h's PROF_*), all on the primary's thread */
    double part_bwd_s[PROF_N]; /* seconds per step in each part's backward */
    double feed_s;         /* the data feed: the next (B, T) batch from a token stream
                              (batcher_next, the trainer's batching mode) */
    double other_s;        /* the rest of a step, in no part: starting the threads' phases,
                              the model's untimed bookkeeping */
    double part_flops[PROF_N]; /* training matrix FLOPs per token of each part (0: none) */
    int work_threads;      /* threads that ran the shards (work_s's entries) */
    double work_s[BENCH_MAX_THREADS]; /* seconds per step each thread spent in its shards'
                              forward and backward (the model's parts on its models): what
                              the primary waits for is the others' excess over work_s[0] */
    long peak_rss_kb;      /* of the process that ran it */
    int diagnostics;       /* the workload's diagnostics=N (0: not measured) */
    double diag_s;         /* median seconds of one diagnostics collection (bench_diag.h),
                              not counted in step_s */
    double diag_cpu_s;     /* its median CPU seconds (it runs on the training thread) */
    double diag_record_s;  /* median seconds to record one batch in the store */
    int diag_series, diag_hists; /* named scalars and histograms of a batch */
} BenchResult;

/* One stage of a step: a part's forward or backward, the optimizer, or the rest. */
typedef struct {
    char name[40];
    double seconds;        /* per step */
} BenchStage;

/* Names of the built-in workloads, NULL-terminated: small, paper, small-msa, paper-msa,
 * wide-msa (nanoGPT's wider shape: L=6, 6 heads, d=192, block 128, batch 16),
 * scan-dispatcher-256/1024/4096, scan-msa-256/1024/4096. */
const char *const *bench_workload_names(void);
/* Fills w for a named workload. LM_OK or LM_EARG listing the names. */
int bench_workload(const char *name, BenchWorkload *w, char *err);
/* Times w's training steps (forward, backward, clip, optimizer step) and, after each,
 * (with w->cfg.diagnostics > 0: also each step's diagnostics, timed apart, bench_diag.h)
 * samples the matmul peak of its precision on its threads (bench_peak.h): the result's
 * peak_gflops and peak_share. With
 * w->cfg.precision "bf16" the model's products run in bf16 (matmul.h) and the result's
 * name gets " bf16"; LM_EARG when this CPU has no bf16 kernel (a bf16 figure is never
 * an fp32 one in disguise). */
int bench_train(const BenchWorkload *w, BenchResult *out, char *err);
/* The measured matmul peak (GFLOP/s) of a precision on this machine with the threads
 * set now, measured once per process: "fp32" is the sgemm peak (1536^3). 0 for a
 * precision this build cannot measure; "bf16" is bench_bf16_gflops(1536, the BLAS
 * threads), 0 when this CPU has no bf16 kernel. The machine's figure for bench's header
 * only: a workload's share is of the peak sampled between its own steps (peak_share). */
double bench_peak_for(const char *precision);
/* 1 for the parts that are stages of the whole step, with no backward (model.h:
 * PROF_OPTIM, PROF_GRAD, PROF_WAIT), 0 for the model's parts. */
int bench_part_is_step_stage(int part);
/* The stage of r that took the most time per step (its bottleneck). */
BenchStage bench_bottleneck(const BenchResult *r);
/* 1 when r's part is a matrix product's (mixer, feed-forward, decoder: FLOPs counted and
 * not the shift-and-sum's elementwise ones), whose time bench_ceiling puts at the peak. */
int bench_part_is_product(const BenchResult *r, int part);
/* What r's step could reach with every matrix product at the peak: the products' parts
 * (bench_part_is_product) take their FLOPs / peak_gflops, every other stage (embedding,
 * shift-and-sum, norms, loss, the step's stages, data feed, untimed) the time it took.
 * Returns the step's share of the peak then (its FLOPs over that time, over the peak; 0
 * without a peak or FLOPs) and sets *rest_s, the other stages' seconds per step, when
 * rest_s is not NULL. The times are means over the steps, as other_s. An upper bound:
 * the feed-forward's and MSA mixer's elementwise work counts as products'. */
double bench_ceiling(const BenchResult *r, double *rest_s);
/* The part's achieved GFLOP/s in r (forward + backward), 0 when the part has no matrix
 * FLOPs counted or took no time. */
double bench_part_gflops(const BenchResult *r, int part);
/* The name of the bf16 kernel this CPU runs ("avx512-bf16"; "emulated" under
 * gemm_bf16.h's test hook), NULL when it has none (then a bf16 workload is refused).
 * commands/ asks this, never core/nn. */
const char *bench_bf16_kernel(void);
/* Sampling tokens/s generating `tokens` tokens with the workload's model, with and
 * without the incremental cache. */
int bench_sample(const BenchWorkload *w, int tokens, double *cached_tps, double *full_tps,
                 char *err);
/* The name of a PROF_* part ("mixer", "ffn", ...). */
const char *bench_part_name(int part);

#endif
