/* test_plot.c — the figures' curves stay apart (issue 49 item 11): ten curves into an SVG
 * give ten different line styles (the palette has eight colours: #3 and #9 of a report
 * shared one), and the legend covers no curve, wherever the curves run. Reads cairo's SVG
 * output: each curve is a path of stroke-width 1.6, the legend box the path of
 * fill-opacity 0.9. A diverged curve's NaN and infinite points are marked where they are
 * (a cross of stroke-width 1.5, filled triangles), in the line charts and the grid. */
#include "check.h"
#include "err.h"
#include "plot.h"
#include "plot_canvas.h"

#include <cairo.h>
#include <math.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* The points of a path's d="M x y L x y ..." (at most cap) into xy; their count. */
static int path_points(const char *d, double *xy, int cap)
{
    int n = 0;
    for (const char *p = d; *p && *p != '"' && n < cap;) {
        if (*p == 'M' || *p == 'L') {
            double x, y;
            int used;
            if (sscanf(p + 1, " %lf %lf%n", &x, &y, &used) == 2) {
                xy[2 * n] = x, xy[2 * n + 1] = y, n++;
                p += 1 + used;
                continue;
            }
        }
        p++;
    }
    return n;
}

/* Checks one figure of ten curves through ys(k, i): distinct styles, legend over none. */
static void check_figure(const char *path, double (*ys)(int k, int i), const char *what)
{
    enum { K = 10, N = 30 };
    double x[N], y[K][N];
    char lab[K][32], err[LM_ERR_LEN];
    PlotSeries s[K];
    for (int i = 0; i < N; i++) x[i] = i * 10;
    for (int k = 0; k < K; k++) {
        for (int i = 0; i < N; i++) y[k][i] = ys(k, i);
        snprintf(lab[k], sizeof lab[k], "#%d run-%d", k + 1, k + 1);
        s[k] = (PlotSeries){lab[k], x, y[k], N, NULL, NULL, NULL};
    }
    PlotAxes ax = {what, "step", "loss"};
    CHECK(plot_curves(path, s, K, &ax, err) == LM_OK, "%s: %s", what, err);
    char *svg = slurp(path);
    CHECK(svg != NULL, "read %s", path);
    if (!svg) return;
    char style[K][200];
    double pts[K][2 * 64];
    int np[K], nc = 0;
    double box[4] = {0};
    int have_box = 0;
    for (char *p = strstr(svg, "<path"); p; p = strstr(p + 5, "<path")) {
        char *st = strstr(p, "style=\""), *d = strstr(p, " d=\""), *end = strchr(p, '>');
        if (!st || !d || !end || st > end || d > end) continue;
        if (strstr(st, "stroke-width:1.6;") && strstr(st, "stroke-width:1.6;") < d && nc < K) {
            char *a = strstr(st, "stroke:"), *b = strstr(st, "stroke-miterlimit");
            snprintf(style[nc], sizeof style[nc], "%.*s", a && b && b > a ? (int)(b - a) : 0,
                     a ? a : "");
            np[nc] = path_points(d + 4, pts[nc], 64);
            nc++;
        } else if (strstr(st, "fill-opacity:0.9") && strstr(st, "fill-opacity:0.9") < d) {
            double b4[2 * 8];
            int n = path_points(d + 4, b4, 8);
            if (n >= 4) {
                box[0] = box[2] = b4[0], box[1] = box[3] = b4[1];
                for (int i = 1; i < n; i++) {
                    if (b4[2 * i] < box[0]) box[0] = b4[2 * i];
                    if (b4[2 * i] > box[2]) box[2] = b4[2 * i];
                    if (b4[2 * i + 1] < box[1]) box[1] = b4[2 * i + 1];
                    if (b4[2 * i + 1] > box[3]) box[3] = b4[2 * i + 1];
                }
                have_box = 1;
            }
        }
    }
    CHECK(nc == K && have_box, "%s: %d curves and %s legend found", what, nc,
          have_box ? "a" : "no");
    for (int a = 0; a < nc; a++)
        for (int b = a + 1; b < nc; b++)
            CHECK(strcmp(style[a], style[b]), "%s: curves %d and %d look alike: %s", what,
                  a + 1, b + 1, style[a]);
    long under = 0;
    for (int k = 0; k < nc; k++)
        for (int i = 0; i + 1 < np[k]; i++)
            for (int j = 0; j <= 16; j++) {   /* along each segment */
                double t = j / 16.0;
                double px = pts[k][2 * i] + t * (pts[k][2 * i + 2] - pts[k][2 * i]);
                double py = pts[k][2 * i + 1] + t * (pts[k][2 * i + 3] - pts[k][2 * i + 1]);
                under += px > box[0] && px < box[2] && py > box[1] && py < box[3];
            }
    CHECK(under == 0, "%s: the legend (%.0f,%.0f)-(%.0f,%.0f) covers %ld points of curves",
          what, box[0], box[1], box[2], box[3], under);
    free(svg);
}

