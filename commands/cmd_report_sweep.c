/* cmd_report_sweep.c — the report's sections across runs: seed groups as mean ± std bands
 * of their validation curves, and a sweep's parallel coordinates and parameter importance
 * (as `plot sweep` and `sweep importance` state them). Not here: the runs' own sections
 * (cmd_report_runs.c), samples, notes and consoles (cmd_report_text.c). */
#include "cmd_report.h"
#include "report_doc.h"
#include "cmd_analysis.h"
#include "cmd_plot.h"
#include "plot.h"
#include "runstore_group.h"
#include "sweep_analysis.h"

#include "err.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_MAX_GROUPS 6

/* The sweep's parameter importance as `sweep importance` states it: each setting's share
 * (or "cannot tell" where one trial per value makes it 100% by construction), its range,
 * and the range set against the seed-to-seed noise when seed groups measured it. */
static void report_importance(Report *r, const SweepTrialRow *tr, const double *metric, int n)
{
    const char **p = malloc(sizeof *p * (size_t)(n ? n : 1));
    SweepImportance im[SWEEP_MAX_PARAMS];
    int ni = 0, df = 0, blind = 0;
    for (int i = 0; p && i < n; i++) p[i] = tr[i].params;
    if (p) ni = sweep_importance(p, metric, n, im, SWEEP_MAX_PARAMS);
    double noise = p ? sweep_seed_noise(p, metric, n, &df) : NAN;
    free(p);
    char t[256];
    report_heading(r, 3, "Parameter importance", "importance");
    sweep_noise_text(t, sizeof t, noise, df);
    t[0] = (char)toupper((unsigned char)t[0]);   /* a sentence of its own here */
    report_para(r, t);
    report_puts(&r->b, r->md ? "| setting | share of variance | range | range / seed noise | "
                               "levels |\n|---|---|---|---|---|\n"
                     : "<table class=\"importance\" id=\"importance-table\"><tr><th>setting</th>"
                       "<th>share of variance</th><th>range</th><th>range / seed noise</th>"
                       "<th>levels</th></tr>\n");
    for (int k = 0; k < ni; k++) {
        char sh[32] = "-", rg[32] = "-", vs[48] = "-", lv[32];
        if (!im[k].identified) snprintf(sh, sizeof sh, "cannot tell"), blind = 1;
        else if (isfinite(im[k].share)) snprintf(sh, sizeof sh, "%.1f%%", 100 * im[k].share);
        if (isfinite(im[k].range)) snprintf(rg, sizeof rg, "%.4f", im[k].range);
        if (isfinite(noise) && noise > 0 && isfinite(im[k].range))
            snprintf(vs, sizeof vs, "%.1fx%s", im[k].range / noise,
                     im[k].range < 2 * noise ? " (within the noise)" : "");
        snprintf(lv, sizeof lv, "%d%s", im[k].n_levels, im[k].binned ? " bins" : "");
        report_puts(&r->b, r->md ? "|" : "<tr>");
        report_cell(r, im[k].key), report_cell(r, sh), report_cell(r, rg);
        report_cell(r, vs), report_cell(r, lv);
        report_puts(&r->b, r->md ? "\n" : "</tr>\n");
    }
    if (!r->md) report_puts(&r->b, "</table>\n");
    if (blind)
        report_para(r, SWEEP_CANNOT_TELL_TEXT ".");
}

