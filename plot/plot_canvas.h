/* plot_canvas.h — what plot/'s files share (not a public API: commands use plot.h): a
 * page drawn by cairo into a file through outfile, text placement, a curve's path and
 * the marks of non-finite points, and the viridis colour map. Defined in plot_canvas.c. */
#ifndef LM_PLOT_CANVAS_H
#define LM_PLOT_CANVAS_H

#include "outfile.h"
#include "plot.h"

#include <cairo.h>
#include <stddef.h>

enum { FMT_NONE, FMT_SVG, FMT_PNG, FMT_PDF };

typedef struct {
    cairo_surface_t *surf;
    cairo_t *cr;
    int fmt;
    const char *path;
    OutFile out;     /* the file being written (see outfile.h) */
    int write_err;   /* errno of the first failed write, 0 if none */
} Canvas;

/* Opens a page of w x h points (white, DejaVu Sans) drawing into path. LM_EARG for an
 * unknown extension, LM_EIO when it cannot start. */
int plot_canvas_open(Canvas *c, const char *path, double w, double h, char *err);
/* Finishes the page and commits the file (LM_EIO / LM_ENOSPC on failure). */
int plot_canvas_close(Canvas *c, char *err);
/* Text anchored at (x, y): ax 0/0.5/1 = its left/centre/right there, ay 0/0.5/1 = its
 * cap top/middle/baseline there. */
/* t escaped for drawing (safetext: invalid UTF-8, controls and bidi controls shown as
 * \xNN, \e, \u202e), into out (cap bytes); returns out. */
const char *plot_text_safe(char *out, size_t cap, const char *t);
void plot_text_at(cairo_t *cr, double x, double y, double size, double ax, double ay,
                  const char *t);
/* A vertical viridis colour bar from lo (bottom) to hi (top) at x, its end values beside
 * it and, unless NULL, label rotated along it. */
void plot_colorbar(cairo_t *cr, double x, double top, double bottom, double lo, double hi,
                   const char *label);
/* viridis at t in [0, 1] into rgb[3]. */
void plot_viridis(double t, double *rgb);


/* Counts y into nf when it is NaN or infinite; returns 1 then, else 0. */
int plot_nonfinite_count(PlotNonFinite *nf, double y);

/* The path of a curve through n points (x[i], y[i]) mapped linearly onto [l, r] x [b, t]
 * (y up), broken at non-finite points: per quarter-point column only its first, lowest,
 * highest and last points (M4: core/base/m4.h, the range mode), in their order, so that a line
 * of millions of points draws as through all of them at a few thousand segments (cairo
 * took minutes and gigabytes on 5 M). Lone points (between gaps) get a dot of radius
 * dot when dot > 0. Ends with the path stroked. */
void plot_curve(cairo_t *cr, const double *x, const double *y, int n, double x0, double x1,
                double y0, double y1, double l, double r, double b, double t, double dot);
/* The mark of a non-finite y at x in the current source colour, the figures' version of
 * the dashboard's (ui/chart.c): NaN a cross and +inf a triangle pointing up, both at the
 * top edge; -inf a triangle pointing down at the bottom edge. */
void plot_nonfinite_mark(cairo_t *cr, double x, double top, double bottom, double y);
/* "3 non-finite points marked: 2 nan ×, 1 +inf ▲" ("2 nan points marked ×" of one kind)
 * into buf; "" when there are none. Returns buf. */
const char *plot_nonfinite_note(char *buf, size_t cap, const PlotNonFinite *nf);

#endif
