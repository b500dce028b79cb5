/* view_history.c — the history view: the run store's runs (sort, filter), marking runs
 * (their loss curves overlay here and in the training view, their config diff shows),
 * opening one. Reloads the list when shown, when the shown run ends, and when another
 * process changed the store (runs added, removed or updated; polled on the loop's tick).
 * Not the loaders (dash_data.c) and not the table widget (table.c). */
#define NCURSES_WIDECHAR 1
#include "dash_data.h"
#include "dash_groups.h"
#include "cmd_analysis.h"
#include "runstore_group.h"
#include "safetext.h"
#include "dash_draw.h"
#include "runkeys.h"
#include "dash_view.h"
#include "err.h"
#include "table.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K_UP, K_DOWN, K_PAGE_UP, K_PAGE_DOWN, K_MARK, K_OPEN, K_FILTER, K_SORT, K_METRIC,
       K_SMOOTH, K_BAND, K_CUR_LEFT, K_CUR_RIGHT, K_CUR_UP, K_CUR_DOWN, K_REVERSE };

/* The fixed columns; the settings that differ among the visible runs go after "steps". */
extern const DashView view_history;

/* The view's own state (HistoryView, dash_data.h). The view's entry points (draw, the keys,
 * tick, reload) make sure it exists before anything below reads it, so helpers take it as
 * given; hv(d) is that lookup. */
static HistoryView *hv(const Dashboard *d)
{
    return dash_view_state((Dashboard *)d, &view_history);
}

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

static const TableColumn RUN_COLS[] = {
    {"id", 4, TABLE_RIGHT}, {"name", 0, TABLE_LEFT}, {"best val", 10, TABLE_RIGHT},
    {"steps", 7, TABLE_RIGHT}, {"status", 10, TABLE_LEFT}, {"model", 11, TABLE_LEFT},
    {"started", 11, TABLE_LEFT}};
#define N_RUN_COLS 7
#define N_CFG_COLS 8      /* at most this many differing settings as columns (as many as
                             fit; the first N_CFG_KEEP before the trailing fixed columns) */
#define N_CFG_KEEP 3
#define MAX_COLS (N_RUN_COLS + N_CFG_COLS)
#define CELL_LEN 72

/* The row's cells in RUN_COLS order, then the values of the n_cfg settings keys. A fork's
 * name carries its lineage: "↳#7@200 name" (its parent and the step it forked at). */
static void run_cells(const RunRow *row, char (*out)[CELL_LEN], char (*keys)[32], int n_cfg,
                      int unicode)
{
    snprintf(out[0], CELL_LEN, "%ld", row->id);
    char name[CELL_LEN];
    safetext_escape(name, sizeof name, row->name, 0);   /* stored text: escaped */
    if (row->parent_run)
        snprintf(out[1], CELL_LEN, "%s#%ld@%ld %.40s", unicode ? "↳" : "^",
                 row->parent_run, row->parent_step, name);
    else
        snprintf(out[1], CELL_LEN, "%s", name);
    if (isnan(row->best_val))
        snprintf(out[2], CELL_LEN, "-");
    else
        snprintf(out[2], CELL_LEN, "%.4f", row->best_val);
    snprintf(out[3], CELL_LEN, "%ld", row->last_step);
    snprintf(out[4], CELL_LEN, "%s", row->status);
    snprintf(out[5], CELL_LEN, "%s", row->model);
    double t = row->started > 0 ? row->started : row->created;
    time_t tt = (time_t)t;
    struct tm tm;
    if (t > 0 && localtime_r(&tt, &tm))
        strftime(out[6], CELL_LEN, "%m-%d %H:%M", &tm);
    else
        snprintf(out[6], CELL_LEN, "-");
    for (int k = 0; k < n_cfg; k++) {
        char v[CELL_LEN];
        runkeys_config_value(row->config, keys[k], v, sizeof v);
        safetext_escape(out[N_RUN_COLS + k], CELL_LEN, v, 0);
    }
}

/* RUN_COLS with the first n_cfg settings keys inserted after "steps", each as wide as its
 * widest value in rows [lo, hi) (at most 10); the count. */
