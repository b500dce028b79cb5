/* view_history_plot.c — the history view's lower panes (see view_history_impl.h): the
 * marked runs side by side (the settings that differ, then the results), their seed
 * groups as mean ± std bands, and the curve cursor with its keys.
 * Not the runs table (view_history_table.c) and not the view's loading
 * (view_history.c); the chart itself is chart.c's. */
#define NCURSES_WIDECHAR 1
#include "view_history_impl.h"

#include "dash_draw.h"
#include "runkeys.h"
#include "runstore_row.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The marked runs side by side: a column per run (its id in its curve's colour), a row
 * per setting that differs, then the results; values cut with an ellipsis, never
 * wrapped; what does not fit is counted on the last row. */
void view_history_compare_table(Canvas *c, Rect in, const Dashboard *d,
                                const CanvasCaps *caps)
{
    int n = d->n_marked;
    const char *configs[DASH_MAX_MARKED] = {0};
    for (int i = 0; i < n; i++)
        configs[i] = d->curves[i].config ? d->curves[i].config : "";
    char keys[32][32];
    int nk = dash_draw_diff_keys(configs, NULL, n, keys, 32), shown = nk < 32 ? nk : 32;
    int kw = 9;   /* "final val" */
    for (int k = 0; k < shown; k++)
        kw = (int)strlen(keys[k]) > kw ? (int)strlen(keys[k]) : kw;
    kw = kw < 14 ? kw : 14;
    int cw = n ? (in.w - kw - 1) / n : 0;
    cw = cw > 16 ? 16 : cw;
    if (cw < 3 || in.h < 2)
        return;
    int rows = in.h - 1 - 3;   /* header, 3 result rows */
    if (shown > rows)
        shown = rows > 1 ? rows - 1 : 0;
    for (int i = 0; i < n; i++) {
        char id[24];
        snprintf(id, sizeof id, "#%ld", d->curves[i].run);
        canvas_text_fit(c, in.x + kw + 1 + i * cw, in.y, cw - 1, id,
                        dash_draw_run_color(d->curves[i].run), UI_ATTR_BOLD, caps->unicode);
    }
    int y = in.y + 1;
    for (int k = 0; k < shown; k++, y++) {
        canvas_text_fit(c, in.x, y, kw, keys[k], UI_COLOR_DIM, 0, caps->unicode);
        for (int i = 0; i < n; i++) {
            char v[128];
            runkeys_config_value(configs[i], keys[k], v, sizeof v);
            canvas_text_fit(c, in.x + kw + 1 + i * cw, y, cw - 1, v, UI_COLOR_DEFAULT, 0,
                            caps->unicode);
        }
    }
    if (shown < nk) {
        char more[64];
        snprintf(more, sizeof more, "+%d more settings differ: `compare`", nk - shown);
        canvas_text_fit(c, in.x, y++, in.w, more, UI_COLOR_DIM, 0, caps->unicode);
    } else if (nk == 0 && n > 1) {
        canvas_text_fit(c, in.x, y++, in.w, "same settings", UI_COLOR_DIM, 0, caps->unicode);
    }
    /* "last step", not "steps": the budget `steps` may be a differing setting above */
    static const char *const labels[] = {"best val", "best ckpt", "final val", "last step"};
    for (int r = 0; r < 4 && y < in.y + in.h; r++, y++) {
        canvas_text_fit(c, in.x, y, kw, labels[r], UI_COLOR_DIM, 0, caps->unicode);
        for (int i = 0; i < n; i++) {
            const DashCurve *cv = &d->curves[i];
            /* best val: the best checkpoint's own evaluation when it has one */
            double v = r == 0 ? (cv->best_step >= 0 && !isnan(cv->best_step_val)
                                     ? cv->best_step_val : cv->best_val)
                              : cv->final_val;
            char t[32];
            if (r == 1)
                snprintf(t, sizeof t, cv->best_step >= 0 ? "step %ld" : "-", cv->best_step);
            else if (r == 3)
                snprintf(t, sizeof t, "%ld", cv->last_step);
            else   /* an estimate over eval_batches batches marked as `runs` marks it */
                runstore_fmt_best(t, sizeof t, v, r == 0 && cv->best_estimated);
            canvas_text_fit(c, in.x + kw + 1 + i * cw, y, cw - 1, t, UI_COLOR_DEFAULT, 0,
                            caps->unicode);
        }
    }
}

/* ---- seed groups as bands, the curve cursor (issue 28) ---- */

/* The marked runs' groups (hv(d)->bands) as mean lines over ± std bands, on the x axis `>`
 * chose: steps, or tokens or seconds at each group's own pace (a group whose pace is
 * unknown is left out rather than drawn in steps under a tokens label). */
