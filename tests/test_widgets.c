/* test_widgets.c — the dashboard widgets drawn into an off-screen Canvas, checked on
 * the dump and on individual cells: plot (ticks, direction of a decreasing curve,
 * log labels, ASCII, empty, NaN and Inf marked where they are, legend, huge n), heatmap
 * and histogram, table, text pane, status bar; every widget at degenerate sizes (w, h in
 * 0..2). */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "canvas.h"
#include "check.h"
#include "heatmap.h"
#include "chart.h"
#include "statusbar.h"
#include "table.h"
#include "textpane.h"

static const CanvasCaps U = {1, 1}, A = {0, 1}, MONO = {1, 0};

static int has(const Canvas *c, const char *s)
{
    char *d = canvas_dump(c);
    int r = d && strstr(d, s) != NULL;
    free(d);
    return r;
}

static int ascii_only(const Canvas *c)
{
    char *d = canvas_dump(c);
    int ok = d != NULL;
    for (const char *p = d; p && *p; p++)
        ok &= (unsigned char)*p < 0x80;
    free(d);
    return ok;
}

static int blank(const Canvas *c)
{
    for (int y = 0; y < canvas_height(c); y++)
        for (int x = 0; x < canvas_width(c); x++)
            if (strcmp(canvas_glyph(c, x, y), " ") || canvas_attr(c, x, y))
                return 0;
    return 1;
}

static const char *row(const Canvas *c, int y, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int x = 0; x < canvas_width(c); x++) {
        const char *g = canvas_glyph(c, x, y);
        size_t len = strlen(g);
        if (k + len + 1 > n)
            break;
        memcpy(buf + k, g, len);
        k += len;
        buf[k] = '\0';
    }
    return buf;
}

/* Braille bits of a cell, -1 when it is not a braille glyph. */
static int braille(const Canvas *c, int x, int y)
{
    const unsigned char *u = (const unsigned char *)canvas_glyph(c, x, y);
    if (u[0] != 0xE2 || (u[1] & 0xFC) != 0xA0)
        return -1;
    return ((u[1] & 3) << 6) | (u[2] & 0x3F);
}

static int count_braille(const Canvas *c)
{
    int n = 0;
    for (int y = 0; y < canvas_height(c); y++)
        for (int x = 0; x < canvas_width(c); x++)
            n += braille(c, x, y) > 0;
    return n;
}

/* ---- plot ---- */

static void test_plot_ticks_and_direction(void)
{
    enum { N = 300 };
    static double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = i * 20000.0 / (N - 1);
        y[i] = 3.0 - 2.0 * sqrt((double)i / (N - 1));   /* 3.0 down to 1.0 */
    }
    ChartSeries s = {x, y, N, "train", 0, CHART_LINE};
    ChartData d = {&s, 1, "step", 0, 0, 0, 0, 0};
    Canvas *c = canvas_create(40, 12);
    chart_draw(c, (Rect){0, 0, 40, 12}, &d, &U);
    CHECK(has(c, "1.0") && has(c, "2.0") && has(c, "3.0"), "y tick labels 1.0 2.0 3.0");
    CHECK(has(c, "1.5") && has(c, "2.5"), "half steps labelled");
    CHECK(has(c, "10k") && has(c, " 0 "), "x tick labels 0, 10k");
    CHECK(has(c, "step"), "x axis label");
    CHECK(has(c, "train"), "legend");
    /* the lowest set dot of each dot column never moves up as x grows */
    int last = -1, cols_with_dots = 0, monotone = 1;
    for (int cx = 0; cx < 40; cx++) {
        for (int sub = 0; sub < 2; sub++) {
            int lowest = -1;
            for (int cy = 0; cy < 12; cy++) {
                int b = braille(c, cx, cy);
                if (b <= 0)
                    continue;
                static const int bit[2][4] = {{1, 2, 4, 64}, {8, 16, 32, 128}};
                for (int r = 0; r < 4; r++)
                    if (b & bit[sub][r])
                        lowest = cy * 4 + r;
            }
            if (lowest < 0)
                continue;
            cols_with_dots++;
            if (lowest < last)
                monotone = 0;
            last = lowest;
        }
    }
    CHECK(monotone, "decreasing series drawn going down left to right");
    CHECK(cols_with_dots >= 60, "line covers the width: %d dot columns", cols_with_dots);
    /* the top-left data point sits at the top of the plot area (y axis range 1..3) */
    CHECK(braille(c, 4, 1) > 0, "first point at the top row of the plot area");
    canvas_destroy(c);
}

