/* test_sweep.c — sweeps: spec refusals, grid and random expansion (count, order,
 * determinism, ranges, log space), the successive-halving rule on synthetic curves, the
 * bundled sweep files, and the runner end to end on Tiny Shakespeare with tiny models:
 * a grid and a halving sweep recorded as tagged runs, then a sweep whose process is
 * killed with SIGKILL during trial 2 and resumed: no trial run twice, none lost; a
 * parallel=2 sweep's trials read running once their workers start (stub workers). */
#include "check.h"
#include "err.h"
#include "runstore.h"
#include "sweep.h"
#include "sweep_runner.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/lmlab_sweep_XXXXXX";

/* Parses words into sp and finishes it; returns the first failure's status. */
static int spec_from(SweepSpec *sp, const char *const *words, char *err)
{
    sweep_spec_init(sp);
    for (int i = 0; words[i]; i++) {
        int rc = sweep_spec_set_pair(sp, words[i], err);
        if (rc)
            return rc;
    }
    return sweep_spec_finish(sp, NULL, err);
}

/* The spec must be refused with a message containing `want`. */
static void refused(const char *const *words, const char *want)
{
    SweepSpec sp;
    char err[LM_ERR_LEN] = "";
    int rc = spec_from(&sp, words, err);
    CHECK(rc == LM_EARG && strstr(err, want), "%s...: rc %d, message '%s', wanted '%s'",
          words[0], rc, err, want);
}

static void test_refusals(void)
{
    refused((const char *[]){"lrr=1e-3,1e-4", NULL}, "did you mean 'lr'");
    refused((const char *[]){"stratgy=grid", "lr=1e-3", NULL}, "did you mean 'strategy'");
    refused((const char *[]){"lr=", NULL}, "empty list");
    refused((const char *[]){"lr=1e-3,,1e-4", NULL}, "empty value");
    refused((const char *[]){"model=dispatcher,gpt", NULL}, "refuses");
    refused((const char *[]){"d=64,-8", NULL}, "refuses");
    refused((const char *[]){"strategy=random", "trials=4", "lr=loguniform(0,1e-2)", NULL},
            "lo > 0");
    refused((const char *[]){"strategy=random", "trials=4", "lr=loguniform(1e-2,1e-4)", NULL},
            "lo must be below hi");
    refused((const char *[]){"strategy=random", "trials=4", "dropout=uniform(0.3,0.3)", NULL},
            "lo must be below hi");
    refused((const char *[]){"strategy=random", "trials=4", "dropout=uniform(0,2)", NULL},
            "refuses");
    refused((const char *[]){"strategy=random", "lr=1e-3,1e-4", NULL}, "needs trials=");
    refused((const char *[]){"lr=loguniform(1e-4,1e-2)", NULL}, "needs lists");
    refused((const char *[]){"lr=1e-3", "lr=1e-4", NULL}, "given twice");
    refused((const char *[]){"steps=100", NULL}, "nothing to sweep");
    /* 4 x 4 x 5 = 80 trials > max_trials 64 */
    refused((const char *[]){"lr=1e-3,2e-3,3e-3,4e-3", "d=32,64,96,128",
                             "nhid=32,64,96,128,256", NULL}, "more than max_trials=64");
    refused((const char *[]){"max_trials=3", "lr=1e-3,2e-3,3e-3,4e-3", NULL}, "force=true");
    /* the combination is checked with the base: bptt=24 is not a power of two */
    refused((const char *[]){"model=dispatcher", "bptt=16,24", NULL}, "trial 2 (");
    refused((const char *[]){"strategy=halving", "steps=30", "min_steps=30", "lr=1e-3,1e-4",
                             NULL}, "min_steps=30 must be below");
    refused((const char *[]){"base=nosuchexperiment", "lr=1e-3", NULL}, "no such experiment");
    SweepSpec sp;
    char err[LM_ERR_LEN];
    int rc = spec_from(&sp, (const char *[]){"force=true", "lr=1e-3,2e-3,3e-3,4e-3",
                                             "d=32,64,96,128", "nhid=32,64,96,128,256", NULL},
                       err);
    CHECK(rc == LM_OK && sp.n_trials == 80, "force=true runs 80 trials: %d %s", rc, err);
}

