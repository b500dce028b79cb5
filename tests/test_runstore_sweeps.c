/* test_runstore_sweeps.c — the run store's sweeps: a sweep created with its pending trials
 * in one transaction, trial rows joined with their runs, the sweep's status and row; and
 * the codes a sweep's spec and a run's settings carry (issue 46 item 1). The rest of the
 * store's functions are in test_runstore.c. */
#include "runstore_util.h"
#include "runstore_changes.h"
#include "runstore_row.h"

#include <math.h>

/* A sweep created with its trials: the row and its pending trials in one transaction
 * (a reader between two saw a new sweep with fewer trials than it has: "0 trials"). */
static void test_sweep_create_trials(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "sweep_trials.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long sw = 0;
    int ks[3] = {0, 1, 2};
    const char *params[3] = {"lr=1e-3", "lr=1e-4", "lr=1e-5"};
    CHECK(runstore_sweep_create_trials(s, "three", "lr=1e-3,1e-4,1e-5", "grid", ks, params, 3,
                                       &sw, err) == LM_OK, "sweep with trials: %s", err);
    SweepTrialRow *t = NULL;
    int n = 0;
    CHECK(runstore_sweep_trials(s, sw, &t, &n, err) == LM_OK && n == 3, "its trials: %d", n);
    for (int i = 0; i < n && i < 3; i++)
        CHECK(t[i].trial == i && !strcmp(t[i].status, "pending") && t[i].run_id == 0 &&
              !strcmp(t[i].params, params[i]), "trial %d pending with its values", i);
    free(t);
    long none = 0;
    CHECK(runstore_sweep_create_trials(s, "empty", "", "grid", NULL, NULL, 0, &none, err) ==
          LM_OK && none == sw + 1, "a sweep of no trials: %s", err);
    runstore_close(s);
}

static void test_sweeps(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "sweeps.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long sw = 0, r[2];
    CHECK(runstore_sweep_create(s, "lr-sweep", "lr=1e-3,1e-4", "grid", &sw, err) == LM_OK,
          "sweep: %s", err);
    for (int i = 0; i < 2; i++) {
        RunInfo info = {.name = i ? "t1" : "t0", .config = "lr=1\neval_batches=5\n",
                        .sweep_id = sw};
        runstore_run_create(s, &info, &r[i], err);
        EvalMetric e = {.step = 10, .split = "valid", .loss = 2.0 + i, .bpc = NAN};
        runstore_log_eval(s, r[i], &e, err);
    }
    runstore_flush(s, err);
    /* t0 finished (its best is its final whole-split evaluation); t1 stopped between
     * evaluations: its best is an estimate over eval_batches batches, as `runs` marks it */
    CHECK(runstore_run_set_status(s, r[0], "finished", "finished 10 steps", err) == LM_OK &&
          runstore_run_set_status(s, r[1], "stopped", "stopped at step 10", err) == LM_OK,
          "ends: %s", err);
    CHECK(runstore_sweep_trial_set(s, sw, 0, r[0], "lr=1e-3", "done", err) == LM_OK, "t0");
    CHECK(runstore_sweep_trial_set(s, sw, 1, r[1], "lr=1e-4", "running", err) == LM_OK, "t1");
    CHECK(runstore_sweep_trial_set(s, sw, 2, 0, "lr=1e-5", "pending", err) == LM_OK, "t2");
    CHECK(runstore_sweep_trial_set(s, sw, 1, r[1], "lr=1e-4", "done", err) == LM_OK, "t1 again");
    CHECK(runstore_sweep_trial_set(s, 999, 0, 0, "x", "done", err) != LM_OK, "no sweep 999");
    SweepTrialRow *t;
    int n = 0;
    CHECK(runstore_sweep_trials(s, sw, &t, &n, err) == LM_OK && n == 3, "trials n=%d", n);
    CHECK(n == 3 && t[0].best_val == 2.0 && t[1].best_val == 3.0 && !strcmp(t[1].status, "done")
          && t[2].run_id == 0 && isnan(t[2].best_val) && !strcmp(t[0].params, "lr=1e-3"),
          "trial rows joined with their runs");
    CHECK(n == 3 && !t[0].best_estimated && t[1].best_estimated && !t[2].best_estimated,
          "an estimated best said: %d %d %d", t[0].best_estimated, t[1].best_estimated,
          t[2].best_estimated);
    free(t);
    CHECK(runstore_sweep_set_status(s, sw, "finished", err) == LM_OK, "sweep status");
    CHECK(runstore_sweep_set_status(s, sw, "exploded", err) == LM_EARG, "bad sweep status");
    SweepRow row;
    CHECK(runstore_sweep_get(s, sw, &row, err) == LM_OK && !strcmp(row.status, "finished") &&
          row.ended > 0 && !strcmp(row.spec, "lr=1e-3,1e-4"), "sweep row");
    free(row.spec);
    char filter[32];
    snprintf(filter, sizeof filter, "sweep=%ld", sw);
    int st;
    CHECK(count_list(s, filter, &st) == 2, "runs of the sweep");
    runstore_close(s);
}

