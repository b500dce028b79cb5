/* cmd_bench.c — `bench [WORKLOAD ...] [steps=N] [tokens=N]`: the machine's sgemm peak,
 * training throughput of named workloads with the time split by stage (each part's
 * forward and backward, the optimizer, the gradient's zeroing and sum, the waits for the
 * other threads), achieved model FLOP/s against the peak of the precision it ran in (in
 * all and per part), the bottleneck, peak memory, and sampling speed with and without the
 * cache. Each workload runs in a child process so its peak memory is its own. Names are
 * checked before anything runs; --json (as `lmlab bench ... --json`) and --help are taken
 * here too. */
#include "session.h"
#include "cmd_bench.h"

#include "bench.h"
#include "bench_board.h"
#include "bench_peak.h"
#include "blas_select.h"
#include "dataset.h"
#include "err.h"
#include "kernels.h"
#include "output.h"
#include "run_launch.h"
#include "sysinfo.h"

#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/* precision=fp32|bf16|both as a bit set (1 fp32, 2 bf16); -1 for anything else. */
static int bench_precisions(const char *v)
{
    return !strcmp(v, "fp32") ? 1 : !strcmp(v, "bf16") ? 2 : !strcmp(v, "both") ? 3 : -1;
}

/* The bf16 peak beside the sgemm one (when bf16 is asked for or the CPU has it). */
static void bench_bf16_peak_line(Output *mo, int prec)
{
    const char *k = bench_bf16_kernel();
    if (!k && !(prec & 2))
        return;
    double g = bench_peak_for("bf16");
    output_real(mo, "bf16_gflops", g);
    output_str(mo, "bf16_kernel", k ? k : "none");
    output_line(mo, !k ? "bf16: no kernel (this CPU lacks avx512_bf16)"
                                        : "bf16 peak {bf16_gflops:%.1f} GFLOP/s (1536^3, "
                                          "{bf16_kernel} kernel)");
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
        session_printf(s, "%22s bf16/fp32 tokens/s: %.2fx; tokens per CPU-second: %.2fx", "",
                       r[1].tokens_per_s / r[0].tokens_per_s,
                       r[1].tokens_per_cpu_s / r[0].tokens_per_cpu_s);
    return rc;
}

static int bench_sampling(Session *s, int tokens)
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

/* Trains the small workload on Tiny Shakespeare for `steps` steps, its events (a step
 * metric every log_every steps) either recorded (dir != NULL: a run launched as `train`
 * launches one, in dir/bench.db with checkpoints under dir/runs) or just drained; returns
 * the training tokens/s (time in steps only), -1 with err on failure. Runs in the calling
 * process. */
static double store_run(const char *dir, long steps, char *err)
{
    BenchWorkload w;
    bench_workload("small", &w, err);
    Config c = w.cfg;
    c.steps = steps; c.eval_every = 0; c.sample_every = 0; /* default log_every */
    c.checkpoint_every = 0; c.eval_batches = 1;
    snprintf(c.optimizer, sizeof c.optimizer, "adamw");
    snprintf(c.name, sizeof c.name, "bench-store");
    StepMetric last = {0};
    if (dir) {
        char db[1100];
        RunStore *st = NULL;
        RunHandle h;
        snprintf(db, sizeof db, "%.1000s/bench.db", dir);
        snprintf(c.runs_dir, sizeof c.runs_dir, "%.200s/runs", dir);
        RunLaunchOptions lo = {.db_path = db};
        if (runstore_open(db, &st, err))
            return -1;
        lo.store = st;
        int rc = run_launch(&c, &lo, &h, err);
        runstore_close(st);
        if (rc)
            return -1;
        while (!run_launch_done(&h))
            usleep(50000);
        Snapshot snap = {0};
        recorder_snapshot(h.rec, &snap);
        last = snap.last;
        snapshot_free(&snap);
        run_launch_close(&h, 0);
    } else {
        TrainerOptions o = {0};
        Trainer *t = trainer_create(&c, &o, err);
        if (!t || trainer_start(t, err)) {
            trainer_destroy(t);
            return -1;
        }
        TrainEvent ev;
        for (int end = 0; !end;)
            if (trainer_poll(t, &ev, 0.2)) {
                if (ev.kind == TEV_STEP) last = ev.step;
                end = ev.kind == TEV_STATUS && trainer_is_done(ev.status);
                trainer_event_free(&ev);
            }
        trainer_destroy(t);
    }
    return last.elapsed > 0 ? last.tokens / last.elapsed : -1;
}

