/* cmd_bench_train.c — bench's model workloads: a training workload (built-in or an
 * experiment's) timed in a child process so its peak memory is its own, at each asked
 * precision, printed (or as JSON) with the time split by stage, FLOP/s against the peak,
 * the bottleneck and the ceiling; `bench all`; and sampling speed with and without the
 * cache. Not here: parsing the command (cmd_bench.c), the workloads themselves
 * (core/bench). */
#include "cmd_bench.h"

#include "bench.h"
#include "bench_peak.h"
#include "dataset.h"
#include "err.h"
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs one workload in a child; the result comes back through a pipe. */
static int run_child(BenchWorkload *w, BenchResult *res, char *err)
{
    int fd[2];
    if (pipe(fd))
        return err_set(err, LM_EIO, "pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        char e[LM_ERR_LEN] = "";
        BenchResult r;
        int rc = bench_train(w, &r, e);
        if (rc)
            snprintf(r.name, sizeof r.name, "!%.38s", e);
        if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r) {}
        _exit(rc ? 1 : 0);
    }
    close(fd[1]);
    ssize_t got = pid > 0 ? read(fd[0], res, sizeof *res) : -1;
    close(fd[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof *res || res->name[0] == '!')
        return err_set(err, LM_EIO, "workload %s failed%s%s", w->name, got > 0 ? ": " : "",
                       got > 0 ? res->name + 1 : "");
    return LM_OK;
}

/* The JSON event of one workload's result. */
static void emit_result_json(Session *s, const BenchResult *r, BenchStage worst)
{
    json_t *all = json_object(), *fwd = json_object(), *bwd = json_object();
    json_t *gf = json_object();
    for (int p = 0; p < PROF_N; p++) {
        json_object_set_new(all, bench_part_name(p), json_real(r->part_s[p] + r->part_bwd_s[p]));
        json_object_set_new(fwd, bench_part_name(p), json_real(r->part_s[p]));
        if (!bench_part_is_step_stage(p))
            json_object_set_new(bwd, bench_part_name(p), json_real(r->part_bwd_s[p]));
        if (r->part_flops[p] > 0)
            json_object_set_new(gf, bench_part_name(p), json_real(bench_part_gflops(r, p)));
    }
    double peak = r->peak_gflops;
    int bad = r->peak_share > 1.0;   /* a share over 100% is not a figure: null */
    char why[200];
    bench_peak_share_text(why, sizeof why, r->peak_share, r->precision);
    json_t *o = json_pack("{s:s s:s s:s s:i s:i s:i s:i s:i s:I s:f s:f s:f s:s s:f "
                                   "s:i s:f s:o s:s? s:I s:o s:o s:o s:f s:f s:o s:s s:f s:f s:f}", "event",
                                   "bench",
                                   "workload", r->name, "model", r->model, "vocab", r->vocab,
                                   "d", r->d, "layers", r->layers, "bptt", r->bptt, "batch",
                                   r->batch, "params", (json_int_t)r->params, "step_s",
                                   r->step_s, "tokens_per_s", r->tokens_per_s, "gflops",
                                   r->gflops, "precision", r->precision, "peak_gflops", peak,
                                   "peak_threads", r->peak_threads,
                                   "sgemm_gflops", bench_peak_for("fp32"), "peak_fraction",
                                   bad || r->peak_share < 0 ? json_null()
                                                            : json_real(r->peak_share),
                                   "peak_error", bad ? why : NULL, "peak_rss_kb",
                                   (json_int_t)r->peak_rss_kb, "parts", all, "parts_forward", fwd,
                                   "parts_backward",
                                   bwd, "other_s", r->other_s, "feed_s", r->feed_s, "part_gflops", gf, "bottleneck",
                                   worst.name, "bottleneck_fraction",
                                   r->step_s > 0 ? worst.seconds / r->step_s : 0,
                                   "cpu_step_s", r->cpu_step_s, "tokens_per_cpu_s",
                                   r->tokens_per_cpu_s);
    double rest;
    double ceiling = bench_ceiling(r, &rest);
    if (o) {   /* the share every product at the peak would give, and the rest's seconds */
        json_object_set_new(o, "ceiling_fraction", ceiling > 0 ? json_real(ceiling) : json_null());
        json_object_set_new(o, "ceiling_rest_s", json_real(rest));
    }
    json_t *work = json_array();   /* each thread's forward and backward, primary first */
    for (int t = 0; t < r->work_threads; t++)
        json_array_append_new(work, json_real(r->work_s[t]));
    if (o)
        json_object_set_new(o, "thread_work_s", work);
    else
        json_decref(work);
    if (o && r->diagnostics > 0) {   /* bench WORKLOAD diagnostics=N */
        json_object_set_new(o, "diagnostics", json_integer(r->diagnostics));
        json_object_set_new(o, "diag_s", json_real(r->diag_s));
        json_object_set_new(o, "diag_cpu_s", json_real(r->diag_cpu_s));
        json_object_set_new(o, "diag_record_s", json_real(r->diag_record_s));
        json_object_set_new(o, "diag_series", json_integer(r->diag_series));
        json_object_set_new(o, "diag_hists", json_integer(r->diag_hists));
    }
    session_emit_json(s, o);
}

