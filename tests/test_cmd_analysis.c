/* test_cmd_analysis.c — the analysis commands on a store filled by hand with known
 * values: `runs group_by=` (N, mean ± std worked out by hand), `runs columns=` kept across
 * sessions and `columns=default`, `sort=` on a setting and on final_smooth (descending
 * too), unknown columns refused; `sweep importance` text and JSON on a 2x2 grid whose
 * eta squared is known; `sweep show` ranking seed groups by their mean; `plot group=
 * band=` and `plot sweep` writing files; bad group names and sample runs= refused. */
#include "check.h"
#include "err.h"
#include "runstore.h"
#include "runstore_group.h"
#include "session_util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

/* Six runs: lr=0.001 seeds 1..3 (best 2.0 2.2 2.4), lr=0.01 seeds 1..3 (1.0 1.1 1.2); the
 * first three in group "slow"; a sweep whose 4 trials are those with params of a 2x2 grid
 * plus a seeded sweep of runs 4..6. Training losses fall to run-specific ends. */
static void fill(const char *db, long *grid, long *seeded)
{
    RunStore *st;
    char err[LM_ERR_LEN], cfg[128];
    static const double best[6] = {2.0, 2.2, 2.4, 1.0, 1.1, 1.2};
    CHECK(runstore_open(db, &st, err) == LM_OK, "open: %s", err);
    for (int r = 0; r < 6; r++) {
        long id;
        snprintf(cfg, sizeof cfg, "model=msa\nlr=%s\nseed=%d\n", r < 3 ? "0.001" : "0.01", r % 3 + 1);
        RunInfo info = {.name = "r", .config = cfg, .model = "msa", .data_name = "tiny"};
        CHECK(runstore_run_create(st, &info, &id, err) == LM_OK, "create: %s", err);
        for (long k = 1; k <= 20; k++) {
            StepMetric m = {.step = k, .loss = 3.0f - 0.05f * k - 0.1f * r};
            runstore_log_step(st, id, &m, err);
        }
        EvalMetric ev = {.step = 20, .split = "valid", .loss = best[r], .bpc = NAN};
        runstore_log_eval(st, id, &ev, err);
        runstore_flush(st, err);
        runstore_run_set_status(st, id, "finished", NULL, err);
    }
    long slow[] = {1, 2, 3};
    CHECK(runstore_group_set(st, slow, 3, "slow", err) == LM_OK, "group: %s", err);
    runstore_sweep_create(st, "g", "metric=best_val", "grid", grid, err);
    const char *p[] = {"lr=1 k=10", "lr=1 k=20", "lr=2 k=10", "lr=2 k=20"};
    int runs[] = {1, 2, 4, 5};
    for (int t = 0; t < 4; t++) runstore_sweep_trial_set(st, *grid, t + 1, runs[t], p[t], "done", err);
    runstore_sweep_create(st, "seeded", "metric=best_val", "grid", seeded, err);
    const char *q[] = {"lr=0.01 seed=1", "lr=0.01 seed=2", "lr=0.001 seed=1", "lr=0.001 seed=2"};
    int r2[] = {4, 5, 1, 2};
    for (int t = 0; t < 4; t++) runstore_sweep_trial_set(st, *seeded, t + 1, r2[t], q[t], "done", err);
    long one;   /* sweep 3: one trial per value of eps (issue 33 item 2) */
    runstore_sweep_create(st, "one", "metric=best_val", "grid", &one, err);
    const char *e[] = {"eps=1e-8", "eps=1e-7", "eps=1e-6", "eps=1e-5"};
    for (int t = 0; t < 4; t++) runstore_sweep_trial_set(st, one, t + 1, runs[t], e[t], "done", err);
    runstore_close(st);
}

