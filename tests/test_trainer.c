/* test_trainer.c — the trainer end to end on the bundled Tiny Shakespeare: a short run
 * emits steps, evaluations, gate statistics, samples, checkpoints and a final status;
 * resuming from a checkpoint reproduces the uninterrupted run's losses bit for bit;
 * a huge learning rate ends as `diverged` naming a tensor; pause/stop work; a
 * checkpoint that cannot be written pauses the run instead of killing it; a checkpoint
 * refused for another reason than the disk says why and fails the run; a new best
 * evaluation writes best.safetensors at once; a loss far above ln(V) for
 * diverge_patience steps ends the run as diverged (issue 13, items 2, 7, 8); a time
 * budget stops the run and records it, time marks (eval_at_seconds) evaluate the whole
 * validation split on the training clock, which leaves evaluations out (issue 29);
 * weight_decay_on=matrices leaves biases and norms out of AdamW's weight decay. */
#include "check.h"
#include "checkpoint.h"
#include "err.h"
#include "model.h"
#include "recorder.h"
#include "runstore.h"
#include "sysinfo.h"
#include "trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/lmlab_trainer_XXXXXX";

static void small_config(Config *c)
{
    config_defaults(c);
    c->d = 32; c->nhid = 64; c->layers = 2; c->bptt = 32; c->batch = 4;
    c->steps = 40; c->log_every = 1; c->eval_every = 20; c->eval_batches = 4;
    c->sample_every = 20; c->sample_tokens = 20; c->checkpoint_every = 20;
    c->dropout = 0.1f; c->keep_checkpoints = 5;
}

typedef struct {
    int steps, evals, gates, samples, pieces, ckpts, status_end;
    float loss[128];
    char reason[LM_ERR_LEN];
} Seen;

/* Drains events until the run ends. */
static void drain(Trainer *t, Seen *s)
{
    memset(s, 0, sizeof *s);
    for (;;) {
        TrainEvent ev;
        if (!trainer_poll(t, &ev, 0.5)) {
            if (trainer_is_done(trainer_status(t)))
                break;
            continue;
        }
        switch (ev.kind) {
        case TEV_STEP:
            if (ev.step.step < 128) s->loss[ev.step.step] = ev.step.loss;
            s->steps++;
            break;
        case TEV_EVAL: s->evals++; break;
        case TEV_GATES: s->gates += ev.n_gates; break;
        case TEV_SAMPLE: s->samples++; break;
        case TEV_SAMPLE_PIECE: s->pieces++; break;
        case TEV_CHECKPOINT: s->ckpts++; break;
        case TEV_STATUS:
            if (trainer_is_done(ev.status)) {
                s->status_end = ev.status;
                snprintf(s->reason, sizeof s->reason, "%s", ev.text);
            }
            break;
        default: break;
        }
        int end = ev.kind == TEV_STATUS && trainer_is_done(ev.status);
        trainer_event_free(&ev);
        if (end)
            break;
    }
    trainer_join(t);
}

static void run_and_resume(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    TrainerOptions o = {.run_id = 7};
    snprintf(o.run_dir, sizeof o.run_dir, "%s/a", tmpdir);
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "create: %s", err);
    if (!t) return;
    CHECK(trainer_start(t, err) == LM_OK, "%s", err);
    Seen a;
    drain(t, &a);
    CHECK(a.status_end == TRAINER_FINISHED, "ended %d: %s", a.status_end, a.reason);
    CHECK(a.steps == 40, "%d step events", a.steps);
    CHECK(a.evals == 2, "%d evals (step 20 + final)", a.evals);
    CHECK(a.gates == 2 * 2 * 5, "%d gate stats (2 evals x 2 layers x 5 levels)", a.gates);
    CHECK(a.samples == 1 && a.pieces >= 10, "samples %d pieces %d", a.samples, a.pieces);
    CHECK(a.ckpts >= 3, "%d checkpoints", a.ckpts);
    CHECK(a.loss[40] < a.loss[1], "loss did not go down: %g -> %g", a.loss[1], a.loss[40]);
    trainer_destroy(t);

    /* resume from step 20 into another directory: steps 21..40 must be identical */
    snprintf(o.resume, sizeof o.resume, "%s/a/step-00000020.safetensors", tmpdir);
    snprintf(o.run_dir, sizeof o.run_dir, "%s/b", tmpdir);
    t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "resume: %s", err);
    if (!t) return;
    trainer_start(t, err);
    Seen b;
    drain(t, &b);
    CHECK(b.status_end == TRAINER_FINISHED, "resumed run ended %d: %s", b.status_end, b.reason);
    CHECK(b.steps == 20, "%d step events after resume", b.steps);
    int same = 1;
    for (int s = 21; s <= 40; s++)
        if (a.loss[s] != b.loss[s]) {
            same = 0;
            printf("  step %d: %.9g vs %.9g\n", s, a.loss[s], b.loss[s]);
        }
    CHECK(same, "resumed losses differ from the uninterrupted run");
    trainer_destroy(t);
}

