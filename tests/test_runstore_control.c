/* test_runstore_control.c — controlling a run through the store and forking it
 * (core/store/runstore_control.c, runstore_jobs.c, core/train/recorder.c's polling,
 * core/train/run_fork.c and run_launch's fork_from): requests and answers, a row with an
 * unknown verb answered as ignored, the jobs board's states, a live run paused, resumed
 * and stopped by requests from another connection, a fork at a checkpoint continuing its
 * parent exactly (same settings) and recorded with its lineage. A tiny model, fixed seed,
 * one thread. Waits are bounded loops on the store (no timing thresholds). */
#include "runstore_util.h"

#include "run_fork.h"
#include "run_launch.h"
#include "runstore_control.h"
#include "runstore_jobs.h"

#include <stdio.h>
#include <stdlib.h>

static char path[600];

static void tiny(Config *c, long steps)
{
    config_defaults(c);
    c->d = 16; c->nhid = 32; c->layers = 1; c->bptt = 16; c->batch = 4; c->steps = steps;
    c->log_every = 5; c->eval_every = 0; c->eval_batches = 2; c->sample_every = 0;
    c->checkpoint_every = 10; c->keep_checkpoints = 100; c->threads = 1;
    snprintf(c->runs_dir, sizeof c->runs_dir, "%.200s/runs", tmpdir);
}

