/* sweep.h — a hyperparameter sweep's specification and its expansion into trials, pure
 * and testable: parsing `key=value` words (from the command line or a sweep file),
 * checking every trial against the configuration before anything runs, grid and random
 * expansion, and the successive-halving rule. Running the trials is sweep_runner.h;
 * nothing here trains, touches the run store or starts a thread.
 *
 * Spec words: base=EXPERIMENT strategy=grid|random|halving trials=N seed=S
 *   steps=N|epochs=N metric=best_val|final_val min_steps=N eta=K max_trials=N
 *   force=true name=NAME parallel=K seeds=N, and swept config keys: `lr=1e-3,3e-4` (a list),
 *   `lr=loguniform(1e-4,1e-2)`, `dropout=uniform(0,0.3)`. A single value (`d=64`) is a
 *   one-element list, i.e. a fixed override. `seed=` seeds the sweep's random draws (the
 *   trials keep the base's training seed); `name=` names the sweep (trials are
 *   `<name>-t<k>`, k from 1). `parallel=K` (1..SWEEP_MAX_PARALLEL, default 1: one
 *   trial after another) trains K trials at once as worker processes; `parallel=ranks`
 *   under `mpirun -np N` trains N at once, one per rank (sweep_runner.h, sweep_pool.h).
 *   `seeds=N` (grid or random) repeats every trial N times, consecutively, with training
 *   seeds base.seed + 0..N-1: the repeats' params end in "seed=S", the store files them
 *   as one group (runstore_group.h) and `sweep show` ranks them by the group's mean.
 *
 * Expansion: grid = the cartesian product of the lists, the first key varying slowest;
 * random = `trials` draws (lists uniformly, uniform() and loguniform() continuously,
 * loguniform uniform in log space; integer keys rounded) from an Rng seeded with seed,
 * keys drawn in spec order within a trial. halving = grid when every key is a list and
 * trials= is not given, else `trials` random draws.
 *
 * Successive halving (strategy=halving, budget steps=N, min_steps, eta >= 2):
 *   rungs r_0 = min_steps, r_i = min_steps * eta^i while r_i < steps, and last = steps.
 *   Every trial trains to r_0. At each rung but the last, the n trials that entered it
 *   are ranked by their validation loss AT STEP r_i: the full evaluation over the whole
 *   validation split that the trainer does when it stops at stop_at = r_i. The best
 *   ceil(n/eta) continue from their step-r_i checkpoint to r_{i+1}; the others stop
 *   there (trial status `stopped`, run reason "stopped early at step r_i"). A trial that
 *   diverged or failed before r_i has no metric, ranks last and never continues; ties go
 *   to the lower trial number. The survivors of the last decision train to `steps`.
 *   The sweep's final ranking (`sweep show`) uses `metric` over each trial's run. */
#ifndef LM_SWEEP_H
#define LM_SWEEP_H

#include "config.h"

#define SWEEP_MAX_PARAMS 16
#define SWEEP_MAX_VALUES 32
#define SWEEP_VALUE_LEN 64
#define SWEEP_PARAMS_LEN 512   /* a trial's "k=v k=v" text (sweep_trials.params) */
#define SWEEP_MAX_RUNGS 32
#define SWEEP_MAX_PARALLEL 64  /* parallel=K: at most this many trials at once */
#define SWEEP_PARALLEL_RANKS (-1) /* parallel=ranks: one trial per rank of the MPI job */

typedef enum { SWEEP_GRID, SWEEP_RANDOM, SWEEP_HALVING } SweepStrategy;
typedef enum { SWEEP_LIST, SWEEP_UNIFORM, SWEEP_LOGUNIFORM } SweepDomain;
typedef enum { SWEEP_BEST_VAL, SWEEP_FINAL_VAL } SweepMetric;

typedef struct {
    char key[32];          /* a config key */
    SweepDomain kind;
    int n_values;          /* SWEEP_LIST */
    char values[SWEEP_MAX_VALUES][SWEEP_VALUE_LEN];
    double lo, hi;         /* SWEEP_UNIFORM, SWEEP_LOGUNIFORM */
} SweepParam;

