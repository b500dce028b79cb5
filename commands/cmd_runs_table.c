/* cmd_runs_table.c — `runs` shaped by the user (see cmd_analysis.h): columns chosen and
 * ordered (`columns=id,name,lr,best_val`, kept in the store as the next sessions'
 * layout; `columns=default` forgets it), sorting by any column (a run field, a config
 * key, `group`, or `final_smooth`: the debiased EMA of the training loss at its last
 * step, smooth.h), descending with a leading '-', and groups (`group_by=KEY`: runs
 * sharing a value of KEY, or `group_by=group` the stored seed groups) with N and
 * mean ± std of best and final validation loss. A column may be any series of the
 * registry (core/base/series.h) as its aggregate: loss, val_loss.min, gate/0/1. The filter and the list are cmd_runs.c's
 * and runstore_list's; this file only lays out and orders the rows it is given. */
#include "cmd_analysis.h"

#include "config.h"
#include "err.h"
#include "runkeys.h"
#include "suggest.h"
#include "runstore_group.h"
#include "runstore_row.h"
#include "series.h"
#include "smooth.h"
#include "sweep_analysis.h"
#include "output.h"
#include "jsonval.h"
#include "textcheck.h"
#include "textcol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int builtin_sort(const char *sort);
static int known_column(const char *col);

#define RT_MAX_COLS 16
#define RT_SMOOTH_WEIGHT 0.9     /* final_smooth: the EMA's weight (TensorBoard's slider) */
#define RT_SETTING "runs.columns"

static const char *const BUILTIN[] = {"id", "name", "model", "status", "steps", "best_val",
    "final_val", "best_ppl", "params", "created", "tags", "group", "final_smooth", "data",
    "sweep", "note", NULL};

typedef struct Row_ {
    const RunRow *r;
    char group[RUNSTORE_GROUP_LEN];
    double smooth;           /* final_smooth, NAN until computed or when none */
    double key;              /* the sort key as a number (NAN: text or missing) */
    char text_key[64];
    const char (*series)[32];   /* the table's series columns (Table.series) ... */
    int n_series;
    double sv[RT_MAX_COLS + 1]; /* ... and this run's aggregate of each (NAN: none) */
} Row;

static void cell(const Row *w, const char *c, char *out, size_t cap, double *num);

typedef struct {
    RunStore *st;
    char cols[RT_MAX_COLS][32];
    int n_cols, need_smooth, need_group;
    char series[RT_MAX_COLS + 1][32];   /* columns (and the sort) that are series */
    int n_series;
    int full_json;           /* --json without columns=: runs' one JSON schema per row */
} Table;

static void fmt_num(char *out, size_t cap, double v)
{
    if (isnan(v)) snprintf(out, cap, "-");
    else snprintf(out, cap, "%.4f", v);
}

void cmd_runs_table_cell(const RunRow *r, const char *group, double smooth, const char *c,
                         char *out, size_t cap, double *num)
{
    Row w = {.r = r, .smooth = smooth};
    snprintf(w.group, sizeof w.group, "%s", group ? group : "");
    cell(&w, c, out, cap, num);
}

/* The index of column c among w's series columns, -1 when it is not one. */
static int series_col(const Row *w, const char *c)
{
    for (int j = 0; j < w->n_series; j++)
        if (!strcmp(w->series[j], c)) return j;
    return -1;
}

/* 1 when col names a series of the registry (not a run field or a setting: lr is the
 * setting, lr.last the series). */
static int is_series(const char *col);
int cmd_runs_table_is_series(const char *col)
{
    return is_series(col);
}

static int is_series(const char *col)
{
    SeriesRef ref;
    SeriesRegAgg agg;
    return !known_column(col) && !config_find_key(col) &&
           !runstore_series_ref(col, &ref, &agg, NULL);
}