static void test_plot_log_ascii_legend(void)
{
    enum { N = 100 };
    double x[N], y[N], y2[N];
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 10 * exp(-i / 10.0);    /* 10 .. 5e-4 */
        y2[i] = 5 * exp(-i / 20.0);
    }
    ChartSeries s[2] = {{x, y, N, "train", 0, CHART_LINE}, {x, y2, N, "valid", 0, CHART_POINTS}};
    ChartData d = {s, 2, "tokens", 1, 0, 0, 0, 0};
    Canvas *c = canvas_create(40, 12);
    chart_draw(c, (Rect){0, 0, 40, 12}, &d, &U);
    CHECK(has(c, "0.1┤") && has(c, " 10┤") && has(c, "  1┤") && has(c, "0.01┤"),
          "log labels at decades");
    CHECK(has(c, "train") && has(c, "valid"), "both legend entries");
    CHECK(canvas_color(c, 5, 1) != 0 || count_braille(c) > 0, "drawn");
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 40, 12}, &d, &A);
    CHECK(ascii_only(c), "ASCII mode: no byte >= 0x80");
    CHECK(has(c, "*") && has(c, "+"), "ASCII markers");
    canvas_clear(c);
    d.log_y = 0;
    chart_draw(c, (Rect){0, 0, 40, 12}, &d, &A);
    CHECK(ascii_only(c) && has(c, "train"), "ASCII linear mode");
    /* a narrow log range gets 1-2-5 ticks */
    double yn[3] = {1.2, 3.0, 7.5};
    ChartSeries sn = {NULL, yn, 3, "x", 0, CHART_LINE};
    ChartData dn = {&sn, 1, NULL, 1, 0, 0, 0, 0};
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 40, 12}, &dn, &U);
    CHECK(has(c, " 1┤") && has(c, " 2┤") && has(c, " 5┤") && has(c, "10┤"), "log 1 2 5 10");
    /* issue 33 item 14: under a decade (2.1 .. 4.6: 1-2-5 would give "2" and "5" only)
     * the ticks are linear values placed on the log scale */
    double ys[3] = {4.6, 3.1, 2.1};
    ChartSeries ss = {NULL, ys, 3, "x", 0, CHART_LINE};
    ChartData ds = {&ss, 1, NULL, 1, 0, 0, 0, 0};
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 40, 12}, &ds, &U);
    CHECK(has(c, "3┤") && has(c, "4┤"), "ticks between 2 and 5 on a narrow log axis");
    /* issue 33 item 14: a log x axis (x given as log10, the sweep chart's lr) is labelled
     * in the values themselves, never in log10 units such as -3.4 */
    double lx[4] = {log10(3e-4), log10(1e-3), log10(3e-3), log10(1e-2)}, ly[4] = {3, 2.5, 2.2, 2.4};
    ChartSeries sl = {lx, ly, 4, "trials", 0, CHART_POINTS};
    ChartData dl = {&sl, 1, "lr (log)", 0, 0, 0, 0, 1};
    Canvas *w = canvas_create(60, 12);
    chart_draw(w, (Rect){0, 0, 60, 12}, &dl, &U);
    char *dump_w = canvas_dump(w);
    CHECK(has(w, "0.001") && has(w, "0.005") && !has(w, "-3") && !has(w, "-2."),
          "log x ticks in lr's units: %s", dump_w);
    free(dump_w);
    canvas_destroy(w);
    /* monochrome: no colour pairs anywhere */
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 40, 12}, &d, &MONO);
    int coloured = 0;
    for (int yy = 0; yy < 12; yy++)
        for (int xx = 0; xx < 40; xx++)
            coloured += canvas_color(c, xx, yy) > 0 && canvas_color(c, xx, yy) < UI_COLOR_ACCENT;
    CHECK(coloured == 0, "monochrome series use attributes, not colours");
    canvas_destroy(c);
}

/* Same dump drawn from two datasets (points mode). */
static int same_drawing(const ChartData *a, const ChartData *b, int log_y)
{
    Canvas *c1 = canvas_create(30, 8), *c2 = canvas_create(30, 8);
    chart_draw(c1, (Rect){0, 0, 30, 8}, a, &U);
    chart_draw(c2, (Rect){0, 0, 30, 8}, b, &U);
    char *d1 = canvas_dump(c1), *d2 = canvas_dump(c2);
    int same = d1 && d2 && strcmp(d1, d2) == 0;
    if (!same)
        fprintf(stderr, "log_y=%d:\n%s---\n%s", log_y, d1, d2);
    free(d1);
    free(d2);
    canvas_destroy(c1);
    canvas_destroy(c2);
    return same;
}

