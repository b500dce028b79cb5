/* test_runstore_scale.c — the store at scale (docs/hostile8.md), checked by counts and
 * states, never by time: one open repairs every dead run (it marked 64 at a time). */
#include "runstore_util.h"

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

static void run_all(void)
{
    repair_all_at_one_open();
}

int main(void)
{
    return runstore_test_main("run store at scale tests", run_all);
}
