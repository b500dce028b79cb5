/* test_sweep.c — sweeps: spec refusals, grid and random expansion (count, order,
 * determinism, ranges, log space), the successive-halving rule on synthetic curves, the
 * bundled sweep files, and the runner end to end on Tiny Shakespeare with tiny models:
 * a grid and a halving sweep recorded as tagged runs, then a sweep whose process is
 * killed with SIGKILL during trial 2 and resumed: no trial run twice, none lost. */
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

/* E2E_HERE */

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_refusals();
    test_grid();
    test_random();
    test_round_trip();
    test_rungs();
    test_promote();
    test_halving_curves();
    test_files();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return check_summary();
}
