/* cmd_analysis.c — seed groups (`group`), a seeded sweep's groups and parameter
 * importance (see cmd_analysis.h). The statistics are core/sweep/sweep_analysis.c's;
 * groups live in the store (runstore_group.h). Not here: drawing (cmd_plot.c), the runs
 * table (cmd_runs_table.c). */
#include "cmd_analysis.h"

#include "err.h"
#include "runstore_group.h"
#include "sweep_analysis.h"
#include "output.h"
#include "jsonval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- group NAME ID ... ----------------------------------------------------------------- */


static int group_show(Session *s, RunStore *st, const char *name)
{
    long *ids = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    int rc = runstore_group_members(st, name, &ids, &n, err);
    if (rc) return session_error(s, rc, "%s", err);
    double *best = malloc((size_t)n * sizeof *best), *fin = malloc((size_t)n * sizeof *fin);
    char *list = malloc((size_t)n * 22 + 1);   /* every id, never cut: 21 bytes each at most */
    if (!best || !fin || !list) {
        free(ids), free(best), free(fin), free(list);
        return session_error(s, LM_ENOMEM, "group %s: out of memory", name);
    }
    size_t off = 0;
    list[0] = 0;
    for (int i = 0; i < n; i++) {
        RunRow r;
        best[i] = fin[i] = NAN;
        if (!runstore_get(st, ids[i], &r, err)) best[i] = r.best_val, fin[i] = r.final_val,
                                               runstore_row_free(&r);
        off += (size_t)snprintf(list + off, 23, "%s%ld", off ? "," : "", ids[i]);
    }
    StatSummary sb = {0}, sf = {0};
    if (best && fin) sweep_stat_summary(best, n, &sb), sweep_stat_summary(fin, n, &sf);
    char pb[64], pf[64];
    cmd_analysis_fmt_pm(pb, sizeof pb, &sb);
    cmd_analysis_fmt_pm(pf, sizeof pf, &sf);
    if (s->json) {
        json_t *o = json_pack("{s:s s:o s:i}", "event", "group", "name", jsonval_str(name), "n", n),
               *arr = json_array();
        for (int i = 0; i < n; i++) json_array_append_new(arr, json_integer(ids[i]));
        json_object_set_new(o, "runs", arr);   /* the ids as numbers */
        json_object_set_new(o, "best_mean", jsonval_num(sb.mean));
        json_object_set_new(o, "best_std", jsonval_num(sb.n > 1 ? sb.std : NAN));
        json_object_set_new(o, "final_mean", jsonval_num(sf.mean));
        json_object_set_new(o, "final_std", jsonval_num(sf.n > 1 ? sf.std : NAN));
        session_emit_json(s, o);
    } else {
        session_printf(s, "group %s: %d run%s (%s); best val %s, final val %s (%d with a validation)",
                       name, n, n == 1 ? "" : "s", list, pb, pf, sb.n);
    }
    free(ids), free(best), free(fin), free(list);
    return LM_OK;
}

int cmd_group(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2 || argv[1].key)
        return session_error(s, LM_EARG, "group: give a name, e.g. `group base 3 4 5` (files "
                             "runs), `group base` (shows it), `group none 3` (takes run 3 out)");
    const char *name = argv[1].text;
    if (!*name)   /* the store would take "" as no group: say what to write instead */
        return session_error(s, LM_EARG, "group: an empty name; `group none ID...` takes "
                             "runs out of their group, `group NAME ID...` files them");
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    if (argc == 2) return group_show(s, st, name);
    long *ids = malloc((size_t)argc * sizeof *ids);   /* every id given, however many */
    int n = 0;
    if (!ids) return session_error(s, LM_ENOMEM, "group %s: out of memory", name);
    for (int i = 2; i < argc; i++) {
        ids[n] = argv[i].key ? -1 : session_parse_run_id(argv[i].text);
        if (ids[n++] <= 0) {
            free(ids);
            return session_error(s, LM_EARG, "group %s: '%s' is not a run id (`runs` lists "
                                 "them)", name, argv[i].text);
        }
    }
    char err[LM_ERR_LEN];
    int none = !strcmp(name, "none");
    int rc = runstore_group_set(st, ids, n, none ? NULL : name, err);
    free(ids);
    if (rc) return session_error(s, rc, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:o s:i}", "ok", 1, "group",
                                       jsonval_str(none ? "" : name), "runs", n));
    else if (none)
        session_printf(s, "%d run%s taken out of their group", n, n == 1 ? "" : "s");
    else
        session_printf(s, "%d run%s filed into group %s", n, n == 1 ? "" : "s", name);
    return LM_OK;
}

