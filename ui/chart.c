/* chart.c — the chart widget: range finding, axes (their ticks: chart_ticks.c), legend,
 * and series drawn as dots in a sub-cell grid
 * (braille 2x4 per cell, or one ASCII marker per cell), lines joined with Bresenham.
 * Long series are bucketed per dot column (min/max span), so drawing is O(n + grid).
 * NaN and infinite values are marked on the plot's top or bottom row at their x and
 * counted in the legend row (the x range spans them), so a diverged run shows where.
 * Not a data store: the caller passes plain arrays every frame. */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LABEL_LEN 16

typedef struct {
    int x0, y0, cols, rows;   /* plot area in cells */
    int dx, dy;               /* dots per cell */
    double xmin, xmax;        /* data space */
    double ymin, ymax;        /* data space, log10 of it in log mode */
    int log_y;
} Frame;

/* ---- ranges and ticks ---- */

static int y_ok(double y, int log_y) { return isfinite(y) && (!log_y || y > 0); }

/* Points of the series whose y is NaN or infinite (x finite), by kind: marked, not drawn. */
typedef struct {
    long nan, pos, neg;
} NonFinite;

/* Range of the drawable points of all series; returns how many there are. The x range
 * spans every point with a finite x, drawable or not (a run that diverged reaches its
 * last step on the axis, and the loss and perplexity panes of a run agree), and *nf
 * counts the non-finite ones. */
static long data_range(const ChartData *d, const ChartBand *bands, double *xmin, double *xmax, double *ymin,
                       double *ymax, NonFinite *nf)
{
    long count = 0;
    int ns = d->n_series < CHART_MAX_SERIES ? d->n_series : CHART_MAX_SERIES;
    *xmin = *ymin = INFINITY;
    *xmax = *ymax = -INFINITY;
    *nf = (NonFinite){0, 0, 0};
    for (int s = 0; s < ns; s++) {
        const ChartSeries *ps = &d->series[s];
        if (!ps->y)
            continue;
        for (long i = 0; i < ps->n; i++) {
            double x = ps->x ? ps->x[i] : (double)i, y = ps->y[i];
            if (!isfinite(x))
                continue;
            *xmin = fmin(*xmin, x);
            *xmax = fmax(*xmax, x);
            if (!isfinite(y)) {
                nf->nan += isnan(y);
                nf->pos += y > 0;
                nf->neg += y < 0;
                continue;
            }
            if (!y_ok(y, d->log_y))
                continue;
            *ymin = fmin(*ymin, y);
            *ymax = fmax(*ymax, y);
            const ChartBand *b = bands ? &bands[s] : NULL;
            if (b && b->lo && y_ok(b->lo[i], d->log_y)) *ymin = fmin(*ymin, b->lo[i]);
            if (b && b->hi && y_ok(b->hi[i], d->log_y)) *ymax = fmax(*ymax, b->hi[i]);
            count++;
        }
    }
    return count;
}

/* ---- dot grid ---- */

static int map_x(const Frame *f, double x)
{
    double t = (x - f->xmin) / (f->xmax - f->xmin) * (f->cols * f->dx - 1);
    return (int)lround(fmin(fmax(t, 0), f->cols * f->dx - 1));
}

static int map_y(const Frame *f, double y)
{
    if (f->log_y)
        y = log10(y);
    double t = (f->ymax - y) / (f->ymax - f->ymin) * (f->rows * f->dy - 1);
    return (int)lround(fmin(fmax(t, 0), f->rows * f->dy - 1));
}

/* Braille dot bits of a glyph, 0 when it is not a braille pattern. */
static int braille_bits(const char *g)
{
    const unsigned char *u = (const unsigned char *)g;
    if (u[0] == 0xE2 && (u[1] & 0xFC) == 0xA0 && (u[2] & 0xC0) == 0x80 && !u[3])
        return ((u[1] & 0x03) << 6) | (u[2] & 0x3F);
    return 0;
}

typedef struct {
    const Frame *f;
    Canvas *c;
    int color, attr;
    const char *marker;       /* ASCII mode glyph, NULL in braille mode */
} Pen;