static void test_groups(Session *s)
{
    CHECK(run(s, "runs group_by=lr") == LM_OK, "group_by: %s", out);
    /* lr=0.01: 1.0 1.1 1.2 -> mean 1.1, std 0.1; lr=0.001: 2.2 ± 0.2; best group first */
    const char *a = strstr(out, "0.01 "), *b = strstr(out, "0.001 ");
    CHECK(a && b && a < b, "best group first: %s", out);
    CHECK(a && strstr(a, "   3  1.1000 ± 0.1000") && strstr(a, "   3  1.1000 ± 0.1000") < b,
          "lr=0.01 N=3 1.1 ± 0.1: %s", out);
    CHECK(b && strstr(b, "2.2000 ± 0.2000"), "lr=0.001 2.2 ± 0.2: %s", out);
    CHECK(run(s, "runs group_by=group") == LM_OK && strstr(out, "slow") &&
          strstr(out, "2.2000 ± 0.2000"), "stored group: %s", out);
    CHECK(run(s, "group pair 4 6") == LM_OK && run(s, "group pair") == LM_OK &&
          strstr(out, "2 runs (4,6)") && strstr(out, "1.1000 ± 0.1414"), "group by hand: %s", out);
    /* issue 33 items 8 and 9: group= filters; a group of one states no spread; JSON ids as
     * numbers, the group in --json runs */
    CHECK(run(s, "runs group=pair") == LM_OK && strstr(out, "\n   6 ") && strstr(out, "\n   4 ")
          && !strstr(out, "\n   5 "), "group=pair: %s", out);
    CHECK(run(s, "runs group~pai limit=1") == LM_OK && strstr(out, "\n   6 "), "group~: %s", out);
    CHECK(run(s, "group one 5") == LM_OK && run(s, "group one") == LM_OK &&
          strstr(out, "1 run (5)") && !strstr(out, "±"), "group of one: %s", out);
    CHECK(run(s, "runs group_by=group") == LM_OK && strstr(out, "(1 run)"), "%s", out);
    s->json = 1;
    CHECK(run(s, "group pair") == LM_OK && strstr(out, "\"runs\":[4,6]"), "json ids: %s", out);
    CHECK(run(s, "group one") == LM_OK && strstr(out, "\"best_std\":null"), "json one: %s", out);
    CHECK(run(s, "runs group_by=group") == LM_OK && strstr(out, "\"runs\":[5]"), "%s", out);
    CHECK(run(s, "runs group=pair limit=1") == LM_OK && strstr(out, "\"group\":\"pair\""),
          "--json runs has the group: %s", out);
    s->json = 0;
    CHECK(run(s, "group none 5") == LM_OK, "%s", out);
    CHECK(run(s, "group none 4 6") == LM_OK && run(s, "group pair") != LM_OK &&
          strstr(out, "no group 'pair'"), "taken out: %s", out);
    CHECK(run(s, "group x 4 999") != LM_OK && strstr(out, "no run 999"), "%s", out);
    CHECK(run(s, "runs group_by=nope") != LM_OK && strstr(out, "no such column"), "%s", out);
    CHECK(run(s, "sweep show 2") == LM_OK, "show: %s", out);
    const char *g = strstr(out, "seed groups ranked by their mean:");
    CHECK(g && strstr(g, "*  1  lr=0.01") && strstr(g, "1.0500 ± 0.0707") &&
          strstr(g, "   2  lr=0.001"), "seed groups: %s", out);
}

static void test_columns(Session *s, const char *db)
{
    /* issue 33 item 3: an unknown column is refused (did you mean) and nothing is kept; a
     * layout is kept only with keep=true, never by a --json query */
    CHECK(run(s, "runs columns=id,nmae") == LM_EARG && strstr(out, "unknown column 'nmae'") &&
          strstr(out, "did you mean 'name'"), "unknown column: %s", out);
    CHECK(run(s, "runs limit=1") == LM_OK && strstr(out, "best val (ppl)"), "typo kept: %s", out);
    s->json = 1;
    CHECK(run(s, "runs columns=id limit=1") == LM_OK, "%s", out);
    s->json = 0;
    CHECK(run(s, "runs limit=1") == LM_OK && strstr(out, "best val (ppl)"), "json kept: %s", out);
    CHECK(run(s, "runs columns=id,lr limit=1") == LM_OK && !strncmp(out, "id  lr", 6), "%s", out);
    CHECK(run(s, "runs limit=1") == LM_OK && strstr(out, "best val (ppl)"), "kept: %s", out);
    CHECK(run(s, "runs keep=true") == LM_EARG, "keep without columns: %s", out);
    CHECK(run(s, "runs columns=id,lr,seed,best_val sort=-best_val keep=true") == LM_OK, "%s", out);
    CHECK(strstr(out, "id  lr     seed  best_val\n3   0.001  3     2.4000"), "desc: %s", out);
    CHECK(run(s, "runs sort=final_smooth limit=1") == LM_OK && strstr(out, "\n6 "),
          "final_smooth: run 6 ends lowest: %s", out);
    CHECK(run(s, "runs sort=nope") != LM_OK && strstr(out, "unknown sort key"), "%s", out);
    Session t;   /* the layout is the store's: another session sees it */
    session_init(&t, db);
    session_set_writer(&t, capture, NULL);
    CHECK(run(&t, "runs limit=1") == LM_OK && !strncmp(out, "id  lr", 6), "kept: %s", out);
    CHECK(run(&t, "runs columns=default limit=1") == LM_OK && strstr(out, "best val (ppl)"),
          "default: %s", out);
    session_free(&t);
}

