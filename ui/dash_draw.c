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

/* Walks text as wrapped rows; draws rows [skip, skip + r.h) when c is not NULL.
 * Returns the number of rows the text takes. */
static int wrap_walk(Canvas *c, Rect r, const char *text, int color, int skip)
{
    int row = 0, col = 0;
    size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') {
            row++, col = 0, i++;
            continue;
        }
        int n = canvas_utf8_len(text + i, len - i);
        const char *g = n ? text + i : "?";
        if (ch == '\t' || ch == '\r')
            g = " ";
        int gw = canvas_glyph_width(g, n && g == text + i ? n : 1);   /* CJK, emoji: 2 */
        if (col + gw > r.w && col > 0)
            row++, col = 0;
        if (c && row >= skip && row - skip < r.h)
            canvas_put(c, r.x + col, r.y + row - skip, g, color, 0);
        col += gw;
        i += n ? (size_t)n : 1;
    }
    return col ? row + 1 : row;
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
