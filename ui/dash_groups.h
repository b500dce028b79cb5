/* dash_groups.h — the history view's seed groups: the marked runs gathered by their
 * store group (runstore_group.h; a run in none stands alone), each group's curves of the
 * compared metric over ALL its members reduced to mean ± std on the longest member's
 * steps, for chart_draw_bands; and the store-kept layout of the history view (sort,
 * filter, marks: store settings "history.*"). Loads from the store on the main thread;
 * drawing is view_history_plot.c's. */
#ifndef LM_UI_DASH_GROUPS_H
#define LM_UI_DASH_GROUPS_H

#include "dash_data.h"

/* Rebuilds h->bands from the marked runs (d->marked) and d->cmp_metric. LM_OK or the
 * store's status with err (h->bands then empty). */
int dash_groups_load(Dashboard *d, HistoryView *h, RunStore *st, char *err);
/* Frees h->bands' arrays (h->n_bands = 0). */
void dash_groups_free(HistoryView *h);

/* Saves the history layout (sort, filter, marks) into the store's settings; restores
 * it (once per session: h->hist_restored) before the view's first load. Failures are
 * returned with err; nothing else changes then. */
int dash_groups_save_layout(Dashboard *d, HistoryView *h, RunStore *st, char *err);
int dash_groups_restore_layout(Dashboard *d, HistoryView *h, RunStore *st, char *err);

#endif
