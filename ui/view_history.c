/* view_history.c — the history view: the run store's runs (sort, filter), marking runs
 * (their loss curves overlay here and in the training view, their config diff shows),
 * opening one. Reloads the list when shown, when the shown run ends, and when another
 * process changed the store (runs added, removed or updated; polled on the loop's tick).
 * The runs table is view_history_table.c, the panes below it (settings, bands, the
 * cursor) view_history_plot.c. Not the loaders (dash_data.c) and not the table widget
 * (table.c). */
#define NCURSES_WIDECHAR 1
#include "view_history_impl.h"

#include "dash_groups.h"
#include "dash_draw.h"
#include "runkeys.h"
#include "err.h"
#include "safetext.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int state_init(void *state)
{
    ((HistoryView *)state)->hist_cursor = -1;   /* the plot cursor: off */
    return LM_OK;
}

static void state_free(void *state)
{
    HistoryView *h = state;
    runstore_rows_free(h->runs, h->n_runs);
    free(h->hist_group);
    free(h->hist_smooth);
    free(h->hist_series);
    free(h->memo);
    dash_groups_free(h);
}

/* Keeps the layout (sort, filter, marks) in the store for the next session. */
static void save_layout(DashCtx *x)
{
    char err[LM_ERR_LEN];
    RunStore *st = session_store(x->s);
    if (st && dash_groups_save_layout(x->d, hv(x->d), st, err))
        dash_view_out(x, UI_COLOR_ERROR, "error: keeping the history layout: %s", err);
}

static void load_bands(DashCtx *x)
{
    char err[LM_ERR_LEN];
    RunStore *st = session_store(x->s);
    if (st && hv(x->d)->hist_band && dash_groups_load(x->d, hv(x->d), st, err))
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
}

static void draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    (void)sn;
    if (!hv(d))   /* out of memory: nothing to show */
        return;
    int th = dash_draw_clamp(r.h * 55 / 100, 6, r.h);
    view_history_runs_table(c, (Rect){r.x, r.y, r.w, th}, d, caps, focused);
    Rect pr = {r.x, r.y + th, r.w / 2, r.h - th};
    Rect cr = {r.x + r.w / 2, r.y + th, r.w - r.w / 2, r.h - th};
    if (pr.h < 3)
        return;
    char title[128];
    snprintf(title, sizeof title, "%s | smooth %s | x %s%s  # metric ~ smooth > x %% groups "
             "[ ] cursor", dash_draw_cmp_label(d), dash_draw_smooth_label(d),
             dash_draw_x_label(d), hv(d)->hist_band ? " | groups: mean ± std" : "");
    canvas_box(c, pr, title, 0, caps->unicode);
    canvas_box(c, cr, "settings that differ", 0, caps->unicode);
    Rect pin = canvas_rect_inner(pr), cin = canvas_rect_inner(cr);
    const HistoryView *h = hv(d);
    if (h && h->n_runs > 0 && cin.h >= 3) {   /* the selected run's newest note (`run ID`: all) */
        const RunRow *sel = &h->runs[dash_draw_clamp(h->run_sel, 0, h->n_runs - 1)];
        if (sel->notes[0]) {
            char note[300], line[360];
            safetext_escape(note, sizeof note, sel->notes, 0);   /* stored text: escaped */
            snprintf(line, sizeof line, "note #%ld: %s", sel->id, note);
            canvas_text(c, cin.x, cin.y + cin.h - 1, cin.w, line, UI_COLOR_ACCENT, 0);
            cin.h--;
        }
    }
    if (!d->n_marked) {
        dash_draw_message(c, pin, "Space marks runs: their curves overlay here");
        dash_draw_message(c, cin, "and their differing settings show here");
        return;
    }
    if (hv(d)->hist_band && hv(d)->n_bands) {   /* seed groups as mean ± std bands */
        view_history_draw_bands(c, pin, d, caps);
        view_history_compare_table(c, cin, d, caps);
        return;
    }
    double *b = dash_draw_scratch(d, dash_draw_curves_need(d) + 1);
    if (!b)
        return;
    ChartSeries ps[CHART_MAX_SERIES];
    int n = dash_draw_add_curves(d, ps, 0, b, DASH_CURVES_AS_IS);
    char ids[DASH_MAX_MARKED][24];   /* a legend that fits: "#12" when names would not */
    int legend = 0;
    for (int i = 0; i < n; i++)
        legend += (int)strlen(ps[i].label) + 5;
    for (int i = 0; i < n && legend > pin.w && i < DASH_MAX_MARKED; i++) {
        snprintf(ids[i], sizeof ids[i], "#%ld", d->curves[i].run);
        ps[i].label = ids[i];
    }
    ChartData pd = {ps, n, dash_draw_x_label(d), d->log_y, 0, 0, 0, 0};
    ChartFrame fr;
    chart_draw_framed(c, pin, &pd, NULL, caps, &fr);
    view_history_draw_cursor(c, pr, &fr, d, ps, n, caps);
    view_history_compare_table(c, cin, d, caps);
}