void view_history_draw_bands(Canvas *c, Rect pin, Dashboard *d, const CanvasCaps *caps)
{
    ChartSeries ps[CHART_MAX_SERIES];
    ChartBand pb[CHART_MAX_SERIES];
    long need = 0;
    for (int i = 0; i < hv(d)->n_bands; i++) need += hv(d)->bands[i].n;
    double *xs = d->x_axis == DASH_X_STEPS ? NULL : dash_draw_scratch(d, need + 1);
    int n = 0;
    long off = 0;
    for (int i = 0; i < hv(d)->n_bands && n < CHART_MAX_SERIES; i++) {
        const DashBand *b = &hv(d)->bands[i];
        const double *x = b->x;
        if (d->x_axis != DASH_X_STEPS) {
            double k = d->x_axis == DASH_X_TOKENS ? b->tokens_per_step : b->seconds_per_step;
            if (!xs || !(k > 0)) continue;
            for (int j = 0; j < b->n; j++) xs[off + j] = b->x[j] * k;
            x = xs + off;
            off += b->n;
        }
        ps[n] = (ChartSeries){x, b->mean, b->n, b->label, dash_draw_run_color(b->run),
                             CHART_LINE};
        pb[n++] = (ChartBand){b->lo, b->hi};
    }
    ChartData pd = {ps, n, dash_draw_x_label(d), d->log_y, 0, 0, 0, 0};
    chart_draw_bands(c, pin, &pd, pb, caps);
}

/* y of series s at x: its nearest drawn point at or before x, with that point's own x in
 * *px (may be NULL); NaN when none, or when x lies past the series' last point by more than
 * slack (a run that ended at step 300 has no value at step 596). */
static double series_at(const ChartSeries *s, double x, double slack, double *px)
{
    double y = NAN;
    if (s->n == 0 || x > s->x[s->n - 1] + slack)
        return NAN;
    for (long i = 0; i < s->n && s->x[i] <= x; i++)
        if (isfinite(s->y[i])) {
            y = s->y[i];
            if (px) *px = s->x[i];
        }
    return y;
}

/* The cursor: a dim column at hv(d)->hist_cursor, a dot on the chosen curve (hv(d)->cursor_run,
 * else the nearest to the plot's middle height), named with its value in the box title. */
void view_history_draw_cursor(Canvas *c, Rect pr, const ChartFrame *f, Dashboard *d,
                              const ChartSeries *ps, int n, const CanvasCaps *caps)
{
    if (hv(d)->hist_cursor < 0 || !f->valid || n == 0)
        return;
    int col = dash_draw_clamp(hv(d)->hist_cursor, 0, f->cols - 1);
    hv(d)->hist_cursor = col;
    /* the column's right edge: its points are at or before it; one column of slack keeps
     * a run's last point when the cursor is on it */
    double x = f->xmin + (col + 1.0) / f->cols * (f->xmax - f->xmin);
    double slack = (f->xmax - f->xmin) / f->cols;
    int pick = -1;
    for (int i = 0; i < n && i < d->n_marked; i++)
        if (d->curves[i].run == hv(d)->cursor_run && isfinite(series_at(&ps[i], x, slack, NULL)))
            pick = i;
    for (int i = 0; pick < 0 && i < n; i++)
        if (isfinite(series_at(&ps[i], x, slack, NULL))) pick = i;
    for (int y = f->y0; y < f->y0 + f->rows; y++)
        canvas_put(c, f->x0 + col, y, caps->unicode ? "┊" : ":", UI_COLOR_DIM, 0);
    if (pick < 0)
        return;
    hv(d)->cursor_run = d->curves[pick].run;
    double px = x, v = series_at(&ps[pick], x, slack, &px), t = f->log_y ? log10(v) : v;
    int row = f->y0 + (int)lround((f->ymax - t) / (f->ymax - f->ymin) * (f->rows - 1));
    canvas_put(c, f->x0 + col, dash_draw_clamp(row, f->y0, f->y0 + f->rows - 1),
               caps->unicode ? "●" : "@", dash_draw_run_color(hv(d)->cursor_run), UI_ATTR_BOLD);
    char name[160];
    snprintf(name, sizeof name, " cursor %s %.0f: %s = %.4f ", dash_draw_x_label(d), px,
             d->curves[pick].label, v);   /* the recorded point's own x, not the column's */
    canvas_text_fit(c, pr.x + 2, pr.y + pr.h - 1, pr.w - 4, name,
                    dash_draw_run_color(hv(d)->cursor_run), UI_ATTR_BOLD, caps->unicode);
}

/* '[' ']' move the cursor along the x axis (switching it on); '{' '}' pick the curve
 * above/below the chosen one at the cursor. The chosen run becomes the table's
 * selection: selecting a run by its curve. */
void view_history_cursor_key(Dashboard *d, int action)
{
    if (d->n_marked == 0)
        return;
    if (action == K_CUR_LEFT || action == K_CUR_RIGHT) {
        if (hv(d)->hist_cursor < 0) hv(d)->hist_cursor = 1000000;   /* starts at the right end */
        else hv(d)->hist_cursor += action == K_CUR_LEFT ? -1 : 1;
    } else {
        int at = 0;
        for (int i = 0; i < d->n_marked; i++)
            if (d->curves[i].run == hv(d)->cursor_run) at = i;
        at = (at + (action == K_CUR_UP ? d->n_marked - 1 : 1)) % d->n_marked;
        hv(d)->cursor_run = d->curves[at].run;
        if (hv(d)->hist_cursor < 0) hv(d)->hist_cursor = 1000000;
    }
    for (int i = 0; i < hv(d)->n_runs; i++)
        if (hv(d)->runs[i].id == hv(d)->cursor_run) hv(d)->run_sel = i;
}