/* Issue 49 item 1: a run stopped inside a log window (stop_at=23, log_every=10) and
 * resumed logs at steps 30 and 40 the same window means as the run never stopped, bit for
 * bit: the checkpoint carries the window's open part. */
static void resume_inside_log_window(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.log_every = 10;
    c.dropout = 0;
    TrainerOptions o = {.run_id = 8};
    snprintf(o.run_dir, sizeof o.run_dir, "%s/w_full", tmpdir);
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "create: %s", err);
    if (!t) return;
    trainer_start(t, err);
    Seen full;
    drain(t, &full);
    trainer_destroy(t);
    CHECK(full.status_end == TRAINER_FINISHED, "ended %d: %s", full.status_end, full.reason);

    snprintf(o.run_dir, sizeof o.run_dir, "%s/w_cut", tmpdir);
    o.stop_at = 23;
    t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "create: %s", err);
    if (!t) return;
    trainer_start(t, err);
    Seen cut;
    drain(t, &cut);
    trainer_destroy(t);
    CHECK(cut.status_end == TRAINER_STOPPED, "stop_at ended %d: %s", cut.status_end, cut.reason);
    CHECK(cut.loss[23] != 0, "the stop at 23 logged its row");

    o.stop_at = 0;
    snprintf(o.resume, sizeof o.resume, "%s/w_cut/step-00000023.safetensors", tmpdir);
    t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "resume: %s", err);
    if (!t) return;
    trainer_start(t, err);
    Seen rest;
    drain(t, &rest);
    trainer_destroy(t);
    CHECK(rest.status_end == TRAINER_FINISHED, "resumed ended %d: %s", rest.status_end,
          rest.reason);
    for (int s = 30; s <= 40; s += 10)
        CHECK(rest.loss[s] == full.loss[s], "step %d's window mean %.9g after a stop at 23 "
              "vs %.9g never stopped", s, rest.loss[s], full.loss[s]);
}

static void diverges(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.dropout = 0;
    config_set(&c, "optimizer", "sgd", err);
    c.lr = 90; c.steps = 200; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    TrainerOptions o = {0};
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    Seen s;
    drain(t, &s);
    CHECK(s.status_end == TRAINER_DIVERGED, "ended %d: %s", s.status_end, s.reason);
    CHECK(strstr(s.reason, "first non-finite value in") != NULL, "reason: %s", s.reason);
    printf("  diverged: %s\n", s.reason);
    trainer_destroy(t);
}

static void pause_and_stop(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.steps = 100000; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    TrainerOptions o = {0};
    snprintf(o.run_dir, sizeof o.run_dir, "%s/c", tmpdir);
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    usleep(300000);
    trainer_pause(t);
    TrainEvent ev;
    int paused = 0;
    /* drain every queued event (step events may be many) for up to 10 s */
    for (double t0 = sysinfo_now(); !paused && sysinfo_now() - t0 < 10;)
        if (trainer_poll(t, &ev, 0.05)) {
            paused = ev.kind == TEV_STATUS && ev.status == TRAINER_PAUSED;
            trainer_event_free(&ev);
        }
    CHECK(paused && trainer_status(t) == TRAINER_PAUSED, "did not pause");
    trainer_resume(t);
    usleep(100000);
    trainer_stop(t);
    Seen s;
    drain(t, &s);
    CHECK(s.status_end == TRAINER_STOPPED, "ended %d: %s", s.status_end, s.reason);
    CHECK(s.ckpts >= 1, "a stop writes a checkpoint (%d)", s.ckpts);
    trainer_destroy(t);
}

