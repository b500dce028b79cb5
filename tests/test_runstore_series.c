/* test_runstore_series.c — named scalar and histogram series in the run store (issue 48):
 * NaN, +Inf and -Inf survive a round trip (SQLite turns a bound NaN into NULL), a point
 * rewritten at its step replaces the old one, names list by pattern, a name keeps its
 * kind, bad names and unknown runs are refused with nothing written, runstore_series
 * reads named series too, a deleted run takes its series with it, the 64-bin histogram
 * against a hand count, and a store made by the main branch before this schema step
 * (tests/fixtures/store_main_v10.db: `lmlab train quick steps=40 eval_every=20
 * log_every=5` with main at 7a73048) opens at the new version with its series intact. */
#include "runstore_util.h"
#include "runstore_series.h"
#include "runstore_changes.h"

#include <math.h>

static void test_scalars(void)
{
    char path[128], err[LM_ERR_LEN];
    db_path(path, sizeof path, "s.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "", NULL), b = new_run(s, "b", "msa", "", NULL);
    NamedScalar v[4] = {{"grad/blocks.0.w", 1.5}, {"grad/blocks.1.w", NAN},
                        {"act/0/max", INFINITY}, {"act/0/mean", -INFINITY}};
    CHECK(runstore_series_log(s, a, 100, v, 4, err) == LM_OK, "log: %s", err);
    v[0].value = 2.5;
    CHECK(runstore_series_log(s, a, 200, v, 1, err) == LM_OK, "log 200: %s", err);
    v[0].value = 3.5;
    CHECK(runstore_series_log(s, a, 200, v, 1, err) == LM_OK, "rewrite 200: %s", err);
    SeriesPoint *p;
    int n;
    CHECK(runstore_named_series(s, a, "grad/blocks.0.w", &p, &n, err) == LM_OK && n == 2 &&
          p[0].step == 100 && p[0].value == 1.5 && p[1].step == 200 && p[1].value == 3.5,
          "points in step order, the rewrite replaced: n=%d", n);
    free(p);
    CHECK(runstore_named_series(s, a, "grad/blocks.1.w", &p, &n, err) == LM_OK && n == 1 &&
          isnan(p[0].value), "NaN survives");
    free(p);
    CHECK(runstore_named_series(s, a, "act/0/max", &p, &n, err) == LM_OK && n == 1 &&
          isinf(p[0].value) && p[0].value > 0, "+Inf survives");
    free(p);
    CHECK(runstore_series(s, a, "act/0/mean", &p, &n, err) == LM_OK && n == 1 &&
          isinf(p[0].value) && p[0].value < 0, "-Inf survives, through runstore_series too");
    free(p);
    CHECK(runstore_series(s, a, "grad/nope", &p, &n, err) == LM_EARG &&
          strstr(err, "has no series 'grad/nope'"), "an unknown name: %s", err);
    CHECK(runstore_named_series(s, b, "grad/blocks.0.w", &p, &n, err) == LM_EARG &&
          strstr(err, "run 2 has no series 'grad/blocks.0.w'"), "another run's: %s", err);

    SeriesInfo *info;
    CHECK(runstore_series_names(s, a, NULL, &info, &n, err) == LM_OK && n == 4 &&
          !strcmp(info[0].name, "act/0/max") && !strcmp(info[3].name, "grad/blocks.1.w") &&
          info[2].n_points == 2 && info[2].first_step == 100 && info[2].last_step == 200 &&
          info[2].kind == SERIES_SCALAR, "all names, by name: n=%d", n);
    free(info);
    CHECK(runstore_series_names(s, a, "grad/*", &info, &n, err) == LM_OK && n == 2 &&
          !strcmp(info[0].name, "grad/blocks.0.w"), "grad/*: %d", n);
    free(info);
    CHECK(runstore_series_names(s, a, "*/0/m??", &info, &n, err) == LM_OK && n == 1 &&
          !strcmp(info[0].name, "act/0/max"), "*/0/m??: %d", n);
    free(info);
    CHECK(runstore_series_names(s, a, "gate/*", &info, &n, err) == LM_OK && n == 0 && !info,
          "a pattern matching nothing: LM_OK, none");
    CHECK(runstore_series_names(s, 99, NULL, &info, &n, err) == LM_EARG &&
          strstr(err, "no run 99"), "unknown run: %s", err);
    CHECK(runstore_series_match("*", "") && runstore_series_match("a*b*c", "a/xb/yc") &&
          !runstore_series_match("a*b", "a/bc") && !runstore_series_match("a?", "a"),
          "the matcher");

    /* refusals: nothing of the batch is written */
    NamedScalar bad[2] = {{"ok/one", 1}, {"bad\001name", 2}};
    CHECK(runstore_series_log(s, b, 1, bad, 2, err) == LM_EARG && strstr(err, "series name"),
          "a control byte: %s", err);
    bad[1].name[0] = 0;
    CHECK(runstore_series_log(s, b, 1, bad, 2, err) == LM_EARG, "an empty name: %s", err);
    CHECK(runstore_series_log(s, 77, 1, bad, 1, err) == LM_EARG && strstr(err, "no run 77"),
          "unknown run: %s", err);
    CHECK(q_long(path, "SELECT count(*) FROM series_names WHERE run_id=2") == 0,
          "nothing written for refused batches");
    NamedHist h = {.name = "grad/blocks.0.w"};
    CHECK(runstore_hist_log(s, a, 1, &h, 1, err) == LM_EARG && strstr(err, "is a scalar"),
          "a scalar's name is not a histogram's: %s", err);
    HistPoint *hp;
    CHECK(runstore_hist_series(s, a, "grad/blocks.0.w", &hp, &n, err) == LM_EARG,
          "read as a histogram: refused");

    CHECK(runstore_delete_run(s, a, 0, err) == LM_OK, "delete: %s", err);
    CHECK(q_long(path, "SELECT count(*) FROM series_names") == 0 &&
          q_long(path, "SELECT count(*) FROM series_points") == 0, "series deleted with it");
    runstore_close(s);
}

/* The 64 bins by hand: values 0..127 over [0, 127] put 2 in each bin but the last
 * (126 -> bin 63.5 -> 63, 127 -> the closed end), plus NaN, +Inf, -Inf apart. */
static void test_histograms(void)
{
    float x[131];
    for (int i = 0; i < 128; i++) x[i] = (float)i;
    x[128] = NAN;
    x[129] = INFINITY;
    x[130] = -INFINITY;
    NamedHist h[2] = {{.name = "hist/weight/w"}, {.name = "hist/grad/w"}};
    series_hist_fill(&h[0].h, x, 131);
    int ok = h[0].h.lo == 0 && h[0].h.hi == 127 && h[0].h.num == 128 &&
             h[0].h.sum == 127 * 128 / 2 && h[0].h.n_nan == 1 && h[0].h.n_posinf == 1 &&
             h[0].h.n_neginf == 1;
    double sq = 0;
    for (int i = 0; i < 128; i++) sq += (double)i * i;
    ok = ok && h[0].h.sum_sq == sq;
    /* bin of v: floor(v * 64 / 127): v = 0,1 -> 0; v = 2 -> 1.007 -> 1, ..., 127 -> 63 */
    long want[SERIES_HIST_BINS] = {0};
    for (int i = 0; i < 128; i++) {
        int b = (int)floor(i * 64.0 / 127.0);
        want[b < 64 ? b : 63]++;
    }
    for (int b = 0; b < SERIES_HIST_BINS; b++) ok = ok && h[0].h.counts[b] == want[b];
    CHECK(ok && want[0] == 2 && want[63] == 2, "the bins by hand");
    float same[3] = {0.5f, 0.5f, 0.5f};
    series_hist_fill(&h[1].h, same, 3);
    CHECK(h[1].h.counts[0] == 3 && h[1].h.lo == 0.5 && h[1].h.hi == 0.5, "one value: bin 0");
    SeriesHist none;
    float nan1 = NAN;
    series_hist_fill(&none, &nan1, 1);
    CHECK(none.num == 0 && isnan(none.lo) && none.n_nan == 1, "only NaN: no range");

    char path[128], err[LM_ERR_LEN];
    db_path(path, sizeof path, "h.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "", NULL);
    CHECK(runstore_hist_log(s, a, 10, h, 2, err) == LM_OK, "log: %s", err);
    h[1].h = none;
    CHECK(runstore_hist_log(s, a, 20, &h[1], 1, err) == LM_OK, "log 20: %s", err);
    HistPoint *p;
    int n;
    CHECK(runstore_hist_series(s, a, "hist/weight/w", &p, &n, err) == LM_OK && n == 1 &&
          p[0].step == 10 && !memcmp(&p[0].h, &h[0].h, sizeof h[0].h), "round trip: n=%d", n);
    free(p);
    CHECK(runstore_hist_series(s, a, "hist/grad/w", &p, &n, err) == LM_OK && n == 2 &&
          p[1].step == 20 && isnan(p[1].h.lo) && isnan(p[1].h.hi) && p[1].h.n_nan == 1 &&
          p[0].h.counts[0] == 3, "the NaN-only histogram: n=%d", n);
    free(p);
    SeriesInfo *info;
    CHECK(runstore_series_names(s, a, "hist/*", &info, &n, err) == LM_OK && n == 2 &&
          info[0].kind == SERIES_HISTOGRAM && info[0].n_points == 2, "listed as histograms");
    free(info);
    SeriesPoint *sp;
    CHECK(runstore_named_series(s, a, "hist/grad/w", &sp, &n, err) == LM_EARG &&
          strstr(err, "is a histogram"), "a histogram is not a scalar series: %s", err);
    runstore_close(s);
}

/* Every value of a column of a query, as text, for comparing before and after. */
static void q_all(const char *path, const char *sql, char *out, size_t cap)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    size_t k = 0;
    out[0] = 0;
    if (sqlite3_open(path, &db) != SQLITE_OK) return;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW && k + 64 < cap)
            k += (size_t)snprintf(out + k, cap - k, "%ld:%.17g ",
                                  (long)sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

static void test_main_store(void)
{
    char src[512], path[128], err[LM_ERR_LEN], cmd[800];
    const char *fx = getenv("LMLAB_FIXTURES");
    snprintf(src, sizeof src, "%s/store_main_v10.db", fx ? fx : "tests/fixtures");
    db_path(path, sizeof path, "main.db");
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, path);
    CHECK(system(cmd) == 0, "copy the fixture %s", src);
    CHECK(q_long(path, "PRAGMA user_version") == 10, "made at version 10");
    static char loss[4096], val[1024], gate[4096], after[4096];
    q_all(path, "SELECT step, loss FROM metrics WHERE run_id=1 ORDER BY step", loss, sizeof loss);
    q_all(path, "SELECT step, loss FROM evals WHERE run_id=1 AND split='valid' ORDER BY step",
          val, sizeof val);
    q_all(path, "SELECT step, mean FROM gates WHERE run_id=1 AND layer=1 AND level=2"
          " ORDER BY step", gate, sizeof gate);
    CHECK(strlen(loss) > 40 && strlen(val) > 10 && strlen(gate) > 10, "the fixture has series");
    /* a resume note as binaries before schema step 13 wrote it: parsed into rows, once */
    CHECK(q_exec(path, "INSERT INTO notes(run_id, t, text) VALUES(1, 5, 'resumed at step 20 with"
                 " steps=80 (was 40), lr=0.5 (was 0.001)'), (1, 6, 'a note of another shape')")
          == 0, "an old resume note");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open the old store: %s", err);
    RunSettingChange *ch = NULL;
    int nch = 0;
    CHECK(runstore_setting_changes(s, 1, &ch, &nch, err) == LM_OK && nch == 2 &&
          ch[1].step == 20 && !strcmp(ch[1].key, "lr") && !strcmp(ch[1].from, "0.001") &&
          !strcmp(ch[1].to, "0.5") && !strcmp(ch[0].key, "steps"),
          "the old note migrated into %d rows", nch);
    free(ch);
    runstore_close(s);
    CHECK(runstore_open(path, &s, err) == LM_OK &&
          q_long(path, "SELECT count(*) FROM run_setting_changes") == 2, "migrated once");
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION &&
          RUNSTORE_SCHEMA_VERSION >= RUNSTORE_SERIES_VERSION, "migrated to %d",
          RUNSTORE_SCHEMA_VERSION);
    const char *metric[3] = {"loss", "val_loss", "gate:1:2"};
    const char *want[3] = {loss, val, gate};
    for (int m = 0; m < 3; m++) {
        SeriesPoint *p;
        int n;
        CHECK(runstore_series(s, 1, metric[m], &p, &n, err) == LM_OK, "%s: %s", metric[m], err);
        size_t k = 0;
        after[0] = 0;
        for (int i = 0; i < n; i++)
            k += (size_t)snprintf(after + k, sizeof after - k, "%ld:%.17g ", p[i].step,
                                  p[i].value);
        CHECK(!strcmp(after, want[m]), "%s intact:\n  %s\n  %s", metric[m], after, want[m]);
        free(p);
    }
    SeriesInfo *info;
    int n;
    CHECK(runstore_series_names(s, 1, NULL, &info, &n, err) == LM_OK && n == 0,
          "no named series yet");
    NamedScalar v = {"grad/embed.weight", 0.25};
    CHECK(runstore_series_log(s, 1, 40, &v, 1, err) == LM_OK, "the old run takes new series");
    runstore_close(s);
    CHECK(q_long(path, "SELECT count(*) FROM series_points") == 1, "written");
}

static void run_all(void)
{
    test_scalars();
    test_histograms();
    test_main_store();
}

int main(void)
{
    return runstore_test_main("runstore_series", run_all);
}
