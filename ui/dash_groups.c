/* dash_groups.c — seed-group bands and the kept layout of the history view (see
 * dash_groups.h). Statistics: the sample mean and standard deviation of the members
 * that reach each step (linear between a member's logged steps), as `plot band=std`. */
#include "dash_groups.h"
#include "dash_data.h"

#include "err.h"
#include "runstore_control.h"
#include "runstore_group.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_MAX_MEMBERS 32


/* Frees h->bands. */
void dash_groups_free(HistoryView *h)
{
    for (int i = 0; i < h->n_bands; i++) {
        DashBand *b = &h->bands[i];
        free(b->x), free(b->mean), free(b->lo), free(b->hi);
    }
    memset(h->bands, 0, sizeof h->bands);
    h->n_bands = 0;
}

/* y of points p (n, step order) at step x; NaN outside them. */
static double value_at(const SeriesPoint *p, int n, double x)
{
    if (n == 0 || x < p[0].step || x > p[n - 1].step) return NAN;
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (p[mid].step <= x) lo = mid;
        else hi = mid;
    }
    if (p[hi].step == p[lo].step) return p[lo].value;
    double u = (x - p[lo].step) / (double)(p[hi].step - p[lo].step);
    return p[lo].value + u * (p[hi].value - p[lo].value);
}

/* One band over members ids (n), each member's points kept to a chart's as a marked
 * run's curve (DASH_CURVE_BUCKETS: every point of a run of up to 8,192 logged steps). */
static int band_build(RunStore *st, const long *ids, int n, const char *metric, DashBand *b,
                      char *err)
{
    SeriesPoint *p[GROUP_MAX_MEMBERS] = {0};
    int np[GROUP_MAX_MEMBERS] = {0}, longest = 0, rc = LM_OK;
    if (n > GROUP_MAX_MEMBERS) n = GROUP_MAX_MEMBERS;
    for (int i = 0; i < n && !rc; i++) {
        rc = runstore_series_m4(st, ids[i], metric, DASH_CURVE_BUCKETS, &p[i], &np[i], err);
        if (!rc && np[i] > np[longest]) longest = i;
    }
    int m = rc ? 0 : np[longest];
    if (!rc && m > 0) {
        b->x = malloc((size_t)m * sizeof *b->x), b->mean = malloc((size_t)m * sizeof *b->mean);
        b->lo = malloc((size_t)m * sizeof *b->lo), b->hi = malloc((size_t)m * sizeof *b->hi);
        if (!b->x || !b->mean || !b->lo || !b->hi) rc = err_set(err, LM_ENOMEM, "out of memory");
    }
    for (int j = 0; !rc && j < m; j++) {
        double x = (double)p[longest][j].step, v[GROUP_MAX_MEMBERS], sum = 0, ss = 0;
        int k = 0;
        for (int i = 0; i < n; i++) {
            double y = value_at(p[i], np[i], x);
            if (isfinite(y)) v[k++] = y, sum += y;
        }
        double mean = k ? sum / k : NAN;
        for (int i = 0; i < k; i++) ss += (v[i] - mean) * (v[i] - mean);
        double sd = k > 1 ? sqrt(ss / (k - 1)) : 0;
        b->x[j] = x, b->mean[j] = mean, b->lo[j] = mean - sd, b->hi[j] = mean + sd;
    }
    b->n = rc ? 0 : m;
    b->members = n;
    b->run = ids[0];
    b->tokens_per_step = b->seconds_per_step = 0;
    for (int i = 0; i < n; i++) {   /* the members' mean pace: the band's own x axis */
        b->tokens_per_step += dash_data_per_step(st, ids[i], "tokens") / n;
        b->seconds_per_step += dash_data_per_step(st, ids[i], "elapsed") / n;
    }
    for (int i = 0; i < GROUP_MAX_MEMBERS; i++) free(p[i]);
    return rc;
}

