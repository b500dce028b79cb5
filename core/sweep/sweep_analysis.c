/* sweep_analysis.c — summary statistics, seed groups, parameter importance and
 * parallel-coordinate axes of a sweep's trials (see sweep_analysis.h). Importance is
 * one-way ANOVA's eta squared (SS_between / SS_total; Cohen, "Statistical power
 * analysis", 1988) per setting, with quantile bins for continuous settings, and the
 * sign from Spearman's rank correlation (average ranks for ties). Pure functions:
 * scratch space is on the stack or taken from the caller's arrays. */
#include "sweep_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRIALS SWEEP_ANALYSIS_MAX_TRIALS

void sweep_stat_summary(const double *v, int n, StatSummary *out)
{
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) sum += v[i], k++, lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    out->n = k;
    if (k == 0) {
        out->mean = out->std = out->min = out->max = NAN;
        return;
    }
    double mean = sum / k, ss = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) ss += (v[i] - mean) * (v[i] - mean);
    out->mean = mean;
    out->std = k > 1 ? sqrt(ss / (k - 1)) : 0;
    out->min = lo, out->max = hi;
}

/* The next "k=v" word of p into key/val; returns the rest, or NULL at the end. */
static const char *next_word(const char *p, char *key, size_t kcap, char *val, size_t vcap)
{
    while (*p == ' ') p++;
    if (!*p) return NULL;
    size_t len = strcspn(p, " "), eq = strcspn(p, "=");
    if (eq > len) eq = len;
    snprintf(key, kcap, "%.*s", (int)eq, p);
    snprintf(val, vcap, "%.*s", eq < len ? (int)(len - eq - 1) : 0, eq < len ? p + eq + 1 : "");
    return p + len;
}

int sweep_param_value(const char *params, const char *key, char *out, size_t cap)
{
    char k[64], v[SWEEP_VALUE_LEN];
    for (const char *p = params; p && (p = next_word(p, k, sizeof k, v, sizeof v));)
        if (!strcmp(k, key)) {
            snprintf(out, cap, "%s", v);
            return 1;
        }
    if (cap) out[0] = 0;
    return 0;
}

int sweep_param_keys(const char *params, char keys[][32], int cap)
{
    char k[64], v[SWEEP_VALUE_LEN];
    int n = 0;
    for (const char *p = params; p && n < cap && (p = next_word(p, k, sizeof k, v, sizeof v));)
        if (strcmp(k, "seed")) snprintf(keys[n++], 32, "%.31s", k);
    return n;
}

void sweep_group_key(const char *params, char *out, size_t cap)
{
    char k[64], v[SWEEP_VALUE_LEN];
    size_t o = 0;
    if (cap) out[0] = 0;
    for (const char *p = params; p && (p = next_word(p, k, sizeof k, v, sizeof v));)
        if (strcmp(k, "seed") && o < cap)
            o += (size_t)snprintf(out + o, cap - o, "%s%s=%s", o ? " " : "", k, v);
}

static int by_group_mean(const void *a, const void *b)
{
    const SweepGroup *x = a, *y = b;
    int fx = x->stat.n > 0, fy = y->stat.n > 0;
    if (fx != fy) return fy - fx;
    if (fx && x->stat.mean != y->stat.mean) return x->stat.mean < y->stat.mean ? -1 : 1;
    return x->first - y->first;
}

int sweep_groups(const char *const *params, const double *metric, int n, SweepGroup *groups,
                 int cap, int *group_of)
{
    int ng = 0;
    char key[SWEEP_PARAMS_LEN];
    for (int i = 0; i < n; i++) {
        sweep_group_key(params[i], key, sizeof key);
        int g = 0;
        while (g < ng && strcmp(groups[g].key, key)) g++;
        if (g == ng && ng < cap) {
            memset(&groups[ng], 0, sizeof groups[ng]);
            snprintf(groups[ng].key, sizeof groups[ng].key, "%s", key);
            groups[ng++].first = i;
        }
    }
    double v[MAX_TRIALS];
    for (int g = 0; g < ng; g++) {
        int k = 0;
        for (int i = 0; i < n && k < MAX_TRIALS; i++) {
            sweep_group_key(params[i], key, sizeof key);
            if (!strcmp(key, groups[g].key)) v[k++] = metric[i];
        }
        groups[g].members = k;
        sweep_stat_summary(v, k, &groups[g].stat);
    }
    qsort(groups, (size_t)ng, sizeof *groups, by_group_mean);
    for (int i = 0; group_of && i < n; i++) {
        sweep_group_key(params[i], key, sizeof key);
        group_of[i] = -1;
        for (int g = 0; g < ng; g++)
            if (!strcmp(key, groups[g].key)) group_of[i] = g;
    }
    return ng;
}

/* ---- axes ------------------------------------------------------------------------------ */

static int as_number(const char *s, double *x)
{
    char *end;
    if (!*s) return 0;
    *x = strtod(s, &end);
    return !*end && isfinite(*x);
}

