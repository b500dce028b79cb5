/* heatmap.c — the shaded grid (gate means per layer x level shift) with a cursor, and
 * the bar histogram of one cell's gate distribution. Pure drawing into a Canvas.
 * Not an aggregator: the caller computes the means and bin counts. */
#include "heatmap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const shade_u[5] = {" ", "░", "▒", "▓", "█"};
static const char *const shade_a[10] = {" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"};

/* The shade glyph and heat colour of value v (clamped to [0,1]). */
static const char *shade(double v, const CanvasCaps *caps, int *color)
{
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    int h = (int)(v * UI_N_HEAT_COLORS);
    *color = caps->colors ? UI_COLOR_HEAT0 + (h >= UI_N_HEAT_COLORS ? UI_N_HEAT_COLORS - 1 : h)
                          : 0;
    return caps->unicode ? shade_u[(int)lround(v * 4)] : shade_a[(int)lround(v * 9)];
}

/* First index of a window of n_vis items out of n that shows item `cursor`. */
static int window_start(int n, int n_vis, int cursor)
{
    if (n_vis >= n || cursor < 0)
        return 0;
    int first = cursor - n_vis + 1;
    return first < 0 ? 0 : first > n - n_vis ? n - n_vis : first;
}

/* A cell: shade blocks, then the value ("0.42" from 6 columns, ".42" in 5, so the
 * numbers stay at 80 columns with 6 levels), then a gap column from 3. */
static void cell_draw(Canvas *c, int x, int y, int cw, float v, int is_cursor,
                      const CanvasCaps *caps)
{
    int tw = cw >= 6 ? 4 : cw == 5 ? 3 : 0, gap = cw >= 3;
    int n_shade = cw - gap - tw;
    int color = 0;
    const char *g = isnan(v) ? " " : shade(v, caps, &color);
    for (int i = 0; i < n_shade; i++)
        canvas_put(c, x + i, y, g, color, 0);
    if (tw) {
        char buf[16];
        double cl = v < 0 ? 0.0 : v > 1 ? 1.0 : (double)v;
        if (isnan(v))
            snprintf(buf, sizeof buf, "%*s", tw, "--");
        else if (tw == 4)
            snprintf(buf, sizeof buf, "%4.2f", cl);
        else if (cl >= 0.995)
            snprintf(buf, sizeof buf, "1.0");
        else
            snprintf(buf, sizeof buf, ".%02d", (int)lround(cl * 100));
        canvas_text(c, x + n_shade, y, tw, buf, UI_COLOR_DEFAULT, 0);
    }
    if (is_cursor)
        canvas_mark(c, (Rect){x, y, cw - gap, 1}, -1, UI_ATTR_REVERSE);
}

static const char *row_label(const HeatmapData *d, int i, char *buf, size_t n)
{
    if (d->row_labels && d->row_labels[i])
        return d->row_labels[i];
    snprintf(buf, n, "L%d", i);
    return buf;
}

static const char *col_label(const HeatmapData *d, int j, char *buf, size_t n)
{
    if (d->col_labels && d->col_labels[j])
        return d->col_labels[j];
    if (j < 62)
        snprintf(buf, n, "%llu", 1ULL << j);
    else
        snprintf(buf, n, "2^%d", j);
    return buf;
}

/* Column labels over the visible columns [fc, fc + n_vc); when the widest does not
 * fit in a cell, only every k-th column is labelled (never cut: "128" not "12"). */
static void col_labels_draw(Canvas *c, int x0, int y, int end, int fc, int n_vc, int cw,
                            const HeatmapData *d)
{
    char buf[32];
    int widest = 0, k = 1;
    for (int j = 0; j < n_vc; j++) {
        int len = canvas_utf8_width(col_label(d, fc + j, buf, sizeof buf));
        widest = len > widest ? len : widest;
    }
    while (k < n_vc && widest > k * cw - 1)
        k++;
    for (int j = 0; j < n_vc; j++) {
        int col = fc + j, cur = col == d->cursor_col;
        if (col % k != 0)
            continue;
        int x = x0 + j * cw;
        int room = end - x < k * cw ? end - x : k * cw;
        canvas_text(c, x, y, room, col_label(d, col, buf, sizeof buf),
                    cur ? UI_COLOR_ACCENT : UI_COLOR_DIM, cur ? UI_ATTR_BOLD : 0);
    }
}

