/* plot.c — line charts and heatmaps through cairo's SVG, PDF and image (PNG) surfaces
 * (see plot.h). Layout in points on a 640x400 page: the plot area inside fixed margins,
 * ticks at 1-2-5 steps (Heckbert, "Nice numbers for graph labels", Graphics Gems 1990),
 * the Okabe-Ito colour-blind-safe palette for curves and viridis for heatmaps; NaN and
 * infinite points marked at their x on the top or bottom edge (as ui/chart.c does). Not a
 * general plotting library: no subplots, no styles beyond what the commands need. */
#include "plot.h"
#include "plot_canvas.h"

#include "err.h"
#include "outfile.h"
#include "safetext.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLOT_W 640.0
#define PLOT_H 400.0
#define PNG_SCALE 2.0

typedef struct {
    double x0, x1, y0, y1;      /* data range */
    double left, right, top, bottom; /* plot area in points */
} Frame;

static int format_of(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot) return FMT_NONE;
    if (!strcasecmp(dot, ".svg")) return FMT_SVG;
    if (!strcasecmp(dot, ".png")) return FMT_PNG;
    if (!strcasecmp(dot, ".pdf")) return FMT_PDF;
    return FMT_NONE;
}

int plot_format_ok(const char *path)
{
    return format_of(path) != FMT_NONE;
}

/* cairo's stream callback: every byte goes through the OutFile. */
static cairo_status_t canvas_write(void *closure, const unsigned char *data, unsigned int n)
{
    Canvas *c = closure;
    int e = c->write_err ? c->write_err : outfile_write(&c->out, data, n);
    if (e && !c->write_err) c->write_err = e;
    return e ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

/* Opens a page of w x h points drawing into path through outfile (a regular file is
 * replaced atomically at a link's target; a FIFO or device is streamed; other kinds of
 * path are refused). */
int plot_canvas_open(Canvas *c, const char *path, double w, double h, char *err)
{
    memset(c, 0, sizeof *c);
    c->fmt = format_of(path);
    c->path = path;
    if (c->fmt == FMT_NONE)
        return err_set(err, LM_EARG, "cannot tell the image type from '%s': name it .svg, "
                       ".png or .pdf", path ? path : "");
    int st = outfile_open(&c->out, path, err);
    if (st) return st;
    if (c->fmt == FMT_SVG) c->surf = cairo_svg_surface_create_for_stream(canvas_write, c, w, h);
    else if (c->fmt == FMT_PDF) c->surf = cairo_pdf_surface_create_for_stream(canvas_write, c, w, h);
    else c->surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)(w * PNG_SCALE),
                                              (int)(h * PNG_SCALE));
    c->cr = cairo_create(c->surf);
    if (cairo_status(c->cr)) {
        cairo_destroy(c->cr);
        cairo_surface_destroy(c->surf);
        outfile_abort(&c->out);
        return err_set(err, LM_EIO, "cannot start drawing %s", path);
    }
    if (c->fmt == FMT_PNG) cairo_scale(c->cr, PNG_SCALE, PNG_SCALE);
    cairo_set_source_rgb(c->cr, 1, 1, 1);
    cairo_paint(c->cr);
    cairo_select_font_face(c->cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           CAIRO_FONT_WEIGHT_NORMAL);
    return LM_OK;
}

/* Finishes the page and commits the file. */
int plot_canvas_close(Canvas *c, char *err)
{
    int bad = cairo_status(c->cr) != CAIRO_STATUS_SUCCESS;
    cairo_destroy(c->cr);
    if (!bad && c->fmt == FMT_PNG)
        bad = cairo_surface_write_to_png_stream(c->surf, canvas_write, c) != CAIRO_STATUS_SUCCESS;
    cairo_surface_finish(c->surf);
    bad |= cairo_surface_status(c->surf) != CAIRO_STATUS_SUCCESS;
    cairo_surface_destroy(c->surf);
    if (!bad && !c->write_err) return outfile_commit(&c->out, c->path, err);
    outfile_abort(&c->out);
    if (c->write_err == ENOSPC)
        return err_set(err, LM_ENOSPC, "%s: disk full while writing the image", c->path);
    return err_set(err, LM_EIO, "writing %s failed%s%s", c->path, c->write_err ? ": " : "",
                   c->write_err ? strerror(c->write_err) : "");
}

