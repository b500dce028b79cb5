/* test_dashboard.c — whole dashboard frames rendered off-screen from hand-built
 * Snapshots and states (no terminal), checked on canvas_dump and on cells: the status
 * bar fields, the loss plot (axis label, points, a falling curve), the gates heatmap
 * (shift labels, a filled cell), the sample text, the history table with a marked run's
 * curve and config diff, the per-token view, the command line and its hint, the help
 * overlay listing every key of the key tables (global and each view's), the too-small message, ASCII/monochrome,
 * and the key table's focus rules. Sizes 80x24 (minimum) and 160x48. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canvas.h"
#include "commands.h"
#include "check.h"
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

static const CanvasCaps U = {1, 1}, ASCII_MONO = {0, 0};

static char *dump(Dashboard *d, const Snapshot *sn, int w, int h, const CanvasCaps *caps,
                  Canvas **keep)
{
    Canvas *c = canvas_create(w, h);
    dash_render(c, d, sn, caps);
    char *s = canvas_dump(c);
    if (keep)
        *keep = c;
    else
        canvas_destroy(c);
    return s;
}

static int has(const char *dump, const char *s) { return dump && strstr(dump, s) != NULL; }

static int is_braille(const Canvas *c, int x, int y)
{
    const unsigned char *u = (const unsigned char *)canvas_glyph(c, x, y);
    return u[0] == 0xE2 && (u[1] & 0xFC) == 0xA0 && !(u[1] == 0xA0 && u[2] == 0x80);
}

/* A run at step 150 of 300 with a falling loss, three evaluations, 2 x 5 gates (layer 1
 * shift 16 fully open) and a sample. */
static void make_snapshot(Snapshot *sn)
{
    memset(sn, 0, sizeof *sn);
    config_defaults(&sn->cfg);
    snprintf(sn->cfg.model, sizeof sn->cfg.model, "dispatcher");
    snprintf(sn->cfg.data, sizeof sn->cfg.data, "tinyshakespeare");
    sn->run_id = 7;
    snprintf(sn->run_name, sizeof sn->run_name, "demo");
    sn->total_steps = 300;
    sn->status = TRAINER_RUNNING;
    sn->last = (StepMetric){.step = 150, .epoch = 0.12, .tokens = 38400, .loss = 2.1f, .lr = 3e-3f,
                            .grad_norm = 1.0f, .tokens_per_s = 12345.0f, .elapsed = 30.0};
    sn->n_loss = sn->cap_loss = 30;
    sn->loss = malloc(30 * sizeof *sn->loss);
    for (int i = 0; i < 30; i++)
        sn->loss[i] = (SeriesPoint){(i + 1) * 5, 4.2 * exp(-i / 12.0) + 0.5};
    sn->n_val = sn->cap_val = 3;
    sn->val = malloc(3 * sizeof *sn->val);
    for (int i = 0; i < 3; i++)
        sn->val[i] = (SeriesPoint){(i + 1) * 50, 3.5 - 0.6 * i};
    sn->last_eval.loss = 2.3;
    sn->last_eval.ppl = exp(2.3);
    sn->best_val = 2.3;
    sn->gate_layers = 2;
    sn->gate_levels = 5;
    sn->n_gates = 10;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 5; k++) {
            GateStat *g = &sn->gates[l * 5 + k];
            g->step = 100, g->layer = l, g->level = k;
            g->mean = l == 1 && k == 4 ? 1.0f : 0.1f * (float)k;
            g->std = 0.05f;
            for (int b = 0; b < GATE_HIST_BINS; b++)
                g->hist[b] = b * (k + 1);
        }
    snprintf(sn->sample, sizeof sn->sample, "ROMEO:\nwherefore art thou, sweet gate");
    sn->sample_step = 100;
    sn->seq = 42;
}

/* 1 when the dashboard drawn at 120x40 says "dispatcher bf16" on its status bar. */
static int has_text_bf16(Dashboard *d, Snapshot *sn)
{
    Canvas *c;
    char *s = dump(d, sn, 120, 40, &U, &c);
    char *nl = strchr(s, '\n');
    if (nl) *nl = 0;   /* the first line: the status bar */
    int yes = has(s, "dispatcher bf16");
    free(s);
    canvas_destroy(c);
    return yes;
}

