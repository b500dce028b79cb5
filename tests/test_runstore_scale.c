/* test_runstore_scale.c — the store at scale (docs/hostile8.md), checked by counts and
 * states, never by time: one open repairs every dead run (it marked 64 at a time); a
 * removal leaves every listing in one transaction and deletes its rows in bounded ones,
 * another writer writing between them, and a removal killed half way is carried on by
 * the next open and the next removal, leaving no row of the run behind; compare reads a
 * run's last rows for its speed and two runs' common steps for parity, not every row. */
#include "runstore_util.h"
#include "runrecord.h"
#include "runstore_control.h"
#include "runstore_notes.h"
#include "runstore_series.h"

static long q_count(const char *path, const char *fmt, long id)
{
    char sql[300];
    snprintf(sql, sizeof sql, fmt, id);
    return q_long(path, sql);
}

/* A pid that no process has (a reaped child's). */
static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

static void repair_all_at_one_open(void)
{
    char path[512], err[LM_ERR_LEN], sql[200];
    RunStore *s;
    db_path(path, sizeof path, "repair.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    for (int i = 0; i < 150; i++) new_run(s, "dead", "msa", "", NULL);
    runstore_close(s);
    snprintf(sql, sizeof sql, "UPDATE runs SET status='running', pid=%ld", dead_pid());
    CHECK(q_exec(path, sql) == SQLITE_OK, "runs of a dead process");
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    runstore_close(s);
    long left = q_long(path, "SELECT count(*) FROM runs WHERE status='running'");
    CHECK(left == 0, "one open left %ld of 150 dead runs running", left);
    CHECK(q_long(path, "SELECT count(*) FROM runs WHERE status='interrupted'") == 150,
          "all 150 interrupted");
}

/* Run id with n logged steps, 10 evaluations, a named series of 30 points, a note. */
static void fill_run(RunStore *s, long id, long n)
{
    char err[LM_ERR_LEN];
    runstore_set_autoflush(s, 1 << 30, 1e9);
    for (long k = 1; k <= n; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, id, &m, err);
    }
    for (long k = 1; k <= 10; k++) {
        EvalMetric e = {.step = k, .loss = 3.0 - 0.1 * (double)k};
        snprintf(e.split, sizeof e.split, "valid");
        runstore_log_eval(s, id, &e, err);
    }
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);
    NamedScalar v = {.name = "grad/w", .value = 1};
    for (long k = 1; k <= 30; k++) runstore_series_log(s, id, k, &v, 1, err);
    long note = 0;
    CHECK(runstore_note_add(s, id, 0, "kept", &note, err) == LM_OK, "note: %s", err);
    runstore_run_set_status(s, id, "finished", NULL, err);
}