/* "name 1.2 ms, ..." of the parts' forward (bwd = 0) or backward times. */
static void format_parts(char *line, size_t n, const BenchResult *r, int bwd)
{
    int o = snprintf(line, n, "%22s %s:", "", bwd ? "backward" : "forward ");
    for (int p = 0; p < PROF_N && o < (int)n; p++)
        if (!bench_part_is_step_stage(p))
            o += snprintf(line + o, n - (size_t)o, " %s %.1f ms,", bench_part_name(p),
                          (bwd ? r->part_bwd_s[p] : r->part_s[p]) * 1e3);
    if (o > 0 && o < (int)n)
        line[o - 1] = 0;
}

/* "ceiling: ..." (bench_ceiling): the share of the peak the step would reach with every
 * product at the peak, and the stages outside the products, largest first. */
static void format_ceiling(char *line, size_t n, const BenchResult *r)
{
    double rest, ceiling = bench_ceiling(r, &rest);
    int o = snprintf(line, n, "%22s ceiling: ", "");
    if (ceiling <= 0) {
        snprintf(line + o, n - (size_t)o, "none (no peak or no FLOPs counted)");
        return;
    }
    o += snprintf(line + o, n - (size_t)o, "%.0f%% of the peak with every product at it%s; "
                  "the other stages take %.1f ms of the step:", 100 * ceiling,
                  ceiling < r->peak_share ? " (below the share reached: a product ran over "
                                            "the sampled peak)" : "", rest * 1e3);
    BenchStage st[PROF_N + 2];
    int k = 0;
    for (int p = 0; p < PROF_N; p++)
        if (!bench_part_is_product(r, p)) {
            snprintf(st[k].name, sizeof st[k].name, "%s", bench_part_name(p));
            st[k++].seconds = r->part_s[p] + r->part_bwd_s[p];
        }
    snprintf(st[k].name, sizeof st[k].name, "data feed");
    st[k++].seconds = r->feed_s;
    snprintf(st[k].name, sizeof st[k].name, "untimed");
    st[k++].seconds = r->other_s;
    for (int i = 0; i < k; i++)   /* largest first (a handful: insertion) */
        for (int j = i; j > 0 && st[j].seconds > st[j - 1].seconds; j--) {
            BenchStage t = st[j];
            st[j] = st[j - 1];
            st[j - 1] = t;
        }
    for (int i = 0; i < k && o < (int)n && st[i].seconds >= 0.05e-3; i++)
        o += snprintf(line + o, n - (size_t)o, "%s %s %.1f ms", i ? "," : "", st[i].name,
                      st[i].seconds * 1e3);
}

