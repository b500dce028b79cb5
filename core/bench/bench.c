/* bench.c — workloads and measurements (see bench.h). */
#include "bench.h"

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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const NAMES[] = {"small", "paper", "small-msa", "paper-msa",
    "scan-dispatcher-256", "scan-dispatcher-1024", "scan-dispatcher-4096", "scan-msa-256",
    "scan-msa-1024", "scan-msa-4096", NULL};

const char *const *bench_workload_names(void)
{
    return NAMES;
}

const char *bench_part_name(int part)
{
    static const char *n[PROF_N] = {"embedding", "mixer", "feed-forward", "norms+residual",
                                    "decoder+loss", "optimizer"};
    return part >= 0 && part < PROF_N ? n[part] : "?";
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
                       "paper-msa, scan-dispatcher-256|1024|4096, scan-msa-256|1024|4096", name);
    }
    return LM_OK;
}

/* Forward matrix FLOPs per token (2 per multiply-add) of each part; training = 3x. */
static void forward_part_flops(const Config *c, int V, double *part)
{
    double d = c->d, h = c->nhid, L = config_levels(c), T = c->bptt, mix;
    if (c->model_kind == MODEL_MSA)
        mix = 2 * 4 * d * d + 2 * T * d;      /* projections + causal QK^T and PV (T/2 avg) */
    else if (c->model_kind == MODEL_DISPATCHER)
        mix = 2 * 2 * d * (d / c->heads) + 2 * d * L + 2 * d * L;
    else
        mix = 2 * 2 * d * d + 2 * d * L * c->heads + 2 * d * L;
    for (int p = 0; p < PROF_N; p++)
        part[p] = 0;
    part[PROF_MIXER] = c->layers * mix;
    part[PROF_FFN] = c->layers * 2 * 2 * d * h;
    part[PROF_DECODER] = 2 * d * V;
}

const char *bench_precision(const BenchWorkload *w)
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
                         p == PROF_OPTIM ? "" : bwd ? " backward" : " forward");
            }
        }
    if (r->other_s > best.seconds) {
        best.seconds = r->other_s;
        snprintf(best.name, sizeof best.name, "replica sync + gradient sum");
    }
    return best;
}

double bench_part_gflops(const BenchResult *r, int part)
{
    double t = r->part_s[part] + r->part_bwd_s[part];
    if (part < 0 || part >= PROF_N || r->part_flops[part] <= 0 || t <= 0)
        return 0;
    return r->part_flops[part] * r->batch * r->bptt / t / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
    size_t N = (size_t)c->batch * c->bptt;
    int *x = malloc(N * sizeof(int)), *y = malloc(N * sizeof(int));
    double *times = calloc((size_t)w->steps, sizeof(double));
    if (!rc && (!x || !y || !times))
        rc = err_set(err, LM_ENOMEM, "out of memory");
    Rng r;
    rng_seed(&r, 1);
    for (size_t i = 0; !rc && i < N; i++) {
        x[i] = (int)rng_below(&r, (uint32_t)w->vocab);
        y[i] = (int)rng_below(&r, (uint32_t)w->vocab);
    }
    m->training = 1;
    for (int s = -1; !rc && s < w->steps; s++) {   /* step -1 warms up */
        if (s == 0) {
            memset(m->prof, 0, sizeof m->prof);
            memset(m->prof_bwd, 0, sizeof m->prof_bwd);
        }
        m->profiling = s >= 0;
        double t0 = sysinfo_now(), loss;
        long cnt;
        rc = replicas_step(reps, x, y, c->batch, c->bptt, &loss, &cnt);
        if (rc) { err_set(err, rc, "forward failed"); break; }
        double t1 = sysinfo_now();
        float norm = update_grad_norm(reps, &m->params);   /* as trainer.c's step */
        update_apply(reps, &opt, &m->params, norm, c->clip, c->lr);
        double t2 = sysinfo_now();
        if (s >= 0) {
            times[s] = t2 - t0;
            m->prof[PROF_OPTIM] += t2 - t1;
        }
    }
    if (!rc) {
        qsort(times, (size_t)w->steps, sizeof(double), cmp_double);
        snprintf(out->name, sizeof out->name, "%.34s%s", w->name, bf16 ? " bf16" : "");
        snprintf(out->model, sizeof out->model, "%s", c->model);
        out->vocab = w->vocab; out->d = c->d; out->layers = c->layers; out->bptt = c->bptt;
        out->batch = c->batch; out->heads = c->heads;
        out->params = model_param_count(m);
        out->step_s = times[w->steps / 2];
        out->tokens_per_s = (double)N / out->step_s;
        forward_part_flops(c, w->vocab, out->part_flops);
        double sum = 0, mean = 0;
        for (int p = 0; p < PROF_N; p++) {
            out->part_flops[p] *= 3;
            out->flops_per_token += out->part_flops[p];
            out->part_s[p] = m->prof[p] / w->steps;
            out->part_bwd_s[p] = m->prof_bwd[p] / w->steps;
            sum += out->part_s[p] + out->part_bwd_s[p];
        }
        for (int s = 0; s < w->steps; s++)
            mean += times[s] / w->steps;
        out->other_s = mean > sum ? mean - sum : 0;   /* parts are sums, so the mean */
        out->gflops = out->flops_per_token * out->tokens_per_s / 1e9;
        snprintf(out->precision, sizeof out->precision, "%s", bench_precision(w));
        out->peak_rss_kb = sysinfo_peak_rss_kb();
    }
    free(x); free(y); free(times);
    optim_free(&opt);
    replicas_destroy(reps);
    matmul_bf16_detach(m->params.data);
    model_destroy(m);
    return rc;
}