/* Cell text of column c for row w; *num its numeric value (NAN for text). */
static void cell(const Row *w, const char *c, char *out, size_t cap, double *num)
{
    const RunRow *r = w->r;
    *num = NAN;
    if (!strcmp(c, "id")) snprintf(out, cap, "%ld", r->id), *num = (double)r->id;
    else if (!strcmp(c, "name")) snprintf(out, cap, "%s", r->name);
    else if (!strcmp(c, "model")) snprintf(out, cap, "%s", r->model);
    else if (!strcmp(c, "status")) snprintf(out, cap, "%s", r->status);
    else if (!strcmp(c, "data")) snprintf(out, cap, "%s", r->data_name);
    else if (!strcmp(c, "tags")) snprintf(out, cap, "%s", r->tags[0] ? r->tags : "-");
    else if (!strcmp(c, "group")) snprintf(out, cap, "%s", w->group[0] ? w->group : "-");
    else if (!strcmp(c, "note")) {   /* the newest note (runs.notes mirrors it), one line */
        snprintf(out, cap, "%s", r->notes[0] ? r->notes : "-");
        for (char *p = out; *p; p++) if (*p == '\n' || *p == '\t') *p = ' ';
    }
    else if (!strcmp(c, "steps")) snprintf(out, cap, "%ld", r->last_step), *num = (double)r->last_step;
    else if (!strcmp(c, "params")) snprintf(out, cap, "%ld", r->params), *num = (double)r->params;
    else if (!strcmp(c, "sweep")) snprintf(out, cap, "%ld", r->sweep_id), *num = (double)r->sweep_id;
    else if (!strcmp(c, "best_val")) fmt_num(out, cap, *num = r->best_val);
    else if (!strcmp(c, "final_val")) fmt_num(out, cap, *num = r->final_val);
    else if (!strcmp(c, "best_ppl")) {
        *num = exp(r->best_val);
        if (isnan(*num)) snprintf(out, cap, "-");
        else snprintf(out, cap, "%.2f", *num);
    } else if (!strcmp(c, "final_smooth")) fmt_num(out, cap, *num = w->smooth);
    else if (!strcmp(c, "created")) {
        time_t t = (time_t)r->created;
        struct tm tm;
        *num = r->created;
        if (r->created <= 0 || !localtime_r(&t, &tm)) snprintf(out, cap, "-");
        else strftime(out, cap, "%Y-%m-%d %H:%M", &tm);
    } else if (series_col(w, c) >= 0) {   /* a series of the registry: its aggregate */
        *num = w->sv[series_col(w, c)];
        if (isnan(*num)) snprintf(out, cap, "-");
        else snprintf(out, cap, "%.6g", *num);
    } else if (runstore_config_value(r->config, c, out, cap)) {
        char *end;
        double x = strtod(out, &end);
        if (end != out && !*end) *num = x;
    } else snprintf(out, cap, "-");   /* not a setting of this run */
}

/* The debiased EMA of run id's training loss at its last step. */
double cmd_runs_table_final_smooth(RunStore *st, long id)
{
    SeriesPoint *p = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (runstore_series(st, id, "loss", &p, &n, err) || n == 0) {
        free(p);
        return NAN;
    }
    double *y = malloc((size_t)n * sizeof *y), v = NAN;
    for (int i = 0; y && i < n; i++) y[i] = p[i].value;
    if (y) v = smooth_ema_last(y, n, RT_SMOOTH_WEIGHT);
    free(y), free(p);
    return v;
}

/* 1 when col is a run field or a setting of at least one of the runs (none listed: any). */
static int column_exists(const char *col, const RunRow *runs, int n)
{
    if (known_column(col) || is_series(col) || n == 0) return 1;
    char v[64];
    for (int i = 0; i < n; i++)
        if (runstore_config_value(runs[i].config, col, v, sizeof v)) return 1;
    return 0;
}

static int desc_;   /* qsort has no context argument: the sort's direction */

/* Numbers before text, missing values last; ties by id descending (newest first). */
static int by_key(const void *a, const void *b)
{
    const Row *x = a, *y = b;
    int fx = !isnan(x->key), fy = !isnan(y->key), tx = x->text_key[0] != 0,
        ty = y->text_key[0] != 0;
    int c = 0;
    if (fx && fy) c = x->key < y->key ? -1 : x->key > y->key;
    else if (fx != fy) return fy - fx;
    else if (tx != ty) return ty - tx;
    else if (tx) c = strcmp(x->text_key, y->text_key);
    if (c) return desc_ ? -c : c;
    return x->r->id < y->r->id ? 1 : -1;
}

/* 1 when col names a run field (id name model status steps best_val final_val best_ppl
 * params created tags group final_smooth data sweep); other columns are settings. */