int dash_groups_load(Dashboard *d, HistoryView *h, RunStore *st, char *err)
{
    dash_groups_free(h);
    char names[DASH_MAX_MARKED][RUNSTORE_GROUP_LEN];
    int rc = runstore_groups_of(st, d->marked, d->n_marked, names, err);
    for (int i = 0; !rc && i < d->n_marked; i++) {
        int seen = 0;
        for (int j = 0; j < i && names[i][0]; j++) seen |= !strcmp(names[i], names[j]);
        if (seen) continue;
        DashBand *b = &h->bands[h->n_bands];
        long *ids = NULL;
        int n = 0;
        if (names[i][0]) rc = runstore_group_members(st, names[i], &ids, &n, err);
        if (!rc) rc = band_build(st, ids ? ids : &d->marked[i], ids ? n : 1,
                                 dash_data_cmp_series(d->cmp_metric)->name, b, err);
        free(ids);
        if (rc) break;
        if (names[i][0]) snprintf(b->label, sizeof b->label, "%.60s N=%d", names[i], b->members);
        else snprintf(b->label, sizeof b->label, "#%ld", d->marked[i]);
        h->n_bands++;
    }
    if (rc) dash_groups_free(h);
    return rc;
}

/* ---- the kept layout ---------------------------------------------------------------- */

int dash_groups_save_layout(Dashboard *d, HistoryView *h, RunStore *st, char *err)
{
    char buf[32], marks[DASH_MAX_MARKED * 24] = "";
    size_t o = 0;
    for (int i = 0; i < d->n_marked; i++)
        o += (size_t)snprintf(marks + o, sizeof marks - o, "%s%ld", i ? "," : "", d->marked[i]);
    snprintf(buf, sizeof buf, "%s%s", h->sort_desc ? "-" : "", dash_data_sort_name(h));
    int rc = runstore_setting_set(st, "history.sort", buf, err);
    if (!rc) rc = runstore_setting_set(st, "history.filter", h->filter, err);
    if (!rc) rc = runstore_setting_set(st, "history.marks", marks, err);
    return rc;
}

/* The kept sort: "-lr", "best", or an older lmlab's index of the fixed sorts ("2"). */
static void restore_sort(HistoryView *h, const char *v)
{
    static const char *const FIXED[DASH_N_SORTS] = {"best", "recent", "model", "name", "steps",
                                                    "status", "id"};
    char *end;
    long i = strtol(v, &end, 10);
    if (*v && !*end) {
        if (i >= 0 && i < DASH_N_SORTS) h->sort = (int)i, h->sort_key[0] = 0;
        return;
    }
    h->sort_desc = v[0] == '-';
    const char *k = v + h->sort_desc;
    h->sort_key[0] = 0;
    for (int j = 0; j < DASH_N_SORTS; j++)
        if (!strcmp(FIXED[j], k)) h->sort = j;
    int fixed = 0;
    for (int j = 0; j < DASH_N_SORTS; j++) fixed |= !strcmp(FIXED[j], k);
    if (!fixed && *k) snprintf(h->sort_key, sizeof h->sort_key, "%.31s", k);
}

int dash_groups_restore_layout(Dashboard *d, HistoryView *h, RunStore *st, char *err)
{
    if (h->hist_restored) return LM_OK;
    h->hist_restored = 1;
    char v[512];
    int found, rc = runstore_setting_get(st, "history.sort", v, sizeof v, &found, err);
    if (!rc && found) restore_sort(h, v);
    if (!rc) rc = runstore_setting_get(st, "history.filter", v, sizeof v, &found, err);
    if (!rc && found) snprintf(h->filter, sizeof h->filter, "%.255s", v);
    if (!rc) rc = runstore_setting_get(st, "history.marks", v, sizeof v, &found, err);
    char *save = NULL;
    for (char *w = found && !rc ? strtok_r(v, ",", &save) : NULL; w; w = strtok_r(NULL, ",", &save)) {
        long id = atol(w);
        int have = 0;
        for (int i = 0; i < d->n_marked; i++) have |= d->marked[i] == id;
        char e2[LM_ERR_LEN];
        if (id > 0 && !have) dash_data_toggle_mark(d, st, id, e2);   /* a deleted run: skipped */
    }
    return rc;
}