/* Removes the scratch folder of `bench store` (its database and the runs' checkpoints). */
static void remove_tree(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%.1100s'", dir);
    if (system(cmd)) {}
}

/* `bench store`: the recording overhead, alternating runs with and without the store. */
static int bench_store(Session *s, long steps)
{
    char err[LM_ERR_LEN], dir[] = "/tmp/lmlab_bench_store_XXXXXX";
    if (!mkdtemp(dir))
        return session_error(s, LM_EIO, "cannot create a temporary folder in /tmp");
    double with[3], without[3];
    for (int i = 0; i < 3; i++) {
        without[i] = store_run(NULL, steps, err);
        with[i] = without[i] < 0 ? -1 : store_run(dir, steps, err);
        if (with[i] < 0 || without[i] < 0) {
            remove_tree(dir);
            return session_error(s, LM_EIO, "store bench: %s", err);
        }
    }
    remove_tree(dir);
    double a = (with[0] + with[1] + with[2]) / 3, b = (without[0] + without[1] + without[2]) / 3;
    Output *o = output_create("bench-store");
    output_int(o, "steps", steps);
    output_real(o, "with_store_tokens_per_s", a);
    output_real(o, "without_store_tokens_per_s", b);
    output_real(o, "overhead", b > 0 ? 1 - a / b : 0);
    output_real(o, "overhead_pct", b > 0 ? 100 * (1 - a / b) : 0);
    output_line(o, "run store overhead (small workload, default logging, 3 runs each, "
                "alternating): {with_store_tokens_per_s:%.0f} tok/s with, "
                "{without_store_tokens_per_s:%.0f} without: {overhead_pct:%+.2f}%");
    return output_emit(s, o);
}

static BenchFrameFn g_frame;

void bench_set_frame_hook(BenchFrameFn fn) { g_frame = fn; }

#define BOARD_FRAME_MS 50.0    /* the limits: a board frame, a 10,000-run list */
#define BOARD_LIST_MS 1000.0

/* One measured figure of `bench board` against its limit. */
static void board_figure(Session *s, const char *what, double ms, int rows, double limit)
{
    Output *o = output_create("bench-board");
    output_str(o, "what", what);
    output_real(o, "ms", ms);
    output_int(o, "rows", rows);
    output_real(o, "limit_ms", limit);
    output_bool(o, "within", ms < limit);
    output_text_str(o, "verdict", ms < limit ? "under" : "OVER");
    if (rows >= 0)
        output_line(o, "  {what:%-52s} {ms:%8.2f} ms  ({rows} rows; {verdict} {limit_ms:%.0f} ms)");
    else
        output_line(o, "  {what:%-52s} {ms:%8.2f} ms  ({verdict} {limit_ms:%.0f} ms)");
    output_emit(s, o);
}

/* The frames and reads of one synthetic store: the jobs view and the history view (through
 * the dashboard's hook), the jobs board's reads, lists with sorts and filters. */