static void checkpoint_failure_pauses(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.steps = 10; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 5;
    TrainerOptions o = {0};
    snprintf(o.run_dir, sizeof o.run_dir, "/proc/lmlab-cannot-write-here");
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    int paused = 0, logged = 0;
    TrainEvent ev;
    for (double t0 = sysinfo_now(); !paused && sysinfo_now() - t0 < 20;)
        if (trainer_poll(t, &ev, 0.05)) {
            if (ev.kind == TEV_LOG && strstr(ev.text, "checkpoint failed")) logged = 1;
            if (ev.kind == TEV_STATUS && ev.status == TRAINER_PAUSED) paused = 1;
            trainer_event_free(&ev);
        }
    CHECK(logged && paused, "checkpoint failure: logged %d paused %d", logged, paused);
    trainer_stop(t);
    Seen s;
    drain(t, &s);
    CHECK(s.status_end == TRAINER_STOPPED, "ended %d", s.status_end);
    trainer_destroy(t);
}

/* Runs to the end collecting checkpoint events: *best_steps gets the steps at which
 * best.safetensors was written (up to 8). */
static int best_steps_of(Trainer *t, long *best_steps, Seen *s)
{
    int n = 0;
    memset(s, 0, sizeof *s);
    TrainEvent ev;
    for (double t0 = sysinfo_now(); sysinfo_now() - t0 < 120;) {
        if (!trainer_poll(t, &ev, 0.5))
            continue;
        if (ev.kind == TEV_CHECKPOINT && strstr(ev.ckpt.path, "best.safetensors") && n < 8)
            best_steps[n++] = ev.ckpt.step;
        int end = ev.kind == TEV_STATUS && trainer_is_done(ev.status);
        if (end) {
            s->status_end = ev.status;
            snprintf(s->reason, sizeof s->reason, "%s", ev.text);
        }
        trainer_event_free(&ev);
        if (end)
            break;
    }
    trainer_join(t);
    return n;
}

/* Item 7: an evaluation that improves writes best at once, not at the next checkpoint. */
static void best_written_at_eval(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.steps = 30; c.eval_every = 10; c.sample_every = 0; c.checkpoint_every = 0;
    c.dropout = 0;
    TrainerOptions o = {0};
    snprintf(o.run_dir, sizeof o.run_dir, "%s/best", tmpdir);
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    long best[8];
    Seen s;
    int n = best_steps_of(t, best, &s);
    CHECK(s.status_end == TRAINER_FINISHED, "ended %d: %s", s.status_end, s.reason);
    CHECK(n >= 1 && best[0] == 10, "first best written at step %ld (want 10, %d writes)",
          n ? best[0] : -1L, n);
    /* the file on disk is the best evaluation's weights: its state carries that step */
    char path[1200];
    snprintf(path, sizeof path, "%s/best.safetensors", o.run_dir);
    CheckpointInfo info;
    SafeTensors *st = NULL;
    CHECK(checkpoint_open(path, &info, &st, err) == LM_OK, "%s", err);
    if (st) {
        CHECK(info.has_state && info.ts.step == best[n - 1], "best file at step %ld, last best "
              "event at %ld", info.ts.step, best[n - 1]);
        CHECK(!isnan(info.ts.best_val), "best file has no best_val");
        checkpoint_info_free(&info);
        safetensors_close(st);
    }
    trainer_destroy(t);
}

/* Item 2: a checkpoint that cannot be assembled for a reason other than the disk says the
 * real reason and fails the run instead of pausing for space forever. */
static void checkpoint_refused_says_why(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.steps = 10; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 5;
    strcpy(c.name, "a\x9b" "b");   /* bypasses config_set's check, as an old store would */
    TrainerOptions o = {0};
    snprintf(o.run_dir, sizeof o.run_dir, "%s/utf8", tmpdir);
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    char logged[LM_ERR_LEN + 200] = "";
    Seen s;
    memset(&s, 0, sizeof s);
    TrainEvent ev;
    for (double t0 = sysinfo_now(); sysinfo_now() - t0 < 30;) {
        if (!trainer_poll(t, &ev, 0.1))
            continue;
        if (ev.kind == TEV_LOG && strstr(ev.text, "checkpoint"))
            snprintf(logged, sizeof logged, "%s", ev.text);
        if (ev.kind == TEV_STATUS && ev.status == TRAINER_PAUSED)
            trainer_stop(t);   /* the old behaviour: paused waiting for space */
        int end = ev.kind == TEV_STATUS && trainer_is_done(ev.status);
        if (end) {
            s.status_end = ev.status;
            snprintf(s.reason, sizeof s.reason, "%s", ev.text);
        }
        trainer_event_free(&ev);
        if (end)
            break;
    }
    trainer_join(t);
    CHECK(strstr(logged, "UTF-8") != NULL, "message does not give the reason: '%s'", logged);
    CHECK(strstr(logged, "free space") == NULL, "message blames the disk: '%s'", logged);
    CHECK(s.status_end == TRAINER_FAILED, "ended %d (%s), want failed", s.status_end, s.reason);
    trainer_destroy(t);
}

