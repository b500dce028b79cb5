/* cmd_bench_store.c — bench's run store figures: `bench store` (training tokens/s with and
 * without a recorded run, alternating), the short training run `bench track` measures
 * against, and `bench board` (the jobs board's and lists' reads and the dashboard's frames
 * on a 200-run and a 10,000-run synthetic store, against their limits). Not here: the
 * tracking's own costs (cmd_bench_track.c), training workloads (cmd_bench_train.c). */
#include "cmd_bench.h"

#include "bench.h"
#include "bench_board.h"
#include "err.h"
#include "output.h"
#include "run_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Trains the small workload on Tiny Shakespeare for `steps` steps, its events (a step
 * metric every log_every steps) either recorded (dir != NULL: a run launched as `train`
 * launches one, in dir/bench.db with checkpoints under dir/runs) or just drained; returns
 * the training tokens/s (time in steps only), -1 with err on failure. Runs in the calling
 * process. */
double cmd_bench_store_run(const char *dir, long steps, char *err)
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
int cmd_bench_store(Session *s, long steps)
{
    char err[LM_ERR_LEN], dir[] = "/tmp/lmlab_bench_store_XXXXXX";
    if (!mkdtemp(dir))
        return session_error(s, LM_EIO, "cannot create a temporary folder in /tmp");
    double with[3], without[3];
    for (int i = 0; i < 3; i++) {
        without[i] = cmd_bench_store_run(NULL, steps, err);
        with[i] = without[i] < 0 ? -1 : cmd_bench_store_run(dir, steps, err);
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
int cmd_bench_board(Session *s)
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
