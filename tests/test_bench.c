/* test_bench.c — the bench module's bookkeeping, not its speed: a tiny MSA workload's
 * result has each part's forward and backward time, the rest of the step, per-part FLOPs
 * that sum to the total, the fp32 precision and peak; the bottleneck is the largest stage;
 * per-part GFLOP/s follow from FLOPs and time. No timing thresholds (times are only
 * checked to be there and to add up). */
#include "bench.h"
#include "bench_peak.h"
#include "gemm_bf16.h"
#include "check.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tiny training bench (d=16, nhid=32, 2 steps) of workload `name` with these sizes, w
 * left as it ran: LM_OK or the error, checked. */
static int tiny_bench(const char *name, int layers, int bptt, int batch, int heads,
                      int threads, int peak_n, BenchWorkload *w, BenchResult *r)
{
    char err[LM_ERR_LEN] = "";
    CHECK(bench_workload(name, w, err) == LM_OK, "%s: %s", name, err);
    w->cfg.d = 16; w->cfg.nhid = 32; w->cfg.layers = layers; w->cfg.bptt = bptt;
    w->cfg.batch = batch; w->cfg.heads = heads; w->cfg.threads = threads;
    w->steps = 2;
    w->peak_n = peak_n;
    int rc = bench_train(w, r, err);
    CHECK(rc == LM_OK, "bench_train: %s", err);
    return rc;
}

static void test_train_split(void)
{
    BenchWorkload w;
    BenchResult r;
    if (tiny_bench("small-msa", 1, 8, 2, 2, 1, 256, &w, &r))
        return;
    printf(" tiny msa: step %.3g s, mixer fwd %.3g s bwd %.3g s, other %.3g s\n", r.step_s,
           r.part_s[PROF_MIXER], r.part_bwd_s[PROF_MIXER], r.other_s);
    CHECK(r.part_s[PROF_MIXER] > 0 && r.part_bwd_s[PROF_MIXER] > 0,
          "the mixer's forward and backward are both timed");
    CHECK(r.part_s[PROF_FFN] > 0 && r.part_bwd_s[PROF_FFN] > 0, "so is the feed-forward");
    CHECK(r.part_bwd_s[PROF_OPTIM] == 0 && r.part_s[PROF_OPTIM] > 0,
          "the optimizer is one stage, outside the backward");
    CHECK(r.feed_s > 0, "the data feed is timed: %g s", r.feed_s);
    CHECK(r.cpu_step_s > 0 && fabs(r.tokens_per_cpu_s * r.cpu_step_s - 16) < 1e-6,
          "CPU time a step %g s, %g tokens per CPU-second (16 tokens a step)", r.cpu_step_s,
          r.tokens_per_cpu_s);
    double sum = r.other_s + r.feed_s, flops = 0;
    for (int p = 0; p < PROF_N; p++) {
        sum += r.part_s[p] + r.part_bwd_s[p];
        flops += r.part_flops[p];
    }
    CHECK(r.other_s >= 0, "the rest of the step is not negative");
    CHECK(fabs(flops - r.flops_per_token) <= 1e-9 * r.flops_per_token,
          "part FLOPs %g sum to the total %g", flops, r.flops_per_token);
    CHECK(r.part_flops[PROF_MIXER] > 0 && r.part_flops[PROF_EMBED] == 0, "FLOPs by part");
    CHECK(!strcmp(r.precision, "fp32"), "precision %s", r.precision);
    CHECK(sum > 0, "stages add up to a step");
    /* the peak is the workload's own: measured between its steps, on its threads */
    CHECK(r.peak_gflops > 0, "the peak was sampled between the steps: %g", r.peak_gflops);
    CHECK(r.peak_threads == 1, "on the workload's one thread: %d", r.peak_threads);
    CHECK(r.peak_share > 0, "a share of that peak: %g", r.peak_share);
    CHECK(r.part_s[PROF_SCAN] == 0 && r.part_bwd_s[PROF_SCAN] == 0 &&
          r.part_flops[PROF_SCAN] == 0, "MSA has no shift-and-sum");
    CHECK(r.part_s[PROF_GRAD] > 0 && r.part_s[PROF_WAIT] == 0,
          "one thread: the gradient's zeroing is timed (%g s), no thread waits (%g s)",
          r.part_s[PROF_GRAD], r.part_s[PROF_WAIT]);
    CHECK(r.work_threads == 1 && r.work_s[0] > 0, "one thread's work: %d, %g s",
          r.work_threads, r.work_s[0]);
}