static void test_grid(void)
{
    SweepSpec sp;
    char err[LM_ERR_LEN];
    int rc = spec_from(&sp, (const char *[]){"name=g", "steps=123", "lr=1e-3,3e-4",
                                             "d=64,128", "layers=2,4,6", NULL}, err);
    CHECK(rc == LM_OK, "grid spec: %s", err);
    SweepTrial *t;
    int n = 0;
    CHECK(sweep_expand(&sp, &t, &n, err) == LM_OK && n == 12, "12 trials, got %d", n);
    if (n != 12)
        return;
    /* the first key varies slowest, the last fastest */
    CHECK(!strcmp(t[0].params, "lr=1e-3 d=64 layers=2"), "t1 %s", t[0].params);
    CHECK(!strcmp(t[1].params, "lr=1e-3 d=64 layers=4"), "t2 %s", t[1].params);
    CHECK(!strcmp(t[3].params, "lr=1e-3 d=128 layers=2"), "t4 %s", t[3].params);
    CHECK(!strcmp(t[6].params, "lr=3e-4 d=64 layers=2"), "t7 %s", t[6].params);
    CHECK(!strcmp(t[11].params, "lr=3e-4 d=128 layers=6"), "t12 %s", t[11].params);
    CHECK(t[11].k == 12 && !strcmp(t[11].cfg.name, "g-t12"), "name %s", t[11].cfg.name);
    CHECK(fabsf(t[6].cfg.lr - 3e-4f) < 1e-9f && t[6].cfg.d == 64 && t[11].cfg.layers == 6,
          "values applied");
    CHECK(t[0].cfg.steps == 123, "budget applied: %ld", t[0].cfg.steps);
    free(t);
}

/* Expands a random spec with the given seed. */
static int draw(unsigned long seed, SweepTrial **t, char *err)
{
    char s[32];
    snprintf(s, sizeof s, "seed=%lu", seed);
    SweepSpec sp;
    int n = 0;
    if (spec_from(&sp, (const char *[]){"strategy=random", "trials=200", "max_trials=200", s,
                                        "lr=loguniform(1e-4,1e-2)", "dropout=uniform(0,0.3)",
                                        "layers=2,4,6", NULL}, err) ||
        sweep_expand(&sp, t, &n, err))
        return -1;
    return n;
}

static void test_random(void)
{
    char err[LM_ERR_LEN];
    SweepTrial *a, *b, *c;
    int na = draw(5, &a, err), nb = draw(5, &b, err), nc = draw(6, &c, err);
    CHECK(na == 200 && nb == 200 && nc == 200, "200 trials each: %d %d %d (%s)", na, nb, nc,
          err);
    if (na != 200 || nb != 200 || nc != 200)
        return;
    int same = 1, differ = 0, below = 0, per_layers[7] = {0}, in_range = 1;
    double drop_mean = 0;
    for (int i = 0; i < 200; i++) {
        same &= !strcmp(a[i].params, b[i].params);
        differ += strcmp(a[i].params, c[i].params) != 0;
        in_range &= a[i].cfg.lr >= 1e-4f * 0.999f && a[i].cfg.lr <= 1e-2f * 1.001f &&
                    a[i].cfg.dropout >= 0 && a[i].cfg.dropout <= 0.3f;
        below += a[i].cfg.lr < 1e-3f;
        drop_mean += a[i].cfg.dropout / 200;
        if (a[i].cfg.layers >= 0 && a[i].cfg.layers <= 6) per_layers[a[i].cfg.layers]++;
    }
    CHECK(same, "the same seed gives the same trials");
    CHECK(differ > 190, "another seed gives other trials (%d of 200 differ)", differ);
    CHECK(in_range, "every value in its range");
    /* log space: half the draws below the geometric midpoint 1e-3 (linear: 9%);
     * 200 draws: binomial sd 3.5%, tolerance 0.35..0.65 */
    CHECK(below > 70 && below < 130, "loguniform: %d of 200 below 1e-3", below);
    CHECK(fabs(drop_mean - 0.15) < 0.03, "uniform(0,0.3) mean %.3f", drop_mean);
    CHECK(per_layers[2] > 40 && per_layers[4] > 40 && per_layers[6] > 40,
          "lists drawn uniformly: %d %d %d", per_layers[2], per_layers[4], per_layers[6]);
    free(a);
    free(b);
    free(c);
}

/* to_text -> set_pair gives the same trials. */
static void test_round_trip(void)
{
    SweepSpec sp, back;
    char err[LM_ERR_LEN], text[4096];
    int rc = spec_from(&sp, (const char *[]){"strategy=halving", "trials=7", "seed=9",
                                             "steps=90", "eta=3", "lr=loguniform(1e-4,1e-2)",
                                             "model = dispatcher, msa", NULL}, err);
    CHECK(rc == LM_OK && sp.min_steps == 10, "halving spec: %s (min_steps %ld)", err,
          sp.min_steps);
    sweep_spec_to_text(&sp, text, sizeof text);
    sweep_spec_init(&back);
    char *save, *copy = strdup(text);
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
        CHECK(sweep_spec_set_pair(&back, w, err) == LM_OK, "%s: %s", w, err);
    free(copy);
    CHECK(sweep_spec_finish(&back, NULL, err) == LM_OK, "%s", err);
    SweepTrial *a, *b;
    int na, nb;
    sweep_expand(&sp, &a, &na, err);
    sweep_expand(&back, &b, &nb, err);
    int same = na == nb && na == 7;
    for (int i = 0; same && i < na; i++)
        same = !strcmp(a[i].params, b[i].params);
    CHECK(same, "round trip of '%s'", text);
    free(a);
    free(b);
}