/* ---- loading and keys ---- */

static void reload(DashCtx *x)
{
    char err[LM_ERR_LEN];
    RunStore *st = session_store(x->s);
    if (!hv(x->d))
        return;
    if (st && dash_groups_restore_layout(x->d, hv(x->d), st, err))   /* once: the kept layout */
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
    if (st && dash_data_load_runs(hv(x->d), st, err))
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
    if (st)
        view_history_load_custom(x->d, st);
}

/* Each wake-up, at most once a second: reloads the list when another process committed to
 * the store since the last look (runstore_changed), so runs another process adds or
 * removes appear without switching views. */
static int tick(DashCtx *x)
{
    if (!hv(x->d))
        return 0;
    static time_t next;
    RunStore *st = x->s->store;   /* only an open store: a failed open is not retried here */
    time_t now = time(NULL);
    if (!st || now < next)
        return 0;
    next = now + 1;
    if (!runstore_changed(st))
        return 0;
    reload(x);
    return 1;
}

static void mark_run(DashCtx *x)
{
    Dashboard *d = x->d;
    char err[LM_ERR_LEN];
    RunStore *st = session_store(x->s);
    if (st && hv(d)->run_sel < hv(d)->n_runs &&
        dash_data_toggle_mark(d, st, hv(d)->runs[hv(d)->run_sel].id, err))
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
}

/* `=`: the fixed sorts in turn, then the columns beyond them (the settings that differ
 * among the runs, the kept layout's other columns, final_smooth), then back. */
static void next_sort(Dashboard *d)
{
    char extra[24][32];
    int ne = 0;
    const char *configs[64];
    long sweeps[64];
    int n = 0;
    for (int i = 0; i < hv(d)->n_runs && n < 64; i++, n++) {
        configs[n] = hv(d)->runs[i].config;
        sweeps[n] = hv(d)->runs[i].sweep_id;
    }
    char diff[16][32];
    int nd = n > 1 ? dash_draw_diff_keys(configs, sweeps, n, diff, 16) : 0;
    for (int k = 0; k < nd && k < 16 && ne < 16; k++)
        if (strcmp(diff[k], "name") && strcmp(diff[k], "model"))
            snprintf(extra[ne++], 32, "%.31s", diff[k]);
    char list[520];
    snprintf(list, sizeof list, "%s", hv(d)->hist_cols);
    char *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w && ne < 23; w = strtok_r(NULL, ",", &save)) {
        int dup = !strcmp(w, "id") || !strcmp(w, "name") || !strcmp(w, "model") ||
                  !strcmp(w, "status") || !strcmp(w, "steps") || !strcmp(w, "best_val") ||
                  !strcmp(w, "created");
        for (int k = 0; k < ne && !dup; k++) dup = !strcmp(extra[k], w);
        if (!dup) snprintf(extra[ne++], 32, "%.31s", w);
    }
    int have = 0;
    for (int k = 0; k < ne; k++) have |= !strcmp(extra[k], "final_smooth");
    if (!have) snprintf(extra[ne++], 32, "final_smooth");
    if (!hv(d)->sort_key[0]) {
        if (hv(d)->sort + 1 < DASH_N_SORTS) hv(d)->sort++;
        else snprintf(hv(d)->sort_key, sizeof hv(d)->sort_key, "%s", extra[0]);
        return;
    }
    int at = -1;
    for (int k = 0; k < ne; k++) if (!strcmp(extra[k], hv(d)->sort_key)) at = k;
    if (at >= 0 && at + 1 < ne) {
        snprintf(hv(d)->sort_key, sizeof hv(d)->sort_key, "%s", extra[at + 1]);
    } else {   /* past the last: back to the first fixed sort */
        hv(d)->sort_key[0] = 0;
        hv(d)->sort = 0;
    }
}