static void removal_in_steps(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s, *w;
    db_path(path, sizeof path, "remove.db");
    CHECK(runstore_open(path, &s, err) == LM_OK && runstore_open(path, &w, err) == LM_OK,
          "open: %s", err);
    if (!s || !w) return;
    long a = new_run(s, "big", "msa", "", NULL), c = new_run(s, "other", "msa", "", NULL);
    long fork = new_run(s, "fork", "msa", "", NULL);
    fill_run(s, a, 25000);
    fill_run(s, c, 100);
    char sql[200];
    snprintf(sql, sizeof sql, "UPDATE runs SET parent_run=%ld, parent_step=5 WHERE id=%ld", a,
             fork);
    CHECK(q_exec(path, sql) == SQLITE_OK, "a fork of the big run");

    CHECK(runstore_remove_mark(s, a, err) == LM_OK, "mark: %s", err);
    RunRow r;
    CHECK(runstore_get(s, a, &r, err) == LM_EARG, "the marked run is still there");
    CHECK(q_count(path, "SELECT count(*) FROM runs WHERE id=%ld", a) == 0, "runs row gone");
    CHECK(q_count(path, "SELECT coalesce(parent_run, 0) FROM runs WHERE id=%ld", fork) == 0,
          "the fork's parent cleared");
    CHECK(q_count(path, "SELECT count(*) FROM notes WHERE run_id=%ld", a) == 0 &&
          q_count(path, "SELECT count(*) FROM evals WHERE run_id=%ld", a) == 0,
          "small rows gone with the mark");
    long rows = q_count(path, "SELECT count(*) FROM metrics WHERE run_id=%ld", a);
    CHECK(rows == 25000, "metrics deleted in the mark: %ld left", rows);

    int pending = 1, steps = 0;
    while (pending && steps < 100) {   /* bounded transactions; another writer between */
        CHECK(runstore_remove_step(s, 4000, &pending, err) == LM_OK, "step: %s", err);
        long now = q_count(path, "SELECT count(*) FROM metrics WHERE run_id=%ld", a);
        CHECK(rows - now <= 4000, "one step deleted %ld rows", rows - now);
        rows = now;
        StepMetric m = step_of(1000 + steps++);
        CHECK(runstore_log_step(w, c, &m, err) == LM_OK && runstore_flush(w, err) == LM_OK,
              "another writer between the steps: %s", err);
    }
    CHECK(steps >= 7 && !pending, "%d steps, pending %d", steps, pending);
    CHECK(q_count(path, "SELECT count(*) FROM metrics WHERE run_id=%ld", a) == 0 &&
          q_count(path, "SELECT count(*) FROM series_names WHERE run_id=%ld", a) == 0 &&
          q_long(path, "SELECT count(*) FROM series_points") == 30,
          "no row of the removed run is left, the other run's series kept");
    CHECK(q_long(path, "SELECT count(*) FROM store_meta WHERE key LIKE 'removing/%'") == 0,
          "no removal pending");
    CHECK(q_long(path, "SELECT count(*) FROM pragma_foreign_key_check") == 0, "no orphans");
    CHECK(q_count(path, "SELECT count(*) FROM metrics WHERE run_id=%ld", c) == 100 + steps,
          "the other run's rows all there");
    runstore_close(w);
    runstore_close(s);
}

/* A removal killed after its mark: the next open goes on, the next removal finishes it. */
static void killed_removal_carried_on(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    int up[2];
    db_path(path, sizeof path, "killed.db");
    CHECK(runstore_open(path, &s, err) == LM_OK && pipe(up) == 0, "open: %s", err);
    if (!s) return;
    long a = new_run(s, "big", "msa", "", NULL), b = new_run(s, "small", "msa", "", NULL);
    fill_run(s, a, 20000);
    fill_run(s, b, 10);
    runstore_close(s);
    pid_t child = fork();
    if (child == 0) {   /* marks, says so, then deletes slowly until it is killed */
        RunStore *c;
        if (runstore_open(path, &c, err) || runstore_remove_mark(c, a, err)) _exit(1);
        if (write(up[1], "m", 1) != 1) _exit(1);
        for (int pending = 1; pending;) runstore_remove_step(c, 500, &pending, err);
        _exit(0);
    }
    char got = 0;
    CHECK(read(up[0], &got, 1) == 1 && got == 'm', "the child marked the run");
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(up[0]), close(up[1]);
    long left = q_count(path, "SELECT count(*) FROM metrics WHERE run_id=%ld", a);
    CHECK(q_count(path, "SELECT count(*) FROM runs WHERE id=%ld", a) == 0, "gone from runs");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open after the kill: %s", err);
    if (!s) return;
    long after_open = q_count(path, "SELECT count(*) FROM metrics WHERE run_id=%ld", a);
    CHECK(left == 0 || after_open < left, "the open carried it on: %ld -> %ld", left,
          after_open);
    CHECK(runstore_delete_run(s, b, 0, err) == LM_OK, "the next removal: %s", err);
    CHECK(q_count(path, "SELECT count(*) FROM metrics WHERE run_id=%ld", a) == 0 &&
          q_long(path, "SELECT count(*) FROM pragma_foreign_key_check") == 0 &&
          q_long(path, "SELECT count(*) FROM store_meta WHERE key LIKE 'removing/%'") == 0,
          "the next removal finished the killed one");
    runstore_close(s);
}

/* Compare's reads (docs/hostile8.md: each series read whole, several times): a run's own
 * speed reads its last rows only, and parity streams two runs up to the last step both
 * have, never past it. Counted in points handed out, not in time. */
