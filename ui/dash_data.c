/* dash_data.c — loading the dashboard's data (see dash_data.h): run list, marked runs'
 * curves and config diff, a gate cell's history, per-token gates. Each loader replaces
 * its part of the Dashboard only on success.
 * Not a cache with invalidation rules: the loop decides when to reload. */
#include "dash_data.h"

#include "cmd_analysis.h"
#include "err.h"
#include "runkeys.h"
#include "gate_probe.h"
#include "runstore_control.h"
#include "runstore_row.h"
#include "safetext.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runs' order per DASH_SORT_*: the store's own sorts, else a runkeys key (sorted here). */
static const char *const SORT_NAMES[DASH_N_SORTS] = {"best", "recent", "model", "name", "steps",
                                                     "status", "id"};

const char *dash_data_sort_name(const HistoryView *h)
{
    return h->sort_key[0] ? h->sort_key : SORT_NAMES[h->sort];
}

static int g_smooth_desc;   /* qsort has no context argument: the direction */

typedef struct { RunRow r; double v; } SmoothRow;

static int by_smooth(const void *a, const void *b)
{
    const SmoothRow *x = a, *y = b;
    int fx = isfinite(x->v), fy = isfinite(y->v);
    if (fx != fy) return fx ? -1 : 1;   /* runs without one last, either direction */
    int c = fx ? (x->v < y->v ? -1 : x->v > y->v) : 0;
    if (g_smooth_desc) c = -c;
    return c ? c : (x->r.id > y->r.id ? -1 : x->r.id < y->r.id);
}

/* Sorts rows by final_smooth (the smoothed last training loss, computed per run). */
static void sort_by_smooth(RunStore *st, RunRow *rows, int n, int desc)
{
    SmoothRow *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t) return;
    for (int i = 0; i < n; i++)
        t[i] = (SmoothRow){rows[i], cmd_runs_table_final_smooth(st, rows[i].id)};
    g_smooth_desc = desc;
    qsort(t, (size_t)n, sizeof *t, by_smooth);
    for (int i = 0; i < n; i++) rows[i] = t[i].r;
    free(t);
}

int dash_data_load_runs(HistoryView *h, RunStore *st, char *err)
{
    RunRow *rows = NULL;
    int n = 0;
    const char *sort = dash_data_sort_name(h);
    int mine = !runkeys_store_sort(sort) || h->sort_desc;
    int rc = runstore_list(st, h->filter[0] ? h->filter : NULL, mine ? "recent" : sort, 0, &rows,
                           &n, err);
    if (rc)
        return rc;
    if (mine && !strcmp(sort, "final_smooth")) {
        sort_by_smooth(st, rows, n, h->sort_desc);
    } else if (mine) {   /* a key runkeys knows; the store's own orders by their column */
        const char *k = !strcmp(sort, "recent") ? "since" : sort;
        int desc = !strcmp(sort, "recent") ? !h->sort_desc : h->sort_desc;
        char key[40];
        snprintf(key, sizeof key, "%s%s", desc ? "-" : "", k);
        runkeys_sort_rows(rows, n, key);
    }
    long sel_id = h->run_sel >= 0 && h->run_sel < h->n_runs ? h->runs[h->run_sel].id : -1;
    runstore_rows_free(h->runs, h->n_runs);
    h->runs = rows;
    h->n_runs = n;
    h->run_sel = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].id == sel_id)
            h->run_sel = i;
    return LM_OK;
}

double dash_data_per_step(RunStore *st, long id, const char *metric)
{
    SeriesPoint p;
    int found = 0;
    char err[LM_ERR_LEN];
    if (runstore_series_point(st, id, metric, RUNSTORE_STEP_LAST, &p, &found, err) == LM_OK &&
        found && p.step > 0 && isfinite(p.value))
        return p.value / (double)p.step;
    return 0;
}

/* 1 when the registry's entry i can be a comparison curve. */
static int comparable(const SeriesEntry *s)
{
    return s && !s->family && (s->kind == SERIES_KIND_STEP || s->kind == SERIES_KIND_EVAL);
}

int dash_data_cmp_count(void)
{
    int n = 0;
    for (int i = 0; i < series_count(); i++) n += comparable(series_info(i));
    return n;
}

const SeriesEntry *dash_data_cmp_series(int k)
{
    SeriesRef first[2];
    series_find("loss", &first[0], NULL);
    series_find("val_loss", &first[1], NULL);
    int n = dash_data_cmp_count();
    k = n ? ((k % n) + n) % n : 0;
    if (k < 2) return first[k].info;
    for (int i = 0, j = 2; i < series_count(); i++) {
        const SeriesEntry *s = series_info(i);
        if (!comparable(s) || s == first[0].info || s == first[1].info) continue;
        if (j++ == k) return s;
    }
    return first[0].info;
}

static void free_curve(DashCurve *cv)
{
    free(cv->pts);
    free(cv->config);
    cv->pts = NULL;
    cv->config = NULL;
}

