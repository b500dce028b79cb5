/* sweep.c — sweep specs: parsing (a spec's own keys, swept lists and ranges, key=value
 * pairs and sweep files) and the spec as text again (see sweep.h for the rules). Pure: no
 * store, no threads, no training; the runner (sweep_runner.c) does those. Not here: where
 * sweep and experiment files are found, the base config, the strategy's checks and the
 * expansion into trials (sweep_expand.c), the successive-halving rule (sweep_halving.c). */
#include "sweep.h"

#include "err.h"
#include "strdist.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const SPEC_KEYS[] = {"base", "strategy", "trials", "seed", "steps",
    "epochs", "metric", "min_steps", "eta", "max_trials", "force", "name", "parallel", "seeds", NULL};

void sweep_spec_init(SweepSpec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->strategy = SWEEP_GRID;
    sp->seed = 1;
    sp->metric = SWEEP_BEST_VAL;
    sp->eta = 3;
    sp->max_trials = 64;
}

const char *sweep_strategy_name(SweepStrategy s)
{
    return s == SWEEP_RANDOM ? "random" : s == SWEEP_HALVING ? "halving" : "grid";
}

const char *sweep_metric_name(SweepMetric m)
{
    return m == SWEEP_FINAL_VAL ? "final_val" : "best_val";
}

static int parse_long(const char *key, const char *v, long lo, long hi, long *out, char *err)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        return err_set(err, LM_EARG, "%s=%s: expected an integer from %ld to %ld", key, v, lo,
                       hi);
    *out = x;
    return LM_OK;
}

/* Sets one of the spec's own keys; -1 when key is not one of them. */
static int set_spec_key(SweepSpec *sp, const char *key, const char *v, char *err)
{
    long x = 0;
    int rc = LM_OK;
    if (!strcmp(key, "base")) {
        snprintf(sp->base, sizeof sp->base, "%s", v);
    } else if (!strcmp(key, "name")) {
        if (!*v || strlen(v) >= sizeof sp->name || strpbrk(v, " ,\t"))
            return err_set(err, LM_EARG, "name=%s: a word of 1 to %zu characters without "
                           "spaces or commas", v, sizeof sp->name - 1);
        snprintf(sp->name, sizeof sp->name, "%s", v);
    } else if (!strcmp(key, "strategy")) {
        if (!strcmp(v, "grid")) sp->strategy = SWEEP_GRID;
        else if (!strcmp(v, "random")) sp->strategy = SWEEP_RANDOM;
        else if (!strcmp(v, "halving")) sp->strategy = SWEEP_HALVING;
        else return err_set(err, LM_EARG, "strategy=%s: expected grid, random or halving", v);
    } else if (!strcmp(key, "metric")) {
        if (!strcmp(v, "best_val")) sp->metric = SWEEP_BEST_VAL;
        else if (!strcmp(v, "final_val")) sp->metric = SWEEP_FINAL_VAL;
        else return err_set(err, LM_EARG, "metric=%s: expected best_val or final_val", v);
    } else if (!strcmp(key, "force")) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) sp->force = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) sp->force = 0;
        else return err_set(err, LM_EARG, "force=%s: expected true or false", v);
    } else if (!strcmp(key, "trials")) {
        if (!(rc = parse_long(key, v, 1, 100000, &x, err))) sp->trials = (int)x;
    } else if (!strcmp(key, "seed")) {
        if (!(rc = parse_long(key, v, 0, 2147483647L, &x, err))) sp->seed = (unsigned long)x;
    } else if (!strcmp(key, "steps")) {
        if (!(rc = parse_long(key, v, 1, 1000000000L, &x, err))) sp->steps = x;
    } else if (!strcmp(key, "epochs")) {
        if (!(rc = parse_long(key, v, 1, 100000, &x, err))) sp->epochs = (int)x;
    } else if (!strcmp(key, "min_steps")) {
        if (!(rc = parse_long(key, v, 1, 1000000000L, &x, err))) sp->min_steps = x;
    } else if (!strcmp(key, "eta")) {
        if (!(rc = parse_long(key, v, 2, 100, &x, err))) sp->eta = (int)x;
    } else if (!strcmp(key, "max_trials")) {
        if (!(rc = parse_long(key, v, 1, 100000, &x, err))) sp->max_trials = (int)x;
    } else if (!strcmp(key, "seeds")) {
        if (!(rc = parse_long(key, v, 1, 64, &x, err))) sp->seeds = (int)x;
    } else if (!strcmp(key, "parallel")) {
        if (!strcmp(v, "ranks")) sp->parallel = SWEEP_PARALLEL_RANKS;
        else if (parse_long(key, v, 1, SWEEP_MAX_PARALLEL, &x, err))
            return err_set(err, LM_EARG, "parallel=%s: expected how many trials train at once "
                           "(1 to %d; 1 = one after another), or ranks (one per rank under "
                           "mpirun)", v, SWEEP_MAX_PARALLEL);
        else sp->parallel = (int)x;
    } else {
        return -1;
    }
    return rc;
}