static void print_result(Session *s, const BenchResult *r)
{
    BenchStage worst = bench_bottleneck(r);
    if (s->json) {
        emit_result_json(s, r, worst);
        return;
    }
    double peak = r->peak_gflops;
    char share[200];
    bench_peak_share_text(share, sizeof share, r->peak_share, r->precision);
    session_printf(s, "%-22s %-10s V=%-6d d=%-4d L=%d T=%-5d B=%-3d %9.0f tok/s  %7.1f ms/step  "
                   "%6.1f GFLOP/s (%s)  peak %5.0f MiB", r->name, r->model,
                   r->vocab, r->d, r->layers, r->bptt, r->batch, r->tokens_per_s, r->step_s * 1e3,
                   r->gflops, share, r->peak_rss_kb / 1024.0);
    char line[768];
    session_printf(s, "%22s CPU time %.1f ms a step (all threads): %.0f tokens per CPU-second",
                   "", r->cpu_step_s * 1e3, r->tokens_per_cpu_s);
    session_printf(s, "%22s %s peak between the steps: %.1f GFLOP/s (median; %s kernel, %d "
                   "thread%s as the workload)", "", r->precision, peak,
                   strcmp(r->precision, "bf16") ? "sgemm"
                                                : bench_bf16_kernel() ? bench_bf16_kernel() : "no bf16",
                   r->peak_threads, r->peak_threads == 1 ? "" : "s");
    for (int bwd = 0; bwd < 2; bwd++) {
        format_parts(line, sizeof line, r, bwd);
        session_printf(s, "%s", line);
    }
    int o = snprintf(line, sizeof line, "%22s optimizer %.1f ms, gradient zero+sum %.1f ms, "
                     "thread waits %.1f ms, data feed %.2f ms, untimed %.1f ms;", "",
                     r->part_s[PROF_OPTIM] * 1e3, r->part_s[PROF_GRAD] * 1e3,
                     r->part_s[PROF_WAIT] * 1e3, r->feed_s * 1e3, r->other_s * 1e3);
    for (int p = 0; p < PROF_N && o < (int)sizeof line; p++)
        if (r->part_flops[p] > 0) {
            double f = bench_peak_share(bench_part_gflops(r, p), peak);
            if (p == PROF_SCAN)   /* elementwise: no product's peak to share */
                o += snprintf(line + o, sizeof line - (size_t)o, " %s %.1f GFLOP/s (elementwise)",
                              bench_part_name(p), bench_part_gflops(r, p));
            else if (f >= 0 && f <= 1.0)
                o += snprintf(line + o, sizeof line - (size_t)o, " %s %.1f GFLOP/s (%.0f%%)",
                              bench_part_name(p), bench_part_gflops(r, p), 100 * f);
            else   /* over 100%: a measurement error, not a share */
                o += snprintf(line + o, sizeof line - (size_t)o, " %s %.1f GFLOP/s (%s)",
                              bench_part_name(p), bench_part_gflops(r, p),
                              f < 0 ? "no peak" : "over the peak: a measurement error");
        }
    session_printf(s, "%s", line);
    if (r->work_threads > 1) {   /* what the waits are: the other threads' longer work */
        o = snprintf(line, sizeof line, "%22s each thread's shards, forward and backward: "
                     "%.1f ms (primary)", "", r->work_s[0] * 1e3);
        double most = r->work_s[0];
        for (int t = 1; t < r->work_threads && o < (int)sizeof line; t++) {
            o += snprintf(line + o, sizeof line - (size_t)o, ", %.1f ms", r->work_s[t] * 1e3);
            most = r->work_s[t] > most ? r->work_s[t] : most;
        }
        if (o < (int)sizeof line)
            snprintf(line + o, sizeof line - (size_t)o, "; the slowest %.1f ms over the "
                     "primary, which waits for it", (most - r->work_s[0]) * 1e3);
        session_printf(s, "%s", line);
    }
    session_printf(s, "%22s bottleneck: %s, %.1f ms (%.0f%% of the step)", "", worst.name,
                   worst.seconds * 1e3, r->step_s > 0 ? 100 * worst.seconds / r->step_s : 0);
    format_ceiling(line, sizeof line, r);
    session_printf(s, "%s", line);
    if (r->diagnostics > 0 && r->step_s > 0) {
        double n = r->diagnostics, step = r->step_s;
        session_printf(s, "%22s diagnostics: %.2f ms a collection (%d series, %d histograms;"
                       " CPU %.2f ms), %.2f ms to record them; every %d steps: %.3f%% of a step"
                       " (training thread) + %.3f%% (recorder thread), against the %.1f ms step"
                       " timed without them between the same steps; in CPU time %.3f%% of a"
                       " step's %.1f ms", "", r->diag_s * 1e3, r->diag_series, r->diag_hists,
                       r->diag_cpu_s * 1e3, r->diag_record_s * 1e3, r->diagnostics,
                       100 * r->diag_s / (n * step), 100 * r->diag_record_s / (n * step),
                       step * 1e3, r->cpu_step_s > 0 ? 100 * r->diag_cpu_s /
                       (n * r->cpu_step_s) : 0, r->cpu_step_s * 1e3);
    }
}

