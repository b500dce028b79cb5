/* test_plot.c — the figures' curves stay apart (issue 49 item 11): ten curves into an SVG
 * give ten different line styles (the palette has eight colours: #3 and #9 of a report
 * shared one), and the legend covers no curve, wherever the curves run. Reads cairo's SVG
 * output: each curve is a path of stroke-width 1.6, the legend box the path of
 * fill-opacity 0.9. */
#include "check.h"
#include "err.h"
#include "plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        s[k] = (PlotSeries){lab[k], x, y[k], N, NULL, NULL};
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
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return check_summary();
}