static int cmd_runs_table_known(const char *col)
{
    for (int i = 0; BUILTIN[i]; i++)
        if (!strcmp(BUILTIN[i], col)) return 1;
    return 0;
}

/* 0 when col is a run field, a setting, or a key some stored run's config holds; else
 * LM_EARG with "unknown column 'nmae' — did you mean 'name'?" in err. */
static int column_known(RunStore *st, const char *col, char *err)
{
    if (cmd_runs_table_known(col) || config_find_key(col) || is_series(col) ||
        runkeys_store_has(st, col))
        return LM_OK;
    const char *cands[256];
    int n = 0, nk;
    for (int i = 0; BUILTIN[i]; i++)
        cands[n++] = BUILTIN[i];
    const ConfigKey *ck = config_keys(&nk);
    for (int i = 0; i < nk && n < 256; i++)
        cands[n++] = ck[i].key;
    for (int i = 0; i < series_count() && n < 256; i++)   /* the registry's series */
        if (!series_info(i)->family) cands[n++] = series_info(i)->name;
    char snear[SERIES_NAME_LEN];   /* else a series' name or alias (the registry's) */
    const char *near = suggest_nearest(col, cands, n);
    if (!near) near = series_nearest(col, snear, sizeof snear);
    char hint[96] = "";
    if (near)
        snprintf(hint, sizeof hint, " — did you mean '%s'?", near);
    return err_set(err, LM_EARG, "unknown column '%s'%s (columns: id name model status steps "
                   "best_val final_val best_ppl params created tags group final_smooth data "
                   "sweep, a setting such as lr, or a series such as loss, val_loss.min, "
                   "gate/0/1; `help runs`)", col, hint);
}

/* Parses "a,b,c" into t->cols. LM_EARG after reporting. */
static int parse_columns(Session *s, const char *spec, Table *t)
{
    t->n_cols = 0;
    const char *p = spec;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 32)
            return session_error(s, LM_EARG, "columns=%s: give names separated by commas, e.g. "
                                 "columns=id,name,lr,best_val", spec);
        if (t->n_cols == RT_MAX_COLS)
            return session_error(s, LM_EARG, "columns=: at most %d columns", RT_MAX_COLS);
        snprintf(t->cols[t->n_cols++], 32, "%.*s", (int)len, p);
        char err[LM_ERR_LEN];
        if (column_known(t->st, t->cols[t->n_cols - 1], err))
            return session_error(s, LM_EARG, "columns=%s: %s", spec, err);
        p += len + (p[len] == ',');
    }
    if (t->n_cols == 0)
        return session_error(s, LM_EARG, "columns= is empty: give names, or columns=default");
    return LM_OK;
}

static void table_needs(Table *t, const char *sort_key, const char *group_by)
{
    for (int c = 0; c <= t->n_cols; c++) {   /* the columns and the sort that are series */
        const char *k = c < t->n_cols ? t->cols[c] : sort_key;
        int dup = 0;
        for (int j = 0; k && j < t->n_series; j++) dup |= !strcmp(t->series[j], k);
        if (k && !dup && is_series(k)) snprintf(t->series[t->n_series++], 32, "%s", k);
    }
    for (int c = 0; c < t->n_cols; c++) {
        t->need_smooth |= !strcmp(t->cols[c], "final_smooth");
        t->need_group |= !strcmp(t->cols[c], "group");
    }
    if (sort_key) {
        t->need_smooth |= !strcmp(sort_key, "final_smooth");
        t->need_group |= !strcmp(sort_key, "group");
    }
    if (group_by) t->need_group |= !strcmp(group_by, "group");
}

