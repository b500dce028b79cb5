/* cmd_bench_track.c — `bench track`: what the tracking a run's owner does beside training
 * costs (issue 37): per second of training the recorder takes a system sample and stores
 * it every SYSMETRICS_EVERY seconds, keeps a console progress line every
 * CONSOLE_PROGRESS_EVERY seconds and checks the alert rules every second. Each part is
 * timed here (median of repeats, in a scratch store with one run, two rules) and the sum
 * per second of training is compared with a step of the small workload measured in the
 * same command: the share of a step's time the tracking takes. Not a training benchmark
 * (cmd_bench.c). */
#include "cmd_bench.h"
#include "alerts.h"
#include "alertseen.h"
#include "console.h"
#include "output.h"
#include "sysinfo.h"
#include "sysmetrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACK_REPS 200

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of TRACK_REPS timings of one part: 0 sample+store, 1 console line, 2 alerts. */
static double part_us(RunStore *st, long run, AlertEngine *e, int part)
{
    double t[TRACK_REPS];
    char err[LM_ERR_LEN], line[96];
    SysMeter m;
    sysmetrics_init(&m);
    AlertSeen seen;   /* the values a run's rules read, as the recorder keeps them */
    alertseen_init(&seen);
    TrainEvent ev = {.kind = TEV_STEP, .step = {.step = 10, .loss = 3, .tokens_per_s = 1000,
                                                .grad_norm = 1}};
    alertseen_event(&seen, &ev);
    AlertFacts f = {.status = "running", .step = 10, .loss = 3, .val_loss = 3, .best_val = 3,
                    .since_step = 0.1, .value = alertseen_value, .ud = &seen};
    for (int i = 0; i < TRACK_REPS; i++) {
        double t0 = sysinfo_now();
        if (part == 0) {
            SysSample x = {0};
            sysmetrics_sample(&m, &x);
            runstore_sys_log(st, run, &x, err);
        } else if (part == 1) {
            snprintf(line, sizeof line, "step %6d/1000  loss 3.0000  lr 1.00e-03  |g| 1.000  "
                     "12345 tok/s", i);
            runstore_console_append(st, run, "progress", line, err);
        } else {
            alerts_poll(e, st, &f, 1);
        }
        t[i] = (sysinfo_now() - t0) * 1e6;
    }
    qsort(t, TRACK_REPS, sizeof *t, by_value);
    return t[TRACK_REPS / 2];
}

int cmd_bench_track(Session *s, double tokens_per_s, long tokens_per_step)
{
    char dir[] = "/tmp/lmlab_bench_track_XXXXXX", db[96], err[LM_ERR_LEN];
    if (!mkdtemp(dir)) return session_error(s, LM_EIO, "cannot create a temporary folder in /tmp");
    snprintf(db, sizeof db, "%s/track.db", dir);
    RunStore *st = NULL;
    long run = 0;
    RunInfo info = {.name = "bench-track", .config = "", .model = "dispatcher"};
    int status = runstore_open(db, &st, err);
    if (!status) status = runstore_run_create(st, &info, &run, err);
    if (!status) status = runstore_alert_add(st, run, 0, "stalled:300", "", "live", NULL, err);
    if (!status) status = runstore_alert_add(st, run, 0, "val_loss<1", "", "live", NULL, err);
    double us[3] = {0};
    AlertEngine e;
    alerts_init(&e, run, "bench-track", db);
    for (int p = 0; !status && p < 3; p++) us[p] = part_us(st, run, &e, p);
    runstore_close(st);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
    if (status) return session_error(s, status, "track bench: %s", err);
    double per_s = us[0] / SYSMETRICS_EVERY + us[1] / CONSOLE_PROGRESS_EVERY + us[2];
    double step_ms = tokens_per_s > 0 ? 1e3 * (double)tokens_per_step / tokens_per_s : 0;
    double pct = per_s / 1e6 * 100;   /* microseconds of tracking per second of training */
    Output *o = output_create("bench-track");
    output_real(o, "sample_us", us[0]);
    output_real(o, "console_us", us[1]);
    output_real(o, "alerts_us", us[2]);
    output_real(o, "per_second_us", per_s);
    output_real(o, "step_ms", step_ms);
    output_real(o, "per_step_us", per_s * step_ms / 1e3);
    output_real(o, "overhead_pct", pct);
    output_line(o, "tracking (median of 200): system sample + store {sample_us:%.0f} us every "
                "5 s, console line {console_us:%.0f} us every 2 s, alert check (2 rules) "
                "{alerts_us:%.0f} us every 1 s = {per_second_us:%.0f} us per second of "
                "training; small workload step {step_ms:%.1f} ms here, so {per_step_us:%.2f} us"
                " of tracking per step: {overhead_pct:%.3f}% of a step");
    return output_emit(s, o);
}
