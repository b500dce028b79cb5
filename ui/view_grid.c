/* view_grid.c — the grid view (issue 48): small multiples of every series of the run on
 * screen (the one registry's names, core/base/series.h), chosen by a pattern (`/` asks:
 * gate/..., sys/..., val...: a star is any run of bytes); arrows pick one, Enter enlarges it (and
 * Enter again goes back to the grid); a histogram series (hist/...) is a heat strip over
 * its steps. A pattern that matches none of the run's series
 * says so in the view with the names the run has. While shown, a live run's new points
 * are read about once a second and appended (read whole when the series listed change). Names are escaped before they are drawn. Not the plotting for
 * papers (commands/cmd_plot_grid.c) nor the history view's compare curves. */
#define NCURSES_WIDECHAR 1
#include "chart.h"
#include "dash_draw.h"
#include "dash_view.h"
#include "listnav.h"
#include "view_grid.h"
#include "err.h"
#include "series.h"

#include <curses.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID_CELL_W 30   /* a small chart's width in cells, at least */
#define GRID_CELL_H 8

enum { K_UP = VIEW_GRID_UP, K_DOWN = VIEW_GRID_DOWN, K_LEFT = VIEW_GRID_LEFT,
       K_RIGHT = VIEW_GRID_RIGHT, K_ENLARGE = VIEW_GRID_ENLARGE, K_PATTERN };

static int state_init(void *state)
{
    GridView *g = state;
    snprintf(g->pattern, sizeof g->pattern, "*");
    g->loaded_step = -1;
    return LM_OK;
}

static void clear_series(GridView *g)
{
    for (int k = 0; k < g->n; k++) free(g->x[k]), free(g->y[k]), free(g->hist[k]);
    free(g->x), free(g->y), free(g->len), free(g->names), free(g->hist), free(g->n_hist);
    g->x = g->y = NULL;
    g->len = g->n_hist = NULL;
    g->hist = NULL;
    g->names = NULL;
    g->n = 0;
}

static void state_free(void *state)
{
    clear_series(state);
}

int view_grid_load(GridView *g, RunStore *st, long run)
{
    char (*names)[SERIES_NAME_LEN] = NULL;
    int n = 0;
    g->run = run;
    g->msg[0] = 0;
    if (runstore_series_list(st, run, g->pattern, &names, &n, g->msg)) {
        clear_series(g);
        return LM_EARG;
    }
    clear_series(g);
    g->x = calloc((size_t)n, sizeof *g->x);
    g->y = calloc((size_t)n, sizeof *g->y);
    g->len = calloc((size_t)n, sizeof *g->len);
    g->hist = calloc((size_t)n, sizeof *g->hist);
    g->n_hist = calloc((size_t)n, sizeof *g->n_hist);
    g->names = names;
    if (n && (!g->x || !g->y || !g->len || !g->hist || !g->n_hist)) {
        free(names);
        g->names = NULL;
        snprintf(g->msg, sizeof g->msg, "out of memory");
        return LM_ENOMEM;
    }
    g->n = n;
    for (int k = 0; k < n; k++) {
        SeriesPoint *p = NULL;
        int m = 0;
        char err[LM_ERR_LEN];
        if (runstore_series(st, run, names[k], &p, &m, err)) m = 0;
        g->x[k] = malloc((size_t)(m ? m : 1) * sizeof(double));
        g->y[k] = malloc((size_t)(m ? m : 1) * sizeof(double));
        for (int i = 0; g->x[k] && g->y[k] && i < m; i++)
            g->x[k][i] = (double)p[i].step, g->y[k][i] = p[i].value;
        g->len[k] = g->x[k] && g->y[k] ? m : 0;
        free(p);
        SeriesRef ref;   /* a histogram: its steps too, drawn as a heat strip */
        if (!series_find(names[k], &ref, NULL) && ref.info->kind == SERIES_KIND_HIST &&
            runstore_hist_series(st, run, names[k], &g->hist[k], &g->n_hist[k], err))
            g->hist[k] = NULL, g->n_hist[k] = 0;
    }
    g->sel = listnav_move(g->sel, 0, n);
    return LM_OK;
}