/* mean ± std of the members' validation curves at the steps of the first member. */
static int group_band(Report *r, const char *name, PlotSeries *ps, double **mem, char *label)
{
    long *ids = NULL;
    int n = 0, np = 0;
    char err[LM_ERR_LEN];
    if (runstore_group_members(r->st, name, &ids, &n, err) || n == 0) return 0;
    SeriesPoint *base = NULL, *o = NULL;
    int nb = 0, no = 0;
    runstore_series(r->st, ids[0], "val_loss", &base, &nb, err);
    /* a: x, then sum -> mean, sum of squares -> mean - std, count -> mean + std */
    double *a = nb ? calloc((size_t)nb * 4, sizeof *a) : NULL;
    for (int j = 0; a && j < nb; j++) a[j] = (double)base[j].step;
    for (int i = 0; a && i < n; i++) {
        if (runstore_series(r->st, ids[i], "val_loss", &o, &no, err)) continue;
        for (int j = 0, q = 0; j < nb; j++) {
            while (q < no && o[q].step < base[j].step) q++;
            if (q < no && o[q].step == base[j].step && isfinite(o[q].value))
                a[nb + j] += o[q].value, a[2 * nb + j] += o[q].value * o[q].value, a[3 * nb + j]++;
        }
        free(o);
        o = NULL;
    }
    double *y = a ? a + nb : NULL, *lo = a ? a + 2 * nb : NULL, *hi = a ? a + 3 * nb : NULL;
    for (int j = 0; a && j < nb; j++) {
        double c = a[3 * nb + j], s1 = a[nb + j], s2 = a[2 * nb + j];
        double mean = c ? s1 / c : NAN, var = c > 1 ? fmax(0, (s2 - s1 * s1 / c) / (c - 1)) : 0;
        y[j] = mean, lo[j] = mean - sqrt(var), hi[j] = mean + sqrt(var);
        np++;
    }
    free(base);
    free(ids);
    if (!a || !np) { free(a); return 0; }
    snprintf(label, 96, "%.60s (%d runs, mean ± std)", name, n);
    *ps = (PlotSeries){label, a, a + nb, nb, a + 2 * nb, a + 3 * nb, NULL};
    *mem = a;
    return 1;
}

static void section_groups(Report *r)
{
    long *ids = malloc(sizeof *ids * (size_t)(r->n ? r->n : 1));
    char (*names)[RUNSTORE_GROUP_LEN] = calloc((size_t)(r->n ? r->n : 1), sizeof *names);
    char err[LM_ERR_LEN], uniq[REPORT_MAX_GROUPS][RUNSTORE_GROUP_LEN];
    int nu = 0;
    for (int i = 0; ids && i < r->n; i++) ids[i] = r->runs[i].id;
    if (ids && names && r->n && runstore_groups_of(r->st, ids, r->n, names, err) == LM_OK)
        for (int i = 0; i < r->n && nu < REPORT_MAX_GROUPS; i++) {
            int seen = !names[i][0];
            for (int j = 0; j < nu && !seen; j++) seen = !strcmp(uniq[j], names[i]);
            if (!seen) snprintf(uniq[nu++], RUNSTORE_GROUP_LEN, "%s", names[i]);
        }
    free(ids);
    free(names);
    if (!nu) return;
    report_heading(r, 2, "Seed groups", "groups");
    PlotSeries ps[REPORT_MAX_GROUPS];
    double *mem[REPORT_MAX_GROUPS];
    char labels[REPORT_MAX_GROUPS][96], path[1200];
    int k = 0;
    for (int g = 0; g < nu; g++) k += group_band(r, uniq[g], &ps[k], &mem[k], labels[k]);
    if (k) {
        report_fig_path(r, path, sizeof path);
        PlotAxes ax = {"validation loss of each seed group: mean ± std", "step", "val loss"};
        if (plot_curves(path, ps, k, &ax, err) == LM_OK)
            report_fig_embed(r, path, "validation loss of each seed group: mean ± std");
    }
    for (int i = 0; i < k; i++) free(mem[i]);
}

static void mute(void *ud, int kind, const char *text) { (void)ud, (void)kind, (void)text; }

static void section_sweep(Report *r)
{
    if (r->sweep <= 0) return;
    char t[64], path[1200];
    snprintf(t, sizeof t, "Sweep %ld", r->sweep);
    report_heading(r, 2, t, "sweep");
    SessionWriter w = r->s->writer;   /* the helpers below speak to the user: not here */
    void *ud = r->s->writer_ud;
    int json = r->s->json;
    r->s->writer = mute;
    report_fig_path(r, path, sizeof path);
    int ok = cmd_plot_sweep(r->s, r->st, r->sweep, path, NULL) == LM_OK;
    SweepTrialRow *tr = NULL;
    double *metric = NULL;
    int n = 0, final = 0;
    int have = cmd_analysis_sweep_metric(r->s, r->st, r->sweep, &tr, &metric, &n, &final) == LM_OK;
    r->s->writer = w, r->s->writer_ud = ud, r->s->json = json;
    if (ok) report_fig_embed(r, path, "parallel coordinates: one line per trial, coloured by its metric");
    else report_para(r, "(no parallel coordinates: the sweep has no finished trial or no swept setting)");
    if (have) report_importance(r, tr, metric, n);
    free(tr), free(metric);
}

void cmd_report_write_sweep(Report *r)
{
    section_groups(r);
    section_sweep(r);
}
