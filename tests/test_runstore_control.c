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

/* The query plan of sql on the test's store, its details joined by ';'. */
static void query_plan(const char *sql, char *out, size_t cap)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    char q[600];
    size_t k = 0;
    out[0] = 0;
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    if (sqlite3_open(path, &db) != SQLITE_OK) return;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW && k + 1 < cap)
            k += (size_t)snprintf(out + k, cap - k, "%s;", (const char *)sqlite3_column_text(st, 3));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

/* A row written by sqlite3 directly, addressed to run's current owner (the columns a
 * request copies from the run's row), with verb given as an SQL expression. */
static long craft_row(long run, const char *verb_sql)
{
    char sql[600];
    snprintf(sql, sizeof sql, "INSERT INTO run_control(run_id, verb, requested_at, owner_pid,"
             " owner_host, owner_since) SELECT id, %s, 1, pid, host, owner_since FROM runs"
             " WHERE id=%ld", verb_sql, run);
    CHECK(q_exec(path, sql) == 0, "crafted row %s", verb_sql);
    return q_long(path, "SELECT max(id) FROM run_control");
}

static void test_requests(void)
{
    RunStore *s;
    char err[LM_ERR_LEN];
    db_path(path, sizeof path, "ctl.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION, "the newest schema");
    CHECK(runstore_control_migrate(s, err) == LM_OK, "the step is idempotent: %s", err);
    CHECK(runstore_control_migrate_owner(s, err) == LM_OK, "step 5 is idempotent: %s", err);
    long run = new_run(s, "a", "lstm", "steps=100\n", NULL), id = 0, id2 = 0;
    RunOwner me;
    CHECK(runstore_run_owner(s, run, &me, err) == LM_OK && me.pid == (long)getpid() &&
          me.since > 0 && !strcmp(me.host, runstore_host(s)), "the owner: %s", err);
    CHECK(runstore_control_request(s, run, "explode", &id, err) == LM_EARG &&
          strstr(err, "pause, resume, stop or checkpoint"), "bad verb: %s", err);
    CHECK(runstore_control_request(s, 999, "stop", &id, err) == LM_EARG, "no run: %s", err);
    CHECK(runstore_control_request(s, run, "pause", &id, err) == LM_OK, "request: %s", err);
    CHECK(runstore_control_request(s, run, "stop", &id2, err) == LM_OK && id2 > id, "second");
    RunControl c, g;
    int found = 0;
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && found && c.id == id2
          && c.verb_id == RUNCTL_STOP && c.acknowledged_at == 0 && c.owner.pid == me.pid &&
          c.requester_pid == (long)getpid() && c.requested_at > 0, "the newest first");
    CHECK(runstore_control_get(s, id, &g, err) == LM_OK && g.acknowledged_at > 0 &&
          strstr(g.reply, "superseded by request #"), "the older one: '%s'", g.reply);
    CHECK(runstore_control_answer(s, id2, "done", err) == LM_OK, "answer: %s", err);
    CHECK(runstore_control_answer(s, id2, "again", err) == LM_OK, "answer twice: %s", err);
    CHECK(runstore_control_get(s, id2, &g, err) == LM_OK && !strcmp(g.reply, "done"),
          "the first answer stays: '%s'", g.reply);
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && !found,
          "answered requests are no longer taken");
    CHECK(runstore_control_get(s, 12345, &g, err) == LM_EARG, "no such request");

    /* crafted rows, written by sqlite3 directly */
    long nul = craft_row(run, "CAST(X'73746f7000787878' AS TEXT)");   /* "stop\0xxx" */
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && found && c.id == nul
          && c.verb_id < 0 && !strcmp(c.verb, "stop\\x00xxx"), "stop+NUL is no verb: '%s'",
          c.verb);
    runstore_control_answer(s, nul, "x", err);
    long blob = craft_row(run, "X'73746f70'");                              /* a blob "stop" */
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && found &&
          c.id == blob && c.verb_id < 0, "a blob is no verb");
    runstore_control_answer(s, blob, "x", err);
    long longv = craft_row(run, "'stop' || printf('%.*c', 100, 'p')");
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && found &&
          c.id == longv && c.verb_id < 0 && strlen(c.verb) < sizeof c.verb &&
          strstr(c.verb, "..."), "a long verb is no verb, shown cut: '%s'", c.verb);
    runstore_control_answer(s, longv, "x", err);
    long sqlv = craft_row(run, "'x''); DROP TABLE runs; --'");
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && found &&
          c.id == sqlv && c.verb_id < 0, "the odd verb is read as data");
    runstore_control_answer(s, sqlv, "x", err);
    /* rows for nobody: no owner (an older store's or a hand-written row), a dead owner, a
     * copy of the store on another host, an earlier owner of the same pid */
    char sql[600];
    snprintf(sql, sizeof sql,
             "INSERT INTO run_control(run_id, verb, requested_at) VALUES(%ld, 'stop', 1);"
             "INSERT INTO run_control(run_id, verb, requested_at, owner_pid, owner_host,"
             " owner_since) SELECT id, 'stop', 1, 999999, host, owner_since FROM runs WHERE id=%ld;"
             "INSERT INTO run_control(run_id, verb, requested_at, owner_pid, owner_host,"
             " owner_since) SELECT id, 'stop', 1, pid, 'elsewhere', owner_since FROM runs WHERE id=%ld;"
             "INSERT INTO run_control(run_id, verb, requested_at, owner_pid, owner_host,"
             " owner_since) SELECT id, 'stop', 1, pid, host, owner_since - 1 FROM runs WHERE id=%ld;",
             run, run, run, run);
    CHECK(q_exec(path, sql) == 0, "rows for other owners");
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && !found,
          "a request for another owner is never taken");

    /* a flood: 10,000 rows for ids that do not exist, unknown verbs, other owners; the
     * owner's one query finds its request through the index and reads none of them */
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 10000)"
             " INSERT INTO run_control(run_id, verb, requested_at, owner_pid, owner_host,"
             " owner_since) SELECT CASE i %% 3 WHEN 0 THEN 100000 + i ELSE %ld END,"
             " CASE i %% 2 WHEN 0 THEN 'junk' || i ELSE 'stop' END, 1,"
             " CASE i %% 5 WHEN 0 THEN NULL ELSE 4000000 + i END, 'h', 1 FROM k", run);
    CHECK(q_exec(path, sql) == 0, "the flood");
    CHECK(runstore_control_request(s, run, "stop", &id, err) == LM_OK, "real: %s", err);
    CHECK(runstore_control_take(s, run, &me, &c, &found, err) == LM_OK && found && c.id == id,
          "the real request is found in one poll among 10,000 others");
    char plan[400];
    query_plan("SELECT id FROM run_control WHERE run_id=1 AND owner_pid=2 AND owner_host='h'"
               " AND owner_since=3 AND acknowledged_at IS NULL ORDER BY id DESC LIMIT 1",
               plan, sizeof plan);
    CHECK(strstr(plan, "USING COVERING INDEX run_control_owner") ||
          strstr(plan, "USING INDEX run_control_owner"), "the poll is one index probe: %s", plan);
    CHECK(!strstr(plan, "TEMP B-TREE"), "no sort of the matching rows: %s", plan);
    CHECK(runstore_control_answer(s, id, "stopped", err) == LM_OK, "answer");

    /* a new owner (the run resumed): requests to the one before expire, visibly */
    CHECK(runstore_control_request(s, run, "pause", &id, err) == LM_OK, "%s", err);
    usleep(2000);
    CHECK(runstore_run_set_status(s, run, "stopped", NULL, err) == LM_OK, "%s", err);
    CHECK(runstore_run_claim(s, run, err) == LM_OK, "claim: %s", err);
    CHECK(runstore_control_get(s, id, &g, err) == LM_OK && g.acknowledged_at > 0 &&
          strstr(g.reply, "expired: addressed to an earlier owner"), "expired: '%s'", g.reply);
    RunOwner now;
    CHECK(runstore_run_owner(s, run, &now, err) == LM_OK && now.since > me.since,
          "the new owner took the run later");
    CHECK(runstore_control_take(s, run, &now, &c, &found, err) == LM_OK && !found,
          "the new owner reads no request of the old one");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM run_control WHERE acknowledged_at IS NULL"
             " AND run_id=%ld", run);
    CHECK(q_long(path, sql) == 0, "every request of the run is answered or expired");
    /* a row written for a run id that does not exist yet dies when the run is created */
    long next = run + 1;
    snprintf(sql, sizeof sql, "INSERT INTO run_control(run_id, verb, requested_at, owner_pid,"
             " owner_host, owner_since) VALUES(%ld, 'stop', 1, %ld, '%s', 0)", next,
             (long)getpid(), runstore_host(s));
    CHECK(q_exec(path, sql) == 0, "a row for run %ld", next);
    long early = q_long(path, "SELECT max(id) FROM run_control");
    CHECK(new_run(s, "b", "lstm", "steps=100\n", NULL) == next, "run %ld", next);
    CHECK(runstore_control_get(s, early, &g, err) == LM_OK &&
          strstr(g.reply, "expired: written before the run existed"), "'%s'", g.reply);
    CHECK(runstore_run_owner(s, next, &now, err) == LM_OK &&
          runstore_control_take(s, next, &now, &c, &found, err) == LM_OK && !found,
          "the new run's owner reads nothing");
    CHECK(runstore_delete_run(s, run, 0, err) == LM_OK, "delete: %s", err);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM run_control WHERE run_id=%ld", run);
    CHECK(q_long(path, sql) == 0, "controls go with the run");
    runstore_close(s);
}