/* parallel=K and parallel=ranks survive the stored text; bad values are refused. */
static void test_parallel_words(void)
{
    const char *vals[] = {"2", "ranks", "1"};
    const int want[] = {2, SWEEP_PARALLEL_RANKS, 1};
    for (int k = 0; k < 3; k++) {
        SweepSpec sp, back;
        char err[LM_ERR_LEN] = "", text[4096], word[32];
        sweep_spec_init(&sp);
        snprintf(word, sizeof word, "parallel=%s", vals[k]);
        CHECK(sweep_spec_set_pair(&sp, word, err) == LM_OK && sp.parallel == want[k],
              "%s: %s (got %d)", word, err, sp.parallel);
        sweep_spec_to_text(&sp, text, sizeof text);
        sweep_spec_init(&back);
        char *save, *copy = strdup(text);
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
            CHECK(sweep_spec_set_pair(&back, w, err) == LM_OK, "%s: %s", w, err);
        free(copy);
        CHECK(back.parallel == (want[k] == 1 ? 0 : want[k]), "%s read back from '%s' as %d",
              word, text, back.parallel);
    }
    const char *bad[] = {"parallel=0", "parallel=65", "parallel=x", "parallel=2.5",
                         "parallel=", NULL};
    for (int k = 0; bad[k]; k++) {
        SweepSpec sp;
        char err[LM_ERR_LEN] = "";
        sweep_spec_init(&sp);
        CHECK(sweep_spec_set_pair(&sp, bad[k], err) == LM_EARG && strstr(err, "parallel"),
              "%s accepted (%s)", bad[k], err);
    }
}

static void test_rungs(void)
{
    long r[SWEEP_MAX_RUNGS];
    int n = sweep_halving_rungs(3, 3, 30, r, SWEEP_MAX_RUNGS);
    CHECK(n == 4 && r[0] == 3 && r[1] == 9 && r[2] == 27 && r[3] == 30, "3,9,27,30: n=%d", n);
    n = sweep_halving_rungs(10, 2, 40, r, SWEEP_MAX_RUNGS);
    CHECK(n == 3 && r[0] == 10 && r[1] == 20 && r[2] == 40, "10,20,40: n=%d", n);
    n = sweep_halving_rungs(1, 3, 27, r, SWEEP_MAX_RUNGS);
    CHECK(n == 4 && r[2] == 9 && r[3] == 27, "1,3,9,27: n=%d", n);
}

static void test_promote(void)
{
    int keep[8];
    double m[5] = {2.0, 1.0, NAN, 1.5, 3.0};
    /* n=5, eta=3: ceil(5/3) = 2 continue: trials 1 and 3 */
    CHECK(sweep_halving_promote(m, 5, 3, keep) == 2 && keep[1] && keep[3] && !keep[0] &&
          !keep[2] && !keep[4], "best two of five");
    double nan3[3] = {NAN, 4.0, NAN};
    CHECK(sweep_halving_promote(nan3, 3, 2, keep) == 1 && keep[1], "NaN never continues");
    double tie[4] = {1.0, 0.5, 0.5, 0.5};
    CHECK(sweep_halving_promote(tie, 4, 2, keep) == 2 && keep[1] && keep[2] && !keep[3],
          "ties go to the lower trial");
}

/* Synthetic curves loss_t(s) = a_t + b_t / sqrt(s) over rungs 1,3,9,27 with eta=3 and
 * nine trials: rung 0 keeps ceil(9/3) = 3, rung 1 keeps 1, rung 2 keeps ceil(1/3) = 1. */
