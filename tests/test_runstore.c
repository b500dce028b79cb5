/* test_runstore.c — the run store's functions: schema and v1 migration, round trips of
 * every record, filtered/sorted listing (incl. SQL-injection attempts as data), compare,
 * export, delete, and timings (10,000-run list, 100,000-point series; printed, not
 * asserted). Sweeps and the codes rows carry are in test_runstore_sweeps.c; concurrency,
 * crashes and bad files in test_runstore_faults.c. */
#include "runstore_util.h"
#include "runstore_group.h"
#include "runstore_edits.h"
#include "runstore_series.h"
#include "runstore_row.h"
#include "runstore_changes.h"

#include <math.h>

static void test_schema(void)
{
    char path[512], err[LM_ERR_LEN], mode[32];
    RunStore *s;
    db_path(path, sizeof path, "schema.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    CHECK(!strcmp(runstore_path(s), path), "path %s", runstore_path(s));
    runstore_close(s);
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION, "user_version");
    q_text(path, "PRAGMA journal_mode", mode, sizeof mode);
    CHECK(!strcmp(mode, "wal"), "journal mode %s", mode);
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN"
                 " ('runs','metrics','evals','gates','samples','checkpoints','sweeps',"
                 "'sweep_trials')") == 8, "all 8 tables");
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE type='index'"
                 " AND name LIKE 'runs_%'") >= 4, "run indexes");
    /* a second open of an up-to-date file changes nothing */
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    runstore_close(s);
    /* default path from LMLAB_DB */
    char envp[512];
    db_path(envp, sizeof envp, "env.db");
    setenv("LMLAB_DB", envp, 1);
    CHECK(runstore_open(NULL, &s, err) == LM_OK, "open default: %s", err);
    CHECK(s && !strcmp(runstore_path(s), envp), "LMLAB_DB used");
    runstore_close(s);
    unsetenv("LMLAB_DB");
}

static const char V1_SCHEMA[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT, created REAL, started REAL,"
    " ended REAL, status TEXT NOT NULL DEFAULT 'running', reason TEXT, config TEXT,"
    " model TEXT, data_name TEXT, data_hash TEXT, tokenizer TEXT, tokenizer_hash TEXT,"
    " params INTEGER, machine TEXT, git_rev TEXT, notes TEXT, pid INTEGER, host TEXT,"
    " last_step INTEGER, best_val REAL, final_val REAL, checkpoint_dir TEXT,"
    " heartbeat REAL);"
    "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL, epoch REAL, tokens INTEGER, loss REAL, lr REAL,"
    " grad_norm REAL, tokens_per_s REAL, elapsed REAL,"
    " PRIMARY KEY(run_id, step)) WITHOUT ROWID;"
    "CREATE TABLE evals(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL, split TEXT NOT NULL, loss REAL, ppl REAL, bpc REAL,"
    " tokens INTEGER, elapsed REAL, PRIMARY KEY(run_id, step, split)) WITHOUT ROWID;"
    "CREATE TABLE gates(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL, layer INTEGER NOT NULL, level INTEGER NOT NULL, mean REAL,"
    " std REAL, hist TEXT, PRIMARY KEY(run_id, layer, level, step)) WITHOUT ROWID;"
    "CREATE TABLE samples(id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER,"
    " prompt TEXT, settings TEXT, text TEXT, created REAL);"
    "CREATE TABLE checkpoints(run_id INTEGER NOT NULL REFERENCES runs(id)"
    " ON DELETE CASCADE, step INTEGER NOT NULL, path TEXT, val_loss REAL,"
    " is_best INTEGER, PRIMARY KEY(run_id, step)) WITHOUT ROWID;"
    "INSERT INTO runs(id, name, created, status, config, model, last_step, best_val)"
    " VALUES(7, 'old-run', 1700000000, 'finished', 'model=msa\nlr=0.001\n', 'msa', 3, 1.5);"
    "INSERT INTO metrics(run_id, step, loss) VALUES(7, 1, 3.0), (7, 2, 2.5), (7, 3, 2.0);"
    "INSERT INTO evals(run_id, step, split, loss) VALUES(7, 3, 'valid', 1.5);"
    "PRAGMA user_version = 1;";

static void test_migration(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "v1.db");
    CHECK(q_exec(path, V1_SCHEMA) == SQLITE_OK, "build v1 file");
    CHECK(q_long(path, "PRAGMA user_version") == 1, "v1 version");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open v1: %s", err);
    if (!s) return;
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION, "migrated");
    RunRow r;
    CHECK(runstore_get(s, 7, &r, err) == LM_OK, "old run kept: %s", err);
    CHECK(!strcmp(r.name, "old-run") && !strcmp(r.status, "finished") && r.last_step == 3,
          "old run fields %s %s %ld", r.name, r.status, r.last_step);
    CHECK(r.sweep_id == 0 && r.tags[0] == 0, "new columns empty");
    runstore_row_free(&r);
    SeriesPoint *p;
    int n;
    CHECK(runstore_series(s, 7, "loss", &p, &n, err) == LM_OK && n == 3 && p[2].value == 2.0,
          "old metrics kept (n=%d)", n);
    free(p);
    CHECK(runstore_add_tag(s, 7, "legacy", err) == LM_OK, "tag old run: %s", err);
    long sw = 0;
    CHECK(runstore_sweep_create(s, "sw", "lr=1e-3,1e-4", "grid", &sw, err) == LM_OK,
          "sweep in migrated file: %s", err);
    runstore_close(s);
    CHECK(q_long(path, "SELECT count(*) FROM runs WHERE tags='legacy'") == 1, "tag stored");
    CHECK(q_long(path, "PRAGMA foreign_key_check") == -999, "no FK violations");
}