/* Appends src's m items of size sz to *dst (len items): LM_OK or LM_ENOMEM. */
static int append(void **dst, int len, const void *src, int m, size_t sz)
{
    void *d = realloc(*dst, (size_t)(len + m) * sz);
    if (!d) return LM_ENOMEM;
    memcpy((char *)d + (size_t)len * sz, src, (size_t)m * sz);
    *dst = d;
    return LM_OK;
}

/* Series k's points from its last step read on, read again (that step may have gained
 * points: sys/ samples) and appended after those before it; a histogram's steps too. */
static int append_series(GridView *g, RunStore *st, int k)
{
    SeriesPoint *p = NULL;
    HistPoint *h = NULL;
    int m = 0, mh = 0, rc = LM_OK;
    char err[LM_ERR_LEN];
    long from = g->len[k] ? (long)g->x[k][g->len[k] - 1] : LONG_MIN;
    while (g->len[k] && (long)g->x[k][g->len[k] - 1] == from) g->len[k]--;
    if (runstore_series_from(st, g->run, g->names[k], from, &p, &m, err)) m = 0;
    double *v = malloc((size_t)(m ? m : 1) * sizeof *v);
    for (int pass = 0; v && pass < 2 && !rc; pass++) {
        for (int i = 0; i < m; i++) v[i] = pass ? p[i].value : (double)p[i].step;
        rc = append((void **)(pass ? &g->y[k] : &g->x[k]), g->len[k], v, m, sizeof *v);
    }
    if (!v) rc = LM_ENOMEM;
    if (!rc) g->len[k] += m;
    free(v);
    free(p);
    if (!rc && g->hist[k]) {
        from = g->n_hist[k] ? g->hist[k][g->n_hist[k] - 1].step : LONG_MIN;
        while (g->n_hist[k] && g->hist[k][g->n_hist[k] - 1].step == from) g->n_hist[k]--;
        if (runstore_hist_series_from(st, g->run, g->names[k], from, &h, &mh, err)) mh = 0;
        rc = append((void **)&g->hist[k], g->n_hist[k], h, mh, sizeof *h);
        if (!rc) g->n_hist[k] += mh;
        free(h);
    }
    return rc;
}

int view_grid_update(GridView *g, RunStore *st)
{
    char (*names)[SERIES_NAME_LEN] = NULL;
    int n = 0, same;
    char msg[LM_ERR_LEN];
    if (runstore_series_list(st, g->run, g->pattern, &names, &n, msg))
        return view_grid_load(g, st, g->run);
    same = n == g->n;
    for (int k = 0; same && k < n; k++) same = !strcmp(names[k], g->names[k]);
    free(names);
    if (!same) return view_grid_load(g, st, g->run);   /* a new series: read whole */
    for (int k = 0; k < n; k++)
        if (append_series(g, st, k)) return view_grid_load(g, st, g->run);
    return LM_OK;
}

/* Reloads when due (or forced, or another run is on screen): a live run's new points
 * appended, anything else read whole. 1 when reloaded. */
static int load(DashCtx *x, int forced)
{
    GridView *g = dash_view_state(x->d, &view_grid);
    long run = x->snap ? x->snap->run_id : 0;
    if (!g) return 0;
    if (run != g->run) forced = 1;
    long step = x->snap ? x->snap->last.step : 0;
    if (!forced && step == g->loaded_step)
        return 0;   /* no new step since (an ended run: never): nothing new to read */
    if (!dash_view_due(&g->next, forced)) return 0;
    RunStore *st = forced ? session_store(x->s) : x->s->store;
    if (!st || run <= 0) return 0;
    if (!forced && g->loaded_step >= 0 && step > g->loaded_step) view_grid_update(g, st);
    else view_grid_load(g, st, run);
    g->loaded_step = step;
    return 1;
}

static void enter(DashCtx *x) { load(x, 1); }

static int tick(DashCtx *x) { return load(x, 0); }

/* The columns of the grid in a width. */
static int grid_cols(int w)
{
    int c = w / GRID_CELL_W;
    return c < 1 ? 1 : c;
}

