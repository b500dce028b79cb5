/* runstore_row.h — facts read from a stored run's row alone (RunRow, runstore.h): the one
 * reader of its config text ("key=value\n" lines, config_to_text's form) and the rule that
 * says whether its best validation loss is an estimate. Pure functions: no query, no
 * allocation, so tables of many runs, filters, JSON and the dashboard all use them.
 * Not a config parser: core/base/config.h turns such text into a Config; this only finds
 * one key's raw text (quotes and escapes as stored). */
#ifndef LM_RUNSTORE_ROW_H
#define LM_RUNSTORE_ROW_H

#include "runstore.h"

#include <stddef.h>

/* Finds the line whose WHOLE key is key (`lr` never matches `lr_min=`) in config text
 * (blanks around the key, the '=' and the value are ignored; NULL text has no keys) and
 * copies its value into out (cap bytes, truncated to fit). 1 when found; 0 when not, with
 * out set to "". */
int runstore_config_value(const char *config, const char *key, char *out, size_t cap);

/* The value of key read as a base-10 integer (strtol of its text), or dflt when the key
 * is absent or its value does not start with a number. */
long runstore_config_long(const char *config, const char *key, long dflt);

/* The value of key read as a number (strtod of its text), or dflt as runstore_config_long. */
double runstore_config_double(const char *config, const char *key, double dflt);

/* The step of run r's final whole-split evaluation: the trainer evaluates the whole split
 * when its loop ends without a stop or a failure (finished, a time budget, a sweep rung,
 * stop_at), so that is its last step then; -1 when the run ended any other way or runs. */
long runstore_final_whole_step(const RunRow *r);

/* 1 when run r's best validation loss (r->best_val, the store's lowest evaluation) is an
 * estimate over eval_batches batches rather than a whole-split evaluation: eval_batches is
 * set (not 0) and the best is not the run's final whole-split evaluation. 0 when it is, or
 * when the run has no best yet. What `runs`, `run`, the report mark with ~ and every JSON
 * of a run says as "best_estimated". */
int runstore_best_estimated(const RunRow *r);

/* A best validation loss as every table shows it into out: "1.9571", "~1.9571" when it is
 * an estimate (runstore_best_estimated), "-" when NAN. */
void runstore_fmt_best(char *out, size_t cap, double best, int estimated);

#endif
