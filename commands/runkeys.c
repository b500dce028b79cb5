/* runkeys.c — known filter and sort keys of runs, with aliases (runkeys.h); a series is
 * any name of the registry (core/base/series.h), read by the store as its aggregate. */
#include "runkeys.h"

#include "config.h"
#include "err.h"
#include "runstore_row.h"
#include "series.h"
#include "suggest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ALIASES[][2] = {
    {"best_val", "best"}, {"final_val", "final"}, {"last_step", "steps"},
    {"sweep_id", "sweep"}, {"tags", "tag"}, {"git_rev", "git"}, {"data_name", "data"}};

int runkeys_store_has(void *store, const char *key)
{
    RunRow *rows = NULL;
    int n = 0, found = 0;
    char err[LM_ERR_LEN], pat[140];
    snprintf(pat, sizeof pat, "%s=", key);
    if (!store || runstore_list(store, NULL, "recent", 0, &rows, &n, err))
        return 0;
    for (int i = 0; i < n && !found; i++) {
        const char *c = rows[i].config;
        found = !strncmp(c, pat, strlen(pat)) || (strstr(c, pat) && strstr(c, pat)[-1] == '\n');
    }
    runstore_rows_free(rows, n);
    return found;
}

/* The store's name of key (an alias resolved), or NULL when the key is unknown. */
static const char *known(const char *key)
{
    for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; i++)
        if (!strcmp(key, ALIASES[i][0]))
            return ALIASES[i][1];
    for (int i = 0; runstore_filter_key(i); i++)
        if (!strcmp(key, runstore_filter_key(i)))
            return runstore_filter_key(i);
    const ConfigKey *k = config_find_key(key);
    if (k) return k->key;
    SeriesRef ref;   /* a series of the registry (core/base/series.h) as its aggregate */
    SeriesRegAgg agg;
    return runstore_series_ref(key, &ref, &agg, NULL) ? NULL : key;
}

static int unknown_key(const char *what, const char *key, char *err)
{
    const char *cands[256];
    int n = 0, nk;
    for (int i = 0; runstore_filter_key(i) && n < 64; i++)
        cands[n++] = runstore_filter_key(i);
    for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; i++)
        cands[n++] = ALIASES[i][0];
    const ConfigKey *ck = config_keys(&nk);
    for (int i = 0; i < nk && n < 256; i++)
        cands[n++] = ck[i].key;
    for (int i = 0; i < series_count() && n < 256; i++)
        if (!series_info(i)->family) cands[n++] = series_info(i)->name;
    char snear[SERIES_NAME_LEN];   /* else a series' name or alias (the registry's) */
    const char *near = suggest_nearest(key, cands, n);
    if (!near) near = series_nearest(key, snear, sizeof snear);
    char hint[96] = "", shown[160];
    if (near)
        snprintf(hint, sizeof hint, " — did you mean '%s'?", near);
    return err_set(err, LM_EARG, "unknown %s key '%s'%s (keys: id name status model data "
                   "params steps best final sweep tag group note since until, any config key such as "
                   "lr, or any series such as loss, val_loss.min, gate/0/1; `help runs`)", what,
                   series_escape(shown, sizeof shown, key), hint);
}

int runkeys_filter(const char *filter, char *out, size_t cap, RunKeysHas has, void *ud,
                   char *err)
{
    size_t o = 0;
    const char *p = filter ? filter : "";
    out[0] = 0;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        size_t k = strcspn(p, "=!<>~ \t\n\"");
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(k < sizeof key ? k : sizeof key - 1), p);
        const char *name = known(key);
        if (!name && has && has(ud, key))   /* a key only older runs' configs hold */
            name = key;
        if (!k || !strchr("=!<>~", p[k]) || !p[k])
            return err_set(err, LM_EARG, "invalid filter term '%.*s': write key OP value (OP one of = != < "
                           "<= > >= ~), e.g. lr<0.005", (int)strcspn(p, " \t\n"), p);
        if (!name)
            return unknown_key("filter", key, err);
        const char *q = p + k;   /* the term's end: past a "quoted value" */
        int inq = 0;
        while (*q && (inq || !strchr(" \t\n", *q)))
            inq ^= *q++ == '"';
        int n = snprintf(out + o, cap - o, "%s%s%.*s", o ? " " : "", name, (int)(q - p - k),
                         p + k);
        if (n < 0 || o + (size_t)n >= cap)
            return err_set(err, LM_EARG, "filter too long (at most %zu characters)", cap - 1);
        o += (size_t)n;
        p = q;
    }
    return LM_OK;
}

int runkeys_store_sort(const char *sort)
{
    return !sort || !*sort || !strcmp(sort, "recent") || !strcmp(sort, "best") ||
           !strcmp(sort, "model") || !strcmp(sort, "name");
}

int runkeys_check_sort(const char *sort, RunKeysHas has, void *ud, char *err)
{
    if (runkeys_store_sort(sort))
        return LM_OK;
    const char *key = sort[0] == '-' ? sort + 1 : sort;
    if (!known(key) && has && has(ud, key))
        return LM_OK;
    SeriesRef ref;   /* a series: sorted by the shaped table, which reads its values */
    SeriesRegAgg agg;
    if (!config_find_key(key) && !runstore_series_ref(key, &ref, &agg, NULL))
        return err_set(err, LM_EARG, "sort=%s: a series, sorted by `runs`' table", sort);
    if (!known(key) || !strcmp(known(key), "tag") || !strcmp(known(key), "note") ||
        !strcmp(known(key), "since") ||
        !strcmp(known(key), "until"))
        return unknown_key("sort", key, err);
    return LM_OK;
}