/* A histogram series over time in r: a column per step (the steps spread over the
 * width), a row per group of bins (the highest values on top), each cell shaded by its
 * share of that step's largest count; the last step's range in the bottom line. */
static void heat_strip(Canvas *c, Rect r, const HistPoint *h, int n, const CanvasCaps *caps)
{
    static const char *const UNI[] = {" ", "░", "▒", "▓", "█"}, *const ASC[] = {" ", ".", ":",
                                                                                  "=", "#"};
    if (n <= 0 || r.w < 2 || r.h < 2) {
        dash_draw_message(c, r, "no histogram yet");
        return;
    }
    int rows = r.h - 1;
    for (int col = 0; col < r.w; col++) {
        const SeriesHist *s = &h[(long)col * n / r.w].h;
        long top = 1;
        for (int b = 0; b < SERIES_HIST_BINS; b++) top = s->counts[b] > top ? s->counts[b] : top;
        for (int row = 0; row < rows; row++) {
            int b0 = (rows - 1 - row) * SERIES_HIST_BINS / rows;
            int b1 = (rows - row) * SERIES_HIST_BINS / rows;
            long most = 0;
            for (int b = b0; b < b1 && b < SERIES_HIST_BINS; b++)
                most = s->counts[b] > most ? s->counts[b] : most;
            int shade = most ? 1 + (int)(3.999 * (double)most / (double)top) : 0;
            canvas_text(c, r.x + col, r.y + row, 1, caps->unicode ? UNI[shade] : ASC[shade],
                        shade ? UI_COLOR_HEAT0 + shade : 0, 0);
        }
    }
    char foot[160];
    const SeriesHist *last = &h[n - 1].h;
    snprintf(foot, sizeof foot, "steps %ld..%ld  last [%.3g, %.3g]%s", h[0].step, h[n - 1].step,
             last->lo, last->hi, last->n_nan + last->n_posinf + last->n_neginf ? "  non-finite!"
             : "");
    canvas_text(c, r.x, r.y + rows, r.w, foot, UI_COLOR_DIM, 0);
}

/* One chart: its box titled with the series' escaped name (and unit, when enlarged). */
static void chart_cell(Canvas *c, Rect r, const GridView *g, int k, const CanvasCaps *caps,
                       int selected, int big)
{
    char title[SERIES_NAME_LEN * 4 + 160], shown[SERIES_NAME_LEN * 4];
    SeriesRef ref;
    int known = !series_find(g->names[k], &ref, NULL);
    series_escape(shown, sizeof shown, g->names[k]);
    if (big && known)
        snprintf(title, sizeof title, "%s%s%s%s: %s (%s, %s)", shown, ref.info->unit[0] ? " ["
                 : "", ref.info->unit, ref.info->unit[0] ? "]" : "", ref.info->help,
                 series_kind_name(ref.info->kind), series_agg_name(ref.info->agg));
    else if ((int)strlen(shown) > r.w - 6 && r.w > 12)   /* long names differ at the end */
        snprintf(title, sizeof title, "%s%s", caps->unicode ? "…" : "~",
                 shown + strlen(shown) - (size_t)(r.w - 7));
    else
        snprintf(title, sizeof title, "%s", shown);
    canvas_box(c, r, title, selected, caps->unicode);
    if (g->hist && g->hist[k]) {
        heat_strip(c, canvas_rect_inner(r), g->hist[k], g->n_hist[k], caps);
        return;
    }
    ChartSeries s = {g->x[k], g->y[k], g->len[k], NULL, UI_COLOR_SERIES1, CHART_LINE};
    ChartData d = {&s, 1, big ? "step" : NULL, 0, 0, 0, 0, 0};
    chart_draw(c, canvas_rect_inner(r), &d, caps);
}