static void test_training_80x24(void)
{
    Dashboard d;
    Snapshot sn;
    CHECK(dash_state_init(&d) == LM_OK, "init");
    make_snapshot(&sn);
    Canvas *c;
    char *s = dump(&d, &sn, 80, 24, &U, &c);
    CHECK(has(s, "TRAINING"), "state badge");
    CHECK(has(s, "#7 demo"), "run id and name");
    CHECK(has(s, "150/300"), "step / total");
    CHECK(has(s, "tok/s"), "tokens/s field");
    CHECK(has(s, "loss"), "loss plot title");
    CHECK(has(s, "step"), "x axis label");
    CHECK(has(s, "layer \\ shift"), "heatmap title");
    CHECK(has(s, " 1 ") && has(s, "16"), "shift labels 1 .. 16");
    CHECK(has(s, "█"), "the fully open gate is a filled cell");
    CHECK(has(s, "wherefore art thou"), "sample text");
    CHECK(has(s, "lmlab> "), "command line prompt");
    CHECK(has(s, "1 training"), "view tabs");
    /* braille points in the loss plot (left 44 columns, rows 3..12), falling: the
     * topmost dot row is at the left, the lowest at the right */
    int n = 0, top_y = 99, top_x = -1, bot_y = -1, bot_x = -1;
    for (int y = 3; y < 13; y++)
        for (int x = 1; x < 43; x++)
            if (is_braille(c, x, y)) {
                n++;
                if (y < top_y)
                    top_y = y, top_x = x;
                if (y > bot_y)
                    bot_y = y, bot_x = x;
            }
    CHECK(n > 20, "braille points in the loss plot: %d", n);
    CHECK(top_y < bot_y && top_x < bot_x, "curve falls: top (%d,%d) bottom (%d,%d)", top_x,
          top_y, bot_x, bot_y);
    if (!has(s, "TRAINING") || n <= 20)
        fputs(s, stderr);
    free(s);
    canvas_destroy(c);
    /* issue 33 item 11: a bf16 run says so on the bar; an fp32 one keeps it short */
    CHECK(!has_text_bf16(&d, &sn), "fp32 run: no precision on the bar");
    snprintf(sn.cfg.precision, sizeof sn.cfg.precision, "bf16");
    CHECK(has_text_bf16(&d, &sn), "bf16 run: the bar says bf16");
    /* issue 33 item 6: a run whose process is gone says INTERRUPTED, as `runs` does */
    sn.status = TRAINER_STOPPED;
    sn.interrupted = 1;
    s = dump(&d, &sn, 120, 40, &U, &c);
    CHECK(has(s, "INTERRUPTED") && !has(s, "STOPPED"), "interrupted run's bar");
    free(s);
    canvas_destroy(c);
    sn.interrupted = 0;
    s = dump(&d, &sn, 120, 40, &U, &c);
    CHECK(has(s, "STOPPED"), "stopped run's bar");
    free(s);
    canvas_destroy(c);
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* At 80x24 the gate values stay readable with 6 levels (5-column cells: ".42"). */
static void test_gate_numbers_80x24(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    sn.gate_levels = 6;
    sn.n_gates = 12;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 6; k++) {
            GateStat *g = &sn.gates[l * 6 + k];
            *g = sn.gates[0];
            g->layer = l, g->level = k, g->mean = 0.42f + 0.01f * (float)k;
        }
    char *s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, ".42") && has(s, ".47") && has(s, "32"), "gate values at 80x24, 6 levels");
    if (!has(s, ".47"))
        fputs(s, stderr);
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* Issue 21: at 80x24 the gate cell pane cut "at step 3000" to "at step 300"; now a field
 * is dropped whole and the step number stays whole. */
static void test_gate_detail_step_80x24(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    for (int i = 0; i < sn.n_gates; i++)
        sn.gates[i].step = 3000;
    char *s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "step 3000"), "the step number is whole at 80x24");
    CHECK(!has(s, "step 300 ") && !has(s, "step 300\n") && !has(s, "step 300│"),
          "no cut number");
    if (!has(s, "step 3000"))
        fputs(s, stderr);
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

