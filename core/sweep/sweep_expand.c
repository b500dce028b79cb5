/* sweep_expand.c — from a parsed spec to its trials: where sweep and experiment files are
 * found, the base config and budget, the strategy's own requirements, and the grid or
 * random expansion into checked trial configs (seeds=N as replicas). Pure: no store, no
 * threads, no training. Not here: parsing a spec (sweep.c), the successive-halving rule
 * (sweep_halving.c). */
#include "sweep.h"

#include "err.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LMLAB_EXPERIMENTS_DIR
#define LMLAB_EXPERIMENTS_DIR "experiments"
#endif

static int find_in_dirs(const char *sub, const char *name, const char *ext, char *path,
                        size_t cap)
{
    struct stat st;
    if (strchr(name, '/') || strstr(name, ext)) {
        snprintf(path, cap, "%s", name);
        return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -1;
    }
    const char *dirs[] = {getenv("LMLAB_EXPERIMENTS"), "experiments", LMLAB_EXPERIMENTS_DIR};
    for (int i = 0; i < 3; i++) {
        if (!dirs[i])
            continue;
        snprintf(path, cap, "%s%s/%s%s", dirs[i], sub, name, ext);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            return 0;
    }
    return -1;
}

int sweep_find_file(const char *name, char *path, size_t cap)
{
    return find_in_dirs("/sweeps", name, ".sweep", path, cap);
}

/* Resolves an experiment name the same way (experiments/NAME.conf). 0 or -1. */
static int sweep_find_experiment(const char *name, char *path, size_t cap)
{
    return find_in_dirs("", name, ".conf", path, cap);
}

/* ---- expansion ------------------------------------------------------------------------ */

static int has_range(const SweepSpec *sp)
{
    for (int i = 0; i < sp->n_params; i++)
        if (sp->params[i].kind != SWEEP_LIST)
            return 1;
    return 0;
}

/* Grid when every key is a list and no trials= was given (halving too). */
static int is_grid(const SweepSpec *sp)
{
    return sp->strategy == SWEEP_GRID || (sp->strategy == SWEEP_HALVING && !sp->trials);
}

/* The product of the list sizes, saturating at LONG_MAX / 64. */
static long grid_size(const SweepSpec *sp)
{
    long n = 1;
    for (int i = 0; i < sp->n_params; i++) {
        n *= sp->params[i].n_values;
        if (n > 1L << 40)
            return 1L << 40;
    }
    return n;
}

/* How many trials the spec expands to: the grid or the draws, times the seeds. */
static long trial_count(const SweepSpec *sp)
{
    long base = is_grid(sp) ? grid_size(sp) : sp->trials;
    return base * (sp->seeds > 1 ? sp->seeds : 1);
}

/* Random draw of param p as text (integer keys rounded, floats to 4 significant digits). */
static void draw_value(const SweepParam *p, Rng *rng, char *out, size_t cap)
{
    if (p->kind == SWEEP_LIST) {
        snprintf(out, cap, "%s", p->values[rng_below(rng, (uint32_t)p->n_values)]);
        return;
    }
    double u = rng_uniform(rng), x;
    if (p->kind == SWEEP_LOGUNIFORM)
        x = exp(log(p->lo) + u * (log(p->hi) - log(p->lo)));
    else
        x = p->lo + u * (p->hi - p->lo);
    if (config_find_key(p->key)->type == CFG_INT)
        snprintf(out, cap, "%.0f", round(x));
    else
        snprintf(out, cap, "%.4g", x);
}

/* Applies the trial's values (vals[i] for params[i]) to the base config and checks it. */
static int make_trial(const SweepSpec *sp, int k, int replica, char vals[][SWEEP_VALUE_LEN],
                      SweepTrial *t, char *err)
{
    char e2[LM_ERR_LEN];
    t->k = k;
    t->cfg = sp->base_cfg;
    t->params[0] = 0;
    size_t o = 0;
    for (int i = 0; i < sp->n_params; i++) {
        const SweepParam *p = &sp->params[i];
        if (p->kind != SWEEP_LIST || p->n_values > 1) /* fixed overrides are not columns */
            o += (size_t)snprintf(t->params + o, o < SWEEP_PARAMS_LEN ? SWEEP_PARAMS_LEN - o : 0,
                                  "%s%s=%s", o ? " " : "", p->key, vals[i]);
        if (config_set(&t->cfg, p->key, vals[i], e2))
            return err_set(err, LM_EARG, "trial %d (%s): %s", k, t->params, e2);
    }
    if (sp->seeds > 1) { /* seeds=N: replicas differ only in the training seed, listed last */
        t->cfg.seed = sp->base_cfg.seed + replica;
        o += (size_t)snprintf(t->params + o, o < SWEEP_PARAMS_LEN ? SWEEP_PARAMS_LEN - o : 0,
                              "%sseed=%ld", o ? " " : "", t->cfg.seed);
    }
    if (o >= SWEEP_PARAMS_LEN)
        return err_set(err, LM_EARG, "trial %d: the swept values take more than %d characters",
                       k, SWEEP_PARAMS_LEN - 1);
    snprintf(t->cfg.name, sizeof t->cfg.name, "%s-t%d", sp->name[0] ? sp->name : "sweep", k);
    if (config_validate(&t->cfg, e2))
        return err_set(err, LM_EARG, "trial %d (%s): %s", k, t->params, e2);
    return LM_OK;
}