/* Fills rows[] from the runs: groups and smoothed losses where a column needs them. */
static int rows_fill(Session *s, Table *t, const RunRow *runs, int n, Row *rows)
{
    char err[LM_ERR_LEN];
    for (int i = 0; i < n; i++) {
        rows[i] = (Row){.r = &runs[i], .smooth = NAN, .series = t->series,
                        .n_series = t->n_series};
        for (int j = 0; j < t->n_series; j++)
            if (runstore_series_summary(t->st, runs[i].id, t->series[j], &rows[i].sv[j], err))
                return session_error(s, LM_EARG, "%s", err);
    }
    if (t->need_group) {
        size_t m = n > 0 ? (size_t)n : 1;
        long *ids = malloc(m * sizeof *ids);
        char (*g)[RUNSTORE_GROUP_LEN] = malloc(m * RUNSTORE_GROUP_LEN);
        int rc = ids && g ? LM_OK : LM_ENOMEM;
        for (int i = 0; !rc && i < n; i++) ids[i] = runs[i].id;
        if (!rc) rc = runstore_groups_of(t->st, ids, n, g, err);
        for (int i = 0; !rc && i < n; i++) memcpy(rows[i].group, g[i], RUNSTORE_GROUP_LEN);
        free(ids), free(g);
        if (rc) return session_error(s, rc, "reading groups: %s", rc == LM_ENOMEM ? "out of "
                                     "memory" : err);
    }
    for (int i = 0; t->need_smooth && i < n; i++) rows[i].smooth = cmd_runs_table_final_smooth(t->st, runs[i].id);
    return LM_OK;
}

static void print_rows(Session *s, const Table *t, const Row *rows, int n)
{
    int width[RT_MAX_COLS];
    char v[256], line[4096], fit[TEXTCOL_MAX * 4 + 8];
    double num;
    for (int c = 0; c < t->n_cols; c++) {
        width[c] = textcol_width(t->cols[c]);
        for (int i = 0; i < n && !s->json; i++) {
            cell(&rows[i], t->cols[c], v, sizeof v, &num);
            int l = textcol_width(v);
            width[c] = l > width[c] ? (l > TEXTCOL_MAX ? TEXTCOL_MAX : l) : width[c];
        }
    }
    for (int i = -1; i < n; i++) {
        if (s->json && i < 0) continue;
        if (s->json && t->full_json) {
            session_emit_json(s, runstore_run_json(rows[i].r));
            continue;
        }
        json_t *o = s->json ? json_object() : NULL;
        int off = 0;
        for (int c = 0; c < t->n_cols; c++) {
            if (i < 0) snprintf(v, sizeof v, "%s", t->cols[c]);
            else cell(&rows[i], t->cols[c], v, sizeof v, &num);
            if (o) json_object_set_new(o, t->cols[c], isnan(num) ? jsonval_str(v)
                                       : num == floor(num) && fabs(num) < 1e15 && !strchr(v, '.')
                                       ? json_integer((json_int_t)num) : json_real(num));
            else if (off < (int)sizeof line)
                off += snprintf(line + off, sizeof line - (size_t)off, "%s%s", c ? "  " : "",
                                textcol_fit(fit, sizeof fit, v, width[c], TEXTCOL_KEEP_START));
        }
        if (o) {
            session_emit_json(s, o);
            continue;
        }
        while (off > 0 && off < (int)sizeof line && line[off - 1] == ' ') line[--off] = 0;
        session_printf(s, "%s", line);
    }
}

/* A run's value of the group_by key, for sorting rows into groups. */
typedef struct {
    char v[64];
    int i;
} Keyed;

static int by_value(const void *a, const void *b)
{
    const Keyed *x = a, *y = b;
    int c = strcmp(x->v, y->v);
    return c ? c : x->i - y->i;
}

typedef struct {
    int lo, hi;              /* its rows in the sorted Keyed array */
    StatSummary best, fin;
} Group;

static int by_mean_best(const void *a, const void *b)
{
    const Group *x = a, *y = b;
    int fx = x->best.n > 0, fy = y->best.n > 0;
    if (fx != fy) return fy - fx;
    if (fx && x->best.mean != y->best.mean) return x->best.mean < y->best.mean ? -1 : 1;
    return x->lo - y->lo;
}