static void test_halving_curves(void)
{
    long r[SWEEP_MAX_RUNGS];
    int nr = sweep_halving_rungs(1, 3, 27, r, SWEEP_MAX_RUNGS);
    double a[9] = {1.0, 1.2, 0.8, 1.1, 0.9, 1.5, 1.3, 0.7, 1.05};
    double b[9] = {1.0, 0.1, 1.4, 0.3, 0.6, 0.1, 0.2, 2.0, 0.2};
    double metric[9 * 4];
    for (int t = 0; t < 9; t++)
        for (int i = 0; i < nr; i++)
            metric[t * nr + i] = a[t] + b[t] / sqrt((double)r[i]);
    int alive[9], stopped[9];
    CHECK(nr == 4 && sweep_halving_alive(metric, 9, nr, 3, 0, alive, stopped) == 9,
          "all nine enter rung 0");
    /* at step 1: 2.0 1.3 2.2 1.4 1.5 1.6 1.5 2.7 1.25 -> trials 8, 1, 3 continue */
    CHECK(sweep_halving_alive(metric, 9, nr, 3, 1, alive, stopped) == 3 && alive[8] &&
          alive[1] && alive[3] && !alive[4] && !alive[7] && stopped[0] == 0 &&
          stopped[8] == -1, "rung 0 keeps trials 8, 1, 3");
    /* at step 3: t1 1.258, t3 1.273, t8 1.165 -> trial 8 */
    CHECK(sweep_halving_alive(metric, 9, nr, 3, 2, alive, stopped) == 1 && alive[8] &&
          stopped[1] == 1 && stopped[3] == 1 && stopped[7] == 0, "rung 1 keeps trial 8");
    CHECK(sweep_halving_alive(metric, 9, nr, 3, 3, alive, stopped) == 1 && alive[8],
          "the last rung trains trial 8 only");
    /* trial 7 (0.7 + 2/sqrt(s)) would be best at step 27 (1.085) but was slowest at step
     * 1: successive halving stops it at rung 0, by design. If trial 8 diverged before
     * step 3 (no loss there), it ranks last and trial 1 continues instead. */
    metric[8 * nr + 1] = NAN;
    CHECK(sweep_halving_alive(metric, 9, nr, 3, 3, alive, stopped) == 1 && alive[1] &&
          !alive[8] && stopped[8] == 1, "a diverged trial never continues");
}

static void test_files(void)
{
    char path[512], err[LM_ERR_LEN];
    snprintf(path, sizeof path, "%s/t.sweep", tmpdir);
    FILE *f = fopen(path, "w");
    fprintf(f, "# a comment\n\nstrategy = random   # draws\ntrials=3\n"
               "lr = loguniform(1e-4, 1e-2)\nlayers = 1, 2\n");
    fclose(f);
    SweepSpec sp;
    sweep_spec_init(&sp);
    int rc = sweep_spec_load_file(&sp, path, err);
    CHECK(rc == LM_OK && sweep_spec_finish(&sp, NULL, err) == LM_OK && sp.n_trials == 3,
          "sweep file: %s", err);
    f = fopen(path, "w");
    fprintf(f, "lr=1e-3\nlayrs=1,2\n");
    fclose(f);
    sweep_spec_init(&sp);
    rc = sweep_spec_load_file(&sp, path, err);
    CHECK(rc == LM_EARG && strstr(err, "t.sweep:2:") && strstr(err, "layers"),
          "file errors name the line: %s", err);
    /* a key on two lines: refused, a fixed one (steps) as a swept one (lr), naming both
     * lines, where the file took the last steps */
    const char *twice[] = {"steps = 30\nlr = 1e-3,2e-3\n# later\nsteps=10\n",
                           "lr = 1e-3,2e-3\nsteps = 30\nlr=3e-3\n",
                           "strategy = grid\n\nstrategy = random  # second thoughts\n"};
    const char *want[] = {"t.sweep:4: steps is given twice (lines 1 and 4): keep one",
                          "t.sweep:3: lr is given twice (lines 1 and 3): keep one; a swept key "
                          "gives all its values on one line: lr = a,b,c",
                          "t.sweep:3: strategy is given twice (lines 1 and 3): keep one"};
    for (int k = 0; k < 3; k++) {
        f = fopen(path, "w");
        fputs(twice[k], f);
        fclose(f);
        sweep_spec_init(&sp);
        rc = sweep_spec_load_file(&sp, path, err);
        CHECK(rc == LM_EARG && strstr(err, want[k]), "a key twice in a file: %s", err);
    }
    f = fopen(path, "w");   /* the command line still overrides the file's (cmd_sweep.c) */
    fputs("steps = 30\nlr = 1e-3,2e-3\n", f);
    fclose(f);
    sweep_spec_init(&sp);
    rc = sweep_spec_load_file(&sp, path, err);
    CHECK(rc == LM_OK && sweep_spec_set_pair(&sp, "steps=10", err) == LM_OK && sp.steps == 10,
          "a word after the file: %s", err);
    const char *src = getenv("LMLAB_SOURCE");
    const char *names[] = {"lr_width_dispatcher_vs_msa", "halving_lr", NULL};
    for (int i = 0; src && names[i]; i++) {
        snprintf(path, sizeof path, "%s/experiments/sweeps/%s.sweep", src, names[i]);
        sweep_spec_init(&sp);
        rc = sweep_spec_load_file(&sp, path, err);
        if (!rc)
            rc = sweep_spec_finish(&sp, NULL, err);
        CHECK(rc == LM_OK && sp.n_trials >= 8, "%s: %s (%d trials)", names[i], err,
              sp.n_trials);
    }
}