/* On two threads the step's stages outside the model are timed apart: the gradient's
 * zeroing and sum, and the primary thread's waits for the other; none has a backward. */
static void test_step_stages(void)
{
    BenchWorkload w;
    BenchResult r;
    if (tiny_bench("small", 1, 8, 2, 1, 2, 256, &w, &r))
        return;
    printf(" two threads: gradient zero+sum %.3g s, thread waits %.3g s, untimed %.3g s\n",
           r.part_s[PROF_GRAD], r.part_s[PROF_WAIT], r.other_s);
    CHECK(r.peak_threads == 2, "the workload ran on two threads: %d", r.peak_threads);
    CHECK(r.part_s[PROF_GRAD] > 0 && r.part_s[PROF_WAIT] > 0,
          "the gradient's zeroing and sum (%g s) and the waits (%g s) are timed",
          r.part_s[PROF_GRAD], r.part_s[PROF_WAIT]);
    for (int p = 0; p < PROF_N; p++)
        CHECK(!bench_part_is_step_stage(p) || r.part_bwd_s[p] == 0,
              "%s has no backward", bench_part_name(p));
    CHECK(bench_part_is_step_stage(PROF_OPTIM) && bench_part_is_step_stage(PROF_GRAD) &&
          bench_part_is_step_stage(PROF_WAIT) && !bench_part_is_step_stage(PROF_NORM),
          "the step's stages are the optimizer, the gradient's zeroing and sum, the waits");
    /* each thread's own forward and backward: the primary's is its parts' sum, the other's
     * is timed on its own model (what the primary's waits are for) */
    double own = 0;
    for (int p = 0; p < PROF_N; p++)
        if (!bench_part_is_step_stage(p))
            own += r.part_s[p] + r.part_bwd_s[p];
    printf(" each thread's forward and backward: %.3g s, %.3g s\n", r.work_s[0], r.work_s[1]);
    CHECK(r.work_threads == 2 && fabs(r.work_s[0] - own) <= 1e-9 * own && r.work_s[1] > 0,
          "two threads' work: %d, %g s (the primary's parts: %g s), %g s", r.work_threads,
          r.work_s[0], own, r.work_s[1]);
    CHECK(!strcmp(bench_part_name(PROF_GRAD), "gradient zero+sum") &&
          !strcmp(bench_part_name(PROF_WAIT), "thread waits"), "named %s and %s",
          bench_part_name(PROF_GRAD), bench_part_name(PROF_WAIT));
}

/* One thread running both shards of a batch of 2 in turn: its parts are timed on both
 * shards, so they add up to its forward and backward, as on two threads (they were the
 * first shard's alone, and the second showed as untimed). */
static void test_one_thread_shards(void)
{
    BenchWorkload w;
    BenchResult r;
    if (tiny_bench("small", 1, 8, 2, 1, 1, 256, &w, &r))
        return;
    double own = 0;
    for (int p = 0; p < PROF_N; p++)
        if (!bench_part_is_step_stage(p))
            own += r.part_s[p] + r.part_bwd_s[p];
    printf(" one thread, two shards: its parts %.3g s, its forward and backward %.3g s\n", own,
           r.work_s[0]);
    CHECK(r.work_threads == 1 && fabs(r.work_s[0] - own) <= 1e-9 * own,
          "one thread's work %g s is its parts' sum %g s over both shards", r.work_s[0], own);
}