static void roundtrip_write(RunStore *s, long id)
{
    char err[LM_ERR_LEN];
    int bad = 0;
    for (long t = 1; t <= 1000; t++) {
        StepMetric m = step_of(t);
        bad += runstore_log_step(s, id, &m, err) != LM_OK;
        if (t % 100) continue;
        EvalMetric e = {.step = t, .split = "valid", .loss = 2.0 + (t == 500 ? -0.5 : 0) -
                        t * 1e-4, .ppl = 7.0, .bpc = NAN, .tokens = 5000, .elapsed = t};
        bad += runstore_log_eval(s, id, &e, err) != LM_OK;
        EvalMetric te = e;
        strcpy(te.split, "test");
        te.loss += 0.1;
        bad += runstore_log_eval(s, id, &te, err) != LM_OK;
        GateStat g[6];
        for (int k = 0; k < 6; k++) {
            g[k] = (GateStat){.step = t, .layer = k / 3, .level = k % 3, .mean = 0.1f * k +
                              t * 1e-4f, .std = 0.05f};
            for (int b = 0; b < GATE_HIST_BINS; b++) g[k].hist[b] = b * k + (int)(t / 100);
        }
        bad += runstore_log_gates(s, id, g, 6, err) != LM_OK;
        CheckpointRecord c = {.step = t, .val_loss = e.loss, .is_best = t <= 500};
        snprintf(c.path, sizeof c.path, "%s/ckpt/step%ld.bin", tmpdir, t);
        bad += runstore_log_checkpoint(s, id, &c, err) != LM_OK;
        if (t % 300 == 0)
            bad += runstore_log_sample(s, id, t, "ROMEO:", "temp=0.8", "But soft, what "
                                       "light through yonder window breaks?", err) != LM_OK;
    }
    CHECK(bad == 0, "1000 steps logged without error (%d failures, last: %s)", bad, err);
    CHECK(runstore_flush(s, err) == LM_OK && runstore_pending(s) == 0, "flush: %s", err);
}

static void roundtrip_check(RunStore *s, long id)
{
    char err[LM_ERR_LEN];
    SeriesPoint *p = NULL;
    int n = 0, bad = 0;
    CHECK(runstore_series(s, id, "loss", &p, &n, err) == LM_OK && n == 1000, "loss n=%d", n);
    for (int i = 0; i < n; i++) bad += p[i].step != i + 1 || p[i].value != step_of(i + 1).loss;
    CHECK(bad == 0, "loss values exact (float stored as double): %d differ", bad);
    free(p);
    CHECK(runstore_series(s, id, "val_loss", &p, &n, err) == LM_OK && n == 10, "val n=%d", n);
    CHECK(n == 10 && p[4].step == 500 && fabs(p[4].value - (1.5 - 0.05)) < 1e-12, "val@500");
    free(p);
    CHECK(runstore_series(s, id, "val_bpc", &p, &n, err) == LM_OK && n == 10 && isnan(p[0].value),
          "NaN bpc comes back as NAN");
    free(p);
    CHECK(runstore_series(s, id, "gate:1:2", &p, &n, err) == LM_OK && n == 10 &&
          fabsf((float)p[9].value - (0.5f + 0.1f)) < 1e-6f, "gate series");
    free(p);
    CHECK(runstore_series(s, id, "gate:x", &p, &n, err) == LM_EARG, "bad metric -> EARG");
    CHECK(runstore_series(s, 4242, "loss", &p, &n, err) == LM_EARG, "missing run -> EARG");
    RunRow r;
    CHECK(runstore_get(s, id, &r, err) == LM_OK, "get: %s", err);
    CHECK(r.last_step == 1000, "last_step %ld", r.last_step);
    CHECK(fabs(r.best_val - 1.45) < 1e-12, "best_val %g", r.best_val);
    CHECK(fabs(r.final_val - 1.9) < 1e-12, "final_val %g", r.final_val);
    CHECK(!strcmp(r.model, "msa") && r.params == 1000 && strstr(r.config, "lr=0.0005"), "fields");
    runstore_row_free(&r);
    GateStat *g;
    CHECK(runstore_gate_history(s, id, 1, 1, &g, &n, err) == LM_OK && n == 10, "gates n=%d", n);
    CHECK(n == 10 && g[3].step == 400 && g[3].hist[9] == 9 * 4 + 4 && g[3].layer == 1,
          "gate hist round trip");
    free(g);
    SampleRow *sm;
    CHECK(runstore_samples(s, id, &sm, &n, err) == LM_OK && n == 3, "samples n=%d", n);
    CHECK(n == 3 && sm[1].step == 600 && !strcmp(sm[1].prompt, "ROMEO:") &&
          strstr(sm[1].text, "yonder") && !strcmp(sm[1].settings, "temp=0.8"), "sample text");
    runstore_samples_free(sm, n);
    CheckpointRecord *c;
    CHECK(runstore_checkpoints(s, id, &c, &n, err) == LM_OK && n == 10, "ckpts n=%d", n);
    int best = 0;
    for (int i = 0; i < n; i++) best += c[i].is_best;
    CHECK(best == 1 && c[4].is_best, "exactly one best checkpoint (%d)", best);
    free(c);
}