/* ---- end to end: the runner on Tiny Shakespeare with tiny models ---------------------- */

static char db_path[600], runs_dir[600];

static void tiny_base(Config *c)
{
    config_defaults(c);
    c->d = 16; c->nhid = 32; c->layers = 1; c->bptt = 16; c->batch = 4; c->steps = 30;
    c->log_every = 5; c->eval_every = 0; c->eval_batches = 2; c->sample_every = 0;
    c->checkpoint_every = 10; c->keep_checkpoints = 100;
    snprintf(c->runs_dir, sizeof c->runs_dir, "%.200s", runs_dir);
}

/* Finishes a spec over the tiny base and runs it to the end; returns the sweep id. */
static long run_sweep(const char *const *words)
{
    SweepSpec sp;
    Config base;
    char err[LM_ERR_LEN];
    tiny_base(&base);
    sweep_spec_init(&sp);
    for (int i = 0; words[i]; i++)
        CHECK(sweep_spec_set_pair(&sp, words[i], err) == LM_OK, "%s: %s", words[i], err);
    CHECK(sweep_spec_finish(&sp, &base, err) == LM_OK, "finish: %s", err);
    SweepRunner *r = sweep_runner_create(&sp, db_path, err);
    CHECK(r != NULL, "create: %s", err);
    if (!r)
        return -1;
    CHECK(sweep_runner_start(r, err) == LM_OK, "start: %s", err);
    sweep_runner_join(r);
    SweepProgress p;
    sweep_runner_progress(r, &p);
    CHECK(p.ended && !strcmp(p.status, "finished"), "sweep %ld ended %s: %s", p.sweep_id,
          p.status, p.message);
    Snapshot sn = {0};
    CHECK(sweep_runner_snapshot(r, &sn) == 1 && sn.status == TRAINER_FINISHED,
          "the last trial's snapshot: status %d", sn.status);
    snapshot_free(&sn);
    long id = sweep_runner_id(r);
    sweep_runner_destroy(r);
    return id;
}

/* Runs of sweep id: each tagged sweep-<id>, named <name>-t<k>, one per trial. */
static int check_runs(RunStore *st, long id, int n_trials, const char *name)
{
    char filter[64], tag[32], err[LM_ERR_LEN];
    RunRow *rows = NULL;
    int n = 0, seen[64] = {0};
    snprintf(filter, sizeof filter, "sweep=%ld", id);
    snprintf(tag, sizeof tag, "sweep-%ld", id);
    CHECK(runstore_list(st, filter, NULL, 0, &rows, &n, err) == LM_OK, "%s", err);
    for (int i = 0; i < n; i++) {
        int k = 0;
        char want[80];
        const char *dash = strrchr(rows[i].name, '-');
        if (dash && dash[1] == 't') k = atoi(dash + 2);
        snprintf(want, sizeof want, "%s-t%d", name, k);
        CHECK(strstr(rows[i].tags, tag) && !strcmp(rows[i].name, want) && k >= 1 &&
              k <= n_trials, "run #%ld '%s' tags '%s'", rows[i].id, rows[i].name,
              rows[i].tags);
        if (k >= 1 && k < 64) seen[k]++;
    }
    for (int k = 1; k <= n_trials; k++)
        CHECK(seen[k] == 1, "sweep %ld trial %d has %d runs", id, k, seen[k]);
    runstore_rows_free(rows, n);
    return n;
}

static void test_grid_e2e(RunStore *st)
{
    long id = run_sweep((const char *[]){"name=g", "lr=1e-3,3e-3", "model=dispatcher,msa",
                                         NULL});
    CHECK(check_runs(st, id, 4, "g") == 4, "four runs");
    SweepTrialRow *t = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    runstore_sweep_trials(st, id, &t, &n, err);
    CHECK(n == 4, "four trials stored: %d", n);
    for (int i = 0; i < n; i++)
        CHECK(!strcmp(t[i].status, "done") && !strcmp(t[i].run_status, "finished") &&
              t[i].last_step == 30 && isfinite(t[i].best_val), "trial %d: %s/%s step %ld",
              t[i].trial, t[i].status, t[i].run_status, t[i].last_step);
    CHECK(n == 4 && !strcmp(t[2].params, "lr=3e-3 model=dispatcher"), "t3 %s",
          n == 4 ? t[2].params : "");
    free(t);
}