/* Issue 46 item 1: a sweep's spec and a run's settings carry their writer's code. The
 * user's own verify; an edited spec or settings, a row planted with no code (or made by an
 * older lmlab), one signed under another user's key, one moved to another id, and one
 * moved to another store are refused with why; re-signing (`sweep trust`, a resume's new
 * settings) makes the user's own text verify again. */
static void test_row_codes(void)
{
    char path[512], err[LM_ERR_LEN], why[LM_ERR_LEN], cfg[256], sql[512];
    RunStore *s;
    db_path(path, sizeof path, "rowsig.db");
    snprintf(cfg, sizeof cfg, "%s/victim-config", tmpdir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long mine = 0, edited = 0, foreign = 0;
    CHECK(runstore_sweep_create(s, "a", "lr=1,2\nruns_dir=runs\n", "grid", &mine, err) == LM_OK
          && runstore_sweep_create(s, "b", "lr=1,2\nruns_dir=runs\n", "grid", &edited, err)
          == LM_OK, "sweeps: %s", err);
    snprintf(cfg, sizeof cfg, "%s/mallory-config", tmpdir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    CHECK(runstore_sweep_create(s, "m", "lr=1\nruns_dir=/home/victim/.ssh\n", "grid", &foreign,
                                err) == LM_OK, "mallory's sweep: %s", err);
    RunInfo ri = {.name = "m", .config = "lr=1\ndata=/etc/shadow\n"};
    long mrun = 0, run = 0, run2 = 0;
    CHECK(runstore_run_create(s, &ri, &mrun, err) == LM_OK, "mallory's run: %s", err);
    snprintf(cfg, sizeof cfg, "%s/victim-config", tmpdir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    ri.name = "r";
    ri.config = "lr=1\ndata=tinyshakespeare\n";
    CHECK(runstore_run_create(s, &ri, &run, err) == LM_OK &&
          runstore_run_create(s, &ri, &run2, err) == LM_OK, "runs: %s", err);
    /* planted (no code, as an older lmlab writes it), edited, moved to another id */
    snprintf(sql, sizeof sql, "INSERT INTO sweeps(id, name, spec, strategy, status, created)"
             " VALUES(50, 'p', 'lr=1', 'grid', 'running', 0);"
             "UPDATE sweeps SET spec=replace(spec, 'runs_dir=runs', 'runs_dir=/tmp') WHERE id=%ld;"
             "INSERT INTO sweeps(id, name, spec, strategy, status, created, mac) SELECT 51,"
             " name, spec, strategy, status, created, mac FROM sweeps WHERE id=%ld;"
             "UPDATE runs SET config='lr=1' || char(10) || 'data=/etc/shadow' WHERE id=%ld;"
             "UPDATE runs SET mac=(SELECT mac FROM runs WHERE id=%ld) WHERE id=%ld;",
             edited, mine, run2, run, mrun);
    CHECK(q_exec(path, sql) == 0, "tamper");
    struct { long id; const char *why; } want[] = {{mine, NULL}, {edited, "does not match"},
        {foreign, "does not match"}, {50, "no code"}, {51, "does not match"}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        SweepRow row = {0};
        CHECK(runstore_sweep_get(s, want[i].id, &row, err) == LM_OK, "get %ld: %s", want[i].id, err);
        why[0] = 0;
        int st = runstore_sweep_trusted(s, &row, why, sizeof why);
        CHECK(want[i].why ? st == LM_EARG && strstr(why, want[i].why) : st == LM_OK,
              "sweep %ld: %d '%s'", want[i].id, st, why);
        char msg[LM_ERR_LEN] = "";
        st = runstore_sweep_refusal(s, &row, msg, sizeof msg);
        if (want[i].why)
            CHECK(st == LM_EARG && strstr(msg, "'s spec was not written by you: refused ("),
                  "refusal %ld: '%s'", want[i].id, msg);
        if (want[i].id == edited) {   /* `sweep trust`: the user re-signs what they read */
            CHECK(runstore_sweep_sign(s, edited, row.spec, row.created, err) == LM_OK, "sign");
            free(row.spec);
            CHECK(runstore_sweep_get(s, edited, &row, err) == LM_OK &&
                  runstore_sweep_trusted(s, &row, why, sizeof why) == LM_OK, "re-signed: %s", why);
        }
        free(row.spec);
    }
    /* runs: own, planted no-code, edited, another key's, a code moved from another run */
    CHECK(runstore_run_config_trusted(s, run2, "lr=1\ndata=/etc/shadow", why, sizeof why)
          == LM_EARG && strstr(why, "does not match"), "edited settings: %s", why);
    CHECK(runstore_run_config_trusted(s, mrun, "lr=1\ndata=/etc/shadow\n", why, sizeof why) ==
          LM_EARG && strstr(why, "does not match"), "a code moved from another run: %s", why);
    CHECK(runstore_run_config_trusted(s, run, "lr=1\ndata=tinyshakespeare\n", why, sizeof why)
          == LM_OK, "own run: %s", why);
    CHECK(runstore_run_config_trusted(s, run, "lr=1\ndata=/etc/shadow\n", why, sizeof why)
          == LM_EARG, "other settings than were signed");
    CHECK(runstore_run_set_config(s, run2, "lr=2\ndata=tinyshakespeare\n", 0, NULL, 0, NULL, err)
          == LM_OK &&
          runstore_run_config_trusted(s, run2, "lr=2\ndata=tinyshakespeare\n", why, sizeof why)
          == LM_OK, "settings recorded by the user are signed again: %s", why);
    snprintf(sql, sizeof sql, "UPDATE runs SET mac=NULL WHERE id=%ld", run2);
    CHECK(q_exec(path, sql) == 0, "strip");
    CHECK(runstore_run_config_trusted(s, run2, "lr=2\ndata=tinyshakespeare\n", why, sizeof why)
          == LM_EARG && strstr(why, "no code"), "no code: %s", why);
    CHECK(runstore_run_config_trusted(s, 999, "", why, sizeof why) == LM_EARG, "no run 999");
    /* rm checkpoints=true: a run another user wrote (its recorded paths name the victim's
     * files) removes no file; the user's own run removes only files in its own folder */
    char vdir[300], secret[400], ownck[400], outside[400];
    long run3 = 0;
    CHECK(runstore_run_create(s, &ri, &run3, err) == LM_OK, "run 3: %s", err);
    snprintf(vdir, sizeof vdir, "%s/rowsig-run", tmpdir);
    mkdir(vdir, 0755);
    snprintf(secret, sizeof secret, "%s/secret.txt", tmpdir);
    snprintf(ownck, sizeof ownck, "%s/step-00000001.safetensors", vdir);
    snprintf(outside, sizeof outside, "%s/thesis.safetensors", tmpdir);
    fclose(fopen(secret, "w")), fclose(fopen(ownck, "w")), fclose(fopen(outside, "w"));
    CheckpointRecord ck = {.step = 1, .val_loss = NAN};
    snprintf(ck.path, sizeof ck.path, "%s", secret);
    CHECK(runstore_log_checkpoint(s, mrun, &ck, err) == LM_OK, "mallory's row: %s", err);
    RunFilesReport rep;
    CHECK(runstore_delete_run_report(s, mrun, 1, &rep, err) == LM_OK && rep.removed == 0 &&
          strstr(rep.refused, "does not match") && access(secret, F_OK) == 0,
          "another user's run removed files: %d '%s'", rep.removed, rep.refused);
    CHECK(runstore_set_checkpoint_dir(s, run3, vdir, err) == LM_OK &&
          runstore_run_config_trusted(s, run3, "lr=1\ndata=tinyshakespeare\n", why, sizeof why)
          == LM_OK, "the folder is signed with the settings: %s", why);
    snprintf(ck.path, sizeof ck.path, "%s", ownck);
    runstore_log_checkpoint(s, run3, &ck, err);
    ck.step = 2;   /* a row another writer added to the user's own run */
    snprintf(ck.path, sizeof ck.path, "%s", outside);
    runstore_log_checkpoint(s, run3, &ck, err);
    CHECK(runstore_delete_run_report(s, run3, 1, &rep, err) == LM_OK && !rep.refused[0] &&
          access(ownck, F_OK) != 0 && access(outside, F_OK) == 0 && rep.dir_removed,
          "own run: removed %d, refused '%s', outside kept %d", rep.removed, rep.refused,
          access(outside, F_OK) == 0);
    runstore_close(s);
    /* the same rows in another store (its identity changed): refused */
    CHECK(q_exec(path, "UPDATE store_meta SET value='00000000deadbeef' WHERE key='store_id'")
          == 0, "another store");
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    SweepRow row = {0};
    CHECK(runstore_sweep_get(s, mine, &row, err) == LM_OK &&
          runstore_sweep_trusted(s, &row, why, sizeof why) == LM_EARG, "a sweep moved to another store");
    free(row.spec);
    CHECK(runstore_run_config_trusted(s, run, "lr=1\ndata=tinyshakespeare\n", why, sizeof why)
          == LM_EARG, "a run moved to another store");
    runstore_close(s);
    CHECK(q_long(path, "SELECT count(*) FROM pragma_table_info('sweeps') WHERE name='mac'") == 1
          && q_long(path, "SELECT count(*) FROM pragma_table_info('runs') WHERE name='mac'") == 1,
          "the code columns");
}

static void run_all(void)
{
    test_sweeps();
    test_sweep_create_trials();
    test_row_codes();
}

int main(void)
{
    return runstore_test_main("runstore sweep tests", run_all);
}
