/* sweep_analysis.h — what a finished (or running) sweep says about its settings, as pure
 * functions over the trials' "key=value ..." texts and their metric: summary statistics
 * of a group of runs (mean, sample std, min, max), seed groups (trials that differ only
 * in `seed=`), parameter importance (the share of the metric's variance each setting
 * explains, and the sign of its effect) and the axes of a parallel-coordinates chart
 * (numeric or categorical, log when a positive setting spans more than 20x).
 * Nothing here reads the store, allocates behind the caller's back or prints: the
 * commands (sweep importance, plot sweep) and the sweep view feed it arrays. */
#ifndef LM_SWEEP_ANALYSIS_H
#define LM_SWEEP_ANALYSIS_H

#include "sweep.h"

#define SWEEP_AXIS_MAX_LEVELS 32   /* distinct values kept per axis (more: counted as the first) */
#define SWEEP_ANALYSIS_MAX_TRIALS 1024 /* importance and axes read at most this many trials */

typedef struct {
    int n;                 /* finite values counted */
    double mean, std;      /* std: sample standard deviation (n-1); 0 when n == 1 */
    double min, max;       /* NaN (all four) when n == 0 */
} StatSummary;

/* Summary of the finite values among v[0..n). */
void sweep_stat_summary(const double *v, int n, StatSummary *out);

/* The value of key in a "k=v k=v" text into out (cap bytes); 1 when present, else 0. */
int sweep_param_value(const char *params, const char *key, char *out, size_t cap);

/* The keys of a "k=v k=v" text, in order, without `seed` (a replicate, not a setting).
 * Returns how many were written (at most cap). */
int sweep_param_keys(const char *params, char keys[][32], int cap);

/* The params text without its `seed=` word (the seed-group key of a trial): "lr=1e-3
 * seed=2" -> "lr=1e-3"; "seed=2" -> "". */
void sweep_group_key(const char *params, char *out, size_t cap);

typedef struct {
    char key[SWEEP_PARAMS_LEN]; /* the trials' params without seed= */
    int first;             /* the first member's index in the input */
    StatSummary stat;      /* of the members' finite metrics */
    int members;           /* trials in the group (with or without a metric) */
} SweepGroup;

/* Seed groups of n trials: trials whose params differ only in seed= share a group.
 * groups (cap) receive them ranked by mean metric ascending (groups with no finite
 * metric last, ties to the earlier group); group_of (n, may be NULL) receives each
 * trial's group index in that ranking. Returns the number of groups (<= cap; trials of
 * groups past cap get -1). */
int sweep_groups(const char *const *params, const double *metric, int n, SweepGroup *groups,
                 int cap, int *group_of);

typedef struct {
    char key[32];
    int numeric;           /* every trial's value is a number */
    int log_axis;          /* numeric, all > 0, and max/min > 20 */
    double lo, hi;         /* numeric: the range of the values */
    int n_levels;          /* distinct values (categorical: in first-seen order) */
    char levels[SWEEP_AXIS_MAX_LEVELS][SWEEP_VALUE_LEN];
} SweepAxis;

/* One axis per swept setting (seed excluded) of n trials, in the first trial's key
 * order. Returns how many (<= cap). */
int sweep_axes(const char *const *params, int n, SweepAxis *axes, int cap);

/* Where value sits on axis a, in [0, 1] (0 = lo, 1 = hi; log-spaced on a log axis;
 * categorical levels evenly spaced, one level at 0.5); NaN when missing or unknown. */
double sweep_axis_pos(const SweepAxis *a, const char *value);

typedef struct {
    char key[32];
    double share;          /* in [0, 1]: SS_between / SS_total of the metric grouped by
                              this setting (eta squared); NaN when the metric has no
                              variance or fewer than 2 trials have one */
    double rho;            /* Spearman rank correlation of the setting with the metric
                              (numeric settings; NaN for categorical or constant ones):
                              > 0 = a larger value gives a larger (worse) metric */
    int n_levels;          /* distinct values (or bins) the share was computed over */
    int binned;            /* 1: continuous values grouped into quantile bins */
    int max_per_level;     /* the most trials any one level holds: 1 means one trial per
                              value, so share is 1 by construction and says nothing */
    int identified;        /* 1: the share means something (some level holds 2 or more
                              trials, or the values were binned); 0: one trial per value,
                              where every reader says "cannot tell" instead of the share */
    double range;          /* largest minus smallest level mean of the metric (NaN when
                              under 2 trials): the effect to set against seed noise */
    int inner_best;        /* numeric, 3 or more levels: the lowest level mean is at an
                              inner value, neither the smallest nor the largest (a U: no
                              "larger -> lower" however rho leans) */
} SweepImportance;

/* The seed-to-seed noise of the metric: the pooled within-group standard deviation over
 * the seed groups (sweep_groups) with at least 2 finite members; *df (may be NULL) gets
 * its degrees of freedom (members minus groups). NaN (df 0) when no group has 2. */
double sweep_seed_noise(const char *const *params, const double *metric, int n, int *df);

/* The seed noise as a sentence fragment for every reader (text, report): "seed-to-seed
 * noise ±0.0040 (pooled std over seed groups, 6 degrees of freedom)", or that it is
 * unknown and how to measure it (noise NaN). */
void sweep_noise_text(char *out, size_t cap, double noise, int df);

/* What a reader says where SweepImportance.identified is 0. */
#define SWEEP_CANNOT_TELL_TEXT "cannot tell: one trial per value, so that setting's share is " \
    "100% by construction; repeat the values with seeds=N to measure the noise and a share " \
    "that means something"

/* Parameter importance of every swept setting over the trials with a finite metric.
 * A setting with few distinct values (a grid) is grouped by value: one-way ANOVA's eta
 * squared. One with many (random search: more than sqrt(n) distinct, and more than 6)
 * is first grouped into floor(sqrt(n)) quantile bins of equal count, a main-effect
 * estimate in the spirit of fANOVA (Hutter et al., ICML 2014) without the random
 * forest. Settings sorted by share, largest first. Returns how many (<= cap). */
int sweep_importance(const char *const *params, const double *metric, int n,
                     SweepImportance *out, int cap);

#endif
