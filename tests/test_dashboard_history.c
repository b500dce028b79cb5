/* test_dashboard_history.c — the dashboard's history view rendered off-screen (no
 * terminal): the runs table with a column per differing setting, a marked run's curve and
 * the config diff, the pure pieces of the comparison (differing keys and their rank, the
 * smoothing, a run's colour), the table's sort by a column read from a real store, and
 * marking a long run (its curve read once, kept to what a chart draws).
 * The other views: test_dashboard_train.c, test_dashboard_views.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canvas.h"
#include "commands.h"
#include "check.h"
#include "dashboard_fixture.h"
#include "dash_data.h"
#include "dash_groups.h"
#include "dash_draw.h"
#include "runkeys.h"
#include "dash_keymap.h"
#include "dash_render.h"
#include "dash_state.h"
#include "views.h"
#include "view_sweep.h"
#include "view_system.h"
#include "view_grid.h"
#include "view_train.h"

#include <curses.h>

static RunRow run_row(long id, const char *name, double best)
{
    RunRow r;
    memset(&r, 0, sizeof r);
    r.id = id;
    snprintf(r.name, sizeof r.name, "%s", name);
    snprintf(r.model, sizeof r.model, "dispatcher");
    snprintf(r.status, sizeof r.status, "finished");
    r.last_step = 300;
    r.best_val = best;
    r.config = strdup("");
    r.notes = strdup("");
    return r;
}

static DashCurve make_curve(long id, const char *name, const char *config, double best)
{
    DashCurve cv;
    memset(&cv, 0, sizeof cv);
    cv.run = id;
    snprintf(cv.label, sizeof cv.label, "#%ld %s", id, name);
    cv.n = 20;
    cv.pts = malloc(20 * sizeof *cv.pts);
    for (int i = 0; i < 20; i++)
        cv.pts[i] = (SeriesPoint){i * 10, best + 1.0 - 0.05 * i};
    cv.config = strdup(config);
    cv.best_val = best;
    cv.best_step = -1;   /* no best checkpoint: the panel shows best_val */
    cv.best_step_val = NAN;
    cv.final_val = best + 0.01;
    cv.last_step = 190;
    return cv;
}

/* The history view at 80x24 with three marked runs: the runs table with a column per
 * differing setting, the curves and a readable diff (one row per setting, a column per
 * run, nothing wrapped mid-word), the metric and smoothing in the title. */