/* A store of schema 4 (no owner columns, an unanswered request) upgraded by step 5: the
 * request is answered as expired, the owner index exists, and a run's owner is set. */
static void test_upgrade_from_4(void)
{
    RunStore *s;
    char err[LM_ERR_LEN];
    db_path(path, sizeof path, "v4.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long run = new_run(s, "a", "lstm", "steps=100\n", NULL);
    runstore_close(s);
    char sql[600];
    snprintf(sql, sizeof sql, "DROP INDEX run_control_owner;"
             "ALTER TABLE run_control DROP COLUMN owner_pid;"
             "ALTER TABLE run_control DROP COLUMN owner_host;"
             "ALTER TABLE run_control DROP COLUMN owner_since;"
             "ALTER TABLE runs DROP COLUMN owner_since;"
             "INSERT INTO run_control(run_id, verb, requested_at) VALUES(%ld, 'stop', 1);"
             "PRAGMA user_version = 4;", run);
    CHECK(q_exec(path, sql) == 0, "made a schema-4 store");
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION, "upgraded to the newest schema");
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE name='run_control_owner'") == 1,
          "the owner index");
    char reply[300];
    q_text(path, "SELECT reply FROM run_control", reply, sizeof reply);
    CHECK(strstr(reply, "expired: made before requests were addressed"), "expired: %s", reply);
    RunOwner o;
    CHECK(runstore_run_owner(s, run, &o, err) == LM_OK && o.since > 0, "owner_since filled");
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
    long bad = craft_row(h.run_id, "'explode'");   /* beside the live recorder */
    CHECK(bad > id, "raw row");
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