/* The Dispatcher's mixer in two parts: its products, and the shift-and-sum (the levels,
 * timed inside dispatcher.c), each with its own time and FLOPs, neither counted twice. */
static void test_dispatcher_split(void)
{
    BenchWorkload w;
    BenchResult r;
    if (tiny_bench("small", 2, 64, 2, 1, 1, 256, &w, &r))
        return;
    printf(" tiny dispatcher: mixer fwd %.3g s bwd %.3g s, shift-and-sum fwd %.3g s bwd %.3g s\n",
           r.part_s[PROF_MIXER], r.part_bwd_s[PROF_MIXER], r.part_s[PROF_SCAN],
           r.part_bwd_s[PROF_SCAN]);
    CHECK(r.part_s[PROF_SCAN] > 0 && r.part_bwd_s[PROF_SCAN] > 0,
          "the shift-and-sum's forward and backward are timed");
    CHECK(r.part_s[PROF_MIXER] > 0 && r.part_bwd_s[PROF_MIXER] > 0,
          "the products are timed apart from it, and stay positive");
    /* d=16, 6 levels (bptt 64), 2 layers: products 2*2*16*16 + 2*16*6, levels 2*16*6 a
     * layer forward; training 3x */
    CHECK(fabs(r.part_flops[PROF_MIXER] - 3 * 2 * (2 * 2 * 16 * 16 + 2 * 16 * 6)) < 1e-9,
          "the mixer's products: %g FLOPs a token", r.part_flops[PROF_MIXER]);
    CHECK(fabs(r.part_flops[PROF_SCAN] - 3 * 2 * (2 * 16 * 6)) < 1e-9,
          "the shift-and-sum: %g FLOPs a token", r.part_flops[PROF_SCAN]);
    CHECK(!strcmp(bench_part_name(PROF_SCAN), "shift-and-sum"), "named %s",
          bench_part_name(PROF_SCAN));
    /* the decoder stage in two parts too: its products (2 d V a token forward, V = 65) and
     * the softmax, loss and gradient scaling, timed inside decoder_loss.c, with no FLOPs of
     * a product and not counted in the decoder's share */
    printf(" tiny dispatcher: decoder fwd %.3g s bwd %.3g s, softmax+loss fwd %.3g s bwd %.3g s\n",
           r.part_s[PROF_DECODER], r.part_bwd_s[PROF_DECODER], r.part_s[PROF_LOSS],
           r.part_bwd_s[PROF_LOSS]);
    CHECK(r.part_s[PROF_LOSS] > 0 && r.part_bwd_s[PROF_LOSS] >= 0,
          "the softmax and loss are timed apart from the decoder's products");
    CHECK(r.part_s[PROF_DECODER] > 0 && r.part_bwd_s[PROF_DECODER] > 0,
          "the decoder's products keep a positive time");
    CHECK(fabs(r.part_flops[PROF_DECODER] - 3 * 2 * 16 * 65) < 1e-9 &&
          r.part_flops[PROF_LOSS] == 0, "decoder %g FLOPs a token, softmax+loss %g",
          r.part_flops[PROF_DECODER], r.part_flops[PROF_LOSS]);
    CHECK(!strcmp(bench_part_name(PROF_DECODER), "decoder") &&
          !strcmp(bench_part_name(PROF_LOSS), "softmax+loss"), "named %s and %s",
          bench_part_name(PROF_DECODER), bench_part_name(PROF_LOSS));
}

/* two replica threads: the peak runs on two threads too */
/* wide-msa is nanoGPT's wider shape, the one issue 36 compares against. */
static void test_wide_shape(void)
{
    BenchWorkload w;
    char err[LM_ERR_LEN] = "";
    CHECK(bench_workload("wide-msa", &w, err) == LM_OK, "wide-msa: %s", err);
    CHECK(w.cfg.model_kind == MODEL_MSA && w.cfg.layers == 6 && w.cfg.heads == 6 &&
          w.cfg.d == 192 && w.cfg.nhid == 768 && w.cfg.bptt == 128 && w.cfg.batch == 16 &&
          w.vocab == 65, "wide-msa: L=%d H=%d d=%d nhid=%d T=%d B=%d V=%d", w.cfg.layers,
          w.cfg.heads, w.cfg.d, w.cfg.nhid, w.cfg.bptt, w.cfg.batch, w.vocab);
    int listed = 0;
    for (const char *const *n = bench_workload_names(); *n; n++)
        listed |= !strcmp(*n, "wide-msa");
    CHECK(listed, "wide-msa is listed among the workloads");
}