static void test_history(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    HistoryView *h = dash_view_state(&d, views_get(views_find("history")));   /* its own state */
    CHECK(h != NULL, "the history view's state");
    if (!h) return;
    make_snapshot(&sn);
    d.view = views_find("history");
    d.focus = DASH_FOCUS_VIEW;
    static const char *const cfg[] = {
        "model=dispatcher\nlr=0.003\nd=128\ndata=tinyshakespeare\n",
        "model=dispatcher\nlr=0.001\nd=128\ndata=tinyshakespeare\n",
        "model=dispatcher\nlr=0.0005\nd=256\ndata=tinyshakespeare\n"};
    static const char *const names[] = {"old-run", "new-run", "third-run-with-a-long-name"};
    static const double best[] = {1.75, NAN, 1.5};
    h->n_runs = 3;
    h->runs = malloc(3 * sizeof *h->runs);
    for (int i = 0; i < 3; i++) {
        h->runs[i] = run_row(3 + 2 * i, names[i], best[i]);
        free(h->runs[i].config);
        h->runs[i].config = strdup(cfg[i]);
        d.marked[i] = 3 + 2 * i;
        d.curves[i] = make_curve(3 + 2 * i, names[i], cfg[i], isnan(best[i]) ? 2.0 : best[i]);
    }
    h->run_sel = 1;
    d.n_marked = 3;
    char *s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "old-run") && has(s, "new-run") && has(s, "third-run-wit"), "names readable");
    CHECK(has(s, "1.7500"), "best val column");
    CHECK(has(s, "sort best val"), "sort shown");
    CHECK(has(s, " lr") && has(s, "0.0005"), "a differing setting is a column of the runs table");
    CHECK(has(s, "━━ #3  ━━ #5  ━━ #7"), "a legend that fits: ids when the names do not");
    CHECK(has(s, "training loss | smooth off"), "metric and smoothing in the title: %s", s);
    /* the diff: a header of ids, one row per differing setting with every value */
    const char *diff = strstr(s, "settings that differ");
    CHECK(diff != NULL, "diff box");
    CHECK(has(diff, "#3") && has(diff, "#5") && has(diff, "#7"), "run ids head the diff");
    int lr_row = has(diff, "lr        0.003    0.001    0.0005"),
        d_row = has(diff, "d         128      128      256");
    CHECK(lr_row && d_row, "lr and d rows each on one line with all three values: %s", s);
    CHECK(!has(diff, "tinyshakespeare"), "a setting all share is not in the diff");
    free(s);
    d.cmp_smooth = 2;
    d.cmp_metric = 1;   /* val_loss: dash_data_cmp_series */
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "validation loss | smooth EMA 20"), "metric/smoothing title follows the state");
    free(s);
    s = dump(&d, &sn, 160, 48, &U, NULL);
    CHECK(has(s, "best val") && has(s, "started"), "all columns when wide");
    free(s);
    /* issue 49 item 8: every differing setting that fits is a column, not 3 at most */
    static const char *const cfg5[] = {
        "model=dispatcher\nlr=0.003\nd=128\nlayers=2\nnhid=64\nbatch=8\n",
        "model=dispatcher\nlr=0.001\nd=128\nlayers=4\nnhid=64\nbatch=16\n",
        "model=dispatcher\nlr=0.0005\nd=256\nlayers=2\nnhid=128\nbatch=8\n"};
    for (int i = 0; i < 3; i++) {
        free(h->runs[i].config);
        h->runs[i].config = strdup(cfg5[i]);
    }
    s = dump(&d, &sn, 160, 48, &U, NULL);
    char head[400] = "";   /* the runs table's header line */
    const char *hb = strstr(s, "best val");
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        const char *bv = strstr(l, "best val"), *nm = strstr(l, "name");
        if (bv && nm && bv < l + len && nm < l + len && !memmem(l, len, "sort", 4)) {
            hb = bv;
            break;
        }
        hb = NULL;
    }
    if (hb) {
        const char *b0 = hb, *e = strchr(hb, '\n');
        while (b0 > s && b0[-1] != '\n') b0--;
        snprintf(head, sizeof head, "%.*s", (int)((e ? e : hb + strlen(hb)) - b0), b0);
    }
    CHECK(has(head, " lr") && has(head, " layers") && has(head, " nhid") &&
          has(head, " batch") && has(head, " d "),
          "five differing settings as columns of the runs table when wide: %s", head);
    for (int i = 0; i < 3; i++) {
        free(h->runs[i].config);
        h->runs[i].config = strdup(cfg[i]);
    }
    CHECK(has(s, "#3 old-run"), "names in the legend when wide");
    CHECK(!has(s, "note #"), "no note line for a run without notes");
    free(s);
    /* issue 37: the selected run's newest note, escaped */
    free(h->runs[1].notes);
    h->runs[1].notes = strdup("lr too low \x1b[31m?\nsee run 7");
    s = dump(&d, &sn, 160, 48, &U, NULL);
    CHECK(has(s, "note #5: lr too low \\e[31m?\\nsee run 7"), "the note line: %s", s);
    free(s);
    /* truth2: a best that is an estimate over eval_batches batches (a run stopped before
     * its final whole-split evaluation) is marked ~ in the table and in the panel, as
     * `runs` marks it (it was a bare 1.7500 here beside `runs`' ~1.7500) */
    free(h->runs[0].config);
    h->runs[0].config = strdup("model=dispatcher\nlr=0.003\nd=128\neval_batches=5\n");
    snprintf(h->runs[0].status, sizeof h->runs[0].status, "stopped");
    d.curves[0].best_estimated = 1;
    s = dump(&d, &sn, 160, 48, &U, NULL);
    int marks = 0;
    for (const char *p = s; (p = strstr(p, "~1.7500")); p++) marks++;
    CHECK(marks == 2 && !has(s, "~1.5000"), "~ on the estimate, in the table and the panel "
          "(%d): %s", marks, s);
    free(s);
    free(h->runs[0].config);
    h->runs[0].config = strdup(cfg[0]);
    d.curves[0].best_estimated = 0;
    /* issue 33 item 7: the cursor past a run's end gives that run no value; it names the
     * recorded point's own step. #3 ends at step 90, the others at 190. */
    d.curves[0].n = 10;
    h->hist_cursor = 1000000;   /* the right end */
    h->cursor_run = 3;
    s = dump(&d, &sn, 160, 48, &U, NULL);
    const char *cur = strstr(s, "cursor step ");
    CHECK(cur && (!strncmp(cur, "cursor step 190: #5", 19) || !strncmp(cur, "cursor step 190: "
          "#7", 19)), "cursor at the right end: %.40s", cur ? cur : "(none)");
    free(s);
    /* issue 33 item 4: a band follows the x axis: in tokens at its group's pace */
    h->hist_cursor = -1;
    h->hist_band = 1;
    h->n_bands = 1;
    DashBand *b = &h->bands[0];
    b->n = 20;
    b->x = malloc(20 * sizeof *b->x), b->mean = malloc(20 * sizeof *b->mean);
    b->lo = malloc(20 * sizeof *b->lo), b->hi = malloc(20 * sizeof *b->hi);
    for (int i = 0; i < 20; i++)
        b->x[i] = i * 10, b->mean[i] = 3 - 0.05 * i, b->lo[i] = b->mean[i] - 0.1,
        b->hi[i] = b->mean[i] + 0.1;
    b->run = 3, b->members = 3, b->tokens_per_step = 1000;
    snprintf(b->label, sizeof b->label, "trio N=3");
    d.x_axis = DASH_X_TOKENS;
    s = dump(&d, &sn, 160, 48, &U, NULL);
    CHECK(has(s, "trio N=3") && has(s, "150k") && has(s, "tokens"),
          "band in tokens (190 steps x 1000 tokens): %s", s);
    free(s);
    d.x_axis = DASH_X_STEPS;
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* The pure pieces of the comparison: which settings differ, a value, smoothing, and a
 * run's colour that does not depend on what else is marked. */