static void compare_reads_what_it_needs(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "compare.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long a = new_run(s, "long", "msa", "", NULL), b = new_run(s, "short", "msa", "", NULL);
    long c = new_run(s, "differs", "msa", "", NULL);
    runstore_set_autoflush(s, 1 << 30, 1e9);
    for (long k = 1; k <= 3000; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, a, &m, err);
        if (k <= 1000) runstore_log_step(s, b, &m, err);
        if (k == 700) m.loss += 1;
        if (k <= 1000) runstore_log_step(s, c, &m, err);
    }
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);
    RunRow ra, rb, rc;
    runstore_get(s, a, &ra, err), runstore_get(s, b, &rb, err), runstore_get(s, c, &rc, err);
    RunWork w;
    long r0 = runstore_rows_read(s);
    CHECK(runrecord_work(s, &ra, &w, err) == LM_OK && w.steps == 3000 &&
          w.tokens == step_of(3000).tokens, "work: %s, %ld steps", err, w.steps);
    CHECK(runstore_rows_read(s) - r0 <= 2, "a run's speed read %ld points",
          runstore_rows_read(s) - r0);
    RunParity p;
    r0 = runstore_rows_read(s);
    CHECK(runrecord_parity(s, &ra, &rb, &p, err) == LM_OK && p.identical && p.common == 1000 &&
          p.last_a == 3000 && p.last_b == 1000, "parity: %s, common %ld", err, p.common);
    long read = runstore_rows_read(s) - r0;   /* loss, lr, grad_norm: 1000 + 1 of a, 1000 of b */
    CHECK(read <= 3 * (2 * 1000 + 1 + 2), "parity of 3000 and 1000 steps read %ld points", read);
    CHECK(runrecord_parity(s, &ra, &rc, &p, err) == LM_OK && !p.identical && p.step == 700 &&
          !strcmp(p.what, "loss") && p.b == p.a + 1, "parted at %ld (%s)", p.step, p.what);
    runstore_row_free(&ra), runstore_row_free(&rb), runstore_row_free(&rc);
    runstore_close(s);
}

/* A fork's curve kept to a chart's points: with buckets enough, every point of its
 * lineage (the parent's up to the fork step, then its own), as the whole read gives. */
static void lineage_kept_whole_when_short(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "lineage.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long a = new_run(s, "parent", "msa", "", NULL), b = new_run(s, "fork", "msa", "", NULL);
    runstore_set_autoflush(s, 1 << 30, 1e9);
    for (long k = 1; k <= 300; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, a, &m, err);
        m.loss += 1;
        if (k > 100) runstore_log_step(s, b, &m, err);
    }
    CHECK(runstore_flush(s, err) == LM_OK &&
          runstore_set_parent(s, b, a, 100, RUNSTORE_PARENT_FORK, err) == LM_OK, "fork: %s", err);
    SeriesPoint *w = NULL, *m4 = NULL;
    int nw = 0, nm = 0;
    CHECK(runstore_series_lineage(s, b, "loss", &w, &nw, err) == LM_OK && nw == 300, "whole");
    CHECK(runstore_series_lineage_m4(s, b, "loss", 150, &m4, &nm, err) == LM_OK && nm == nw &&
          !memcmp(w, m4, (size_t)nw * sizeof *w), "m4 with 150 buckets of 300 steps: %d", nm);
    free(m4);
    CHECK(runstore_series_lineage_m4(s, b, "loss", 10, &m4, &nm, err) == LM_OK && nm <= 50 &&
          m4[0].step == 1 && m4[nm - 1].step == 300, "10 buckets: %d points", nm);
    free(w), free(m4);
    runstore_close(s);
}

/* A run started with init_from= from another's weights counts its own steps from 0: its
 * curve is its own, not its parent's continued (the history view drew the parent's loss
 * for it, its own steps all at or before the parent's step), and the row says which. */