static int board_measure(Session *s, const char *db, int big)
{
    Session b;
    session_init(&b, db);
    b.writer = s->writer;
    b.writer_ud = s->writer_ud;
    RunStore *st = session_store(&b);
    char err[LM_ERR_LEN];
    double ms;
    int n = 0, rc = st ? LM_OK : LM_EDB;
    static const char *const LISTS[][3] = {
        {"list, newest first", "", "recent"}, {"list, sorted by best val", "", "best"},
        {"list, sorted by name", "", "name"},
        {"list, filter status=finished lr<0.001", "status=finished lr<0.001", "best"},
        {"list, filter model=msa d>=128 name~run-1", "model=msa d>=128 name~run-1", "recent"}};
    if (!rc && !(rc = bench_board_time_jobs(st, 15, &ms, &n, err)))
        board_figure(s, "jobs board read (runstore_jobs)", ms, n, BOARD_FRAME_MS);
    for (int k = 0; !rc && k < 5; k++)
        if (!(rc = bench_board_time_list(st, LISTS[k][1], LISTS[k][2], big ? 5 : 15, &ms, &n, err)))
            board_figure(s, LISTS[k][0], ms, n, big ? BOARD_LIST_MS : BOARD_FRAME_MS);
    const char *const views[2] = {"jobs", "history"};
    for (int k = 0; !rc && g_frame && k < 2; k++) {
        char what[64];
        snprintf(what, sizeof what, "dashboard frame, %s view (200x50, reload+draw)", views[k]);
        if (!(rc = g_frame(&b, views[k], big ? 5 : 15, 200, 50, &ms, err)))
            board_figure(s, what, ms, -1, k == 1 && big ? BOARD_LIST_MS : BOARD_FRAME_MS);
    }
    if (rc) session_error(s, rc, "board bench: %s", err);
    b.writer = NULL;
    session_free(&b);
    return rc;
}

/* `bench board`: a 200-run store (20 running) and a 10,000-run store, built in /tmp. */
static int bench_board(Session *s)
{
    char dir[] = "/tmp/lmlab_bench_board_XXXXXX", db[128], err[LM_ERR_LEN];
    if (!mkdtemp(dir))
        return session_error(s, LM_EIO, "cannot create a temporary folder in /tmp");
    static const int SIZES[2][3] = {{200, 20, 300}, {10000, 20, 20}};   /* runs, running, steps */
    int rc = LM_OK;
    for (int k = 0; k < 2 && !rc; k++) {
        double made = 0;
        snprintf(db, sizeof db, "%s/board-%d.db", dir, SIZES[k][0]);
        rc = bench_board_make(db, SIZES[k][0], SIZES[k][1], SIZES[k][2], &made, err);
        if (rc) {
            session_error(s, rc, "board bench: %s", err);
            break;
        }
        Output *o = output_create("bench-board-store");
        output_int(o, "runs", SIZES[k][0]);
        output_int(o, "running", SIZES[k][1]);
        output_int(o, "steps", SIZES[k][2]);
        output_real(o, "create_s", made);
        output_line(o, "store of {runs} runs ({running} running, {steps} logged steps each; "
                    "built in {create_s:%.1f} s), median of repeated calls:");
        output_emit(s, o);
        rc = board_measure(s, db, k == 1);
    }
    remove_tree(dir);
    return rc;
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

/* A workload `bench` knows: a built-in training workload, an experiment, sample, store,
 * board or all. */
static int bench_name_ok(const char *name)
{
    BenchWorkload w;
    char err[LM_ERR_LEN], path[1024];
    return !strcmp(name, "sample") || !strcmp(name, "store") || !strcmp(name, "track") || !strcmp(name, "all") ||
           !strcmp(name, "data") ||
           !strcmp(name, "tokenizer") ||
           !strcmp(name, "board") ||
           bench_workload(name, &w, err) == LM_OK ||
           session_find_experiment(name, path, sizeof path) == 0;
}

/* `bench --help`: the usage and the workloads, from the command table and bench.c. */
static int bench_help(Session *s)
{
    int n = s->n_commands;
    const Command *table = s->commands;
    for (int i = 0; i < n; i++)
        if (!strcmp(table[i].name, "bench"))
            session_printf(s, "bench [WORKLOAD ...] [steps=N] [tokens=N] [precision=fp32|bf16|"
                           "both] [--json]: %s\n%s",
                           table[i].summary, table[i].help ? table[i].help : "");
    char line[512];
    int o = snprintf(line, sizeof line, "workloads:");
    for (const char *const *w = bench_workload_names(); *w && o < (int)sizeof line; w++)
        o += snprintf(line + o, sizeof line - (size_t)o, " %s", *w);
    if (o < (int)sizeof line)
        snprintf(line + o, sizeof line - (size_t)o, " sample store board tokenizer all, or an "
                 "experiment's name (default: small small-msa sample)");
    session_printf(s, "%s", line);
    return LM_OK;
}

/* The machine, its kernels and the peaks, before any workload. */
static void print_machine(Session *s, int prec)
{
    char desc[256], kernels[320];
    sysinfo_describe(desc, sizeof desc);
    double peak = bench_peak_for("fp32");
    blas_select_describe(kernels, sizeof kernels);
    Output *mo = output_create("machine");
    output_str(mo, "machine", desc);
    output_str(mo, "kernels", kernels);
    output_str(mo, "blas_core", openblas_get_corename());
    output_real(mo, "sgemm_gflops", peak);
    output_line(mo, "machine: {machine}; sgemm peak {sgemm_gflops:%.1f} GFLOP/s (1536^3)");
    output_line(mo, "kernels: {kernels}");
    char code[KERNEL_N_FAMILIES * 96] = "", one[256];   /* what each family runs here */
    for (int f = 0, o = 0; f < KERNEL_N_FAMILIES && o < (int)sizeof code; f++) {
        kernels_chosen((KernelFamily)f, one, sizeof one);
        int n = (int)strcspn(one, "(");   /* the name without its explanation */
        while (n > 0 && one[n - 1] == ' ')
            n--;
        o += snprintf(code + o, sizeof code - (size_t)o, "%s%s %.*s", f ? ", " : "",
                      kernels_family_name((KernelFamily)f), n, one);
    }
    output_str(mo, "code", code);
    output_line(mo, "code: {code}");
    bench_bf16_peak_line(mo, prec);
    output_emit(s, mo);
}

/* One training workload, built-in or an experiment's, at precisions prec (0: fp32 for a
 * built-in one, an experiment's own precision; its threads and shards too unless the
 * session sets threads). */
static int bench_training(Session *s, const char *name, int steps, int prec, int diagnostics)
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
static int bench_all(Session *s, int steps, int threads, int prec, int tokens)
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
    return rc | bench_sampling(s, tokens);
}

