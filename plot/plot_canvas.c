/* plot_canvas.c — what plot/'s figures share (see plot_canvas.h): a page drawn by cairo's
 * SVG, PDF or image (PNG) surface into a file through outfile, text placed and escaped,
 * a curve's path decimated by M4 (core/base/m4.h, over the figure's range), NaN and infinite points
 * marked and counted (as ui/chart.c marks them), and the viridis colour map with its
 * colour bar. Not a figure: line charts are plot.c, heatmaps plot_heatmap.c, the grid and
 * parallel coordinates plot_grid.c and plot_parallel.c. */
#include "plot.h"
#include "plot_canvas.h"

#include "err.h"
#include "m4.h"
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

#define PNG_SCALE 2.0

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
    cairo_status_t st = cairo_status(c->cr);
    cairo_destroy(c->cr);
    if (!st && c->fmt == FMT_PNG)
        st = cairo_surface_write_to_png_stream(c->surf, canvas_write, c);
    cairo_surface_finish(c->surf);
    if (!st)
        st = cairo_surface_status(c->surf);
    cairo_surface_destroy(c->surf);
    if (!st && !c->write_err) return outfile_commit(&c->out, c->path, err);
    outfile_abort(&c->out);
    if (c->write_err == ENOSPC)
        return err_set(err, LM_ENOSPC, "%s: disk full while writing the image", c->path);
    if (c->write_err)
        return err_set(err, LM_EIO, "writing %s failed: %s", c->path, strerror(c->write_err));
    return err_set(err, LM_EIO, "writing %s failed: cairo: %s", c->path,
                   cairo_status_to_string(st));
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

/* The kept points k (n) as the path goes on: a move to the first after a gap. */
static void m4_draw(cairo_t *cr, const M4Pt *k, int n, double x0, double x1, double y0,
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
    M4 m;
    M4Pt k[M4_KEEP];
    int pen = 0;
    m4_init_range(&m, x0, x1, l, r);
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) {
            m4_draw(cr, k, m4_flush(&m, k), x0, x1, y0, y1, l, r, b, t, &pen);
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
        m4_draw(cr, k, m4_add(&m, x[i], y[i], k), x0, x1, y0, y1, l, r, b, t, &pen);
    }
    m4_draw(cr, k, m4_flush(&m, k), x0, x1, y0, y1, l, r, b, t, &pen);
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