/* Fills one axis for key over the trials. */
static void axis_fill(const char *const *params, int n, const char *key, SweepAxis *a)
{
    char v[SWEEP_VALUE_LEN];
    memset(a, 0, sizeof *a);
    snprintf(a->key, sizeof a->key, "%.31s", key);
    a->numeric = 1, a->lo = INFINITY, a->hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (!sweep_param_value(params[i], key, v, sizeof v)) continue;
        double x;
        if (as_number(v, &x)) a->lo = fmin(a->lo, x), a->hi = fmax(a->hi, x);
        else a->numeric = 0;
        int l = 0;
        while (l < a->n_levels && strcmp(a->levels[l], v)) l++;
        if (l == a->n_levels && l < SWEEP_AXIS_MAX_LEVELS)
            snprintf(a->levels[a->n_levels++], SWEEP_VALUE_LEN, "%s", v);
    }
    if (!isfinite(a->lo)) a->numeric = 0;
    a->log_axis = a->numeric && a->lo > 0 && a->hi / a->lo > 20;
}

int sweep_axes(const char *const *params, int n, SweepAxis *axes, int cap)
{
    char keys[SWEEP_MAX_PARAMS][32];
    int nk = n > 0 ? sweep_param_keys(params[0], keys, SWEEP_MAX_PARAMS) : 0;
    if (nk > cap) nk = cap;
    for (int k = 0; k < nk; k++) axis_fill(params, n < MAX_TRIALS ? n : MAX_TRIALS, keys[k], &axes[k]);
    return nk;
}

double sweep_axis_pos(const SweepAxis *a, const char *value)
{
    double x;
    if (a->numeric) {
        if (!as_number(value, &x)) return NAN;
        if (a->hi <= a->lo) return 0.5;
        if (a->log_axis) return x > 0 ? (log(x) - log(a->lo)) / (log(a->hi) - log(a->lo)) : NAN;
        return (x - a->lo) / (a->hi - a->lo);
    }
    for (int l = 0; l < a->n_levels; l++)
        if (!strcmp(a->levels[l], value))
            return a->n_levels == 1 ? 0.5 : (double)l / (a->n_levels - 1);
    return NAN;
}

/* ---- importance ------------------------------------------------------------------------ */

typedef struct { double x; int i; } Ranked;

static int by_x(const void *a, const void *b)
{
    const Ranked *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x ? 1 : p->i - q->i;
}

/* Average ranks (ties share their mean rank) of x[0..n) into r; uses tmp (n). */
static void ranks(const double *x, int n, double *r, Ranked *tmp)
{
    for (int i = 0; i < n; i++) tmp[i] = (Ranked){x[i], i};
    qsort(tmp, (size_t)n, sizeof *tmp, by_x);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && tmp[j + 1].x == tmp[i].x) j++;
        for (int k = i; k <= j; k++) r[tmp[k].i] = (i + j) / 2.0 + 1;
        i = j + 1;
    }
}

/* Pearson correlation of a and b (n); NaN when either is constant. */
static double pearson(const double *a, const double *b, int n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) ma += a[i], mb += b[i];
    ma /= n, mb /= n;
    for (int i = 0; i < n; i++)
        sab += (a[i] - ma) * (b[i] - mb), saa += (a[i] - ma) * (a[i] - ma),
        sbb += (b[i] - mb) * (b[i] - mb);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

/* eta squared of y (n) grouped by level[i] (0..n_levels-1). */
static double eta_squared(const double *y, const int *level, int n, int n_levels)
{
    double mean = 0, ss_tot = 0, ss_between = 0;
    for (int i = 0; i < n; i++) mean += y[i];
    mean /= n;
    for (int i = 0; i < n; i++) ss_tot += (y[i] - mean) * (y[i] - mean);
    for (int l = 0; l < n_levels; l++) {
        double s = 0;
        int c = 0;
        for (int i = 0; i < n; i++)
            if (level[i] == l) s += y[i], c++;
        if (c) ss_between += c * (s / c - mean) * (s / c - mean);
    }
    if (!(ss_tot > 0)) return NAN;
    return ss_between > 1e-12 * ss_tot ? ss_between / ss_tot : 0;   /* rounding is not an effect */
}