static void test_training_160x48(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    TrainView *w = dash_view_state(&d, &view_train);   /* the view's own state */
    CHECK(w != NULL, "the training view's state");
    if (!w) return;
    w->gate_row = 1, w->gate_col = 4;
    w->n_gate_hist = 2;
    w->gate_hist = malloc(2 * sizeof *w->gate_hist);
    w->gate_hist[0] = (SeriesPoint){50, 0.4};
    w->gate_hist[1] = (SeriesPoint){100, 1.0};
    d.x_axis = DASH_X_TOKENS;
    char *s = dump(&d, &sn, 160, 48, &U, NULL);
    CHECK(has(s, "perplexity"), "both plots fit at 160x48");
    CHECK(has(s, "x tokens"), "x axis in tokens");
    CHECK(has(s, "layer 1, shift 16"), "selected cell title");
    CHECK(has(s, "mean 1.000"), "selected cell mean");
    CHECK(has(s, "distribution"), "cell histogram");
    CHECK(has(s, "mean by step"), "cell history plot legend");
    CHECK(has(s, "epoch") && has(s, "ETA") && has(s, "lr") && has(s, "val 2.3000"),
          "more status fields when wide");
    free(s);
    d.sample_from_cmd = 1;
    snprintf(d.cmd_sample, sizeof d.cmd_sample, "streamed words");
    s = dump(&d, &sn, 160, 48, &U, NULL);
    CHECK(has(s, "sample (command)") && has(s, "streamed words"), "command sample shown");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

static void test_too_small_and_idle(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    char *s = dump(&d, &sn, 60, 20, &U, NULL);
    CHECK(has(s, "terminal too small (need 80x24"), "too-small message");
    CHECK(!has(s, "TRAINING"), "nothing else drawn when too small");
    free(s);
    s = dump(&d, &sn, 10, 3, &U, NULL);
    CHECK(has(s, "too"), "tiny terminal still says so");
    free(s);
    snapshot_free(&sn);
    Snapshot idle;
    memset(&idle, 0, sizeof idle);
    config_defaults(&idle.cfg);
    snprintf(d.experiment, sizeof d.experiment, "default");
    s = dump(&d, &idle, 80, 24, &U, NULL);
    CHECK(has(s, "IDLE") && has(s, "default") && has(s, "type `train`"), "idle status bar");
    CHECK(has(s, "gates appear at each evaluation"), "empty heatmap says when gates come");
    free(s);
    dash_state_free(&d);
}

static void test_help_overlay(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    d.help = 1;
    int n;
    const DashKey *k = dash_keymap_keys(&n);
    CHECK(n >= 15, "global key table has %d entries", n);
    int sizes[2][2] = {{80, 24}, {160, 48}};
    for (int z = 0; z < 2; z++) {
        char *s = dump(&d, &sn, sizes[z][0], sizes[z][1], &U, NULL);
        CHECK(has(s, "keys | any key closes"), "help title at %dx%d", sizes[z][0], sizes[z][1]);
        for (int i = 0; i < n; i++) {
            CHECK(has(s, k[i].label), "key %s listed at %dx%d", k[i].label, sizes[z][0],
                  sizes[z][1]);
            CHECK(has(s, k[i].help), "help '%s' shown at %dx%d", k[i].help, sizes[z][0],
                  sizes[z][1]);
        }
        for (int v = 0; v < views_count(); v++) {
            const DashView *dv = views_get(v);
            char line[64];
            snprintf(line, sizeof line, "%s view", dv->name);
            CHECK(has(s, line), "view switch '%s' listed", line);
            for (int j = 0; j < dv->n_keys; j++)
                CHECK(has(s, dv->keys[j].label) && has(s, dv->keys[j].help),
                      "view key %s '%s' listed at %dx%d", dv->keys[j].label, dv->keys[j].help,
                      sizes[z][0], sizes[z][1]);
        }
        free(s);
    }
    d.help = 0;
    d.confirm = DASH_CONFIRM_QUIT;
    char *s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "Run #7 is training") && has(s, "y: stop and quit"), "quit confirmation");
    free(s);
    d.confirm = DASH_CONFIRM_STOP;
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "Run #7 is training") && has(s, "y: stop the run") && !has(s, "and quit"),
          "stop confirmation");
    CHECK(d.cursor_x < 0, "no cursor under a question");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

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

/* F9 grows the output pane: half the screen, then all of it (the view hidden), and back;
 * the pane shows more of the scrollback each time. */