static void print_group(Session *s, const char *key, const Group *g, const Keyed *k,
                        const Row *rows)
{
    char ids[512] = "", pm[2][64];
    int off = 0;
    json_t *id_list = s->json ? json_array() : NULL;
    for (int j = g->lo; j < g->hi; j++) {
        if (id_list) json_array_append_new(id_list, json_integer(rows[k[j].i].r->id));
        if (off < (int)sizeof ids - 16)
            off += snprintf(ids + off, sizeof ids - (size_t)off, "%s%ld", off ? "," : "",
                            rows[k[j].i].r->id);
    }
    for (int q = 0; q < 2; q++)
        cmd_analysis_fmt_pm(pm[q], sizeof pm[q], q ? &g->fin : &g->best);
    if (!s->json) {
        session_printf(s, "%-24.24s %4d  %-20s  %-20s  %s", k[g->lo].v, g->hi - g->lo, pm[0],
                       pm[1], ids);
        return;
    }
    json_t *o = json_pack("{s:s s:o s:o s:i s:i}", "event", "run_group", "key",
                          jsonval_str(key), "value", jsonval_str(k[g->lo].v), "n",
                          g->hi - g->lo, "n_best", g->best.n);
    json_object_set_new(o, "best_mean", jsonval_num(g->best.mean));
    /* a group of one has no spread: null, not 0 */
    json_object_set_new(o, "best_std", jsonval_num(g->best.n > 1 ? g->best.std : NAN));
    json_object_set_new(o, "final_mean", jsonval_num(g->fin.mean));
    json_object_set_new(o, "final_std", jsonval_num(g->fin.n > 1 ? g->fin.std : NAN));
    json_object_set_new(o, "runs", id_list);   /* the run ids as numbers */
    session_emit_json(s, o);
}

/* group_by=KEY: one line per distinct value, best groups first (mean best val); rows
 * are sorted by their value once, so 10,000 runs cost n log n. */
static void print_groups(Session *s, const char *key, Row *rows, int n)
{
    size_t m = n > 0 ? (size_t)n : 1;
    Keyed *k = malloc(m * sizeof *k);
    Group *g = malloc(m * sizeof *g);
    double *best = malloc(m * sizeof *best), *fin = malloc(m * sizeof *fin), num;
    if (!k || !g || !best || !fin) {
        free(k), free(g), free(best), free(fin);
        session_error(s, LM_ENOMEM, "out of memory grouping runs");
        return;
    }
    for (int i = 0; i < n; i++) {
        cell(&rows[i], key, k[i].v, sizeof k[i].v, &num);
        k[i].i = i;
    }
    qsort(k, (size_t)n, sizeof *k, by_value);
    int ng = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !strcmp(k[j].v, k[i].v)) {
            best[j - i] = rows[k[j].i].r->best_val, fin[j - i] = rows[k[j].i].r->final_val;
            j++;
        }
        g[ng].lo = i, g[ng].hi = j;
        sweep_stat_summary(best, j - i, &g[ng].best);
        sweep_stat_summary(fin, j - i, &g[ng++].fin);
        i = j;
    }
    qsort(g, (size_t)ng, sizeof *g, by_mean_best);
    if (!s->json)
        session_printf(s, "%-24s %4s  %-20s  %-20s  %s", key, "N", "best val (mean ± std)",
                       "final val (mean ± std)", "runs");
    for (int q = 0; q < ng; q++) print_group(s, key, &g[q], k, rows);
    free(k), free(g), free(best), free(fin);
}

/* 1 when the kept layout's columns are all known; else says so (the default table is
 * shown) and returns 0. A layout an older lmlab kept with a typo never blanks a column. */
static int saved_ok(Session *s, Table *t, const char *saved)
{
    char err[LM_ERR_LEN];
    for (const char *p = saved; *p;) {
        size_t len = strcspn(p, ",");
        char col[32];
        snprintf(col, sizeof col, "%.*s", (int)(len < 31 ? len : 31), p);
        if (len && column_known(t->st, col, err)) {
            session_printf(s, "(the kept columns layout '%s' has %s; showing the default "
                           "table: `runs columns=... keep=true` replaces it, `runs "
                           "columns=default` forgets it)", saved, err);
            return 0;
        }
        p += len + (p[len] == ',');
    }
    return 1;
}

