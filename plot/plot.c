/* plot.c — line charts through cairo's SVG, PDF and image (PNG) surfaces (see plot.h).
 * Layout in points on a 640x400 page: the plot area inside fixed margins, ticks at 1-2-5
 * steps (Heckbert, "Nice numbers for graph labels", Graphics Gems 1990), the Okabe-Ito
 * colour-blind-safe palette for curves, the legend in a corner it covers no curve in;
 * NaN and infinite points marked at their x on the top or bottom edge (as ui/chart.c
 * does). Not here: the page, text, the curve's path and the marks (plot_canvas.c),
 * heatmaps (plot_heatmap.c). Not a general plotting library: no subplots, no styles
 * beyond what the commands need. */
#include "plot.h"
#include "plot_canvas.h"

#include "err.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_W 640.0
#define PLOT_H 400.0
#define PLOT_MAX_TICKS 24   /* a nice step gives about 6 a side; a bound, not a layout */

typedef struct {
    double x0, x1, y0, y1;      /* data range */
    double left, right, top, bottom; /* plot area in points */
} Frame;

/* A "nice" step (1, 2 or 5 x 10^k) giving about `want` intervals over span. */
static double plot_nice_step(double span, int want)
{
    double raw = span / want, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

/* A tick label for v on a scale of the given step. */
static void plot_fmt_tick(char *buf, size_t cap, double v, double step)
{
    double a = fabs(v);
    if (v == 0) snprintf(buf, cap, "0");
    else if (a >= 1e6 || a < 1e-3) snprintf(buf, cap, "%.3g", v);
    else if (a >= 1e4 && step >= 1000) snprintf(buf, cap, "%gk", v / 1000);
    else {
        int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
        snprintf(buf, cap, "%.*f", dec, v);
    }
}

static double px(const Frame *f, double x)
{
    return f->left + (x - f->x0) / (f->x1 - f->x0) * (f->right - f->left);
}

static double py(const Frame *f, double y)
{
    return f->bottom - (y - f->y0) / (f->y1 - f->y0) * (f->bottom - f->top);
}

/* Grid lines, ticks with labels, the frame and the axis labels and title. */
static void draw_axes(cairo_t *cr, const Frame *f, const PlotAxes *ax)
{
    char buf[32];
    double xs = plot_nice_step(f->x1 - f->x0, 6), ys = plot_nice_step(f->y1 - f->y0, 6);
    cairo_set_line_width(cr, 0.5);
    double x_first = ceil(f->x0 / xs) * xs, y_first = ceil(f->y0 / ys) * ys;
    for (int k = 0; k < PLOT_MAX_TICKS; k++) {
        double v = x_first + k * xs;
        if (v > f->x1 + xs * 1e-9) break;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, px(f, v), f->top);
        cairo_line_to(cr, px(f, v), f->bottom);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        plot_fmt_tick(buf, sizeof buf, fabs(v) < xs * 1e-9 ? 0 : v, xs);
        plot_text_at(cr, px(f, v), f->bottom + 5, 10, 0.5, 0, buf);
    }
    for (int k = 0; k < PLOT_MAX_TICKS; k++) {
        double v = y_first + k * ys;
        if (v > f->y1 + ys * 1e-9) break;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, f->left, py(f, v));
        cairo_line_to(cr, f->right, py(f, v));
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        plot_fmt_tick(buf, sizeof buf, fabs(v) < ys * 1e-9 ? 0 : v, ys);
        plot_text_at(cr, f->left - 5, py(f, v), 10, 1, 0.5, buf);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, f->left, f->top, f->right - f->left, f->bottom - f->top);
    cairo_stroke(cr);
    if (ax && ax->xlabel)
        plot_text_at(cr, (f->left + f->right) / 2, f->bottom + 24, 12, 0.5, 0, ax->xlabel);
    if (ax && ax->title)
        plot_text_at(cr, (f->left + f->right) / 2, 12, 14, 0.5, 0, ax->title);
    if (ax && ax->ylabel) {
        cairo_save(cr);
        cairo_translate(cr, 16, (f->top + f->bottom) / 2);
        cairo_rotate(cr, -M_PI / 2);
        plot_text_at(cr, 0, 0, 12, 0.5, 0.5, ax->ylabel);
        cairo_restore(cr);
    }
}

