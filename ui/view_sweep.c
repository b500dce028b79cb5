/* view_sweep.c — the sweep view: the trials of the session's sweep (else the newest
 * stored one) as a live table (swept values, status, steps, best val; the best marked)
 * over its parallel coordinates (an axis per swept setting and one for best val, lines
 * coloured by it) or, with #, best val against one swept setting (log x when its values
 * span more than 20x), and each setting's importance (share of best val's variance and
 * its direction, sweep_analysis.h). Reloaded from the store about once a second.
 * Not the sweep itself (core/sweep, commands/cmd_sweep.c). */
#define NCURSES_WIDECHAR 1
#include "dash_draw.h"
#include "view_sweep.h"
#include "dash_view.h"
#include "listnav.h"
#include "err.h"
#include "runstore_row.h"
#include "safetext.h"
#include "sweep_analysis.h"
#include "table.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_UP, K_DOWN, K_PARAM, K_ATTACH };
#define SW_MAX_KEYS 8

static void state_free(void *state)
{
    SweepView *w = state;
    free(w->sw_trials);
}

/* The swept keys of a trial's params ("lr=0.001 d=64"): up to max names; the count. */
static int param_keys(const char *params, char (*keys)[32], int max)
{
    int n = 0;
    for (const char *p = params; *p && n < max;) {
        while (*p == ' ')
            p++;
        const char *eq = strchr(p, '='), *sp = strchr(p, ' ');
        if (!eq || (sp && sp < eq))
            break;
        snprintf(keys[n++], 32, "%.*s", (int)(eq - p) < 31 ? (int)(eq - p) : 31, p);
        p = sp ? sp + 1 : p + strlen(p);
    }
    return n;
}

/* The numeric value of key in params, NAN when absent or not a number. */
static double param_value(const char *params, const char *key)
{
    char v[64], *end;
    if (!sweep_param_value(params, key, v, sizeof v)) return NAN;
    double x = strtod(v, &end);
    return end == v ? NAN : x;
}

static int best_trial(const SweepView *w)
{
    int b = -1;
    for (int i = 0; i < w->n_sw_trials; i++)
        if (isfinite(w->sw_trials[i].best_val) &&
            (b < 0 || w->sw_trials[i].best_val < w->sw_trials[b].best_val))
            b = i;
    return b;
}