typedef struct {
    char name[40];         /* "" = the runner names it sweep<id> */
    char base[256];        /* experiment name or path; "" = the caller's configuration */
    Config base_cfg;       /* sweep_spec_finish: the base + budget (all trials start here) */
    int has_base_cfg;      /* 1: base_cfg is already set (a stored sweep); not reloaded */
    SweepStrategy strategy;
    int trials;            /* random/halving draws; 0 = not given */
    unsigned long seed;
    long steps;            /* budget; 0 = the base's */
    int epochs;            /* budget in epochs; 0 = the base's */
    SweepMetric metric;
    long min_steps;        /* halving: first rung (0 = steps / eta^2, at least 1) */
    int eta;               /* halving: keep 1/eta at each rung (default 3) */
    int max_trials, force; /* refuse more than max_trials trials (default 64) unless force */
    int seeds;             /* seeds=N: each trial N times with training seeds base+0..N-1
                              (params end "seed=S"; the runs form a seed group); 0/1 = once */
    int parallel;          /* trials trained at once (worker processes); 0 or 1 = one by one;
                              SWEEP_PARALLEL_RANKS = one per rank of the MPI job */
    SweepParam params[SWEEP_MAX_PARAMS];
    int n_params;
    int n_trials;          /* sweep_spec_finish: how many trials it expands to */
} SweepSpec;

typedef struct {
    int k;                         /* trial number, from 1 */
    char params[SWEEP_PARAMS_LEN]; /* the swept values: "lr=1e-3 d=64" (one-value keys,
                                      i.e. fixed overrides, are applied but not listed) */
    Config cfg;                    /* the base + the values; name = "<name>-t<k>" */
} SweepTrial;

/* An empty spec: grid, seed 1, metric best_val, eta 3, max_trials 64. */
void sweep_spec_init(SweepSpec *sp);

/* Applies one word (key, value): a spec key or a swept config key. Checks what one
 * word can: unknown keys (with a "did you mean"), an empty list or range, a malformed
 * range, loguniform with lo <= 0 or lo >= hi, each list value and range end against
 * config_set, a key given twice. LM_OK or LM_EARG with a message. */
int sweep_spec_set(SweepSpec *sp, const char *key, const char *value, char *err);
/* The same for "key=value" (spaces around '=' and after ',' are ignored). */
int sweep_spec_set_pair(SweepSpec *sp, const char *pair, char *err);

/* Reads a sweep file: one key=value word a line, '#' comments, blank lines. A key given
 * on two lines is refused (LM_EARG naming it and both lines), a fixed one (steps=) as a
 * swept one: the file would silently take the last. Errors name the file and line.
 * LM_EIO when it cannot be read. */
int sweep_spec_load_file(SweepSpec *sp, const char *path, char *err);

/* Resolves a sweep name to experiments/sweeps/NAME.sweep (under $LMLAB_EXPERIMENTS,
 * ./experiments, then the source tree), or a path as is. 0, or -1 when not found. */
int sweep_find_file(const char *name, char *path, size_t cap);

/* Completes a spec: loads the base (base= experiment, else *fallback, else the
 * defaults) unless has_base_cfg, applies the budget, checks the strategy's needs
 * (random/halving with a range need trials=, halving needs a step budget and
 * min_steps < steps), then expands EVERY trial and checks each with config_set and
 * config_validate, and the count against max_trials unless force. Sets n_trials.
 * LM_OK, or LM_EARG/LM_EIO with a message naming the trial and value at fault. */
int sweep_spec_finish(SweepSpec *sp, const Config *fallback, char *err);

/* Expands a finished spec into its n_trials trials (malloc'd array, caller frees).
 * Deterministic: the same spec always gives the same trials in the same order. */
int sweep_expand(const SweepSpec *sp, SweepTrial **trials, int *n, char *err);

/* The spec as one line of words that sweep_spec_set_pair reads back to the same spec
 * (base_cfg excluded). Writes at most cap bytes; returns the length wanted. */
int sweep_spec_to_text(const SweepSpec *sp, char *buf, size_t cap);

const char *sweep_strategy_name(SweepStrategy s);
const char *sweep_metric_name(SweepMetric m);

/* The halving rungs for (min_steps, eta, steps): see the rule above. Writes at most cap
 * into rungs[] (cap >= 1; the last is always steps) and returns the count. */
int sweep_halving_rungs(long min_steps, int eta, long steps, long *rungs, int cap);

/* One rung's decision. metric: (n) the validation loss at the rung of each of the n
 * trials that entered it (NAN = none: diverged/failed). keep: (n) receives 1 for the
 * best ceil(n/eta) trials with a finite metric (ties to the lower index), else 0.
 * Returns how many continue. */
int sweep_halving_promote(const double *metric, int n, int eta, int *keep);

/* The trials that enter rung `rung`, by applying the decision at rungs 0..rung-1.
 * metric: (n, n_rungs) row-major, metric[t * n_rungs + i] = trial t's validation loss
 * at rung i (NAN when unknown). alive: (n) receives 1 for trials that entered `rung`;
 * stopped_at: (n) or NULL, receives the rung index at which a trial was stopped, or -1.
 * Returns how many entered (-1: out of memory). */
int sweep_halving_alive(const double *metric, int n, int n_rungs, int eta, int rung,
                        int *alive, int *stopped_at);

#endif