static void on_key(DashCtx *x, int action)
{
    static const int moves[] = {-1, 1, -10, 10};
    Dashboard *d = x->d;
    if (!hv(d))
        return;
    char line[64];
    switch (action) {
    case K_UP: case K_DOWN: case K_PAGE_UP: case K_PAGE_DOWN:
        hv(d)->run_sel = dash_draw_clamp(hv(d)->run_sel + moves[action], 0,
                                     hv(d)->n_runs > 0 ? hv(d)->n_runs - 1 : 0);
        break;
    case K_MARK: mark_run(x); save_layout(x); load_bands(x); break;
    case K_BAND:
        hv(d)->hist_band = !hv(d)->hist_band;
        load_bands(x);
        break;
    case K_CUR_LEFT: case K_CUR_RIGHT: case K_CUR_UP: case K_CUR_DOWN:
        view_history_cursor_key(d, action);
        break;
    case K_OPEN:
        if (hv(d)->run_sel < hv(d)->n_runs) {
            snprintf(line, sizeof line, "open %ld", hv(d)->runs[hv(d)->run_sel].id);
            x->command(x->loop, line);
        }
        break;
    case K_METRIC: case K_SMOOTH: {
        if (action == K_SMOOTH) {
            d->cmp_smooth = (d->cmp_smooth + 1) % DASH_N_SMOOTH;
            break;
        }
        d->cmp_metric = (d->cmp_metric + 1) % dash_data_cmp_count();
        char err[LM_ERR_LEN];
        RunStore *st = session_store(x->s);
        if (st && dash_data_reload_curves(d, st, err))
            dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
        load_bands(x);
        break;
    }
    case K_FILTER: dash_view_prompt(x, "filter> ", hv(d)->filter); break;
    case K_SORT: next_sort(d); reload(x); save_layout(x); break;
    case K_REVERSE: hv(d)->sort_desc = !hv(d)->sort_desc; reload(x); save_layout(x); break;
    default: break;
    }
}

static void on_prompt(DashCtx *x, const char *line)
{
    char clean[sizeof hv(x->d)->filter], err[LM_ERR_LEN];
    if (!hv(x->d))
        return;
    if (runkeys_filter(line, clean, sizeof clean, runkeys_store_has, session_store(x->s),
                       err)) {   /* an unknown key: said, not kept */
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
        return;
    }
    char was[sizeof hv(x->d)->filter];
    snprintf(was, sizeof was, "%s", hv(x->d)->filter);
    snprintf(hv(x->d)->filter, sizeof hv(x->d)->filter, "%s", clean);
    RunStore *st = session_store(x->s);
    if (st && dash_data_load_runs(hv(x->d), st, err)) {   /* a bad value: said, not kept */
        dash_view_out(x, UI_COLOR_ERROR, "error: %s (the filter stays \"%s\")", err, was);
        snprintf(hv(x->d)->filter, sizeof hv(x->d)->filter, "%s", was);
        reload(x);
    } else if (st) {   /* loaded under the new filter: the rest of reload's work */
        view_history_load_custom(x->d, st);
    }
    save_layout(x);
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "Up", K_UP, "history: select a run"},
    {DASH_KEY_FN(KEY_DOWN), "Down", K_DOWN, "history: select a run"},
    {DASH_KEY_FN(KEY_PPAGE), "PgUp", K_PAGE_UP, "history: page the runs"},
    {DASH_KEY_FN(KEY_NPAGE), "PgDn", K_PAGE_DOWN, "history: page the runs"},
    {' ', "Space", K_MARK, "history: mark a run"},
    {'\n', "Enter", K_OPEN, "history: open the run"},
    {'/', "/", K_FILTER, "history: filter runs"},
    {'=', "=", K_SORT, "history: sort column"},
    {'-', "-", K_REVERSE, "history: sort reversed"},
    {'#', "#", K_METRIC, "history: curve metric"},
    {'~', "~", K_SMOOTH, "history: smoothing"},
    {'%', "%", K_BAND, "history: bands, cursor"},
    {'[', "[", K_CUR_LEFT, "history: bands, cursor"},
    {']', "]", K_CUR_RIGHT, "history: bands, cursor"},
    {'{', "{", K_CUR_UP, "history: bands, cursor"},
    {'}', "}", K_CUR_DOWN, "history: bands, cursor"},
};

const DashView view_history = {
    .name = "history",
    .state_size = sizeof(HistoryView),
    .init = state_init,
    .free = state_free,
    .flags = DASH_VIEW_OWN_PLOT,   /* its x axis and log scale stay its own (issue 27) */
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .enter = reload,
    .run_ended = reload,
    .tick = tick,
    .on_prompt = on_prompt,
};
