/* runkeys.h — the keys `runs` (and the dashboard's runs list) filter and sort by: the run
 * store's columns (id name status model data tokenizer machine git host params steps best
 * final sweep tag since until), every config key, and the JSON field names of the same
 * facts as aliases (best_val = best, final_val = final, last_step = steps, sweep_id =
 * sweep, tags = tag, git_rev = git, data_name = data). An unknown key is refused with the
 * nearest known one ("did you mean"), never matched against nothing in silence. */
#ifndef LM_RUNKEYS_H
#define LM_RUNKEYS_H

#include "runstore.h"

#include <stddef.h>

/* Asks whether some stored run's config holds key (a key an older lmlab wrote, which the
 * config table no longer knows): 1 yes. */
typedef int (*RunKeysHas)(void *ud, const char *key);
/* A RunKeysHas over a RunStore (ud): scans its runs' configs. */
int runkeys_store_has(void *store, const char *key);

/* Checks the key of every term of filter (space-separated `key OP value`, values may be
 * "quoted") and writes it to out (cap bytes) with aliases replaced by the store's names.
 * A key none of the above knows is still accepted when has (may be NULL) says a stored
 * run's config holds it.
 * LM_OK; LM_EARG with "unknown filter key 'lrr' — did you mean 'lr'? (keys: ...)" in err. */
int runkeys_filter(const char *filter, char *out, size_t cap, RunKeysHas has, void *ud,
                   char *err);

/* Checks a sort: recent | best | model | name (the store's), or any key above, '-' in
 * front for descending (`sort=-steps`, `sort=lr`); has (may be NULL) as for filters.
 * LM_OK or LM_EARG (did you mean). */
int runkeys_check_sort(const char *sort, RunKeysHas has, void *ud, char *err);

/* 1 when sort is one the store orders by itself (recent best model name), else 0: the
 * caller lists unsorted and calls runkeys_sort_rows. */
int runkeys_store_sort(const char *sort);

/* Sorts rows by a checked sort key (not one of the store's): numbers numerically, text
 * by bytes, runs without a value last; ties by id. */
void runkeys_sort_rows(RunRow *rows, int n, const char *sort);

/* The value of key in "key=value\n" config text into buf ("-" when missing). */
void runkeys_config_value(const char *config, const char *key, char *buf, size_t cap);

/* The settings that differ among n "key=value\n" configs (a key missing from some counts
 * as differing): first those that differ among the runs of one sweep (sweeps[r] is run r's
 * sweep id, 0 = none; sweeps may be NULL), what a sweep swept; then the others; the seed
 * last (a repeat, not a choice; issue 49 item 8); within each, by how many distinct values
 * they take (ties in first-seen order). Up to max names into keys. Returns how many differ
 * (may exceed max). The one ranking of `compare` and the dashboard's columns. */
int runkeys_diff(const char *const *configs, const long *sweeps, int n, char (*keys)[32],
                 int max);

#endif