static void test_roundtrip(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "roundtrip.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long id = new_run(s, "rt", "msa", "model=msa\nlr=0.0005\n", "a b,a");
    roundtrip_write(s, id);
    roundtrip_check(s, id);
    /* a resumed run rewrites steps 991..1000: replaced, not duplicated */
    CHECK(runstore_run_claim(s, id, err) == LM_OK, "claim: %s", err);
    for (long t = 991; t <= 1000; t++) {
        StepMetric m = step_of(t);
        m.loss = 9.0f;
        runstore_log_step(s, id, &m, err);
    }
    StepMetric nan_step = step_of(1001);
    nan_step.loss = NAN;
    runstore_log_step(s, id, &nan_step, err);
    CHECK(runstore_run_set_status(s, id, "diverged", "NaN at step 1001", err) == LM_OK,
          "set_status: %s", err);
    CHECK(runstore_run_set_status(s, id, "bogus", NULL, err) == LM_EARG, "bad status");
    CHECK(runstore_run_set_status(s, 99999, "failed", NULL, err) == LM_EARG, "no run");
    CHECK(runstore_log_step(s, 99999, &nan_step, err) == LM_EARG && strstr(err, "no run"),
          "log to missing run: %s", err);
    SeriesPoint *p;
    int n;
    runstore_series(s, id, "loss", &p, &n, err);
    CHECK(n == 1001 && p[995].value == 9.0 && isnan(p[1000].value), "replaced rows, n=%d", n);
    free(p);
    RunRow r;
    runstore_get(s, id, &r, err);
    CHECK(!strcmp(r.status, "diverged") && r.ended > 0 && !strcmp(r.reason, "NaN at step 1001"),
          "terminal status sets ended and reason");
    CHECK(!strcmp(r.tags, "a,b"), "tags normalised: '%s'", r.tags);
    runstore_row_free(&r);
    CHECK(runstore_add_tag(s, id, "bad tag", err) == LM_EARG, "tag with space rejected");
    CHECK(runstore_set_note(s, id, "lr too high; rerun with 3e-4", err) == LM_OK, "note");
    runstore_get(s, id, &r, err);
    CHECK(!strcmp(r.notes, "lr too high; rerun with 3e-4"), "note stored");
    runstore_row_free(&r);
    runstore_close(s);
    CHECK(q_long(path, "SELECT count(*) FROM metrics") == 1001, "no duplicated rows");
}

/* Runs with varied configs for the listing tests; returns the id of the quoted name. */
static long make_listing(RunStore *s)
{
    char cfg[256], name[64], err[LM_ERR_LEN];
    static const char *models[] = {"msa", "dispatcher", "lstm"};
    static const char *opts[] = {"adamw", "sgd"};
    for (int i = 0; i < 30; i++) {
        snprintf(cfg, sizeof cfg, "model=%s\nd=%d\nlr=%g\noptimizer=%s\nname=r%d\n",
                 models[i % 3], 64 << (i % 3), 1e-4 * (1 + i % 20), opts[i % 2], i);
        snprintf(name, sizeof name, i % 5 ? "run%d" : "shakespeare-%d", i);
        long id = new_run(s, name, models[i % 3], cfg, i % 4 == 0 ? "best,keep" : "");
        if (i % 3 == 0) runstore_run_set_status(s, id, "finished", NULL, err);
        if (i % 2 == 0) {
            EvalMetric e = {.step = 10, .split = "valid", .loss = 3.0 - 0.05 * i, .ppl = 1,
                            .bpc = NAN};
            runstore_log_eval(s, id, &e, err);
        }
    }
    runstore_flush(s, err);
    return new_run(s, "o'brien; DROP TABLE runs; --", "msa", "lr=1\n", NULL);
}