/* Unknown key: the nearest spec key, else config_set's message (nearest config key). */
static int unknown_key(const char *key, char *err)
{
    const char *near = NULL;
    int best = 3;
    for (int i = 0; SPEC_KEYS[i]; i++) {
        int d = strdist_edit(key, SPEC_KEYS[i], 0);
        if (d < best && d < (int)strlen(key)) {
            best = d;
            near = SPEC_KEYS[i];
        }
    }
    if (near)
        return err_set(err, LM_EARG, "unknown key '%s' — did you mean '%s'?", key, near);
    Config scratch;
    config_defaults(&scratch);
    char e2[LM_ERR_LEN];
    config_set(&scratch, key, "0", e2);
    return err_set(err, LM_EARG, "%s", e2);
}

/* Checks one value of a swept key against the configuration's rules for that key. */
static int check_value(const char *key, const char *v, char *err)
{
    Config scratch;
    config_defaults(&scratch);
    char e2[LM_ERR_LEN];
    if (config_set(&scratch, key, v, e2))
        return err_set(err, LM_EARG, "%s=%s: the configuration refuses it: %s", key, v, e2);
    return LM_OK;
}

/* "uniform(lo,hi)" / "loguniform(lo,hi)" into p; -1 when v is not a range. */
static int parse_range(SweepParam *p, const ConfigKey *k, const char *v, char *err)
{
    int log = !strncmp(v, "loguniform(", 11);
    if (!log && strncmp(v, "uniform(", 8))
        return -1;
    const char *in = v + (log ? 11 : 8);
    char *end;
    size_t len = strlen(v);
    if (v[len - 1] != ')')
        return err_set(err, LM_EARG, "%s=%s: expected %s(lo,hi)", p->key, v,
                       log ? "loguniform" : "uniform");
    double lo = strtod(in, &end);
    if (end == in || *end != ',')
        return err_set(err, LM_EARG, "%s=%s: expected two numbers: %s(lo,hi)", p->key, v,
                       log ? "loguniform" : "uniform");
    in = end + 1;
    double hi = strtod(in, &end);
    if (end == in || *end != ')' || end != v + len - 1 || !isfinite(lo) || !isfinite(hi))
        return err_set(err, LM_EARG, "%s=%s: expected two numbers: %s(lo,hi)", p->key, v,
                       log ? "loguniform" : "uniform");
    if (k->type != CFG_INT && k->type != CFG_FLOAT)
        return err_set(err, LM_EARG, "%s=%s: a range needs a numeric key; give a list "
                       "(%s=a,b,c)", p->key, v, p->key);
    if (log && lo <= 0)
        return err_set(err, LM_EARG, "%s=%s: loguniform needs lo > 0", p->key, v);
    if (!(lo < hi))
        return err_set(err, LM_EARG, "%s=%s: empty range: lo must be below hi", p->key, v);
    p->kind = log ? SWEEP_LOGUNIFORM : SWEEP_UNIFORM;
    p->lo = lo;
    p->hi = hi;
    char buf[64];
    for (int i = 0; i < 2; i++) {
        double x = i ? hi : lo;
        if (k->type == CFG_INT)
            snprintf(buf, sizeof buf, "%.0f", round(x));
        else
            snprintf(buf, sizeof buf, "%.17g", x);
        if (check_value(p->key, buf, err))
            return LM_EARG;
    }
    return LM_OK;
}

