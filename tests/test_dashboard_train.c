/* test_dashboard_train.c — whole dashboard frames of the training view rendered
 * off-screen from a hand-built Snapshot (no terminal), checked on canvas_dump and on
 * cells: the status bar fields, the loss plot (axis label, points, a falling curve), the
 * gates heatmap (shift labels, a filled cell, a step's detail), the sample text and its
 * word wrap, the command line and its hint, the output pane's sizes, the help overlay
 * listing every key of the key tables (global and each view's), the too-small message and
 * ASCII/monochrome. Sizes 80x24 (minimum) and 160x48. The other views:
 * test_dashboard_history.c, test_dashboard_views.c; the shared snapshot and frame dump:
 * dashboard_fixture.c. */
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

static int is_braille(const Canvas *c, int x, int y)
{
    const unsigned char *u = (const unsigned char *)canvas_glyph(c, x, y);
    return u[0] == 0xE2 && (u[1] & 0xFC) == 0xA0 && !(u[1] == 0xA0 && u[2] == 0x80);
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

/* The last tick label and the labels' spacing of the x axis label row y, in columns
 * [0, w): 0 when the row has fewer than two numbers. */
static int last_tick(const Canvas *c, int y, int w, double *last, double *step)
{
    char t[1024];
    double v[32];
    int n = 0;
    row_text(c, y, w, t, sizeof t);
    for (char *p = t; *p && n < 32;) {
        char *end;
        double x = strtod(p, &end);
        if (end > p && (p == t || p[-1] == ' '))
            v[n++] = x, p = end;
        else
            p++;
    }
    if (n < 2) return 0;
    *last = v[n - 1];
    *step = v[n - 1] - v[n - 2];
    return 1;
}

/* A run whose loss overflowed the perplexity (loss 1528 from step 110 on, ppl = exp(loss)
 * = inf; docs/hostile7.md): the perplexity pane marks the infinite points and spans the
 * same steps as the loss pane, up to the last one, 200. */
static void test_overflowed_ppl_pane(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    free(sn.loss);
    free(sn.val);
    sn.n_loss = sn.cap_loss = 20;
    sn.loss = malloc(20 * sizeof *sn.loss);
    for (int i = 0; i < 20; i++)
        sn.loss[i] = (SeriesPoint){(i + 1) * 10, i < 10 ? 4.0 - 0.2 * i : 1528};
    sn.n_val = sn.cap_val = 2;
    sn.val = malloc(2 * sizeof *sn.val);
    sn.val[0] = (SeriesPoint){100, 2.3};
    sn.val[1] = (SeriesPoint){200, 1528};
    sn.last.step = 200;
    Canvas *c;
    char *s = dump(&d, &sn, 160, 48, &U, &c);
    int loss_top = -1, ppl_top = -1, w = 160 * 55 / 100;
    char t[1024];
    for (int y = 0; c && y < canvas_height(c); y++) {
        row_text(c, y, w, t, sizeof t);
        if (strstr(t, "┌ loss")) loss_top = y;
        if (strstr(t, "┌ perplexity")) ppl_top = y;
    }
    CHECK(loss_top >= 0 && ppl_top > loss_top, "both panes at 160x48: %s", s ? s : "");
    if (loss_top < 0 || ppl_top <= loss_top) {
        free(s);
        canvas_destroy(c);
        snapshot_free(&sn);
        dash_state_free(&d);
        return;
    }
    /* the last plot column of the perplexity pane's top row: the +inf of step 200 */
    CHECK(!strcmp(canvas_glyph(c, w - 2, ppl_top + 2), "▲"),
          "ppl pane: step 200's inf marked in the last column: '%s'",
          canvas_glyph(c, w - 2, ppl_top + 2));
    CHECK(has(s, "+inf points marked ▲"), "ppl pane counts its infinite points");
    /* each pane's x labels reach the last step: its last label within one spacing of 200
     * (the label of 200 itself may give way to "step") */
    double last[2] = {0, 0}, step[2] = {0, 0};
    int found[2] = {0, 0}, pane[2] = {loss_top, ppl_top};
    for (int k = 0; k < 2; k++)
        for (int y = pane[k] + 3; y < canvas_height(c) && !found[k]; y++) {
            row_text(c, y, w, t, sizeof t);
            if (strstr(t, "step│"))
                found[k] = last_tick(c, y, w, &last[k], &step[k]);
        }
    for (int k = 0; k < 2; k++)
        CHECK(found[k] && last[k] <= 200 && last[k] + step[k] >= 200,
              "%s pane's x axis ends at step 200: last label %g, spacing %g",
              k ? "perplexity" : "loss", last[k], step[k]);
    free(s);
    canvas_destroy(c);
    snapshot_free(&sn);
    dash_state_free(&d);
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

/* truth2: the status bar of an ended run says its own speed and time, as its end and
 * `compare` say: a fork's from its fork point (tokens 100,000 -> 160,000 in 20 -> 30 s:
 * 6000 tok/s over 10 s), not its last logged window (12.3k) nor its parent's seconds. */
static void test_ended_fork_status_bar(void)
{
    Dashboard d;
    Snapshot sn;
    CHECK(dash_state_init(&d) == LM_OK, "init");
    make_snapshot(&sn);
    sn.status = TRAINER_FINISHED;
    sn.fork_of = 3;
    sn.origin = (StepMetric){.step = 100, .tokens = 100000, .elapsed = 20.0};
    sn.last.tokens = 160000;
    char *s = dump(&d, &sn, 160, 48, &U, NULL);
    CHECK(has(s, "tok/s 6000") && has(s, "time 0:10") && !has(s, "12.3k"),
          "the fork's own speed and time: %.200s", s);
    free(s);
    sn.status = TRAINER_RUNNING;   /* live: the newest window's speed */
    s = dump(&d, &sn, 160, 48, &U, NULL);
    CHECK(has(s, "tok/s 12.3k") && has(s, "time 0:10"), "a live fork: %.200s", s);
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

int main(void)
{
    test_ended_fork_status_bar();
    test_training_80x24();
    test_training_160x48();
    test_overflowed_ppl_pane();
    test_gate_numbers_80x24();
    test_gate_detail_step_80x24();
    test_too_small_and_idle();
    test_help_overlay();
    test_output_sizes();
    test_ascii_mono_and_command_line();
    test_sample_word_wrap();
    return check_summary();
}