static void test_plot_edge_cases(void)
{
    Canvas *c = canvas_create(30, 8);
    ChartSeries e = {NULL, NULL, 0, "loss", 0, CHART_LINE};
    ChartData d = {&e, 1, "step", 0, 0, 0, 0, 0};
    chart_draw(c, (Rect){0, 0, 30, 8}, &d, &U);
    CHECK(has(c, "no data yet") && has(c, "└"), "empty series: axes and message");
    d.n_series = 0;
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 30, 8}, &d, &A);
    CHECK(has(c, "no data yet") && ascii_only(c), "no series at all");
    double xo[2] = {100, 200}, yo[2] = {INFINITY, INFINITY};   /* a perplexity overflowed */
    ChartSeries inf = {xo, yo, 2, "ppl", 0, CHART_LINE};
    ChartData di = {&inf, 1, "step", 0, 0, 0, 0, 0};
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 30, 8}, &di, &A);
    CHECK(has(c, "no finite value to draw") && !has(c, "no data yet"),
          "points that are all infinite are not 'no data'");

    /* NaN/Inf are not drawn as points: the finite ones land where they would without
     * them (the x range kept the same: the last point, 5, is finite in both) */
    double x1[6] = {0, 1, 2, 3, 4, 5}, y1[6] = {1, NAN, 3, INFINITY, 2, 5};
    double x2[4] = {0, 2, 4, 5}, y2[4] = {1, 3, 2, 5};
    ChartSeries s1 = {x1, y1, 6, NULL, 0, CHART_POINTS}, s2 = {x2, y2, 4, NULL, 0, CHART_POINTS};
    ChartData d1 = {&s1, 1, NULL, 0, 0, 0, 0, 0}, d2 = {&s2, 1, NULL, 0, 0, 0, 0, 0};
    Canvas *c1 = canvas_create(30, 8), *c2 = canvas_create(30, 8);
    chart_draw(c1, (Rect){0, 0, 30, 8}, &d1, &U);
    chart_draw(c2, (Rect){0, 0, 30, 8}, &d2, &U);
    int same = 1;
    for (int y = 1; y < 8; y++)   /* every cell but the marks and the legend's note */
        for (int x = 0; x < 30; x++)
            if (strcmp(canvas_glyph(c1, x, y), "×") && strcmp(canvas_glyph(c1, x, y), "▲"))
                same &= !strcmp(canvas_glyph(c1, x, y), canvas_glyph(c2, x, y));
    CHECK(same, "NaN and Inf are not drawn as points");
    canvas_destroy(c1);
    canvas_destroy(c2);
    /* log mode: zero and negative skipped */
    double y3[6] = {1, 0, 3, -2, 2, 5};
    double x4[4] = {0, 2, 4, 5}, y4[4] = {1, 3, 2, 5};
    ChartSeries s3 = {x1, y3, 6, "a", 0, CHART_POINTS}, s4 = {x4, y4, 4, "a", 0, CHART_POINTS};
    ChartData d3 = {&s3, 1, NULL, 1, 0, 0, 0, 0}, d4 = {&s4, 1, NULL, 1, 0, 0, 0, 0};
    CHECK(same_drawing(&d3, &d4, 1), "log mode skips y <= 0");

    /* one point, all-equal values */
    double one = 2.5;
    ChartSeries so = {NULL, &one, 1, "one", 0, CHART_LINE};
    ChartData dd = {&so, 1, NULL, 0, 0, 0, 0, 0};
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 30, 8}, &dd, &U);
    CHECK(count_braille(c) == 1 && !has(c, "no data"), "one point draws one dot cell");
    double eq[50];
    for (int i = 0; i < 50; i++)
        eq[i] = 0.0;
    ChartSeries se = {NULL, eq, 50, "flat", 0, CHART_LINE};
    dd.series = &se;
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 30, 8}, &dd, &U);
    CHECK(count_braille(c) >= 10 && has(c, "0┤"), "all-equal zeros drawn with a 0 tick");

    /* snapping the range to whole steps must not waste half the height: data in
     * [1.55, 4.65] over 7 rows gets ticks 1..5, not 0..6 */
    double yr[2] = {1.55, 4.65};
    ChartSeries sr = {NULL, yr, 2, "r", 0, CHART_LINE};
    ChartData dr = {&sr, 1, NULL, 0, 0, 0, 0, 0};
    Canvas *c10 = canvas_create(46, 10);
    chart_draw(c10, (Rect){0, 0, 46, 10}, &dr, &U);
    CHECK(has(c10, "5┤") && has(c10, "1┤") && !has(c10, "6┤") && !has(c10, "0┤"),
          "y range snapped tightly");
    canvas_destroy(c10);

    /* fixed range clamps instead of failing */
    dd.fixed_y = 1;
    dd.y_lo = 1;
    dd.y_hi = 2;
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 30, 8}, &dd, &U);
    CHECK(has(c, "1.0") && has(c, "2.0"), "fixed y range ticks");
    canvas_destroy(c);
}

/* The glyph at (x, y) is g, in the error colour (and bold). */
static int mark_at(const Canvas *c, int x, int y, const char *g)
{
    return !strcmp(canvas_glyph(c, x, y), g) && canvas_color(c, x, y) == UI_COLOR_ERROR &&
           (canvas_attr(c, x, y) & UI_ATTR_BOLD);
}

/* The cell column of data x in a frame (as chart.c maps it: dots, then cells). */
static int frame_col(const ChartFrame *f, double x, int dx)
{
    double t = (x - f->xmin) / (f->xmax - f->xmin) * (f->cols * dx - 1);
    return f->x0 + (int)lround(t) / dx;
}

/* Non-finite points (a run that diverged) are marked where they are: NaN × and +inf ▲ on
 * the top row, -inf ▼ on the bottom row, at their x column, bold in the error colour;
 * the x range spans them (a divergence at the last step is at the right end, not cut
 * off); the legend row counts them; the loss and perplexity of an overflowed run share
 * their x range. */
