/* dash_draw.c — drawing helpers shared by the dashboard's views (see dash_draw.h).
 * Not a widget: the widgets are plot.c, heatmap.c, table.c, textpane.c, statusbar.c. */
#include "dash_draw.h"
#include "smooth.h"
#include "runkeys.h"
#include "dash_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double *dash_draw_scratch(Dashboard *d, long need)
{
    if (need > d->scratch_cap) {
        double *p = realloc(d->scratch, (size_t)need * sizeof *p);
        if (!p)
            return NULL;
        d->scratch = p;
        d->scratch_cap = need;
    }
    return d->scratch;
}

static int is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

size_t dash_draw_wrap_row(const char *s, size_t len, int w, size_t *end)
{
    size_t i = 0, brk = 0;
    int cols = 0;
    if (w < 1)
        w = 1;
    while (i < len && s[i] != '\n') {
        int n = canvas_utf8_len(s + i, len - i);
        int gw = !n || is_blank(s[i]) ? 1 : canvas_glyph_width(s + i, n);  /* CJK: 2 */
        if (cols + gw > w && cols > 0)
            break;
        if (is_blank(s[i]))
            brk = i;
        i += n ? (size_t)n : 1;
        cols += gw;
    }
    if (i >= len || s[i] == '\n') {
        *end = i;
        return i < len ? i + 1 : i;
    }
    size_t next = i;
    if (is_blank(s[i])) {
        *end = i;
    } else if (brk > 0) {   /* the row would cut a word: break at its last space */
        *end = brk;
        next = brk;
    } else {
        *end = i;           /* a word longer than the row: cut it */
        return i;
    }
    while (next < len && is_blank(s[next]))
        next++;
    return next;
}

/* Walks text as word-wrapped rows (dash_draw_wrap_row); draws rows [skip, skip + r.h)
 * when c is not NULL. Returns the number of rows the text takes. */
static int wrap_walk(Canvas *c, Rect r, const char *text, int color, int skip)
{
    int row = 0;
    size_t len = strlen(text);
    for (size_t i = 0; i < len; row++) {
        size_t end, next = dash_draw_wrap_row(text + i, len - i, r.w, &end);
        int col = 0;
        for (size_t k = i; c && row >= skip && row - skip < r.h && k < i + end;) {
            int n = canvas_utf8_len(text + k, i + end - k);
            const char *g = n ? text + k : "?";
            if (is_blank(text[k]))
                g = " ";
            int gw = canvas_glyph_width(g, n && g == text + k ? n : 1);
            canvas_put(c, r.x + col, r.y + row - skip, g, color, 0);
            col += gw;
            k += n ? (size_t)n : 1;
        }
        i += next;
    }
    return row;
}

void dash_draw_wrap(Canvas *c, Rect r, const char *text, int color, int from_top)
{
    if (r.w < 1 || r.h < 1 || !text)
        return;
    int skip = 0;
    if (!from_top) {
        int total = wrap_walk(NULL, r, text, color, 0);
        skip = total > r.h ? total - r.h : 0;
    }
    wrap_walk(c, r, text, color, skip);
}

void dash_draw_message(Canvas *c, Rect in, const char *text)
{
    dash_draw_wrap(c, (Rect){in.x + 1, in.y + in.h / 2 - 1, in.w - 2, 3}, text, UI_COLOR_DIM,
                   1);
}

const char *dash_draw_x_label(const Dashboard *d)
{
    static const char *const labels[] = {"step", "tokens", "seconds"};
    return labels[d->x_axis];
}

static double curve_x_scale(const Dashboard *d, const DashCurve *cv)
{
    if (d->x_axis == DASH_X_STEPS)
        return 1;
    double v = d->x_axis == DASH_X_TOKENS ? cv->tokens_per_step : cv->seconds_per_step;
    return v > 0 ? v : 1;
}

int dash_draw_run_color(long id)
{
    return UI_COLOR_SERIES3 + (int)(id % 6);   /* SERIES3..SERIES8: 1, 2 are the live run's */
}

const char *dash_draw_cmp_label(const Dashboard *d)
{
    static char label[64];   /* the registry's words without their unit: the UI thread's */
    const char *h = dash_data_cmp_series(d->cmp_metric)->help;
    snprintf(label, sizeof label, "%.*s", (int)(strstr(h, " (") ? strstr(h, " (") - h
                                                 : (long)strlen(h)), h);
    return label;
}

/* The moving-average window of smoothing index i (1 = off). */
static int dash_draw_smooth_window(int i)
{
    static const int w[DASH_N_SMOOTH] = {1, 5, 20, 100};
    return w[dash_draw_clamp(i, 0, DASH_N_SMOOTH - 1)];
}

const char *dash_draw_smooth_label(const Dashboard *d)
{
    static const char *const names[DASH_N_SMOOTH] = {"off", "EMA 5", "EMA 20", "EMA 100"};
    return names[dash_draw_clamp(d->cmp_smooth, 0, DASH_N_SMOOTH - 1)];
}

void dash_draw_smooth(double *y, int n, int window)
{
    smooth_ema_debiased(y, n, smooth_weight(window), y);   /* the one smoothing (smooth.h) */
}

int dash_draw_add_curves(const Dashboard *d, ChartSeries *ps, int n, double *buf, int mode)
{
    if (mode != DASH_CURVES_AS_IS && d->cmp_metric != 0 && d->cmp_metric != 1)   /* loss, val */
        return n;
    for (int i = 0; i < d->n_marked && n < CHART_MAX_SERIES; i++) {
        const DashCurve *cv = &d->curves[i];
        double *x = buf, *y = buf + cv->n, k = curve_x_scale(d, cv);
        buf += 2 * (long)cv->n;
        for (int j = 0; j < cv->n; j++) {
            x[j] = (double)cv->pts[j].step * k;
            y[j] = cv->pts[j].value;
        }
        dash_draw_smooth(y, cv->n, dash_draw_smooth_window(d->cmp_smooth));
        if (mode == DASH_CURVES_PPL)
            for (int j = 0; j < cv->n; j++)
                y[j] = exp(y[j]);
        ps[n++] = (ChartSeries){x, y, cv->n, cv->label, dash_draw_run_color(cv->run), CHART_LINE};
    }
    return n;
}

int dash_draw_diff_keys(const char *const *configs, const long *sweeps, int n,
                        char (*keys)[32], int max)
{
    return runkeys_diff(configs, sweeps, n, keys, max);   /* commands/runkeys.c: the one ranking */
}

long dash_draw_curves_need(const Dashboard *d)
{
    long need = 0;
    for (int i = 0; i < d->n_marked; i++)
        need += 2L * d->curves[i].n;
    return need;
}