static int load_curve(RunStore *st, long id, int metric, DashCurve *cv, char *err)
{
    memset(cv, 0, sizeof *cv);
    RunRow row;
    int rc = runstore_get(st, id, &row, err);
    if (rc)
        return rc;
    cv->run = id;
    safetext_escape(cv->name, sizeof cv->name, row.name, 0);   /* stored text: escaped */
    snprintf(cv->label, sizeof cv->label, "#%ld %.12s", id, cv->name); /* legends fit */
    cv->best_estimated = runstore_best_estimated(&row);   /* before its config is taken */
    cv->config = row.config;   /* taken over */
    row.config = NULL;
    cv->best_val = row.best_val;
    cv->final_val = row.final_val;
    cv->best_step = row.best_step;
    cv->best_step_val = row.best_step_val;
    cv->last_step = row.last_step;
    runstore_row_free(&row);
    /* a fork continues its parent; a long run kept to what the chart draws (M4) */
    rc = runstore_series_lineage_m4(st, id, dash_data_cmp_series(metric)->name,
                                    DASH_CURVE_BUCKETS, &cv->pts, &cv->n, err);
    if (rc)
        return rc;
    cv->tokens_per_step = dash_data_per_step(st, id, "tokens");
    cv->seconds_per_step = dash_data_per_step(st, id, "elapsed");
    return LM_OK;
}

int dash_data_toggle_mark(Dashboard *d, RunStore *st, long id, char *err)
{
    for (int i = 0; i < d->n_marked; i++) {
        if (d->marked[i] != id)
            continue;
        free_curve(&d->curves[i]);
        memmove(&d->marked[i], &d->marked[i + 1], (size_t)(d->n_marked - i - 1) *
                sizeof d->marked[0]);
        memmove(&d->curves[i], &d->curves[i + 1], (size_t)(d->n_marked - i - 1) *
                sizeof d->curves[0]);
        d->n_marked--;
        return LM_OK;
    }
    if (d->n_marked == DASH_MAX_MARKED)
        return err_set(err, LM_EARG, "%d runs are marked already: unmark one first",
                       DASH_MAX_MARKED);
    DashCurve cv;
    int rc = load_curve(st, id, d->cmp_metric, &cv, err);
    if (rc) {
        free_curve(&cv);
        return rc;
    }
    d->marked[d->n_marked] = id;
    d->curves[d->n_marked++] = cv;
    return LM_OK;
}

int dash_data_reload_curves(Dashboard *d, RunStore *st, char *err)
{
    for (int i = 0; i < d->n_marked; i++) {
        DashCurve cv;
        int rc = load_curve(st, d->marked[i], d->cmp_metric, &cv, err);
        if (rc) {
            free_curve(&cv);
            return rc;
        }
        free_curve(&d->curves[i]);
        d->curves[i] = cv;
    }
    return LM_OK;
}

int dash_data_gate_history(SeriesPoint **hist, int *n_hist, RunStore *st, long run, int layer,
                           int level, char *err)
{
    char metric[48];
    snprintf(metric, sizeof metric, "gate:%d:%d", layer, level);
    SeriesPoint *p = NULL;
    int n = 0;
    int rc = runstore_series(st, run, metric, &p, &n, err);
    free(*hist);
    *hist = rc ? NULL : p;
    *n_hist = rc ? 0 : n;
    if (rc)
        free(p);
    return rc;
}

static int fill_tokens(DashTokens *t, const GateProbe *gp, const Tokenizer *tok,
                       const int *ids)
{
    int L = gp->levels, NL = gp->layers, T = gp->T;
    char (*text)[16] = malloc((size_t)T * sizeof *text);
    float *g = malloc((size_t)NL * T * L * sizeof *g);
    if (!text || !g) {
        free(text);
        free(g);
        snprintf(t->error, sizeof t->error, "out of memory");
        return LM_ENOMEM;
    }
    for (int j = 0; j < T; j++) {
        const char *tt = tokenizer_token_text(tok, ids[j]);
        snprintf(text[j], sizeof text[j], "%s", tt ? tt : "?");
    }
    for (int l = 0; l < NL; l++)
        for (int j = 0; j < T; j++)
            for (int k = 0; k < L; k++)
                g[((size_t)l * T + j) * L + k] = !gp->coeff[l] || gate_probe_masked(gp, j, k)
                                                     ? NAN : gate_probe_token(gp, l, 0, j, k);
    free(t->text);
    free(t->gates);
    t->text = text;
    t->gates = g;
    t->n_tok = T;
    t->layers = NL;
    t->levels = L;
    if (t->layer >= NL)
        t->layer = NL - 1;
    return LM_OK;
}

int dash_data_tokens(DashTokens *t, Model *m, const Tokenizer *tok, const char *source)
{
    t->error[0] = 0;
    snprintf(t->source, sizeof t->source, "%s", source ? source : "");
    if (!m || !tok) {
        snprintf(t->error, sizeof t->error, "no model yet: `train` one or `open` a run");
        return LM_ESTATE;
    }
    if (!m->n_gate_layers || !m->ops->gates) {
        snprintf(t->error, sizeof t->error, "%s has no gates (only Dispatcher models do)",
                 m->cfg.model);
        return LM_EARG;
    }
    int *ids = NULL;
    size_t n = 0;
    char err[LM_ERR_LEN] = "";
    int rc = tokenizer_encode(tok, t->prompt, strlen(t->prompt), &ids, &n, err);
    if (!rc && n == 0)
        rc = err_set(err, LM_EARG, "the prompt is empty");
    int T = n > (size_t)m->cfg.bptt ? m->cfg.bptt : (int)n;
    GateProbe gp = {0};
    if (!rc)
        rc = gate_probe_run(&gp, m, ids + n - T, 1, T, GATE_PROBE_TOKENS, err);
    if (!rc)
        rc = fill_tokens(t, &gp, tok, ids + n - T);
    gate_probe_free(&gp);
    if (rc && !t->error[0])
        snprintf(t->error, sizeof t->error, "%s", err);
    free(ids);
    return rc;
}
