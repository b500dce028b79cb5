/* test_series.c — the one registry of named series (core/base/series.h, issue 48): every
 * step metric of metrics.def is in it with its name; aliases (val, train, test) and the
 * older gate:L:K resolve; an unknown name is refused with a did-you-mean; family members
 * (gate/L/K) carry their numbers; patterns; escaping of odd bytes and '/'. Then the store
 * side (runstore_registry.c): a run's series read through the registry, each aggregate as a
 * number and as a filter, the list of a run's series and a pattern, and a pattern that
 * matches nothing refused with what the run has. */
#include "runstore_util.h"
#include "series.h"
#include "runstore_series.h"

#include <math.h>

static void test_registry(void)
{
    SeriesRef r;
    char err[LM_ERR_LEN], buf[256];
    for (int i = 0; i < STEP_METRIC_N; i++) {   /* metrics.def is the registry's first part */
        CHECK(series_find(STEP_METRICS[i].name, &r, err) == LM_OK &&
              r.info->step_index == i && r.info->source == SERIES_SRC_METRICS,
              "step metric %s in the registry", STEP_METRICS[i].name);
    }
    CHECK(series_find("val", &r, err) == LM_OK && !strcmp(r.name, "val_loss") &&
          r.info->kind == SERIES_KIND_EVAL && r.info->agg == SERIES_AGG_MIN, "val is val_loss");
    CHECK(series_find("train", &r, err) == LM_OK && !strcmp(r.name, "loss"), "train is loss");
    CHECK(series_find("gate/2/13", &r, err) == LM_OK && !strcmp(r.name, "gate/2/13") &&
          r.arg[0] == 2 && r.arg[1] == 13 && r.info->source == SERIES_SRC_GATE, "gate/2/13");
    CHECK(series_find("gate:1:0", &r, err) == LM_OK && !strcmp(r.name, "gate/1/0"),
          "the older gate:1:0");
    CHECK(series_find("gate/x/1", &r, err) == LM_EARG, "gate/x/1 is no member");
    CHECK(series_find("gate/1/2/3", &r, err) == LM_EARG, "gate/1/2/3 is no member");
    CHECK(series_find("grad/blocks.0.w", &r, err) == LM_OK && !strcmp(r.name, "grad/blocks.0.w") &&
          r.info->source == SERIES_SRC_NAMED, "a recorded name: %s", err);
    CHECK(series_find("hist/weight/emb", &r, err) == LM_OK && r.info->kind == SERIES_KIND_HIST,
          "a histogram");
    CHECK(series_find("act/3/std", &r, err) == LM_OK && r.arg[0] == 3, "act/3/std");
    CHECK(series_find("grad/", &r, err) == LM_EARG, "grad/ names nothing");
    CHECK(series_find("grad:x", &r, err) == LM_EARG, "the old colon spelling is the gates' only");
    CHECK(series_find("vall", &r, err) == LM_EARG && strstr(err, "did you mean 'val'"),
          "did you mean: %s", err);
    CHECK(series_find("grad_nrom", &r, err) == LM_EARG && strstr(err, "'grad_norm'"),
          "did you mean grad_norm: %s", err);
    char near[SERIES_NAME_LEN];   /* a misspelt name with an aggregate, as runs filters take */
    CHECK(series_nearest("grad_nrm.max", near, sizeof near) &&
          !strcmp(near, "grad_norm.max"), "grad_nrm.max: did you mean grad_norm.max");
    CHECK(series_nearest("val_los.min", near, sizeof near) && !strcmp(near, "val_loss.min"),
          "val_los.min: did you mean val_loss.min");
    CHECK(!series_nearest("zzzzzzzz.max", near, sizeof near), "zzzzzzzz.max: no guess");
    CHECK(series_find("zzzzzzzz", &r, err) == LM_EARG && !strstr(err, "did you mean") &&
          strstr(err, "val_loss"), "far from all: the list, no guess: %s", err);
    CHECK(series_find("a\x1b[2Jb", &r, err) == LM_EARG && !strchr(err, 0x1b) &&
          strstr(err, "\\x1b"), "odd bytes escaped in the message: %s", err);
    CHECK(series_match("gate/*", "gate/0/1") && !series_match("gate/*", "grad_norm") &&
          series_match("val*", "val_loss") && series_match("*", "sys/cpu") &&
          series_match("gate/?/1", "gate/3/1") && !series_match("gate/?/1", "gate/3/2"),
          "patterns");
    CHECK(series_match("val", "val_loss") && !series_match("val", "val_ppl"), "an alias");
    CHECK(series_pattern_check("", err) == LM_EARG && series_pattern_check("a b", err) == LM_EARG &&
          series_pattern_check("gate/*", err) == LM_OK, "pattern check");
    CHECK(!strcmp(series_escape(buf, sizeof buf, "grad/a\tb\\"), "grad/a\\x09b\\x5c"),
          "escape: %s", buf);
    CHECK(!strcmp(series_escape_path(buf, sizeof buf, "../grad/w"), "%2E.%2Fgrad%2Fw"),
          "escape as a path: %s", buf);
    CHECK(strstr(series_names_text(buf, sizeof buf), "loss|train") != NULL, "names: %s", buf);
    int families = 0, every_help = 1;
    for (int i = 0; i < series_count(); i++) {
        families += series_info(i)->family;
        every_help &= series_info(i)->help[0] != 0;
        for (int j = 0; j < i; j++)
            CHECK(strcmp(series_info(i)->name, series_info(j)->name), "one name once: %s",
                  series_info(i)->name);
    }
    CHECK(families >= 1 && every_help, "families and help");
    CHECK(!strcmp(series_kind_name(SERIES_KIND_HIST), "histogram") &&
          !strcmp(series_agg_name(SERIES_AGG_MEAN), "mean"), "words");
}