/* bench's numeric settings (steps=, tokens=, diagnostics=, mb=, gb=). */
typedef struct {
    int steps, tokens, diagnostics, data_mb;
    double data_gb;
} BenchArgs;

/* Takes w when it is one of BenchArgs' keys: 1 taken, 0 not one of them, -1 refused (said):
 * each a whole number (gb= a decimal) within its range. */
static int bench_numeric_key(Session *s, const LexWord *w, BenchArgs *a)
{
    const struct {
        const char *key, *what;
        double lo, hi;
        int *n;       /* a whole number's place, or */
        double *x;    /* a decimal's */
    } keys[] = {
        {"steps", "the timed steps of each training workload", 1, 1000000, &a->steps, NULL},
        {"tokens", "the tokens the sampling bench generates", 1, 1000000, &a->tokens, NULL},
        {"diagnostics", "the steps between two diagnostics collections", 1, 100000000,
         &a->diagnostics, NULL},
        {"mb", "the generated corpus's size in MB", 1, 100000, &a->data_mb, NULL},
        {"gb", "the largest token cache's size in GB", 1.1, 1000, NULL, &a->data_gb},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (strcmp(w->key, keys[k].key))
            continue;
        char *end;
        errno = 0;
        double v = keys[k].x ? strtod(w->value, &end) : (double)strtol(w->value, &end, 10);
        if (*end || end == w->value || errno || !(v >= keys[k].lo && v <= keys[k].hi))
            return session_error(s, LM_EARG, "bench: %s=%s: give %s, %s from %.10g to %.10g",
                                 keys[k].key, w->value, keys[k].what,
                                 keys[k].x ? "a number" : "a whole number", keys[k].lo,
                                 keys[k].hi), -1;
        if (keys[k].x)
            *keys[k].x = v;
        else
            *keys[k].n = (int)v;
        return 1;
    }
    return 0;
}