static void test_plot_nonfinite_marked(void)
{
    double x[10], y[10];
    for (int i = 0; i < 10; i++)
        x[i] = 10.0 * (i + 1), y[i] = 3.0 - 0.1 * i;
    y[3] = NAN, y[5] = -INFINITY, y[9] = INFINITY;   /* steps 40, 60 and the last, 100 */
    ChartSeries s = {x, y, 10, "loss", 0, CHART_LINE};
    ChartData d = {&s, 1, "step", 0, 0, 0, 0, 0};
    Canvas *c = canvas_create(80, 12);
    ChartFrame f;
    chart_draw_framed(c, (Rect){0, 0, 80, 12}, &d, NULL, &U, &f);
    CHECK(f.valid && f.xmin == 10 && f.xmax == 100,
          "x range spans the non-finite points: [%g, %g]", f.xmin, f.xmax);
    int top = f.y0, bottom = f.y0 + f.rows - 1;
    CHECK(mark_at(c, frame_col(&f, 40, 2), top, "×"), "NaN at step 40 marked on the top row");
    CHECK(mark_at(c, frame_col(&f, 100, 2), top, "▲") && frame_col(&f, 100, 2) == f.x0 + f.cols - 1,
          "+inf at the last step marked in the last column");
    CHECK(mark_at(c, frame_col(&f, 60, 2), bottom, "▼"), "-inf at step 60 on the bottom row");
    int marks = 0;
    for (int yy = 0; yy < 12; yy++)
        for (int xx = 0; xx < 80; xx++)
            marks += canvas_color(c, xx, yy) == UI_COLOR_ERROR && strlen(canvas_glyph(c, xx, yy)) > 1;
    CHECK(marks == 3 + 3, "three marks and the note's three glyphs, no more: %d", marks);
    CHECK(has(c, "3 non-finite points marked: 1 nan ×, 1 +inf ▲, 1 -inf ▼") && has(c, "loss"),
          "the legend row counts them and keeps the label");
    /* narrow: the short note, and ASCII marks */
    Canvas *n = canvas_create(30, 8);
    chart_draw(n, (Rect){0, 0, 30, 8}, &d, &U);
    CHECK(has(n, "3 nan/inf ×▲▼"), "a narrow chart's note is short");
    canvas_destroy(n);
    canvas_clear(c);
    chart_draw_framed(c, (Rect){0, 0, 80, 12}, &d, NULL, &A, &f);
    CHECK(ascii_only(c) && !strcmp(canvas_glyph(c, frame_col(&f, 40, 1), f.y0), "!") &&
          !strcmp(canvas_glyph(c, frame_col(&f, 100, 1), f.y0), "^") &&
          !strcmp(canvas_glyph(c, frame_col(&f, 60, 1), f.y0 + f.rows - 1), "v") &&
          has(c, "1 nan !, 1 +inf ^, 1 -inf v"), "ASCII marks ! ^ v");
    /* every point non-finite: still "no finite value to draw", over the points' steps */
    double xo[2] = {100, 200}, yo[2] = {INFINITY, INFINITY};
    ChartSeries inf = {xo, yo, 2, "ppl", 0, CHART_LINE};
    ChartData di = {&inf, 1, "step", 0, 0, 0, 0, 0};
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 80, 12}, &di, &U);
    char buf[512];
    CHECK(has(c, "no finite value to draw") && has(c, "2 +inf points marked ▲") &&
          strstr(row(c, 11, buf, sizeof buf), "200") && !strstr(buf, "0.5"),
          "all infinite: marked, and the x axis shows their steps: %s", buf);
    /* an overflowed run: val loss 1528 at the last evaluation, so ppl = exp(loss) = inf;
     * the loss pane and the perplexity pane of the same steps share the x range */
    double xs[20], loss[20], ppl[20];
    for (int i = 0; i < 20; i++) {
        xs[i] = 10.0 * (i + 1);
        loss[i] = i < 10 ? 4.0 - 0.2 * i : 1528;
        ppl[i] = exp(loss[i]);
    }
    ChartSeries sl = {xs, loss, 20, "val", 0, CHART_LINE}, sp = {xs, ppl, 20, "val", 0, CHART_LINE};
    ChartData dl = {&sl, 1, "step", 0, 0, 0, 0, 0}, dp = {&sp, 1, "step", 0, 0, 0, 0, 0};
    ChartFrame fl, fp;
    canvas_clear(c);
    chart_draw_framed(c, (Rect){0, 0, 80, 12}, &dl, NULL, &U, &fl);
    canvas_clear(c);
    chart_draw_framed(c, (Rect){0, 0, 80, 12}, &dp, NULL, &U, &fp);
    CHECK(fl.valid && fp.valid && fl.xmin == fp.xmin && fl.xmax == fp.xmax && fp.xmax == 200,
          "loss and perplexity panes: x [%g, %g] and [%g, %g]", fl.xmin, fl.xmax, fp.xmin,
          fp.xmax);
    CHECK(has(c, "10 +inf points marked ▲"), "the overflowed perplexities are counted");
    canvas_destroy(c);
}

static void test_plot_huge_and_sizes(void)
{
    long n = 2000000;
    double *y = malloc((size_t)n * sizeof *y);
    for (long i = 0; i < n; i++)
        y[i] = 5.0 / (1.0 + i * 1e-4) + 0.1 * sin((double)i);
    ChartSeries s = {NULL, y, n, "big", 0, CHART_LINE};
    ChartData d = {&s, 1, "step", 0, 0, 0, 0, 0};
    Canvas *c = canvas_create(80, 24);
    clock_t t0 = clock();
    chart_draw(c, (Rect){0, 0, 80, 24}, &d, &U);
    double sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("  plot of %ld points: %.1f ms\n", n, sec * 1e3);
    CHECK(sec < 1.0, "2M points drawn in under 1 s (O(n)): %.3f s", sec);
    CHECK(count_braille(c) > 50 && has(c, "0.5M") && has(c, "1.0M"),
          "huge series drawn, 0.5M 1.0M ticks");
    free(y);
    /* degenerate sizes draw nothing and do not crash; small ones draw something */
    double yy[3] = {1, 2, 3};
    ChartSeries s3 = {NULL, yy, 3, "t", 0, CHART_LINE};
    ChartData d3 = {&s3, 1, "step", 0, 0, 0, 0, 0};
    int quiet = 1;
    for (int w = 0; w <= 4; w++) {
        for (int h = 0; h <= 4; h++) {
            canvas_clear(c);
            chart_draw(c, (Rect){1, 1, w, h}, &d3, &U);
            if (w <= 2 || h <= 2)
                quiet &= blank(c);
        }
    }
    CHECK(quiet, "w or h <= 2: nothing drawn");
    canvas_clear(c);
    chart_draw(c, (Rect){70, 20, 30, 8}, &d3, &U);   /* mostly off-canvas */
    canvas_clear(c);
    chart_draw(c, (Rect){0, 0, 30, 8}, &d3, &U);
    CHECK(count_braille(c) > 0 && has(c, "train") == 0 && has(c, "t "), "30x8 plot drawn");
    canvas_destroy(c);
}