static int build_columns(const Dashboard *d, int lo, int hi, TableColumn *cols, int *order,
                         char (*keys)[32], int n_cfg)
{
    int nc = 0;
    for (int j = 0; j < N_RUN_COLS; j++) {
        cols[nc] = RUN_COLS[j], order[nc++] = j;
        if (j != 3)
            continue;
        for (int k = 0; k < n_cfg; k++) {
            int w = (int)strlen(keys[k]);
            for (int i = lo; i < hi; i++) {
                char v[CELL_LEN];
                runkeys_config_value(hv(d)->runs[i].config, keys[k], v, sizeof v);
                w = (int)strlen(v) > w ? (int)strlen(v) : w;
            }
            /* the config's steps is the budget: "steps" is the fixed column's (last step) */
            const char *head = strcmp(keys[k], "steps") ? keys[k] : "budget";
            w = (int)strlen(head) > w ? (int)strlen(head) : w;
            cols[nc] = (TableColumn){head, w < 10 ? w : 10, TABLE_RIGHT};
            order[nc++] = N_RUN_COLS + k;
        }
    }
    return nc;
}

/* The width nc columns take with a space between each. */
static int columns_width(const TableColumn *cols, int nc)
{
    int used = nc - 1;
    for (int j = 0; j < nc; j++)
        used += cols[j].width;
    return used;
}

/* The table's columns: RUN_COLS with the differing settings of rows [lo, hi) inserted
 * after "steps" (each as wide as its widest value, at most 10). Returns the count;
 * order[j] is the cell index of column j. */
static int run_columns(const Dashboard *d, int lo, int hi, int width, TableColumn *cols,
                       int *order, char (*keys)[32], int *n_cfg)
{
    const char *configs[64];
    long sweeps[64];
    int n = 0;
    for (int i = lo; i < hi && n < 64; i++, n++) {
        configs[n] = hv(d)->runs[i].config;
        sweeps[n] = hv(d)->runs[i].sweep_id;
    }
    char all[32][32];
    int nd = n > 1 ? dash_draw_diff_keys(configs, sweeps, n, all, 32) : 0;
    int n_all = 0;
    for (int k = 0; k < nd && k < 32 && n_all < N_CFG_COLS; k++)   /* not a fixed column's */
        if (strcmp(all[k], "name") && strcmp(all[k], "model"))
            memcpy(keys[n_all++], all[k], sizeof all[k]);
    /* as many settings as fit beside every fixed column; past that the first N_CFG_KEEP,
       before the columns after them */
    int nc = 0, keep = n_all < N_CFG_KEEP ? n_all : N_CFG_KEEP;
    for (*n_cfg = n_all; *n_cfg >= keep; (*n_cfg)--) {
        nc = build_columns(d, lo, hi, cols, order, keys, *n_cfg);
        if (columns_width(cols, nc) + 16 <= width || *n_cfg == keep)
            break;
    }
    /* the columns after the settings go first when the name would get under 16 */
    while (columns_width(cols, nc) + 16 > width && nc > 4 + *n_cfg)
        nc--;
    return nc;
}

static int is_marked(const Dashboard *d, long id)
{
    for (int i = 0; i < d->n_marked; i++)
        if (d->marked[i] == id)
            return 1;
    return 0;
}

/* ---- the columns kept by `runs columns=` (issue 28) ---- */

#define CUSTOM_MAX 16