/* Text anchored at (x, y): ax 0/0.5/1 = its left/centre/right there, ay 0/0.5/1 = its
 * cap top/middle/baseline there. */
void plot_text_at(cairo_t *cr, double x, double y, double size, double ax, double ay,
                    const char *t)
{
    cairo_text_extents_t e;
    char safe[1024];
    plot_text_safe(safe, sizeof safe, t);
    cairo_set_font_size(cr, size);
    cairo_text_extents(cr, safe, &e);
    cairo_move_to(cr, x - ax * e.x_advance, y + size * 0.72 * (1 - ay));
    cairo_show_text(cr, safe);
}

const char *plot_text_safe(char *out, size_t cap, const char *t)
{
    /* cairo refuses text that is not UTF-8 (the whole figure fails) and would draw bidi
     * controls: stored names reach here, so they are escaped as on the terminal */
    return safetext_escape(out, cap, t, 0);
}

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
    for (double v = ceil(f->x0 / xs) * xs; v <= f->x1 + xs * 1e-9; v += xs) {
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, px(f, v), f->top);
        cairo_line_to(cr, px(f, v), f->bottom);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        plot_fmt_tick(buf, sizeof buf, fabs(v) < xs * 1e-9 ? 0 : v, xs);
        plot_text_at(cr, px(f, v), f->bottom + 5, 10, 0.5, 0, buf);
    }
    for (double v = ceil(f->y0 / ys) * ys; v <= f->y1 + ys * 1e-9; v += ys) {
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
    if (f->x1 <= f->x0) f->x0 -= 0.5, f->x1 += 0.5;
    if (f->y1 <= f->y0) f->y0 -= 0.5, f->y1 += 0.5;
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

/* ---- M4 ------------------------------------------------------------------------------- */

void plot_m4_init(PlotM4 *m, double x0, double x1, double l, double r)
{
    *m = (PlotM4){.x0 = x0, .x1 = x1 > x0 ? x1 : x0 + 1, .l = l, .r = r};
}

int plot_m4_flush(PlotM4 *m, PlotPt out[4])
{
    if (!m->used) return 0;
    PlotPt k[4] = {m->first, m->lo, m->hi, m->last};
    int n = 0;
    for (int i = 1; i < 4; i++)   /* in the order they came, each once */
        for (int j = i; j > 0 && k[j].i < k[j - 1].i; j--) {
            PlotPt t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
        }
    for (int i = 0; i < 4; i++)
        if (!n || k[i].i != out[n - 1].i) out[n++] = k[i];
    m->used = 0;
    return n;
}

int plot_m4_add(PlotM4 *m, long i, double x, double y, PlotPt out[4])
{
    long col = (long)floor((m->l + (x - m->x0) / (m->x1 - m->x0) * (m->r - m->l)) * 4);
    int n = m->used && col != m->col ? plot_m4_flush(m, out) : 0;
    PlotPt p = {i, x, y};
    if (!m->used) {
        *m = (PlotM4){m->x0, m->x1, m->l, m->r, 1, col, p, p, p, p};
        return n;
    }
    if (y < m->lo.y) m->lo = p;
    if (y > m->hi.y) m->hi = p;
    m->last = p;
    return n;
}

/* The kept points k (n) as the path goes on: a move to the first after a gap. */
static void m4_draw(cairo_t *cr, const PlotPt *k, int n, double x0, double x1, double y0,
                    double y1, double l, double r, double b, double t, int *pen)
{
    for (int i = 0; i < n; i++) {
        double dx = l + (k[i].x - x0) / (x1 - x0) * (r - l);
        double dy = b - (k[i].y - y0) / (y1 - y0) * (b - t);
        if (*pen) cairo_line_to(cr, dx, dy);
        else cairo_move_to(cr, dx, dy);
        *pen = 1;
    }
}

void plot_curve(cairo_t *cr, const double *x, const double *y, int n, double x0, double x1,
                double y0, double y1, double l, double r, double b, double t, double dot)
{
    PlotM4 m;
    PlotPt k[4];
    int pen = 0;
    plot_m4_init(&m, x0, x1, l, r);
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) {
            m4_draw(cr, k, plot_m4_flush(&m, k), x0, x1, y0, y1, l, r, b, t, &pen);
            pen = 0;
            continue;
        }
        int alone = dot > 0 && (i == 0 || !isfinite(y[i - 1]) || !isfinite(x[i - 1])) &&
                    (i + 1 == n || !isfinite(y[i + 1]) || !isfinite(x[i + 1]));
        if (alone) {   /* a point between gaps: a dot, no line */
            double dx = l + (x[i] - x0) / (x1 - x0) * (r - l);
            double dy = b - (y[i] - y0) / (y1 - y0) * (b - t);
            cairo_stroke(cr);
            cairo_arc(cr, dx, dy, dot, 0, 2 * M_PI);
            cairo_fill(cr);
            continue;
        }
        m4_draw(cr, k, plot_m4_add(&m, i, x[i], y[i], k), x0, x1, y0, y1, l, r, b, t, &pen);
    }
    m4_draw(cr, k, plot_m4_flush(&m, k), x0, x1, y0, y1, l, r, b, t, &pen);
    cairo_stroke(cr);
}