/* Halving over 4 trials, steps 40, rungs 10, 20, 40 with eta 2: 4 -> 2 -> 1. */
static void test_halving_e2e(RunStore *st)
{
    long id = run_sweep((const char *[]){"name=h", "strategy=halving", "steps=40",
                                         "min_steps=10", "eta=2", "lr=1e-3,3e-3,1e-2,3e-2",
                                         NULL});
    CHECK(check_runs(st, id, 4, "h") == 4, "four runs, promoted trials continue their run");
    SweepTrialRow *t = NULL;
    int n = 0, done = 0, at10 = 0, at20 = 0;
    char err[LM_ERR_LEN];
    runstore_sweep_trials(st, id, &t, &n, err);
    double m10[4] = {NAN, NAN, NAN, NAN};
    for (int i = 0; i < n && i < 4; i++) {
        SeriesPoint *pts = NULL;
        int np = 0;
        runstore_series(st, t[i].run_id, "val_loss", &pts, &np, err);
        for (int j = 0; j < np; j++)
            if (pts[j].step == 10) m10[i] = pts[j].value;
        free(pts);
        done += !strcmp(t[i].status, "done") && t[i].last_step == 40;
        at10 += !strcmp(t[i].status, "stopped") && t[i].last_step == 10;
        at20 += !strcmp(t[i].status, "stopped") && t[i].last_step == 20;
        if (!strcmp(t[i].status, "stopped")) {
            RunRow row;
            runstore_get(st, t[i].run_id, &row, err);
            CHECK(strstr(row.reason, "stopped early at step"), "reason '%s'", row.reason);
            runstore_row_free(&row);
        }
    }
    CHECK(n == 4 && done == 1 && at10 == 2 && at20 == 1, "1 done, 2 stopped at 10, 1 at 20: "
          "%d %d %d", done, at10, at20);
    int keep[4];
    sweep_halving_promote(m10, 4, 2, keep);
    for (int i = 0; i < n && i < 4; i++)
        CHECK(keep[i] == (t[i].last_step > 10), "trial %d: kept %d by its loss %.4f at step "
              "10, trained to %ld", t[i].trial, keep[i], m10[i], t[i].last_step);
    /* truth2: `sweep status` counts the halving's stops as "stopped early" and a trial
     * stopped with `stop ID` as "stopped", as `sweep show` words each (it counted all of
     * them "stopped early") */
    SweepProgress p;
    int live = 0;
    CHECK(sweep_stored_progress(st, id, &p, &live, err) == LM_OK && p.done == 1 &&
          p.stopped_early == 3 && p.stopped == 0, "halving: %d early, %d stopped: %s",
          p.stopped_early, p.stopped, err);
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].status, "stopped")) {
            runstore_run_set_status(st, t[i].run_id, "stopped", "stopped at step 10: `stop` "
                                    "from pid 1 on vm", err);
            break;
        }
    CHECK(sweep_stored_progress(st, id, &p, &live, err) == LM_OK && p.stopped_early == 2 &&
          p.stopped == 1, "one stopped with stop ID: %d early, %d stopped", p.stopped_early,
          p.stopped);
    free(t);
}
/* The child: a 4-trial sweep of 600 steps each; writes the sweep id to fd, then runs. */
static void kill_child(int fd)
{
    SweepSpec sp;
    Config base;
    char err[LM_ERR_LEN];
    tiny_base(&base);
    base.steps = 600;
    base.checkpoint_every = 100;
    sweep_spec_init(&sp);
    sweep_spec_set_pair(&sp, "name=k", err);
    sweep_spec_set_pair(&sp, "lr=1e-3,2e-3,3e-3,4e-3", err);
    SweepRunner *r = NULL;
    if (sweep_spec_finish(&sp, &base, err) == LM_OK)
        r = sweep_runner_create(&sp, db_path, err);
    long id = r ? sweep_runner_id(r) : -1;
    if (write(fd, &id, sizeof id) != sizeof id || !r || sweep_runner_start(r, err))
        _exit(1);
    sweep_runner_join(r);
    _exit(0);
}

/* Waits until trial 2's run has written its step-200 checkpoint; 0, or -1 on timeout. */
static int wait_trial2(RunStore *st, long id, long *run2)
{
    char err[LM_ERR_LEN], path[1024];
    for (int i = 0; i < 6000; i++) {
        SweepTrialRow *t = NULL;
        int n = 0;
        if (runstore_sweep_trials(st, id, &t, &n, err) == LM_OK && n == 4 &&
            !strcmp(t[1].status, "running") && t[1].run_id > 0) {
            *run2 = t[1].run_id;
            snprintf(path, sizeof path, "%s/run-%ld-%s/step-00000200.safetensors", runs_dir,
                     t[1].run_id, runstore_store_id(st));
            if (access(path, F_OK) == 0) {
                free(t);
                return 0;
            }
        }
        free(t);
        usleep(5000);
    }
    return -1;
}

/* Forks a child running a 4-trial sweep and SIGKILLs it once trial 2 has written its
 * step-200 checkpoint. Returns the sweep id (-1 on failure); *run2 = trial 2's run. */
