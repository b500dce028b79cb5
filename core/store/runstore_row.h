/* runstore_row.h — facts read from a stored run's row alone (RunRow, runstore.h): the one
 * reader of its config text ("key=value\n" lines, config_to_text's form). Pure functions:
 * no query, no allocation, so tables of many runs, filters, JSON and the dashboard all use
 * them.
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

#endif
