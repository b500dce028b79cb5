/* test_runstore_group.c — seed groups and settings in the run store: the schema step on
 * a fresh store and on a store that lacks it (an older lmlab's), filing runs by hand,
 * reading groups of many runs at once, the trigger that files a seeded sweep's trial runs
 * (and only seeded ones), bad names, unknown runs (nothing changed), deleting a run, and
 * settings surviving a reopen. */
#include "runstore_util.h"
#include "runstore_group.h"

static void test_groups_by_hand(void)
{
    char path[128], err[LM_ERR_LEN], name[RUNSTORE_GROUP_LEN];
    db_path(path, sizeof path, "g.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL), b = new_run(s, "b", "msa", "lr=1\n", NULL),
         c = new_run(s, "c", "msa", "lr=2\n", NULL);
    long ab[] = {a, b};
    CHECK(runstore_group_set(s, ab, 2, "base", err) == LM_OK, "set: %s", err);
    CHECK(runstore_group_of(s, a, name, sizeof name, err) == LM_OK && !strcmp(name, "base"),
          "a in base: '%s'", name);
    CHECK(runstore_group_of(s, c, name, sizeof name, err) == LM_OK && !name[0], "c in none");
    long bad[] = {c, 999};
    CHECK(runstore_group_set(s, bad, 2, "x", err) == LM_EARG && strstr(err, "no run 999"),
          "unknown run refused: %s", err);
    CHECK(runstore_group_of(s, c, name, sizeof name, err) == LM_OK && !name[0],
          "all or nothing: c still in none");
    CHECK(runstore_group_set(s, &c, 1, "has space", err) == LM_EARG, "bad name");
    long all[] = {c, b, a};
    char names[3][RUNSTORE_GROUP_LEN];
    CHECK(runstore_groups_of(s, all, 3, names, err) == LM_OK && !names[0][0] &&
          !strcmp(names[1], "base") && !strcmp(names[2], "base"), "groups_of");
    long *ids;
    int n;
    CHECK(runstore_group_members(s, "base", &ids, &n, err) == LM_OK && n == 2 && ids[0] == a &&
          ids[1] == b, "members");
    free(ids);
    CHECK(runstore_group_members(s, "nope", &ids, &n, err) == LM_EARG && n == 0, "no group");
    CHECK(runstore_group_set(s, &b, 1, NULL, err) == LM_OK, "clear");
    CHECK(runstore_delete_run(s, a, 0, err) == LM_OK, "delete: %s", err);
    GroupRow *g;
    CHECK(runstore_groups(s, &g, &n, err) == LM_OK && n == 0, "deleted run leaves its group, "
          "a cleared one too: %d", n);
    free(g);
    runstore_close(s);
}

static void test_sweep_trigger(void)
{
    char path[128], err[LM_ERR_LEN], name[RUNSTORE_GROUP_LEN];
    db_path(path, sizeof path, "t.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long sw, sw2, r[5];
    for (int i = 0; i < 5; i++) r[i] = new_run(s, "t", "msa", "", NULL);
    CHECK(runstore_sweep_create(s, "seeds", "", "grid", &sw, err) == LM_OK, "sweep");
    CHECK(runstore_sweep_create(s, "plain", "", "grid", &sw2, err) == LM_OK, "sweep");
    runstore_sweep_trial_set(s, sw, 1, 0, "lr=1e-3 seed=1", "pending", err);
    runstore_sweep_trial_set(s, sw, 1, r[0], "lr=1e-3 seed=1", "running", err);
    runstore_sweep_trial_set(s, sw, 2, r[1], "lr=1e-3 seed=2", "running", err);
    runstore_sweep_trial_set(s, sw, 3, r[2], "seed=2", "running", err);
    runstore_sweep_trial_set(s, sw2, 1, r[3], "lr=1e-3 data_seed=4", "running", err);
    runstore_group_of(s, r[0], name, sizeof name, err);
    CHECK(!strcmp(name, "seeds:lr=1e-3"), "trial 1 filed: '%s'", name);
    runstore_group_of(s, r[1], name, sizeof name, err);
    CHECK(!strcmp(name, "seeds:lr=1e-3"), "trial 2 same group: '%s'", name);
    runstore_group_of(s, r[2], name, sizeof name, err);
    CHECK(!strcmp(name, "seeds"), "only a seed: the sweep's name: '%s'", name);
    runstore_group_of(s, r[3], name, sizeof name, err);
    CHECK(!name[0], "data_seed is not seed: '%s'", name);
    CHECK(runstore_group_set(s, &r[4], 1, "mine", err) == LM_OK, "by hand: %s", err);
    runstore_sweep_trial_set(s, sw, 4, r[4], "lr=1e-2 seed=1", "running", err);
    runstore_group_of(s, r[4], name, sizeof name, err);
    CHECK(!strcmp(name, "mine"), "a group set by hand stays (the runner's INSERT OR REPLACE "
          "does not override it): '%s'", name);
    runstore_sweep_trial_set(s, sw, 1, r[0], "lr=1e-3 seed=1", "done", err);
    runstore_group_of(s, r[0], name, sizeof name, err);
    CHECK(!strcmp(name, "seeds:lr=1e-3"), "a trial rewritten keeps its group: '%s'", name);
    runstore_close(s);
}

static void test_old_store_and_settings(void)
{
    char path[128], err[LM_ERR_LEN], val[64];
    db_path(path, sizeof path, "old.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "", NULL);
    runstore_close(s);
    /* a store from before the groups' step (10): without their tables, at version 9 */
    CHECK(q_exec(path, "DROP TRIGGER sweep_trial_group; DROP TABLE run_groups;"
                 " DROP TABLE store_settings; PRAGMA user_version = 9;") == 0,
          "made an older store");
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('run_groups',"
                 "'store_settings','sweep_trial_group')") == 3, "step added the tables");
    CHECK(runstore_group_set(s, &a, 1, "g", err) == LM_OK, "usable: %s", err);
    int found = 1;
    CHECK(runstore_setting_get(s, "runs.columns", val, sizeof val, &found, err) == LM_OK &&
          !found && !val[0], "unset setting");
    CHECK(runstore_setting_set(s, "runs.columns", "id,name,lr", err) == LM_OK, "set");
    runstore_close(s);
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    CHECK(runstore_setting_get(s, "runs.columns", val, sizeof val, &found, err) == LM_OK &&
          found && !strcmp(val, "id,name,lr"), "persisted: '%s'", val);
    CHECK(runstore_setting_set(s, "runs.columns", NULL, err) == LM_OK, "delete");
    runstore_setting_get(s, "runs.columns", val, sizeof val, &found, err);
    CHECK(!found, "deleted");
    runstore_close(s);
}

static void run_all(void)
{
    test_groups_by_hand();
    test_sweep_trigger();
    test_old_store_and_settings();
}

int main(void)
{
    return runstore_test_main("runstore_group", run_all);
}