int plot_nonfinite_count(PlotNonFinite *nf, double y)
{
    if (isfinite(y)) return 0;
    nf->nan += isnan(y);
    nf->pos += y > 0;
    nf->neg += y < 0;
    return 1;
}

void plot_nonfinite_mark(cairo_t *cr, double x, double top, double bottom, double y)
{
    const double r = 4;
    if (isnan(y)) {   /* a cross, its centre r below the top edge (not 1.6: a curve's width) */
        cairo_set_line_width(cr, 1.5);
        cairo_move_to(cr, x - r, top + 1), cairo_line_to(cr, x + r, top + 1 + 2 * r);
        cairo_move_to(cr, x + r, top + 1), cairo_line_to(cr, x - r, top + 1 + 2 * r);
        cairo_stroke(cr);
        return;
    }
    double tip = y > 0 ? top + 1 : bottom - 1, base = y > 0 ? tip + 2 * r : tip - 2 * r;
    cairo_move_to(cr, x, tip);
    cairo_line_to(cr, x + r, base);
    cairo_line_to(cr, x - r, base);
    cairo_close_path(cr);
    cairo_fill(cr);
}

const char *plot_nonfinite_note(char *buf, size_t cap, const PlotNonFinite *nf)
{
    static const char *const what[3] = {"nan", "+inf", "-inf"}, *const mark[3] = {"×", "▲", "▼"};
    long k[3] = {nf->nan, nf->pos, nf->neg}, all = k[0] + k[1] + k[2];
    int kinds = (k[0] > 0) + (k[1] > 0) + (k[2] > 0);
    size_t len = 0;
    buf[0] = 0;
    if (!all) return buf;
    if (kinds == 1) {
        int i = k[0] ? 0 : k[1] ? 1 : 2;
        snprintf(buf, cap, "%ld %s point%s marked %s", all, what[i], all > 1 ? "s" : "", mark[i]);
        return buf;
    }
    len = (size_t)snprintf(buf, cap, "%ld non-finite points marked:", all);
    for (int i = 0, first = 1; i < 3 && len < cap; i++) {
        if (!k[i]) continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s %ld %s %s", first ? "" : ",", k[i],
                                what[i], mark[i]);
        first = 0;
    }
    return buf;
}

/* viridis (matplotlib's default colour map) at t in [0,1], from 5 of its stops. */
void plot_viridis(double t, double *rgb)
{
    static const double stops[5][3] = {{0.267, 0.005, 0.329}, {0.231, 0.322, 0.545},
                                       {0.129, 0.569, 0.549}, {0.369, 0.788, 0.384},
                                       {0.993, 0.906, 0.144}};
    t = fmin(1, fmax(0, t)) * 4;
    int i = t >= 4 ? 3 : (int)t;
    double u = t - i;
    for (int k = 0; k < 3; k++) rgb[k] = stops[i][k] + u * (stops[i + 1][k] - stops[i][k]);
}