double bench_sgemm_gflops(int n)
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

typedef struct {
    GemmBf16Kernel k;
    int n, m0, m1;
    const float *a;
    const GemmBf16PackedB *pb;
    float *c;
    void *scratch;
} PeakSlice;

static void *peak_slice(void *arg)
{
    PeakSlice *j = arg;
    gemm_bf16(j->k, 0, 0, j->m1 - j->m0, j->n, j->n, 1.0f, j->a + (size_t)j->m0 * j->n, j->n,
              NULL, 0, j->pb, 0.0f, j->c + (size_t)j->m0 * j->n, j->n, j->scratch);
    return NULL;
}

double bench_bf16_gflops(int n, int threads)
{
    GemmBf16Kernel k = gemm_bf16_select_kernel();
    threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    if (k == GEMM_BF16_NONE)
        return 0;
    size_t nn = (size_t)n * n, sb = (gemm_bf16_scratch_bytes() + 63) & ~(size_t)63;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float)),
          *c = malloc(nn * sizeof(float));
    GemmBf16PackedB pb = {aligned_alloc(64, (gemm_bf16_packed_b_elems(n, n) * 2 + 63) & ~63UL),
                          0, 0};
    char *scratch = aligned_alloc(64, sb * (size_t)threads);
    double best = 0;
    if (a && b && c && pb.data && scratch) {
        for (size_t i = 0; i < nn; i++) {
            a[i] = (float)(i % 7) * 0.1f;
            b[i] = (float)(i % 5) * 0.1f;
        }
        gemm_bf16_pack_b(&pb, 0, n, n, b, n);
        PeakSlice js[16];
        pthread_t th[16];
        for (int rep = 0; rep < 6; rep++) {
            double t0 = sysinfo_now();
            for (int t = 0; t < threads; t++) {
                js[t] = (PeakSlice){k, n, (int)((long)n * t / threads),
                                    (int)((long)n * (t + 1) / threads), a, &pb, c,
                                    scratch + sb * (size_t)t};
                if (t && pthread_create(&th[t], NULL, peak_slice, &js[t]))
                    peak_slice(&js[t]), th[t] = 0;
            }
            peak_slice(&js[0]);
            for (int t = 1; t < threads; t++)
                if (th[t]) pthread_join(th[t], NULL);
            double dt = sysinfo_now() - t0, g = 2.0 * n * n * (double)n / dt / 1e9;
            if (rep && g > best)
                best = g;
        }
    }
    free(a); free(b); free(c); free(pb.data); free(scratch);
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