/* The table in the store's kept columns (cmd_runs_table_cell formats every cell). */
static void runs_table_custom(Canvas *c, Rect in, Dashboard *d, const CanvasCaps *caps)
{
    char names[CUSTOM_MAX][32], list[512];
    int nc = 0, n = hv(d)->n_runs;
    snprintf(list, sizeof list, "%s", hv(d)->hist_cols);
    char *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w && nc < CUSTOM_MAX; w = strtok_r(NULL, ",", &save))
        snprintf(names[nc++], 32, "%.31s", w);
    int sel = dash_draw_clamp(hv(d)->run_sel, 0, n - 1), page = table_page_rows(in);
    int lo = dash_draw_clamp((hv(d)->run_scroll < sel - page ? hv(d)->run_scroll : sel - page), 0, n);
    int hi = dash_draw_clamp((hv(d)->run_scroll > sel ? hv(d)->run_scroll : sel) + page + 1, 0, n);
    TableColumn cols[CUSTOM_MAX];
    const char **cells = calloc((size_t)n * (nc ? nc : 1), sizeof *cells);
    char (*buf)[CUSTOM_MAX][CELL_LEN] = malloc((size_t)(hi - lo + 1) * sizeof *buf);
    if (cells && buf && d->mark_cap >= n) {
        for (int j = 0; j < nc; j++)
            cols[j] = (TableColumn){names[j], (int)strlen(names[j]), TABLE_LEFT};
        for (int i = lo; i < hi; i++)
            for (int j = 0; j < nc; j++) {
                double num;
                char v[CELL_LEN];
                if (hv(d)->hist_series && cmd_runs_table_is_series(names[j])) {   /* a series */
                    num = hv(d)->hist_series[(size_t)i * CUSTOM_MAX + j];
                    snprintf(v, sizeof v, isnan(num) ? "-" : "%.6g", num);
                } else
                    cmd_runs_table_cell(&hv(d)->runs[i], hv(d)->hist_group ? hv(d)->hist_group[i]
                                        : NULL, hv(d)->hist_smooth ? hv(d)->hist_smooth[i] : NAN,
                                        names[j], v, sizeof v, &num);
                safetext_escape(buf[i - lo][j], CELL_LEN, v, 0);
                int l = (int)strlen(buf[i - lo][j]);
                if (!strcmp(names[j], "name")) cols[j].width = 0;   /* takes what is left */
                else if (l > cols[j].width) cols[j].width = l > 24 ? 24 : l;
                if (!isnan(num)) cols[j].align = TABLE_RIGHT;
                cells[(size_t)i * nc + j] = buf[i - lo][j];
            }
        TableData td = {cols, nc, cells, n, sel, d->mark_rows, UI_COLOR_SERIES3, -1, 0,
                        hv(d)->run_scroll};
        hv(d)->run_scroll = table_draw(c, in, &td, caps);
    }
    free(cells);
    free(buf);
}

/* Loads what the kept columns need beyond the run rows: groups, smoothed losses. */
/* A run's custom values as last read, and what they were read at. */
struct HistCustomMemo {
    long id, last_step;
    double best_val, final_val;   /* an evaluation moves these at the same step */
    char status[16];
    double smooth, series[CUSTOM_MAX];
};

static int memo_cmp(const void *a, const void *b)
{
    long x = ((const struct HistCustomMemo *)a)->id, y = ((const struct HistCustomMemo *)b)->id;
    return (x > y) - (x < y);
}

/* The memo of run r when it still holds (same columns, last step and status), else NULL. */
static const struct HistCustomMemo *memo_of(const HistoryView *h, const RunRow *r)
{
    struct HistCustomMemo key = {.id = r->id};
    const struct HistCustomMemo *m =
        h->memo ? bsearch(&key, h->memo, (size_t)h->n_memo, sizeof key, memo_cmp) : NULL;
    return m && m->last_step == r->last_step && !strcmp(m->status, r->status) &&
           !memcmp(&m->best_val, &r->best_val, sizeof m->best_val) &&
           !memcmp(&m->final_val, &r->final_val, sizeof m->final_val) &&
           !strcmp(h->memo_cols, h->hist_cols) ? m : NULL;
}

/* Keeps this reload's values as the memo, sorted by run id. */
static void memo_keep(HistoryView *h)
{
    struct HistCustomMemo *m = malloc((size_t)(h->n_runs ? h->n_runs : 1) * sizeof *m);
    if (!m) return;
    for (int i = 0; i < h->n_runs; i++) {
        m[i] = (struct HistCustomMemo){.id = h->runs[i].id, .last_step = h->runs[i].last_step,
                                       .best_val = h->runs[i].best_val,
                                       .final_val = h->runs[i].final_val,
                                       .smooth = h->hist_smooth ? h->hist_smooth[i] : NAN};
        snprintf(m[i].status, sizeof m[i].status, "%s", h->runs[i].status);
        for (int j = 0; j < CUSTOM_MAX; j++)
            m[i].series[j] = h->hist_series ? h->hist_series[(size_t)i * CUSTOM_MAX + j] : NAN;
    }
    qsort(m, (size_t)h->n_runs, sizeof *m, memo_cmp);
    free(h->memo);
    h->memo = m;
    h->n_memo = h->n_runs;
    snprintf(h->memo_cols, sizeof h->memo_cols, "%s", h->hist_cols);
}