static void test_compare_logic(void)
{
    const char *cfg[] = {"a=1\nb=2\nc=3\n", "a=1\nb=5\n", "a=1\nb=2\nc=3\n"};
    char keys[4][32], v[16];
    int n = dash_draw_diff_keys(cfg, NULL, 3, keys, 4);
    CHECK(n == 2 && !strcmp(keys[0], "b") && !strcmp(keys[1], "c"), "differing keys: %d", n);
    CHECK(dash_draw_diff_keys(cfg, NULL, 3, keys, 1) == 2 && !strcmp(keys[0], "b"), "max keys");
    CHECK(dash_draw_diff_keys(cfg, NULL, 1, keys, 4) == 0, "one run differs from nothing");
    runkeys_config_value(cfg[1], "b", v, sizeof v);
    CHECK(!strcmp(v, "5"), "value of b: %s", v);
    runkeys_config_value(cfg[1], "c", v, sizeof v);
    CHECK(!strcmp(v, "-"), "missing value: %s", v);
    /* the one smoothing (issue 27): a debiased EMA starts at the raw value, keeps a
     * constant constant (no kink where a window fills), skips NaN */
    double y[6] = {4, 4, 4, NAN, 4, 4}, z[5] = {4, 2, 2, 2, 2};
    dash_draw_smooth(y, 6, 5);
    CHECK(y[0] == 4 && fabs(y[2] - 4) < 1e-12 && isnan(y[3]) && fabs(y[5] - 4) < 1e-12,
          "EMA of a constant: %g %g %g", y[0], y[2], y[5]);
    dash_draw_smooth(z, 5, 3);   /* weight 0.5: 4, (1+2*.5... debiased) */
    CHECK(z[0] == 4 && fabs(z[1] - (0.5 * 4 * 0.5 + 0.5 * 2) / 0.75) < 1e-12 && z[4] > 2 &&
          z[4] < z[1], "debiased EMA: %g %g %g", z[0], z[1], z[4]);
    /* the differing settings ranked by distinct values: the swept lr before d */
    const char *sw[] = {"d=32\nlr=1\n", "d=64\nlr=2\n", "d=64\nlr=3\n"};
    CHECK(dash_draw_diff_keys(sw, NULL, 3, keys, 4) == 2 && !strcmp(keys[0], "lr") &&
          !strcmp(keys[1], "d"), "ranked: %s %s", keys[0], keys[1]);
    /* issue 49 item 8: sweep 4 swept d (two values) over three seeds; two runs outside it
       differ in lr and nhid: d first, the seed last */
    const char *sp[] = {"d=32\nseed=1\nlr=1\nnhid=8\n", "d=32\nseed=2\nlr=1\nnhid=8\n",
                        "d=32\nseed=3\nlr=1\nnhid=8\n", "d=64\nseed=1\nlr=1\nnhid=8\n",
                        "d=64\nseed=2\nlr=1\nnhid=8\n", "d=64\nseed=3\nlr=1\nnhid=8\n",
                        "d=32\nseed=5\nlr=2\nnhid=16\n", "d=32\nseed=6\nlr=3\nnhid=32\n"};
    const long in_sweep[] = {4, 4, 4, 4, 4, 4, 0, 0};
    char k4[4][32];
    CHECK(dash_draw_diff_keys(sp, in_sweep, 8, k4, 4) == 4 && !strcmp(k4[0], "d") &&
          !strcmp(k4[3], "seed"), "the swept d first, the seed last: %s %s %s %s", k4[0],
          k4[1], k4[2], k4[3]);
    CHECK(dash_draw_run_color(12) == dash_draw_run_color(18) &&
          dash_draw_run_color(12) != dash_draw_run_color(13), "colour by run id");
}