/* The bf16/fp32 line under a side-by-side run: the tokens/s ratio against the ratio of the
 * two peaks sampled between the steps (what the kernels allow), and the most the bf16
 * step could give with every product at its peak and its other stages as timed
 * (bench_ceiling): a ratio target above that needs the other stages faster, not the
 * products. */
static void print_ratio(Session *s, const BenchResult *f, const BenchResult *b)
{
    double ratio = b->tokens_per_s / f->tokens_per_s;
    double peaks = f->peak_gflops > 0 ? b->peak_gflops / f->peak_gflops : 0;
    double best = b->flops_per_token > 0
                      ? bench_ceiling(b, NULL) * b->peak_gflops * 1e9 / b->flops_per_token /
                            f->tokens_per_s
                      : 0;
    if (!(peaks > 0)) {
        session_printf(s, "%22s bf16/fp32 tokens/s: %.2fx; tokens per CPU-second: %.2fx", "",
                       ratio, b->tokens_per_cpu_s / f->tokens_per_cpu_s);
        return;
    }
    session_printf(s, "%22s bf16/fp32 tokens/s: %.2fx, %.2f of the peaks' ratio (%.1f / %.1f "
                   "GFLOP/s = %.2fx); tokens per CPU-second: %.2fx", "", ratio, ratio / peaks,
                   b->peak_gflops, f->peak_gflops, peaks,
                   b->tokens_per_cpu_s / f->tokens_per_cpu_s);
    if (best > 0)
        session_printf(s, "%22s with every bf16 product at its peak and the other stages as "
                       "timed: at most %.2fx, %.2f of the peaks' ratio", "", best, best / peaks);
}

/* One workload at each asked precision (fp32 then bf16: side by side), each in a child
 * and printed against its precision's peak; with both, the bf16/fp32 tokens/s ratio. */
static int run_precisions(Session *s, BenchWorkload *w, int prec)
{
    char err[LM_ERR_LEN];
    BenchResult r[2];
    int rc = LM_OK, ok[2] = {0, 0};
    for (int p = 0; p < 2; p++) {
        if (!(prec & (1 << p)))
            continue;
        snprintf(w->cfg.precision, sizeof w->cfg.precision, "%s", p ? "bf16" : "fp32");
        if (p && !bench_bf16_kernel())
            rc = session_error(s, LM_EARG, "%s precision=bf16: this CPU lacks avx512_bf16 "
                               "(`show machine`), so there is no bf16 figure to measure",
                               w->name);
        else if (run_child(w, &r[p], err))
            rc = session_error(s, LM_EIO, "%s", err);
        else if ((ok[p] = 1))
            print_result(s, &r[p]);
    }
    if (ok[0] && ok[1] && r[0].tokens_per_s > 0 && r[0].tokens_per_cpu_s > 0)
        print_ratio(s, &r[0], &r[1]);
    return rc;
}