static void dot(const Pen *p, int px, int py)
{
    const Frame *f = p->f;
    if (px < 0 || py < 0 || px >= f->cols * f->dx || py >= f->rows * f->dy)
        return;
    int cx = f->x0 + px / f->dx, cy = f->y0 + py / f->dy;
    if (p->marker) {
        canvas_put(p->c, cx, cy, p->marker, p->color, p->attr);
        return;
    }
    static const int bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
    int b = braille_bits(canvas_glyph(p->c, cx, cy)) | bit[px % 2][py % 4];
    char g[4] = {(char)0xE2, (char)(0xA0 | (b >> 6)), (char)(0x80 | (b & 0x3F)), 0};
    canvas_put(p->c, cx, cy, g, p->color, p->attr);
}

static void line(const Pen *p, int x0, int y0, int x1, int y1)
{
    int dx = x1 > x0 ? x1 - x0 : x0 - x1, sx = x0 < x1 ? 1 : -1;
    int dy = y1 > y0 ? y0 - y1 : y1 - y0, sy = y0 < y1 ? 1 : -1;
    int e = dx + dy;
    for (;;) {
        dot(p, x0, y0);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}

/* Points of one dot column, collected so a long series costs O(n). */
typedef struct {
    int col, first, last, lo, hi, open;
} Bucket;

/* Draws a bucket's vertical span, joined to the previous bucket when `join`. */
static void bucket_flush(const Pen *p, Bucket *b, Bucket *prev, int join)
{
    if (!b->open)
        return;
    if (join && prev->open)
        line(p, prev->col, prev->last, b->col, b->first);
    line(p, b->col, b->lo, b->col, b->hi);
    *prev = *b;
    b->open = 0;
}

static void draw_series(const Pen *p, const ChartSeries *s, int log_y)
{
    const Frame *f = p->f;
    Bucket b = {0}, prev = {0};
    for (long i = 0; i < s->n; i++) {
        double x = s->x ? s->x[i] : (double)i, y = s->y[i];
        if (!isfinite(x) || !y_ok(y, log_y)) {
            bucket_flush(p, &b, &prev, 1);
            prev.open = 0;     /* a gap breaks the line */
            continue;
        }
        int px = map_x(f, x), py = map_y(f, y);
        if (s->style == CHART_POINTS) {
            dot(p, px, py);
            continue;
        }
        if (b.open && b.col == px) {
            b.last = py;
            b.lo = py < b.lo ? py : b.lo;
            b.hi = py > b.hi ? py : b.hi;
            continue;
        }
        bucket_flush(p, &b, &prev, 1);
        b = (Bucket){px, py, py, py, py, 1};
    }
    bucket_flush(p, &b, &prev, 1);
}

/* The band of s: every dot column between two drawable neighbours filled from hi to lo
 * (linear between the points), so a group's spread reads as a shaded area. */
static void draw_band(const Pen *p, const ChartSeries *ps, const ChartBand *s, int log_y)
{
    const Frame *f = p->f;
    long prev = -1;
    for (long i = 0; i < ps->n; i++) {
        double x = ps->x ? ps->x[i] : (double)i;
        if (!isfinite(x) || !y_ok(s->lo[i], log_y) || !y_ok(s->hi[i], log_y)) {
            prev = -1;
            continue;
        }
        if (prev < 0) {
            line(p, map_x(f, x), map_y(f, s->hi[i]), map_x(f, x), map_y(f, s->lo[i]));
            prev = i;
            continue;
        }
        double x0 = ps->x ? ps->x[prev] : (double)prev;
        int c0 = map_x(f, x0), c1 = map_x(f, x);
        for (int col = c0 + 1; col <= c1; col++) {
            double u = c1 > c0 ? (double)(col - c0) / (c1 - c0) : 1;
            double lo = s->lo[prev] + u * (s->lo[i] - s->lo[prev]);
            double hi = s->hi[prev] + u * (s->hi[i] - s->hi[prev]);
            line(p, col, map_y(f, hi), col, map_y(f, lo));
        }
        prev = i;
    }
}

/* ---- axes, labels, legend ---- */

static int series_color(const ChartData *d, int s, const CanvasCaps *caps)
{
    if (!caps->colors)
        return 0;
    int c = d->series[s].color;
    return c > 0 ? c : UI_COLOR_SERIES1 + s % UI_N_SERIES_COLORS;
}

static int series_attr(int s, const CanvasCaps *caps)
{
    static const int mono[4] = {0, UI_ATTR_BOLD, UI_ATTR_DIM, UI_ATTR_UNDERLINE};
    return caps->colors ? 0 : mono[s % 4];
}

static const char *series_marker(int s)
{
    static const char *m[CHART_MAX_SERIES] = {"*", "+", "o", "x", "#", "@", "%", "&"};
    return m[s % CHART_MAX_SERIES];
}

/* The legend's entries from column x up to end: a sample of each labelled series' line
 * and its label. Returns the columns the whole legend wants (drawn or not). */
static int draw_legend(Canvas *c, Rect r, int x, int end, const ChartData *d,
                       const CanvasCaps *caps)
{
    int want = 0, ns = d->n_series < CHART_MAX_SERIES ? d->n_series : CHART_MAX_SERIES;
    for (int s = 0; s < ns; s++) {
        const char *label = d->series[s].label;
        if (!label || !label[0])
            continue;
        want += 3 + canvas_utf8_width(label) + 2;
        if (!c || x >= end - 2)
            continue;
        const char *sample = caps->unicode ? "━" : series_marker(s);
        canvas_put(c, x, r.y, sample, series_color(d, s, caps), series_attr(s, caps));
        canvas_put(c, x + 1, r.y, sample, series_color(d, s, caps), series_attr(s, caps));
        x += 3;
        x += canvas_text_fit(c, x, r.y, end - x, label, UI_COLOR_DEFAULT, 0, caps->unicode);
        x += 2;
    }
    return want;
}

/* ---- non-finite points ---- */

/* A non-finite value's mark: NaN ×, +inf ▲ (both on the top row), -inf ▼ (bottom row). */
static const char *nonfinite_glyph(double y, int unicode)
{
    if (isnan(y))
        return unicode ? "×" : "!";
    return y > 0 ? (unicode ? "▲" : "^") : (unicode ? "▼" : "v");
}

/* Marks each non-finite point of s at its x column, on the top row (NaN, +inf) or the
 * bottom row (-inf) of the plot area, bold in the error colour: a run that diverged
 * shows where, and does not look as if it stopped. */
static void draw_nonfinite(Canvas *c, const Frame *f, const ChartSeries *s,
                           const CanvasCaps *caps)
{
    int color = caps->colors ? UI_COLOR_ERROR : 0, last_col = -1;
    const char *last = NULL;
    for (long i = 0; i < s->n; i++) {
        double x = s->x ? s->x[i] : (double)i, y = s->y[i];
        if (!isfinite(x) || isfinite(y))
            continue;
        const char *g = nonfinite_glyph(y, caps->unicode);
        int col = f->x0 + map_x(f, x) / f->dx;
        if (col == last_col && g == last)   /* a long divergence: one put a column */
            continue;
        canvas_put(c, col, y < 0 ? f->y0 + f->rows - 1 : f->y0, g, color, UI_ATTR_BOLD);
        last_col = col;
        last = g;
    }
}

/* The note of nf in one of three forms, longest first (0: "4 non-finite points marked:
 * 3 nan ×, 1 +inf ▲", or "3 nan points marked ×" when of one kind; 1: "4 nan/inf ×▲";
 * 2: "4 nan/inf"); returns its width. */
static int nonfinite_note(char *buf, int n, const NonFinite *nf, int form, int unicode)
{
    static const char *const what[3] = {"nan", "+inf", "-inf"};
    static const double v[3] = {NAN, INFINITY, -INFINITY};
    long k[3] = {nf->nan, nf->pos, nf->neg}, all = k[0] + k[1] + k[2];
    int kinds = (k[0] > 0) + (k[1] > 0) + (k[2] > 0), len;
    if (form == 0 && kinds == 1) {
        int i = k[0] ? 0 : k[1] ? 1 : 2;
        snprintf(buf, (size_t)n, "%ld %s point%s marked %s", all, what[i], all > 1 ? "s" : "",
                 nonfinite_glyph(v[i], unicode));
        return canvas_utf8_width(buf);
    }
    len = form ? snprintf(buf, (size_t)n, "%ld nan/inf%s", all, form == 1 ? " " : "")
               : snprintf(buf, (size_t)n, "%ld non-finite points marked:", all);
    for (int i = 0, first = 1; i < 3 && form < 2; i++) {
        if (!k[i] || len >= n)
            continue;
        const char *g = nonfinite_glyph(v[i], unicode);
        if (form == 1)
            len += snprintf(buf + len, (size_t)(n - len), "%s", g);
        else
            len += snprintf(buf + len, (size_t)(n - len), "%s %ld %s %s", first ? "" : ",",
                            k[i], what[i], g);
        first = 0;
    }
    return canvas_utf8_width(buf);
}

/* The legend row: the series' entries from x, and, when some points are non-finite, their
 * note at the right end in the error colour, in the longest form that leaves the entries
 * whole (else half the row, else the shortest that fits). */
static void draw_legend_row(Canvas *c, Rect r, int x, const ChartData *d, const NonFinite *nf,
                            const CanvasCaps *caps)
{
    int end = r.x + r.w;
    if (nf->nan + nf->pos + nf->neg) {
        char note[3][128];
        int w[3], room = end - x, want = draw_legend(NULL, r, x, end, d, caps), pick = -1;
        for (int k = 0; k < 3; k++)
            w[k] = nonfinite_note(note[k], sizeof note[k], nf, k, caps->unicode);
        for (int k = 0; k < 3 && pick < 0; k++)
            pick = w[k] + 1 <= room - want ? k : -1;
        for (int k = 0; k < 3 && pick < 0; k++)
            pick = w[k] <= room / 2 || (k == 2 && w[k] <= room) ? k : -1;
        if (pick >= 0) {
            canvas_text(c, end - w[pick], r.y, w[pick], note[pick],
                        caps->colors ? UI_COLOR_ERROR : 0, UI_ATTR_BOLD);
            end -= w[pick] + 1;
        }
    }
    draw_legend(c, r, x, end, d, caps);
}

/* The y axis line with tick marks and labels right-aligned in [r.x, f->x0 - 1). */
static void draw_y_axis(Canvas *c, Rect r, const Frame *f, const Ticks *t,
                        char lab[][LABEL_LEN], int lw, int unicode)
{
    int ax = f->x0 - 1;
    for (int y = f->y0; y < f->y0 + f->rows; y++)
        canvas_put(c, ax, y, unicode ? "│" : "|", UI_COLOR_DIM, 0);
    int last_row = -1;
    for (int i = t->n - 1; i >= 0; i--) {     /* top (largest) first */
        int row = f->y0 + map_y(f, t->v[i]) / f->dy;
        if (row == last_row)
            continue;
        last_row = row;
        canvas_put(c, ax, row, unicode ? "┤" : "+", UI_COLOR_DIM, 0);
        int len = (int)strlen(lab[i]);
        if (lw > 0)
            canvas_text(c, r.x + lw - len, row, lw, lab[i], UI_COLOR_DIM, 0);
    }
}

/* The x axis row, tick marks, and (when label_row >= 0) tick labels that neither
 * overlap each other nor the x label at the right end. */
static void draw_x_axis(Canvas *c, Rect r, const Frame *f, const Ticks *t,
                        const char (*labels)[LABEL_LEN], int label_row,
                        const char *x_label, int unicode)
{
    int ay = f->y0 + f->rows;
    for (int x = f->x0; x < f->x0 + f->cols; x++)
        canvas_put(c, x, ay, unicode ? "─" : "-", UI_COLOR_DIM, 0);
    canvas_put(c, f->x0 - 1, ay, unicode ? "└" : "+", UI_COLOR_DIM, 0);
    int limit = r.x + r.w;
    if (label_row >= 0 && x_label && x_label[0]) {
        int lw = canvas_utf8_width(x_label);
        if (lw < r.w / 2) {
            limit = r.x + r.w - lw;
            canvas_text(c, limit, label_row, lw, x_label, UI_COLOR_DIM, 0);
            limit--;
        }
    }
    int next_free = r.x;
    for (int i = 0; i < t->n; i++) {
        int col = f->x0 + map_x(f, t->v[i]) / f->dx;
        canvas_put(c, col, ay, unicode ? "┬" : "+", UI_COLOR_DIM, 0);
        if (label_row < 0)
            continue;
        char lab[LABEL_LEN];
        if (labels)
            snprintf(lab, sizeof lab, "%s", labels[i]);
        else
            chart_format_tick(lab, sizeof lab, t->v[i], t->step);
        int len = (int)strlen(lab), lx = col - len / 2;
        if (lx < r.x)
            lx = r.x;
        if (lx + len > limit)
            lx = limit - len;
        if (lx < next_free)
            continue;
        canvas_text(c, lx, label_row, len, lab, UI_COLOR_DIM, 0);
        next_free = lx + len + 1;
    }
}

/* ---- the widget ---- */

/* Finds the y range and ticks for `rows` plot rows; returns 0 when nothing to draw. */
static long setup_y(Frame *f, Ticks *t, const ChartData *d, const ChartBand *bands, double *xmin,
                    double *xmax, NonFinite *nf)
{
    double ymin, ymax;
    long count = data_range(d, bands, xmin, xmax, &ymin, &ymax, nf);
    if (!isfinite(*xmin)) {
        *xmin = 0;
        *xmax = 1;
    }
    if (count == 0) {
        ymin = d->log_y ? 1 : 0;
        ymax = d->log_y ? 10 : 1;
    }
    if (d->fixed_y && d->y_hi > d->y_lo && (!d->log_y || d->y_lo > 0)) {
        ymin = d->y_lo;
        ymax = d->y_hi;
    }
    int max_ticks = f->rows / 2 > 1 ? f->rows / 2 : 1;
    if (d->log_y) {
        chart_ticks_log(t, &ymin, &ymax, f->rows);
        if (t->n < 3)   /* under a decade (2..5): 1-2-5 gives two ticks; linear ones read */
            chart_ticks_linear(t, ymin, ymax, chart_nice_step(ymax - ymin, max_ticks));
        ymin = log10(ymin);
        ymax = log10(ymax);
    } else {
        chart_widen(&ymin, &ymax);
        double step = chart_nice_step(ymax - ymin, max_ticks);
        if (!d->fixed_y)
            chart_snap_range(&ymin, &ymax, &step, f->rows);
        chart_ticks_linear(t, ymin, ymax, step);
    }
    chart_widen(xmin, xmax);
    f->ymin = ymin;
    f->ymax = ymax;
    f->log_y = d->log_y;
    return count;
}

/* No drawable point: "no data yet", or "no finite value to draw" with the non-finite
 * points marked where they are (a perplexity that overflowed at every step). */
static void draw_empty(Canvas *c, const Frame *f, const ChartData *d, const CanvasCaps *caps)
{
    long points = 0;
    int ns = d->n_series < CHART_MAX_SERIES ? d->n_series : CHART_MAX_SERIES;
    for (int s = 0; s < ns; s++)
        points += d->series[s].y ? d->series[s].n : 0;
    const char *msg = !points ? "no data yet"
                      : d->log_y ? "no finite value > 0 to draw" : "no finite value to draw";
    int len = (int)strlen(msg), mx = f->x0 + (f->cols - len) / 2;
    canvas_text(c, mx < f->x0 ? f->x0 : mx, f->y0 + (f->rows - 1) / 2, f->cols, msg,
                UI_COLOR_DIM, 0);
    for (int s = 0; s < ns; s++)
        if (d->series[s].y)
            draw_nonfinite(c, f, &d->series[s], caps);
}

void chart_draw(Canvas *c, Rect r, const ChartData *d, const CanvasCaps *caps)
{
    chart_draw_framed(c, r, d, NULL, caps, NULL);
}

void chart_draw_bands(Canvas *c, Rect r, const ChartData *d, const ChartBand *bands,
                     const CanvasCaps *caps)
{
    chart_draw_framed(c, r, d, bands, caps, NULL);
}

void chart_draw_framed(Canvas *c, Rect r, const ChartData *d, const ChartBand *bands,
                      const CanvasCaps *caps, ChartFrame *frame)
{
    if (frame)
        frame->valid = 0;
    if (r.w < 3 || r.h < 3 || !d)
        return;
    int legend = r.h >= 6, xlabels = r.h >= 4;
    Frame f = {0};
    f.dx = caps->unicode ? 2 : 1;
    f.dy = caps->unicode ? 4 : 1;
    f.y0 = r.y + legend;
    f.rows = r.h - legend - xlabels - 1;
    Ticks yt, xt;
    NonFinite nf;
    long count = setup_y(&f, &yt, d, bands, &f.xmin, &f.xmax, &nf);
    char ylab[MAX_TICKS][LABEL_LEN];
    int lw = 0;
    for (int i = 0; i < yt.n; i++) {
        chart_format_tick(ylab[i], LABEL_LEN, yt.v[i], yt.step > 0 ? yt.step : yt.v[i]);
        int len = (int)strlen(ylab[i]);
        lw = len > lw ? len : lw;
    }
    if (r.w - lw - 1 < 4 || lw > r.w / 3)
        lw = 0;
    f.x0 = r.x + lw + 1;
    f.cols = r.w - lw - 1;
    char xlab[MAX_TICKS][LABEL_LEN];
    int xlabelled = 0;
    if (d->x_log10 && count > 0) {   /* ticks at 1-2-5 values, placed at their log10 */
        double lo = pow(10, f.xmin), hi = pow(10, f.xmax);
        chart_ticks_log(&xt, &lo, &hi, f.cols / 8 > 1 ? f.cols / 8 : 1);
        int k = 0;
        for (int i = 0; i < xt.n; i++) {
            double lv = log10(xt.v[i]);
            if (lv < f.xmin - 1e-9 || lv > f.xmax + 1e-9) continue;
            chart_format_tick(xlab[k], LABEL_LEN, xt.v[i], xt.v[i]);
            xt.v[k++] = lv;
        }
        xt.n = k;
        xlabelled = 1;
    } else {
        chart_ticks_linear(&xt, f.xmin, f.xmax, chart_nice_step(f.xmax - f.xmin, f.cols / 8));
    }
    draw_y_axis(c, r, &f, &yt, ylab, lw, caps->unicode);
    draw_x_axis(c, r, &f, &xt, xlabelled ? (const char (*)[LABEL_LEN])xlab : NULL,
                xlabels ? r.y + r.h - 1 : -1, d->x_label, caps->unicode);
    if (legend)
        draw_legend_row(c, r, f.x0, d, &nf, caps);
    int ns = d->n_series < CHART_MAX_SERIES ? d->n_series : CHART_MAX_SERIES;
    if (count == 0) {   /* none yet, or every point NaN/Inf (a perplexity that overflowed) */
        draw_empty(c, &f, d, caps);
        return;
    }
    for (int s = 0; bands && s < ns; s++) {   /* bands first: lines stay readable on top */
        if (!d->series[s].y || !bands[s].lo || !bands[s].hi)
            continue;
        Pen p = {&f, c, series_color(d, s, caps), UI_ATTR_DIM, caps->unicode ? NULL : ":"};
        draw_band(&p, &d->series[s], &bands[s], d->log_y);
    }
    if (frame)
        *frame = (ChartFrame){f.x0, f.y0, f.cols, f.rows, f.xmin, f.xmax, f.ymin, f.ymax,
                             f.log_y, 1};
    for (int s = 0; s < ns; s++) {
        if (!d->series[s].y)
            continue;
        Pen p = {&f, c, series_color(d, s, caps), series_attr(s, caps),
                 caps->unicode ? NULL : series_marker(s)};
        draw_series(&p, &d->series[s], d->log_y);
    }
    for (int s = 0; s < ns; s++)   /* on top of every line */
        if (d->series[s].y)
            draw_nonfinite(c, &f, &d->series[s], caps);
}