static void test_peak_threads(void)
{
    BenchWorkload w;
    BenchResult r;
    char err[LM_ERR_LEN] = "";
    if (tiny_bench("small", 1, 8, 4, 1, 2, 96, &w, &r))
        return;
    CHECK(r.peak_threads == 2 && r.peak_gflops > 0, "peak on %d threads: %g", r.peak_threads,
          r.peak_gflops);
    snprintf(w.cfg.precision, sizeof w.cfg.precision, "bf16");   /* emulated where no CPU bf16 */
    w.cfg.batch = 4;
    CHECK(bench_train(&w, &r, err) == LM_OK, "bench_train bf16: %s", err);
    CHECK(!strcmp(r.precision, "bf16") && r.peak_threads == 2 && r.peak_gflops > 0,
          "bf16: its own peak (%s, %d threads, %g)", r.precision, r.peak_threads, r.peak_gflops);
    snprintf(w.cfg.precision, sizeof w.cfg.precision, "fp32");
    w.cfg.batch = 1;   /* one row: one replica works, so does one peak thread */
    CHECK(bench_train(&w, &r, err) == LM_OK, "bench_train: %s", err);
    CHECK(r.peak_threads == 1, "batch 1: peak on %d threads", r.peak_threads);
}

/* a share over 100% is never printed as a share */
static void test_share_text(void)
{
    char b[200];
    CHECK(fabs(bench_peak_share(50, 200) - 0.25) < 1e-12, "share %g", bench_peak_share(50, 200));
    CHECK(bench_peak_share(50, 0) < 0, "no peak, no share");
    bench_peak_share_text(b, sizeof b, 0.71, "bf16");
    CHECK(!strcmp(b, "71% of the bf16 peak"), "'%s'", b);
    bench_peak_share_text(b, sizeof b, 1.62, "fp32");
    CHECK(strstr(b, "162% of") == NULL && strstr(b, "measurement error") != NULL &&
          strstr(b, "not printed") != NULL, "over 100%%: '%s'", b);
    bench_peak_share_text(b, sizeof b, 1.0, "fp32");
    CHECK(!strcmp(b, "100% of the fp32 peak"), "exactly the peak: '%s'", b);
    char e[LM_ERR_LEN] = "";
    CHECK(bench_peak_create("fp16", 1, 8, e) == NULL && strstr(e, "fp16") != NULL,
          "unknown precision refused: %s", e);
    BenchPeak *p = bench_peak_create("fp32", 3, 64, e);
    CHECK(p && bench_peak_sample(p) > 0, "a 3-thread fp32 sample: %s", e);
    bench_peak_destroy(p);
    bench_peak_destroy(NULL);
}