/* ---- a sweep's metric, groups, importance -------------------------------------------- */

int cmd_analysis_sweep_metric(Session *s, RunStore *st, long id, SweepTrialRow **t,
                              double **metric, int *n, int *final)
{
    SweepRow row = {0};
    char err[LM_ERR_LEN];
    *t = NULL, *metric = NULL, *n = 0;
    if (runstore_sweep_get(st, id, &row, err) || runstore_sweep_trials(st, id, t, n, err)) {
        free(row.spec);
        return session_error(s, LM_EARG, "%s (`sweep list` lists the sweeps)", err);
    }
    const char *nl = strchr(row.spec, '\n'), *m = strstr(row.spec, "metric=final_val");
    *final = m && (!nl || m < nl);
    free(row.spec);
    *metric = malloc((size_t)(*n ? *n : 1) * sizeof **metric);
    if (!*metric) {
        free(*t), *t = NULL;
        return session_error(s, LM_ENOMEM, "out of memory");
    }
    for (int i = 0; i < *n; i++)   /* only done trials count, as `sweep show` ranks */
        (*metric)[i] = strcmp((*t)[i].status, "done") ? NAN
                       : *final ? (*t)[i].final_val : (*t)[i].best_val;
    return LM_OK;
}

void cmd_analysis_fmt_pm(char *buf, size_t cap, const StatSummary *st)
{
    if (st->n == 0) snprintf(buf, cap, "-");
    else if (st->n == 1) snprintf(buf, cap, "%.4f (1 run)", st->mean);   /* no spread */
    else snprintf(buf, cap, "%.4f ± %.4f", st->mean, st->std);
}

void cmd_sweep_groups_print(Session *s, long sweep, const SweepTrialRow *t,
                            const double *metric, int n)
{
    int seeded = 0;
    for (int i = 0; i < n; i++) seeded |= strstr(t[i].params, "seed=") == t[i].params ||
                                          strstr(t[i].params, " seed=") != NULL;
    if (!seeded) return;
    const char **p = malloc((size_t)n * sizeof *p);
    SweepGroup *g = malloc((size_t)n * sizeof *g);
    for (int i = 0; p && g && i < n; i++) p[i] = t[i].params;
    int ng = p && g ? sweep_groups(p, metric, n, g, n, NULL) : 0;
    if (!s->json && ng) session_printf(s, "seed groups ranked by their mean:");
    for (int k = 0; k < ng; k++) {
        char pm[64];
        cmd_analysis_fmt_pm(pm, sizeof pm, &g[k].stat);
        if (s->json) {
            json_t *o = json_pack("{s:s s:I s:i s:s s:i s:i}", "event", "sweep_group", "sweep",
                                  (json_int_t)sweep, "rank", k + 1, "params", g[k].key,
                                  "n", g[k].stat.n, "members", g[k].members);
            json_object_set_new(o, "mean", jsonval_num(g[k].stat.mean));
            json_object_set_new(o, "std", jsonval_num(g[k].stat.n > 1 ? g[k].stat.std
                                                                             : NAN));
            json_object_set_new(o, "min", jsonval_num(g[k].stat.min));
            session_emit_json(s, o);
        } else {
            session_printf(s, "%s%3d  %-28s  %-20s  N=%d/%d", k == 0 && g[k].stat.n ? "*" : " ",
                           k + 1, g[k].key[0] ? g[k].key : "(seeds only)", pm, g[k].stat.n,
                           g[k].members);
        }
    }
    free(p);
    free(g);
}

static const char *effect_word(double rho, int n_levels, int inner_best)
{
    if (n_levels < 2) return "one value: not varied";   /* numeric or not, nothing to rank */
    if (isnan(rho)) return "categorical";
    if (inner_best) return "best at an inner value (U-shaped)";
    if (fabs(rho) < 0.1) return "no clear direction";
    return rho > 0 ? "larger -> higher metric" : "larger -> lower metric";
}

/* sweep importance's JSON event: each setting's share (null where one trial per value
 * cannot tell), rank correlation, range and range against the seed noise. */