/* The kept columns' values of every listed run: final_smooth and series aggregates read
 * from the store (each reads the run's series whole) only for runs that moved since the
 * last reload; the others from the memo (a reload comes every second while any run
 * trains: 5,000 runs' values took 11 s). */
static void load_custom(Dashboard *d, RunStore *st)
{
    HistoryView *h = hv(d);
    free(h->hist_group), h->hist_group = NULL;
    free(h->hist_smooth), h->hist_smooth = NULL;
    free(h->hist_series), h->hist_series = NULL;
    if (!cmd_runs_table_saved(st, h->hist_cols, sizeof h->hist_cols)) {
        h->hist_cols[0] = 0;
        return;
    }
    char wrapped[520], err[LM_ERR_LEN];
    size_t n = (size_t)(h->n_runs ? h->n_runs : 1);
    snprintf(wrapped, sizeof wrapped, ",%s,", h->hist_cols);
    long *ids = malloc(n * sizeof *ids);
    if (strstr(wrapped, ",group,") && ids && (h->hist_group = malloc(n * sizeof *h->hist_group))) {
        char (*g)[RUNSTORE_GROUP_LEN] = malloc(n * RUNSTORE_GROUP_LEN);
        for (int i = 0; i < h->n_runs; i++) ids[i] = h->runs[i].id;
        int rc = g ? runstore_groups_of(st, ids, h->n_runs, g, err) : LM_ENOMEM;
        for (int i = 0; i < h->n_runs; i++)
            snprintf(h->hist_group[i], 64, "%.63s", rc ? "" : g[i]);
        free(g);
    }
    free(ids);
    if (strstr(wrapped, ",final_smooth,") && (h->hist_smooth = malloc(n * sizeof *h->hist_smooth)))
        for (int i = 0; i < h->n_runs; i++) {
            const struct HistCustomMemo *m = memo_of(h, &h->runs[i]);
            h->hist_smooth[i] = m ? m->smooth : cmd_runs_table_final_smooth(st, h->runs[i].id);
        }
    char list[512];   /* the columns that are series of the registry: each run's number */
    snprintf(list, sizeof list, "%s", h->hist_cols);
    char *save = NULL;
    int j = 0;
    for (char *w = strtok_r(list, ",", &save); w && j < CUSTOM_MAX; w = strtok_r(NULL, ",", &save), j++) {
        if (!cmd_runs_table_is_series(w)) continue;
        size_t cells = n * CUSTOM_MAX;
        if (!h->hist_series && (h->hist_series = malloc(cells * sizeof(double))))
            for (size_t k = 0; k < cells; k++) h->hist_series[k] = NAN;
        for (int i = 0; h->hist_series && i < h->n_runs; i++) {
            const struct HistCustomMemo *m = memo_of(h, &h->runs[i]);
            double *v = &h->hist_series[(size_t)i * CUSTOM_MAX + j];
            if (m) *v = m->series[j];
            else runstore_series_summary(st, h->runs[i].id, w, v, err);
        }
    }
    memo_keep(h);
}