/* The importance of one axis over the m trials idx[] with metric y (m). */
static void importance_of(const SweepAxis *a, const char *const *params, const int *idx,
                          const double *y, int m, SweepImportance *out)
{
    double x[MAX_TRIALS], rx[MAX_TRIALS], ry[MAX_TRIALS];
    int level[MAX_TRIALS];
    Ranked tmp[MAX_TRIALS];
    char v[SWEEP_VALUE_LEN];
    memset(out, 0, sizeof *out);
    snprintf(out->key, sizeof out->key, "%s", a->key);
    for (int i = 0; i < m; i++) {
        sweep_param_value(params[idx[i]], a->key, v, sizeof v);
        x[i] = a->numeric ? strtod(v, NULL) : sweep_axis_pos(a, v);
        level[i] = 0;
        for (int l = 0; l < a->n_levels; l++)
            if (!strcmp(a->levels[l], v)) level[i] = l;
    }
    int nl = a->n_levels, distinct = 0;
    if (a->numeric) {
        ranks(x, m, rx, tmp);   /* tmp is x sorted */
        for (int i = 0; i < m; i++) distinct += i == 0 || tmp[i].x != tmp[i - 1].x;
        if (distinct <= SWEEP_AXIS_MAX_LEVELS)   /* a level per value */
            for (int i = 0; i < m; i++) {
                int l = 0;
                while (l < a->n_levels && !(strtod(a->levels[l], NULL) == x[i])) l++;
                level[i] = l < a->n_levels ? l : 0;
            }
    }
    if (a->numeric && distinct > 6 && distinct * distinct > m) {   /* continuous: bins */
        int bins = (int)floor(sqrt((double)m));
        for (int i = 0; i < m; i++) level[i] = (int)((rx[i] - 1) * bins / m);
        nl = bins, out->binned = 1;
    }
    out->n_levels = nl;
    out->share = eta_squared(y, level, m, nl);
    double sum[MAX_TRIALS] = {0}, lo = INFINITY, hi = -INFINITY;   /* nl <= m levels */
    int cnt[MAX_TRIALS] = {0};
    for (int i = 0; i < m; i++)
        if (level[i] >= 0 && level[i] < MAX_TRIALS) sum[level[i]] += y[i], cnt[level[i]]++;
    for (int l = 0; l < nl && l < MAX_TRIALS; l++) {
        if (cnt[l] > out->max_per_level) out->max_per_level = cnt[l];
        if (cnt[l]) lo = fmin(lo, sum[l] / cnt[l]), hi = fmax(hi, sum[l] / cnt[l]);
    }
    out->range = m >= 2 && hi >= lo ? hi - lo : NAN;
    out->identified = out->max_per_level > 1 || out->binned;
    if (a->numeric) {   /* where the best level mean sits among the values */
        double vmin = INFINITY, vmax = -INFINITY, best = INFINITY, at = NAN;
        int used = 0;
        for (int l = 0; l < nl && l < MAX_TRIALS; l++) {
            if (!cnt[l]) continue;
            double val = out->binned ? l : strtod(a->levels[l], NULL), mean = sum[l] / cnt[l];
            vmin = fmin(vmin, val), vmax = fmax(vmax, val), used++;
            if (mean < best) best = mean, at = val;
        }
        out->inner_best = used >= 3 && at > vmin && at < vmax;
    }
    out->rho = NAN;
    if (a->numeric) {
        ranks(x, m, rx, tmp);
        ranks(y, m, ry, tmp);
        out->rho = pearson(rx, ry, m);
    }
}

static int by_share(const void *a, const void *b)
{
    double x = ((const SweepImportance *)a)->share, y = ((const SweepImportance *)b)->share;
    if (isnan(x) != isnan(y)) return isnan(x) ? 1 : -1;
    return x > y ? -1 : x < y ? 1 : 0;
}

int sweep_importance(const char *const *params, const double *metric, int n,
                     SweepImportance *out, int cap)
{
    int idx[MAX_TRIALS];
    double y[MAX_TRIALS];
    const char *kept[MAX_TRIALS];
    int m = 0;
    for (int i = 0; i < n && m < MAX_TRIALS; i++)
        if (isfinite(metric[i])) kept[m] = params[i], idx[m] = m, y[m++] = metric[i];
    SweepAxis axes[SWEEP_MAX_PARAMS];
    int na = sweep_axes(n > 0 ? params : NULL, n, axes, SWEEP_MAX_PARAMS);
    if (na > cap) na = cap;
    for (int k = 0; k < na; k++) {
        if (m < 2) {
            memset(&out[k], 0, sizeof out[k]);
            snprintf(out[k].key, sizeof out[k].key, "%s", axes[k].key);
            out[k].share = out[k].rho = out[k].range = NAN;
            out[k].n_levels = axes[k].n_levels;
            continue;
        }
        importance_of(&axes[k], kept, idx, y, m, &out[k]);
    }
    qsort(out, (size_t)na, sizeof *out, by_share);
    return na;
}

double sweep_seed_noise(const char *const *params, const double *metric, int n, int *df)
{
    SweepGroup *g = malloc((size_t)(n > 0 ? n : 1) * sizeof *g);
    double ss = 0;
    int dof = 0;
    int ng = g ? sweep_groups(params, metric, n, g, n, NULL) : 0;
    for (int k = 0; k < ng; k++)   /* sample variance * (n-1) = the group's sum of squares */
        if (g[k].stat.n >= 2) {
            ss += g[k].stat.std * g[k].stat.std * (g[k].stat.n - 1);
            dof += g[k].stat.n - 1;
        }
    free(g);
    if (df) *df = dof;
    return dof > 0 ? sqrt(ss / dof) : NAN;
}

void sweep_noise_text(char *out, size_t cap, double noise, int df)
{
    if (isfinite(noise))
        snprintf(out, cap, "seed-to-seed noise ±%.4f (pooled std over seed groups, %d "
                 "degrees of freedom)", noise, df);
    else
        snprintf(out, cap, "seed-to-seed noise unknown (no setting was trained with several "
                 "seeds: `sweep ... seeds=3` measures it)");
}
