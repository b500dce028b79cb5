/* dash_data.h — what the dashboard loads into its state outside of drawing: the run
 * list (filter, sort), marked runs' loss curves and their config diff, a gate cell's
 * history, and the per-token gates of a prompt. Reads the run store and a model the
 * caller owns on the main thread (never the model a trainer is updating).
 * Not drawing (dash_views.c) and not the key loop (dash_term.c). */
#ifndef LM_UI_DASH_DATA_H
#define LM_UI_DASH_DATA_H

#include "dash_state.h"
#include "series.h"

/* The history view's own state (view_history.c; dash_data and dash_groups load it): the
 * run list, seed groups as bands, the curve cursor, the kept layout. */
typedef struct {
    RunRow *runs;                         /* (n_runs) malloc'd */
    int n_runs, run_sel, run_scroll, sort;/* sort: DASH_SORT_* */
    char sort_key[32];                    /* "" : sort is DASH_SORT_*; else the column sorted
                                             by: a setting (lr), final_smooth, group, ... */
    int sort_desc;                        /* 1: the order reversed (`-` in the view) */
    char filter[256];
    int hist_band;                        /* 1: the marked runs' groups as mean ± std */
    DashBand bands[DASH_MAX_MARKED];
    int n_bands;
    int hist_cursor;                      /* dot column of the plot cursor, -1 = off */
    long cursor_run;                      /* the curve nearest the cursor (0 = none) */
    int hist_restored;                    /* the kept layout was read this session */
    char hist_cols[512];                  /* `runs columns=` kept in the store, "" = none */
    char (*hist_group)[64];               /* (n_runs) each run's group, when a column needs it */
    double *hist_smooth;                  /* (n_runs) final_smooth, when a column needs it */
    double *hist_series;                  /* (n_runs x 16) the kept columns that are series:
                                             each run's aggregate (NAN: none or not one) */
    struct HistCustomMemo *memo;          /* (n_memo) the last values, by run id: a run
                                             whose last step and status did not move is
                                             not read again */
    int n_memo;
    char memo_cols[512];                  /* the columns the memo holds */
} HistoryView;

/* The comparable series of the registry (core/base/series.h): every per-step and
 * per-evaluation series, loss first and val_loss second. How many, and the i-th's info
 * (i taken modulo the count). */
int dash_data_cmp_count(void);
const SeriesEntry *dash_data_cmp_series(int i);

/* Reloads h->runs from st with h->filter and h->sort (keeps the selection on the same
 * run when it is still listed). LM_OK, or the store's status with err (the old list
 * stays). */
int dash_data_load_runs(HistoryView *h, RunStore *st, char *err);
/* The key the history view's runs are sorted by: h->sort_key, else the fixed sort's
 * ("best", "recent", "model", "name", "steps", "status", "id"); h->sort_desc reverses. */
const char *dash_data_sort_name(const HistoryView *h);
/* The last value of run id's metric per step ("tokens": tokens per step, "elapsed":
 * seconds per step), 0 when there is none. */
double dash_data_per_step(RunStore *st, long id, const char *metric);

/* A marked run's curve keeps at most 4 points per bucket of steps (M4: the first, lowest,
 * highest and last of each) and a bucket's first NaN, so marking a 5 M-step run reads its
 * rows once and keeps at most 20,480 points; a run of up to 8,192 logged steps keeps
 * every point. */
#define DASH_CURVE_BUCKETS 4096

/* Marks run id (loading its d->cmp_metric series, rates, settings and results) or, when
 * marked, unmarks it. LM_OK; LM_EARG when DASH_MAX_MARKED runs are already marked; the
 * store's status otherwise (with err). */
int dash_data_toggle_mark(Dashboard *d, RunStore *st, long id, char *err);
/* Reloads every marked run's curve (d->cmp_metric changed). LM_OK or the store's status
 * (the curves loaded so far are the new ones). */
int dash_data_reload_curves(Dashboard *d, RunStore *st, char *err);

/* Loads the mean of gate (layer, level) of run over its evaluations into *hist (*n_hist
 * points, malloc'd; the old array freed). LM_OK or the store's status (*hist then
 * empty). */
int dash_data_gate_history(SeriesPoint **hist, int *n_hist, RunStore *st, long run, int layer,
                           int level, char *err);

/* The per-token gate view of a prompt (the tokens view's own state, view_tokens.c). */
typedef struct {
    char prompt[512];
    int n_tok, layers, levels, layer; /* layer: the one shown */
    char (*text)[16];  /* (n_tok) each token's text, malloc'd */
    float *gates;      /* (layers, n_tok, levels) mean over heads; NaN = masked; malloc'd */
    char source[160];  /* which weights */
    char error[256];   /* why there is nothing to show, or "" */
} DashTokens;

/* Runs model m (a Dispatcher, not being trained) on t->prompt (its last cfg.bptt tokens)
 * and fills t with each token's text and its gate per layer and level (mean over heads;
 * NaN where the level is masked). On failure t->error says why and the status is
 * returned. */
int dash_data_tokens(DashTokens *t, Model *m, const Tokenizer *tok, const char *source);

#endif