/* Okabe & Ito (2008), "Color Universal Design": distinguishable with colour blindness. */
static const double PALETTE[][3] = {
    {0.000, 0.447, 0.698}, {0.835, 0.369, 0.000}, {0.000, 0.620, 0.451},
    {0.800, 0.475, 0.655}, {0.902, 0.624, 0.000}, {0.337, 0.706, 0.914},
    {0.941, 0.894, 0.259}, {0.000, 0.000, 0.000}};
#define N_PALETTE (int)(sizeof PALETTE / sizeof PALETTE[0])

/* Series k's line: the palette's colour k % 8, and past every 8 series another dash
 * pattern (solid, dashed, dotted, dash-dot), so no two of the first 32 curves look alike
 * (issue 49 item 11: #3 and #9 shared one colour). */
static void set_line(cairo_t *cr, int k, double width)
{
    static const double DASHES[4][4] = {{0}, {6, 3}, {1.5, 2.5}, {6, 2.5, 1.5, 2.5}};
    static const int N_DASH[4] = {0, 2, 2, 4};
    const double *c = PALETTE[k % N_PALETTE];
    int d = (k / N_PALETTE) % 4;
    cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    cairo_set_line_width(cr, width);
    cairo_set_dash(cr, DASHES[d], N_DASH[d], 0);
}

/* The band between s->lo and s->hi, one filled polygon per stretch of finite points. */
static void draw_band(cairo_t *cr, const Frame *f, const PlotSeries *s, const double *c)
{
    cairo_set_source_rgba(cr, c[0], c[1], c[2], 0.22);
    for (int i = 0; i < s->n;) {
        int j = i;
        while (j < s->n && isfinite(s->x[j]) && isfinite(s->lo[j]) && isfinite(s->hi[j])) j++;
        if (j > i + 1) {
            cairo_move_to(cr, px(f, s->x[i]), py(f, s->hi[i]));
            for (int k = i + 1; k < j; k++) cairo_line_to(cr, px(f, s->x[k]), py(f, s->hi[k]));
            for (int k = j - 1; k >= i; k--) cairo_line_to(cr, px(f, s->x[k]), py(f, s->lo[k]));
            cairo_close_path(cr);
            cairo_fill(cr);
        }
        i = j + 1;
    }
}

static void draw_series(cairo_t *cr, const Frame *f, const PlotSeries *s, int k)
{
    const double *c = PALETTE[k % N_PALETTE];
    if (s->lo && s->hi) draw_band(cr, f, s, c);
    set_line(cr, k, 1.6);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    plot_curve(cr, s->x, s->y, s->n, f->x0, f->x1, f->y0, f->y1, f->left, f->right, f->bottom,
               f->top, 0);
    cairo_set_dash(cr, NULL, 0, 0);
    for (int i = 0; s->n < 40 && i < s->n; i++) {
        if (!isfinite(s->x[i]) || !isfinite(s->y[i])) continue;
        cairo_arc(cr, px(f, s->x[i]), py(f, s->y[i]), 2.5, 0, 2 * M_PI);
        cairo_fill(cr);
    }
}

/* The legend's size: w x h points for n labels. */
static void legend_size(cairo_t *cr, const PlotSeries *s, int n, double *w, double *h)
{
    *w = 0;
    cairo_set_font_size(cr, 10);
    for (int k = 0; k < n; k++) {
        cairo_text_extents_t e;
        char safe[1024];
        cairo_text_extents(cr, plot_text_safe(safe, sizeof safe, s[k].label), &e);
        if (e.x_advance > *w) *w = e.x_advance;
    }
    *w += 32;
    *h = 15.0 * n + 6;
}

/* How many of the curves' points (and the segments between them, sampled) fall in the box
 * (x, y, w, h) of the frame, 4 points of margin around it. */