static void test_importance(Session *s)
{
    CHECK(run(s, "sweep importance 1") == LM_OK, "importance: %s", out);
    /* best 2.0 2.2 1.0 1.1: SS_tot 1.1275, lr 1.1025, k 0.0225 -> 97.8%, 2.0% */
    CHECK(strstr(out, "lr                97.8%") && strstr(out, "k                  2.0%"),
          "shares: %s", out);
    s->json = 1;
    CHECK(run(s, "sweep importance 1") == LM_OK, "json: %s", out);
    json_t *o = json_loads(out, 0, NULL);
    json_t *lr = o ? json_array_get(json_object_get(o, "settings"), 0) : NULL;
    CHECK(lr && !strcmp(json_string_value(json_object_get(lr, "key")), "lr") &&
          fabs(json_real_value(json_object_get(lr, "share")) - 1.1025 / 1.1275) < 1e-9 &&
          json_real_value(json_object_get(lr, "rho")) < 0, "json: %s", out);
    json_decref(o);
    s->json = 0;
    /* issue 33 item 2: one trial per value cannot tell; shares set against seed noise */
    CHECK(run(s, "sweep importance 3") == LM_OK && strstr(out, "(cannot tell)") &&
          !strstr(out, "100.0%") && strstr(out, "one trial per value") &&
          strstr(out, "seed-to-seed noise unknown"), "one trial per value: %s", out);
    /* sweep 2: lr=0.01 seeds (1.0, 1.1), lr=0.001 seeds (2.0, 2.2): pooled std
     * sqrt((0.005 + 0.02) / 2) = 0.1118, range 2.1 - 1.05 = 1.05 = 9.4x the noise */
    CHECK(run(s, "sweep importance 2") == LM_OK && strstr(out, "noise ±0.1118") &&
          strstr(out, "1.0500") && strstr(out, "range 9.4x the seed noise"), "noise: %s", out);
    s->json = 1;
    CHECK(run(s, "sweep importance 3") == LM_OK && strstr(out, "\"identified\":false") &&
          strstr(out, "\"share\":null") && strstr(out, "\"seed_noise\":null"), "%s", out);
    s->json = 0;
    CHECK(run(s, "sweep importance 99") != LM_OK && strstr(out, "no sweep 99"), "%s", out);
}

static void test_plots_and_refusals(Session *s)
{
    struct stat sb;
    CHECK(run(s, "plot group=slow band=std file=band.svg") == LM_OK &&
          stat("band.svg", &sb) == 0 && sb.st_size > 1000, "band: %s", out);
    CHECK(run(s, "plot 4 5 6 band=minmax file=b2.svg") == LM_OK && strstr(out, "3 runs"),
          "ids as a group: %s", out);
    CHECK(run(s, "plot sweep 1 file=par.svg") == LM_OK && stat("par.svg", &sb) == 0,
          "parallel: %s", out);
    CHECK(run(s, "plot group=none file=x.svg") != LM_OK && strstr(out, "no group"), "%s", out);
    CHECK(run(s, "train group=a,b") != LM_OK && strstr(out, "without spaces or commas"),
          "%s", out);
    CHECK(run(s, "sample runs=1,2,3,4,5,6,7,8,9,10") != LM_OK && strstr(out, "at most 9"),
          "%s", out);
    CHECK(run(s, "sample runs=1") != LM_OK && strstr(out, "no checkpoint"), "%s", out);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lmlab-analysis-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    char db[128];
    long grid = 0, seeded = 0;
    snprintf(db, sizeof db, "%s/runs.db", tmpdir);
    fill(db, &grid, &seeded);
    CHECK(grid == 1 && seeded == 2, "sweeps %ld %ld", grid, seeded);
    if (chdir(tmpdir)) return 1;
    Session s;
    session_init(&s, db);
    session_set_writer(&s, capture, NULL);
    test_groups(&s);
    test_columns(&s, db);
    test_importance(&s);
    test_plots_and_refusals(&s);
    session_free(&s);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