static void trials_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused)
{
    SweepView *w = dash_view_state(d, &view_sweep);   /* draw made sure of it */
    char title[160];
    snprintf(title, sizeof title, "sweep #%ld %s: %s, %d trials | Enter attach  # x",
             w->sw_id, w->sw_name, w->sw_status, w->n_sw_trials);
    canvas_box(c, r, w->sw_id ? title : "sweep", focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (!w->sw_id || !w->n_sw_trials) {
        dash_draw_message(c, in, w->sw_id ? "no trials yet" : "no sweep yet: `sweep lr=1e-3,"
                                                              "3e-4 steps=500` starts one");
        return;
    }
    static const TableColumn cols[] = {
        {"#", 3, TABLE_RIGHT}, {"run", 4, TABLE_RIGHT}, {"swept values", 0, TABLE_LEFT},
        {"status", 8, TABLE_LEFT}, {"steps", 6, TABLE_RIGHT}, {"best val", 8, TABLE_RIGHT}};
    int n = w->n_sw_trials, best = best_trial(w);
    const char **cells = calloc((size_t)n * 6, sizeof *cells);
    char (*buf)[6][80] = malloc((size_t)n * sizeof *buf);
    unsigned char *mark = calloc((size_t)n, 1);
    if (cells && buf && mark) {
        for (int i = 0; i < n; i++) {
            const SweepTrialRow *t = &w->sw_trials[i];
            snprintf(buf[i][0], 80, "%d", t->trial);
            snprintf(buf[i][1], 80, t->run_id ? "#%ld" : "-", t->run_id);
            safetext_escape(buf[i][2], 80, t->params, 0);   /* stored text: escaped */
            snprintf(buf[i][3], 80, "%s", t->run_status[0] ? t->run_status : t->status);
            snprintf(buf[i][4], 80, "%ld", t->last_step);
            if (isfinite(t->best_val))   /* an estimate marked as `runs` marks it */
                runstore_fmt_best(buf[i][5], 80, t->best_val, t->best_estimated);
            else
                snprintf(buf[i][5], 80, "-");
            for (int j = 0; j < 6; j++)
                cells[(size_t)i * 6 + j] = buf[i][j];
            mark[i] = i == best;
        }
        int sel = listnav_move(w->sw_sel, 0, n);
        TableData td = {cols, 6, cells, n, sel, mark, UI_COLOR_OK, -1, 0, w->sw_scroll};
        w->sw_scroll = table_draw(c, in, &td, caps);
    }
    free(cells);
    free(buf);
    free(mark);
}

/* ---- parallel coordinates and importance (issue 28) ---- */

#define SW_BUCKETS 5   /* colour classes of the metric, best (HEAT0) to worst (HEAT4) */

/* The trials' params and their metric (best val of done trials, NaN otherwise), as
 * `sweep importance` ranks them; p and m hold n_sw_trials entries. */
static void trial_metric(const SweepView *w, const char **p, double *m)
{
    for (int i = 0; i < w->n_sw_trials; i++) {
        const SweepTrialRow *t = &w->sw_trials[i];
        p[i] = t->params;
        m[i] = strcmp(t->status, "done") ? NAN : t->best_val;
    }
}

/* One axis per swept setting plus best val; a line per trial, coloured in SW_BUCKETS
 * classes of its metric (one plot series per class, trials separated by NaN gaps). */
static void parallel_chart(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps)
{
    SweepView *w = dash_view_state(d, &view_sweep);   /* draw made sure of it */
    canvas_box(c, r, "parallel coordinates: settings -> best val (# next chart)", 0,
               caps->unicode);
    Rect in = canvas_rect_inner(r);
    int n = w->n_sw_trials;
    const char **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    double *m = malloc((size_t)(n ? n : 1) * sizeof *m), lo = INFINITY, hi = -INFINITY;
    SweepAxis ax[SW_MAX_KEYS];
    int na = 0;
    if (p && m) {
        trial_metric(w, p, m);
        na = sweep_axes(p, n, ax, SW_MAX_KEYS);
        for (int i = 0; i < n; i++)
            if (isfinite(m[i])) lo = fmin(lo, m[i]), hi = fmax(hi, m[i]);
    }
    double *b = dash_draw_scratch(d, 2L * SW_BUCKETS * n * (na + 2) + 1);
    if (!p || !m || !b || na == 0 || !isfinite(lo)) {
        dash_draw_message(c, in, "finished trials draw here: an axis per swept setting");
        free(p), free(m);
        return;
    }
    ChartSeries ps[SW_BUCKETS];
    char labels[SW_BUCKETS][40], v[SWEEP_VALUE_LEN];
    long per = (long)n * (na + 2);   /* each class's room: na+1 points and a gap per trial */
    for (int k = 0; k < SW_BUCKETS; k++) {
        double *x = b + 2 * k * per, *y = x + per;
        long o = 0;
        for (int i = 0; i < n; i++) {
            int cls = !isfinite(m[i]) ? -1 : hi > lo ? (int)((m[i] - lo) / (hi - lo) * SW_BUCKETS) : 0;
            if ((cls >= SW_BUCKETS ? SW_BUCKETS - 1 : cls) != k) continue;
            for (int a = 0; a <= na; a++, o++) {
                x[o] = a;
                y[o] = a < na ? (sweep_param_value(p[i], ax[a].key, v, sizeof v)
                                 ? sweep_axis_pos(&ax[a], v) : NAN)
                              : hi > lo ? (m[i] - lo) / (hi - lo) : 0.5;
                if (!isfinite(y[o]))   /* a setting the trial lacks: a gap, not a NaN mark */
                    x[o] = NAN;
            }
            x[o] = NAN, y[o++] = NAN;
        }
        snprintf(labels[k], sizeof labels[k], "%.3f", lo + (hi - lo) * (k + 0.5) / SW_BUCKETS);
        ps[k] = (ChartSeries){x, y, o, o ? labels[k] : NULL, UI_COLOR_HEAT0 + k, CHART_LINE};
    }
    ChartData pd = {ps, SW_BUCKETS, NULL, 0, 1, -0.02, 1.02, 0};
    ChartFrame f;
    chart_draw_framed(c, in, &pd, NULL, caps, &f);
    for (int x = f.x0 - 1; f.valid && x < in.x + in.w; x++)   /* the x ticks mean nothing */
        canvas_put(c, x, f.y0 + f.rows + 1, " ", UI_COLOR_DEFAULT, 0);
    for (int y = f.y0; f.valid && y < f.y0 + f.rows; y++)   /* nor do the 0..1 y ticks: */
        for (int x = in.x; x < f.x0 - 1; x++)               /* each axis names its ends */
            canvas_put(c, x, y, " ", UI_COLOR_DEFAULT, 0);
    for (int a = 0; f.valid && a <= na; a++) {   /* axis names under, ends at top/bottom */
        int col = f.x0 + (int)lround((a - f.xmin) / (f.xmax - f.xmin) * (f.cols - 1));
        char name[48], top[24], bot[24];
        snprintf(name, sizeof name, "%.31s%s", a < na ? ax[a].key : "best val",
                 a < na && ax[a].log_axis ? "(log)" : "");
        if (a < na && ax[a].numeric) snprintf(top, sizeof top, "%.3g", ax[a].hi),
                                     snprintf(bot, sizeof bot, "%.3g", ax[a].lo);
        else if (a < na) snprintf(top, sizeof top, "%.12s", ax[a].levels[ax[a].n_levels - 1]),
                         snprintf(bot, sizeof bot, "%.12s", ax[a].levels[0]);
        else snprintf(top, sizeof top, "%.4f", hi), snprintf(bot, sizeof bot, "%.4f", lo);
        int w = (int)strlen(name), x0 = a == na ? col - w + 1 : a ? col - w / 2 : col;
        canvas_text_fit(c, x0 < in.x ? in.x : x0, f.y0 + f.rows + 1, w, name, UI_COLOR_ACCENT,
                        UI_ATTR_BOLD, caps->unicode);
        int tx = a == na ? col - (int)strlen(top) + 1 : col;
        canvas_text(c, tx, f.y0, (int)strlen(top), top, UI_COLOR_DIM, 0);
        canvas_text(c, a == na ? col - (int)strlen(bot) + 1 : col, f.y0 + f.rows - 1,
                    (int)strlen(bot), bot, UI_COLOR_DIM, 0);
    }
    free(p), free(m);
}

/* Each swept setting's share of best val's variance, as bars, with its direction. */
static void importance_panel(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps)
{
    SweepView *w = dash_view_state(d, &view_sweep);   /* draw made sure of it */
    canvas_box(c, r, "importance: share of variance", 0, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int n = w->n_sw_trials, used = 0;
    const char **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    double *m = malloc((size_t)(n ? n : 1) * sizeof *m);
    SweepImportance im[SW_MAX_KEYS];
    int ni = 0;
    if (p && m) {
        trial_metric(w, p, m);
        for (int i = 0; i < n; i++) used += isfinite(m[i]);
        ni = sweep_importance(p, m, n, im, SW_MAX_KEYS);
    }
    free(p), free(m);
    if (used < 2 || ni == 0) {
        dash_draw_message(c, in, "needs 2 finished trials");
        return;
    }
    int kw = 10, bw = in.w - kw - 12;
    for (int k = 0; k < ni && 2 * k < in.h; k++) {
        char line[64];
        int y = in.y + 2 * k, fill = isfinite(im[k].share) ? (int)lround(im[k].share * bw) : 0;
        canvas_text_fit(c, in.x, y, kw, im[k].key, UI_COLOR_ACCENT, UI_ATTR_BOLD, caps->unicode);
        if (!im[k].identified) {   /* one trial per value: 100% by construction */
            canvas_text_fit(c, in.x + kw, y, in.w - kw, "cannot tell: 1 trial/value",
                            UI_COLOR_WARN, 0, caps->unicode);
            fill = -1;
        }
        for (int j = 0; fill >= 0 && j < bw; j++)
            canvas_put(c, in.x + kw + j, y, j < fill ? (caps->unicode ? "█" : "#")
                                                     : (caps->unicode ? "·" : "."),
                       j < fill ? UI_COLOR_SERIES1 : UI_COLOR_DIM, 0);
        snprintf(line, sizeof line, "%5.1f%%", isfinite(im[k].share) ? 100 * im[k].share : 0.0);
        if (fill >= 0) canvas_text(c, in.x + kw + bw + 1, y, 7, line, UI_COLOR_DEFAULT, 0);
        if (2 * k + 1 < in.h) {
            snprintf(line, sizeof line, isnan(im[k].rho) ? "categorical" : im[k].inner_best
                     ? "best at an inner value (U-shaped; rho %+.2f)" : fabs(im[k].rho) < 0.1
                     ? "no clear direction" : im[k].rho < 0 ? "larger -> lower (rho %+.2f)"
                                                            : "larger -> higher (rho %+.2f)",
                     im[k].rho);
            canvas_text_fit(c, in.x + kw, y + 1, in.w - kw, line, UI_COLOR_DIM, 0, caps->unicode);
        }
    }
}

/* Best validation loss of each trial against the chosen swept key. */
static void metric_chart(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps)
{
    SweepView *w = dash_view_state(d, &view_sweep);   /* draw made sure of it */
    char keys[SW_MAX_KEYS][32], title[96], xl[48];
    int nk = w->n_sw_trials ? param_keys(w->sw_trials[0].params, keys, SW_MAX_KEYS) : 0;
    int k = nk ? w->sw_param % nk : 0;
    snprintf(title, sizeof title, "best val loss vs %s", nk ? keys[k] : "a swept setting");
    canvas_box(c, r, title, 0, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int n = w->n_sw_trials;
    double *b = dash_draw_scratch(d, 2L * n + 1);
    if (!nk || !b) {
        dash_draw_message(c, in, "the trials' results appear here");
        return;
    }
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        b[i] = param_value(w->sw_trials[i].params, keys[k]);
        b[n + i] = w->sw_trials[i].best_val;
        if (isfinite(b[i]))
            lo = fmin(lo, b[i]), hi = fmax(hi, b[i]);
    }
    int logx = lo > 0 && hi / lo > 20;
    for (int i = 0; logx && i < n; i++)
        b[i] = log10(b[i]);
    for (int i = 0; i < n; i++)   /* no best yet (running, pending): no point, not a NaN mark */
        if (!isfinite(b[n + i]))
            b[i] = NAN;
    snprintf(xl, sizeof xl, logx ? "%s (log)" : "%s", keys[k]);
    ChartSeries ps = {b, b + n, n, "trials", UI_COLOR_SERIES2, CHART_POINTS};
    ChartData pd = {&ps, 1, xl, 0, 0, 0, 0, logx};   /* ticks in lr's own units */
    chart_draw(c, in, &pd, caps);
}

static void draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    (void)sn;
    SweepView *w = dash_view_state(d, &view_sweep);
    if (!w)   /* out of memory: nothing to show */
        return;
    int th = r.h * 2 / 5 > 5 ? r.h * 2 / 5 : 5, cw = r.w * 2 / 3;
    trials_table(c, (Rect){r.x, r.y, r.w, th}, d, caps, focused);
    Rect chart = {r.x, r.y + th, cw, r.h - th};
    char keys[SW_MAX_KEYS][32];
    int nk = w->n_sw_trials ? param_keys(w->sw_trials[0].params, keys, SW_MAX_KEYS) : 0;
    if (nk && w->sw_param >= nk)   /* after the settings: parallel coordinates */
        parallel_chart(c, chart, d, caps);
    else
        metric_chart(c, chart, d, caps);
    importance_panel(c, (Rect){r.x + cw, r.y + th, r.w - cw, r.h - th}, d, caps);
}

/* ---- loading ---- */

/* The newest stored sweep (ids probed upward, as `sweep list`), 0 when none. */
static long newest_sweep(RunStore *st)
{
    long found = 0;
    char err[LM_ERR_LEN];
    for (long id = 1, misses = 0; misses < 20; id++) {
        SweepRow row = {0};
        if (runstore_sweep_get(st, id, &row, err)) {
            misses++;
            continue;
        }
        misses = 0;
        found = id;
        free(row.spec);
    }
    return found;
}

/* Reloads the sweep and its trials when due (forced: now). 1 when reloaded. */
static int load(DashCtx *x, int forced)
{
    SweepView *w = dash_view_state(x->d, &view_sweep);
    if (!w)
        return 0;
    if (!dash_view_due(&w->sw_next, forced))
        return 0;
    RunStore *st = forced ? session_store(x->s) : x->s->store; /* a failure is said once */
    if (!st)
        return 0;
    SweepRunner *sw = session_job_sweep(x->s);
    long id = sw ? sweep_runner_id(sw) : w->sw_id && !forced ? w->sw_id : newest_sweep(st);
    SweepRow row = {0};
    SweepTrialRow *t = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (!id || runstore_sweep_get(st, id, &row, err) ||
        runstore_sweep_trials(st, id, &t, &n, err)) {
        free(row.spec);
        return 0;
    }
    free(w->sw_trials);
    w->sw_trials = t;
    w->n_sw_trials = n;
    w->sw_id = id;
    snprintf(w->sw_name, sizeof w->sw_name, "%s", row.name);
    snprintf(w->sw_status, sizeof w->sw_status, "%s", row.status);
    free(row.spec);
    return 1;
}

static void enter(DashCtx *x) { load(x, 1); }

/* Reloaded once a second, and at once when the status bar's sweep progress changed (a
 * trial started or ended), so the table never lags the bar by a trial. */
static int tick(DashCtx *x)
{
    Dashboard *d = x->d;
    SweepView *w = dash_view_state(d, &view_sweep);
    if (!w)
        return 0;
    int changed = strcmp(d->sweep, w->sw_bar_seen) != 0;
    if (changed)
        snprintf(w->sw_bar_seen, sizeof w->sw_bar_seen, "%s", d->sweep);
    return load(x, changed);
}

static void on_key(DashCtx *x, int action)
{
    SweepView *w = dash_view_state(x->d, &view_sweep);
    if (!w)
        return;
    char line[48];
    switch (action) {
    case K_UP: case K_DOWN:
        w->sw_sel = listnav_move(w->sw_sel, action == K_UP ? -1 : 1, w->n_sw_trials);
        break;
    case K_PARAM: {   /* k < settings: best val vs the k-th setting; then parallel coords */
        int nk = 0;
        char keys[SW_MAX_KEYS][32];
        if (w->n_sw_trials) nk = param_keys(w->sw_trials[0].params, keys, SW_MAX_KEYS);
        w->sw_param = (w->sw_param + 1) % (nk + 1);
        break;
    }
    case K_ATTACH:
        if (w->sw_sel < w->n_sw_trials && w->sw_trials[w->sw_sel].run_id) {
            snprintf(line, sizeof line, "attach %ld", w->sw_trials[w->sw_sel].run_id);
            x->command(x->loop, line);
        }
        break;
    default: break;
    }
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "Up", K_UP, "sweep: select a trial"},
    {DASH_KEY_FN(KEY_DOWN), "Down", K_DOWN, "sweep: select a trial"},
    {'#', "#", K_PARAM, "sweep: chart"},
    {'\n', "Enter", K_ATTACH, "sweep: attach the trial"},
};

const DashView view_sweep = {
    .name = "sweep",
    .state_size = sizeof(SweepView),
    .free = state_free,
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .enter = enter,
    .tick = tick,
};