static void test_output_sizes(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    for (int i = 0; i < 40; i++) {
        char line[32];
        snprintf(line, sizeof line, "line %02d\n", i);
        textpane_append(d.out, line, -1, 0, 0);
    }
    int shown[DASH_N_OUT_SIZES];
    for (int z = 0; z < DASH_N_OUT_SIZES; z++) {
        d.out_size = z;
        char *s = dump(&d, &sn, 80, 24, &U, NULL);
        shown[z] = 0;
        for (int i = 0; i < 40; i++) {
            char line[32];
            snprintf(line, sizeof line, "line %02d", i);
            shown[z] += has(s, line);
        }
        CHECK(has(s, "line 39"), "the newest line shows at size %d", z);
        CHECK(has(s, "loss") == (z != DASH_OUT_FULL), "the view shows except full-screen (%d)", z);
        CHECK(has(s, z == DASH_OUT_FULL ? "F9 back" : "F9 larger"), "the F9 hint at size %d", z);
        free(s);
    }
    CHECK(shown[0] < shown[1] && shown[1] < shown[2] && shown[2] >= 19,
          "lines shown: %d, %d, %d", shown[0], shown[1], shown[2]);
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* The sweep view: the trials table (swept values, status, best val) and best val
 * against a swept setting, log x when it spans more than 20x; # picks the other key. */
static void test_sweep_view(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    d.view = views_find("sweep");
    char *s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "no sweep yet"), "the empty sweep view says how to start one");
    free(s);
    SweepView *w = dash_view_state(&d, &view_sweep);   /* the view's own state */
    CHECK(w && w->sw_id == 0 && !w->sw_trials, "the sweep view's state starts empty");
    if (!w) return;
    w->sw_id = 4;
    snprintf(w->sw_name, sizeof w->sw_name, "lrs");
    snprintf(w->sw_status, sizeof w->sw_status, "running");
    w->n_sw_trials = 3;
    w->sw_trials = calloc(3, sizeof *w->sw_trials);
    static const char *const params[] = {"lr=0.0001 d=64", "lr=0.001 d=64", "lr=0.01 d=128"};
    for (int i = 0; i < 3; i++) {
        SweepTrialRow *t = &w->sw_trials[i];
        t->trial = i;
        t->run_id = 10 + i;
        snprintf(t->params, sizeof t->params, "%s", params[i]);
        snprintf(t->status, sizeof t->status, i == 2 ? "running" : "done");
        t->best_val = i == 2 ? NAN : 2.0 - 0.5 * i;
        t->last_step = 100;
    }
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "sweep #4 lrs: running, 3 trials"), "sweep title: %s", s ? s : "");
    CHECK(has(s, "lr=0.001 d=64") && has(s, "1.5000") && has(s, "#11"), "trials listed: %s", s ? s : "");
    CHECK(has(s, "best val loss vs lr") && has(s, "lr (log)") && !has(s, "-3."),
          "chart against lr, log x in lr's units (issue 33 item 14): %s", s);
    free(s);
    w->sw_param = 1;
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "best val loss vs d") && !has(s, "(log)"), "# picks d (linear x)");
    free(s);
    /* issue 33 item 14: the parallel coordinates have no 0..1 y ticks (the positions are
     * normalised; each axis names its own ends) */
    w->sw_param = 2;
    s = dump(&d, &sn, 100, 30, &U, NULL);
    CHECK(s && has(s, "best val") && !has(s, "0.5┤") && !has(s, "1.0┤") && !has(s, "  1┤"),
          "parallel coordinates without 0..1 ticks: %s", s ? s : "");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

static void test_tokens(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    d.view = views_find("tokens");
    DashTokens *t = dash_view_state(&d, views_get(d.view));   /* the view's own state */
    CHECK(t && !strncmp(t->prompt, "ROMEO:", 6), "the tokens view's state, made by its init");
    if (!t) return;
    const char *texts[] = {"R", "O", "\\n", " "};
    t->n_tok = 4, t->layers = 2, t->levels = 3, t->layer = 1;
    t->text = malloc(4 * sizeof *t->text);
    t->gates = malloc(2 * 4 * 3 * sizeof *t->gates);
    for (int j = 0; j < 4; j++)
        snprintf(t->text[j], sizeof t->text[j], "%s", texts[j]);
    for (int i = 0; i < 24; i++)
        t->gates[i] = i % 3 == 2 && i >= 12 ? 1.0f : 0.0f;
    t->gates[12] = NAN;
    snprintf(t->source, sizeof t->source, "run #7 (live weights)");
    Canvas *c;
    char *s = dump(&d, &sn, 80, 24, &U, &c);
    CHECK(has(s, "layer 1 of 2"), "layer shown");
    CHECK(has(s, "shift 1") && has(s, "shift 4"), "level labels");
    CHECK(has(s, "RO↵␣"), "tokens in a row, newline and space made visible");
    CHECK(has(s, "█"), "an open gate is a filled cell");
    CHECK(has(s, "run #7 (live weights)"), "weights source");
    free(s);
    canvas_destroy(c);
    t->error[0] = 0;
    snprintf(t->error, sizeof t->error, "no model open: `open ID` or `train`");
    t->layers = 0;
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "no model open: `open ID` or `train`"), "error shown");
    CHECK(!has(s, "layer 0 of 0") && !has(s, "of 0"), "no 'layer 0 of 0' without a model");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

static void test_ascii_mono_and_command_line(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    editor_set_line(&d.ed, "train ");
    char *s = dump(&d, &sn, 100, 30, &ASCII_MONO, NULL);
    int ascii = s != NULL;
    for (const char *p = s; p && *p; p++)
        ascii &= (unsigned char)*p < 0x80;
    CHECK(ascii, "ASCII only without Unicode");
    CHECK(has(s, "lmlab> train [EXPERIMENT] [steps=N"), "hint after the typed command");
    CHECK(has(s, "#"), "ASCII heatmap shade");
    CHECK(d.cursor_y == 29 && d.cursor_x == 13, "cursor after 'train ': %d,%d", d.cursor_x,
          d.cursor_y);
    free(s);
    textpane_append(d.out, "error: something broke\n", -1, UI_COLOR_ERROR, 0);
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "error: something broke"), "output pane shows command output");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* Typing a command can never trigger an action: no printable letter is bound in any
 * focus or view, so each letter of every command name goes to the line. */