static void importance_json(Session *s, long id, const char *mname, int used,
                            const SweepImportance *im, int ni, double noise, int df)
{
    json_t *arr = json_array();
    for (int k = 0; k < ni; k++) {
        int tells = im[k].identified;   /* else 100% by construction */
        json_t *o = json_pack("{s:s s:i s:b s:i s:b}", "key", im[k].key, "levels",
                              im[k].n_levels, "binned", im[k].binned, "max_per_level",
                              im[k].max_per_level, "identified", tells);
        json_object_set_new(o, "share", jsonval_num(tells ? im[k].share : NAN));
        json_object_set_new(o, "rho", jsonval_num(im[k].rho));
        json_object_set_new(o, "range", jsonval_num(im[k].range));
        json_object_set_new(o, "range_over_noise", jsonval_num(
                                isfinite(noise) && noise > 0 ? im[k].range / noise : NAN));
        json_array_append_new(arr, o);
    }
    json_t *ev = json_pack("{s:s s:I s:s s:i s:o s:i}", "event", "sweep_importance",
                           "sweep", (json_int_t)id, "metric", mname, "trials", used,
                           "settings", arr, "noise_df", df);
    json_object_set_new(ev, "seed_noise", jsonval_num(noise));
    session_emit_json(s, ev);
}

/* sweep importance as text: a row per setting, its share as a bar, set against the noise. */
static void importance_text(Session *s, long id, const char *mname, int used,
                            const SweepImportance *im, int ni, double noise, int df)
{
    char nz[160];
    sweep_noise_text(nz, sizeof nz, noise, df);
    session_printf(s, "sweep #%ld: share of %s's variance each setting explains (%d "
                   "finished trials); %s", id, mname, used, nz);
    session_printf(s, "  %-16s %6s  %-24s %9s  %-10s %s", "setting", "share", "",
                   "rank corr", "range", "effect");
    for (int k = 0; k < ni; k++) {
        char bar[32] = "", sh[16] = "-", rho[16] = "-", rg[16] = "-", vs[96] = "";
        int tells = im[k].identified;
        int w = tells && isfinite(im[k].share) ? (int)lround(im[k].share * 24) : 0;
        for (int j = 0; j < w && j < 24; j++) strcat(bar, "#");
        if (tells && isfinite(im[k].share))
            snprintf(sh, sizeof sh, "%5.1f%%", 100 * im[k].share);
        if (isfinite(im[k].rho)) snprintf(rho, sizeof rho, "%+.2f", im[k].rho);
        if (isfinite(im[k].range)) snprintf(rg, sizeof rg, "%.4f", im[k].range);
        if (!tells)
            snprintf(bar, sizeof bar, "(cannot tell)");
        if (isfinite(noise) && noise > 0 && isfinite(im[k].range))
            snprintf(vs, sizeof vs, "; range %.1fx the seed noise%s", im[k].range / noise,
                     im[k].range < 2 * noise ? ": within the noise" : "");
        session_printf(s, "  %-16s %6s  %-24s %9s  %-10s %s%s%s", im[k].key, sh, bar, rho,
                       rg, effect_word(im[k].rho, im[k].n_levels, im[k].inner_best), im[k].binned ? " (binned)" : "", vs);
    }
    for (int k = 0; k < ni; k++)
        if (!im[k].identified) {
            session_printf(s, "  (%s)", SWEEP_CANNOT_TELL_TEXT);
            break;
        }
}

int cmd_analysis_sweep_importance(Session *s, const char *word)
{
    long id = word ? session_parse_run_id(word) : -1;
    if (id <= 0)
        return session_error(s, LM_EARG, "sweep importance: expected a sweep id, e.g. `sweep "
                             "importance 3` (`sweep list` lists them)");
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    SweepTrialRow *t;
    double *metric;
    int n, final, rc = cmd_analysis_sweep_metric(s, st, id, &t, &metric, &n, &final);
    if (rc) return rc;
    const char **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    int used = 0;
    for (int i = 0; p && i < n; i++) p[i] = t[i].params, used += isfinite(metric[i]);
    SweepImportance im[SWEEP_MAX_PARAMS];
    int ni = p ? sweep_importance(p, metric, n, im, SWEEP_MAX_PARAMS) : 0;
    const char *mname = final ? "final_val" : "best_val";
    if (used < 2 || ni == 0) {
        free(p), free(t), free(metric);
        return session_error(s, LM_EARG, "sweep %ld: importance needs a swept setting and at "
                             "least 2 finished trials (it has %d finished, %d settings)", id,
                             used, ni);
    }
    int df = 0;   /* the seed-to-seed noise every share is set against (seeds=N trials) */
    double noise = sweep_seed_noise(p, metric, n, &df);
    if (s->json)
        importance_json(s, id, mname, used, im, ni, noise, df);
    else
        importance_text(s, id, mname, used, im, ni, noise, df);
    free(p), free(t), free(metric);
    return LM_OK;
}