static long kill_during_trial2(long *run2)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        kill_child(fds[1]);
    }
    close(fds[1]);
    long id = -1;
    CHECK(read(fds[0], &id, sizeof id) == sizeof id && id > 0, "the child's sweep id");
    close(fds[0]);
    RunStore *st = NULL;
    char err[LM_ERR_LEN];
    CHECK(runstore_open(db_path, &st, err) == LM_OK, "%s", err);
    CHECK(st && wait_trial2(st, id, run2) == 0, "trial 2 reached its step-200 checkpoint");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    runstore_close(st);
    return id;
}

/* After the resume: every trial done once, trials 1 and 2 kept their runs, trial 1 was
 * not trained again (same end time), trial 2 continued from its checkpoint (its step-100
 * file, written before the kill, is untouched). */
static void check_resumed(RunStore *st, long id, const SweepTrialRow *before, long run2,
                          const RunRow *r1, const char *ck100, const struct stat *s0)
{
    char err[LM_ERR_LEN];
    SweepTrialRow *after = NULL;
    int na = 0;
    runstore_sweep_trials(st, id, &after, &na, err);
    CHECK(check_runs(st, id, 4, "k") == 4, "four runs after resume: no trial ran twice");
    for (int i = 0; i < na; i++)
        CHECK(!strcmp(after[i].status, "done") && after[i].last_step == 600 &&
              !strcmp(after[i].run_status, "finished"), "trial %d %s at %ld", after[i].trial,
              after[i].status, after[i].last_step);
    CHECK(na == 4 && after[0].run_id == before[0].run_id && after[1].run_id == run2,
          "trials 1 and 2 keep their runs");
    struct stat s1 = {0};
    CHECK(stat(ck100, &s1) == 0 && s1.st_mtim.tv_sec == s0->st_mtim.tv_sec &&
          s1.st_mtim.tv_nsec == s0->st_mtim.tv_nsec, "trial 2 resumed from its checkpoint "
          "(step 100 not rewritten)");
    RunRow r1b;
    runstore_get(st, before[0].run_id, &r1b, err);
    CHECK(r1b.ended == r1->ended, "trial 1 was not trained again (ended %.3f vs %.3f)",
          r1b.ended, r1->ended);
    runstore_row_free(&r1b);
    SweepRow sw = {0};
    CHECK(runstore_sweep_get(st, id, &sw, err) == LM_OK && !strcmp(sw.status, "finished"),
          "sweep status %s", sw.status);
    free(sw.spec);
    free(after);
}

/* kill -9 during trial 2, then `sweep resume`: every trial once, none lost. */
static void test_kill_resume(void)
{
    long run2 = 0, id = kill_during_trial2(&run2);
    RunStore *st = NULL;
    char err[LM_ERR_LEN];
    /* reopening repairs the dead process's run: interrupted */
    CHECK(runstore_open(db_path, &st, err) == LM_OK, "%s", err);
    if (!st || id < 0)
        return;
    SweepTrialRow *before = NULL;
    int nb = 0;
    runstore_sweep_trials(st, id, &before, &nb, err);
    CHECK(nb == 4 && !strcmp(before[0].status, "done") &&
          !strcmp(before[1].status, "interrupted") &&
          !strcmp(before[1].run_status, "interrupted") && !strcmp(before[2].status,
          "pending") && before[2].run_id == 0, "killed during trial 2: %s %s/%s %s",
          nb == 4 ? before[0].status : "", nb == 4 ? before[1].status : "",
          nb == 4 ? before[1].run_status : "", nb == 4 ? before[2].status : "");
    SweepRow dead = {0};   /* the repair marks the sweep too: no trial trains */
    CHECK(runstore_sweep_get(st, id, &dead, err) == LM_OK &&
          !strcmp(dead.status, "interrupted"), "the killed sweep is %s", dead.status);
    free(dead.spec);
    if (nb != 4) {
        free(before);
        runstore_close(st);
        return;
    }
    RunRow r1;
    runstore_get(st, before[0].run_id, &r1, err);
    char ck100[700];
    struct stat s0 = {0};
    snprintf(ck100, sizeof ck100, "%.600s/run-%ld-%s/step-00000100.safetensors", runs_dir, run2,
             runstore_store_id(st));
    CHECK(stat(ck100, &s0) == 0, "%s exists", ck100);
    SweepRunner *r = sweep_runner_open(id, db_path, NULL, err);
    CHECK(r != NULL, "sweep resume: %s", err);
    if (r && sweep_runner_start(r, err) == LM_OK)
        sweep_runner_join(r);
    sweep_runner_destroy(r);
    check_resumed(st, id, before, run2, &r1, ck100, &s0);
    CHECK(sweep_runner_open(id, db_path, NULL, err) == NULL && strstr(err, "has finished"),
          "a finished sweep is not resumed: %s", err);
    runstore_row_free(&r1);
    free(before);
    runstore_close(st);
}