static void test_plot_format(void)
{
    char b[16];
    chart_format_tick(b, sizeof b, 2.5, 0.5);
    CHECK(strcmp(b, "2.5") == 0, "2.5: %s", b);
    chart_format_tick(b, sizeof b, 2.0, 0.5);
    CHECK(strcmp(b, "2.0") == 0, "2.0: %s", b);
    chart_format_tick(b, sizeof b, 20000, 5000);
    CHECK(strcmp(b, "20k") == 0, "20k: %s", b);
    chart_format_tick(b, sizeof b, 5000, 5000);
    CHECK(strcmp(b, "5k") == 0, "5k: %s", b);
    chart_format_tick(b, sizeof b, 1.5e6, 5e5);
    CHECK(strcmp(b, "1.5M") == 0, "1.5M: %s", b);
    chart_format_tick(b, sizeof b, 0.05, 0.05);
    CHECK(strcmp(b, "0.05") == 0, "0.05: %s", b);
    chart_format_tick(b, sizeof b, 400, 200);
    CHECK(strcmp(b, "400") == 0, "400: %s", b);
    chart_format_tick(b, sizeof b, 3e9, 1e9);
    CHECK(strcmp(b, "3G") == 0, "3G: %s", b);
    chart_format_tick(b, sizeof b, 6e11, 2e11);   /* a diverging loss: no 600000000000G */
    CHECK(strcmp(b, "6e+11") == 0, "6e+11: %s", b);
    chart_format_tick(b, sizeof b, 1e15, 1e14);
    CHECK(strcmp(b, "1e+15") == 0, "1e+15: %s", b);
}

/* ---- heatmap, histogram ---- */

static void test_heatmap(void)
{
    float v[6] = {0.0f, 0.5f, 1.0f, NAN, 0.25f, 0.75f};
    HeatmapData d = {"gates", v, 2, 3, NULL, NULL, 1, 2};
    Canvas *c = canvas_create(40, 6);
    heatmap_draw(c, (Rect){0, 0, 40, 6}, &d, &U);
    /* label column "L0 " = 3, cells 8 wide, rows start under title + column labels */
    CHECK(strcmp(canvas_glyph(c, 3 + 2 * 8, 2), "█") == 0, "1.0 is the darkest shade");
    CHECK(strcmp(canvas_glyph(c, 3, 2), " ") == 0, "0.0 is the lightest shade");
    CHECK(strcmp(canvas_glyph(c, 3 + 8, 2), "▒") == 0, "0.5 is the middle shade");
    CHECK(canvas_attr(c, 3 + 2 * 8, 3) & UI_ATTR_REVERSE, "cursor cell reverse");
    CHECK(!(canvas_attr(c, 3 + 2 * 8, 2) & UI_ATTR_REVERSE), "other cells not reverse");
    CHECK(canvas_color(c, 3 + 2 * 8, 2) == UI_COLOR_HEAT4 &&
              canvas_color(c, 3 + 8, 3) == UI_COLOR_HEAT1, "colour ramp");
    CHECK(has(c, "gates") && has(c, "L0") && has(c, "L1"), "title and row labels");
    CHECK(has(c, "1       2       4"), "column labels 1 2 4");
    CHECK(has(c, "0.50") && has(c, "0.75") && has(c, "--"), "values printed, NaN as --");
    canvas_clear(c);
    heatmap_draw(c, (Rect){0, 0, 40, 6}, &d, &A);
    CHECK(ascii_only(c), "ASCII heatmap");
    CHECK(strcmp(canvas_glyph(c, 3 + 2 * 8, 2), "@") == 0 &&
              strcmp(canvas_glyph(c, 3, 2), " ") == 0, "ASCII ramp ends");

    /* 8 levels in 3-column cells: "128" does not fit, so every other level is
     * labelled and no label is cut ("12") */
    float g[3 * 8] = {0};
    HeatmapData dg = {NULL, g, 3, 8, NULL, NULL, 0, 0};
    canvas_clear(c);
    heatmap_draw(c, (Rect){0, 0, 30, 5}, &dg, &U);
    CHECK(has(c, "1     4     16    64") && !has(c, "12"), "level labels never cut");

    /* narrow: 9 levels in 12 columns shrink; cursor stays visible when scrolled */
    float big[4 * 12];
    for (int i = 0; i < 48; i++)
        big[i] = (float)(i % 12) / 11.0f;
    HeatmapData b = {NULL, big, 4, 12, NULL, NULL, 3, 11};
    canvas_clear(c);
    heatmap_draw(c, (Rect){0, 0, 10, 3}, &b, &U);
    int rev = 0;
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 10; x++)
            rev += (canvas_attr(c, x, y) & UI_ATTR_REVERSE) != 0;
    CHECK(rev == 1 && has(c, "L3"), "cursor visible after scrolling (%d reverse cells)", rev);
    int quiet = 1;
    for (int w = 0; w <= 2; w++)
        for (int h = 0; h <= 6; h++) {
            canvas_clear(c);
            heatmap_draw(c, (Rect){0, 0, w, h}, &d, &U);
            heatmap_draw(c, (Rect){0, 0, h, w}, &d, &U);
            quiet &= blank(c);
        }
    CHECK(quiet, "heatmap: degenerate sizes draw nothing");
    canvas_destroy(c);
}