/* Whether two listed values are one: equal as numbers (1e-3 and 0.001), or as text. */
static int same_value(const char *a, const char *b)
{
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (ea != a && !*ea && eb != b && !*eb)
        return x == y;
    return !strcmp(a, b);
}

/* "a,b,c" into p's list, each value checked, none twice. */
static int parse_list(SweepParam *p, const char *v, char *err)
{
    if (!*v)
        return err_set(err, LM_EARG, "%s=: empty list: give one or more values (%s=a,b)",
                       p->key, p->key);
    p->kind = SWEEP_LIST;
    const char *s = v;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        if (n == 0)
            return err_set(err, LM_EARG, "%s=%s: empty value in the list", p->key, v);
        if (n >= SWEEP_VALUE_LEN || p->n_values == SWEEP_MAX_VALUES)
            return err_set(err, LM_EARG, "%s=%s: at most %d values of %d characters", p->key,
                           v, SWEEP_MAX_VALUES, SWEEP_VALUE_LEN - 1);
        memcpy(p->values[p->n_values], s, n);
        p->values[p->n_values][n] = 0;
        if (check_value(p->key, p->values[p->n_values], err))
            return LM_EARG;
        for (int j = 0; j < p->n_values; j++)   /* a copy is no other trial, nor noise */
            if (same_value(p->values[j], p->values[p->n_values]))
                return err_set(err, LM_EARG, "%s=%s: %s and %s are the same value: each "
                               "value trains once (seeds=N repeats every trial with N seeds)",
                               p->key, v, p->values[j], p->values[p->n_values]);
        p->n_values++;
        if (!comma)
            return LM_OK;
        s = comma + 1;
    }
}

int sweep_spec_set(SweepSpec *sp, const char *key, const char *value, char *err)
{
    if (!key || !*key)
        return err_set(err, LM_EARG, "'%s': expected key=value", value ? value : "");
    if (!value)
        return err_set(err, LM_EARG, "'%s': expected %s=value", key, key);
    int rc = set_spec_key(sp, key, value, err);
    if (rc != -1)
        return rc;
    const ConfigKey *k = config_find_key(key);
    if (!k)
        return unknown_key(key, err);
    for (int i = 0; i < sp->n_params; i++)
        if (!strcmp(sp->params[i].key, key))
            return err_set(err, LM_EARG, "%s is given twice; give all its values in one "
                           "word: %s=a,b,c", key, key);
    if (sp->n_params == SWEEP_MAX_PARAMS)
        return err_set(err, LM_EARG, "at most %d swept keys", SWEEP_MAX_PARAMS);
    SweepParam *p = &sp->params[sp->n_params];
    memset(p, 0, sizeof *p);
    snprintf(p->key, sizeof p->key, "%s", key);
    rc = parse_range(p, k, value, err);
    if (rc == -1)
        rc = parse_list(p, value, err);
    if (rc)
        return rc;
    sp->n_params++;
    return LM_OK;
}

/* Copies src into dst without spaces around '=' or after ','. */
static void squeeze(char *dst, size_t cap, const char *src)
{
    size_t o = 0;
    for (const char *s = src; *s && o + 1 < cap; s++) {
        if (isspace((unsigned char)*s)) {
            const char *t = s;
            while (isspace((unsigned char)*t)) t++;
            int next_sep = *t == '=' || *t == ',' || *t == ')' || !*t;
            int prev_sep = o == 0 || dst[o - 1] == '=' || dst[o - 1] == ',' || dst[o - 1] == '(';
            if (!next_sep && !prev_sep)
                dst[o++] = ' ';
            s = t - 1;
            continue;
        }
        dst[o++] = *s;
    }
    dst[o] = 0;
}

int sweep_spec_set_pair(SweepSpec *sp, const char *pair, char *err)
{
    char buf[2048];
    squeeze(buf, sizeof buf, pair);
    char *eq = strchr(buf, '=');
    if (!eq || eq == buf)
        return err_set(err, LM_EARG, "'%s': expected key=value", buf);
    *eq = 0;
    return sweep_spec_set(sp, buf, eq + 1, err);
}

/* The keys a sweep file gave so far with their lines: a file says each key once, since a
 * second line would silently win over the first. */
