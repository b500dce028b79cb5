/* test_run_launch.c — starting a recorded run in one place (core/train/run_launch): the
 * folder and name rules, a new run's stored record (name, machine, git revision, config,
 * tags, sweep, checkpoint folder) and its end, a bad configuration that records nothing,
 * and a resume refused on changed data or continued as the same run. A tiny model on
 * the default data, fixed seed. */
#include "check.h"
#include "err.h"
#include "run_launch.h"
#include "sysinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/lmlab_launch_XXXXXX";
static char db_path[600];

static void tiny(Config *c)
{
    config_defaults(c);
    c->d = 16; c->nhid = 32; c->layers = 1; c->bptt = 16; c->batch = 4; c->steps = 20;
    c->log_every = 5; c->eval_every = 0; c->eval_batches = 2; c->sample_every = 0;
    c->checkpoint_every = 10;
    snprintf(c->runs_dir, sizeof c->runs_dir, "%.200s/runs", tmpdir);
}

static void test_names(void)
{
    Config c;
    char buf[600];
    config_defaults(&c);
    config_set(&c, "model", "msa", buf);
    run_launch_name(&c, "tinyshakespeare", buf, sizeof buf);
    CHECK(!strcmp(buf, "msa-tinyshakespeare"), "unnamed run: %s", buf);
    snprintf(c.name, sizeof c.name, "mine");
    run_launch_name(&c, "tinyshakespeare", buf, sizeof buf);
    CHECK(!strcmp(buf, "mine"), "named run: %s", buf);
    run_launch_dir("runs", "5ee3a1", 12, buf, sizeof buf);
    CHECK(!strcmp(buf, "runs/run-12-5ee3a1"), "folder carries the store's identity: %s", buf);
    run_launch_dir("runs", NULL, 12, buf, sizeof buf);
    CHECK(!strcmp(buf, "runs/run-12"), "folder without a store identity: %s", buf);
}

static int count_runs(RunStore *st)
{
    RunRow *rows = NULL;
    int n = -1;
    char err[LM_ERR_LEN];
    if (runstore_list(st, NULL, "recent", 100, &rows, &n, err) == LM_OK)
        runstore_rows_free(rows, n);
    return n;
}

static void test_bad_config(RunStore *st)
{
    Config c;
    tiny(&c);
    snprintf(c.data, sizeof c.data, "%s/no-such-data.txt", tmpdir);
    RunLaunchOptions o = {.db_path = db_path, .store = st};
    RunHandle h;
    char err[LM_ERR_LEN] = "";
    CHECK(run_launch(&c, &o, &h, err) == LM_EARG, "missing data accepted");
    CHECK(err[0] && !h.trainer && !h.rec && h.run_id == 0, "after a refusal: '%s'", err);
    CHECK(count_runs(st) == 0, "a refused launch left %d runs", count_runs(st));
    RunLaunchOptions none = {.db_path = db_path};
    CHECK(run_launch(&c, &none, &h, err) == LM_EARG && strstr(err, "store"), "no store: %s",
          err);
}