static void test_histogram(void)
{
    int counts[10] = {0, 1, 2, 4, 8, 4, 2, 1, 0, 0};
    HistogramData d = {"L1 lvl 2", counts, 10, 0.0, 1.0, 0};
    Canvas *c = canvas_create(30, 8);
    histogram_draw(c, (Rect){0, 0, 30, 8}, &d, &U);
    /* 3 columns per bin, bars 2 wide; rows 1..6 are bars, row 7 edges */
    CHECK(strcmp(canvas_glyph(c, 12, 1), "█") == 0 && strcmp(canvas_glyph(c, 12, 6), "█") == 0,
          "largest bin is a full bar");
    CHECK(strcmp(canvas_glyph(c, 0, 6), " ") == 0, "empty bin has no bar");
    CHECK(strcmp(canvas_glyph(c, 9, 4), "█") == 0 && strcmp(canvas_glyph(c, 9, 3), " ") == 0,
          "half bin is half height");
    CHECK(strcmp(canvas_glyph(c, 3, 6), "▆") == 0, "count 1 of 8 is 6/8 of a row");
    CHECK(has(c, "n=22") && has(c, "max=8") && has(c, "L1 lvl 2"), "title line");
    char buf[256];
    row(c, 7, buf, sizeof buf);
    CHECK(strncmp(buf, "0  0.1", 6) == 0 && buf[strlen(buf) - 1] == '1', "edges: '%s'", buf);
    canvas_clear(c);
    histogram_draw(c, (Rect){0, 0, 30, 8}, &d, &A);
    CHECK(ascii_only(c) && has(c, "#"), "ASCII bars");
    canvas_clear(c);
    histogram_draw(c, (Rect){0, 0, 2, 8}, &d, &U);
    histogram_draw(c, (Rect){0, 0, 8, 2}, &d, &U);
    CHECK(blank(c), "histogram: degenerate sizes draw nothing");
    histogram_draw(c, (Rect){0, 0, 5, 3}, &d, &U);   /* fewer columns than bins */
    canvas_destroy(c);
    /* issue 27: a narrow heading drops whole parts, never cuts a number ("n=756…") */
    int many[10] = {0, 100, 200, 156, 300, 0, 0, 0, 0, 0};
    HistogramData dm = {"L1 lvl 2", many, 10, 0.0, 1.0, 0};
    for (int w = 10; w <= 30; w++) {
        c = canvas_create(w, 8);
        histogram_draw(c, (Rect){0, 0, w, 8}, &dm, &U);
        char line[256];
        row(c, 0, line, sizeof line);
        const char *n = strstr(line, "n=");
        CHECK(n && !strncmp(n, "n=756", 5) && (n[5] == ' ' || n[5] == 0),
              "width %d: the heading '%s' cuts n=756", w, line);
        const char *m = strstr(line, "max=");
        CHECK(!m || !strncmp(m, "max=300", 7), "width %d: max cut in '%s'", w, line);
        canvas_destroy(c);
    }
}

/* ---- table ---- */

static void test_table(void)
{
    enum { R = 50 };
    static char cell[R][3][32];
    static const char *cells[R * 3];
    for (int i = 0; i < R; i++) {
        snprintf(cell[i][0], 32, "row%d", i);
        snprintf(cell[i][1], 32, "%.3f", 1.0 + i / 100.0);
        snprintf(cell[i][2], 32, i == 3 ? "a very long run name indeed" : "name%d", i);
        for (int j = 0; j < 3; j++)
            cells[i * 3 + j] = cell[i][j];
    }
    TableColumn cols[3] = {{"id", 6, TABLE_LEFT}, {"loss", 6, TABLE_RIGHT},
                           {"name", 0, TABLE_LEFT}};
    unsigned char marked[R] = {0};
    marked[41] = 1;
    TableData d = {cols, 3, cells, R, 40, marked, UI_COLOR_WARN, 1, 1, 0};
    Canvas *c = canvas_create(30, 10);
    int s = table_draw(c, (Rect){0, 0, 30, 10}, &d, &U);
    CHECK(s == 32, "scrolled so the selection is the last visible row: %d", s);
    CHECK(has(c, "row40") && has(c, "row32") && !has(c, "row31") && !has(c, "row41"),
          "rows 32..40 visible");
    CHECK(canvas_attr(c, 3, 9) & UI_ATTR_REVERSE, "selected row reverse");
    CHECK(has(c, "loss ▼"), "sort indicator on loss (descending)");
    d.selected = 41;
    d.scroll = s;
    s = table_draw(c, (Rect){0, 0, 30, 10}, &d, &U);
    CHECK(s == 33, "moving down one scrolls one: %d", s);
    CHECK(strcmp(canvas_glyph(c, 0, 9), "*") == 0 && canvas_color(c, 3, 9) == UI_COLOR_WARN,
          "marked row: '*' and colour");
    d.selected = 35;
    d.scroll = s;
    canvas_clear(c);
    CHECK(table_draw(c, (Rect){0, 0, 30, 10}, &d, &U) == 33, "visible selection: no scroll");
    d.selected = 2;
    d.sort_desc = 0;
    canvas_clear(c);
    s = table_draw(c, (Rect){0, 0, 30, 10}, &d, &U);
    CHECK(s == 2 && has(c, "a very long r…") && has(c, "loss ▲"),
          "truncation and ascending sort");
    d.scroll = s;
    canvas_clear(c);
    table_draw(c, (Rect){0, 0, 30, 10}, &d, &A);
    CHECK(ascii_only(c) && has(c, "a very long r~") && has(c, "loss ^"), "ASCII table");
    CHECK(table_page_rows((Rect){0, 0, 30, 10}) == 9, "page rows");
    canvas_clear(c);
    d.selected = -1;
    d.scroll = 1000;
    CHECK(table_draw(c, (Rect){0, 0, 30, 10}, &d, &U) == R - 9, "scroll clamped to the end");
    canvas_clear(c);
    d.scroll = 0;
    CHECK(table_draw(c, (Rect){0, 0, 1, 10}, &d, &U) == 0, "degenerate width");
    table_draw(c, (Rect){0, 0, 30, 1}, &d, &U);
    CHECK(blank(c), "table: degenerate sizes draw nothing");
    canvas_destroy(c);
    /* issue 33 item 14: a flexible name column is as wide as its widest name, not the
     * whole remaining width (names 70-110 columns wide on a wide screen) */
    static const char *short_cells[] = {"1", "alpha", "ok", "2", "beta", "ok"};
    TableColumn sc[3] = {{"id", 3, TABLE_RIGHT}, {"name", 0, TABLE_LEFT},
                         {"state", 8, TABLE_LEFT}};
    TableData sd = {sc, 3, short_cells, 2, -1, NULL, 0, -1, 0, 0};
    c = canvas_create(200, 5);
    table_draw(c, (Rect){0, 0, 200, 5}, &sd, &U);
    int state_x = -1;
    for (int x = 0; x < 200 && state_x < 0; x++)
        if (!strcmp(canvas_glyph(c, x, 0), "s") && !strcmp(canvas_glyph(c, x + 1, 0), "t"))
            state_x = x;
    CHECK(state_x > 0 && state_x < 20, "the state column starts at %d, right after the names",
          state_x);
    canvas_destroy(c);
}

