/* alertrule.h — the alert rules a user sets on a run or a sweep (`alert ID on=RULE`, the
 * config key `alerts=RULE,RULE`), parsed and checked against a run's facts. Rules:
 *   diverged | finished | failed | ended (any end) | stalled[:SECONDS] (no step for that
 *   long while the run is running and its owner lives; default 300) |
 *   SERIES<X or SERIES>X with SERIES any name of the one registry (series.h: loss, val,
 *   val_loss, best_val, grad_norm, sys/cpu, gate/0/1, ...) or step.
 * Pure: no store, no processes (core/run/alerts.c acts on a rule that fires). */
#ifndef LM_ALERTRULE_H
#define LM_ALERTRULE_H

#include "series.h"

#include <stddef.h>

#define ALERTRULE_LEN 64
#define ALERTRULE_STALLED_DEFAULT 300.0

typedef enum { ALERT_DIVERGED, ALERT_FINISHED, ALERT_FAILED, ALERT_ENDED, ALERT_STALLED,
               ALERT_BELOW, ALERT_ABOVE } AlertKind;

typedef struct {
    AlertKind kind;
    char metric[SERIES_NAME_LEN]; /* ALERT_BELOW/ABOVE: the series' name (or "step") */
    SeriesRef ref;         /* ... found in the registry (info NULL for step) */
    double x;              /* the threshold, or the stalled seconds */
} AlertRule;

/* The newest value of a series of the run (NaN: not known yet), and into *at the step it
 * was recorded at (-1 when the source does not say: the rule then names the run's step). */
typedef double (*AlertValueFn)(const void *ud, const SeriesRef *ref, long *at);

/* What a rule is checked against (NaN: not known yet). */
typedef struct {
    const char *status;    /* the store's status: running paused finished stopped ... */
    long step;
    double loss, val_loss, best_val;   /* the command's LMLAB_* environment (alerts.c) */
    double since_step;     /* seconds since the last step (or since the start) */
    AlertValueFn value;    /* any series' newest value (NULL: every series unknown) */
    const void *ud;
} AlertFacts;

/* Parses text into *r and writes its canonical form into canon (cap bytes, may be NULL).
 * LM_OK, or LM_EARG with a message listing the rules. */
int alertrule_parse(const char *text, AlertRule *r, char *canon, size_t cap, char *err);

/* Checks a comma-separated list of rules ("" is fine). LM_OK or LM_EARG naming the bad
 * one. */
int alertrule_check_list(const char *list, char *err);

/* 1 when r fires for f (then msg says why, e.g. "val_loss 1.52 < 1.6 at step 400"), else 0. */
int alertrule_fires(const AlertRule *r, const AlertFacts *f, char *msg, size_t cap);

#endif
