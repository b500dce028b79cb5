/* view_history.c — the history view: the run store's runs (sort, filter), marking runs
 * (their loss curves overlay here and in the training view, their config diff shows),
 * opening one. Reloads the list when shown and when the shown run ends.
 * Not the loaders (dash_data.c) and not the table widget (table.c). */
#define NCURSES_WIDECHAR 1
#include "dash_data.h"
#include "safetext.h"
#include "dash_draw.h"
#include "dash_view.h"
#include "err.h"
#include "table.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { K_UP, K_DOWN, K_PAGE_UP, K_PAGE_DOWN, K_MARK, K_OPEN, K_FILTER, K_SORT };

static const TableColumn RUN_COLS[] = {
    {"id", 5, TABLE_RIGHT}, {"name", 0, TABLE_LEFT}, {"model", 13, TABLE_LEFT},
    {"status", 11, TABLE_LEFT}, {"steps", 7, TABLE_RIGHT}, {"best val", 10, TABLE_RIGHT},
    {"started", 11, TABLE_LEFT}};
#define N_RUN_COLS 7
#define CELL_LEN 72

static void run_cells(const RunRow *row, char (*out)[CELL_LEN])
{
    snprintf(out[0], CELL_LEN, "%ld", row->id);
    safetext_escape(out[1], CELL_LEN, row->name, 0);   /* stored text: escaped */
    snprintf(out[2], CELL_LEN, "%s", row->model);
    snprintf(out[3], CELL_LEN, "%s", row->status);
    snprintf(out[4], CELL_LEN, "%ld", row->last_step);
    if (isnan(row->best_val))
        snprintf(out[5], CELL_LEN, "-");
    else
        snprintf(out[5], CELL_LEN, "%.4f", row->best_val);
    double t = row->started > 0 ? row->started : row->created;
    time_t tt = (time_t)t;
    struct tm tm;
    if (t > 0 && localtime_r(&tt, &tm))
        strftime(out[6], CELL_LEN, "%m-%d %H:%M", &tm);
    else
        snprintf(out[6], CELL_LEN, "-");
}

static int is_marked(const Dashboard *d, long id)
{
    for (int i = 0; i < d->n_marked; i++)
        if (d->marked[i] == id)
            return 1;
    return 0;
}

static void runs_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused)
{
    static const char *const sorts[] = {"best val", "recent", "model"};
    char title[400];
    snprintf(title, sizeof title, "runs: %d | sort %s%s%s%s | Space mark, Enter open, / "
             "filter, = sort", d->n_runs, sorts[d->sort], d->filter[0] ? " | filter \"" : "",
             d->filter, d->filter[0] ? "\"" : "");
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int n = d->n_runs;
    if (n == 0) {
        dash_draw_message(c, in, d->filter[0] ? "no run matches the filter"
                                              : "no runs yet: `train` one");
        return;
    }
    int sel = dash_draw_clamp(d->run_sel, 0, n - 1), page = table_page_rows(in);
    int lo = dash_draw_clamp((d->run_scroll < sel - page ? d->run_scroll : sel - page), 0, n);
    int hi = dash_draw_clamp((d->run_scroll > sel ? d->run_scroll : sel) + page + 1, 0, n);
    const char **cells = calloc((size_t)n * N_RUN_COLS, sizeof *cells);
    char (*buf)[N_RUN_COLS][CELL_LEN] = malloc((size_t)(hi - lo + 1) * sizeof *buf);
    if (d->mark_cap < n) {
        unsigned char *m = realloc(d->mark_rows, (size_t)n);
        if (m)
            d->mark_rows = m, d->mark_cap = n;
    }
    if (cells && buf && d->mark_cap >= n) {
        for (int i = 0; i < n; i++)
            d->mark_rows[i] = (unsigned char)is_marked(d, d->runs[i].id);
        for (int i = lo; i < hi; i++) {
            run_cells(&d->runs[i], buf[i - lo]);
            for (int j = 0; j < N_RUN_COLS; j++)
                cells[(size_t)i * N_RUN_COLS + j] = buf[i - lo][j];
        }
        static const int sort_col[] = {5, 6, 2};
        TableData td = {RUN_COLS, N_RUN_COLS, cells, n, sel, d->mark_rows, UI_COLOR_SERIES3,
                        sort_col[d->sort], d->sort == DASH_SORT_RECENT, d->run_scroll};
        d->run_scroll = table_draw(c, in, &td, caps);
    }
    free(cells);
    free(buf);
}