/* Deletes a test's store with its WAL and shared-memory files. */
static void remove_store(const char *db)
{
    char side[64];
    for (const char *suf = "-wal"; suf; suf = strcmp(suf, "-wal") ? NULL : "-shm") {
        snprintf(side, sizeof side, "%s%s", db, suf);
        remove(side);
    }
    remove(db);
}

/* Issue 27: `=` sorts by every fixed column; steps, status and id are sorted here (the
 * store knows only best, recent, model, name). */
static void test_sort_columns(void)
{
    char db[] = "/tmp/lmlab-dash-sort-XXXXXX.db", err[LM_ERR_LEN];
    RunStore *st = new_store(db, err);
    CHECK(st, "open: %s", err);
    if (!st) return;
    const long steps[] = {30, 10, 20};
    for (int r = 0; r < 3; r++) {
        long id;
        static const char *const lrs[] = {"lr=0.002\n", "lr=0.003\n", "lr=0.001\n"};
        RunInfo info = {.name = r == 1 ? "b" : r ? "c" : "a", .config = lrs[r],
                        .model = "msa"};
        runstore_run_create(st, &info, &id, err);
        StepMetric m = {.step = steps[r], .loss = 2.0f + (float)((r + 1) % 3), .lr = 1e-3f};
        runstore_log_step(st, id, &m, err);
    }
    CHECK(runstore_flush(st, err) == LM_OK, "flush: %s", err);
    Dashboard d;
    dash_state_init(&d);
    HistoryView *h = dash_view_state(&d, views_get(views_find("history")));   /* its own state */
    CHECK(h != NULL, "the history view's state");
    if (!h) return;
    h->sort = DASH_SORT_STEPS;
    CHECK(dash_data_load_runs(h, st, err) == LM_OK && h->n_runs == 3 && h->runs[0].id == 2 &&
          h->runs[1].id == 3 && h->runs[2].id == 1, "sort by steps: %ld %ld %ld",
          h->n_runs > 0 ? h->runs[0].id : -1, h->n_runs > 1 ? h->runs[1].id : -1,
          h->n_runs > 2 ? h->runs[2].id : -1);
    h->sort = DASH_SORT_ID;
    CHECK(dash_data_load_runs(h, st, err) == LM_OK && h->runs[0].id == 1 && h->runs[2].id == 3,
          "sort by id");
    /* issue 33 item 10: any setting, final_smooth, and either direction */
    h->sort_desc = 1;
    CHECK(dash_data_load_runs(h, st, err) == LM_OK && h->runs[0].id == 3 && h->runs[2].id == 1,
          "sort by id, reversed");
    snprintf(h->sort_key, sizeof h->sort_key, "lr");   /* lr: 1 0.002, 2 0.003, 3 0.001 */
    h->sort_desc = 0;
    CHECK(dash_data_load_runs(h, st, err) == LM_OK && h->runs[0].id == 3 && h->runs[1].id == 1 &&
          h->runs[2].id == 2, "sort by the setting lr");
    h->sort_desc = 1;
    CHECK(dash_data_load_runs(h, st, err) == LM_OK && h->runs[0].id == 2 && h->runs[2].id == 3,
          "sort by lr, reversed");
    snprintf(h->sort_key, sizeof h->sort_key, "final_smooth");   /* losses 3, 4, 2 */
    h->sort_desc = 0;
    CHECK(dash_data_load_runs(h, st, err) == LM_OK && h->runs[0].id == 3 && h->runs[1].id == 1 &&
          h->runs[2].id == 2, "sort by final_smooth");
    h->sort_desc = 1;
    CHECK(dash_groups_save_layout(&d, h, st, err) == LM_OK, "keep: %s", err);
    Dashboard e;   /* the next session gets the sort back */
    dash_state_init(&e);
    HistoryView *eh = dash_view_state(&e, views_get(views_find("history")));
    CHECK(eh && dash_groups_restore_layout(&e, eh, st, err) == LM_OK &&
          !strcmp(eh->sort_key, "final_smooth") && eh->sort_desc, "kept sort: '%s' desc %d",
          eh ? eh->sort_key : "", eh ? eh->sort_desc : -1);
    dash_state_free(&e);
    dash_state_free(&d);
    runstore_close(st);
    remove_store(db);
}

