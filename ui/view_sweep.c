/* view_sweep.c — the sweep view: the trials of the session's sweep (else the newest
 * stored one) as a live table (swept values, status, steps, best val; the best marked)
 * and their best validation loss against one swept setting (log x when its values span
 * more than 20x). Reloaded from the store about once a second while shown.
 * Not the sweep itself (core/sweep, commands/cmd_sweep.c). */
#define NCURSES_WIDECHAR 1
#include "dash_draw.h"
#include "dash_view.h"
#include "err.h"
#include "safetext.h"
#include "table.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K_UP, K_DOWN, K_PARAM, K_ATTACH };
#define SW_MAX_KEYS 8

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
    size_t kl = strlen(key);
    for (const char *p = params; p && *p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL) {
        if (!strncmp(p, key, kl) && p[kl] == '=') {
            char *end;
            double v = strtod(p + kl + 1, &end);
            return end == p + kl + 1 ? NAN : v;
        }
    }
    return NAN;
}

static int best_trial(const Dashboard *d)
{
    int b = -1;
    for (int i = 0; i < d->n_sw_trials; i++)
        if (isfinite(d->sw_trials[i].best_val) &&
            (b < 0 || d->sw_trials[i].best_val < d->sw_trials[b].best_val))
            b = i;
    return b;
}

static void trials_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused)
{
    char title[160];
    snprintf(title, sizeof title, "sweep #%ld %s: %s, %d trials | Enter attach  # x",
             d->sw_id, d->sw_name, d->sw_status, d->n_sw_trials);
    canvas_box(c, r, d->sw_id ? title : "sweep", focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (!d->sw_id || !d->n_sw_trials) {
        dash_draw_message(c, in, d->sw_id ? "no trials yet" : "no sweep yet: `sweep lr=1e-3,"
                                                              "3e-4 steps=500` starts one");
        return;
    }
    static const TableColumn cols[] = {
        {"#", 3, TABLE_RIGHT}, {"run", 4, TABLE_RIGHT}, {"swept values", 0, TABLE_LEFT},
        {"status", 8, TABLE_LEFT}, {"steps", 6, TABLE_RIGHT}, {"best val", 8, TABLE_RIGHT}};
    int n = d->n_sw_trials, best = best_trial(d);
    const char **cells = calloc((size_t)n * 6, sizeof *cells);
    char (*buf)[6][80] = malloc((size_t)n * sizeof *buf);
    unsigned char *mark = calloc((size_t)n, 1);
    if (cells && buf && mark) {
        for (int i = 0; i < n; i++) {
            const SweepTrialRow *t = &d->sw_trials[i];
            snprintf(buf[i][0], 80, "%d", t->trial);
            snprintf(buf[i][1], 80, t->run_id ? "#%ld" : "-", t->run_id);
            safetext_escape(buf[i][2], 80, t->params, 0);   /* stored text: escaped */
            snprintf(buf[i][3], 80, "%s", t->run_status[0] ? t->run_status : t->status);
            snprintf(buf[i][4], 80, "%ld", t->last_step);
            if (isfinite(t->best_val))
                snprintf(buf[i][5], 80, "%.4f", t->best_val);
            else
                snprintf(buf[i][5], 80, "-");
            for (int j = 0; j < 6; j++)
                cells[(size_t)i * 6 + j] = buf[i][j];
            mark[i] = i == best;
        }
        int sel = dash_draw_clamp(d->sw_sel, 0, n - 1);
        TableData td = {cols, 6, cells, n, sel, mark, UI_COLOR_OK, -1, 0, d->sw_scroll};
        d->sw_scroll = table_draw(c, in, &td, caps);
    }
    free(cells);
    free(buf);
    free(mark);
}

/* Best validation loss of each trial against the chosen swept key. */
static void metric_chart(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps)
{
    char keys[SW_MAX_KEYS][32], title[96], xl[48];
    int nk = d->n_sw_trials ? param_keys(d->sw_trials[0].params, keys, SW_MAX_KEYS) : 0;
    int k = nk ? d->sw_param % nk : 0;
    snprintf(title, sizeof title, "best val loss vs %s", nk ? keys[k] : "a swept setting");
    canvas_box(c, r, title, 0, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int n = d->n_sw_trials;
    double *b = dash_draw_scratch(d, 2L * n + 1);
    if (!nk || !b) {
        dash_draw_message(c, in, "the trials' results appear here");
        return;
    }
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        b[i] = param_value(d->sw_trials[i].params, keys[k]);
        b[n + i] = d->sw_trials[i].best_val;
        if (isfinite(b[i]))
            lo = fmin(lo, b[i]), hi = fmax(hi, b[i]);
    }
    int logx = lo > 0 && hi / lo > 20;
    for (int i = 0; logx && i < n; i++)
        b[i] = log10(b[i]);
    snprintf(xl, sizeof xl, logx ? "log10 %s" : "%s", keys[k]);
    PlotSeries ps = {b, b + n, n, "trials", UI_COLOR_SERIES2, PLOT_POINTS};
    PlotData pd = {&ps, 1, xl, 0, 0, 0, 0};
    plot_draw(c, in, &pd, caps);
}

static void draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    (void)sn;
    int tw = r.w * 2 / 3;
    trials_table(c, (Rect){r.x, r.y, tw, r.h}, d, caps, focused);
    metric_chart(c, (Rect){r.x + tw, r.y, r.w - tw, r.h}, d, caps);
}