static void test_letters_never_act(void)
{
    Dashboard d;
    dash_state_init(&d);
    int n, arg, bad = 0;
    const Command *t = session_commands(&n);
    for (int focus = 0; focus < DASH_N_FOCUS; focus++)
        for (int v = 0; v < views_count(); v++)
            for (int i = 0; i < n; i++)
                for (const char *p = t[i].name; *p; p++) {
                    d.focus = focus, d.view = v;
                    editor_reset(&d.ed);
                    DashAction a = dash_keymap_action(&d, (unsigned char)*p, &arg);
                    if (a != DA_NONE && !bad++)
                        fprintf(stderr, "'%c' of `%s` acts (%d) in focus %d view %d\n", *p,
                                t[i].name, a, focus, v);
                }
    CHECK(n > 10 && bad == 0, "letters of %d command names never act (%d did)", n, bad);
    for (int c = 'A'; c <= 'z'; c++)
        if ((c <= 'Z' || c >= 'a')) {
            d.focus = DASH_FOCUS_VIEW;
            for (int v = 0; v < views_count(); v++) {
                d.view = v;
                CHECK(dash_keymap_action(&d, c, &arg) == DA_NONE, "letter %c in view %d", c, v);
            }
        }
    dash_state_free(&d);
}

/* Issue 37: the system view draws tok/s beside load and CPU, the newest sample's facts
 * and the console pane (its escaping is view_system.c's console_add, tested end to end by
 * e2e_track.sh through `log`). */
static void test_system_view(void)
{
    Dashboard d;
    dash_state_init(&d);
    Snapshot sn;
    make_snapshot(&sn);
    d.view = views_find("system");
    SystemView *w = dash_view_state(&d, &view_system);   /* the view's own state */
    w->sys_run = 7;
    w->n_sys = 20;
    w->sys = calloc(20, sizeof *w->sys);
    for (int i = 0; w->sys && i < 20; i++)   /* load rises as tok/s falls */
        w->sys[i] = (SysSample){.t = 1e9 + 5.0 * i, .cpu = 190 - 4 * i, .rss_mb = 50,
                               .threads = 3, .load1 = 1.0 + 0.2 * i, .mem_avail_mb = 900,
                               .mem_total_mb = 2000, .tokens_per_s = 20000 - 500 * i};
    w->console = textpane_create(100);
    textpane_append(w->console, "08:00:00 warning  evil line here\n", -1, 0, 0);
    Canvas *c = NULL;
    char *s = dump(&d, &sn, 120, 40, &U, &c);
    CHECK(has(s, "tokens/s") && has(s, "load (1 min)") && has(s, "cpu (cores)") &&
          has(s, "threads 3") && has(s, "console") && has(s, "evil line"), "system view: %s",
          s ? s : "(none)");
    free(s);
    canvas_destroy(c);
    /* 80 columns cannot hold eight tab names and the focus badge: the others abbreviate
     * (to their first letter: three letters each do not fit beside the badge either) */
    d.focus = DASH_FOCUS_VIEW;
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, " 7 system ") && has(s, " 1 t ") && has(s, " 2 h ") && has(s, " 8 g ") &&
          has(s, "VIEW KEYS"),
          "compact tabs at 80 columns: %s", s ? s : "");
    free(s);
    /* eight views (issue 48's grid) at 80 columns: whichever is on and whichever part has
     * the keys, the badge shows (the others down to a letter or their number) */
    int view0 = d.view;
    for (int v = 0; v < views_count(); v++)
        for (int f = DASH_FOCUS_VIEW; f <= DASH_FOCUS_OUTPUT; f++) {
            d.view = v;
            d.focus = f;
            s = dump(&d, &sn, 80, 24, &U, NULL);
            CHECK(s && has(s, f == DASH_FOCUS_VIEW ? "VIEW KEYS" : "OUTPUT KEYS") &&
                  has(s, views_get(v)->name), "view %d, focus %d at 80 columns: %s", v, f,
                  s ? s : "");
            free(s);
        }
    d.view = view0;
    d.focus = DASH_FOCUS_VIEW;
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* Issue 48: the grid view draws every series of a run as a small chart titled with its
 * registry name, arrows move the pick by one and by a row, Enter enlarges it with its
 * unit and help, a pattern keeps the matching series, and one that matches nothing says
 * so with the run's names. */