static void test_requests(void)
{
    RunStore *s;
    char err[LM_ERR_LEN];
    db_path(path, sizeof path, "ctl.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION, "the newest schema");
    CHECK(runstore_control_migrate(s, err) == LM_OK, "the step is idempotent: %s", err);
    long run = new_run(s, "a", "lstm", "steps=100\n", NULL), id = 0, id2 = 0;
    CHECK(runstore_control_request(s, run, "explode", &id, err) == LM_EARG &&
          strstr(err, "pause, resume or stop"), "bad verb: %s", err);
    CHECK(runstore_control_request(s, 999, "stop", &id, err) == LM_EARG, "no run: %s", err);
    CHECK(runstore_control_request(s, run, "pause", &id, err) == LM_OK, "request: %s", err);
    CHECK(runstore_control_request(s, run, "stop", &id2, err) == LM_OK && id2 > id, "second");
    RunControl c[4];
    int n = 0;
    CHECK(runstore_control_pending(s, run, c, 4, &n, err) == LM_OK && n == 2, "pending %d", n);
    CHECK(n == 2 && c[0].id == id && !strcmp(c[0].verb, "pause") && c[0].acknowledged_at == 0 &&
          c[0].requester_pid == (long)getpid() && c[0].requested_at > 0, "oldest first");
    CHECK(runstore_control_answer(s, id, "done", err) == LM_OK, "answer: %s", err);
    CHECK(runstore_control_answer(s, id, "again", err) == LM_OK, "answer twice: %s", err);
    RunControl g;
    CHECK(runstore_control_get(s, id, &g, err) == LM_OK && g.acknowledged_at > 0 &&
          !strcmp(g.reply, "done"), "the first answer stays: '%s'", g.reply);
    CHECK(runstore_control_pending(s, run, c, 4, &n, err) == LM_OK && n == 1 && c[0].id == id2,
          "answered requests are no longer pending");
    CHECK(runstore_control_get(s, 12345, &g, err) == LM_EARG, "no such request");
    /* a row no lmlab wrote: data like any other, never SQL */
    char sql[300];
    snprintf(sql, sizeof sql, "INSERT INTO run_control(run_id, verb, requested_at) VALUES(%ld,"
             " 'x''); DROP TABLE runs; --', 1)", run);
    CHECK(q_exec(path, sql) == 0, "raw row");
    CHECK(runstore_control_pending(s, run, c, 4, &n, err) == LM_OK && n == 2 &&
          runstore_control_verb(c[1].verb) < 0, "the odd verb is read as data");
    CHECK(runstore_delete_run(s, run, 0, err) == LM_OK, "delete: %s", err);
    CHECK(q_long(path, "SELECT count(*) FROM run_control") == 0, "controls go with the run");
    runstore_close(s);
}

static void test_jobs(void)
{
    RunStore *s;
    char err[LM_ERR_LEN];
    db_path(path, sizeof path, "jobs.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "lstm", "steps=100\n", NULL);
    long b = new_run(s, "b", "lstm", "epochs=2\n", NULL);
    long done = new_run(s, "done", "lstm", "steps=10\n", NULL);
    long far = new_run(s, "far", "lstm", "steps=10\n", NULL);
    for (long k = 1; k <= 40; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, a, &m, err);
    }
    runstore_run_set_status(s, b, "paused", NULL, err);
    runstore_run_set_status(s, done, "finished", NULL, err);
    char sql[200];
    snprintf(sql, sizeof sql, "UPDATE runs SET host='elsewhere', heartbeat=1 WHERE id=%ld", far);
    q_exec(path, sql);
    JobRow *j = NULL;
    int n = 0;
    CHECK(runstore_jobs(s, &j, &n, err) == LM_OK && n == 3, "jobs: %d (%s)", n, err);
    if (n == 3) {
        CHECK(j[0].run.id == far && j[0].state == JOB_STALE, "silent owner on another host: stale");
        CHECK(j[1].run.id == b && j[1].state == JOB_PAUSED && j[1].total_steps == 0 &&
              isnan(j[1].eta), "paused, epochs: no total");
        CHECK(j[2].run.id == a && j[2].state == JOB_RUNNING && j[2].last.step == 40 &&
              j[2].total_steps == 100, "running a: step %ld", j[2].last.step);
        CHECK(j[2].n_spark == JOBS_SPARK && j[2].spark_step[JOBS_SPARK - 1] == 40 &&
              j[2].spark_step[0] == 40 - JOBS_SPARK + 1, "the newest losses, oldest first");
        CHECK(j[2].spark[JOBS_SPARK - 1] == step_of(40).loss, "newest loss");
        /* ETA: elapsed 0.4 s for 40 steps, 60 to go (tolerance: rounding only) */
        CHECK(fabs(j[2].eta - 0.4 / 40 * 60) < 1e-9, "eta %g", j[2].eta);
    }
    runstore_jobs_free(j, n);
    runstore_close(s);
}

/* Waits (bounded) until request id is answered; its reply, "" when none came. */
static const char *answered(RunStore *s, long id)
{
    static RunControl c;
    char err[LM_ERR_LEN];
    for (int i = 0; i < 600; i++) {   /* 60 s at most: the recorder polls every second */
        if (runstore_control_get(s, id, &c, err) == LM_OK && c.acknowledged_at > 0)
            return c.reply;
        usleep(100000);
    }
    return "";
}

static void test_live_control(void)
{
    RunStore *s, *other;
    char err[LM_ERR_LEN];
    db_path(path, sizeof path, "live.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    CHECK(runstore_open(path, &other, err) == LM_OK, "second connection: %s", err);
    Config c;
    tiny(&c, 1000000);
    RunLaunchOptions o = {.db_path = path, .store = s};
    RunHandle h;
    CHECK(run_launch(&c, &o, &h, err) == LM_OK, "launch: %s", err);
    long id;
    CHECK(runstore_control_request(other, h.run_id, "pause", &id, err) == LM_OK, "%s", err);
    const char *r = answered(other, id);
    CHECK(strstr(r, "pauses after its current step"), "pause answered: '%s'", r);
    long said = -1, paused_at = -2;   /* issue 33 item 7: never a step past the pause */
    const char *at = strstr(r, "at step ");
    if (at) said = atol(at + 8);
    for (int i = 0; i < 600 && trainer_status(h.trainer) != TRAINER_PAUSED; i++) usleep(100000);
    CHECK(trainer_status(h.trainer) == TRAINER_PAUSED, "paused");
    char sql[200];
    snprintf(sql, sizeof sql, "INSERT INTO run_control(run_id, verb, requested_at) VALUES(%ld,"
             " 'explode', 1)", h.run_id);
    CHECK(q_exec(path, sql) == SQLITE_OK, "raw insert beside the live recorder");
    long bad = 0;
    CHECK(q_long(path, "SELECT max(id) FROM run_control") > id, "raw row");
    bad = q_long(path, "SELECT max(id) FROM run_control");
    r = answered(other, bad);
    CHECK(strstr(r, "unknown control 'explode': ignored"), "bad verb answered: '%s'", r);
    CHECK(trainer_status(h.trainer) == TRAINER_PAUSED, "a bad row changes nothing");
    CHECK(runstore_control_request(other, h.run_id, "pause", &id, err) == LM_OK, "%s", err);
    r = answered(other, id);
    CHECK(strstr(r, "already paused"), "pause twice: '%s'", r);
    if (strstr(r, "at step ")) paused_at = atol(strstr(r, "at step ") + 8);
    CHECK(said >= 0 && said <= paused_at, "the pause answer named step %ld, the run paused at "
          "step %ld", said, paused_at);
    CHECK(runstore_control_request(other, h.run_id, "resume", &id, err) == LM_OK, "%s", err);
    r = answered(other, id);
    CHECK(strstr(r, "resumed"), "resume answered: '%s'", r);
    CHECK(runstore_control_request(other, h.run_id, "stop", &id, err) == LM_OK, "%s", err);
    r = answered(other, id);
    CHECK(strstr(r, "stops after its current step"), "stop answered: '%s'", r);
    run_launch_close(&h, 0);   /* ends by the request alone */
    RunRow row;
    CHECK(runstore_get(other, h.run_id, &row, err) == LM_OK && !strcmp(row.status, "stopped"),
          "recorded as stopped: %s", row.status);
    runstore_row_free(&row);
    runstore_close(other);
    runstore_close(s);
}

static void test_fork(void)
{
    RunStore *s;
    char err[LM_ERR_LEN], ck[1200], have[256];
    db_path(path, sizeof path, "fork.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    Config c;
    tiny(&c, 30);
    RunLaunchOptions o = {.db_path = path, .store = s};
    RunHandle h;
    CHECK(run_launch(&c, &o, &h, err) == LM_OK, "parent: %s", err);
    long parent = h.run_id;
    char dir[600];
    snprintf(dir, sizeof dir, "%s", h.run_dir);
    run_launch_close(&h, 0);
    CHECK(run_fork_find(dir, 15, ck, sizeof ck, have, sizeof have) == -1 &&
          !strcmp(have, "10, 20, 30"), "no checkpoint at 15; have: %s", have);
    CHECK(run_fork_find(dir, 10, ck, sizeof ck, have, sizeof have) == 0 && strstr(ck, "step-"),
          "step 10: %s", ck);
    CHECK(run_fork_fixed_key("batch") && !run_fork_fixed_key("lr"), "fixed keys");
    RunRow p;
    runstore_get(s, parent, &p, err);
    RunLaunchOptions fo = {.db_path = path, .store = s, .fork_from = ck, .data_hash = p.data_hash,
                           .parent_run = parent, .parent_step = 10};
    CHECK(run_launch(&c, &fo, &h, err) == LM_OK, "fork: %s", err);
    long child = h.run_id;
    run_launch_close(&h, 0);
    RunRow r;
    CHECK(runstore_get(s, child, &r, err) == LM_OK && r.parent_run == parent &&
          r.parent_step == 10 && r.last_step == 30, "lineage recorded: %ld@%ld", r.parent_run,
          r.parent_step);
    runstore_row_free(&r);
    SeriesPoint *a = NULL, *b = NULL, *l = NULL;
    int na = 0, nb = 0, nl = 0;
    runstore_series(s, parent, "loss", &a, &na, err);
    runstore_series(s, child, "loss", &b, &nb, err);
    CHECK(nb > 0 && b[0].step == 15, "the fork's steps start after 10: %ld", nb ? b[0].step : -1);
    /* same settings: the fork repeats the parent's steps 11..30 exactly (state restored) */
    for (int i = 0, k = 0; i < na; i++) {
        if (a[i].step <= 10) continue;
        CHECK(k < nb && b[k].step == a[i].step && b[k].value == a[i].value,
              "step %ld: parent %.6f fork %.6f", a[i].step, a[i].value, k < nb ? b[k].value : NAN);
        k++;
    }
    CHECK(runstore_series_lineage(s, child, "loss", &l, &nl, err) == LM_OK && nl == na,
          "lineage series %d points, parent %d", nl, na);
    for (int i = 0; i < nl && i < na; i++)
        CHECK(l[i].step == a[i].step && (l[i].step > 10 ? l[i].value == b[i - 2].value
                                                         : l[i].value == a[i].value),
              "lineage point %d", i);
    free(a);
    free(b);
    free(l);
    /* changed data hash: refused before anything is recorded */
    RunLaunchOptions bad = fo;
    bad.data_hash = "0000000000000000";
    CHECK(run_launch(&c, &bad, &h, err) == LM_EFORMAT && strstr(err, "dataset changed"),
          "changed data: %s", err);
    runstore_row_free(&p);
    runstore_close(s);
}

static void run_all(void)
{
    test_requests();
    test_jobs();
    test_live_control();
    test_fork();
}

int main(void) { return runstore_test_main("run control", run_all); }