/* The value of key (a store column or a config key, aliases allowed) of run r as text
 * into buf; 0, or -1 when the run has none. */
static int runkeys_value(const RunRow *r, const char *key, char *buf, size_t cap)
{
    const char *k = known(key) ? known(key) : key;   /* else: a key of older configs */
    if (!strcmp(k, "id")) return snprintf(buf, cap, "%ld", r->id), 0;
    if (!strcmp(k, "name")) return snprintf(buf, cap, "%s", r->name), 0;
    if (!strcmp(k, "status")) return snprintf(buf, cap, "%s", r->status), 0;
    if (!strcmp(k, "model")) return snprintf(buf, cap, "%s", r->model), 0;
    if (!strcmp(k, "data")) return snprintf(buf, cap, "%s", r->data_name), 0;
    if (!strcmp(k, "params")) return snprintf(buf, cap, "%ld", r->params), 0;
    if (!strcmp(k, "steps")) return snprintf(buf, cap, "%ld", r->last_step), 0;
    if (!strcmp(k, "sweep")) return r->sweep_id ? snprintf(buf, cap, "%ld", r->sweep_id), 0 : -1;
    if (!strcmp(k, "group")) return r->group[0] ? snprintf(buf, cap, "%s", r->group), 0 : -1;
    if (!strcmp(k, "best") || !strcmp(k, "final")) {
        double v = !strcmp(k, "best") ? r->best_val : r->final_val;
        return isnan(v) ? -1 : (snprintf(buf, cap, "%.17g", v), 0);
    }
    if (!strcmp(k, "since") || !strcmp(k, "until"))
        return snprintf(buf, cap, "%.6f", r->created), 0;
    return runstore_config_value(r->config, k, buf, cap) ? 0 : -1;   /* a config key */
}

static const char *g_key;
static int g_desc;

static int cmp_rows(const void *a, const void *b)
{
    const RunRow *x = a, *y = b;
    char va[256], vb[256];
    int ha = runkeys_value(x, g_key, va, sizeof va) == 0 && va[0];
    int hb = runkeys_value(y, g_key, vb, sizeof vb) == 0 && vb[0];
    if (ha != hb)
        return ha ? -1 : 1;   /* runs without a value last, either direction */
    int c = 0;
    if (ha) {
        char *ea, *eb;
        double da = strtod(va, &ea), db = strtod(vb, &eb);
        c = !*ea && !*eb ? (da < db ? -1 : da > db) : strcmp(va, vb);
        if (g_desc)
            c = -c;
    }
    return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

void runkeys_sort_rows(RunRow *rows, int n, const char *sort)
{
    g_desc = sort[0] == '-';
    g_key = g_desc ? sort + 1 : sort;
    qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
}

void runkeys_config_value(const char *config, const char *key, char *buf, size_t cap)
{
    if (!runstore_config_value(config, key, buf, cap))
        snprintf(buf, cap, "-");
}

static int distinct(const char *const *configs, int n, const char *key)
{
    char vals[64][64];
    int nv = 0;
    for (int r = 0; r < n; r++) {
        char v[64];
        runkeys_config_value(configs[r], key, v, sizeof v);
        int seen = 0;
        for (int k = 0; k < nv && !seen; k++)
            seen = !strcmp(vals[k], v);
        if (!seen && nv < 64)
            memcpy(vals[nv++], v, sizeof v);
    }
    return nv;
}

/* Whether key takes two values among the runs of one sweep (sweeps[r] > 0): a swept key. */
static int swept(const char *const *configs, const long *sweeps, int n, const char *key)
{
    for (int a = 0; sweeps && a < n; a++) {
        if (sweeps[a] <= 0)
            continue;
        char va[64], vb[64];
        runkeys_config_value(configs[a], key, va, sizeof va);
        for (int b = a + 1; b < n; b++) {
            if (sweeps[b] != sweeps[a])
                continue;
            runkeys_config_value(configs[b], key, vb, sizeof vb);
            if (strcmp(va, vb))
                return 1;
        }
    }
    return 0;
}

int runkeys_diff(const char *const *configs, const long *sweeps, int n, char (*keys)[32],
                 int max)
{
    char seen[128][32];
    int count[128], rank[128], n_seen = 0, found = 0;
    for (int r = 0; r < n; r++)
        for (const char *p = configs[r]; p && *p;) {
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            const char *eq = memchr(p, '=', len);
            size_t kl = eq ? (size_t)(eq - p) : 0;
            char key[32];
            if (kl && kl < 32 && n_seen < 128) {
                memcpy(key, p, kl);
                key[kl] = 0;
                int dup = 0;
                for (int k = 0; k < n_seen && !dup; k++)
                    dup = !strcmp(seen[k], key);
                if (!dup) {
                    memcpy(seen[n_seen], key, kl + 1);
                    count[n_seen] = distinct(configs, n, key);
                    /* 0: swept in a sweep, 1: differs, 2: the seed (a repeat, not a
                       setting one chose; issue 49 item 8) */
                    rank[n_seen] = !strcmp(key, "seed") ? 2
                                   : swept(configs, sweeps, n, key) ? 0 : 1;
                    n_seen++;
                }
            }
            p = e ? e + 1 : NULL;
        }
    for (int cls = 0; cls < 3; cls++)
        for (int want = n < 64 ? n : 64; want >= 2; want--)   /* most distinct values first */
            for (int k = 0; k < n_seen; k++)
                if (rank[k] == cls && count[k] == want) {
                    if (found < max)
                        memcpy(keys[found], seen[k], sizeof seen[k]);
                    found++;
                }
    return found;
}
