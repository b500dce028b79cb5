/* dash_data.h — what the dashboard loads into its state outside of drawing: the run
 * list (filter, sort), marked runs' loss curves and their config diff, a gate cell's
 * history, and the per-token gates of a prompt. Reads the run store and a model the
 * caller owns on the main thread (never the model a trainer is updating).
 * Not drawing (dash_views.c) and not the key loop (dash_term.c). */
#ifndef LM_UI_DASH_DATA_H
#define LM_UI_DASH_DATA_H

#include "dash_state.h"

/* Reloads d->runs from st with d->filter and d->sort (keeps the selection on the same
 * run when it is still listed). LM_OK, or the store's status with err (the old list
 * stays). */
int dash_data_load_runs(Dashboard *d, RunStore *st, char *err);
/* The key the history view's runs are sorted by: d->sort_key, else the fixed sort's
 * ("best", "recent", "model", "name", "steps", "status", "id"); d->sort_desc reverses. */
const char *dash_data_sort_name(const Dashboard *d);
/* The last value of run id's metric per step ("tokens": tokens per step, "elapsed":
 * seconds per step), 0 when there is none. */
double dash_data_per_step(RunStore *st, long id, const char *metric);

/* Marks run id (loading its d->cmp_metric series, rates, settings and results) or, when
 * marked, unmarks it. LM_OK; LM_EARG when DASH_MAX_MARKED runs are already marked; the
 * store's status otherwise (with err). */
int dash_data_toggle_mark(Dashboard *d, RunStore *st, long id, char *err);
/* Reloads every marked run's curve (d->cmp_metric changed). LM_OK or the store's status
 * (the curves loaded so far are the new ones). */
int dash_data_reload_curves(Dashboard *d, RunStore *st, char *err);

/* Loads the mean of gate (layer, level) of run over its evaluations into d->gate_hist.
 * LM_OK or the store's status (d->gate_hist then empty). */
int dash_data_gate_history(Dashboard *d, RunStore *st, long run, int layer, int level,
                           char *err);

/* Runs model m (a Dispatcher, not being trained) on d->tok.prompt (its last
 * cfg.bptt tokens) and fills d->tok with each token's text and its gate per layer and
 * level (mean over heads; NaN where the level is masked). On failure d->tok.error says
 * why and the status is returned. */
int dash_data_tokens(Dashboard *d, Model *m, const Tokenizer *tok, const char *source);

#endif