/* Item 8: a finite loss far above ln(V) for diverge_patience steps is a divergence. */
static void diverges_finite(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.dropout = 0;
    c.lr = 10; c.steps = 300; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    CHECK(config_set(&c, "diverge_patience", "10", err) == LM_OK, "%s", err);
    TrainerOptions o = {0};
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    Seen s;
    drain(t, &s);
    CHECK(s.status_end == TRAINER_DIVERGED, "lr=10 ended %d: %s", s.status_end, s.reason);
    printf("  lr=10: %s\n", s.reason);
    trainer_destroy(t);
    /* a healthy run with the default setting is not flagged */
    small_config(&c);
    c.steps = 60; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    drain(t, &s);
    CHECK(s.status_end == TRAINER_FINISHED, "healthy run ended %d: %s", s.status_end, s.reason);
    trainer_destroy(t);
}

/* Item 4: a checkpoint that fails for lack of space (or a bad folder) is retried by
 * itself every checkpoint_retry seconds, so a headless run continues once it is fixed. */
static void checkpoint_retries_by_itself(void)
{
    char err[LM_ERR_LEN], blocker[400];   /* with "/run", fits TrainerOptions.run_dir */
    Config c;
    small_config(&c);
    c.steps = 10; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 5;
    snprintf(blocker, sizeof blocker, "%s/blocker", tmpdir);
    FILE *f = fopen(blocker, "w");   /* a file where the run folder's parent should be */
    if (f) fclose(f);
    TrainerOptions o = {.checkpoint_retry = 0.2};
    snprintf(o.run_dir, sizeof o.run_dir, "%s/run", blocker);
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    int told = 0, fixed = 0;
    Seen s;
    memset(&s, 0, sizeof s);
    TrainEvent ev;
    for (double t0 = sysinfo_now(); sysinfo_now() - t0 < 30;) {
        if (!trainer_poll(t, &ev, 0.05))
            continue;
        if (ev.kind == TEV_LOG && strstr(ev.text, "retrying every 0.2 s") &&
            strstr(ev.text, "stop")) told = 1;
        if (ev.kind == TEV_STATUS && ev.status == TRAINER_PAUSED && !fixed) {
            unlink(blocker);         /* space returns: no `resume` is ever sent */
            mkdir(blocker, 0777);
            fixed = 1;
        }
        int end = ev.kind == TEV_STATUS && trainer_is_done(ev.status);
        if (end) {
            s.status_end = ev.status;
            snprintf(s.reason, sizeof s.reason, "%s", ev.text);
        }
        trainer_event_free(&ev);
        if (end)
            break;
    }
    if (!s.status_end) trainer_stop(t);
    trainer_join(t);
    CHECK(told, "the pause message does not give the retry interval and how to stop");
    CHECK(fixed && s.status_end == TRAINER_FINISHED, "ended %d (%s) without a resume",
          s.status_end, s.reason);
    trainer_destroy(t);
}

/* Item 3 (part): a run whose rows could not reach the store does not end as a plain
 * success: the recorder says what was not recorded and where. */
static void unrecorded_is_reported(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.steps = 5; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    TrainerOptions o = {0};
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    Recorder *r = recorder_create(t, "/proc/lmlab-no-store-here/x.db", 1, "x", NULL, NULL, err);
    CHECK(r != NULL, "%s", err);
    if (!r) { trainer_destroy(t); return; }
    for (double t0 = sysinfo_now(); !recorder_done(r) && sysinfo_now() - t0 < 30;)
        usleep(20000);
    Snapshot sn = {0};
    recorder_snapshot(r, &sn);
    CHECK(sn.status == TRAINER_FINISHED, "training itself finished (%d)", sn.status);
    CHECK(sn.unrecorded > 0 && strstr(sn.unrecorded_why, "/proc/lmlab-no-store-here/x.db") &&
          strstr(sn.unrecorded_why, "final status"), "unrecorded %ld: '%s'", sn.unrecorded,
          sn.unrecorded_why);
    snapshot_free(&sn);
    recorder_destroy(r);
    trainer_destroy(t);
}

