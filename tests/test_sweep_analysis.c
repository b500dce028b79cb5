/* test_sweep_analysis.c — the pure analysis of a sweep's trials with answers worked out
 * by hand: summary statistics, seed groups ranked by their mean, parameter importance on
 * a grid where one setting matters and one does not (eta squared computed by hand), on
 * random draws (quantile bins), parallel-coordinate axes (log when > 20x), and the
 * debiased EMA of core/base/smooth.c. */
#include "check.h"
#include "err.h"
#include "smooth.h"
#include "sweep_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_summary(void)
{
    double v[] = {1, 2, 3, 4, NAN};
    StatSummary s;
    sweep_stat_summary(v, 5, &s);
    CHECK(s.n == 4, "n %d", s.n);
    CHECK(fabs(s.mean - 2.5) < 1e-12, "mean %g", s.mean);
    CHECK(fabs(s.std - sqrt(5.0 / 3.0)) < 1e-12, "sample std %g", s.std);
    CHECK(s.min == 1 && s.max == 4, "range %g %g", s.min, s.max);
    sweep_stat_summary(v + 4, 1, &s);
    CHECK(s.n == 0 && isnan(s.mean), "no finite value: NaN");
    sweep_stat_summary(v, 1, &s);
    CHECK(s.n == 1 && s.std == 0, "one value: std 0");
}

static void test_params(void)
{
    char out[64], keys[4][32];
    CHECK(sweep_param_value("lr=1e-3 d=64 seed=3", "d", out, sizeof out) && !strcmp(out, "64"),
          "d=%s", out);
    CHECK(!sweep_param_value("lr=1e-3", "dd", out, sizeof out) && !out[0], "missing key");
    CHECK(sweep_param_keys("lr=1 seed=2 d=3", keys, 4) == 2 && !strcmp(keys[1], "d"),
          "seed is not a setting");
    sweep_group_key("lr=1e-3 seed=2", out, sizeof out);
    CHECK(!strcmp(out, "lr=1e-3"), "group key '%s'", out);
    sweep_group_key("seed=2", out, sizeof out);
    CHECK(!strcmp(out, ""), "only a seed: one group '%s'", out);
}

static void test_groups(void)
{
    const char *p[] = {"lr=1 seed=1", "lr=1 seed=2", "lr=2 seed=1", "lr=2 seed=2",
                       "lr=3 seed=1"};
    double m[] = {3.0, 3.2, 1.0, 1.4, NAN};
    SweepGroup g[4];
    int of[5];
    int n = sweep_groups(p, m, 5, g, 4, of);
    CHECK(n == 3, "3 groups, got %d", n);
    CHECK(!strcmp(g[0].key, "lr=2") && fabs(g[0].stat.mean - 1.2) < 1e-12, "best group lr=2 "
          "mean 1.2: %s %g", g[0].key, g[0].stat.mean);
    CHECK(fabs(g[0].stat.std - sqrt(0.08)) < 1e-12, "std %g", g[0].stat.std);
    CHECK(!strcmp(g[2].key, "lr=3") && g[2].stat.n == 0 && g[2].members == 1,
          "no metric ranks last");
    CHECK(of[0] == 1 && of[2] == 0 && of[4] == 2, "group_of %d %d %d", of[0], of[2], of[4]);
}

/* A 3x2 grid: the metric depends on lr only (log_every does nothing), plus a 2x2 grid
 * whose eta squared is worked out by hand. */