int cmd_bench_sampling(Session *s, int tokens)
{
    BenchWorkload w;
    char err[LM_ERR_LEN];
    bench_workload("small", &w, err);
    w.cfg.bptt = 512;
    double cached = 0, full = 0;
    if (bench_sample(&w, tokens, &cached, &full, err))
        return session_error(s, LM_EIO, "sampling bench: %s", err);
    Output *o = output_create("bench-sample");
    output_int(o, "bptt", 512);
    output_real(o, "cached_tokens_per_s", cached);
    output_real(o, "full_tokens_per_s", full);
    output_real(o, "speedup", full > 0 ? cached / full : 0);
    output_line(o, "sampling (dispatcher d=128 L=4, bptt={bptt}, full window): "
                "{cached_tokens_per_s:%.0f} tok/s with the cache, {full_tokens_per_s:%.1f} tok/s "
                "recomputing the window: {speedup:%.0f}x");
    return output_emit(s, o);
}

/* An experiment file as a workload: its model, shape, optimizer and precision as a run of
 * it would have them on this CPU (its bf16: or fp32: lines applied), the vocabulary from
 * its data. LM_OK, or LM_EIO/LM_EARG with err saying why. */
static int experiment_workload(const char *name, BenchWorkload *w, char *err)
{
    char path[1024];
    if (session_find_experiment(name, path, sizeof path))
        return err_set(err, LM_EARG, "bench: '%s' is neither a workload nor an experiment "
                       "(experiments/%s.conf); `bench --help` lists the workloads, `use` the "
                       "experiments", name, name);
    memset(w, 0, sizeof *w);
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".conf"))
        n -= 5;
    snprintf(w->name, sizeof w->name, "%.*s", (int)(n < sizeof w->name ? n : sizeof w->name - 1),
             base);
    config_defaults(&w->cfg);
    if (config_load_file(&w->cfg, path, err) || config_validate(&w->cfg, err))
        return LM_EARG;
    Dataset ds;
    if (dataset_load_config(&ds, &w->cfg, NULL, err))
        return LM_EIO;
    w->vocab = tokenizer_vocab_size(ds.tok);
    dataset_free(&ds);
    w->steps = 20;
    return LM_OK;
}

/* One training workload, built-in or an experiment's, at precisions prec (0: fp32 for a
 * built-in one, an experiment's own precision; its threads and shards too unless the
 * session sets threads). */
int cmd_bench_training(Session *s, const char *name, int steps, int prec, int diagnostics)
{
    char err[LM_ERR_LEN];
    BenchWorkload w;
    int own = 0;   /* an experiment's */
    if (bench_workload(name, &w, err) && !(own = 1, experiment_workload(name, &w, err) == 0))
        return session_error(s, LM_EARG, "%s", err);
    if (steps > 0) w.steps = steps;
    w.cfg.diagnostics = diagnostics;
    if (!own || s->cfg.threads > 0)
        w.cfg.threads = s->cfg.threads;
    if (!own)
        w.cfg.shards = s->cfg.shards;   /* the session's shard plan, as a run would cut it */
    if (!prec)
        prec = own && !strcmp(w.cfg.precision, "bf16") ? 2 : 1;
    return run_precisions(s, &w, prec);
}

/* `bench all`: every built-in workload at precisions prec, then sampling. */
int cmd_bench_all(Session *s, int steps, int threads, int prec, int tokens)
{
    char err[LM_ERR_LEN];
    const char *const *names = bench_workload_names();
    int rc = LM_OK;
    for (int k = 0; names[k]; k++) {
        BenchWorkload w;
        bench_workload(names[k], &w, err);
        if (steps > 0) w.steps = steps;
        w.cfg.threads = threads;
        w.cfg.shards = s->cfg.shards;   /* the session's shard plan (issue 35) */
        rc |= run_precisions(s, &w, prec);
    }
    return rc | cmd_bench_sampling(s, tokens);
}