static void init_from_is_not_a_fork(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "lineage_init.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long a = new_run(s, "parent", "msa", "", NULL), b = new_run(s, "tuned", "msa", "", NULL);
    for (long k = 1; k <= 200; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, a, &m, err);
        m.loss += 1;
        runstore_log_step(s, b, &m, err);
    }
    CHECK(runstore_flush(s, err) == LM_OK &&
          runstore_set_parent(s, b, a, 200, RUNSTORE_PARENT_INIT, err) == LM_OK, "init: %s", err);
    SeriesPoint *w = NULL, *own = NULL;
    int nw = 0, no = 0;
    CHECK(runstore_series_lineage(s, b, "loss", &w, &nw, err) == LM_OK &&
          runstore_series(s, b, "loss", &own, &no, err) == LM_OK && nw == no && no == 200 &&
          !memcmp(w, own, (size_t)no * sizeof *w), "its own 200 points: %d of %d", nw, no);
    free(w), free(own);
    CHECK(runstore_series_lineage_m4(s, b, "loss", 150, &w, &nw, err) == LM_OK && nw > 0 &&
          w[0].value == step_of(1).loss + 1, "m4: its own curve (%d points)", nw);
    free(w);
    RunRow r;
    CHECK(runstore_get(s, b, &r, err) == LM_OK && r.parent_run == a && r.parent_step == 200 &&
          r.parent_init == 1, "the row says init_from: %ld@%ld %d", r.parent_run,
          r.parent_step, r.parent_init);
    runstore_row_free(&r);
    long c = new_run(s, "fork", "msa", "", NULL);
    for (long k = 101; k <= 200; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, c, &m, err);
    }
    CHECK(runstore_flush(s, err) == LM_OK &&
          runstore_set_parent(s, c, a, 100, RUNSTORE_PARENT_FORK, err) == LM_OK, "fork: %s", err);
    /* its own work (compare's tokens/s): the init_from run's from its step 0 (its parent's
     * tokens and seconds at step 200 are not subtracted), the fork's from its fork point */
    RunRow rr;
    RunWork wk;
    CHECK(runstore_get(s, b, &rr, err) == LM_OK && runrecord_work(s, &rr, &wk, err) == LM_OK &&
          wk.from_step == 0 && wk.steps == 200 && wk.tokens == step_of(200).tokens,
          "init_from: its own work from step 0: from %ld, %ld steps", wk.from_step, wk.steps);
    runstore_row_free(&rr);
    CHECK(runstore_get(s, c, &rr, err) == LM_OK && runrecord_work(s, &rr, &wk, err) == LM_OK &&
          wk.from_step == 100 && wk.steps == 100 && fabs(wk.seconds - 1.0) < 1e-9,
          "the fork's from its fork point: from %ld, %.3f s", wk.from_step, wk.seconds);
    runstore_row_free(&rr);
    /* its parent deleted (parent_run NULL, parent_step kept): from its own first row, not
     * from step 0 with its parent's seconds before the fork point (0.2 s became 0.4 s) */
    CHECK(runstore_delete_run(s, a, 0, err) == LM_OK, "rm parent: %s", err);
    CHECK(runstore_get(s, c, &rr, err) == LM_OK && rr.parent_run == 0 &&
          runrecord_work(s, &rr, &wk, err) == LM_OK && wk.from_step == 101 && wk.steps == 99 &&
          fabs(wk.seconds - 0.99) < 1e-9, "a fork of a deleted run: from %ld, %.3f s",
          wk.from_step, wk.seconds);
    runstore_row_free(&rr);
    runstore_close(s);
    /* a store from before parent_kind: the init_from run (its steps from 1, not past its
     * parent's step 200) reads as init_from, the fork (its steps past 100) as a fork, their
     * parent deleted or not */
    CHECK(q_exec(path, "ALTER TABLE runs DROP COLUMN parent_kind") == 0, "old store");
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    if (!s) return;
    CHECK(q_long(path, "SELECT count(*) FROM runs WHERE parent_kind='init' AND id=2") == 1 &&
          q_long(path, "SELECT count(*) FROM runs WHERE parent_kind='fork' AND id=3") == 1,
          "migrated: init_from and fork told apart");
    runstore_close(s);
}

static void run_all(void)
{
    init_from_is_not_a_fork();
    repair_all_at_one_open();
    removal_in_steps();
    killed_removal_carried_on();
    compare_reads_what_it_needs();
    lineage_kept_whole_when_short();
}

int main(void)
{
    return runstore_test_main("run store at scale tests", run_all);
}
