/* plot_grid.c — small multiples (see plot.h, plot_grid): one small chart per series on
 * one page, in rows of up to four, each with its name, its y range at the corners and
 * its step range underneath (over every step: NaN and infinite points are marked at
 * theirs, in red, and counted under it); the page's title on top. For `plot ID series=PATTERN` and
 * the report's grid section. Not the dashboard's grid (ui/view_grid.c draws in cells). */
#include "plot.h"
#include "plot_canvas.h"

#include "err.h"

#include <cairo.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PANEL_W 250.0
#define PANEL_H 170.0
#define GRID_TOP 30.0
#define GRID_MAX_COLS 4

/* The tick text of v, short. */
static void fmt_value(char *buf, size_t cap, double v)
{
    double a = fabs(v);
    if (a != 0 && (a >= 1e5 || a < 1e-3)) snprintf(buf, cap, "%.3g", v);
    else snprintf(buf, cap, "%.4g", v);
}

/* A heat strip: heat_rows cells a column, shaded by viridis, over the panel's width in at
 * most HEAT_PER_PT columns a point, drawn as one image (pixel = cell, scaled without
 * smoothing): a run's thousands of histograms share a column, each cell the mean of
 * their finite values, a cell with none left blank. (One rectangle per step and bin made
 * a diagnostics run's page millions of them, and cairo failed "out of memory".) */
#define HEAT_PER_PT 2.0
static void draw_heat(cairo_t *cr, const PlotPanel *p, double l, double r, double t, double b)
{
    char buf[48];
    int cols = (int)((r - l) * HEAT_PER_PT), rows = p->heat_rows;
    cols = cols < 1 ? 1 : cols > p->n ? p->n : cols;
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, cols, rows);
    if (cairo_surface_status(img) == CAIRO_STATUS_SUCCESS) {
        unsigned char *data = cairo_image_surface_get_data(img);
        int stride = cairo_image_surface_get_stride(img);
        cairo_surface_flush(img);
        for (int c = 0; c < cols; c++) {
            long i0 = (long)c * p->n / cols, i1 = (long)(c + 1) * p->n / cols;
            for (int k = 0; k < rows; k++) {
                double sum = 0, rgb[3];
                long m = 0;
                for (long i = i0; i < i1; i++) {
                    double v = p->heat[i * rows + k];
                    if (isfinite(v)) sum += v, m++;
                }
                uint32_t px = 0;   /* transparent: no finite value */
                if (m) {
                    plot_viridis(sum / m, rgb);
                    px = 0xff000000u | (uint32_t)lround(rgb[0] * 255) << 16 |
                         (uint32_t)lround(rgb[1] * 255) << 8 | (uint32_t)lround(rgb[2] * 255);
                }
                memcpy(data + (size_t)(rows - 1 - k) * stride + (size_t)c * 4, &px, 4);
            }
        }
        cairo_surface_mark_dirty(img);
        cairo_save(cr);
        cairo_rectangle(cr, l, t, r - l, b - t);
        cairo_clip(cr);
        cairo_translate(cr, l, t);
        cairo_scale(cr, (r - l) / cols, (b - t) / rows);
        cairo_set_source_surface(cr, img, 0, 0);
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
        cairo_paint(cr);
        cairo_restore(cr);
    }
    cairo_surface_destroy(img);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    fmt_value(buf, sizeof buf, p->x[0]);
    plot_text_at(cr, l, b + 4, 8, 0, 0, buf);
    fmt_value(buf, sizeof buf, p->x[p->n - 1]);
    plot_text_at(cr, r, b + 4, 8, 1, 0, buf);
    plot_text_at(cr, l - 3, t, 8, 1, 0.5, "hi");
    plot_text_at(cr, l - 3, b, 8, 1, 0.5, "lo");
}

/* The panel's curve through its finite points (a gap at each other one), a dot where a
 * finite point stands alone between gaps (it would draw nothing as a line). */
static void draw_line(cairo_t *cr, const PlotPanel *p, double x0, double x1, double y0,
                      double y1, double l, double r, double t, double b)
{
    cairo_set_source_rgb(cr, 0.000, 0.447, 0.698);
    cairo_set_line_width(cr, 1.2);
    plot_curve(cr, p->x, p->y, p->n, x0, x1, y0, y1, l, r, b, t, 2);
}