int cmd_runs_table_render(Session *s, RunStore *st, const RunRow *runs, int n,
                          const char *columns, int keep, const char *sort,
                          const char *group_by, int limit, int *handled)
{
    Table t = {.st = st};
    *handled = 1;
    char saved[1024] = "", err[LM_ERR_LEN];
    int found = 0;
    int reset = columns && !strcmp(columns, "default");
    if (reset) {   /* forget the kept layout: runs' own table again */
        if (runstore_setting_set(st, RT_SETTING, NULL, err))
            return session_error(s, LM_EDB, "%s", err);
        columns = NULL;
    }
    if (columns) {
        if (textcheck_value("columns", columns, 0, err))
            return session_error(s, LM_EARG, "%s", err);
        if (parse_columns(s, columns, &t)) return LM_EARG;
        for (int c = 0; c < t.n_cols; c++)   /* kept only when every column exists */
            if (!column_exists(t.cols[c], runs, n))
                return session_error(s, LM_EARG, "columns=: no column '%s' (a run field: id "
                                     "name model status steps best_val final_val params "
                                     "created group ..., or a setting such as lr); nothing "
                                     "was kept", t.cols[c]);
        if (keep && runstore_setting_set(st, RT_SETTING, columns, err))
            return session_error(s, LM_EDB, "%s", err);
    } else if (!reset && !s->json &&   /* --json keeps the export schema unless asked */
               !runstore_setting_get(st, RT_SETTING, saved, sizeof saved, &found, err) && found &&
               saved_ok(s, &t, saved)) {
        columns = saved;
    } else if (!sort && !group_by) {
        *handled = 0;   /* nothing to shape: cmd_runs prints its own table */
        return LM_OK;
    } else {
        columns = "id,name,model,status,steps,best_val,final_val,params,created,tags";
        t.full_json = 1;
    }
    if (parse_columns(s, columns, &t)) return LM_EARG;
    if (builtin_sort(sort)) sort = NULL;   /* runstore_list ordered them */
    int desc = sort && sort[0] == '-';
    const char *sort_key = sort ? sort + desc : NULL;
    if (sort_key && !column_exists(sort_key, runs, n))
        return session_error(s, LM_EARG, "sort=%s: no such column (best, recent, model, name, "
                             "a run field: id status steps best_val final_val final_smooth "
                             "params created group ..., or a setting such as lr; '-' before "
                             "it sorts descending)", sort);
    if (group_by && !column_exists(group_by, runs, n))
        return session_error(s, LM_EARG, "group_by=%s: no such column (group, model, "
                             "status, or a setting such as lr)", group_by);
    table_needs(&t, sort_key, group_by);
    Row *rows = malloc((size_t)(n ? n : 1) * sizeof *rows);
    if (!rows) return session_error(s, LM_ENOMEM, "out of memory");
    int rc = rows_fill(s, &t, runs, n, rows);
    if (!rc && sort_key) {
        char v[256];
        for (int i = 0; i < n; i++) {
            cell(&rows[i], sort_key, v, sizeof v, &rows[i].key);
            snprintf(rows[i].text_key, sizeof rows[i].text_key, "%.63s",
                     isnan(rows[i].key) && strcmp(v, "-") ? v : "");
        }
        desc_ = desc;
        qsort(rows, (size_t)n, sizeof *rows, by_key);
    }
    if (limit > 0 && limit < n) n = limit;   /* after the sort: the top `limit` */
    if (!rc && n == 0 && !s->json) session_printf(s, "no runs match");
    else if (!rc && group_by) print_groups(s, group_by, rows, n);
    else if (!rc) print_rows(s, &t, rows, n);
    free(rows);
    return rc;
}

int cmd_runs_table_saved(RunStore *st, char *out, size_t cap)
{
    char err[LM_ERR_LEN];
    int found = 0;
    if (runstore_setting_get(st, RT_SETTING, out, cap, &found, err) || !found)
        return 0;
    for (const char *p = out; *p;) {   /* a layout with an unknown column is not used */
        size_t len = strcspn(p, ",");
        char col[32];
        snprintf(col, sizeof col, "%.*s", (int)(len < 31 ? len : 31), p);
        if (len && column_known(st, col, err))
            return 0;
        p += len + (p[len] == ',');
    }
    return 1;
}

/* Whether sort names one of runstore_list's own orders. */
static int builtin_sort(const char *sort)
{
    return !sort || !strcmp(sort, "best") || !strcmp(sort, "recent") || !strcmp(sort, "model")
           || !strcmp(sort, "name");
}

/* 1 when column names a run field (the rest are config keys). */
static int known_column(const char *col)
{
    for (int i = 0; BUILTIN[i]; i++)
        if (!strcmp(BUILTIN[i], col)) return 1;
    return 0;
}