/* A new run, recorded, trained to its end. Returns its id. */
static long test_new_run(RunStore *st)
{
    Config c;
    tiny(&c);
    RunLaunchOptions o = {.db_path = db_path, .store = st, .tags = "sweep-9", .sweep_id = 0};
    RunHandle h;
    char err[LM_ERR_LEN], dir[600], machine[256];
    CHECK(run_launch(&c, &o, &h, err) == LM_OK, "launch: %s", err);
    if (!h.trainer)
        return 0;
    CHECK(h.run_id > 0 && h.rec, "run id %ld", h.run_id);
    run_launch_dir(c.runs_dir, runstore_store_id(o.store), h.run_id, dir, sizeof dir);
    CHECK(!strcmp(h.run_dir, dir), "checkpoint folder %s, expected %s", h.run_dir, dir);
    for (int i = 0; i < 12000 && !run_launch_done(&h); i++) /* generous: a loaded machine */
        usleep(50000);
    CHECK(run_launch_done(&h), "the run did not end in 10 minutes");
    run_launch_close(&h, 0);
    CHECK(!h.trainer && !h.rec && h.run_id > 0, "close keeps the id only");
    RunRow row;
    CHECK(runstore_get(st, h.run_id, &row, err) == LM_OK, "%s", err);
    char name[128];
    run_launch_name(&c, row.data_name, name, sizeof name);
    sysinfo_describe(machine, sizeof machine);
    CHECK(!strcmp(row.name, name), "stored name %s, expected %s", row.name, name);
    CHECK(!strcmp(row.status, "finished"), "status %s (%s)", row.status, row.reason);
    CHECK(!strcmp(row.git_rev, sysinfo_git_rev()), "git rev %s", row.git_rev);
    CHECK(!strncmp(row.machine, machine, strlen(row.machine)) && row.machine[0], "machine %s",
          row.machine);
    CHECK(strstr(row.tags, "sweep-9") != NULL, "tags '%s'", row.tags);
    CHECK(strstr(row.config, "d=16") != NULL, "config not stored: %s", row.config);
    CHECK(!strcmp(row.checkpoint_dir, dir), "stored folder %s", row.checkpoint_dir);
    CHECK(row.last_step == 20 && row.data_hash[0], "last step %ld", row.last_step);
    struct stat sb;
    CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode), "no folder %s", dir);
    runstore_row_free(&row);
    return h.run_id;
}

/* Resuming: refused when the data's hash differs (the run untouched), else the same run. */
static void test_resume(RunStore *st, long id)
{
    Config c;
    tiny(&c);
    c.steps = 30;
    RunRow row;
    char err[LM_ERR_LEN], ckpt[1100];
    CHECK(runstore_get(st, id, &row, err) == LM_OK, "%s", err);
    runstore_run_set_status(st, id, "stopped", "test", err);
    CHECK(checkpoint_find(row.checkpoint_dir, "last", ckpt, sizeof ckpt) == LM_OK,
          "no checkpoint in %s", row.checkpoint_dir);
    RunLaunchOptions o = {.db_path = db_path, .store = st, .resume_id = id, .resume_from = ckpt,
                          .resume_dir = row.checkpoint_dir, .data_hash = "0123456789abcdef"};
    RunHandle h;
    CHECK(run_launch(&c, &o, &h, err) == LM_EFORMAT && strstr(err, "hash"), "changed data: %s",
          err);
    RunRow after;
    runstore_get(st, id, &after, err);
    CHECK(!strcmp(after.status, "stopped"), "a refused resume changed the run to %s",
          after.status);
    runstore_row_free(&after);
    o.data_hash = row.data_hash;
    CHECK(run_launch(&c, &o, &h, err) == LM_OK, "resume: %s", err);
    CHECK(h.run_id == id && !strcmp(h.run_dir, row.checkpoint_dir), "resumed as run %ld in %s",
          h.run_id, h.run_dir);
    run_launch_close(&h, 0);
    runstore_get(st, id, &after, err);
    CHECK(!strcmp(after.status, "finished") && after.last_step == 30, "resumed run: %s at %ld",
          after.status, after.last_step);
    runstore_row_free(&after);
    runstore_row_free(&row);
    CHECK(count_runs(st) == 1, "%d runs after a resume", count_runs(st));
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 1;
    snprintf(db_path, sizeof db_path, "%s/lmlab.db", tmpdir);
    test_names();
    RunStore *st = NULL;
    char err[LM_ERR_LEN];
    CHECK(runstore_open(db_path, &st, err) == LM_OK, "%s", err);
    if (st) {
        test_bad_config(st);
        long id = test_new_run(st);
        if (id)
            test_resume(st, id);
        runstore_close(st);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return check_summary();
}
