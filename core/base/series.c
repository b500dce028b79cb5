/* series.c — the registry of named series (see series.h): metrics.def's step metrics and
 * series.def's series and families expanded into one table, name and alias lookup with
 * "did you mean", family members (gate/L/K), patterns and escaping. Not the reading of a
 * series (core/store/runstore_registry.c) nor its drawing (ui/, plot/). */
#include "series.h"
#include "err.h"
#include "metrics.h"
#include "strdist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIND_STEP SERIES_KIND_STEP
#define KIND_EVAL SERIES_KIND_EVAL
#define KIND_SAMPLE SERIES_KIND_SAMPLE
#define KIND_HIST SERIES_KIND_HIST
#define AGG_LAST SERIES_AGG_LAST
#define AGG_MIN SERIES_AGG_MIN
#define AGG_MAX SERIES_AGG_MAX
#define AGG_MEAN SERIES_AGG_MEAN
#define SRC_EVAL SERIES_SRC_EVAL
#define SRC_BEST SERIES_SRC_BEST
#define SRC_SYS SERIES_SRC_SYS
#define SRC_GATE SERIES_SRC_GATE
#define SRC_NAMED SERIES_SRC_NAMED
#define SRC_HIST SERIES_SRC_HIST

static const SeriesEntry REGISTRY[] = {
#define STEP_METRIC(name, type, kind, aliases, unit, agg, flags, console, help) \
    {#name, aliases, unit, SERIES_KIND_STEP, AGG_##agg, flags, SERIES_SRC_METRICS, #name, \
     console, help, STEP_M_##name, 0},
#include "metrics.def"
#undef STEP_METRIC
#define SERIES(name, aliases, unit, kind, agg, flags, source, where, help) \
    {#name, aliases, unit, KIND_##kind, AGG_##agg, flags, SRC_##source, where, "", help, -1, 0},
#define SERIES_FAMILY(pattern, unit, kind, agg, flags, source, where, help) \
    {pattern, "", unit, KIND_##kind, AGG_##agg, flags, SRC_##source, where, "", help, -1, 1},
#include "series.def"
#undef SERIES
#undef SERIES_FAMILY
};
#define N_REGISTRY (int)(sizeof REGISTRY / sizeof *REGISTRY)

int series_count(void)
{
    return N_REGISTRY;
}

const SeriesEntry *series_info(int i)
{
    return i >= 0 && i < N_REGISTRY ? &REGISTRY[i] : NULL;
}

/* 1 when word is one of the comma-separated aliases. */
static int has_alias(const char *aliases, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = aliases; n && *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && !strncmp(p, word, n)) return 1;
        p += k + (p[k] == ',');
    }
    return 0;
}

/* A whole number of at most 6 digits at *p (advanced); -1 when none. */
static int number_at(const char **p)
{
    int v = 0, k = 0;
    while (**p >= '0' && **p <= '9' && k < 6) v = v * 10 + (*(*p)++ - '0'), k++;
    return k && !(**p >= '0' && **p <= '9') ? v : -1;
}

/* name as a member of the family pattern (L and K numbers; sep '/' or the old ':'). */
static int family_member(const char *pattern, const char *name, int sep, int *arg)
{
    int k = 0;
    const char *p = pattern, *q = name;
    while (*p) {
        if (*p == '*' && !p[1]) {   /* the rest of a recorded name: printable, not empty */
            if (!*q) return 0;
            for (; *q; q++)
                if ((unsigned char)*q < 0x20 || *q == 0x7f) return 0;
            return 1;
        }
        if ((*p == 'L' || *p == 'K') && p > pattern && p[-1] == '/' && (p[1] == '/' || !p[1])) {
            int v = number_at(&q);
            if (v < 0 || k == 2) return 0;
            arg[k++] = v;
            p++;
        } else if (*p == '/') {
            if (*q != sep) return 0;
            p++, q++;
        } else if (*p++ != *q++) {
            return 0;
        }
    }
    return !*q;
}

void series_ref_member(const SeriesEntry *info, int a, int b, SeriesRef *ref)
{
    memset(ref, 0, sizeof *ref);
    ref->info = info;
    ref->arg[0] = a, ref->arg[1] = b;
    size_t o = 0;
    int k = 0;
    for (const char *p = info->name; *p && o + 8 < sizeof ref->name; p++) {
        if ((*p == 'L' || *p == 'K') && p > info->name && p[-1] == '/' && (p[1] == '/' || !p[1]))
            o += (size_t)snprintf(ref->name + o, sizeof ref->name - o, "%d", ref->arg[k++ & 1]);
        else
            ref->name[o++] = *p;
    }
    ref->name[o] = 0;
}

/* The registry name or alias nearest to name (a few edits at most; an alias as the rest
 * of its comma list), or NULL. */
static const char *nearest_entry(const char *name)
{
    const char *best = NULL;
    int len = (int)strlen(name), best_d = (len / 3 > 1 ? len / 3 : 1) + 1;
    for (int i = 0; i < N_REGISTRY; i++) {
        int d = strdist_edit(name, REGISTRY[i].name, STRDIST_FOLD_CASE);
        if (d < best_d) best_d = d, best = REGISTRY[i].name;
        for (const char *p = REGISTRY[i].aliases; *p;) {
            char a[SERIES_NAME_LEN];
            size_t k = strcspn(p, ",");
            snprintf(a, sizeof a, "%.*s", (int)k, p);
            if ((d = strdist_edit(name, a, STRDIST_FOLD_CASE)) < best_d) {
                best_d = d;
                best = p;   /* copied up to its comma by the caller */
            }
            p += k + (p[k] == ',');
        }
    }
    return best;
}

const char *series_nearest(const char *name, char *buf, size_t cap)
{
    const char *best = nearest_entry(name), *dot = strrchr(name, '.');
    if (best) {
        snprintf(buf, cap, "%.*s", (int)strcspn(best, ","), best);
        return buf;
    }
    if (!dot || dot == name)   /* grad_nrm.max: the name before its aggregate, then it */
        return NULL;
    char base[SERIES_NAME_LEN];
    snprintf(base, sizeof base, "%.*s", (int)(dot - name), name);
    if (!(best = nearest_entry(base)))
        return NULL;
    snprintf(buf, cap, "%.*s%s", (int)strcspn(best, ","), best, dot);
    return buf;
}

static int unknown(const char *name, char *err)
{
    char near[SERIES_NAME_LEN];
    const char *best = series_nearest(name, near, sizeof near);
    char shown[SERIES_NAME_LEN * 2], hint[SERIES_NAME_LEN + 32] = "", names[1024];
    if (best)
        snprintf(hint, sizeof hint, " — did you mean '%s'?", best);
    return err_set(err, LM_EARG, "unknown series '%s'%s (series: %s; `help series`)",
                   series_escape(shown, sizeof shown, name), hint,
                   series_names_text(names, sizeof names));
}

int series_find(const char *name, SeriesRef *ref, char *err)
{
    memset(ref, 0, sizeof *ref);
    name = name ? name : "";
    for (int i = 0; i < N_REGISTRY; i++) {
        const SeriesEntry *s = &REGISTRY[i];
        int arg[2] = {0, 0};
        if (s->family) {
            if (family_member(s->name, name, '/', arg) ||
                (s->source == SERIES_SRC_GATE && family_member(s->name, name, ':', arg))) {
                series_ref_member(s, arg[0], arg[1], ref);
                if (strchr(s->name, '*'))   /* a recorded name: itself */
                    snprintf(ref->name, sizeof ref->name, "%s", name);
                return LM_OK;
            }
        } else if (!strcmp(s->name, name) || has_alias(s->aliases, name)) {
            ref->info = s;
            snprintf(ref->name, sizeof ref->name, "%s", s->name);
            return LM_OK;
        }
    }
    return unknown(name, err);
}

static int glob(const char *p, const char *s)
{
    for (; *p; p++, s++) {
        if (*p == '*') {
            while (p[1] == '*') p++;
            for (const char *t = s;; t++) {
                if (glob(p + 1, t)) return 1;
                if (!*t) return 0;
            }
        }
        if (!*s || (*p != '?' && *p != *s)) return 0;
    }
    return !*s;
}

int series_match(const char *pattern, const char *name)
{
    if (!pattern || !name) return 0;
    if (!strpbrk(pattern, "*?") && strcmp(pattern, name)) {   /* an alias of name? */
        SeriesRef a, b;
        return !series_find(pattern, &a, NULL) && !series_find(name, &b, NULL) &&
               !strcmp(a.name, b.name);
    }
    return glob(pattern, name);
}

int series_pattern_check(const char *pattern, char *err)
{
    char shown[SERIES_NAME_LEN * 4];
    if (!pattern || !*pattern)
        return err_set(err, LM_EARG, "an empty series pattern: give a name or a pattern such "
                       "as gate/* or val*");
    if (strlen(pattern) >= SERIES_NAME_LEN)
        return err_set(err, LM_EARG, "series pattern too long (at most %d bytes)",
                       SERIES_NAME_LEN - 1);
    for (const unsigned char *p = (const unsigned char *)pattern; *p; p++)
        if (*p < 0x21 || *p > 0x7e)
            return err_set(err, LM_EARG, "series pattern '%s' has a byte that is not printable "
                           "ASCII; names are letters, digits, _ and /",
                           series_escape(shown, sizeof shown, pattern));
    return LM_OK;
}

static const char *escape(char *out, size_t cap, const char *name, int path)
{
    size_t o = 0;
    if (!cap) return out;
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++) {
        char tmp[8];
        int odd = *p < 0x20 || *p > 0x7e || *p == '\\';
        if (path && (*p == '/' || *p == '%' || *p == ' ' || *p == '"' || *p == '<' ||
                     *p == '>' || *p == '&' || *p == '\'' || (*p == '.' && o == 0) || odd))
            snprintf(tmp, sizeof tmp, "%%%02X", *p);
        else if (odd)
            snprintf(tmp, sizeof tmp, "\\x%02x", *p);
        else
            tmp[0] = (char)*p, tmp[1] = 0;
        size_t k = strlen(tmp);
        if (o + k + 1 > cap) break;
        memcpy(out + o, tmp, k);
        o += k;
    }
    out[o] = 0;
    return out;
}

const char *series_escape(char *out, size_t cap, const char *name)
{
    return escape(out, cap, name, 0);
}

const char *series_escape_path(char *out, size_t cap, const char *name)
{
    return escape(out, cap, name, 1);
}

const char *series_kind_name(SeriesRegKind k)
{
    static const char *const N[] = {"per step", "per evaluation", "per sample", "histogram"};
    return k <= SERIES_KIND_HIST ? N[k] : "?";
}

const char *series_agg_name(SeriesRegAgg a)
{
    static const char *const N[] = {"last", "min", "max", "mean"};
    return a <= SERIES_AGG_MEAN ? N[a] : "?";
}

const char *series_names_text(char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < N_REGISTRY && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s%s%s", i ? " " : "", REGISTRY[i].name,
                              REGISTRY[i].aliases[0] ? "|" : "", REGISTRY[i].aliases);
    return buf;
}
