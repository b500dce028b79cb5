/* runstore_series.h — named series in the run store (issue 48): any scalar or 64-bin
 * histogram a run records under a name (`grad/<tensor>`, `act/<block>/std`,
 * `hist/weight/<tensor>`, ...), beside the fixed tables of step metrics, evaluations and
 * gates. A run's names live once in series_names; scalar points in series_points, one
 * histogram per step in series_hists. NaN and infinities are kept: a point's value is
 * NULL for NaN (SQLite turns a bound NaN into NULL) and ±Inf is stored as SQLite's REAL
 * infinity. Schema step RUNSTORE_SERIES_VERSION, run by the store's one migration
 * transaction like every other step; an older store gains the empty tables and keeps
 * every run's series. Not what a name means (its unit, kind and help: the registry of
 * named series), not producing the values (the trainer's diagnostics). */
#ifndef LM_RUNSTORE_SERIES_H
#define LM_RUNSTORE_SERIES_H

#include "runstore.h"

/* Schema step: creates series_names, series_points and series_hists (when missing) and
 * sets user_version to that number, inside the caller's transaction. */
#define RUNSTORE_SERIES_VERSION 11
int runstore_series_migrate(RunStore *s, char *err);

typedef enum { SERIES_SCALAR = 0, SERIES_HISTOGRAM = 1 } SeriesKind;

/* Writes n named scalars of run `run` at `step` in one transaction (a point at the same
 * (name, step) is replaced). A name is 1..SERIES_NAME_LEN-1 bytes of valid UTF-8 without
 * control characters, and once a name is a run's scalar it is never its histogram (and
 * the reverse). LM_EARG naming the bad name, or "no run N"; the store's errors (nothing
 * of the batch is written then). */
int runstore_series_log(RunStore *s, long run, long step, const NamedScalar *v, int n,
                        char *err);

/* The same for n named histograms. */
int runstore_hist_log(RunStore *s, long run, long step, const NamedHist *h, int n,
                      char *err);

typedef struct {
    char name[SERIES_NAME_LEN];
    SeriesKind kind;
    long n_points;                 /* steps recorded */
    long first_step, last_step;    /* -1 when none */
} SeriesInfo;

/* The named series of a run, by name, whose names match pattern (NULL or "" = all; a
 * star matches any run of characters, slashes included, `?` one character, everything
 * else itself: "grad/" and a star is every gradient norm). *out malloc'd (free(); NULL when *n = 0): a pattern that
 * matches nothing is LM_OK with *n = 0 (the caller says so). LM_EARG "no run N". */
int runstore_series_names(RunStore *s, long run, const char *pattern, SeriesInfo **out,
                          int *n, char *err);

/* 1 when name matches pattern in the sense above. */
int runstore_series_match(const char *pattern, const char *name);

/* One named scalar series of a run in step order (NaN and infinities as recorded).
 * *pts malloc'd (free()). LM_EARG "no run N" or "run N has no series NAME" (a name that
 * is the run's histogram says so). runstore_series (runstore.h) reads these names too. */
int runstore_named_series(RunStore *s, long run, const char *name, SeriesPoint **pts,
                          int *n, char *err);

typedef struct {
    long step;
    SeriesHist h;
} HistPoint;

/* One named histogram series of a run in step order. *pts malloc'd (free()). Errors as
 * runstore_named_series. */
int runstore_hist_series(RunStore *s, long run, const char *name, HistPoint **pts, int *n,
                         char *err);
/* Its steps from `from` on (LONG_MIN: every step). */
int runstore_hist_series_from(RunStore *s, long run, const char *name, long from,
                              HistPoint **pts, int *n, char *err);

/* One named series of kind as a cursor (runstore.h's RunStoreCursor), in step order:
 * scalars read with runstore_series_next, histograms with runstore_hist_next (1, 0 at
 * the end, -1 on a failure). Errors up front as runstore_named_series. */
int runstore_named_open(RunStore *s, long run, const char *name, SeriesKind kind,
                        RunStoreCursor **c, char *err);
int runstore_hist_next(RunStoreCursor *c, HistPoint *p, char *err);
/* The NaN and infinite values a named histogram series counted, over all its steps. */
int runstore_hist_nonfinite(RunStore *s, long run, const char *name, long *n, char *err);

#endif