/* curves falling from the top left: the top right corner is free */
static double falling(int k, int i) { return 3.0 + 0.1 * k - 2.0 * i / 29.0; }
/* curves rising into the top right corner and spread over the whole height */
static double rising(int k, int i) { return 1.0 + 0.2 * k + 2.0 * i / 29.0; }
/* flat curves over the whole height, every corner taken */
static double flat(int k, int i) { return (double)k + 0.01 * (i % 3); }

/* The marks in svg: crosses (stroked, width 1.5: centre x into cx) and triangles (filled,
 * three points and a Z; glyphs are filled paths with no colour of their own: tip x into tx, tip y into ty, +1 pointing up or -1 down into dir). */
static void find_marks(const char *svg, double *cx, int *ncx, double *tx, double *ty, int *dir,
                       int *nt)
{
    *ncx = *nt = 0;
    for (const char *p = strstr(svg, "<path"); p; p = strstr(p + 5, "<path")) {
        const char *st = strstr(p, "style=\""), *d = strstr(p, " d=\""), *end = strchr(p, '>');
        if (!st || !d || !end || st > end || d > end) continue;
        double xy[2 * 8];
        int n = path_points(d + 4, xy, 8);
        const char *w15 = strstr(st, "stroke-width:1.5;");
        if (w15 && w15 < d && n == 4 && *ncx < 16) {
            cx[(*ncx)++] = (xy[0] + xy[2]) / 2;
        } else if (strstr(st, "fill:rgb") && strstr(st, "fill:rgb") < d && n == 4 &&
                   strchr(d + 4, 'Z') && strchr(d + 4, 'Z') < end && *nt < 16) {
            double base = (xy[3] + xy[5]) / 2;
            tx[*nt] = xy[0], ty[*nt] = xy[1], dir[*nt] = xy[1] < base ? 1 : -1;
            (*nt)++;
        }
    }
}

/* Steps 10..100 with a NaN at 40, -inf at 60 and +inf at the last step, 100: a cross over
 * step 40, a triangle up over 100 and one down under 60, where the curve's own mapping of
 * steps puts them (the x range reaches step 100); a curve of infinite values is drawn
 * (its marks), not refused; the grid marks a NaN at its last step at the panel's right edge. */