/* Item 8: non-finite weights are counted and named (open warns with this). */
static void nonfinite_weights_named(void)
{
    char err[LM_ERR_LEN], first[96];
    Config c;
    small_config(&c);
    Model *m = model_create(&c, 65, err);
    CHECK(m != NULL, "%s", err);
    if (!m) return;
    CHECK(checkpoint_count_nonfinite(m, first, sizeof first) == 0, "fresh model non-finite");
    const ParamInfo *last = &m->params.info[m->params.n - 1];
    m->params.data[last->offset] = NAN;
    m->params.data[last->offset + last->numel - 1] = INFINITY;
    long n = checkpoint_count_nonfinite(m, first, sizeof first);
    CHECK(n == 2 && !strcmp(first, last->name), "counted %ld non-finite weights, first in '%s'", n, first);
    model_destroy(m);
}

/* Issue 29: time_budget=2 on the real clock: the run stops at the budget well before its
 * steps, evaluates the whole split once more and records it (evaluation, reason). */
static void time_budget_stops_and_records(void)
{
    char err[LM_ERR_LEN], db[256];
    Config c;
    small_config(&c);
    c.steps = 100000000; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    c.log_every = 1; c.time_budget = 2;
    snprintf(db, sizeof db, "%s/budget.db", tmpdir);
    RunStore *st = NULL;
    CHECK(runstore_open(db, &st, err) == LM_OK, "%s", err);
    if (!st) return;
    RunInfo info = {.name = "budget", .config = "model=dispatcher\n", .model = "dispatcher"};
    long id = 0;
    CHECK(runstore_run_create(st, &info, &id, err) == LM_OK, "%s", err);
    TrainerOptions o = {0};
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) { runstore_close(st); return; }
    trainer_start(t, err);
    Recorder *r = recorder_create(t, db, id, "budget", NULL, NULL, err);
    CHECK(r != NULL, "%s", err);
    if (r) recorder_destroy(r);   /* waits for the end */
    trainer_destroy(t);
    RunRow row;
    CHECK(runstore_get(st, id, &row, err) == LM_OK, "%s", err);
    CHECK(!strcmp(row.status, "finished") && strstr(row.reason, "time budget of 2 s") &&
          strstr(row.reason, "final evaluation took"), "%s: %s", row.status, row.reason);
    CHECK(row.last_step > 0 && row.last_step < c.steps, "last step %ld", row.last_step);
    CHECK(isfinite(row.final_val), "no final validation loss recorded");
    runstore_row_free(&row);
    SeriesPoint *el = NULL, *val = NULL;
    int n_el = 0, n_val = 0;
    runstore_series(st, id, "elapsed", &el, &n_el, err);
    runstore_series(st, id, "val_loss", &val, &n_val, err);
    CHECK(n_val == 1, "%d evaluations recorded (the final one)", n_val);
    CHECK(n_el > 0 && el[n_el - 1].value >= 2.0, "training clock at the end %g",
          n_el ? el[n_el - 1].value : -1);
    free(el);
    free(val);
    runstore_close(st);
}

/* A fake clock: every reading is 0.25 s after the previous one. The trainer reads it
 * around each step (+0.25 s of training) and around each evaluation (time that must not
 * be training time). */
static double fake_now;
static double fake_clock(void)
{
    fake_now += 0.25;
    return fake_now;
}

/* Issue 29: eval_at_seconds=1,2,3 with time_budget=3 on the fake clock: every step adds
 * exactly 0.25 s to the training clock, so the marks fall at steps 4 and 8 and the budget
 * at step 12, whose final evaluation is the 3-s mark's. Had an evaluation's time entered
 * the training clock, the second mark would come earlier than step 8, off the 0.25 grid. */