static void runs_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused)
{
    static const char *const sorts[DASH_N_SORTS] = {"best val", "recent", "model", "name",
                                                    "steps", "status", "id"};
    char title[400];
    snprintf(title, sizeof title, "runs: %d | sort %s%s%s%s%s | Space mark, Enter open, / "
             "filter, = sort, - reverse", hv(d)->n_runs,
             hv(d)->sort_key[0] ? hv(d)->sort_key : sorts[hv(d)->sort], hv(d)->sort_desc ? " (reversed)" : "",
             hv(d)->filter[0] ? " | filter \"" : "", hv(d)->filter, hv(d)->filter[0] ? "\"" : "");
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int n = hv(d)->n_runs;
    if (n == 0) {
        dash_draw_message(c, in, hv(d)->filter[0] ? "no run matches the filter"
                                              : "no runs yet: `train` one");
        return;
    }
    if (d->mark_cap < n) {
        unsigned char *m = realloc(d->mark_rows, (size_t)n);
        if (m)
            d->mark_rows = m, d->mark_cap = n;
    }
    if (hv(d)->hist_cols[0] && d->mark_cap >= n) {   /* the columns `runs columns=` kept */
        for (int i = 0; i < n; i++)
            d->mark_rows[i] = (unsigned char)is_marked(d, hv(d)->runs[i].id);
        runs_table_custom(c, in, d, caps);
        return;
    }
    int sel = dash_draw_clamp(hv(d)->run_sel, 0, n - 1), page = table_page_rows(in);
    int lo = dash_draw_clamp((hv(d)->run_scroll < sel - page ? hv(d)->run_scroll : sel - page), 0, n);
    int hi = dash_draw_clamp((hv(d)->run_scroll > sel ? hv(d)->run_scroll : sel) + page + 1, 0, n);
    TableColumn cols[MAX_COLS];
    int order[MAX_COLS], n_cfg;
    char keys[N_CFG_COLS][32];
    int nc = run_columns(d, lo, hi, in.w - 2, cols, order, keys, &n_cfg);
    const char **cells = calloc((size_t)n * nc, sizeof *cells);
    char (*buf)[MAX_COLS][CELL_LEN] = malloc((size_t)(hi - lo + 1) * sizeof *buf);
    if (d->mark_cap < n) {
        unsigned char *m = realloc(d->mark_rows, (size_t)n);
        if (m)
            d->mark_rows = m, d->mark_cap = n;
    }
    if (cells && buf && d->mark_cap >= n) {
        for (int i = 0; i < n; i++)
            d->mark_rows[i] = (unsigned char)is_marked(d, hv(d)->runs[i].id);
        for (int i = lo; i < hi; i++) {
            run_cells(&hv(d)->runs[i], buf[i - lo], keys, n_cfg, caps->unicode);
            for (int j = 0; j < nc; j++)
                cells[(size_t)i * nc + j] = buf[i - lo][order[j]];
        }
        /* the column each sort orders by: best val, started, model, name, steps, status, id;
         * a setting's own column */
        static const int sort_cell[DASH_N_SORTS] = {2, 6, 5, 1, 3, 4, 0};
        int sc = -1;
        for (int j = 0; j < nc; j++)
            if (hv(d)->sort_key[0] ? order[j] >= N_RUN_COLS &&
                                     !strcmp(keys[order[j] - N_RUN_COLS], hv(d)->sort_key)
                               : order[j] == sort_cell[hv(d)->sort])
                sc = j;
        int desc = (hv(d)->sort_key[0] || hv(d)->sort != DASH_SORT_RECENT) ? hv(d)->sort_desc
                                                                    : !hv(d)->sort_desc;
        TableData td = {cols, nc, cells, n, sel, d->mark_rows, UI_COLOR_SERIES3,
                        sc, desc, hv(d)->run_scroll};
        hv(d)->run_scroll = table_draw(c, in, &td, caps);
    }
    free(cells);
    free(buf);
}

/* The marked runs side by side: a column per run (its id in its curve's colour), a row
 * per setting that differs, then the results; values cut with an ellipsis, never
 * wrapped; what does not fit is counted on the last row. */
static void compare_table(Canvas *c, Rect in, const Dashboard *d, const CanvasCaps *caps)
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
            else if (isnan(v))
                snprintf(t, sizeof t, "-");
            else
                snprintf(t, sizeof t, "%.4f", v);
            canvas_text_fit(c, in.x + kw + 1 + i * cw, y, cw - 1, t, UI_COLOR_DEFAULT, 0,
                            caps->unicode);
        }
    }
}

/* ---- seed groups as bands, the curve cursor (issue 28) ---- */

/* The marked runs' groups (hv(d)->bands) as mean lines over ± std bands, on the x axis `>`
 * chose: steps, or tokens or seconds at each group's own pace (a group whose pace is
 * unknown is left out rather than drawn in steps under a tokens label). */
static void draw_bands(Canvas *c, Rect pin, Dashboard *d, const CanvasCaps *caps)
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
static void draw_cursor(Canvas *c, Rect pr, const ChartFrame *f, Dashboard *d,
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
static void cursor_key(Dashboard *d, int action)
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
    runs_table(c, (Rect){r.x, r.y, r.w, th}, d, caps, focused);
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
        draw_bands(c, pin, d, caps);
        compare_table(c, cin, d, caps);
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
    draw_cursor(c, pr, &fr, d, ps, n, caps);
    compare_table(c, cin, d, caps);
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
        load_custom(x->d, st);
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
        cursor_key(d, action);
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
        load_custom(x->d, st);
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