/* ---- parallel=K: a trial is marked running when its worker starts --------------------- */

/* This binary exec'd as a parallel sweep's worker (`TEST --db DB -c "sweep worker=..."`,
 * sweep_pool.c runs /proc/self/exe): it says it started (DB.worker-PID), touches nothing
 * else and waits for DB.release (at most 120 s) or SIGTERM, so whatever the store says
 * about its trial meanwhile comes from the runner alone, however slow the machine. */
static int stub_worker(const char *db)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &term, NULL);   /* exec_worker blocks it: a stop ends us */
    char path[700];
    snprintf(path, sizeof path, "%.600s.worker-%ld", db, (long)getpid());
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    snprintf(path, sizeof path, "%.600s.release", db);
    for (int i = 0; i < 120 * 20 && access(path, F_OK); i++)   /* bounded: 120 s */
        usleep(50000);
    return 3;
}

/* The number of files DB.worker-* (the stub workers that started). */
static int workers_started(const char *db)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "ls '%.600s'.worker-* 2>/dev/null | wc -l", db);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = 0;
        pclose(p);
    }
    return n;
}

/* Issue 33 item 5: with parallel=2 each trial reads "running" in the store as soon as its
 * worker process starts, not when the worker has loaded its data and claimed a run (it
 * read "pending" for seconds while it ran). The workers are stubs that never write to the
 * store, so the check does not depend on timing: before the runner marked trials at
 * spawn, they stayed pending until the bounded wait below ran out. */
static void test_parallel_marked_running(void)
{
    char db[640], err[LM_ERR_LEN];
    snprintf(db, sizeof db, "%s/parallel.db", tmpdir);
    const char *words[] = {"lr=1e-3,3e-3", "parallel=2", "name=pstart", NULL};
    SweepSpec sp;
    Config base;
    tiny_base(&base);
    sweep_spec_init(&sp);
    for (int i = 0; words[i]; i++)
        CHECK(sweep_spec_set_pair(&sp, words[i], err) == LM_OK, "%s: %s", words[i], err);
    CHECK(sweep_spec_finish(&sp, &base, err) == LM_OK, "finish: %s", err);
    SweepRunner *r = sweep_runner_create(&sp, db, err);
    CHECK(r != NULL, "create: %s", err);
    if (!r || sweep_runner_start(r, err) != LM_OK) {
        CHECK(0, "parallel sweep start: %s", err);
        sweep_runner_destroy(r);
        return;
    }
    RunStore *st = NULL;
    CHECK(runstore_open(db, &st, err) == LM_OK, "%s", err);
    SweepTrialRow *t = NULL;
    int n = 0, running = 0, i = 0;
    for (; st && i < 60 * 20 && running < 2; i++) {   /* bounded: 60 s */
        free(t);
        t = NULL;
        running = 0;
        if (runstore_sweep_trials(st, sweep_runner_id(r), &t, &n, err) == LM_OK)
            for (int k = 0; k < n; k++)
                running += !strcmp(t[k].status, "running");
        if (running < 2)
            usleep(50000);
    }
    CHECK(running == 2 && n == 2, "parallel=2: %d of %d trials read running in the store after "
          "60 s while both workers were started and held before loading anything (%d started)",
          running, n, workers_started(db));
    for (int k = 0; k < n; k++)
        CHECK(t[k].run_id == 0, "trial %d has run #%ld: the stub worker wrote to the store",
              t[k].trial, t[k].run_id);
    free(t);
    runstore_close(st);
    char rel[700];
    snprintf(rel, sizeof rel, "%s.release", db);
    FILE *f = fopen(rel, "w");
    if (f) fclose(f);
    sweep_runner_stop(r);
    sweep_runner_join(r);
    sweep_runner_destroy(r);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--db"))   /* a parallel sweep's worker: the stub */
        return stub_worker(argv[2]);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_refusals();
    test_grid();
    test_random();
    test_round_trip();
    test_parallel_words();
    test_rungs();
    test_promote();
    test_halving_curves();
    test_files();
    snprintf(db_path, sizeof db_path, "%s/lmlab.db", tmpdir);
    snprintf(runs_dir, sizeof runs_dir, "%s/runs", tmpdir);
    test_kill_resume(); /* first: fork before this process starts BLAS threads */
    test_parallel_marked_running();
    RunStore *st = NULL;
    char err[LM_ERR_LEN];
    CHECK(runstore_open(db_path, &st, err) == LM_OK, "%s", err);
    test_grid_e2e(st);
    test_halving_e2e(st);
    runstore_close(st);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return check_summary();
}