void heatmap_draw(Canvas *c, Rect r, const HeatmapData *d, const CanvasCaps *caps)
{
    if (r.w < 3 || r.h < 3 || !d)
        return;
    int y = r.y;
    if (d->title && d->title[0])
        canvas_text_fit(c, r.x, y++, r.w, d->title, UI_COLOR_DEFAULT, UI_ATTR_BOLD,
                        caps->unicode);
    if (d->rows <= 0 || d->cols <= 0 || !d->values) {
        canvas_text(c, r.x, y, r.w, "no data yet", UI_COLOR_DIM, 0);
        return;
    }
    char buf[32];
    int lw = 0;
    for (int i = 0; i < d->rows; i++) {
        int len = canvas_utf8_width(row_label(d, i, buf, sizeof buf));
        lw = len > lw ? len : lw;
    }
    lw = lw + 1 > r.w / 3 ? r.w / 3 : lw + 1;
    int avail = r.w - lw;
    int cw = avail / d->cols;
    cw = cw > 8 ? 8 : cw < 1 ? 1 : cw;
    int n_vc = avail / cw < d->cols ? avail / cw : d->cols;
    int fc = window_start(d->cols, n_vc, d->cursor_col);
    int lab_y = y++;
    int n_vr = r.y + r.h - y < d->rows ? r.y + r.h - y : d->rows;
    if (n_vr <= 0 || n_vc <= 0)
        return;
    int fr = window_start(d->rows, n_vr, d->cursor_row);
    col_labels_draw(c, r.x + lw, lab_y, r.x + r.w, fc, n_vc, cw, d);
    for (int i = 0; i < n_vr; i++) {
        int row = fr + i, cur_row = row == d->cursor_row;
        canvas_text_fit(c, r.x, y + i, lw - 1, row_label(d, row, buf, sizeof buf),
                        cur_row ? UI_COLOR_ACCENT : UI_COLOR_DIM, cur_row ? UI_ATTR_BOLD : 0,
                        caps->unicode);
        for (int j = 0; j < n_vc; j++) {
            int col = fc + j;
            cell_draw(c, r.x + lw + j * cw, y + i, cw,
                      d->values[(size_t)row * d->cols + col],
                      cur_row && col == d->cursor_col, caps);
        }
    }
}

/* ---- histogram ---- */

static void bar_draw(Canvas *c, int x, int bottom, int bw, int rows, int count, int max,
                     int color, const CanvasCaps *caps)
{
    static const char *const eighth[8] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇"};
    int units = caps->unicode ? 8 : 1;
    long e = max > 0 ? lround((double)count / max * rows * units) : 0;
    if (count > 0 && e == 0)
        e = 1;   /* a non-empty bin stays visible */
    for (int k = 0; k < rows && e > 0; k++, e -= units) {
        const char *g = !caps->unicode ? "#" : e >= 8 ? "█" : eighth[e];
        for (int i = 0; i < bw; i++)
            canvas_put(c, x + i, bottom - k, g, color, 0);
    }
}

void histogram_draw(Canvas *c, Rect r, const HistogramData *d, const CanvasCaps *caps)
{
    if (r.w < 3 || r.h < 3 || !d)
        return;
    int max = 0;
    long total = 0;
    for (int i = 0; i < d->n_bins; i++) {
        max = d->counts[i] > max ? d->counts[i] : max;
        total += d->counts[i];
    }
    /* the heading: whole parts dropped (max, then the title's) rather than a number cut */
    char buf[128], nums[48], n_only[24];
    const char *title = d->title ? d->title : "";
    snprintf(nums, sizeof nums, "n=%ld max=%d", total, max);
    snprintf(n_only, sizeof n_only, "n=%ld", total);
    const char *parts[][2] = {{title, nums}, {title, n_only}, {"", nums}, {"", n_only}};
    int shown = 0;
    for (size_t k = 0; k < sizeof parts / sizeof parts[0] && !shown; k++) {
        snprintf(buf, sizeof buf, "%s%s%s", parts[k][0], parts[k][0][0] ? "  " : "",
                 parts[k][1]);
        if (canvas_utf8_width(buf) <= r.w) {
            canvas_text(c, r.x, r.y, r.w, buf, UI_COLOR_DEFAULT, 0);
            shown = 1;
        }
    }
    if (!shown)   /* not even "n=..." fits: the title, cut with an ellipsis */
        canvas_text_fit(c, r.x, r.y, r.w, title, UI_COLOR_DEFAULT, 0, caps->unicode);
    if (d->n_bins <= 0 || !d->counts)
        return;
    int rows = r.h - 2, bw = r.w / d->n_bins;
    int n_vis = bw >= 1 ? d->n_bins : r.w;
    bw = bw < 1 ? 1 : bw;
    int bar_w = bw >= 3 ? bw - 1 : bw;
    int color = !caps->colors ? 0 : d->color > 0 ? d->color : UI_COLOR_SERIES1;
    for (int i = 0; i < n_vis; i++)
        bar_draw(c, r.x + i * bw, r.y + r.h - 2, bar_w, rows, d->counts[i], max, color, caps);
    /* bin edges: the last one right-aligned first, then left to right where they fit */
    int ly = r.y + r.h - 1, next_free = r.x;
    snprintf(buf, sizeof buf, "%.2g", d->lo + (d->hi - d->lo) * n_vis / d->n_bins);
    int limit = r.x + r.w - (int)strlen(buf);
    canvas_text(c, limit, ly, r.w, buf, UI_COLOR_DIM, 0);
    for (int i = 0; i < n_vis; i++) {
        double v = d->lo + (d->hi - d->lo) * i / d->n_bins;
        snprintf(buf, sizeof buf, "%.2g", fabs(v) < 1e-12 ? 0.0 : v);
        int len = (int)strlen(buf), lx = r.x + i * bw;
        if (lx < next_free || lx + len >= limit)
            continue;
        canvas_text(c, lx, ly, len, buf, UI_COLOR_DIM, 0);
        next_free = lx + len + 1;
    }
}