static void test_grid_view(void)
{
    char db[] = "/tmp/lmlab-dash-grid-XXXXXX.db", err[LM_ERR_LEN];
    int fd = mkstemps(db, 3);
    if (fd >= 0) close(fd);
    remove(db);
    RunStore *st = NULL;
    CHECK(runstore_open(db, &st, err) == LM_OK, "open: %s", err);
    if (!st) return;
    long id = 0;
    RunInfo info = {.name = "g", .config = "lr=0.001\n", .model = "dispatcher"};
    runstore_run_create(st, &info, &id, err);
    for (long t = 10; t <= 100; t += 10) {
        StepMetric m = {.step = t, .loss = 3.0f - 0.01f * (float)t, .lr = 1e-3f,
                        .grad_norm = 1.0f, .tokens = t * 64, .tokens_per_s = 1000};
        runstore_log_step(st, id, &m, err);
    }
    EvalMetric e = {.step = 100, .split = "valid", .loss = 2.1, .ppl = 8.2, .bpc = NAN};
    runstore_log_eval(st, id, &e, err);
    GateStat g[2] = {{.step = 100, .layer = 0, .level = 0, .mean = 0.4f},
                     {.step = 100, .layer = 0, .level = 1, .mean = 0.6f}};
    runstore_log_gates(st, id, g, 2, err);
    NamedHist *hh = calloc(1, sizeof *hh);   /* a histogram series: a heat strip */
    float xs[6] = {0, 1, 1, 2, 2, 2};
    snprintf(hh->name, sizeof hh->name, "hist/weight/w");
    series_hist_fill(&hh->h, xs, 6);
    runstore_hist_log(st, id, 50, hh, 1, err);
    runstore_hist_log(st, id, 100, hh, 1, err);
    free(hh);
    CHECK(runstore_flush(st, err) == LM_OK, "flush: %s", err);
    Dashboard d;
    dash_state_init(&d);
    Snapshot sn;
    make_snapshot(&sn);
    d.view = views_find("grid");
    GridView *w = dash_view_state(&d, &view_grid);
    CHECK(w && !strcmp(w->pattern, "*"), "every series at first");
    if (!w) return;
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n >= 10, "loaded %d series: %s", w->n, w->msg);
    char *s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(has(s, "series *:") && has(s, " loss ") && has(s, " val_loss ") &&
          has(s, " grad_norm "), "small charts titled by name: %s", s ? s : "");
    free(s);
    view_grid_move(w, VIEW_GRID_RIGHT);
    view_grid_move(w, VIEW_GRID_RIGHT);   /* epoch, tokens, loss */
    CHECK(w->sel == 2, "right twice: %d", w->sel);
    view_grid_move(w, VIEW_GRID_DOWN);
    CHECK(w->sel == 2 + w->cols, "down a row of %d: %d", w->cols, w->sel);
    view_grid_move(w, VIEW_GRID_UP);
    view_grid_move(w, VIEW_GRID_ENLARGE);
    s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(w->enlarged && has(s, "loss [nats/token]: training loss"), "enlarged: %s", s ? s : "");
    free(s);
    view_grid_move(w, VIEW_GRID_ENLARGE);
    snprintf(w->pattern, sizeof w->pattern, "gate/*");
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n == 2 && !strcmp(w->names[1], "gate/0/1"),
          "gate/*: %d", w->n);
    snprintf(w->pattern, sizeof w->pattern, "hist/*");
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n == 1 && w->n_hist[0] == 2, "hist/*: %d", w->n);
    s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(has(s, "hist/weight/w") && has(s, "steps 50..100  last [0, 2]") && has(s, "█"),
          "a histogram as a heat strip: %s", s ? s : "");
    free(s);
    snprintf(w->pattern, sizeof w->pattern, "grd/*");
    CHECK(view_grid_load(w, st, id) == LM_EARG && w->n == 0, "grd/* matches nothing");
    s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(has(s, "no series of run") && has(s, "grd/*"), "said in the view: %s", s ? s : "");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
    runstore_close(st);
    remove(db);
}