/* Issue 46 item 6: `resume` answered with the recorder's last logged step ("resumed at step
 * 100" for a run at step 500); it names the step the run continues from, the trainer's. */
static void test_resume_names_trainer_step(void)
{
    RunStore *s, *other;
    char err[LM_ERR_LEN];
    db_path(path, sizeof path, "resume_step.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    CHECK(runstore_open(path, &other, err) == LM_OK, "second connection: %s", err);
    Config c;
    tiny(&c, 1000000);
    c.log_every = 1000000;   /* no step logged: the recorder's view stays at 0 */
    c.checkpoint_every = 0;
    RunLaunchOptions o = {.db_path = path, .store = s};
    RunHandle h;
    CHECK(run_launch(&c, &o, &h, err) == LM_OK, "launch: %s", err);
    for (int i = 0; i < 600 && trainer_step(h.trainer) < 1; i++) usleep(100000);
    long id;
    CHECK(runstore_control_request(other, h.run_id, "pause", &id, err) == LM_OK, "%s", err);
    answered(other, id);
    for (int i = 0; i < 600 && trainer_status(h.trainer) != TRAINER_PAUSED; i++) usleep(100000);
    CHECK(trainer_status(h.trainer) == TRAINER_PAUSED, "paused");
    long at = trainer_step(h.trainer);
    CHECK(at >= 1, "trained before the pause: step %ld", at);
    CHECK(runstore_control_request(other, h.run_id, "resume", &id, err) == LM_OK, "%s", err);
    const char *r = answered(other, id);
    char want[96];
    snprintf(want, sizeof want, "resumed at step %ld", at);
    CHECK(strstr(r, want) != NULL, "resume answered '%s', the run was paused at step %ld", r, at);
    CHECK(runstore_control_request(other, h.run_id, "stop", &id, err) == LM_OK, "%s", err);
    answered(other, id);
    run_launch_close(&h, 0);
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
    test_upgrade_from_4();
    test_jobs();
    test_live_control();
    test_resume_names_trainer_step();
    test_fork();
}

int main(void) { return runstore_test_main("run control", run_all); }
