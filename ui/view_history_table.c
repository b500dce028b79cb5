/* view_history_table.c — the history view's runs table (see view_history_impl.h): each
 * run's cells, the columns (the fixed ones and, after "steps", the settings that differ
 * among the visible runs, as many as fit), the columns `runs columns=` kept in the store
 * and their values, read from the store only for runs that moved (a memo by run id).
 * Not the view's keys and loading (view_history.c) and not the plot pane
 * (view_history_plot.c). */
#define NCURSES_WIDECHAR 1
#include "view_history_impl.h"

#include "cmd_analysis.h"
#include "dash_draw.h"
#include "err.h"
#include "runkeys.h"
#include "runrecord.h"
#include "runstore_group.h"
#include "runstore_row.h"
#include "safetext.h"
#include "table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The fixed columns; the settings that differ among the visible runs go after "steps". */
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
    char from[48];
    runrecord_fmt_parent(from, sizeof from, row);
    if (row->parent_run)
        snprintf(out[1], CELL_LEN, "%s%.24s %.40s", unicode ? "↳" : "^", from, name);
    else
        snprintf(out[1], CELL_LEN, "%s", name);
    runstore_fmt_best(out[2], CELL_LEN, row->best_val,   /* an estimate marked as `runs` */
                      runstore_best_estimated(row));
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
void view_history_load_custom(Dashboard *d, RunStore *st)
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

void view_history_runs_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps,
                             int focused)
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