static void test_key_rules(void)
{
    Dashboard d;
    dash_state_init(&d);
    int arg, hist = views_find("history"), tok = views_find("tokens");
    int sweep = views_find("sweep");
    /* the table, whatever its length: each view found by its name at its place, and its
     * digit (1 + its place) shows it */
    int nv = views_count();
    CHECK(nv >= 1 && nv <= DASH_MAX_VIEWS, "%d views (1 .. %d: one digit each)", nv,
          DASH_MAX_VIEWS);
    for (int v = 0; v < nv; v++) {
        CHECK(views_find(views_get(v)->name) == v, "view %d (%s) found at its place", v,
              views_get(v)->name);
        CHECK(dash_keymap_action(&d, '1' + v, &arg) == DA_VIEW && arg == v, "%c: the %s view",
              '1' + v, views_get(v)->name);
    }
    CHECK(views_find("training") == 0 && hist >= 0 && tok >= 0 && sweep >= 0 &&
          views_find("jobs") >= 0 && views_find("samples") >= 0 && views_find("system") >= 0 &&
          views_find("nope") == -1,
          "the view table");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(5)), &arg) == DA_PAUSE,
          "F5 still pauses (the 4th view has its digit only)");
    CHECK(dash_keymap_view_fkey(3) == 0 && dash_keymap_view_fkey(2) == 4, "view F-keys");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(2 + tok)), &arg) == DA_VIEW && arg == tok,
          "F%d: the tokens view", 2 + tok);
    CHECK(dash_keymap_action(&d, '2', &arg) == DA_VIEW && arg == hist, "digit on an empty line");
    CHECK(dash_keymap_action(&d, 'p', &arg) == DA_NONE, "letters type while the line has focus");
    CHECK(dash_keymap_action(&d, '\t', &arg) == DA_FOCUS_NEXT, "Tab on an empty line: focus");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(1)), &arg) == DA_HELP, "F1 always");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(8)), &arg) == DA_STOP, "F8 stop (asks)");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(10)), &arg) == DA_QUIT, "F10 quit");
    CHECK(dash_keymap_action(&d, '*', &arg) == DA_NONE, "plot keys type on the line");
    editor_set_line(&d.ed, "sample");
    CHECK(dash_keymap_action(&d, '2', &arg) == DA_NONE, "digit inside a typed line");
    CHECK(dash_keymap_action(&d, '\t', &arg) == DA_NONE, "Tab on a typed line completes");
    CHECK(dash_keymap_action(&d, 27, &arg) == DA_FOCUS_VIEW, "Esc leaves the line");
    d.focus = DASH_FOCUS_VIEW;
    CHECK(dash_keymap_action(&d, 'p', &arg) == DA_NONE, "p types, in a pane too");
    CHECK(dash_keymap_action(&d, 'q', &arg) == DA_NONE, "q types, in a pane too");
    CHECK(dash_keymap_action(&d, '*', &arg) == DA_LOG_Y, "* in a pane: log y");
    CHECK(dash_keymap_action(&d, ' ', &arg) == DA_NONE, "Space only in the history view");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_LEFT), &arg) == DA_VIEW_KEY,
          "Left moves the gate cursor in the training view");
    d.view = hist;
    CHECK(dash_keymap_action(&d, ' ', &arg) == DA_VIEW_KEY, "Space marks in history");
    int mark = arg;
    CHECK(dash_keymap_action(&d, '\r', &arg) == DA_VIEW_KEY && arg != mark,
          "Enter opens in history");
    d.view = tok;
    CHECK(dash_keymap_action(&d, '\n', &arg) == DA_VIEW_KEY, "Enter edits the tokens prompt");
    d.focus = DASH_FOCUS_OUTPUT;
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_UP), &arg) == DA_UP, "Up scrolls the output");
    d.focus = DASH_FOCUS_VIEW;
    d.prompt_mode = DASH_PROMPT_VIEW;
    CHECK(dash_keymap_action(&d, '2', &arg) == DA_NONE, "a view's line takes every key");
    dash_state_free(&d);
}

/* A view owns its state (issue 34): a throwaway view defined here, with a struct of its
 * own, gets it made by its init on first use, the same one on every later use, one per
 * Dashboard, and released by its free with the Dashboard; the shared state has nothing
 * of it. */
typedef struct {
    int draws;
    char *note;   /* malloc'd by init, freed by free */
} ProbeView;
static int probe_inits, probe_frees;
static int probe_init(void *state)
{
    ProbeView *p = state;
    probe_inits++;
    p->note = strdup("probe view state");
    return p->note ? LM_OK : LM_ENOMEM;
}
static void probe_free(void *state)
{
    probe_frees++;
    free(((ProbeView *)state)->note);
}
static const DashView view_probe;
static void probe_draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                       const CanvasCaps *caps, int focused)
{
    (void)sn, (void)focused;
    ProbeView *p = dash_view_state(d, &view_probe);
    if (!p) return;
    char line[64];
    snprintf(line, sizeof line, "%s, draw %d", p->note, ++p->draws);
    canvas_text_fit(c, r.x, r.y, r.w, line, UI_COLOR_DEFAULT, 0, caps->unicode);
}
static const DashView view_probe = {.name = "probe", .state_size = sizeof(ProbeView),
                                    .init = probe_init, .free = probe_free, .draw = probe_draw};