static void test_list(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    int st;
    db_path(path, sizeof path, "list.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long quoted = make_listing(s);
    CHECK(count_list(s, "", &st) == 31 && st == LM_OK, "all runs");
    CHECK(count_list(s, "model=msa", &st) == 11, "model=msa");
    CHECK(count_list(s, "status=finished", &st) == 10, "status=finished");
    CHECK(count_list(s, "tag=best", &st) == 8, "tag=best");
    CHECK(count_list(s, "tag!=best", &st) == 23, "tag!=best");
    CHECK(count_list(s, "name~SHAKE", &st) == 6, "name~shake");
    CHECK(count_list(s, "id>10", &st) == 21, "id>10");
    CHECK(count_list(s, "lr<0.001", &st) == 18, "lr<0.001 (config)");
    CHECK(count_list(s, "d>=128", &st) == 20, "d>=128 (config, numeric)");
    CHECK(count_list(s, "optimizer=adamw model=msa", &st) == 5, "two terms");
    CHECK(count_list(s, "best<2.5 best>0", &st) == 9, "best<2.5");
    CHECK(count_list(s, "since=2000-01-01 until=1d", &st) == 0, "until 1 day ago");
    CHECK(count_list(s, "since=1h", &st) == 31, "since 1 hour ago");
    /* values are data: quotes, semicolons and SQL never execute */
    CHECK(count_list(s, "name=\"' OR 1=1 --\"", &st) == 0 && st == LM_OK, "' OR 1=1 --");
    CHECK(count_list(s, "name=x';DROP", &st) == 0 && st == LM_OK, "quote+semicolon");
    CHECK(count_list(s, "id>10;DELETE", &st) <= 0 && st == LM_EARG,
          "numeric with junk: refused, not a silent empty list");
    CHECK(count_list(s, "optimizer='adamw'", &st) == 0 && st == LM_OK, "quoted config value");
    CHECK(count_list(s, "name~'", &st) == 1 && st == LM_OK, "name~' finds the one quote");
    CHECK(count_list(s, "name=\"o'brien; DROP TABLE runs; --\"", &st) == 1, "exact quoted name");
    CHECK(count_list(s, "", &st) == 31, "table intact after injection attempts");
    CHECK(count_list(s, "' OR 1=1 --", &st) == -1 || st == LM_EARG, "bare SQL is an error");
    RunRow *rows;
    int n;
    CHECK(runstore_list(s, "model=msa OR", NULL, 0, &rows, &n, err) == LM_EARG &&
          strstr(err, "'OR'"), "invalid term named: %s", err);
    CHECK(runstore_list(s, "1=1", NULL, 0, &rows, &n, err) == LM_EARG, "bad key");
    CHECK(runstore_list(s, "since=yesterday", NULL, 0, &rows, &n, err) == LM_EARG, "bad date");
    CHECK(runstore_list(s, "id~3", NULL, 0, &rows, &n, err) == LM_EARG, "~ on number");
    CHECK(runstore_list(s, NULL, "bogus", 0, &rows, &n, err) == LM_EARG, "bad sort");
    /* sorting */
    CHECK(runstore_list(s, NULL, "best", 0, &rows, &n, err) == LM_OK && n == 31, "sort best");
    int ok = 1;
    for (int i = 1; i < n; i++)
        ok &= isnan(rows[i].best_val) || rows[i - 1].best_val <= rows[i].best_val;
    CHECK(ok && rows[0].id == 29 && isnan(rows[n - 1].best_val), "best ascending, NULLs last");
    runstore_rows_free(rows, n);
    CHECK(runstore_list(s, NULL, "recent", 5, &rows, &n, err) == LM_OK && n == 5 &&
          rows[0].id == quoted, "recent first, limit 5");
    runstore_rows_free(rows, n);
    CHECK(runstore_list(s, "lr<1", "name", 3, &rows, &n, err) == LM_OK && n == 3 &&
          strcmp(rows[0].name, rows[1].name) <= 0, "config filter with limit and name sort");
    runstore_rows_free(rows, n);
    runstore_close(s);
}

static void test_compare_export(void)
{
    char path[512], out[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "cmp.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long ids[2];
    ids[0] = new_run(s, "base", "msa", "model=msa\nd=128\nlr=0.001\noptimizer=adamw\n", NULL);
    ids[1] = new_run(s, "wide, \"quoted\"", "msa", "model=msa\nd=256\nlr=0.001\n"
                     "optimizer=adamw\nseed=3\n", NULL);
    for (int r = 0; r < 2; r++)
        for (long t = 1; t <= 50; t++) {
            StepMetric m = step_of(t);
            runstore_log_step(s, ids[r], &m, err);
        }
    EvalMetric e = {.step = 50, .split = "valid", .loss = 1.25, .ppl = 3.49, .bpc = 1.8};
    runstore_log_eval(s, ids[0], &e, err);
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);   /* reads never flush */
    char *text = NULL;
    CHECK(runstore_compare(s, ids, 2, &text, err) == LM_OK && text, "compare: %s", err);
    if (text) {
        printf("%s", text);
        CHECK(strstr(text, "\nd ") && strstr(text, "\nseed "), "differing keys shown");
        CHECK(!strstr(text, "\nlr  ") && !strstr(text, "\noptimizer ") && !strstr(text, "\nmodel "),
              "equal keys hidden");
        CHECK(strstr(text, "best val loss") && strstr(text, "1.2500") && strstr(text, "tokens_per_s (mean)")
              && strstr(text, "\nsteps             50 "), "results shown");
    }
    free(text);
    db_path(out, sizeof out, "export.csv");
    CHECK(runstore_export(s, ids, 2, "csv", out, err) == LM_OK, "csv: %s", err);
    FILE *f = fopen(out, "r");
    char line[1024];
    int lines = 0, header_ok = 0, row_ok = 0, eval_ok = 0, n_loss = 0;
    char row2[64];   /* long form: run, step, metric, value; integers as integers */
    snprintf(row2, sizeof row2, "%ld,10,tokens,6400\n", ids[1]);
    while (f && fgets(line, sizeof line, f)) {
        if (lines == 0) header_ok = !strcmp(line, "run,step,metric,value\n");
        row_ok |= !strcmp(line, row2);
        eval_ok |= !strncmp(line, "1,50,val_loss,1.25\n", 19) && ids[0] == 1;
        n_loss += strstr(line, ",loss,") != NULL;
        lines++;
    }
    if (f) fclose(f);
    CHECK(lines == 1 + 2 * 50 * STEP_METRIC_N + 3 && n_loss == 100 && header_ok && row_ok && eval_ok,
          "csv lines %d loss rows %d header %d row %d eval %d", lines, n_loss, header_ok,
          row_ok, eval_ok);
    db_path(out, sizeof out, "export.json");
    CHECK(runstore_export(s, ids, 2, "json", out, err) == LM_OK, "json: %s", err);
    json_error_t je;
    json_t *root = json_load_file(out, 0, &je);
    CHECK(root && json_array_size(root) == 2, "json parses: %s", root ? "" : je.text);
    json_t *r0 = json_array_get(root, 0);
    CHECK(json_array_size(json_object_get(r0, "metrics")) == 50 &&
          json_array_size(json_object_get(r0, "evals")) == 1 &&
          json_number_value(json_object_get(json_object_get(r0, "config"), "d")) == 128 &&
          json_number_value(json_object_get(r0, "best_val")) == 1.25, "json content");
    json_decref(root);
    CHECK(runstore_export(s, ids, 2, "xml", out, err) == LM_EARG, "bad format");
    long bad_ids[1] = {424242};
    CHECK(runstore_export(s, bad_ids, 1, "csv", out, err) == LM_EARG, "unknown run");
    CHECK(access(out, F_OK) == 0, "failed export leaves the old file");
    runstore_close(s);
}

/* ---- delete, sweeps ----------------------------------------------------------------------- */

static void test_delete(void)
{
    char path[512], dir[256], err[LM_ERR_LEN], f1[300], f2[300], f3[300];
    RunStore *s;
    db_path(path, sizeof path, "delete.db");
    db_path(dir, sizeof dir, "ck_run");
    mkdir(dir, 0755);
    snprintf(f1, sizeof f1, "%s/step1.bin", dir);
    snprintf(f2, sizeof f2, "%s/step2.bin", dir);
    snprintf(f3, sizeof f3, "%s/config.txt", dir);
    fclose(fopen(f1, "w")), fclose(fopen(f2, "w")), fclose(fopen(f3, "w"));
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    RunInfo info = {.name = "del", .config = "lr=1\n", .checkpoint_dir = dir};
    long id = 0, keep = new_run(s, "keep", "msa", "lr=2\n", NULL);
    runstore_run_create(s, &info, &id, err);
    CheckpointRecord c = {.step = 1, .val_loss = NAN};
    snprintf(c.path, sizeof c.path, "%s", f1);
    runstore_log_checkpoint(s, id, &c, err);
    c.step = 2;
    snprintf(c.path, sizeof c.path, "%s", f2);
    runstore_log_checkpoint(s, id, &c, err);
    for (long t = 1; t <= 10; t++) {
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
        runstore_log_step(s, keep, &m, err);
    }
    runstore_log_sample(s, id, 5, "a", NULL, "b", err);
    /* issue 21: only what the run wrote goes — recorded paths, their .optim siblings and
     * trainer-named files (a torn best.safetensors.tmp.PID); config.txt, a sub-folder and
     * a file named like a checkpoint but not one (step-x.safetensors) are left */
    char f4[300], f5[300], f6[300], sub[300];
    snprintf(f4, sizeof f4, "%s/step-00000002.optim.safetensors", dir);
    snprintf(f5, sizeof f5, "%s/best.safetensors.tmp.123", dir);
    snprintf(f6, sizeof f6, "%s/step-x.safetensors", dir);
    char f7[300];
    snprintf(f7, sizeof f7, "%s/unrecorded-rows.tsv", dir);
    fclose(fopen(f7, "w"));
    snprintf(sub, sizeof sub, "%s/notes", dir);
    fclose(fopen(f4, "w")), fclose(fopen(f5, "w")), fclose(fopen(f6, "w"));
    mkdir(sub, 0755);
    RunFilesReport rep;
    CHECK(runstore_delete_run_report(s, id, 1, &rep, err) == LM_OK, "delete: %s", err);
    CHECK(access(f1, F_OK) && access(f2, F_OK) && access(f4, F_OK) && access(f5, F_OK) &&
          access(f7, F_OK), "the run's files removed");
    CHECK(!access(f3, F_OK) && !access(f6, F_OK) && !access(sub, F_OK) && !access(dir, F_OK),
          "a file the run did not write was deleted (or its folder)");
    CHECK(rep.removed == 5 && rep.left == 3 && !rep.dir_removed, "report: removed %d left %d "
          "dir_removed %d", rep.removed, rep.left, rep.dir_removed);
    CHECK(strstr(rep.left_names, "config.txt") && strstr(rep.left_names, "notes") &&
          strstr(rep.left_names, "step-x.safetensors"), "left: '%s'", rep.left_names);
    unlink(f3), unlink(f6), rmdir(sub), rmdir(dir);
    RunRow r;
    CHECK(runstore_get(s, id, &r, err) == LM_EARG && strstr(err, "no run"), "gone: %s", err);
    CHECK(runstore_flush(s, err) == LM_OK, "pending rows of the deleted run dropped: %s", err);
    runstore_close(s);
    CHECK(q_long(path, "SELECT (SELECT count(*) FROM metrics WHERE run_id=2) +"
                 " (SELECT count(*) FROM samples) + (SELECT count(*) FROM checkpoints)") == 0,
          "child rows deleted");
    CHECK(q_long(path, "SELECT count(*) FROM metrics WHERE run_id=1") == 10, "other run kept");
}

/* ---- timings ------------------------------------------------------------------------------ */

static void test_timings(void)
{
    char path[512], err[LM_ERR_LEN], cfg[256];
    RunStore *s;
    db_path(path, sizeof path, "big.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    double t0 = now_s();
    for (int i = 0; i < 10000; i++) {
        snprintf(cfg, sizeof cfg, "model=%s\nd=%d\nheads=4\nlayers=%d\nlr=%g\noptimizer=adamw\n"
                 "batch=32\nbptt=64\nseed=%d\ndata=data/tiny_shakespeare.txt\n",
                 i % 2 ? "msa" : "lstm", 64 << (i % 3), 1 + i % 4, 1e-4 * (1 + i % 30), i);
        RunInfo info = {.name = "run", .config = cfg, .model = i % 2 ? "msa" : "lstm",
                        .data_name = "tiny_shakespeare", .params = 100000 + i};
        long id;
        if (runstore_run_create(s, &info, &id, err)) break;
    }
    double t_create = now_s() - t0;
    q_exec(path, "UPDATE runs SET best_val = (id * 7919 % 1000) / 100.0 WHERE id % 3 <> 0");
    RunRow *rows;
    int n = 0, st = LM_OK;
    double t_list[3], c_list[3];
    for (int k = 0; k < 3; k++) {   /* first call touches fresh memory: report all three */
        t0 = now_s();
        double c0 = cpu_s();
        st |= runstore_list(s, NULL, k == 1 ? "recent" : "best", 0, &rows, &n, err);
        t_list[k] = now_s() - t0;
        c_list[k] = cpu_s() - c0;
        CHECK(st == LM_OK && n == 10000, "10,000 runs listed (%d): %s", n, err);
        runstore_rows_free(rows, n);
    }
    t0 = now_s();
    st = runstore_list(s, "model=msa lr<0.001 d>=128", "recent", 0, &rows, &n, err);
    double t_filter = now_s() - t0;
    CHECK(st == LM_OK && n > 0, "filtered list n=%d", n);
    runstore_rows_free(rows, n);
    printf("  10,000 runs: create %.2f s; list sort=best first call %.1f ms (cpu %.1f),"
           " sort=recent %.1f ms (cpu %.1f), sort=best again %.1f ms (cpu %.1f);"
           " filtered by config keys %.1f ms (%d rows)\n", t_create, 1e3 * t_list[0],
           1e3 * c_list[0], 1e3 * t_list[1], 1e3 * c_list[1], 1e3 * t_list[2], 1e3 * c_list[2],
           1e3 * t_filter, n);

    runstore_close(s);
}

static void test_series_timing(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    int n = 0, st;
    db_path(path, sizeof path, "long.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long id = new_run(s, "long", "msa", "lr=1\n", NULL);
    double t0 = now_s();
    for (long t = 1; t <= 100000; t++) {
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
    }
    runstore_flush(s, err);
    double t_write = now_s() - t0;
    SeriesPoint *p = NULL;
    t0 = now_s();
    double c0 = cpu_s();
    st = runstore_series(s, id, "loss", &p, &n, err);
    double t_series = now_s() - t0, c_series = cpu_s() - c0;
    CHECK(st == LM_OK && n == 100000 && p[99999].step == 100000, "100,000 points (%d)", n);
    free(p);
    printf("  100,000 steps: logged+flushed in %.1f ms (%.2f us/step), series read %.1f ms"
           " (cpu %.1f)\n", 1e3 * t_write, 1e6 * t_write / 100000, 1e3 * t_series,
           1e3 * c_series);
    runstore_close(s);
}

/* The per-step metrics are described once (core/base/metrics.def): the metrics table's
 * columns are the historical ones in the same order, every metric of the table goes
 * through write, read, series and export by its name, a store lacking a metric's column
 * gets it when opened, and a journal line of an lmlab with fewer metrics lands. */
static void test_step_metrics(void)
{
    char path[512], jpath[600], err[LM_ERR_LEN], sql[200], cols[512] = "";
    RunStore *s;
    db_path(path, sizeof path, "metrics_def.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    runstore_close(s);
    sqlite3 *db;
    sqlite3_stmt *st;
    sqlite3_open(path, &db);
    sqlite3_prepare_v2(db, "SELECT name, type FROM pragma_table_info('metrics') ORDER BY cid",
                       -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW)
        snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%s %s,",
                 (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    sqlite3_close(db);
    static const char OLD[] = "run_id INTEGER,step INTEGER,epoch REAL,tokens INTEGER,loss REAL,"
                              "lr REAL,grad_norm REAL,tokens_per_s REAL,elapsed REAL,";
    CHECK(!strncmp(cols, OLD, strlen(OLD)), "the metrics table's columns changed (a new metric"
          " goes at the end of metrics.def): %s", cols);

    /* every metric by position: a distinct value each, back through every reader */
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    if (!s) return;
    long id = new_run(s, "metrics", "msa", "", NULL);
    StepMetric m = {.step = 7}, back;
    for (int i = 0; i < STEP_METRIC_N; i++)
        step_metric_set(&m, i, 3.25 + 10 * i);
    CHECK(runstore_log_step(s, id, &m, err) == LM_OK && runstore_flush(s, err) == LM_OK,
          "write: %s", err);
    long n_steps = 0;
    CHECK(runstore_last_step(s, id, &back, &n_steps, err) == LM_OK && n_steps == 1,
          "last step: %s", err);
    for (int i = 0; i < STEP_METRIC_N; i++) {
        const char *name = STEP_METRICS[i].name;
        CHECK(step_metric_get(&back, i) == step_metric_get(&m, i), "%s read back %g, wrote %g",
              name, step_metric_get(&back, i), step_metric_get(&m, i));
        SeriesPoint *p = NULL;
        int n = 0;
        CHECK(runstore_series(s, id, name, &p, &n, err) == LM_OK && n == 1 && p[0].step == 7
              && p[0].value == step_metric_get(&m, i), "series %s: %s", name, err);
        free(p);
    }
    char *csv = NULL;
    size_t csv_len = 0;
    FILE *f = open_memstream(&csv, &csv_len);
    CHECK(runstore_export_stream(s, &id, 1, "csv", f, err) == LM_OK, "export: %s", err);
    fclose(f);
    for (int i = 0; csv && i < STEP_METRIC_N; i++) {
        char line[128];
        snprintf(line, sizeof line, "\n%ld,7,%s,%g\n", id, STEP_METRICS[i].name,
                 step_metric_get(&m, i));
        CHECK(strstr(csv, line) != NULL, "export lacks %s", line + 1);
    }
    free(csv);
    runstore_close(s);

    /* a store made before a metric existed: the column is added when it is opened */
    CHECK(q_exec(path, "ALTER TABLE metrics DROP COLUMN elapsed") == SQLITE_OK, "drop column");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open a store lacking a column: %s", err);
    if (!s) return;
    CHECK(q_long(path, "SELECT count(*) FROM pragma_table_info('metrics') WHERE name="
                 "'elapsed'") == 1, "the elapsed column was not added back");
    m.step = 8;
    CHECK(runstore_log_step(s, id, &m, err) == LM_OK && runstore_flush(s, err) == LM_OK,
          "write after adding the column: %s", err);
    snprintf(sql, sizeof sql, "SELECT elapsed FROM metrics WHERE run_id=%ld AND step=8", id);
    CHECK(q_long(path, sql) == (long)m.elapsed, "elapsed of step 8: %ld", q_long(path, sql));

    /* the journal: a line of an lmlab with one metric fewer lands (the missing one NULL),
     * a torn last line (no newline) does not */
    snprintf(jpath, sizeof jpath, "%s/metrics_def.tsv", tmpdir);
    f = fopen(jpath, "w");
    fprintf(f, "S\t%ld\t9\t0.5\t640\t2.5\t0.001\t0.7\t1000\n", id);
    for (int i = 0; i < STEP_METRIC_N; i++) fputs(i ? "\t1" : "S\t1\t10", f);
    fclose(f);
    runstore_set_journal(s, jpath, 0);
    CHECK(runstore_journal_rows(s) == 1, "journal rows %ld", runstore_journal_rows(s));
    CHECK(runstore_flush(s, err) == LM_OK, "flush the journal: %s", err);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM metrics WHERE run_id=%ld AND step=9 AND"
             " tokens=640 AND abs(tokens_per_s-1000)<1e-9 AND elapsed IS NULL", id);
    CHECK(q_long(path, sql) == 1, "the shorter journal line did not land as it was");
    CHECK(q_long(path, "SELECT count(*) FROM metrics WHERE step=10") == 0, "a torn line landed");
    runstore_close(s);
}

/* Issue 33 item 1: the best checkpoint is its own record. In the trainer's order (the best
 * file, then the step file of the same step) the step file never replaces it, and an old
 * store (schema 4, where it did) is repaired on open from the flagged row. */
static void test_best_record(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "best.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long id = new_run(s, "best", "dispatcher", "steps=400\n", "running");
    CheckpointRecord b150 = {.step = 150, .val_loss = 2.48, .is_best = 1};
    CheckpointRecord b300 = {.step = 300, .val_loss = 2.25, .is_best = 1};
    CheckpointRecord s300 = {.step = 300, .val_loss = 2.25, .is_best = 1};
    CheckpointRecord s400 = {.step = 400, .val_loss = 2.25, .is_best = 0};
    snprintf(b150.path, sizeof b150.path, "/r/run-%ld/best.safetensors", id);
    snprintf(b300.path, sizeof b300.path, "/r/run-%ld/best.safetensors", id);
    snprintf(s300.path, sizeof s300.path, "/r/run-%ld/step-00000300.safetensors", id);
    snprintf(s400.path, sizeof s400.path, "/r/run-%ld/step-00000400.safetensors", id);
    CHECK(runstore_log_checkpoint(s, id, &b150, err) == LM_OK &&
          runstore_log_checkpoint(s, id, &b300, err) == LM_OK &&
          runstore_log_checkpoint(s, id, &s300, err) == LM_OK &&
          runstore_log_checkpoint(s, id, &s400, err) == LM_OK, "log: %s", err);
    CheckpointRecord best, *c = NULL;
    int found = 0, n = 0;
    CHECK(runstore_best_checkpoint(s, id, &best, &found, err) == LM_OK && found &&
          best.step == 300 && strstr(best.path, "/best.safetensors"),
          "best record: found %d step %ld %s", found, best.step, best.path);
    CHECK(runstore_checkpoints(s, id, &c, &n, err) == LM_OK && n == 2 && c[0].step == 300 &&
          strstr(c[0].path, "step-00000300") && c[0].is_best && !c[1].is_best,
          "step records: n=%d", n);
    free(c);
    RunRow r;
    CHECK(runstore_get(s, id, &r, err) == LM_OK && r.best_step == 300, "row best_step %ld",
          r.best_step);
    runstore_row_free(&r);
    /* the same rows as schema 4 kept them: best rows at 50 and 150, the flag on step 300 */
    runstore_close(s);
    char sql[1024];
    snprintf(sql, sizeof sql, "DROP TABLE best_checkpoints; DELETE FROM checkpoints;"
             "INSERT INTO checkpoints VALUES(%ld, 50, '/r/best.safetensors', 3.2, 0),"
             "(%ld, 150, '/r/best.safetensors', 2.48, 0),"
             "(%ld, 300, '/r/step-00000300.safetensors', 2.25, 1),"
             "(%ld, 400, '/r/step-00000400.safetensors', 2.25, 0);"
             "PRAGMA user_version = 4;", id, id, id, id);
    CHECK(q_exec(path, sql) == SQLITE_OK, "build a schema-4 store");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open schema 4: %s", err);
    if (!s) return;
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION, "migrated");
    CHECK(runstore_best_checkpoint(s, id, &best, &found, err) == LM_OK && found &&
          best.step == 300 && !strcmp(best.path, "/r/best.safetensors"),
          "migrated best: found %d step %ld %s", found, best.step, best.path);
    CHECK(runstore_checkpoints(s, id, &c, &n, err) == LM_OK && n == 2 && c[0].step == 300,
          "migrated step records: n=%d", n);
    free(c);
    runstore_close(s);
}

/* The one reader of a run's config text (runstore_row.h): the WHOLE key, never a key it
 * is a prefix or a suffix of, wherever the lines fall; blanks ignored; absent says so. */
static void test_config_reader(void)
{
    const char *cfg = "lr_min=1e-5\nmin_lr=2e-5\nlr=0.003\nd = 64 \n\tsteps=400\r\n"
                      "name=\"a b\"\nempty=\nlog_every=10";
    char v[64];
    CHECK(runstore_config_value(cfg, "lr", v, sizeof v) && !strcmp(v, "0.003"),
          "lr (after lr_min= and min_lr=): '%s'", v);
    CHECK(runstore_config_value(cfg, "lr_min", v, sizeof v) && !strcmp(v, "1e-5"), "lr_min: %s",
          v);
    CHECK(runstore_config_value(cfg, "d", v, sizeof v) && !strcmp(v, "64"), "d: '%s'", v);
    CHECK(runstore_config_value(cfg, "steps", v, sizeof v) && !strcmp(v, "400"), "steps: '%s'",
          v);
    CHECK(runstore_config_value(cfg, "name", v, sizeof v) && !strcmp(v, "\"a b\""),
          "name (raw, as stored): '%s'", v);
    CHECK(runstore_config_value(cfg, "empty", v, sizeof v) == 1 && !v[0], "empty: '%s'", v);
    CHECK(runstore_config_value(cfg, "log_every", v, sizeof v) && !strcmp(v, "10"),
          "last line without a newline: '%s'", v);
    strcpy(v, "x");
    CHECK(!runstore_config_value(cfg, "l", v, sizeof v) && !v[0], "prefix 'l' matched: '%s'", v);
    CHECK(!runstore_config_value(cfg, "lr_m", v, sizeof v), "prefix 'lr_m' matched: %s", v);
    CHECK(!runstore_config_value(cfg, "min", v, sizeof v), "'min' matched: %s", v);
    CHECK(!runstore_config_value(cfg, "r", v, sizeof v), "suffix 'r' matched: %s", v);
    CHECK(!runstore_config_value("lr_min=1\n", "lr", v, sizeof v), "only lr_min: '%s'", v);
    CHECK(!runstore_config_value(NULL, "lr", v, sizeof v) &&
          !runstore_config_value("", "lr", v, sizeof v) &&
          !runstore_config_value(cfg, "", v, sizeof v), "NULL, empty text or empty key");
    char small[4];
    CHECK(runstore_config_value(cfg, "lr_min", small, sizeof small) && !strcmp(small, "1e-"),
          "truncated to its buffer: '%s'", small);
    CHECK(runstore_config_long(cfg, "steps", -1) == 400 &&
          runstore_config_long(cfg, "lr_mi", -1) == -1 &&
          runstore_config_long(cfg, "name", -1) == -1 &&
          runstore_config_long(cfg, "empty", 7) == 7, "typed reader");
}

/* Whether a run's best is an estimate (runstore_best_estimated) from its row alone, and
 * runstore_run_json (every JSON of a run: runs, run, export) says it as best_estimated. */
static void check_estimated(RunStore *s, long id, int want, const char *what)
{
    char err[LM_ERR_LEN];
    RunRow r;
    CHECK(runstore_get(s, id, &r, err) == LM_OK, "get %ld: %s", id, err);
    json_t *o = runstore_run_json(&r);
    json_t *b = json_object_get(o, "best_estimated");
    CHECK(runstore_best_estimated(&r) == want && json_is_boolean(b) &&
          json_boolean_value(b) == want, "%s: best %.4f final %.4f status %s: estimated %d, "
          "JSON %s, want %d", what, r.best_val, r.final_val, r.status,
          runstore_best_estimated(&r), b ? (json_is_true(b) ? "true" : "false") : "missing",
          want);
    json_decref(o);
    runstore_row_free(&r);
}

static long run_with_evals(RunStore *s, const char *config, const double *loss, int n,
                           const char *status, const char *reason)
{
    char err[LM_ERR_LEN];
    long id = new_run(s, "est", "dispatcher", config, "");
    for (int i = 0; i < n; i++) {
        EvalMetric e = {.step = 50L * (i + 1), .split = "valid", .loss = loss[i],
                        .ppl = exp(loss[i]), .bpc = NAN, .tokens = 100};
        CHECK(runstore_log_eval(s, id, &e, err) == LM_OK, "eval: %s", err);
    }
    CHECK(runstore_flush(s, err) == LM_OK &&
          runstore_run_set_status(s, id, status, reason, err) == LM_OK, "status: %s", err);
    return id;
}

static void test_best_estimated(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "estimated.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    const double down[] = {3.0, 2.5, 2.2}, up[] = {3.0, 2.2, 2.5};
    const char *est = "lr_min=0\neval_batches=5\n", *whole = "eval_batches=0\n";
    /* stopped before its final whole-split evaluation: every evaluation an estimate */
    check_estimated(s, run_with_evals(s, est, down, 3, "stopped", "stopped by the user"), 1,
                    "stopped by the user");
    check_estimated(s, run_with_evals(s, est, down, 3, "interrupted", "process gone"), 1,
                    "interrupted");
    /* finished: its last evaluation is whole-split; the best is it, or an earlier estimate */
    check_estimated(s, run_with_evals(s, est, down, 3, "finished", NULL), 0,
                    "finished, best is the final whole-split evaluation");
    check_estimated(s, run_with_evals(s, est, up, 3, "finished", NULL), 1,
                    "finished, best is an earlier estimate");
    check_estimated(s, run_with_evals(s, est, down, 3, "stopped", "reached step 150 (stop_at)"),
                    0, "stop_at evaluates the whole split");
    /* eval_batches=0: every evaluation is whole-split; no evaluation: no best to mark */
    check_estimated(s, run_with_evals(s, whole, up, 3, "stopped", "stopped by the user"), 0,
                    "eval_batches=0");
    check_estimated(s, run_with_evals(s, est, down, 0, "stopped", "stopped by the user"), 0,
                    "no evaluation yet");
    runstore_close(s);
}

/* Seed groups and store settings are schema step 10, in the migration's one transaction
 * like every step: a version-9 store without them gains them and reaches version 10; a
 * store at 10 is not patched outside the steps (a dropped table stays dropped: the open
 * changes nothing). */
static void test_group_step(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "v9.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    runstore_close(s);
    CHECK(q_exec(path, "DROP TRIGGER sweep_trial_group; DROP TABLE run_groups;"
                 " DROP TABLE store_settings; PRAGMA user_version = 9;") == SQLITE_OK,
          "a version-9 store without the group tables");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open v9: %s", err);
    runstore_close(s);
    CHECK(RUNSTORE_GROUP_VERSION == 10 && RUNSTORE_SERIES_VERSION == 11 &&
          RUNSTORE_EDITS_VERSION == 12 && RUNSTORE_SCHEMA_VERSION == RUNSTORE_CHANGES_VERSION &&
          q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION,
          "steps 10 to 13 set the version: %ld", q_long(path, "PRAGMA user_version"));
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE name='run_edits'") == 1,
          "step 12 made the edits table");
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE name='run_setting_changes'")
          == 1, "step 13 made the setting changes table");
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('run_groups',"
                 " 'store_settings', 'sweep_trial_group')") == 3, "step 10 made the tables");
    CHECK(q_exec(path, "DROP TABLE store_settings;") == SQLITE_OK, "drop at the version");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open at the version: %s", err);
    runstore_close(s);
    CHECK(q_long(path, "SELECT count(*) FROM sqlite_master WHERE name='store_settings'") == 0,
          "no table created outside the versioned steps");
}

static void run_all(void)
{
    test_schema();
    test_step_metrics();
    test_migration();
    test_group_step();
    test_best_record();
    test_config_reader();
    test_best_estimated();
    test_roundtrip();
    test_list();
    test_compare_export();
    test_delete();
    test_timings();
    test_series_timing();
}

int main(void)
{
    return runstore_test_main("runstore tests", run_all);
}