static long points_under(const Frame *f, const PlotSeries *s, int n, double x, double y,
                         double w, double h)
{
    long hits = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < s[k].n; i++) {
            if (!isfinite(s[k].x[i])) continue;
            if (!isfinite(s[k].y[i])) {   /* its mark, at the top or bottom edge */
                double a = px(f, s[k].x[i]), b = s[k].y[i] < 0 ? f->bottom - 5 : f->top + 5;
                hits += a >= x - 8 && a <= x + w + 8 && b >= y - 8 && b <= y + h + 8;
                continue;
            }
            int steps = i + 1 < s[k].n && isfinite(s[k].x[i + 1]) && isfinite(s[k].y[i + 1])
                        ? 8 : 1;
            for (int j = 0; j < steps; j++) {
                double t = (double)j / steps;
                double xx = steps > 1 ? s[k].x[i] + t * (s[k].x[i + 1] - s[k].x[i]) : s[k].x[i];
                double yy = steps > 1 ? s[k].y[i] + t * (s[k].y[i + 1] - s[k].y[i]) : s[k].y[i];
                double a = px(f, xx), b = py(f, yy);
                hits += a >= x - 4 && a <= x + w + 4 && b >= y - 4 && b <= y + h + 4;
            }
        }
    return hits;
}

/* Where the legend goes: the corner of the plot area it covers no curve in (top right,
 * top left, bottom right, bottom left, in that order of preference); when every corner
 * covers one, the plot area narrows and the legend stands beside it on the right (issue 49
 * item 11: the sweep plot's legend covered curves). Sets *x, *y; may change f->right. */
static void legend_place(cairo_t *cr, Frame *f, const PlotSeries *s, int n, double right_edge,
                         double *x, double *y)
{
    double w, h;
    legend_size(cr, s, n, &w, &h);
    double cx[4] = {f->right - w - 8, f->left + 8, f->right - w - 8, f->left + 8};
    double cy[4] = {f->top + 8, f->top + 8, f->bottom - h - 8, f->bottom - h - 8};
    for (int c = 0; c < 4; c++)
        if (cy[c] >= f->top && cx[c] >= f->left &&
            !points_under(f, s, n, cx[c], cy[c], w, h)) {
            *x = cx[c], *y = cy[c];
            return;
        }
    f->right = right_edge - w - 12;   /* beside the plot area */
    if (f->right < f->left + 120) f->right = f->left + 120;
    *x = f->right + 8, *y = f->top;
}

/* The legend box at (x, y): a line of each series' colour and dash and its label. */
static void draw_legend(cairo_t *cr, const PlotSeries *s, int n, double x, double y)
{
    double w, h, row = 15;
    legend_size(cr, s, n, &w, &h);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.9);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.7, 0.7, 0.7);
    cairo_set_line_width(cr, 0.5);
    cairo_stroke(cr);
    for (int k = 0; k < n; k++) {
        double yy = y + 3 + row * k + row / 2;
        set_line(cr, k, 2);
        cairo_move_to(cr, x + 5, yy);
        cairo_line_to(cr, x + 22, yy);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        plot_text_at(cr, x + 26, yy, 10, 0, 0.5, s[k].label ? s[k].label : "");
    }
}

/* 1 when [lo, hi] is too narrow to divide into ticks: empty, or a constant series that
 * rounding spread over a few ulps (a smoothed constant learning rate), whose ticks would
 * be steps v += step that never move v. */
static int range_flat(double lo, double hi)
{
    return hi - lo <= 1e-9 * fmax(fabs(lo), fabs(hi));
}

/* The data range, padded 4% in y: x over every point whose x is finite (a divergence at
 * the last step stays at the right end), y over the finite points (0..1 when there are
 * none); *nf counts the NaN and infinite ones. 0 when no point has a finite x; *finite
 * is how many points are drawable. */