static void test_importance_grid(void)
{
    const char *p[] = {"lr=1e-3 log_every=10", "lr=1e-3 log_every=20", "lr=3e-3 log_every=10",
                       "lr=3e-3 log_every=20", "lr=1e-2 log_every=10", "lr=1e-2 log_every=20"};
    double m[] = {3.0, 3.0, 2.5, 2.5, 2.2, 2.2};
    SweepImportance im[4];
    int n = sweep_importance(p, m, 6, im, 4);
    CHECK(n == 2, "two settings, got %d", n);
    CHECK(!strcmp(im[0].key, "lr") && fabs(im[0].share - 1) < 1e-12, "lr explains all: %s %g",
          im[0].key, im[0].share);
    CHECK(fabs(im[0].rho + 1) < 1e-12, "larger lr, lower loss: rho %g", im[0].rho);
    CHECK(!strcmp(im[1].key, "log_every") && fabs(im[1].share) < 1e-12, "log_every none: %g",
          im[1].share);
    CHECK(fabs(im[1].rho) < 1e-12, "log_every rho 0: %g", im[1].rho);
    /* y = (a,10)1 (a,20)1.1 (b,10)2 (b,20)2.1: SS_tot 1.01, lr 1.0, k 0.01 */
    const char *q[] = {"lr=1 k=10", "lr=1 k=20", "lr=2 k=10", "lr=2 k=20"};
    double y[] = {1, 1.1, 2, 2.1};
    n = sweep_importance(q, y, 4, im, 4);
    CHECK(n == 2 && fabs(im[0].share - 1.0 / 1.01) < 1e-12, "lr %g", im[0].share);
    CHECK(fabs(im[1].share - 0.01 / 1.01) < 1e-12, "k %g", im[1].share);
    CHECK(im[1].n_levels == 2 && !im[1].binned, "grouped by value");
    CHECK(!im[0].inner_best, "a monotone lr is no U");
    /* issue 49: a U-shaped lr (best in the middle) is not "larger -> lower" */
    const char *u[] = {"lr=1e-4 seed=1", "lr=1e-4 seed=2", "lr=1e-3 seed=1", "lr=1e-3 seed=2",
                       "lr=1e-2 seed=1", "lr=1e-2 seed=2"};
    double uy[] = {3.0, 3.1, 2.0, 2.1, 2.8, 2.9};
    n = sweep_importance(u, uy, 6, im, 4);
    int k = !strcmp(im[0].key, "lr") ? 0 : 1;
    CHECK(n >= 1 && !strcmp(im[k].key, "lr") && im[k].inner_best, "lr best at 1e-3: a U (%d)",
          im[k].inner_best);
}

static void test_importance_random(void)
{
    char buf[100][64];
    const char *p[100];
    double m[100];
    unsigned s = 12345;
    for (int i = 0; i < 100; i++) {
        s = s * 1103515245u + 12345u;
        double x = (s >> 8) % 10000 / 10000.0;
        s = s * 1103515245u + 12345u;
        int z = (s >> 8) % 2;
        snprintf(buf[i], sizeof buf[i], "dropout=%.4f tie=%s", x, z ? "true" : "false");
        p[i] = buf[i];
        m[i] = 5 - 2 * x;
    }
    SweepImportance im[4];
    int n = sweep_importance(p, m, 100, im, 4);
    CHECK(n == 2 && !strcmp(im[0].key, "dropout") && im[0].binned && im[0].n_levels == 10,
          "dropout binned into 10: %s %d %d", im[0].key, im[0].binned, im[0].n_levels);
    CHECK(im[0].share > 0.95 && fabs(im[0].rho + 1) < 1e-12, "share %g rho %g", im[0].share,
          im[0].rho);
    CHECK(im[1].share < 0.05 && isnan(im[1].rho), "tie: categorical, small share %g",
          im[1].share);
    double one = 2;
    n = sweep_importance(p, &one, 1, im, 4);
    CHECK(n == 2 && isnan(im[0].share), "one trial: no share");
}

static void test_axes(void)
{
    const char *p[] = {"lr=1e-4 model=msa d=64", "lr=1e-2 model=dispatcher d=128",
                       "lr=1e-3 model=msa d=96"};
    SweepAxis a[4];
    int n = sweep_axes(p, 3, a, 4);
    CHECK(n == 3, "three axes");
    CHECK(a[0].numeric && a[0].log_axis, "lr spans 100x: log");
    CHECK(fabs(sweep_axis_pos(&a[0], "1e-3") - 0.5) < 1e-12, "1e-3 in the middle of a log "
          "axis: %g", sweep_axis_pos(&a[0], "1e-3"));
    CHECK(!a[1].numeric && a[1].n_levels == 2 && sweep_axis_pos(&a[1], "dispatcher") == 1,
          "categorical");
    CHECK(a[2].numeric && !a[2].log_axis && fabs(sweep_axis_pos(&a[2], "96") - 0.5) < 1e-12,
          "d linear");
    CHECK(isnan(sweep_axis_pos(&a[2], "x")), "not a number: NaN");
}