/* ---- loading ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
    Dashboard *d = x->d;
    double now = now_s();
    if (!forced && now < d->sw_next)
        return 0;
    d->sw_next = now + 1.0;
    RunStore *st = forced ? session_store(x->s) : x->s->store; /* a failure is said once */
    if (!st)
        return 0;
    SweepRunner *sw = session_job_sweep(x->s);
    long id = sw ? sweep_runner_id(sw) : d->sw_id && !forced ? d->sw_id : newest_sweep(st);
    SweepRow row = {0};
    SweepTrialRow *t = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (!id || runstore_sweep_get(st, id, &row, err) ||
        runstore_sweep_trials(st, id, &t, &n, err)) {
        free(row.spec);
        return 0;
    }
    free(d->sw_trials);
    d->sw_trials = t;
    d->n_sw_trials = n;
    d->sw_id = id;
    snprintf(d->sw_name, sizeof d->sw_name, "%s", row.name);
    snprintf(d->sw_status, sizeof d->sw_status, "%s", row.status);
    free(row.spec);
    return 1;
}

static void enter(DashCtx *x) { load(x, 1); }

/* Reloaded once a second, and at once when the status bar's sweep progress changed (a
 * trial started or ended), so the table never lags the bar by a trial. */
static int tick(DashCtx *x)
{
    Dashboard *d = x->d;
    int changed = strcmp(d->sweep, d->sw_bar_seen) != 0;
    if (changed)
        snprintf(d->sw_bar_seen, sizeof d->sw_bar_seen, "%s", d->sweep);
    return load(x, changed);
}

static void on_key(DashCtx *x, int action)
{
    Dashboard *d = x->d;
    char line[48];
    switch (action) {
    case K_UP: case K_DOWN:
        d->sw_sel = dash_draw_clamp(d->sw_sel + (action == K_UP ? -1 : 1), 0,
                                    d->n_sw_trials > 0 ? d->n_sw_trials - 1 : 0);
        break;
    case K_PARAM: d->sw_param = (d->sw_param + 1) % SW_MAX_KEYS; break;
    case K_ATTACH:
        if (d->sw_sel < d->n_sw_trials && d->sw_trials[d->sw_sel].run_id) {
            snprintf(line, sizeof line, "attach %ld", d->sw_trials[d->sw_sel].run_id);
            x->command(x->loop, line);
        }
        break;
    default: break;
    }
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "Up", K_UP, "sweep: select a trial"},
    {DASH_KEY_FN(KEY_DOWN), "Down", K_DOWN, "sweep: select a trial"},
    {'#', "#", K_PARAM, "sweep: x-axis setting"},
    {'\n', "Enter", K_ATTACH, "sweep: attach the trial"},
};

const DashView view_sweep = {
    .name = "sweep",
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .enter = enter,
    .tick = tick,
};