/* ---- text pane ---- */

static void test_textpane_append(void)
{
    TextPane *p = textpane_create(100);
    textpane_append(p, "hel", -1, 0, 0);
    textpane_append(p, "lo wo", -1, 0, 0);
    textpane_append(p, "rld\nsecond", -1, 0, 0);
    CHECK(textpane_line_count(p) == 2, "two lines");
    CHECK(strcmp(textpane_line(p, 0), "hello world") == 0, "partial appends joined");
    CHECK(strcmp(textpane_line(p, 1), "second") == 0, "unfinished line kept");
    textpane_newline_if_needed(p);
    textpane_newline_if_needed(p);
    textpane_append(p, "caf\xC3", -1, 0, 0);
    CHECK(strcmp(textpane_line(p, 2), "caf") == 0, "split sequence held back");
    textpane_append(p, "\xA9 \xE2", -1, 0, 0);
    textpane_append(p, "\x82", -1, 0, 0);
    textpane_append(p, "\xAC \xF0\x9F", -1, 0, 0);
    textpane_append(p, "\x98\x80\n", -1, 0, 0);
    CHECK(strcmp(textpane_line(p, 2), "café € \xF0\x9F\x98\x80") == 0, "UTF-8 reassembled: '%s'",
          textpane_line(p, 2));
    textpane_append(p, "\xC3" "A\xFFz\tq\r\n", -1, 0, 0);
    CHECK(strcmp(textpane_line(p, 3), "?A?z    q") == 0, "broken sequences, tab, CR: '%s'",
          textpane_line(p, 3));
    CHECK(textpane_line_count(p) == 4 && textpane_line(p, 4) == NULL, "count after newline");
    textpane_destroy(p);
}

/* Issue 21: a line of double-width glyphs in the output pane wraps by display width:
 * nothing is cut at the right edge and no glyph is lost. */
static void test_textpane_wide(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "C.utf8"))
        return;
    TextPane *p = textpane_create(10);
    /* 6 CJK glyphs (12 columns) then "ab": in 10 columns, 5 glyphs then 1 glyph + "ab" */
    textpane_append(p, "一二三四五六ab\n", -1, 0, 0);
    Canvas *c = canvas_create(10, 2);
    textpane_draw(c, (Rect){0, 0, 10, 2}, p, &U);
    char *d = canvas_dump(c);
    CHECK(d && strcmp(d, "一二三四五\n六ab      \n") == 0, "wide glyphs wrap by width:\n%s",
          d ? d : "");
    free(d);
    canvas_destroy(c);
    textpane_destroy(p);
    setlocale(LC_ALL, "C");
}

static void test_textpane_wrap_scroll(void)
{
    /* wrap */
    TextPane *p;
    p = textpane_create(10);
    textpane_append(p, "the quick brown fox jumps\nabcdefghijklmno", -1, 0, 0);
    textpane_append(p, "\nerr", -1, UI_COLOR_ERROR, UI_ATTR_BOLD);
    Canvas *c = canvas_create(10, 7);
    textpane_draw(c, (Rect){0, 0, 10, 7}, p, &U);
    char *d = canvas_dump(c);
    /* 6 rows of text in 7: bottom-anchored, so one blank row on top */
    const char *want_top = "          \nthe quick \nbrown fox \njumps     \nabcdefghij\n"
                           "klmno     \nerr       \n";
    CHECK(d && strcmp(d, want_top) == 0, "word wrap, bottom-anchored:\n%s", d ? d : "");
    free(d);
    CHECK(canvas_color(c, 0, 6) == UI_COLOR_ERROR && canvas_attr(c, 0, 6) == UI_ATTR_BOLD,
          "chunk colour kept");
    textpane_destroy(p);

    /* cap and scrolling */
    p = textpane_create(20);
    char line[32];
    for (int i = 0; i < 30; i++) {
        snprintf(line, sizeof line, "line%d\n", i);
        textpane_append(p, line, -1, 0, 0);
    }
    CHECK(textpane_line_count(p) == 20 && strcmp(textpane_line(p, 0), "line10") == 0,
          "cap: oldest dropped");
    canvas_clear(c);
    textpane_draw(c, (Rect){0, 0, 10, 5}, p, &U);
    char buf[64];
    CHECK(strncmp(row(c, 4, buf, sizeof buf), "line29", 6) == 0, "follows the end");
    textpane_scroll(p, 3);
    canvas_clear(c);
    textpane_draw(c, (Rect){0, 0, 10, 5}, p, &U);
    CHECK(strncmp(row(c, 4, buf, sizeof buf), "line26", 6) == 0, "scrolled back 3: %s", buf);
    CHECK(strcmp(canvas_glyph(c, 9, 4), "↓") == 0, "scrolled-back marker");
    textpane_append(p, "new1\nnew2\n", -1, 0, 0);
    canvas_clear(c);
    textpane_draw(c, (Rect){0, 0, 10, 5}, p, &U);
    CHECK(strncmp(row(c, 4, buf, sizeof buf), "line26", 6) == 0, "view stays while scrolled: %s",
          buf);
    textpane_page(p, 100);
    canvas_clear(c);
    textpane_draw(c, (Rect){0, 0, 10, 5}, p, &U);
    CHECK(strncmp(row(c, 0, buf, sizeof buf), "line12", 6) == 0 && textpane_offset(p) == 15,
          "paging clamps at the oldest line: %s offset %d", buf, textpane_offset(p));
    textpane_scroll_end(p);
    canvas_clear(c);
    textpane_draw(c, (Rect){0, 0, 10, 5}, p, &A);
    CHECK(strncmp(row(c, 4, buf, sizeof buf), "new2", 4) == 0, "back to the end: %s", buf);
    canvas_clear(c);
    textpane_draw(c, (Rect){0, 0, 0, 5}, p, &U);
    textpane_draw(c, (Rect){0, 0, 5, 0}, p, &U);
    CHECK(blank(c), "textpane: degenerate sizes draw nothing");
    textpane_draw(c, (Rect){0, 0, 1, 2}, p, &U);   /* width 1: no crash */
    textpane_clear(p);
    CHECK(textpane_line_count(p) == 0, "clear");
    textpane_destroy(p);
    textpane_destroy(NULL);
    canvas_destroy(c);
}