typedef struct {
    int series, val, metric, hist, named, stop_at;
} EachCount;

static int each_count(void *ctx, const char *name, const SeriesPoint *p, int n, int status)
{
    EachCount *c = ctx;
    SeriesRef ref;
    c->series++;
    if (!strcmp(name, "val_loss")) c->val = n;
    if (!series_find(name, &ref, NULL)) {
        c->metric += ref.info->source == SERIES_SRC_METRICS;
        c->hist += ref.info->source == SERIES_SRC_HIST;
        c->named += ref.info->source == SERIES_SRC_NAMED;
    }
    (void)p;
    return status ? status : c->series == c->stop_at ? 7 : 0;
}

static void test_store(void)
{
    char path[128], err[LM_ERR_LEN];
    db_path(path, sizeof path, "series.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "dispatcher", "lr=1\n", NULL), b = new_run(s, "b", "msa", "lr=2\n", NULL);
    for (long t = 10; t <= 50; t += 10) {
        StepMetric m = step_of(t);
        runstore_log_step(s, a, &m, err);
    }
    EvalMetric e1 = {.step = 20, .split = "valid", .loss = 2.5, .ppl = 12.2, .bpc = NAN};
    EvalMetric e2 = {.step = 40, .split = "valid", .loss = 2.0, .ppl = 7.4, .bpc = NAN};
    EvalMetric e3 = {.step = 50, .split = "valid", .loss = 2.2, .ppl = 9.0, .bpc = NAN};
    runstore_log_eval(s, a, &e1, err), runstore_log_eval(s, a, &e2, err);
    runstore_log_eval(s, a, &e3, err);
    GateStat g[2] = {{.step = 40, .layer = 0, .level = 1, .mean = 0.25f},
                     {.step = 40, .layer = 1, .level = 0, .mean = 0.75f}};
    CHECK(runstore_log_gates(s, a, g, 2, err) == LM_OK, "gates: %s", err);
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);
    SeriesPoint *p = NULL;
    int n = 0;
    CHECK(runstore_series(s, a, "val", &p, &n, err) == LM_OK && n == 3 && p[1].value == 2.0,
          "val through the registry: %d", n);
    free(p);
    CHECK(runstore_series(s, a, "best_val", &p, &n, err) == LM_OK && n == 3 &&
          p[0].value == 2.5 && p[1].value == 2.0 && p[2].value == 2.0, "best so far: %d", n);
    free(p);
    CHECK(runstore_series(s, a, "gate/1/0", &p, &n, err) == LM_OK && n == 1 &&
          fabs(p[0].value - 0.75) < 1e-6, "gate/1/0");
    free(p);
    CHECK(runstore_series(s, a, "lss", &p, &n, err) == LM_EARG && strstr(err, "did you mean 'loss'"),
          "unknown: %s", err);
    double v;
    CHECK(runstore_series_summary(s, a, "val_loss", &v, err) == LM_OK && v == 2.0, "min %g", v);
    CHECK(runstore_series_summary(s, a, "val_loss.last", &v, err) == LM_OK && fabs(v - 2.2) < 1e-12,
          "val_loss.last %g", v);
    CHECK(runstore_series_summary(s, a, "grad_norm.max", &v, err) == LM_OK &&
          v == step_of(20).grad_norm, "grad_norm.max %g", v);
    CHECK(runstore_series_summary(s, a, "loss", &v, err) == LM_OK &&
          (float)v == step_of(50).loss, "loss is its last: %g", v);
    CHECK(runstore_series_summary(s, b, "loss", &v, err) == LM_OK && isnan(v), "none: NaN");
    char (*names)[SERIES_NAME_LEN] = NULL;
    CHECK(runstore_series_list(s, a, "gate/*", &names, &n, err) == LM_OK && n == 2 &&
          !strcmp(names[0], "gate/0/1") && !strcmp(names[1], "gate/1/0"), "gate/*: %d", n);
    free(names);
    CHECK(runstore_series_list(s, a, NULL, &names, &n, err) == LM_OK && n >= STEP_METRIC_N + 4,
          "every series: %d", n);
    free(names);
    CHECK(runstore_series_list(s, a, "grad/*", &names, &n, err) == LM_EARG && n == 0 &&
          strstr(err, "no series of run") && strstr(err, "grad/*") && strstr(err, "gate/0/1"),
          "a pattern that matches nothing says so: %s", err);
    CHECK(runstore_series_union(s, (long[]){a, b}, 2, &names, &n, err) == LM_OK && n > STEP_METRIC_N,
          "union");
    free(names);
    /* the named series the diagnostics record (runstore_series.h), through the registry */
    NamedScalar nv[2] = {{.name = "grad/w.0", .value = 0.75}, {.name = "act/0/std", .value = 1.5}};
    CHECK(runstore_series_log(s, a, 30, nv, 2, err) == LM_OK, "named: %s", err);
    nv[0].value = 0.25;
    CHECK(runstore_series_log(s, a, 40, nv, 1, err) == LM_OK, "named: %s", err);
    NamedHist *h = calloc(1, sizeof *h);
    snprintf(h->name, sizeof h->name, "hist/grad/w.0");
    float xs[4] = {1, 2, 3, 6};
    series_hist_fill(&h->h, xs, 4);
    CHECK(runstore_hist_log(s, a, 40, h, 1, err) == LM_OK, "hist: %s", err);
    free(h);
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);
    CHECK(runstore_series(s, a, "grad/w.0", &p, &n, err) == LM_OK && n == 2 && p[1].value == 0.25,
          "a named series through the registry: %d %s", n, err);
    free(p);
    CHECK(runstore_series(s, a, "grad/nope", &p, &n, err) == LM_EARG && strstr(err, "has no series"),
          "a family member the run did not record: %s", err);
    CHECK(runstore_series_summary(s, a, "hist/grad/w.0", &v, err) == LM_OK &&
          v == 3.0, "a histogram as a number: its mean %g", v);
    CHECK(runstore_series_summary(s, a, "grad/w.0.max", &v, err) == LM_OK &&
          v == 0.75, "grad/w.0.max %g", v);
    CHECK(runstore_series_list(s, a, "grad/*", &names, &n, err) == LM_OK && n == 1 &&
          !strcmp(names[0], "grad/w.0"), "grad/*: %d", n);
    free(names);
    /* the walk of the exports: each series once with its points, the skipped sources not */
    EachCount ec = {0};
    CHECK(runstore_series_each(s, a, 1u << SERIES_SRC_METRICS | 1u << SERIES_SRC_HIST,
                               each_count, &ec, err) == LM_OK && ec.val == 3 && !ec.metric &&
          !ec.hist && ec.named == 2 && ec.series >= 5, "each: %d series, val %d, named %d",
          ec.series, ec.val, ec.named);
    ec = (EachCount){.stop_at = 2};
    CHECK(runstore_series_each(s, a, 0, each_count, &ec, err) == 7 && ec.series == 2,
          "a visit's non-zero stops the walk: %d", ec.series);
    /* compare's rows: the union and each run's summary, NaN where a run has none */
    RunRow rr[2] = {{.id = a}, {.id = b}};
    double *tv = NULL;
    int nt = 0, at_val = -1;
    CHECK(runstore_series_table(s, rr, 2, &names, &nt, &tv, err) == LM_OK && nt > STEP_METRIC_N,
          "table: %d", nt);
    for (int k = 0; k < nt; k++) at_val = strcmp(names[k], "val_loss") ? at_val : k;
    CHECK(at_val >= 0 && tv[at_val * 2] == 2.0 && isnan(tv[at_val * 2 + 1]),
          "val_loss of a (its min) and of b (none)");
    free(names), free(tv);
    CHECK(runstore_series_list(s, a, "hist/*", &names, &n, err) == LM_OK && n == 1, "hist/*: %d", n);
    free(names);
    RunRow *rows = NULL;   /* a series as a filter: its aggregate */
    CHECK(runstore_list(s, "grad/w.0<0.5 act/0/std>1", "recent", 0, &rows, &n, err) == LM_OK &&
          n == 1, "filter on named series: %d %s", n, err);
    runstore_rows_free(rows, n);
    CHECK(runstore_list(s, "val_loss<2.1", "recent", 0, &rows, &n, err) == LM_OK && n == 1 &&
          rows[0].id == a, "filter val_loss<2.1: %d %s", n, err);
    runstore_rows_free(rows, n);
    CHECK(runstore_list(s, "gate/1/0>0.5 val_loss.last>2.1", "recent", 0, &rows, &n, err) == LM_OK &&
          n == 1, "filter on a gate and an aggregate: %d %s", n, err);
    runstore_rows_free(rows, n);
    CHECK(runstore_list(s, "lr=2", "recent", 0, &rows, &n, err) == LM_OK && n == 1 &&
          rows[0].id == b, "lr stays the setting: %d", n);
    runstore_rows_free(rows, n);
    runstore_close(s);
}

static void run(void)
{
    test_registry();
    test_store();
}

int main(void)
{
    return runstore_test_main("series", run);
}
