/* test_trainer.c — the trainer end to end on the bundled Tiny Shakespeare: a short run
 * emits steps, evaluations, gate statistics, samples, checkpoints and a final status;
 * resuming from a checkpoint reproduces the uninterrupted run's losses bit for bit;
 * a huge learning rate ends as `diverged` naming a tensor; pause/stop work; a
 * checkpoint that cannot be written pauses the run instead of killing it. */
#include "check.h"
#include "checkpoint.h"
#include "err.h"
#include "sysinfo.h"
#include "trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 1;
    run_and_resume();
    diverges();
    pause_and_stop();
    checkpoint_failure_pauses();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return check_summary();
}