typedef struct {
    char key[SWEEP_MAX_PARAMS + 32][64];
    int line[SWEEP_MAX_PARAMS + 32], n;
} SeenKeys;

/* The index in seen of the key of pair when an earlier line gave it, else -1 (and the
 * key is added with its line no). */
static int seen_before(SeenKeys *seen, const char *pair, int no)
{
    char buf[2048];
    squeeze(buf, sizeof buf, pair);
    char *eq = strchr(buf, '=');
    if (!eq || eq == buf || eq - buf >= 64)
        return -1;   /* sweep_spec_set_pair says what is wrong */
    *eq = 0;
    for (int i = 0; i < seen->n; i++)
        if (!strcmp(seen->key[i], buf))
            return i;
    if (seen->n < SWEEP_MAX_PARAMS + 32) {
        memcpy(seen->key[seen->n], buf, (size_t)(eq - buf) + 1);   /* < 64, checked above */
        seen->line[seen->n++] = no;
    }
    return -1;
}

int sweep_spec_load_file(SweepSpec *sp, const char *path, char *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(err, LM_EIO, "cannot read %s: %s", path, strerror(errno));
    char line[2048], e2[LM_ERR_LEN];
    int no = 0, rc = LM_OK;
    SeenKeys seen = {.n = 0};
    while (!rc && fgets(line, sizeof line, f)) {
        no++;
        char *hash = config_comment(line);
        if (hash)
            *hash = 0;
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (!*s)
            continue;
        int k = seen_before(&seen, s, no);
        if (k >= 0) {
            const char *key = seen.key[k];
            int first = seen.line[k], spec_key = 0;
            for (int i = 0; SPEC_KEYS[i]; i++) spec_key |= !strcmp(SPEC_KEYS[i], key);
            rc = spec_key
                ? err_set(err, LM_EARG, "%s:%d: %s is given twice (lines %d and %d): keep one",
                          path, no, key, first, no)
                : err_set(err, LM_EARG, "%s:%d: %s is given twice (lines %d and %d): keep one; "
                          "a swept key gives all its values on one line: %s = a,b,c", path, no,
                          key, first, no, key);
        } else if (sweep_spec_set_pair(sp, s, e2)) {
            rc = err_set(err, LM_EARG, "%s:%d: %s", path, no, e2);
        }
    }
    fclose(f);
    return rc;
}

int sweep_spec_to_text(const SweepSpec *sp, char *buf, size_t cap)
{
    char tmp[8192];
    int o = 0;
#define PUT(...) o += snprintf(tmp + o, o < (int)sizeof tmp ? sizeof tmp - (size_t)o : 0, __VA_ARGS__)
    if (sp->name[0]) PUT("name=%s ", sp->name);
    if (sp->base[0]) PUT("base=%s ", sp->base);
    PUT("strategy=%s seed=%lu metric=%s", sweep_strategy_name(sp->strategy), sp->seed,
        sweep_metric_name(sp->metric));
    if (sp->trials) PUT(" trials=%d", sp->trials);
    if (sp->steps) PUT(" steps=%ld", sp->steps);
    if (sp->epochs) PUT(" epochs=%d", sp->epochs);
    if (sp->strategy == SWEEP_HALVING) PUT(" min_steps=%ld eta=%d", sp->min_steps, sp->eta);
    if (sp->max_trials != 64) PUT(" max_trials=%d", sp->max_trials);
    if (sp->force) PUT(" force=true");
    if (sp->seeds > 1) PUT(" seeds=%d", sp->seeds);
    if (sp->parallel > 1) PUT(" parallel=%d", sp->parallel);
    if (sp->parallel == SWEEP_PARALLEL_RANKS) PUT(" parallel=ranks");
    for (int i = 0; i < sp->n_params; i++) {
        const SweepParam *p = &sp->params[i];
        PUT(" %s=", p->key);
        if (p->kind != SWEEP_LIST)
            PUT("%s(%.15g,%.15g)", p->kind == SWEEP_LOGUNIFORM ? "loguniform" : "uniform",
                p->lo, p->hi);
        for (int j = 0; p->kind == SWEEP_LIST && j < p->n_values; j++)
            PUT("%s%s", j ? "," : "", p->values[j]);
    }
#undef PUT
    return snprintf(buf, cap, "%s", tmp);
}