/* One panel with its top-left corner at (x, y). */
static void draw_panel(cairo_t *cr, const PlotPanel *p, double x, double y)
{
    double l = x + 46, r = x + PANEL_W - 10, t = y + 20, b = y + PANEL_H - 26;
    if (p->heat && p->n > 0 && p->heat_rows > 0) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        plot_text_at(cr, x + PANEL_W / 2, y + 4, 10, 0.5, 0, p->title ? p->title : "");
        draw_heat(cr, p, l, r, t, b);
        return;
    }
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    char buf[96];
    PlotNonFinite nf = {0, 0, 0};
    for (int i = 0; i < p->n; i++) {   /* x over every point: a divergence stays in view */
        if (!isfinite(p->x[i])) continue;
        x0 = fmin(x0, p->x[i]), x1 = fmax(x1, p->x[i]);
        if (plot_nonfinite_count(&nf, p->y[i])) continue;
        y0 = fmin(y0, p->y[i]), y1 = fmax(y1, p->y[i]);
    }
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    plot_text_at(cr, x + PANEL_W / 2, y + 4, 10, 0.5, 0, p->title ? p->title : "");
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cairo_set_line_width(cr, 0.6);
    cairo_rectangle(cr, l, t, r - l, b - t);
    cairo_stroke(cr);
    if (!isfinite(x0) || !isfinite(y0)) {   /* nothing finite: said in the panel, not left blank */
        cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
        plot_text_at(cr, (l + r) / 2, (t + b) / 2, 9, 0.5, 0.5, "no finite value");
    }
    if (!isfinite(x0)) return;
    int any_y = isfinite(y0);
    if (x1 <= x0) x0 -= 0.5, x1 += 0.5;
    if (!any_y) y0 = 0, y1 = 1;
    if (y1 <= y0) y0 -= 0.5, y1 += 0.5;
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    if (any_y) {   /* a y range only when some y is finite */
        fmt_value(buf, sizeof buf, y1);
        plot_text_at(cr, l - 3, t, 8, 1, 0.5, buf);
        fmt_value(buf, sizeof buf, y0);
        plot_text_at(cr, l - 3, b, 8, 1, 0.5, buf);
    }
    fmt_value(buf, sizeof buf, x0);
    plot_text_at(cr, l, b + 4, 8, 0, 0, buf);
    fmt_value(buf, sizeof buf, x1);
    plot_text_at(cr, r, b + 4, 8, 1, 0, buf);
    draw_line(cr, p, x0, x1, y0, y1, l, r, t, b);
    cairo_set_source_rgb(cr, 0.75, 0.1, 0.1);
    for (int i = 0; i < p->n; i++)
        if (isfinite(p->x[i]) && !isfinite(p->y[i]))
            plot_nonfinite_mark(cr, l + (p->x[i] - x0) / (x1 - x0) * (r - l), t, b, p->y[i]);
    if (nf.nan + nf.pos + nf.neg)
        plot_text_at(cr, (l + r) / 2, b + 14, 8, 0.5, 0, plot_nonfinite_note(buf, sizeof buf, &nf));
}

int plot_grid(const char *path, const PlotPanel *p, int n, const char *title, char *err)
{
    if (n < 1) return err_set(err, LM_EARG, "nothing to plot: no series");
    int cols = n < GRID_MAX_COLS ? n : GRID_MAX_COLS, rows = (n + cols - 1) / cols;
    Canvas c;
    int status = plot_canvas_open(&c, path, cols * PANEL_W, GRID_TOP + rows * PANEL_H, err);
    if (status) return status;
    cairo_set_source_rgb(c.cr, 0.1, 0.1, 0.1);
    plot_text_at(c.cr, cols * PANEL_W / 2, 8, 13, 0.5, 0, title ? title : "");
    for (int k = 0; k < n; k++)
        draw_panel(c.cr, &p[k], (k % cols) * PANEL_W, GRID_TOP + (k / cols) * PANEL_H);
    return plot_canvas_close(&c, err);
}