/* ---- status bar ---- */

static void test_statusbar(void)
{
    StatusField f[] = {
        {"step", "12000/50000", 10, 0, 0},
        {"loss", "2.3456", 9, UI_COLOR_SERIES1, 0},
        {"val", "2.4567", 8, UI_COLOR_SERIES2, 0},
        {"lr", "3.0e-04", 3, 0, 0},
        {"tok/s", "41.2k", 6, 0, 0},
        {"eta", "00:12:34", 5, 0, 0},
        {"mem", "412 MB", 1, 0, 0},
        {"run", "dispatcher-wt103-seed7", 2, 0, 0},
        {NULL, "F1 help", 7, UI_COLOR_DIM, 1},
    };
    StatusBarData d = {STATUSBAR_TRAINING, NULL, f, 9};
    Canvas *c = canvas_create(200, 2);
    CHECK(statusbar_draw(c, (Rect){0, 0, 200, 2}, &d, &U) == 9, "all fields at 200 columns");
    CHECK(has(c, "mem 412 MB") && has(c, "run dispatcher") && has(c, "TRAINING"), "all shown");
    CHECK(canvas_color(c, 1, 0) == UI_COLOR_OK && (canvas_attr(c, 1, 0) & UI_ATTR_REVERSE),
          "training badge green");
    char buf[512];
    CHECK(strstr(row(c, 0, buf, sizeof buf), "F1 help") == buf + 200 - 7, "right field at end");
    canvas_destroy(c);
    c = canvas_create(80, 2);
    int shown = statusbar_draw(c, (Rect){0, 0, 80, 2}, &d, &U);
    CHECK(shown < 9 && shown >= 5, "fields dropped at 80 columns: %d shown", shown);
    CHECK(!has(c, "mem") && !has(c, "dispatcher-wt103"), "lowest priorities dropped");
    CHECK(has(c, "step 12000/50000") && has(c, "loss 2.3456") && has(c, "val 2.4567"),
          "highest priorities kept whole");
    CHECK(has(c, "F1 help") && !has(c, "eta"), "right field kept (priority 7), eta (5) dropped");
    CHECK(strcmp(row(c, 1, buf, sizeof buf), "") != 0 && blank(c) == 0, "drawn");
    int second_row_blank = 1;
    for (int x = 0; x < 80; x++)
        second_row_blank &= strcmp(canvas_glyph(c, x, 1), " ") == 0;
    CHECK(second_row_blank, "never wraps to a second row");
    canvas_clear(c);
    d.state = STATUSBAR_DIVERGED;
    statusbar_draw(c, (Rect){0, 0, 80, 1}, &d, &A);
    CHECK(has(c, "DIVERGED") && canvas_color(c, 1, 0) == UI_COLOR_ERROR && ascii_only(c),
          "diverged badge red");
    CHECK(statusbar_state_color(STATUSBAR_PAUSED) == UI_COLOR_WARN &&
              statusbar_state_color(STATUSBAR_FINISHED) == UI_COLOR_ACCENT, "state colours");
    canvas_clear(c);
    CHECK(statusbar_draw(c, (Rect){0, 0, 6, 1}, &d, &U) == 0, "tiny: badge only");
    canvas_clear(c);
    statusbar_draw(c, (Rect){0, 0, 0, 1}, &d, &U);
    statusbar_draw(c, (Rect){0, 0, 10, 0}, &d, &U);
    CHECK(blank(c), "statusbar: degenerate sizes draw nothing");
    canvas_destroy(c);
}

int main(void)
{
    test_plot_ticks_and_direction();
    test_plot_log_ascii_legend();
    test_plot_edge_cases();
    test_plot_nonfinite_marked();
    test_plot_huge_and_sizes();
    test_plot_format();
    test_heatmap();
    test_histogram();
    test_table();
    test_textpane_append();
    test_textpane_wrap_scroll();
    test_textpane_wide();
    test_statusbar();
    return check_summary();
}