static void time_marks_leave_evaluations_out(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.steps = 1000; c.eval_every = 5; c.eval_batches = 2; c.sample_every = 0;
    c.checkpoint_every = 0; c.time_budget = 3;
    CHECK(config_set(&c, "eval_at_seconds", "1,2,3", err) == LM_OK, "%s", err);
    fake_now = 0;
    TrainerOptions o = {.clock = fake_clock};
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    long step[8];
    double elapsed[8];
    long tokens[8];
    int n = 0, end = 0;
    char reason[LM_ERR_LEN] = "";
    while (!end) {
        TrainEvent ev;
        if (!trainer_poll(t, &ev, 0.5))
            continue;
        if (ev.kind == TEV_EVAL && n < 8) {
            step[n] = ev.eval.step;
            elapsed[n] = ev.eval.elapsed;
            tokens[n++] = ev.eval.tokens;
        }
        if (ev.kind == TEV_STATUS && trainer_is_done(ev.status)) {
            end = 1;
            snprintf(reason, sizeof reason, "%s", ev.text);
        }
        trainer_event_free(&ev);
    }
    trainer_join(t);
    /* steps 4 (mark 1 s), 5 (eval_every, an estimate), 8 (mark 2 s), 10 (estimate),
     * 12 (the budget: the final evaluation) */
    long want_step[] = {4, 5, 8, 10, 12};
    double want_el[] = {1, 1.25, 2, 2.5, 3};
    CHECK(n == 5, "%d evaluations", n);
    for (int i = 0; i < n && i < 5; i++)
        CHECK(step[i] == want_step[i] && elapsed[i] == want_el[i], "evaluation %d at step "
              "%ld, %g s of training (want step %ld, %g s)", i, step[i], elapsed[i],
              want_step[i], want_el[i]);
    CHECK(n == 5 && tokens[0] == tokens[2] && tokens[2] == tokens[4] && tokens[1] < tokens[0],
          "the marks evaluate the whole split, eval_every its estimate");
    CHECK(strstr(reason, "time budget of 3 s reached at step 12 after 3.0 s of training"),
          "%s", reason);
    trainer_destroy(t);
    CHECK(config_set(&c, "eval_at_seconds", "60,30", err) == LM_EARG &&
          strstr(err, "increase"), "decreasing marks: %s", err);
    CHECK(config_set(&c, "eval_at_seconds", "60,abc", err) == LM_EARG &&
          strstr(err, "eval_at_seconds=60,abc"), "bad mark: %s", err);
    CHECK(config_set(&c, "eval_at_seconds", "", err) == LM_OK, "no marks: %s", err);
}

/* Issue 29: schedule_clock=time: on the fake clock (0.25 s per step) with steps=120,
 * warmup=4 and time_budget=3, the warmup takes its 4 steps (the clock is at 40 schedule
 * steps when it ends: a slow machine must not skip it), then the cosine follows the clock:
 * when step 7 begins, 1.5 s of 3 s put it at 60 of its 120 steps, where the step count
 * alone would put it at 6. */
static void schedule_follows_the_clock(void)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.steps = 120; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    c.time_budget = 3; c.lr = 1e-3f; c.dropout = 0; c.warmup = 4;
    config_set(&c, "schedule", "cosine", err);
    CHECK(config_set(&c, "schedule_clock", "time", err) == LM_OK, "%s", err);
    fake_now = 0;
    TrainerOptions o = {.clock = fake_clock};
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "%s", err);
    if (!t) return;
    trainer_start(t, err);
    float lr[16] = {0};
    long last = 0;
    for (int end = 0; !end;) {
        TrainEvent ev;
        if (!trainer_poll(t, &ev, 0.5))
            continue;
        if (ev.kind == TEV_STEP && ev.step.step < 16)
            lr[ev.step.step] = ev.step.lr;
        if (ev.kind == TEV_STEP)
            last = ev.step.step;
        end = ev.kind == TEV_STATUS && trainer_is_done(ev.status);
        trainer_event_free(&ev);
    }
    trainer_join(t);
    trainer_destroy(t);
    CHECK(last == 12, "stopped at step %ld (the budget: 12 x 0.25 s)", last);
    /* the cosine of schedule.c after a warmup of 4: progress (pos - 4) / (120 - 4) */
    double at60 = 1e-3 * 0.5 * (1 + cos(M_PI * 56 / 116));    /* step 7 begins at 1.5 s */
    double at110 = 1e-3 * 0.5 * (1 + cos(M_PI * 106 / 116));  /* step 12 begins at 2.75 s */
    CHECK(fabsf(lr[1] - 2.5e-4f) < 1e-9f && fabsf(lr[3] - 7.5e-4f) < 1e-9f &&
          fabsf(lr[4] - 1e-3f) < 1e-9f, "warmup by steps: lr at steps 1, 3, 4: %g %g %g "
          "(want 2.5e-4, 7.5e-4, 1e-3)", lr[1], lr[3], lr[4]);
    CHECK(fabs(lr[7] - at60) < 1e-9 && fabs(lr[12] - at110) < 1e-9, "lr at steps 7, 12: "
          "%g %g (want %g, %g)", lr[7], lr[12], at60, at110);
    config_defaults(&c);
    config_set(&c, "schedule_clock", "time", err);
    CHECK(config_validate(&c, err) == LM_EARG && strstr(err, "time_budget"), "%s", err);
}