static void test_smooth(void)
{
    double y[] = {1, NAN, 3, 5}, out[4];
    double z[] = {INFINITY, 2, -INFINITY, NAN}, zo[4];
    smooth_ema_debiased(z, 4, 0.9, zo);
    CHECK(zo[0] == INFINITY && zo[1] == 2 && zo[2] == -INFINITY && isnan(zo[3]),
          "non-finite values pass through as they are: %g %g %g %g", zo[0], zo[1], zo[2], zo[3]);
    smooth_ema_debiased(y, 4, 0.5, out);
    CHECK(out[0] == 1, "first point is itself (debiased): %g", out[0]);
    CHECK(isnan(out[1]), "a gap stays a gap");
    /* m1 = .5, m2 = .25+1.5 = 1.75, debiased /(1-.25) = 2.3333 */
    CHECK(fabs(out[2] - 1.75 / 0.75) < 1e-12, "%g", out[2]);
    /* m3 = .875 + 2.5 = 3.375 / (1 - .125) */
    CHECK(fabs(out[3] - 3.375 / 0.875) < 1e-12, "%g", out[3]);
    CHECK(fabs(smooth_ema_last(y, 4, 0.5) - out[3]) < 1e-15, "last");
    smooth_ema_debiased(y, 4, 0, out);
    CHECK(out[3] == 5, "weight 0 copies");
    CHECK(isnan(smooth_ema_last(y + 1, 1, 0.9)), "no finite value");
}

/* sweep.c's seeds=N: each trial repeated with consecutive training seeds, listed last. */
static void test_seeds_spec(void)
{
    SweepSpec sp;
    char err[LM_ERR_LEN] = "", text[2048];
    sweep_spec_init(&sp);
    CHECK(!sweep_spec_set_pair(&sp, "lr=1e-3,3e-3", err) && !sweep_spec_set_pair(&sp, "seeds=3",
          err), "spec: %s", err);
    CHECK(sweep_spec_finish(&sp, NULL, err) == LM_OK && sp.n_trials == 6, "6 trials: %s", err);
    SweepTrial *t;
    int n;
    CHECK(sweep_expand(&sp, &t, &n, err) == LM_OK && n == 6, "expand");
    long base = sp.base_cfg.seed;
    CHECK(!strcmp(t[0].params, "lr=1e-3 seed=1337") && t[0].cfg.seed == base, "t1 '%s'",
          t[0].params);
    CHECK(t[2].cfg.seed == base + 2 && !strncmp(t[2].params, "lr=1e-3 ", 8), "t3 '%s'",
          t[2].params);
    CHECK(t[3].cfg.seed == base && !strncmp(t[3].params, "lr=3e-3 ", 8), "t4 '%s'", t[3].params);
    const char *p[6];
    double m[6];
    for (int i = 0; i < 6; i++) p[i] = t[i].params, m[i] = i < 3 ? 2.0 + i : 1.0 + i;
    SweepGroup g[4];
    CHECK(sweep_groups(p, m, 6, g, 4, NULL) == 2 && !strcmp(g[0].key, "lr=1e-3") &&
          g[0].stat.mean == 3.0 && g[1].stat.mean == 5.0, "groups by mean: %s", g[0].key);
    free(t);
    sweep_spec_to_text(&sp, text, sizeof text);
    CHECK(strstr(text, " seeds=3") != NULL, "round trip keeps seeds: %s", text);
    SweepSpec back;
    sweep_spec_init(&back);
    char *save = NULL;
    for (char *w = strtok_r(text, " ", &save); w; w = strtok_r(NULL, " ", &save))
        CHECK(!sweep_spec_set_pair(&back, w, err), "%s: %s", w, err);
    CHECK(back.seeds == 3 && back.n_params == 1, "read back");
    sweep_spec_init(&sp);
    CHECK(!sweep_spec_set_pair(&sp, "seeds=2", err) && sweep_spec_finish(&sp, NULL, err) ==
          LM_OK && sp.n_trials == 2, "seeds alone: 2 trials: %s", err);
    sweep_spec_init(&sp);
    sweep_spec_set_pair(&sp, "strategy=halving", err);
    sweep_spec_set_pair(&sp, "steps=100", err);
    sweep_spec_set_pair(&sp, "lr=1e-3,3e-3", err);
    sweep_spec_set_pair(&sp, "seeds=2", err);
    CHECK(sweep_spec_finish(&sp, NULL, err) == LM_EARG && strstr(err, "halving"),
          "halving refused: %s", err);
    CHECK(sweep_spec_set_pair(&sp, "seeds=0", err) == LM_EARG, "seeds=0 refused");
}

int main(void)
{
    test_seeds_spec();
    test_summary();
    test_params();
    test_groups();
    test_importance_grid();
    test_importance_random();
    test_axes();
    test_smooth();
    return check_summary();
}