/* docs/hostile8.md: marking a 5 M-step run read its loss whole (and its tokens and
 * elapsed whole for two rates): 6 s, 185 MB. Now its loss is read once into at most
 * DASH_CURVE_BUCKETS buckets of points (a spike and a NaN kept) and the rates from the last
 * rows: counted in points read, not in time. */
static void test_mark_long_run(void)
{
    char db[] = "/tmp/lmlab-dash-mark-XXXXXX.db", err[LM_ERR_LEN];
    RunStore *st = new_store(db, err);
    CHECK(st, "open: %s", err);
    if (!st) return;
    long id = 0, n = 20000;
    RunInfo info = {.name = "long", .config = "", .model = "msa"};
    runstore_run_create(st, &info, &id, err);
    runstore_set_autoflush(st, 1 << 30, 1e9);
    for (long k = 1; k <= n; k++) {
        StepMetric m = {.step = k, .loss = 3.0f - (float)k / (float)n, .tokens = 64 * k,
                        .elapsed = 0.5 * (double)k};
        if (k == 12345) m.loss = 9.0f;
        if (k == 5000) m.loss = NAN;
        runstore_log_step(st, id, &m, err);
    }
    CHECK(runstore_flush(st, err) == LM_OK, "flush: %s", err);
    Dashboard d;
    dash_state_init(&d);
    long r0 = runstore_rows_read(st);
    CHECK(dash_data_toggle_mark(&d, st, id, err) == LM_OK && d.n_marked == 1, "mark: %s", err);
    long read = runstore_rows_read(st) - r0;
    const DashCurve *cv = &d.curves[0];
    int spike = 0, nan = 0, sorted = 1;
    for (int i = 0; i < cv->n; i++) {
        spike |= cv->pts[i].step == 12345 && cv->pts[i].value == 9.0;
        nan |= cv->pts[i].step == 5000 && isnan(cv->pts[i].value);
        sorted &= i == 0 || cv->pts[i].step > cv->pts[i - 1].step;
    }
    CHECK(read <= n + 2, "marking read %ld points of a %ld-step run", read, n);
    CHECK(cv->n <= 5 * DASH_CURVE_BUCKETS && cv->n < n && sorted && spike && nan &&
          cv->pts[0].step == 1 && cv->pts[cv->n - 1].step == n,
          "the curve: %d points, spike %d, NaN %d, in order %d", cv->n, spike, nan, sorted);
    CHECK(cv->tokens_per_step == 64 && cv->seconds_per_step == 0.5, "rates %g %g",
          cv->tokens_per_step, cv->seconds_per_step);
    HistoryView *h = dash_view_state(&d, views_get(views_find("history")));
    r0 = runstore_rows_read(st);   /* its band (groups on): read once, kept as the curve */
    CHECK(h && dash_groups_load(&d, h, st, err) == LM_OK && h->n_bands == 1 &&
          h->bands[0].n == cv->n && runstore_rows_read(st) - r0 <= n + 2,
          "band: %d points, %ld read: %s", h ? h->bands[0].n : -1, runstore_rows_read(st) - r0,
          err);
    dash_state_free(&d);
    runstore_close(st);
    remove_store(db);
}

int main(void)
{
    test_mark_long_run();
    test_sort_columns();
    test_history();
    test_compare_logic();
    return check_summary();
}