static void test_view_owns_state(void)
{
    Dashboard a, b;
    Snapshot sn;
    dash_state_init(&a);
    dash_state_init(&b);
    make_snapshot(&sn);
    probe_inits = probe_frees = 0;
    CHECK(a.n_view_slots == 0, "no view state before a view is used");
    Canvas *c = canvas_create(60, 10);
    view_probe.draw(c, (Rect){0, 0, 60, 10}, &a, &sn, &U, 1);
    view_probe.draw(c, (Rect){0, 0, 60, 10}, &a, &sn, &U, 1);
    char *s = canvas_dump(c);
    CHECK(has(s, "probe view state, draw 2"), "the state lives between draws: %s", s ? s : "");
    free(s);
    ProbeView *pa = dash_view_state(&a, &view_probe), *pb = dash_view_state(&b, &view_probe);
    CHECK(pa && pb && pa != pb && pa->draws == 2 && pb->draws == 0 && probe_inits == 2,
          "one state per Dashboard, each made once (inits %d)", probe_inits);
    CHECK(dash_view_state(&a, &view_probe) == pa, "the same state on every use");
    dash_state_free(&a);
    CHECK(probe_frees == 1, "freed with its Dashboard (%d)", probe_frees);
    dash_state_free(&b);
    CHECK(probe_frees == 2, "each Dashboard frees its own (%d)", probe_frees);
    /* every table view with a state makes it, and its Dashboard frees it */
    dash_state_init(&a);
    for (int v = 0; v < views_count(); v++)
        CHECK(!views_get(v)->state_size || dash_view_state(&a, views_get(v)),
              "the %s view's state", views_get(v)->name);
    char *frame = dump(&a, &sn, 100, 30, &U, NULL);
    CHECK(frame != NULL, "a frame with every view's state made");
    free(frame);
    canvas_destroy(c);
    snapshot_free(&sn);
    dash_state_free(&a);
}

/* Issue 27: `=` sorts by every fixed column; steps, status and id are sorted here (the
 * store knows only best, recent, model, name). */
static void test_sort_columns(void)
{
    char db[] = "/tmp/lmlab-dash-sort-XXXXXX.db", err[LM_ERR_LEN];
    int fd = mkstemps(db, 3);
    if (fd >= 0) close(fd);
    remove(db);
    RunStore *st = NULL;
    CHECK(runstore_open(db, &st, err) == LM_OK, "open: %s", err);
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
    char side[64];
    for (const char *suf = "-wal"; suf; suf = strcmp(suf, "-wal") ? NULL : "-shm") {
        snprintf(side, sizeof side, "%s%s", db, suf);
        remove(side);
    }
    remove(db);
}

/* Row y of c as text (trailing blanks dropped). */
static void row_text(const Canvas *c, int y, int w, char *out, size_t cap)
{
    size_t o = 0;
    for (int x = 0; x < w && o + 5 < cap; x++) {
        const char *g = canvas_glyph(c, x, y);
        size_t n = strlen(g);
        memcpy(out + o, n ? g : " ", n ? n : 1);
        o += n ? n : 1;
    }
    while (o && out[o - 1] == ' ')
        o--;
    out[o] = 0;
}

/* Samples wrap at spaces (issue 49): a word is broken only when longer than the row. */
static void test_sample_word_wrap(void)
{
    Canvas *c = canvas_create(8, 8);
    dash_draw_wrap(c, (Rect){0, 0, 8, 8}, "the quick brown fox\nabcdefghijklmnop xy", 0, 1);
    const char *want[] = {"the", "quick", "brown", "fox", "abcdefgh", "ijklmnop", "xy", ""};
    char got[64];
    for (int y = 0; y < 8; y++) {
        row_text(c, y, 8, got, sizeof got);
        CHECK(!strcmp(got, want[y]), "wrap row %d: '%s', want '%s'", y, got, want[y]);
    }
    canvas_destroy(c);
    size_t end;
    const char *s = "ab cd";
    CHECK(dash_draw_wrap_row(s, 5, 4, &end) == 3 && end == 2, "row break at the space");
    CHECK(dash_draw_wrap_row(s, 5, 5, &end) == 5 && end == 5, "whole text fits");
    CHECK(dash_draw_wrap_row("abcdef", 6, 4, &end) == 4 && end == 4, "long word cut");
    CHECK(dash_draw_wrap_row("ab\ncd", 5, 8, &end) == 3 && end == 2, "newline ends a row");
}

int main(void)
{
    test_sort_columns();
    test_training_80x24();
    test_training_160x48();
    test_gate_numbers_80x24();
    test_gate_detail_step_80x24();
    test_too_small_and_idle();
    test_help_overlay();
    test_history();
    test_compare_logic();
    test_output_sizes();
    test_sweep_view();
    test_tokens();
    test_ascii_mono_and_command_line();
    test_key_rules();
    test_system_view();
    test_grid_view();
    test_view_owns_state();
    test_letters_never_act();
    test_sample_word_wrap();
    return check_summary();
}