static void draw(Canvas *c, Rect r, Dashboard *dash, const Snapshot *sn,
                 const CanvasCaps *caps, int focused)
{
    (void)sn;
    GridView *g = dash_view_state(dash, &view_grid);
    if (!g) return;
    char head[SERIES_NAME_LEN * 4 + 200], shown[SERIES_NAME_LEN * 4];
    snprintf(head, sizeof head, "run #%ld  series %s: %d  (arrows pick, Enter enlarges, / "
             "pattern)", g->run, series_escape(shown, sizeof shown, g->pattern), g->n);
    canvas_text(c, r.x + 1, r.y, r.w - 2, head, focused ? UI_COLOR_ACCENT : UI_COLOR_DIM, 0);
    Rect area = {r.x, r.y + 1, r.w, r.h - 1};
    if (g->run <= 0 || g->n == 0) {
        canvas_box(c, area, "grid", focused, caps->unicode);
        dash_draw_message(c, canvas_rect_inner(area), g->msg[0] ? g->msg : g->run <= 0
                          ? "no run on screen: `train`, or `attach ID`"
                          : "the run's series appear here");
        return;
    }
    if (g->enlarged) {
        chart_cell(c, area, g, g->sel, caps, 1, 1);
        return;
    }
    int cols = grid_cols(area.w), rows = area.h / GRID_CELL_H;
    g->cols = cols;   /* what Up and Down move by */
    rows = rows < 1 ? 1 : rows;
    int per = cols * rows, page, pages, first = listnav_page(g->sel, per, g->n, &page, &pages);
    int cw = area.w / cols, rh = area.h / rows;
    for (int k = first; k < g->n && k < first + per; k++) {
        int i = k - first;
        Rect cell = {area.x + (i % cols) * cw, area.y + (i / cols) * rh, cw, rh};
        chart_cell(c, cell, g, k, caps, k == g->sel, 0);
    }
    if (g->n > per) {
        snprintf(head, sizeof head, " page %d of %d ", page, pages);
        canvas_text(c, area.x + area.w - (int)strlen(head) - 1, area.y + area.h - 1,
                    (int)strlen(head), head, UI_COLOR_DIM, 0);
    }
}

void view_grid_move(GridView *g, int action)
{
    int cols = g->cols > 0 ? g->cols : 1, step = 0;
    switch (action) {
    case K_LEFT: step = -1; break;
    case K_RIGHT: step = 1; break;
    case K_UP: step = -cols; break;
    case K_DOWN: step = cols; break;
    case K_ENLARGE: g->enlarged = !g->enlarged && g->n > 0; break;
    default: break;
    }
    g->sel = listnav_move(g->sel, step, g->n);
}

static void on_key(DashCtx *x, int action)
{
    GridView *g = dash_view_state(x->d, &view_grid);
    if (!g) return;
    if (action == K_PATTERN) {
        dash_view_prompt(x, "series> ", g->pattern);
        return;
    }
    view_grid_move(g, action);
}

static void on_prompt(DashCtx *x, const char *line)
{
    GridView *g = dash_view_state(x->d, &view_grid);
    char err[LM_ERR_LEN];
    if (!g) return;
    const char *p = line[0] ? line : "*";   /* empty: every series */
    if (series_pattern_check(p, err)) {
        dash_view_out(x, UI_COLOR_ERROR, "error: %s", err);
        return;
    }
    snprintf(g->pattern, sizeof g->pattern, "%s", p);
    g->sel = 0;
    g->enlarged = 0;
    load(x, 1);
    if (g->msg[0]) dash_view_out(x, UI_COLOR_ERROR, "error: %s", g->msg);
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "arrows", K_UP, "grid: pick a series"},   /* one help line */
    {DASH_KEY_FN(KEY_DOWN), "arrows", K_DOWN, "grid: pick a series"},
    {DASH_KEY_FN(KEY_LEFT), "arrows", K_LEFT, "grid: pick a series"},
    {DASH_KEY_FN(KEY_RIGHT), "arrows", K_RIGHT, "grid: pick a series"},
    {'\n', "Enter", K_ENLARGE, "grid: enlarge / back"},
    {'/', "/", K_PATTERN, "grid: series pattern"},
};

const DashView view_grid = {
    .name = "grid",
    .state_size = sizeof(GridView),
    .init = state_init,
    .free = state_free,
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .enter = enter,
    .run_ended = enter,
    .tick = tick,
    .on_prompt = on_prompt,
};