static int bench_command(Session *s, int argc, const LexWord *argv)
{
    char err[LM_ERR_LEN];
    BenchArgs a = {.tokens = 512, .data_mb = 50, .data_gb = 4};
    int n_named = 0, prec = 1, prec_given = 0, taken;
    const char *tok_list = NULL, *tok_file = NULL;   /* bench tokenizer's */
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && (taken = bench_numeric_key(s, &argv[i], &a)) != 0) {
            if (taken < 0) return LM_EARG;
        }
        else if (argv[i].key && !strcmp(argv[i].key, "tokenizer")) {   /* checked before any run */
            if (cmd_bench_tokenizer_list(s, tok_list = argv[i].value, NULL) < 0) return LM_EARG;
        }
        else if (argv[i].key && !strcmp(argv[i].key, "file")) tok_file = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "precision")) {
            prec_given = 1;
            if ((prec = bench_precisions(argv[i].value)) < 0)
                return session_error(s, LM_EARG, "bench: precision must be fp32, bf16 or "
                                     "both (fp32 and bf16 side by side), not '%s'",
                                     argv[i].value);
        }
        else if (argv[i].key) return session_error(s, LM_EARG, "bench: unknown key '%s'",
                                                   argv[i].key);
        else if (!strcmp(argv[i].text, "--json")) s->json = 1;
        else if (!strcmp(argv[i].text, "--help") || !strcmp(argv[i].text, "-h"))
            return bench_help(s);
        else if (bench_name_ok(argv[i].text)) n_named++;
        else return session_error(s, LM_EARG, "bench: unknown workload '%s': neither a built-in "
                                  "one (`bench --help` lists them) nor an experiment (`use` "
                                  "lists them)", argv[i].text);
    }
    sysinfo_set_threads(s->cfg.threads > 0 ? s->cfg.threads : sysinfo_cores());
    int threads = s->cfg.threads;
    print_machine(s, prec);
    const char *defaults[] = {"small", "small-msa", "sample", NULL};
    int rc = LM_OK;
    for (int i = 0; n_named ? i < argc : defaults[i] != NULL; i++) {
        const char *name = n_named ? argv[i].text : defaults[i];
        if (n_named && (i == 0 || argv[i].key || argv[i].text[0] == '-'))
            continue;
        if (!strcmp(name, "sample")) { rc |= bench_sampling(s, a.tokens); continue; }
        if (!strcmp(name, "store")) { rc |= bench_store(s, a.steps > 0 ? a.steps : 300); continue; }
        if (!strcmp(name, "track")) {   /* cmd_bench_track.c, against a small step here */
            BenchWorkload w;
            bench_workload("small", &w, err);
            double tps = store_run(NULL, a.steps > 0 ? a.steps : 200, err);
            rc |= tps < 0 ? session_error(s, LM_EIO, "track bench: %s", err)
                          : cmd_bench_track(s, tps, (long)w.cfg.batch * w.cfg.bptt);
            continue;
        }
        if (!strcmp(name, "board")) { rc |= bench_board(s); continue; }
        if (!strcmp(name, "data")) {   /* cmd_bench_data.c: prepare MB/s per tokenizer; */
            rc |= cmd_bench_data_prepare(s, a.data_mb, threads);   /* cmd_bench_data_use.c: */
            rc |= cmd_bench_data_use(s, a.data_gb);   /* starts, memory, the feed's share */
            continue;
        }
        if (!strcmp(name, "tokenizer")) { rc |= cmd_bench_tokenizer(s, tok_list, tok_file); continue; }
        if (!strcmp(name, "all")) { rc |= bench_all(s, a.steps, threads, prec, a.tokens); continue; }
        rc |= bench_training(s, name, a.steps, prec_given ? prec : 0, a.diagnostics);
    }
    return rc ? LM_EIO : LM_OK;
}

/* --json applies to this command only: the session's own setting comes back after it. */
int cmd_bench(Session *s, int argc, const LexWord *argv)
{
    int json = s->json, rc = bench_command(s, argc, argv);
    s->json = json;
    return rc;
}