/* The parameters after one AdamW step with the given decay settings (n floats). */
static float *one_step(const char *on, float wd, size_t *n, int *V)
{
    char err[LM_ERR_LEN];
    Config c;
    small_config(&c);
    c.dropout = 0; c.steps = 1; c.eval_every = 0; c.sample_every = 0; c.checkpoint_every = 0;
    c.lr = 1e-2f; c.weight_decay = wd;
    CHECK(config_set(&c, "optimizer", "adamw", err) == LM_OK, "%s", err);
    CHECK(config_set(&c, "weight_decay_on", on, err) == LM_OK, "%s", err);
    TrainerOptions o = {.run_id = 9};
    snprintf(o.run_dir, sizeof o.run_dir, "%s/wd-%s-%g", tmpdir, on, (double)wd);
    Trainer *t = trainer_create(&c, &o, err);
    CHECK(t != NULL, "create: %s", err);
    if (!t) return NULL;
    trainer_start(t, err);
    Seen s;
    drain(t, &s);
    CHECK(s.status_end == TRAINER_FINISHED && s.steps == 1, "ended %d after %d steps: %s",
          s.status_end, s.steps, s.reason);
    *V = trainer_vocab(t);
    Model *m = model_describe(&c, *V, err);   /* the layout trainer_copy_params writes */
    CHECK(m != NULL, "%s", err);
    *n = m ? m->params.total : 0;
    model_destroy(m);
    float *p = malloc(*n * sizeof *p);
    trainer_copy_params(t, p);
    trainer_destroy(t);
    return p;
}

/* After one step (the same gradient for all three), weight_decay_on=matrices has shrunk
 * exactly the tensors not marked no_decay, as `all` did, and left every bias and norm
 * where no decay leaves it (the norms' gains, which `all` shrinks, among them). */
static void weight_decay_on_matrices(void)
{
    char err[LM_ERR_LEN];
    size_t n = 0;
    int V = 0;
    float *all = one_step("all", 5, &n, &V), *mat = one_step("matrices", 5, &n, &V),
          *none = one_step("all", 0, &n, &V);
    Config c;
    small_config(&c);
    Model *m = model_describe(&c, V, err);
    CHECK(m != NULL, "%s", err);
    if (!all || !mat || !none || !m || !n) return;
    const ParamSet *ps = &m->params;
    CHECK((size_t)ps->total == n, "%zu floats in the model, %zu in the trainer", ps->total, n);
    int decayed = 0, spared = 0;
    for (int i = 0; i < ps->n; i++) {
        size_t off = ps->info[i].offset, k = ps->info[i].numel;
        const float *want = ps->info[i].no_decay ? none + off : all + off;
        int same = !memcmp(mat + off, want, k * sizeof(float));
        int moved = !!memcmp(all + off, none + off, k * sizeof(float));
        CHECK(same, "%s: weight_decay_on=matrices %s", ps->info[i].name,
              ps->info[i].no_decay ? "decayed a bias or norm" : "did not decay a matrix");
        /* AdamW decays before the update: zero-initialised biases do not move */
        CHECK(moved || ps->info[i].no_decay, "%s: weight decay 5 changed nothing",
              ps->info[i].name);
        decayed += !ps->info[i].no_decay;
        spared += ps->info[i].no_decay && moved;   /* the norms' gains (ones) */
    }
    CHECK(decayed > 0 && spared > 0, "%d decayed and %d spared tensors that `all` decays",
          decayed, spared);
    model_destroy(m);
    free(all); free(mat); free(none);
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 1;
    run_and_resume();
    resume_inside_log_window();
    diverges();
    pause_and_stop();
    checkpoint_failure_pauses();
    best_written_at_eval();
    checkpoint_refused_says_why();
    diverges_finite();
    checkpoint_retries_by_itself();
    unrecorded_is_reported();
    nonfinite_weights_named();
    time_budget_stops_and_records();
    time_marks_leave_evaluations_out();
    schedule_follows_the_clock();
    weight_decay_on_matrices();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return check_summary();
}