static void check_nonfinite(const char *dir_path)
{
    enum { N = 10 };
    double x[N], y[N], cx[16], tx[16], ty[16];
    int dir[16], ncx, nt;
    char path[160], err[LM_ERR_LEN];
    for (int i = 0; i < N; i++) x[i] = 10.0 * (i + 1), y[i] = 3.0 - 0.1 * i;
    y[3] = NAN, y[5] = -INFINITY, y[9] = INFINITY;
    PlotSeries s = {"#1 diverged", x, y, N, NULL, NULL, NULL};
    PlotAxes ax = {"diverged", "step", "loss"};
    snprintf(path, sizeof path, "%s/nonfinite.svg", dir_path);
    CHECK(plot_curves(path, &s, 1, &ax, err) == LM_OK, "nonfinite: %s", err);
    char *svg = slurp(path);
    CHECK(svg != NULL, "read %s", path);
    if (!svg) return;
    double pts[2 * 16] = {0};
    int np = 0;
    for (char *p = strstr(svg, "<path"); p && !np; p = strstr(p + 5, "<path")) {
        char *st = strstr(p, "style=\""), *d = strstr(p, " d=\""), *end = strchr(p, '>');
        if (st && d && end && d < end && strstr(st, "stroke-width:1.6;") &&
            strstr(st, "stroke-width:1.6;") < d)
            np = path_points(d + 4, pts, 16);
    }
    /* 10 20 30 | 50 | 70 80 90: cairo leaves out the lone 50 (a move without a line) */
    CHECK(np == 6, "the curve's finite points: %d of 6", np);
    double at10 = pts[0], per = np > 1 ? (pts[2] - pts[0]) / 10 : 0, ymin = 1e9, ymax = -1e9;
    for (int i = 0; i < np; i++) ymin = fmin(ymin, pts[2 * i + 1]), ymax = fmax(ymax, pts[2 * i + 1]);
    find_marks(svg, cx, &ncx, tx, ty, dir, &nt);
    CHECK(ncx == 1 && fabs(cx[0] - (at10 + 30 * per)) < 0.5, "NaN at step 40: a cross at %.1f "
          "(want %.1f), %d crosses", ncx ? cx[0] : -1, at10 + 30 * per, ncx);
    int up = -1, down = -1;
    for (int i = 0; i < nt; i++) {
        if (dir[i] > 0) up = i;
        else down = i;
    }
    CHECK(nt == 2 && up >= 0 && down >= 0, "two triangles, one up and one down: %d", nt);
    if (up >= 0)
        CHECK(fabs(tx[up] - (at10 + 90 * per)) < 0.5 && ty[up] < ymin,
              "+inf at step 100 (the x range reaches it): up at %.1f (want %.1f), above the curve",
              tx[up], at10 + 90 * per);
    if (down >= 0)
        CHECK(fabs(tx[down] - (at10 + 50 * per)) < 0.5 && ty[down] > ymax,
              "-inf at step 60: down at %.1f (want %.1f), under the curve", tx[down],
              at10 + 50 * per);
    free(svg);
    PlotNonFinite nf = {1, 1, 1}, one = {0, 2, 0};
    char note[160];
    CHECK(!strcmp(plot_nonfinite_note(note, sizeof note, &nf),
                  "3 non-finite points marked: 1 nan ×, 1 +inf ▲, 1 -inf ▼"), "note: %s", note);
    CHECK(!strcmp(plot_nonfinite_note(note, sizeof note, &one), "2 +inf points marked ▲"),
          "note of one kind: %s", note);
    /* every value infinite (a perplexity that overflowed): drawn, with its marks */
    double yi[N];
    for (int i = 0; i < N; i++) yi[i] = INFINITY;
    PlotSeries si = {"#2 ppl", x, yi, N, NULL, NULL, NULL};
    snprintf(path, sizeof path, "%s/allinf.svg", dir_path);
    CHECK(plot_curves(path, &si, 1, &ax, err) == LM_OK, "all infinite: %s", err);
    svg = slurp(path);
    if (svg) find_marks(svg, cx, &ncx, tx, ty, dir, &nt);
    CHECK(svg && nt == N, "all infinite: %d triangles of %d", svg ? nt : -1, N);
    free(svg);
    /* the grid: one panel, a NaN at its last step, 100, at the right edge (x 240) */
    y[5] = 2.5, y[9] = NAN;
    PlotPanel pp = {"loss", x, y, N, NULL, 0};
    snprintf(path, sizeof path, "%s/grid.svg", dir_path);
    CHECK(plot_grid(path, &pp, 1, "grid", err) == LM_OK, "grid: %s", err);
    svg = slurp(path);
    if (svg) find_marks(svg, cx, &ncx, tx, ty, dir, &nt);
    CHECK(svg && ncx == 2 && fabs(cx[1] - 240) < 0.5,
          "grid: NaN crosses at step 40 and at the right edge: %d, last at %.1f", ncx,
          svg && ncx ? cx[ncx - 1] : -1);
    free(svg);
}

/* The 1.6-wide curve's path points of an SVG (malloc'd pts, 2 per point); their count. */
static int curve_points(const char *path, double *pts, int max)
{
    char *svg = slurp(path);
    int np = 0;
    for (char *p = svg ? strstr(svg, "<path") : NULL; p && !np; p = strstr(p + 5, "<path")) {
        char *st = strstr(p, "style=\""), *d = strstr(p, " d=\""), *end = strchr(p, '>');
        if (st && d && end && d < end && strstr(st, "stroke-width:1.6;") &&
            strstr(st, "stroke-width:1.6;") < d)
            np = path_points(d + 4, pts, max);
    }
    free(svg);
    return np;
}

