/* bench.c — workloads and measurements (see bench.h). */
#include "bench.h"

#include "bench_peak.h"
#include "bench_diag.h"

#include "dataset.h"
#include "err.h"
#include "gemm_bf16.h"
#include "matmul.h"
#include "optim.h"
#include "replicas.h"
#include "update.h"
#include "sample.h"
#include "sysinfo.h"
#include "tokenizer.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double bench_sgemm_gflops(int n);
static double bench_bf16_gflops(int n, int threads);

static const char *const NAMES[] = {"small", "paper", "small-msa", "paper-msa", "wide-msa",
    "scan-dispatcher-256", "scan-dispatcher-1024", "scan-dispatcher-4096", "scan-msa-256",
    "scan-msa-1024", "scan-msa-4096", NULL};

const char *const *bench_workload_names(void)
{
    return NAMES;
}

const char *bench_part_name(int part)
{
    static const char *n[PROF_N] = {"embedding", "mixer", "shift-and-sum", "feed-forward",
                                    "norms+residual", "decoder", "softmax+loss", "optimizer",
                                    "gradient zero+sum", "thread waits"};
    return part >= 0 && part < PROF_N ? n[part] : "?";
}

int bench_part_is_step_stage(int part)
{
    return part == PROF_OPTIM || part == PROF_GRAD || part == PROF_WAIT;
}

static void set_shape(Config *c, int d, int nhid, int layers, int bptt, int batch)
{
    c->d = d; c->nhid = nhid; c->layers = layers; c->bptt = bptt; c->batch = batch;
}

int bench_workload(const char *name, BenchWorkload *w, char *err)
{
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    Config *c = &w->cfg;
    config_defaults(c);
    c->dropout = 0;
    c->heads = 1;
    w->steps = 10;
    int msa = strstr(name, "msa") != NULL;
    if (config_set(c, "model", msa ? "msa" : "dispatcher", err))
        return LM_EARG;
    if (!strcmp(name, "small") || !strcmp(name, "small-msa")) {
        /* the peer's char-level shape; MSA with 4 heads as the peer's msa recipe */
        set_shape(c, 128, 512, 4, 64, 12);
        w->vocab = 65;
        snprintf(c->optimizer, sizeof c->optimizer, "adamw");
        if (msa) c->heads = 4;
        w->steps = 40;
    } else if (!strcmp(name, "wide-msa")) {
        /* issue 36's second nanoGPT shape: 6 layers, 6 heads, d=192 (nhid 4d), block 128,
         * batch 16, V=65 */
        set_shape(c, 192, 768, 6, 128, 16);
        w->vocab = 65;
        snprintf(c->optimizer, sizeof c->optimizer, "adamw");
        c->heads = 6;
        w->steps = 12;
    } else if (!strcmp(name, "paper") || !strcmp(name, "paper-msa")) {
        /* the paper's WikiText-2 shape: Adam, clip 0.5 */
        set_shape(c, 512, 512, 6, 512, 20);
        w->vocab = 28782;
        snprintf(c->optimizer, sizeof c->optimizer, "adam");
        c->clip = 0.5f;
        if (msa) c->heads = 8;
        w->steps = 3;
    } else if (!strncmp(name, "scan-", 5)) {
        const char *t = strrchr(name, '-');
        int T = atoi(t + 1);
        if (T != 256 && T != 1024 && T != 4096)
            return err_set(err, LM_EARG, "unknown workload '%s'", name);
        set_shape(c, 128, 512, 4, T, 8192 / T); /* 8192 tokens per step */
        if (msa) c->heads = 4;
        w->vocab = 65;
        w->steps = 6;
    } else {
        return err_set(err, LM_EARG, "unknown workload '%s': small, paper, small-msa, "
                       "paper-msa, wide-msa, scan-dispatcher-256|1024|4096, scan-msa-256|1024|4096", name);
    }
    return LM_OK;
}

/* Forward FLOPs per token (2 per multiply-add) of each part: matrix products, and the
 * shift-and-sum's elementwise multiply-adds; training = 3x. */