static void draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    (void)sn;
    int th = dash_draw_clamp(r.h * 55 / 100, 6, r.h);
    runs_table(c, (Rect){r.x, r.y, r.w, th}, d, caps, focused);
    Rect pr = {r.x, r.y + th, r.w / 2, r.h - th};
    Rect cr = {r.x + r.w / 2, r.y + th, r.w - r.w / 2, r.h - th};
    if (pr.h < 3)
        return;
    char title[64];
    snprintf(title, sizeof title, "marked runs: loss | x %s", dash_draw_x_label(d));
    canvas_box(c, pr, title, 0, caps->unicode);
    canvas_box(c, cr, "config diff of the marked runs", 0, caps->unicode);
    Rect pin = canvas_rect_inner(pr), cin = canvas_rect_inner(cr);
    if (!d->n_marked) {
        dash_draw_message(c, pin, "Space marks runs: their loss curves overlay here");
        dash_draw_message(c, cin, "and their differing settings show here");
        return;
    }
    double *b = dash_draw_scratch(d, dash_draw_curves_need(d) + 1);
    if (!b)
        return;
    PlotSeries ps[PLOT_MAX_SERIES];
    int n = dash_draw_add_curves(d, ps, 0, b, 0);
    PlotData pd = {ps, n, dash_draw_x_label(d), d->log_y, 0, 0, 0};
    plot_draw(c, pin, &pd, caps);
    dash_draw_wrap(c, cin, d->compare ? d->compare : "", UI_COLOR_DEFAULT, 1);
}

/* ---- loading and keys ---- */

static void reload(DashCtx *x)
{
    char err[LM_ERR_LEN];
    RunStore *st = session_store(x->s);
    if (st && dash_data_load_runs(x->d, st, err))
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
}

static void mark_run(DashCtx *x)
{
    Dashboard *d = x->d;
    char err[LM_ERR_LEN];
    RunStore *st = session_store(x->s);
    if (st && d->run_sel < d->n_runs &&
        dash_data_toggle_mark(d, st, d->runs[d->run_sel].id, err))
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
}

static void on_key(DashCtx *x, int action)
{
    static const int moves[] = {-1, 1, -10, 10};
    Dashboard *d = x->d;
    char line[64];
    switch (action) {
    case K_UP: case K_DOWN: case K_PAGE_UP: case K_PAGE_DOWN:
        d->run_sel = dash_draw_clamp(d->run_sel + moves[action], 0,
                                     d->n_runs > 0 ? d->n_runs - 1 : 0);
        break;
    case K_MARK: mark_run(x); break;
    case K_OPEN:
        if (d->run_sel < d->n_runs) {
            snprintf(line, sizeof line, "open %ld", d->runs[d->run_sel].id);
            x->command(x->loop, line);
        }
        break;
    case K_FILTER: dash_view_prompt(x, "filter> ", d->filter); break;
    case K_SORT: d->sort = (d->sort + 1) % DASH_N_SORTS; reload(x); break;
    default: break;
    }
}

static void on_prompt(DashCtx *x, const char *line)
{
    snprintf(x->d->filter, sizeof x->d->filter, "%s", line);
    reload(x);
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "Up", K_UP, "history: select a run"},
    {DASH_KEY_FN(KEY_DOWN), "Down", K_DOWN, "history: select a run"},
    {DASH_KEY_FN(KEY_PPAGE), "PgUp", K_PAGE_UP, "history: page the runs"},
    {DASH_KEY_FN(KEY_NPAGE), "PgDn", K_PAGE_DOWN, "history: page the runs"},
    {' ', "Space", K_MARK, "history: mark a run"},
    {'\n', "Enter", K_OPEN, "history: open the run"},
    {'/', "/", K_FILTER, "history: filter runs"},
    {'=', "=", K_SORT, "history: sort order"},
};

const DashView view_history = {
    .name = "history",
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .enter = reload,
    .run_ended = reload,
    .on_prompt = on_prompt,
};
