/* bench_board.c — the synthetic store and the timed reads of `bench board` (see
 * bench_board.h). Runs are written through the store's own API, as a trainer's recorder
 * writes them. */
#include "bench_board.h"

#include "err.h"
#include "runstore_jobs.h"
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One synthetic run: settings that differ (lr, d, seed), steps and evaluations. */
static int make_run(RunStore *st, int i, int running, int steps, char *err)
{
    char cfg[256], name[32];
    snprintf(cfg, sizeof cfg, "model=%s\nd=%d\nlayers=%d\nlr=%g\nbatch=32\nbptt=64\nseed=%d\n"
             "steps=%d\ndata=tinyshakespeare\n", i % 2 ? "msa" : "lstm", 64 << (i % 3),
             1 + i % 4, 1e-4 * (1 + i % 30), i, steps * 2);
    snprintf(name, sizeof name, "run-%d", i);
    RunInfo info = {.name = name, .config = cfg, .model = i % 2 ? "msa" : "lstm",
                    .data_name = "tinyshakespeare", .params = 100000 + i};
    long id;
    int rc = runstore_run_create(st, &info, &id, err);
    int n = running ? steps : steps / 10;
    for (int k = 1; !rc && k <= n; k++) {
        StepMetric m = {.step = k, .epoch = k / 500.0, .tokens = k * 2048L,
                        .loss = (float)(4.0 / (1.0 + 0.01 * k) + 0.05 * sin(k + i)),
                        .lr = 1e-3f, .grad_norm = 1.0f, .tokens_per_s = 20000.0f + i,
                        .elapsed = k * 0.05};
        rc = runstore_log_step(st, id, &m, err);
        if (!rc && k % 10 == 0) {
            EvalMetric e = {.step = k, .split = "valid", .loss = m.loss + 0.1,
                            .ppl = exp(m.loss + 0.1), .bpc = NAN, .tokens = 4096,
                            .elapsed = m.elapsed};
            rc = runstore_log_eval(st, id, &e, err);
        }
    }
    if (!rc) rc = runstore_flush(st, err);
    if (!rc && !running) rc = runstore_run_set_status(st, id, "finished", NULL, err);
    return rc;
}

int bench_board_make(const char *path, int n_runs, int n_running, int steps,
                     double *create_s, char *err)
{
    RunStore *st;
    double t0 = sysinfo_now();
    int rc = runstore_open(path, &st, err);
    for (int i = 0; !rc && i < n_runs; i++)   /* the running ones are the newest */
        rc = make_run(st, i, i >= n_runs - n_running, steps, err);
    runstore_close(st);
    *create_s = sysinfo_now() - t0;
    return rc;
}

int bench_board_time_jobs(RunStore *st, int reps, double *ms, int *n, char *err)
{
    double t[64];
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    for (int r = 0; r < reps; r++) {
        JobRow *j;
        double t0 = sysinfo_now();
        int rc = runstore_jobs(st, &j, n, err);
        t[r] = 1e3 * (sysinfo_now() - t0);
        if (rc) return rc;
        runstore_jobs_free(j, *n);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *ms = t[reps / 2];
    return LM_OK;
}

int bench_board_time_list(RunStore *st, const char *filter, const char *sort, int reps,
                          double *ms, int *n, char *err)
{
    double t[64];
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    for (int r = 0; r < reps; r++) {
        RunRow *rows;
        double t0 = sysinfo_now();
        int rc = runstore_list(st, filter, sort, 0, &rows, n, err);
        t[r] = 1e3 * (sysinfo_now() - t0);
        if (rc) return rc;
        runstore_rows_free(rows, *n);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *ms = t[reps / 2];
    return LM_OK;
}