static void forward_part_flops(const Config *c, int V, double *part)
{
    double d = c->d, h = c->nhid, L = config_levels(c), T = c->bptt, mix, scan = 0;
    if (c->model_kind == MODEL_MSA) {
        mix = 2 * 4 * d * d + 2 * T * d;      /* projections + causal QK^T and PV (T/2 avg) */
    } else {   /* in and out projections, the gate projection; the levels' multiply-adds */
        mix = c->model_kind == MODEL_DISPATCHER ? 2 * 2 * d * (d / c->heads) + 2 * d * L
                                                : 2 * 2 * d * d + 2 * d * L * c->heads;
        scan = 2 * d * L;
    }
    for (int p = 0; p < PROF_N; p++)
        part[p] = 0;
    part[PROF_MIXER] = c->layers * mix;
    part[PROF_SCAN] = c->layers * scan;
    part[PROF_FFN] = c->layers * 2 * 2 * d * h;
    part[PROF_DECODER] = 2 * d * V;
}

/* The matmul precision workload w runs in ("fp32"). */
static const char *bench_precision(const BenchWorkload *w)
{
    return strcmp(w->cfg.precision, "bf16") ? "fp32" : "bf16";
}

double bench_peak_for(const char *precision)
{
    static double fp32;
    if (!strcmp(precision, "fp32")) {
        if (fp32 <= 0)
            fp32 = bench_sgemm_gflops(1536);
        return fp32;
    }
    static double bf16 = -1;
    if (!strcmp(precision, "bf16")) {
        if (bf16 < 0)
            bf16 = bench_bf16_gflops(1536, openblas_get_num_threads());
        return bf16;
    }
    return 0;
}

BenchStage bench_bottleneck(const BenchResult *r)
{
    BenchStage best = {"", -1};
    for (int p = 0; p < PROF_N; p++)
        for (int bwd = 0; bwd < 2; bwd++) {
            double t = bwd ? r->part_bwd_s[p] : r->part_s[p];
            if (t > best.seconds) {
                best.seconds = t;
                snprintf(best.name, sizeof best.name, "%s%s", bench_part_name(p),
                         bench_part_is_step_stage(p) ? "" : bwd ? " backward" : " forward");
            }
        }
    if (r->feed_s > best.seconds) {
        best.seconds = r->feed_s;
        snprintf(best.name, sizeof best.name, "data feed");
    }
    if (r->other_s > best.seconds) {
        best.seconds = r->other_s;
        snprintf(best.name, sizeof best.name, "untimed");
    }
    return best;
}

int bench_part_is_product(const BenchResult *r, int part)
{
    return part >= 0 && part < PROF_N && r->part_flops[part] > 0 && part != PROF_SCAN;
}

double bench_ceiling(const BenchResult *r, double *rest_s)
{
    double tokens = (double)r->batch * r->bptt, peak = r->peak_gflops * 1e9;
    double rest = r->feed_s + r->other_s, products = 0;
    for (int p = 0; p < PROF_N; p++) {
        if (bench_part_is_product(r, p))
            products += r->part_flops[p] * tokens / (peak > 0 ? peak : 1);
        else
            rest += r->part_s[p] + r->part_bwd_s[p];
    }
    if (rest_s)
        *rest_s = rest;
    if (!(peak > 0) || !(r->flops_per_token > 0) || !(rest + products > 0))
        return 0;
    return r->flops_per_token * tokens / peak / (rest + products);
}

double bench_part_gflops(const BenchResult *r, int part)
{
    double t = r->part_s[part] + r->part_bwd_s[part];
    if (part < 0 || part >= PROF_N || r->part_flops[part] <= 0 || t <= 0)
        return 0;
    return r->part_flops[part] * r->batch * r->bptt / t / 1e9;
}