static int data_range(const PlotSeries *s, int n, Frame *f, PlotNonFinite *nf, long *finite)
{
    f->x0 = f->y0 = INFINITY;
    f->x1 = f->y1 = -INFINITY;
    *nf = (PlotNonFinite){0, 0, 0};
    *finite = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < s[k].n; i++) {
            double x = s[k].x[i], y = s[k].y[i];
            PlotNonFinite mine = {0, 0, 0};   /* a decimation's: its whole series' below */
            if (!isfinite(x)) continue;
            f->x0 = fmin(f->x0, x), f->x1 = fmax(f->x1, x);
            if (plot_nonfinite_count(s[k].nf ? &mine : nf, y)) continue;
            f->y0 = fmin(f->y0, y), f->y1 = fmax(f->y1, y);
            if (s[k].lo && isfinite(s[k].lo[i])) f->y0 = fmin(f->y0, s[k].lo[i]);
            if (s[k].hi && isfinite(s[k].hi[i])) f->y1 = fmax(f->y1, s[k].hi[i]);
            (*finite)++;
        }
    for (int k = 0; k < n; k++)
        if (s[k].nf) nf->nan += s[k].nf->nan, nf->pos += s[k].nf->pos, nf->neg += s[k].nf->neg;
    if (!isfinite(f->x0)) return 0;
    if (!*finite) f->y0 = 0, f->y1 = 1;
    if (range_flat(f->x0, f->x1)) f->x0 -= 0.5, f->x1 += 0.5;
    if (range_flat(f->y0, f->y1)) f->y0 -= 0.5, f->y1 += 0.5;
    double pad = 0.04 * (f->y1 - f->y0);
    f->y0 -= pad, f->y1 += pad;
    if (f->x0 > 0 && f->x0 <= 0.2 * f->x1) f->x0 = 0;  /* steps from 10 read as from 0 */
    f->x1 += 0.02 * (f->x1 - f->x0);                   /* the last marker whole */
    return 1;
}

/* The non-finite points' marks of every curve (each in its curve's colour: which run
 * diverged), the note of their count under the plot area, and "no finite value to draw"
 * across it when nothing else is drawn. */
static void draw_nonfinite(cairo_t *cr, const Frame *f, const PlotSeries *s, int n,
                           const PlotNonFinite *nf, long finite)
{
    char note[160];
    for (int k = 0; k < n; k++) {
        set_line(cr, k, 1.2);
        cairo_set_dash(cr, NULL, 0, 0);
        for (int i = 0; i < s[k].n; i++)
            if (isfinite(s[k].x[i]) && !isfinite(s[k].y[i]))
                plot_nonfinite_mark(cr, px(f, s[k].x[i]), f->top, f->bottom, s[k].y[i]);
    }
    cairo_set_source_rgb(cr, 0.75, 0.1, 0.1);
    if (!finite)
        plot_text_at(cr, (f->left + f->right) / 2, (f->top + f->bottom) / 2, 12, 0.5, 0.5,
                     "no finite value to draw");
    if (nf->nan + nf->pos + nf->neg)
        plot_text_at(cr, 8, PLOT_H - 6, 9, 0, 1, plot_nonfinite_note(note, sizeof note, nf));
}

int plot_curves(const char *path, const PlotSeries *s, int n, const PlotAxes *ax, char *err)
{
    Frame f = {.left = 64, .right = PLOT_W - 16, .top = 28, .bottom = PLOT_H - 44};
    if (n < 1) return err_set(err, LM_EARG, "nothing to plot: no series");
    if (!plot_format_ok(path))
        return err_set(err, LM_EARG, "cannot tell the image type from '%s': name it .svg, "
                       ".png or .pdf", path ? path : "");
    PlotNonFinite nf;
    long finite;
    if (!data_range(s, n, &f, &nf, &finite))
        return err_set(err, LM_EARG, "nothing to plot: no point");
    Canvas c;
    int status = plot_canvas_open(&c, path, PLOT_W, PLOT_H, err);
    if (status) return status;
    double lx, ly;
    legend_place(c.cr, &f, s, n, PLOT_W - 16, &lx, &ly);
    draw_axes(c.cr, &f, ax);
    cairo_save(c.cr);
    cairo_rectangle(c.cr, f.left, f.top, f.right - f.left, f.bottom - f.top);
    cairo_clip(c.cr);
    for (int k = 0; k < n; k++) draw_series(c.cr, &f, &s[k], k);
    cairo_restore(c.cr);
    draw_nonfinite(c.cr, &f, s, n, &nf, finite);
    draw_legend(c.cr, s, n, lx, ly);
    return plot_canvas_close(&c, err);
}
