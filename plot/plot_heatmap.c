/* plot_heatmap.c — a heatmap (see plot.h): a grid of viridis cells with their values,
 * row and column labels, a colour bar, on a 640x400 page. Not the colour map or the
 * colour bar (plot_canvas.c). */
#include "plot.h"
#include "plot_canvas.h"

#include "err.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>

#define PLOT_W 640.0
#define PLOT_H 400.0

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
