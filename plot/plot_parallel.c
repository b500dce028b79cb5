/* plot_parallel.c — parallel coordinates (Inselberg, "The plane with parallel
 * coordinates", The Visual Computer 1985) for a sweep's trials: one vertical axis per
 * setting plus one for the metric, a polyline per trial coloured by its metric on
 * viridis with a colour bar. The caller (commands/cmd_plot.c) places every value on its
 * axis in [0, 1] (log or categorical spacing, sweep_analysis.h) and names the ticks;
 * this file only draws. */
#include "plot.h"
#include "plot_canvas.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PAR_W 720.0
#define PAR_H 420.0

typedef struct {
    double left, right, top, bottom;
    int n_axes;
} ParFrame;

static double axis_x(const ParFrame *f, int k)
{
    return f->n_axes < 2 ? f->left : f->left + (f->right - f->left) * k / (f->n_axes - 1);
}

static double axis_y(const ParFrame *f, double t)
{
    return f->bottom - t * (f->bottom - f->top);
}

static void draw_axis(cairo_t *cr, const ParFrame *f, int k, const PlotParAxis *a)
{
    double x = axis_x(f, k);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    cairo_set_line_width(cr, 1.2);
    cairo_move_to(cr, x, f->top);
    cairo_line_to(cr, x, f->bottom);
    cairo_stroke(cr);
    plot_text_at(cr, x, f->top - 16, 11, 0.5, 0, a->label ? a->label : "");
    for (int t = 0; t < a->n_ticks && t < 12; t++) {
        double y = axis_y(f, a->tick_pos[t]);
        cairo_move_to(cr, x - 3, y);
        cairo_line_to(cr, x + 3, y);
        cairo_stroke(cr);
        /* labels right of the axis, the last axis's left of it */
        int last = k == f->n_axes - 1;
        cairo_set_source_rgba(cr, 1, 1, 1, 0.8);
        cairo_text_extents_t e;
        cairo_set_font_size(cr, 9);
        char safe[1024];
        cairo_text_extents(cr, plot_text_safe(safe, sizeof safe, a->tick_label[t]), &e);
        double bx = last ? x - 5 - e.x_advance - 1 : x + 4;
        cairo_rectangle(cr, bx, y - 6, e.x_advance + 2, 11);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        plot_text_at(cr, last ? x - 5 : x + 5, y, 9, last ? 1 : 0, 0.5, a->tick_label[t]);
        cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    }
}

/* Line order: highest value first (drawn under), NaN values first of all. */
static const double *sort_values_;
static int by_value_desc(const void *a, const void *b)
{
    double x = sort_values_[*(const int *)a], y = sort_values_[*(const int *)b];
    if (isnan(x) != isnan(y)) return isnan(x) ? -1 : 1;
    return x > y ? -1 : x < y ? 1 : 0;
}

static void draw_line(cairo_t *cr, const ParFrame *f, const double *pos, double t, int best,
                      int has_value)
{
    double rgb[3] = {0.6, 0.6, 0.6};
    if (has_value) plot_viridis(t, rgb);
    cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], has_value ? 0.9 : 0.5);
    cairo_set_line_width(cr, best ? 3.0 : 1.4);
    int pen = 0;
    for (int k = 0; k < f->n_axes; k++) {
        if (!isfinite(pos[k])) {
            pen = 0;
            continue;
        }
        double x = axis_x(f, k), y = axis_y(f, fmin(1, fmax(0, pos[k])));
        if (pen) cairo_line_to(cr, x, y);
        else cairo_move_to(cr, x, y);
        pen = 1;
    }
    cairo_stroke(cr);
}

int plot_parallel(const char *path, const PlotParAxis *axes, int n_axes, const double *pos,
                  const double *value, int n_lines, double c_lo, double c_hi,
                  const char *c_label, const PlotAxes *ax, char *err)
{
    if (n_axes < 2 || n_lines < 1)
        return err_set(err, LM_EARG, "nothing to plot: parallel coordinates need 2 axes and a "
                       "line (have %d and %d)", n_axes, n_lines);
    int *order = malloc((size_t)n_lines * sizeof *order);
    if (!order) return err_set(err, LM_ENOMEM, "out of memory plotting");
    Canvas c;
    int status = plot_canvas_open(&c, path, PAR_W, PAR_H, err);
    if (status) return free(order), status;
    cairo_t *cr = c.cr;
    ParFrame f = {.left = 40, .right = PAR_W - 110, .top = 58, .bottom = PAR_H - 30,
                  .n_axes = n_axes};
    for (int i = 0; i < n_lines; i++) order[i] = i;
    sort_values_ = value;
    qsort(order, (size_t)n_lines, sizeof *order, by_value_desc);
    int best = isfinite(value[order[n_lines - 1]]) ? order[n_lines - 1] : -1;
    for (int j = 0; j < n_lines; j++) {
        int i = order[j];
        double t = c_hi > c_lo ? (value[i] - c_lo) / (c_hi - c_lo) : 0.5;
        draw_line(cr, &f, pos + (size_t)i * n_axes, t, i == best, isfinite(value[i]));
    }
    for (int k = 0; k < n_axes; k++) draw_axis(cr, &f, k, &axes[k]);
    plot_colorbar(cr, PAR_W - 80, f.top, f.bottom, c_lo, c_hi, c_label);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    if (ax && ax->title) plot_text_at(cr, PAR_W / 2, 12, 14, 0.5, 0, ax->title);
    free(order);
    return plot_canvas_close(&c, err);
}