static void test_bottleneck(void)
{
    BenchResult r;
    memset(&r, 0, sizeof r);
    r.part_s[PROF_FFN] = 0.2;
    r.part_bwd_s[PROF_MIXER] = 0.3;
    r.part_s[PROF_OPTIM] = 0.1;
    r.other_s = 0.05;
    r.step_s = 0.65;
    BenchStage b = bench_bottleneck(&r);
    CHECK(!strcmp(b.name, "mixer backward") && b.seconds == 0.3, "bottleneck %s %g", b.name,
          b.seconds);
    r.feed_s = 0.35;
    b = bench_bottleneck(&r);
    CHECK(!strcmp(b.name, "data feed"), "bottleneck %s", b.name);
    r.part_s[PROF_WAIT] = 0.37;
    b = bench_bottleneck(&r);
    CHECK(!strcmp(b.name, "thread waits"), "a step stage has no direction: %s", b.name);
    r.other_s = 0.4;
    b = bench_bottleneck(&r);
    CHECK(!strcmp(b.name, "untimed"), "bottleneck %s", b.name);
    r.batch = 2, r.bptt = 5;
    r.part_flops[PROF_FFN] = 1e9;
    r.part_bwd_s[PROF_FFN] = 0.3;   /* 10 tokens x 1 GFLOP in 0.5 s */
    CHECK(fabs(bench_part_gflops(&r, PROF_FFN) - 20.0) < 1e-9, "part GFLOP/s %g",
          bench_part_gflops(&r, PROF_FFN));
    CHECK(bench_part_gflops(&r, PROF_EMBED) == 0, "no FLOPs counted: 0");
}

/* The ceiling by hand: 10 tokens a step, the feed-forward's 1 GFLOP a token (10 GFLOP)
 * at a 20 GFLOP/s peak is 0.5 s; the shift-and-sum's 0.1 GFLOP a token counts in the
 * step's FLOPs but keeps its measured 0.1 s, as the norms (0.3 s), the optimizer (0.1 s),
 * the feed and the rest (0.05 s each) keep theirs: 0.6 s. 11 GFLOP in 1.1 s is 10 GFLOP/s,
 * half the peak. */
static void test_ceiling(void)
{
    BenchResult r;
    memset(&r, 0, sizeof r);
    r.batch = 2, r.bptt = 5;
    r.part_flops[PROF_FFN] = 1e9;
    r.part_flops[PROF_SCAN] = 1e8;
    r.flops_per_token = 1.1e9;
    r.part_s[PROF_FFN] = 0.3, r.part_bwd_s[PROF_FFN] = 0.4;   /* measured: 0.7 s */
    r.part_s[PROF_SCAN] = 0.1;
    r.part_s[PROF_NORM] = 0.2, r.part_bwd_s[PROF_NORM] = 0.1;
    r.part_s[PROF_OPTIM] = 0.1;
    r.feed_s = 0.05, r.other_s = 0.05;
    r.peak_gflops = 20;
    double rest = -1, c = bench_ceiling(&r, &rest);
    CHECK(fabs(rest - 0.6) < 1e-12, "the other stages: %g s (0.6)", rest);
    CHECK(fabs(c - 0.5) < 1e-12, "ceiling %g (0.5)", c);
    double reached = r.flops_per_token * 10 / 1.3 / 1e9 / r.peak_gflops;   /* a 1.3 s step */
    CHECK(c > reached, "above the share reached with the products slower (%g > %g)", c,
          reached);
    r.part_flops[PROF_MIXER] = 1e9;   /* a second product part at the peak: +0.5 s */
    r.flops_per_token = 2.1e9;
    c = bench_ceiling(&r, NULL);
    CHECK(fabs(c - 21.0 / 20 / 1.6) < 1e-12, "two product parts: %g", c);
    r.peak_gflops = 0;
    CHECK(bench_ceiling(&r, &rest) == 0 && fabs(rest - 0.6) < 1e-12,
          "no peak, no ceiling (the rest still given)");
}

static void test_peaks(void)
{
    double fp32 = bench_peak_for("fp32");
    CHECK(fp32 > 0, "fp32 peak measured: %g", fp32);
    CHECK(bench_peak_for("fp32") == fp32, "measured once per process");
    CHECK(bench_peak_for("nonsense") == 0, "an unknown precision has no peak");
}

int main(void)
{
    setenv(GEMM_BF16_EMULATE_ENV, "1", 0);   /* bf16 paths run on any CPU */
    test_train_split();
    test_step_stages();
    test_one_thread_shards();
    test_dispatcher_split();
    test_bottleneck();
    test_ceiling();
    test_peaks();
    test_wide_shape();
    test_peak_threads();
    test_share_text();
    return check_summary();
}
