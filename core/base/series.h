/* series.h — the one registry of a run's named series (issue 48): every series a run has
 * (the per-step metrics of metrics.def, evaluations and the best, system samples, gates
 * as gate/L/K, and the families of series.def) with its name, aliases, unit, kind, how it
 * aggregates into one number, and help. Alerts, filters, `runs` columns and sort, compare,
 * plot, the dashboard, the report, export and the console line find names here, with
 * "did you mean" on a miss; nobody else keeps a list of series names.
 * Pure: the registry says what a series is and where the store keeps it, never reads
 * the store (core/store/runstore_registry.c does) and never draws. */
#ifndef LM_SERIES_H
#define LM_SERIES_H

#include "metrics.h"

#include <stddef.h>

#ifndef SERIES_NAME_LEN
#define SERIES_NAME_LEN 128   /* a name with its NUL (metrics.h's, once it has named series) */
#endif
#define SERIES_F_PARITY 1u   /* a resumed or forked run reproduces it bit for bit */

typedef enum { SERIES_KIND_STEP, SERIES_KIND_EVAL, SERIES_KIND_SAMPLE,
               SERIES_KIND_HIST } SeriesRegKind;
typedef enum { SERIES_AGG_LAST, SERIES_AGG_MIN, SERIES_AGG_MAX, SERIES_AGG_MEAN } SeriesRegAgg;
/* Where the store keeps a series. */
typedef enum { SERIES_SRC_METRICS, SERIES_SRC_EVAL, SERIES_SRC_BEST, SERIES_SRC_SYS,
               SERIES_SRC_GATE, SERIES_SRC_NAMED, SERIES_SRC_HIST } SeriesRegSource;

typedef struct {
    const char *name;      /* or the family's pattern (gate/L/K) */
    const char *aliases;   /* comma-separated, "" none */
    const char *unit;
    SeriesRegKind kind;
    SeriesRegAgg agg;
    unsigned flags;        /* SERIES_F_* */
    SeriesRegSource source;
    const char *where;     /* the source's detail: "split:column" (EVAL), a column (SYS) */
    const char *console;   /* printf format of its console field, "" none (step metrics) */
    const char *help;
    int step_index;        /* STEP_M_* for SERIES_SRC_METRICS, else -1 */
    int family;            /* 1: name is a pattern */
} SeriesEntry;

/* One concrete series: its registry entry, its canonical name and a family's numbers
 * (gate/2/3: arg 2 and 3; a star family's name is the recorded name itself). */
typedef struct {
    const SeriesEntry *info;
    char name[SERIES_NAME_LEN];
    int arg[2];
} SeriesRef;

/* The registry's entries: step metrics (metrics.def order), then series.def's. */
int series_count(void);
const SeriesEntry *series_info(int i);

/* Resolves name (a name, an alias, a family member such as gate/0/1, or the older
 * spelling gate:0:1) into *ref. LM_OK, or LM_EARG with "unknown series 'vall' — did you
 * mean 'val'? (series: ...)" in err (err may be NULL). */
int series_find(const char *name, SeriesRef *ref, char *err);

/* The registry name or alias nearest to name (a few edits at most) into buf, or NULL when
 * none is near: the did-you-mean of every consumer that also knows other keys. A name
 * with an aggregate none is near (grad_nrm.max) gets the nearest of the part before its
 * last dot with the aggregate kept (grad_norm.max). */
const char *series_nearest(const char *name, char *buf, size_t cap);

/* The family member of info with numbers a and b (gate/L/K) into ref. */
void series_ref_member(const SeriesEntry *info, int a, int b, SeriesRef *ref);

/* 1 when name matches a pattern: '*' any run of bytes ('/' included), '?' one byte,
 * anything else itself; a pattern without '*' or '?' also matches by alias. */
int series_match(const char *pattern, const char *name);

/* Checks a pattern (series=, the grid's): not empty, printable, at most
 * SERIES_NAME_LEN - 1 bytes. LM_OK or LM_EARG. */
int series_pattern_check(const char *pattern, char *err);

/* A name safe to print: bytes outside printable ASCII and the backslash as \xNN. */
const char *series_escape(char *out, size_t cap, const char *name);
/* A name safe as a file name or an HTML id: also '/' and '%' as %2F and %25, and a
 * leading '.' as %2E. */
const char *series_escape_path(char *out, size_t cap, const char *name);

/* The words of the registry's enums (help text, --json). */
const char *series_kind_name(SeriesRegKind k);
const char *series_agg_name(SeriesRegAgg a);

/* The names (families as their patterns, aliases after a '|') as one line, for help and
 * error messages, into buf. */
const char *series_names_text(char *buf, size_t cap);

#endif