/* A curve of 400,000 points is drawn through a few points per column (M4): a path of at
 * most 4 points a quarter-point column, reaching the spike and the dip the figure of those
 * points alone reaches (before: every point, minutes and gigabytes at 5 M). */
static void check_decimated(const char *dir_path)
{
    enum { N = 400000, MAXP = 40000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *pts = malloc(2 * MAXP * sizeof *pts);
    char path[160], err[LM_ERR_LEN];
    for (int i = 0; i < N; i++) x[i] = i, y[i] = 1.0 + 0.5 * (double)(((long)i * 7919) % 1000) / 1000.0;
    y[123457] = 5, y[277777] = -3;
    PlotSeries s = {"#1 long", x, y, N, NULL, NULL, NULL};
    PlotAxes ax = {"long", "step", "loss"};
    snprintf(path, sizeof path, "%s/long.svg", dir_path);
    CHECK(plot_curves(path, &s, 1, &ax, err) == LM_OK, "long: %s", err);
    int np = curve_points(path, pts, MAXP);
    double top = 1e9, bottom = -1e9;
    for (int i = 0; i < np; i++) top = fmin(top, pts[2 * i + 1]), bottom = fmax(bottom, pts[2 * i + 1]);
    CHECK(np > 100 && np < 4 * 4 * 1300, "400,000 points drawn as %d", np);
    double kx[4] = {0, 123457, 277777, N - 1}, ky[4] = {y[0], 5, -3, y[N - 1]};
    PlotSeries k = {"#1 long", kx, ky, 4, NULL, NULL, NULL};
    snprintf(path, sizeof path, "%s/long_keys.svg", dir_path);
    CHECK(plot_curves(path, &k, 1, &ax, err) == LM_OK, "keys: %s", err);
    int nk = curve_points(path, pts, MAXP);
    double ktop = 1e9, kbottom = -1e9;
    for (int i = 0; i < nk; i++) ktop = fmin(ktop, pts[2 * i + 1]), kbottom = fmax(kbottom, pts[2 * i + 1]);
    CHECK(nk == 4 && fabs(top - ktop) < 0.01 && fabs(bottom - kbottom) < 0.01,
          "the spike and the dip are kept: %g %g against %g %g", top, bottom, ktop, kbottom);
    free(x), free(y), free(pts);
}

/* The colour at (x, y) points of a PNG written at 2 pixels a point, as 0..1 RGB; 0 when it
 * cannot be read. */
static int png_rgb(const char *path, double x, double y, double *rgb)
{
    cairo_surface_t *img = cairo_image_surface_create_from_png(path);
    int ok = cairo_surface_status(img) == CAIRO_STATUS_SUCCESS;
    int px = (int)(x * 2), py = (int)(y * 2);
    if (ok && px >= 0 && py >= 0 && px < cairo_image_surface_get_width(img) &&
        py < cairo_image_surface_get_height(img)) {
        uint32_t v;
        memcpy(&v, cairo_image_surface_get_data(img) +
                        (size_t)py * cairo_image_surface_get_stride(img) + (size_t)px * 4, 4);
        rgb[0] = (v >> 16 & 255) / 255.0, rgb[1] = (v >> 8 & 255) / 255.0,
        rgb[2] = (v & 255) / 255.0;
    } else {
        ok = 0;
    }
    cairo_surface_destroy(img);
    return ok;
}

static int rgb_near(const double *a, const double *b)
{
    return fabs(a[0] - b[0]) < 0.02 && fabs(a[1] - b[1]) < 0.02 && fabs(a[2] - b[2]) < 0.02;
}

/* A histogram series of 20,000 steps as a grid's heat strip: one image of at most two
 * columns a point of the panel's width, each cell the mean of its steps' finite values,
 * a cell with none left blank (one rectangle per step and bin made millions, and cairo
 * failed "out of memory" on a diagnostics run). One panel: the strip spans x 46-240 and
 * y 50-174 points, bin k of 4 from the bottom. */
static void check_heat_strip(const char *dir)
{
    enum { N = 20000, R = 4 };
    double *x = malloc(N * sizeof *x), *heat = malloc((size_t)N * R * sizeof *heat);
    char path[160], err[LM_ERR_LEN] = "";
    if (!x || !heat) { free(x); free(heat); CHECK(0, "out of memory"); return; }
    for (int i = 0; i < N; i++) {
        x[i] = i;
        double *h = heat + (long)i * R;
        h[0] = 1.0;                        /* the top of the scale everywhere */
        h[1] = i % 2;                      /* every column's mean 0.5 */
        h[2] = i < N / 2 ? 1.0 : 0.0;      /* 1 then 0 */
        h[3] = i == 7 ? 0.25 : NAN;        /* blank but for one step's value */
    }
    PlotPanel pp = {"hist/w", x, NULL, N, heat, R};
    snprintf(path, sizeof path, "%s/heat.svg", dir);
    CHECK(plot_grid(path, &pp, 1, "grid", err) == LM_OK, "heat strip: %s", err);
    char *svg = slurp(path);
    CHECK(svg && strstr(svg, "<image") && strlen(svg) < 100000,
          "heat strip: one image, %zu bytes of SVG", svg ? strlen(svg) : 0);
    free(svg);
    snprintf(path, sizeof path, "%s/heat.png", dir);
    CHECK(plot_grid(path, &pp, 1, "grid", err) == LM_OK, "heat strip png: %s", err);
    double top[3], half[3], zero[3], c[3];
    plot_viridis(1.0, top), plot_viridis(0.5, half), plot_viridis(0.0, zero);
    double bin_y[R], rh = (174.0 - 50.0) / R;
    for (int k = 0; k < R; k++)
        bin_y[k] = 174.0 - (k + 0.5) * rh;
    CHECK(png_rgb(path, 100, bin_y[0], c) && rgb_near(c, top), "bin 0: the top colour");
    CHECK(png_rgb(path, 100, bin_y[1], c) && rgb_near(c, half),
          "bin 1: the mean of its column's steps (0.5): %.3f %.3f %.3f", c[0], c[1], c[2]);
    CHECK(png_rgb(path, 90, bin_y[2], c) && rgb_near(c, top) &&
          png_rgb(path, 200, bin_y[2], c) && rgb_near(c, zero), "bin 2: 1 then 0 along x");
    double white[3] = {1, 1, 1};
    CHECK(png_rgb(path, 150, bin_y[3], c) && rgb_near(c, white), "bin 3: blank without values");
    CHECK(png_rgb(path, 46.2, bin_y[3], c) && !rgb_near(c, white),
          "bin 3: its one step's value drawn in the first column");
    free(x), free(heat);
}

/* A constant series that rounding spread over an ulp (`plot 1 metric=lr smooth=5`: the
 * EMA of a constant lr) is drawn as a flat one, in a small file and at once. Before, its
 * tick step was below the ulp of its values, `v += step` never moved, and the axis loop
 * drew ticks until the machine ran out of memory (24 GB, OOM-killed). The drawing runs in
 * a child with an alarm, so the old loop fails this check instead of filling memory. */
static void check_near_flat(const char *dir_path)
{
    enum { N = 30 };
    double x[N], y[N];
    char path[160];
    for (int i = 0; i < N; i++) x[i] = 10.0 * (i + 1), y[i] = i % 2 ? 0.003 : nextafter(0.003, 1);
    snprintf(path, sizeof path, "%s/near_flat.svg", dir_path);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        char err[LM_ERR_LEN];
        PlotSeries s = {"#1 lr", x, y, N, NULL, NULL, NULL};
        PlotAxes ax = {"lr", "step", "lr"};
        _exit(plot_curves(path, &s, 1, &ax, err) == LM_OK ? 0 : 1);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork and wait");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "near-flat series: %s %d",
          WIFSIGNALED(st) ? "killed by signal" : "exit status",
          WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && sb.st_size < 100000, "near-flat series: a small SVG (%ld bytes)",
          stat(path, &sb) == 0 ? (long)sb.st_size : -1L);
}

int main(void)
{
    char dir[] = "/tmp/lmlab_plot_XXXXXX", path[128];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/falling.svg", dir);
    check_figure(path, falling, "falling");
    snprintf(path, sizeof path, "%s/rising.svg", dir);
    check_figure(path, rising, "rising");
    snprintf(path, sizeof path, "%s/flat.svg", dir);
    check_figure(path, flat, "flat");
    check_nonfinite(dir);
    check_decimated(dir);
    check_heat_strip(dir);
    check_near_flat(dir);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (!getenv("LMLAB_KEEP_PLOTS") && system(cmd)) {}
    return check_summary();
}