void plot_colorbar(cairo_t *cr, double x, double top, double bottom, double lo, double hi,
                   const char *label)
{
    double rgb[3];
    char buf[32];
    for (int i = 0; i < 100; i++) {
        plot_viridis(i / 99.0, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        double y = bottom - (bottom - top) * (i + 1) / 100.0;
        cairo_rectangle(cr, x, y, 12, (bottom - top) / 100.0 + 0.5);
        cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    snprintf(buf, sizeof buf, "%.4g", hi);
    plot_text_at(cr, x + 16, top, 10, 0, 0.5, buf);
    snprintf(buf, sizeof buf, "%.4g", lo);
    plot_text_at(cr, x + 16, bottom, 10, 0, 0.5, buf);
    if (!label)
        return;
    cairo_save(cr);
    cairo_translate(cr, x + 46, (top + bottom) / 2);
    cairo_rotate(cr, -M_PI / 2);
    plot_text_at(cr, 0, 0, 10, 0.5, 0.5, label);
    cairo_restore(cr);
}

int plot_heatmap(const char *path, const double *v, int rows, int cols, double lo, double hi,
                 const char *const *row_labels, const char *const *col_labels,
                 const PlotAxes *ax, char *err)
{
    if (rows < 1 || cols < 1) return err_set(err, LM_EARG, "nothing to plot: empty grid");
    if (!plot_format_ok(path))
        return err_set(err, LM_EARG, "cannot tell the image type from '%s': name it .svg, "
                       ".png or .pdf", path ? path : "");
    Canvas c;
    int status = plot_canvas_open(&c, path, PLOT_W, PLOT_H, err);
    if (status) return status;
    cairo_t *cr = c.cr;
    double left = 64, right = PLOT_W - 70, top = 40, bottom = PLOT_H - 44;
    double cw = (right - left) / cols, ch = (bottom - top) / rows, rgb[3];
    char buf[32];
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            double x = v[(long)r * cols + k], t = hi > lo ? (x - lo) / (hi - lo) : 0;
            if (isnan(x)) continue;
            plot_viridis(t, rgb);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_rectangle(cr, left + k * cw, top + r * ch, cw - 1, ch - 1);
            cairo_fill(cr);
            if (t > 0.6) cairo_set_source_rgb(cr, 0, 0, 0);
            else cairo_set_source_rgb(cr, 1, 1, 1);
            snprintf(buf, sizeof buf, "%.2f", x);
            plot_text_at(cr, left + (k + 0.5) * cw, top + (r + 0.5) * ch, fmin(11, ch * 0.4), 0.5,
                    0.5, buf);
        }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    for (int r = 0; row_labels && r < rows; r++)
        plot_text_at(cr, left - 5, top + (r + 0.5) * ch, 10, 1, 0.5, row_labels[r]);
    for (int k = 0; col_labels && k < cols; k++)
        plot_text_at(cr, left + (k + 0.5) * cw, bottom + 4, 10, 0.5, 0, col_labels[k]);
    plot_colorbar(cr, right + 12, top, bottom, lo, hi, NULL);
    PlotAxes a = ax ? *ax : (PlotAxes){0};
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    if (a.xlabel) plot_text_at(cr, (left + right) / 2, bottom + 22, 12, 0.5, 0, a.xlabel);
    if (a.title) plot_text_at(cr, (left + right) / 2, 12, 14, 0.5, 0, a.title);
    if (a.ylabel) {
        cairo_save(cr);
        cairo_translate(cr, 16, (top + bottom) / 2);
        cairo_rotate(cr, -M_PI / 2);
        plot_text_at(cr, 0, 0, 12, 0.5, 0.5, a.ylabel);
        cairo_restore(cr);
    }
    return plot_canvas_close(&c, err);
}