int sweep_expand(const SweepSpec *sp, SweepTrial **trials, int *n, char *err)
{
    *trials = NULL;
    *n = 0;
    long count = trial_count(sp);
    int seeds = sp->seeds > 1 ? sp->seeds : 1;
    if (count < 1 || count > 100000)
        return err_set(err, LM_EARG, "a sweep of %ld trials", count);
    SweepTrial *t = calloc((size_t)count, sizeof *t);
    if (!t)
        return err_set(err, LM_ENOMEM, "out of memory expanding %ld trials", count);
    char vals[SWEEP_MAX_PARAMS][SWEEP_VALUE_LEN];
    Rng rng;
    rng_seed(&rng, sp->seed);
    for (long k = 0; k < count; k++) {
        int replica = (int)(k % seeds); /* a trial's seeds follow one another */
        if (replica) {
            /* the same values as the trial before */
        } else if (is_grid(sp)) {
            long rest = k / seeds; /* mixed radix, the last key varying fastest */
            for (int i = sp->n_params - 1; i >= 0; i--) {
                const SweepParam *p = &sp->params[i];
                snprintf(vals[i], SWEEP_VALUE_LEN, "%s", p->values[rest % p->n_values]);
                rest /= p->n_values;
            }
        } else {
            for (int i = 0; i < sp->n_params; i++)
                draw_value(&sp->params[i], &rng, vals[i], SWEEP_VALUE_LEN);
        }
        if (make_trial(sp, (int)k + 1, replica, vals, &t[k], err)) {
            free(t);
            return LM_EARG;
        }
    }
    *trials = t;
    *n = (int)count;
    return LM_OK;
}

/* Base config (unless stored) and budget. */
static int load_base(SweepSpec *sp, const Config *fallback, char *err)
{
    if (!sp->has_base_cfg) {
        char path[1024], e2[LM_ERR_LEN];
        if (sp->base[0]) {
            if (sweep_find_experiment(sp->base, path, sizeof path))
                return err_set(err, LM_EARG, "base=%s: no such experiment (experiments/%s.conf)",
                               sp->base, sp->base);
            config_defaults(&sp->base_cfg);
            if (config_load_file(&sp->base_cfg, path, e2))
                return err_set(err, LM_EARG, "base=%s: %s", sp->base, e2);
        } else if (fallback) {
            sp->base_cfg = *fallback;
        } else {
            config_defaults(&sp->base_cfg);
        }
        sp->has_base_cfg = 1;
    }
    if (sp->steps > 0) {
        sp->base_cfg.steps = sp->steps;
    } else if (sp->epochs > 0) {
        sp->base_cfg.epochs = sp->epochs;
        sp->base_cfg.steps = 0;
    }
    return LM_OK;
}

/* The strategy's own requirements (trials=, halving's budget and rungs). */
static int check_strategy(SweepSpec *sp, char *err)
{
    if (sp->seeds > 1 && sp->strategy == SWEEP_HALVING)
        return err_set(err, LM_EARG, "seeds=%d works with strategy=grid or random, not "
                       "halving (its rungs rank single runs)", sp->seeds);
    if (sp->n_params == 0 && sp->seeds <= 1)
        return err_set(err, LM_EARG, "nothing to sweep: give at least one swept key, e.g. "
                       "lr=1e-3,3e-4");
    if (sp->strategy == SWEEP_GRID && has_range(sp))
        return err_set(err, LM_EARG, "strategy=grid needs lists, not ranges; use "
                       "strategy=random trials=N for uniform()/loguniform()");
    if (sp->strategy == SWEEP_GRID && sp->trials)
        return err_set(err, LM_EARG, "trials= is for strategy=random or halving; a grid runs "
                       "every combination");
    if (sp->strategy == SWEEP_RANDOM && !sp->trials)
        return err_set(err, LM_EARG, "strategy=random needs trials=N (how many draws)");
    if (sp->strategy == SWEEP_HALVING && has_range(sp) && !sp->trials)
        return err_set(err, LM_EARG, "strategy=halving with a range needs trials=N");
    if (sp->strategy != SWEEP_HALVING)
        return LM_OK;
    long steps = sp->base_cfg.steps;
    if (steps <= 0)
        return err_set(err, LM_EARG, "strategy=halving needs a budget in steps (steps=N), "
                       "not epochs");
    if (!sp->min_steps) {
        sp->min_steps = steps / ((long)sp->eta * sp->eta);
        if (sp->min_steps < 1) sp->min_steps = 1;
    }
    if (sp->min_steps >= steps)
        return err_set(err, LM_EARG, "min_steps=%ld must be below the budget steps=%ld",
                       sp->min_steps, steps);
    return LM_OK;
}

int sweep_spec_finish(SweepSpec *sp, const Config *fallback, char *err)
{
    int rc = load_base(sp, fallback, err);
    if (!rc)
        rc = check_strategy(sp, err);
    if (rc)
        return rc;
    long count = trial_count(sp);
    if (count > sp->max_trials && !sp->force)
        return err_set(err, LM_EARG, "the sweep has %ld trials, more than max_trials=%d: add "
                       "force=true (or raise max_trials) to run them all", count,
                       sp->max_trials);
    SweepTrial *t;
    int n;
    if ((rc = sweep_expand(sp, &t, &n, err)))
        return rc;
    free(t);
    sp->n_trials = n;
    return LM_OK;
}