/* CPU seconds used by every thread of this process so far. */
static double process_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) ? 0 : t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The per-step figures of the timed steps (each w->steps long, malloc'd). */
typedef struct {
    double *times, *peaks, *shares, *cpu;
} StepFigures;

_Static_assert(BENCH_MAX_THREADS >= SHARDPLAN_MAX, "a thread per shard at most");

/* out->work_s: each thread's seconds per step in its models' parts (forward and backward;
 * not the step's stages, which only the primary times). */
static void thread_work(Replicas *reps, int steps, BenchResult *out)
{
    out->work_threads = replicas_count(reps);
    for (int t = 0; t < out->work_threads; t++) {
        int lo, hi;
        double s = 0;
        replicas_thread_models(reps, t, &lo, &hi);
        for (int k = lo; k < hi; k++) {
            const Model *mk = replicas_shard_model(reps, k);
            for (int p = 0; p < PROF_N; p++)
                if (!bench_part_is_step_stage(p))
                    s += mk->prof[p] + mk->prof_bwd[p];
        }
        out->work_s[t] = s / steps;
    }
}

/* out from the timed steps (their arrays are sorted here) and the model's profile: the
 * median step, tokens/s, FLOPs per part against the time per part, the peak share. */
static void fill_result(const BenchWorkload *w, const Model *m, Replicas *reps, StepFigures *f,
                        int bf16, int peak_threads, BenchResult *out)
{
    const Config *c = &w->cfg;
    size_t N = (size_t)c->batch * c->bptt, n = (size_t)w->steps;
    qsort(f->times, n, sizeof(double), cmp_double);
    snprintf(out->name, sizeof out->name, "%.34s%s", w->name, bf16 ? " bf16" : "");
    snprintf(out->model, sizeof out->model, "%s", c->model);
    out->vocab = w->vocab; out->d = c->d; out->layers = c->layers; out->bptt = c->bptt;
    out->batch = c->batch; out->heads = c->heads;
    out->params = model_param_count(m);
    out->step_s = f->times[w->steps / 2];
    out->tokens_per_s = (double)N / out->step_s;
    double sum = 0, mean = 0;
    /* the primary thread's parts: the step's stages it times on m, the model's parts on
     * every shard it runs (one thread runs all the shards of a threads=1 run in turn) */
    int lo = 0, hi = 1;
    if (reps)
        replicas_thread_models(reps, 0, &lo, &hi);
    for (int p = 0; p < PROF_N; p++) {
        double fwd = 0, bwd = 0;
        for (int k = lo; k < hi; k++) {
            const Model *mk = reps && !bench_part_is_step_stage(p)
                                  ? replicas_shard_model(reps, k) : (k == lo ? m : NULL);
            if (mk) {
                fwd += mk->prof[p];
                bwd += mk->prof_bwd[p];
            }
        }
        out->part_s[p] = fwd / w->steps;
        out->part_bwd_s[p] = bwd / w->steps;
        sum += out->part_s[p] + out->part_bwd_s[p];
    }
    for (int s = 0; s < w->steps; s++)
        mean += f->times[s] / w->steps;
    sum += out->feed_s;
    out->other_s = mean > sum ? mean - sum : 0;   /* parts are sums, so the mean */
    out->gflops = out->flops_per_token * out->tokens_per_s / 1e9;
    snprintf(out->precision, sizeof out->precision, "%s", bench_precision(w));
    qsort(f->peaks, n, sizeof(double), cmp_double);
    qsort(f->shares, n, sizeof(double), cmp_double);
    out->peak_gflops = f->peaks[(w->steps - 1) / 2];   /* the lower median: with 2 steps */
    out->peak_share = f->shares[(w->steps - 1) / 2];   /* not the larger share */
    out->peak_threads = peak_threads;
    qsort(f->cpu, n, sizeof(double), cmp_double);
    out->cpu_step_s = f->cpu[w->steps / 2];
    out->tokens_per_cpu_s = out->cpu_step_s > 0 ? (double)N / out->cpu_step_s : 0;
    out->peak_rss_kb = sysinfo_peak_rss_kb();
}

/* The data feed as the trainer's: a Batcher over a token file of random tokens (speed
 * does not depend on the data), read with pread as training reads token files (an
 * unlinked temporary llm.c shard; in memory when the vocabulary needs uint32 or /tmp
 * cannot be written), in the workload's batching mode. LM_ENOMEM when it cannot be. */
static int feed_init(const BenchWorkload *w, Batcher *feed, TokSeq *seq, char *err)
{
    const Config *c = &w->cfg;
    size_t N = (size_t)c->batch * c->bptt;
    size_t n_stream = N * 64 > (1u << 20) ? N * 64 : (1u << 20);
    int *stream = malloc(n_stream * sizeof(int));
    if (!stream)
        return err_set(err, LM_ENOMEM, "out of memory");
    Rng r;
    rng_seed(&r, 1);
    for (size_t i = 0; i < n_stream; i++)
        stream[i] = (int)rng_below(&r, (uint32_t)w->vocab);
    char path[] = "/tmp/lmlab-bench-feed-XXXXXX";
    int fd = w->vocab <= 65536 ? mkstemp(path) : -1, ok = fd >= 0;
    if (ok) {
        int32_t h[256] = {TOKSEQ_MAGIC16, 1, (int32_t)n_stream};
        uint16_t *u = malloc(n_stream * sizeof *u);
        for (size_t i = 0; u && i < n_stream; i++) u[i] = (uint16_t)stream[i];
        ok = u && write(fd, h, sizeof h) == (ssize_t)sizeof h &&
             write(fd, u, n_stream * sizeof *u) == (ssize_t)(n_stream * sizeof *u);
        free(u);
        close(fd);
        char e2[LM_ERR_LEN];
        memset(seq, 0, sizeof *seq);
        ok = ok && tokseq_add_file(seq, path, 0, n_stream, e2) == LM_OK;
        unlink(path);   /* the open descriptor keeps it until tokseq_free */
    }
    if (ok)
        free(stream);
    else
        tokseq_init_memory(seq, stream, n_stream);
    batcher_init(feed, seq, c->batch, c->bptt,
                 c->batching_kind == CONFIG_BATCHING_STREAM ? BATCH_STREAM : BATCH_RANDOM, 1);
    return LM_OK;
}

/* The timed loop: step -1 warms up, then w->steps steps, each followed by a peak sample
 * on the workload's kernel and threads (same machine, same moment). */
static int timed_steps(const BenchWorkload *w, Model *m, Replicas *reps, Optimizer *opt,
                       Batcher *feed, BenchPeak *peak, StepFigures *f, BenchResult *out,
                       BenchDiag *bd, char *err)
{
    const Config *c = &w->cfg;
    size_t N = (size_t)c->batch * c->bptt;
    int *x = malloc(N * sizeof(int)), *y = malloc(N * sizeof(int)), rc = LM_OK;
    if (!x || !y) rc = err_set(err, LM_ENOMEM, "out of memory");
    m->training = 1;
    for (int s = -1; !rc && s < w->steps; s++) {
        if (s == 0)
            for (int k = 0; k < replicas_plan(reps)->S; k++) {
                Model *mk = replicas_shard_model(reps, k);
                memset(mk->prof, 0, sizeof mk->prof);
                memset(mk->prof_bwd, 0, sizeof mk->prof_bwd);
            }
        m->profiling = s >= 0;
        double c0 = process_cpu_s(), t0 = sysinfo_now(), loss;
        int L;
        while ((L = batcher_next(feed, x, y, NULL, err)) != c->bptt)   /* whole windows only */
            if (L < 0) { rc = LM_EIO; break; }
        if (rc) break;
        double tf = sysinfo_now();
        long cnt;
        rc = replicas_step(reps, x, y, c->batch, c->bptt, &loss, &cnt);
        if (rc) { err_set(err, rc, "forward failed"); break; }
        double t1 = sysinfo_now(), w1 = m->prof[PROF_WAIT];
        float norm = update_grad_norm(reps, &m->params);   /* as trainer.c's step */
        double dt = 0, dc = process_cpu_s();   /* diagnostics: timed apart, unprofiled */
        int prof = m->profiling;
        m->profiling = 0;
        if (bd) dt += bench_diag_collect(bd, m, reps, s);
        m->profiling = prof;
        dc -= process_cpu_s();
        update_apply(reps, opt, &m->params, norm, c->clip, c->lr);
        dc += process_cpu_s();
        m->profiling = 0;
        if (bd) dt += bench_diag_finish(bd, m, s);
        m->profiling = prof;
        dc = process_cpu_s() - dc;   /* the CPU seconds of the two diagnostics calls */
        double t2 = sysinfo_now() - dt;
        if (s < 0) continue;
        f->times[s] = t2 - t0;
        f->cpu[s] = process_cpu_s() - c0 - dc;
        m->prof[PROF_OPTIM] += t2 - t1 - (m->prof[PROF_WAIT] - w1);   /* its waits: PROF_WAIT */
        out->feed_s += (tf - t0) / w->steps;
        f->peaks[s] = 0;   /* the best of 3: the peak as this moment's machine allows */
        for (int k = 0; k < 3; k++) {
            double g = bench_peak_sample(peak);
            f->peaks[s] = g > f->peaks[s] ? g : f->peaks[s];
        }
        f->shares[s] = bench_peak_share(out->flops_per_token * (double)N / f->times[s] / 1e9,
                                        f->peaks[s]);
    }
    free(x); free(y);
    return rc;
}

int bench_train(const BenchWorkload *w, BenchResult *out, char *err)
{
    const Config *c = &w->cfg;
    memset(out, 0, sizeof *out);
    Model *m = model_create(c, w->vocab, err);
    if (!m)
        return LM_EARG;
    ShardPlan plan;   /* the shards a training run of these settings would have */
    int rc = model_alloc(m, c->batch, c->bptt, err);
    if (!rc)
        rc = shardplan_init(&plan, c->batch, c->shards, err);
    Replicas *reps = rc ? NULL : replicas_create(m, &plan, 0, plan.S,
                                                 c->threads > 0 ? c->threads : sysinfo_cores(),
                                                 c->bptt, err);
    if (!rc && !reps)
        rc = LM_ENOMEM;
    int bf16 = !strcmp(c->precision, "bf16");
    if (!rc && bf16 && (rc = matmul_bf16_attach(m->params.data, m->params.total, err)))
        err_set(err, rc, "precision=bf16: this CPU has no AVX512-BF16, nothing to measure");
    Optimizer opt = {0};
    OptimKind ok;
    optim_kind_parse(c->optimizer, &ok);
    if (!rc)
        rc = optim_init(&opt, ok, m->params.total, c->beta1, c->beta2, c->eps, c->weight_decay,
                        0, err);
    opt.decay_all = config_decays_all(c);
    size_t n = (size_t)w->steps;
    StepFigures f = {calloc(n, sizeof(double)), calloc(n, sizeof(double)),
                     calloc(n, sizeof(double)), calloc(n, sizeof(double))};
    if (!rc && (!f.times || !f.peaks || !f.shares || !f.cpu))
        rc = err_set(err, LM_ENOMEM, "out of memory");
    /* the peak on the workload's kernel and threads (replicas_step runs min(replicas,
     * batch) of them) */
    int peak_threads = reps ? replicas_count(reps) : 1;
    peak_threads = peak_threads < c->batch ? peak_threads : c->batch;
    BenchPeak *peak = rc ? NULL : bench_peak_create(bench_precision(w), peak_threads,
                                                   w->peak_n > 0 ? w->peak_n : 1024, err);
    if (!rc && !peak)
        rc = LM_ENOMEM;
    forward_part_flops(c, w->vocab, out->part_flops);
    for (int p = 0; p < PROF_N; p++) {
        out->part_flops[p] *= 3;
        out->flops_per_token += out->part_flops[p];
    }
    TokSeq stream = {0};
    Batcher feed;
    if (!rc) rc = feed_init(w, &feed, &stream, err);
    BenchDiag *bd = !rc && c->diagnostics > 0 ? bench_diag_create(m, reps, w->steps, err) : NULL;
    if (!rc && c->diagnostics > 0 && !bd) rc = LM_EIO;
    if (!rc) rc = timed_steps(w, m, reps, &opt, &feed, peak, &f, out, bd, err);
    if (!rc) {
        fill_result(w, m, reps, &f, bf16, peak_threads, out);
        thread_work(reps, w->steps, out);
    }
    if (!rc && bd) {
        bench_diag_result(bd, out);
        out->diagnostics = c->diagnostics;
    }
    bench_diag_destroy(bd);
    free(f.times); free(f.peaks); free(f.shares); free(f.cpu);
    tokseq_free(&stream);
    bench_peak_destroy(peak);
    optim_free(&opt);
    replicas_destroy(reps);
    matmul_bf16_detach(m->params.data);
    model_destroy(m);
    return rc;
}

/* Measured sgemm GFLOP/s (square n x n products, the threads OpenBLAS uses now). */
static double bench_sgemm_gflops(int n)
{
    float *a = malloc((size_t)n * n * sizeof(float)), *b = malloc((size_t)n * n * sizeof(float)),
          *c = malloc((size_t)n * n * sizeof(float));
    if (!a || !b || !c) {
        free(a); free(b); free(c);
        return 0;
    }
    for (size_t i = 0; i < (size_t)n * n; i++) {
        a[i] = (float)(i % 7) * 0.1f;
        b[i] = (float)(i % 5) * 0.1f;
    }
    double best = 0;
    for (int rep = 0; rep < 6; rep++) {
        double t0 = sysinfo_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
        double dt = sysinfo_now() - t0, g = 2.0 * n * n * (double)n / dt / 1e9;
        if (rep && g > best)
            best = g;
    }
    free(a); free(b); free(c);
    return best;
}

const char *bench_bf16_kernel(void)
{
    GemmBf16Kernel k = gemm_bf16_select_kernel();
    return k == GEMM_BF16_NONE ? NULL : gemm_bf16_kernel_name(k);
}

/* Measured bf16 GFLOP/s of gemm_bf16 on `threads` threads (bench_peak's n x n products),
 * the best of five after a warm-up; 0 when this CPU has no bf16 kernel. */
static double bench_bf16_gflops(int n, int threads)
{
    char err[LM_ERR_LEN];
    BenchPeak *p = bench_peak_create("bf16", threads, n, err);
    double best = 0;
    for (int rep = 0; p && rep < 6; rep++) {
        double g = bench_peak_sample(p);
        if (rep && g > best)   /* the first warms up */
            best = g;
    }
    bench_peak_destroy(p);
    return best;
}

int bench_sample(const BenchWorkload *w, int tokens, double *cached_tps, double *full_tps,
                 char *err)
{
    Model *m = model_create(&w->cfg, w->vocab, err);
    if (!m)
        return LM_EARG;
    int rc = model_alloc(m, 1, w->cfg.bptt, err);
    Tokenizer *tok = NULL;
    char text[256];
    for (int i = 0; i < w->vocab && i < 255; i++)
        text[i] = (char)(32 + i % 95);
    text[w->vocab < 95 ? w->vocab : 95] = 0;
    if (!rc)
        rc = tokenizer_train(TOKENIZER_CHAR, text, strlen(text), 0, &tok, err);
    if (!rc && tokenizer_vocab_size(tok) != m->vocab) { /* bench vocab must match */
        model_destroy(m);
        m = model_create(&w->cfg, tokenizer_vocab_size(tok), err);
        rc = m ? model_alloc(m, 1, w->cfg.bptt, err) : LM_EARG;
    }
    SampleOptions o;
    sample_options_default(&o);
    SampleStats st;
    /* a prompt of a full window, so every generated token sees bptt tokens of context */
    int T = w->cfg.bptt;
    char *prompt = malloc((size_t)T + 1);
    if (!rc && !prompt)
        rc = err_set(err, LM_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < T; i++)
        prompt[i] = text[i % (int)strlen(text)];
    if (prompt)
        prompt[T] = 0;
    for (int cache = 1; !rc && cache >= 0; cache--) {
        o.use_cache = cache;
        o.n_tokens = cache ? tokens : tokens / 16 > 8 ? tokens / 16 : 8;
        rc = sample_generate(m, tok, prompt, &o, NULL, NULL, NULL, &st, err);
        if (!rc)
            *(cache ? cached_tps : full_tps) = st.tokens_per_s;
    }
    free(prompt);
    tokenizer_destroy(tok);
    model_destroy(m);
    return rc;
}
