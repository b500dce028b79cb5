/* cmd_report.c — `report runs=... [sweep=ID] file=report.html|report.md`: one file to hand
 * to a colleague. HTML is self-contained (CSS inline, figures as base64 SVG <img> drawn by
 * plot/ — the code `plot` uses — no script, no network); Markdown gets its figures as SVG
 * files in NAME_files/ beside it. Sections: machine and versions, curves of the best runs,
 * the runs table with the settings that differ, every named series (the best run's as a
 * grid of small charts, series=PATTERN chooses; a table of each series' number per run:
 * the registry's, core/base/series.h), seed groups as mean ± std bands, a sweep's
 * parallel coordinates and parameter importance, the best run's samples, notes, the
 * console tails of the best runs (what was left out said), system metrics. Every stored
 * string is escaped (HTML entities; control characters and invalid UTF-8 shown as \xNN;
 * report_doc.c holds the document's primitives). Not a template engine and not
 * interactive. */
#include "session.h"
#include "cmd_report.h"
#include "report_doc.h"
#include "cmd_analysis.h"
#include "cmd_log.h"
#include "cmd_plot.h"
#include "plot.h"
#include "plot_read.h"
#include "series.h"
#include "runrecord.h"
#include "runstore_group.h"
#include "runstore_notes.h"
#include "runstore_row.h"
#include "sweep_analysis.h"
#include "sysinfo.h"
#include "textcheck.h"
#include "outfile.h"

#include "err.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPORT_MAX_CURVES 10
#define REPORT_MAX_COLS 12
#define REPORT_MAX_GROUPS 6
#define REPORT_CONSOLE_RUNS 3     /* consoles shown: the best runs' */
#define REPORT_CONSOLE_TAIL 40    /* newest lines of each */

static int by_best(const void *a, const void *b)
{
    double x = ((const RunRow *)a)->best_val, y = ((const RunRow *)b)->best_val;
    if (isnan(x) != isnan(y)) return isnan(x) ? 1 : -1;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Curves of metric for the best REPORT_MAX_CURVES runs (r->runs sorted by best), each
 * read decimated as `plot` draws (plot_read.h: M4, spikes, dips and every NaN or infinity
 * kept); a paragraph under the figure says which curves were drawn from part of their
 * points. */
static void fig_curves(Report *r, const char *metric, const char *title, const char *ylabel)
{
    PlotSeries ser[REPORT_MAX_CURVES];
    PlotCurve cur[REPORT_MAX_CURVES];
    char labels[REPORT_MAX_CURVES][96], err[LM_ERR_LEN], path[1200], note[1024];
    int k = 0, o = 0;
    for (int i = 0; i < r->n && k < REPORT_MAX_CURVES; i++) {
        if (plot_read_series(r->st, r->runs[i].id, metric, &cur[k], err) || !cur[k].n) {
            plot_read_free(&cur[k]);
            continue;
        }
        if (r->runs[i].parent_run > 0)   /* a fork's lineage in its label */
            snprintf(labels[k], sizeof labels[k], "#%ld %.50s (#%ld@%ld)", r->runs[i].id,
                     r->runs[i].name, r->runs[i].parent_run, r->runs[i].parent_step);
        else
            snprintf(labels[k], sizeof labels[k], "#%ld %.60s", r->runs[i].id, r->runs[i].name);
        ser[k] = (PlotSeries){labels[k], cur[k].x, cur[k].y, cur[k].n, NULL, NULL, &cur[k].nf};
        if (cur[k].n < cur[k].n_all && o < (int)sizeof note - 80)
            o += snprintf(note + o, sizeof note - (size_t)o, "%s#%ld %d of its %ld", o ? ", " : "",
                          r->runs[i].id, cur[k].n, cur[k].n_all);
        k++;
    }
    if (k) {
        report_fig_path(r, path, sizeof path);
        PlotAxes ax = {title, "step", ylabel};
        if (plot_curves(path, ser, k, &ax, err) == LM_OK) report_fig_embed(r, path, title);
    }
    if (o) {
        char t[1200];
        snprintf(t, sizeof t, "Decimated: %.1000s points drawn, each of %d columns' first, lowest,"
                 " highest and last (M4, as `plot` draws), so spikes and dips stay; every NaN"
                 " and infinity is marked and counted.", note, PLOT_READ_COLUMNS);
        report_para(r, t);
    }
    for (int i = 0; i < k; i++) plot_read_free(&cur[i]);
}

/* ---- sections ------------------------------------------------------------------------- */

#define REPORT_SERIES_RUNS 8   /* the series table's columns: the best runs */

/* Every series of the registry the runs have (core/base/series.h): the best run's as a
 * grid of small charts (the figure `plot ID series=PATTERN` draws), then a table of each
 * series' number per run (its aggregation: "val_loss (min)"), names escaped. */
static void section_series(Report *r, const char *pattern)
{
    char err[LM_ERR_LEN], path[1200], cap[SERIES_NAME_LEN * 4 + 96], shown[SERIES_NAME_LEN * 4];
    report_heading(r, 2, "Series", "series");
    if (!r->n) return;
    int n = 0, shown_runs = r->n < REPORT_SERIES_RUNS ? r->n : REPORT_SERIES_RUNS;
    report_fig_path(r, path, sizeof path);
    snprintf(cap, sizeof cap, "every series of run #%ld matching %s, against step",
             r->runs[0].id, series_escape(shown, sizeof shown, pattern));
    int dec = 0;
    if (cmd_plot_grid_file(r->st, r->runs[0].id, pattern, path, cap, &n, &dec, err) == LM_OK) {
        report_fig_embed(r, path, cap);
        char t[160];
        snprintf(t, sizeof t, "Decimated: %d of these %d series are drawn from part of their"
                 " points, as the curves above.", dec, n);
        if (dec) report_para(r, t);
    } else
        report_para(r, err);   /* a pattern that matches nothing says so */
    long ids[REPORT_SERIES_RUNS];
    char (*names)[SERIES_NAME_LEN] = NULL, v[64];
    int nn = 0;
    for (int i = 0; i < shown_runs; i++) ids[i] = r->runs[i].id;
    if (runstore_series_union(r->st, ids, shown_runs, &names, &nn, err)) return;
    report_puts(&r->b, r->md ? "| series | unit |" : "<table class=\"runs\" id=\"series-table\">"
                "<thead><tr><th>series</th><th>unit</th>");
    for (int i = 0; i < shown_runs; i++) {
        snprintf(v, sizeof v, "#%ld", ids[i]);
        report_puts(&r->b, r->md ? " " : "<th>");
        report_esc(r, v);
        report_puts(&r->b, r->md ? " |" : "</th>");
    }
    if (r->md) {
        report_puts(&r->b, "\n|---|---|");
        for (int i = 0; i < shown_runs; i++) report_puts(&r->b, "---|");
    }
    report_puts(&r->b, r->md ? "\n" : "</tr></thead><tbody>\n");
    for (int k = 0; k < nn; k++) {
        SeriesRef ref;
        if (series_find(names[k], &ref, NULL) || !series_match(pattern, names[k])) continue;
        snprintf(cap, sizeof cap, "%s (%s)", series_escape(shown, sizeof shown, names[k]),
                 series_agg_name(ref.info->agg));
        report_puts(&r->b, r->md ? "|" : "<tr>");
        report_cell(r, cap);
        report_cell(r, ref.info->unit[0] ? ref.info->unit : "-");
        for (int i = 0; i < shown_runs; i++) {
            double x = NAN;
            runstore_series_summary(r->st, ids[i], names[k], &x, NULL);
            if (isnan(x)) snprintf(v, sizeof v, "-");
            else snprintf(v, sizeof v, "%.6g", x);
            report_cell(r, v);
        }
        report_puts(&r->b, r->md ? "\n" : "</tr>\n");
    }
    report_puts(&r->b, r->md ? "\n" : "</tbody></table>\n");
    free(names);
}

static void section_machine(Report *r)
{
    char d[512], t[32];
    sysinfo_describe(d, sizeof d);
    cmd_log_fmt_time(t, sizeof t, sysinfo_wall(), 1);
    if (!r->md)
        report_puts(&r->b, "<table class=\"facts\" id=\"machine\">");
    else
        report_puts(&r->b, "| fact | value |\n|---|---|\n");
    const char *rows[][2] = {{"report written", t}, {"lmlab", sysinfo_git_rev()},
                             {"this machine", d}, {"run store", runstore_path(r->st)},
                             {"runs", ""}, {"trained on", r->n ? r->runs[0].machine : "-"}};
    char nruns[32];
    snprintf(nruns, sizeof nruns, "%d", r->n);
    rows[4][1] = nruns;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        report_puts(&r->b, r->md ? "| " : "<tr><th>");
        report_esc(r, rows[i][0]);
        report_puts(&r->b, r->md ? " | " : "</th><td>");
        report_esc(r, rows[i][1]);
        report_puts(&r->b, r->md ? " |\n" : "</td></tr>\n");
    }
    if (!r->md) report_puts(&r->b, "</table>\n");
}

/* The config keys whose values differ among the runs (at most REPORT_MAX_COLS). */
static int differing_keys(Report *r, char keys[][32])
{
    int nk = 0;
    if (!r->n) return 0;
    char a[256], b[256];
    for (const char *p = r->runs[0].config; p && *p && nk < REPORT_MAX_COLS;) {
        const char *nl = strchr(p, '\n'), *eq = strchr(p, '=');
        if (eq && (!nl || eq < nl) && eq - p < 32) {
            snprintf(keys[nk], 32, "%.*s", (int)(eq - p), p);
            runstore_config_value(r->runs[0].config, keys[nk], a, sizeof a);
            int diff = 0;
            for (int i = 1; i < r->n && !diff; i++) {
                runstore_config_value(r->runs[i].config, keys[nk], b, sizeof b);
                diff = strcmp(a, b) != 0;
            }
            if (diff && strcmp(keys[nk], "name") && strcmp(keys[nk], "seed_note")) nk++;
        }
        p = nl ? nl + 1 : NULL;
    }
    return nk;
}

static void section_runs(Report *r)
{
    char keys[REPORT_MAX_COLS][32], v[256];
    int nk = differing_keys(r, keys);
    report_heading(r, 2, "Runs", "runs");
    snprintf(v, sizeof v, "%d runs, best first; the settings that differ between them (%d):",
             r->n, nk);
    report_para(r, v);
    /* "from": a fork's lineage, its parent and the step it forked at (issue 49 item 11) */
    static const char *const FIXED[] = {"id", "name", "model", "status", "steps", "best val",
                                        "final val", "cpu % mean", "rss MiB peak", "load mean",
                                        "from"};
    enum { NF = sizeof FIXED / sizeof *FIXED };
    report_puts(&r->b, r->md ? "|" : "<table class=\"runs\" id=\"runs-table\"><thead><tr>");
    for (int i = 0; i < NF + nk; i++) {
        report_puts(&r->b, r->md ? " " : "<th>");
        report_esc(r, i < NF ? FIXED[i] : keys[i - NF]);
        report_puts(&r->b, r->md ? " |" : "</th>");
    }
    if (r->md) {
        report_puts(&r->b, "\n|");
        for (int i = 0; i < NF + nk; i++) report_puts(&r->b, "---|");
    }
    report_puts(&r->b, r->md ? "\n" : "</tr></thead><tbody>\n");
    char err[LM_ERR_LEN];
    int est = 0;
    for (int i = 0; i < r->n; i++) {
        const RunRow *w = &r->runs[i];
        SysSummary m;
        if (runstore_sys_summary(r->st, w->id, &m, err)) m.n = 0;
        report_puts(&r->b, r->md ? "|" : "<tr>");
        char f[10][48];
        snprintf(f[0], 48, "%ld", w->id);
        snprintf(f[4], 48, "%ld", w->last_step);
        snprintf(f[5], 48, isnan(w->best_val) ? "-" : "%s%.4f",   /* ~: as `runs` marks it */
                 runstore_best_estimated(w) ? "~" : "", w->best_val);
        est |= !isnan(w->best_val) && runstore_best_estimated(w);
        snprintf(f[6], 48, isnan(w->final_val) ? "-" : "%.4f", w->final_val);
        snprintf(f[7], 48, m.n ? "%.0f" : "-", m.cpu_mean);
        snprintf(f[8], 48, m.n ? "%.0f" : "-", m.rss_peak);
        snprintf(f[9], 48, m.n ? "%.2f" : "-", m.load_mean);
        char from[64] = "-";
        if (w->parent_run > 0)
            snprintf(from, sizeof from, "fork of #%ld at step %ld", w->parent_run,
                     w->parent_step);
        const char *c[NF] = {f[0], w->name, w->model, w->status, f[4], f[5], f[6], f[7], f[8],
                             f[9], from};
        for (int j = 0; j < NF; j++) report_cell(r, c[j]);
        for (int j = 0; j < nk; j++) {
            runstore_config_value(w->config, keys[j], v, sizeof v);
            report_cell(r, v);
        }
        report_puts(&r->b, r->md ? "\n" : "</tr>\n");
    }
    if (!r->md) report_puts(&r->b, "</tbody></table>\n");
    if (est)
        report_para(r, "~ best val is an estimate over eval_batches batches, not a whole-split "
                       "evaluation; final val of a finished run is whole-split.");
}

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

static void section_samples(Report *r)
{
    if (!r->n) return;
    SampleRow *sm = NULL;
    int n = 0;
    char err[LM_ERR_LEN], t[160];
    if (runstore_samples(r->st, r->runs[0].id, &sm, &n, err) || !n) return;
    snprintf(t, sizeof t, "Samples of the best run (#%ld)", r->runs[0].id);
    report_heading(r, 2, t, "samples");
    for (int i = n > 3 ? n - 3 : 0; i < n; i++) {
        snprintf(t, sizeof t, "step %ld", sm[i].step);
        report_puts(&r->b, r->md ? "**" : "<div class=\"sample\"><b>");
        report_esc(r, t);
        report_puts(&r->b, r->md ? "**\n\n> " : "</b><pre>");
        report_esc(r, sm[i].text);
        report_puts(&r->b, r->md ? "\n\n" : "</pre></div>\n");
    }
    runstore_samples_free(sm, n);
}

static void section_notes(Report *r)
{
    NoteRow *nt = NULL;
    int n = 0, shown = 0;
    char err[LM_ERR_LEN], t[32], who[64];
    if (runstore_notes(r->st, 0, 0, &nt, &n, err)) return;
    report_heading(r, 2, "Notes", "notes");
    if (!r->md) report_puts(&r->b, "<ul class=\"notes\">\n");
    for (int i = 0; i < n; i++) {
        int in = nt[i].sweep_id && nt[i].sweep_id == r->sweep;
        for (int j = 0; j < r->n && !in; j++) in = r->runs[j].id == nt[i].run_id;
        if (!in) continue;
        shown++;
        cmd_log_fmt_time(t, sizeof t, nt[i].t, 1);
        snprintf(who, sizeof who, "%s %ld", nt[i].run_id ? "run" : "sweep",
                 nt[i].run_id ? nt[i].run_id : nt[i].sweep_id);
        report_puts(&r->b, r->md ? "- **" : "<li><b>");
        report_esc(r, who);
        report_puts(&r->b, r->md ? "** " : "</b> <span class=\"when\">");
        report_esc(r, t);
        report_puts(&r->b, r->md ? ": " : "</span>: ");
        report_esc(r, nt[i].text);
        report_puts(&r->b, r->md ? "\n" : "</li>\n");
    }
    if (!r->md) report_puts(&r->b, "</ul>\n");
    if (!shown) report_para(r, "none");
    runstore_notes_free(nt, n);
}

/* What the console of run has that the tail l[0..] leaves out, said in one paragraph:
 * lines the store cut (its cap) and older lines this report does not show. */
static void console_cut_note(Report *r, long run, const ConsoleLine *l, long cut)
{
    char t[400];
    int o = 0;
    if (cut < 0) {   /* numbers with a gap: count nothing that is not there */
        snprintf(t, sizeof t, "This console's line numbers have a gap (a line was numbered"
                 " out of order in the store), so whether lines were cut is not known; this"
                 " report shows its newest %d lines, `lmlab log %ld` prints every kept line.",
                 REPORT_CONSOLE_TAIL, run);
        report_para(r, t);
        return;
    }
    if (cut > 0)
        o += snprintf(t + o, sizeof t - (size_t)o, "The store cut the first %ld line%s of"
                      " this console (it keeps the newest %d lines of a run). ", cut,
                      cut == 1 ? "" : "s", RUNSTORE_CONSOLE_MAX_LINES);
    if (l[0].seq - 1 > cut)
        snprintf(t + o, sizeof t - (size_t)o, "Lines %ld to %ld are left out of this report"
                 " (it shows the newest %d): `lmlab log %ld` prints them.", cut + 1,
                 l[0].seq - 1, REPORT_CONSOLE_TAIL, run);
    if (cut > 0 || l[0].seq - 1 > cut) report_para(r, t);
}

/* The newest REPORT_CONSOLE_TAIL console lines of each of the best REPORT_CONSOLE_RUNS runs
 * (r->runs is sorted by best), stored text escaped; what is left out is said. */
static void section_console(Report *r)
{
    if (!r->n) return;
    int k_max = r->n < REPORT_CONSOLE_RUNS ? r->n : REPORT_CONSOLE_RUNS;
    char err[LM_ERR_LEN], t[160], id[32], when[32];
    report_heading(r, 2, k_max > 1 ? "Console of the best runs" : "Console", "console");
    for (int k = 0; k < k_max; k++) {
        const RunRow *run = &r->runs[k];
        ConsoleLine *l = NULL;
        int n = 0;
        long cut = 0;
        snprintf(t, sizeof t, "run #%ld %s", run->id, run->name);
        snprintf(id, sizeof id, "console-%ld", run->id);
        report_heading(r, 3, t, id);
        if (runstore_console_read(r->st, run->id, 0, REPORT_CONSOLE_TAIL, &l, &n, &cut, err)) {
            report_para(r, err);
            continue;
        }
        if (!n) report_para(r, "empty (runs recorded before lmlab kept consoles have none)");
        else console_cut_note(r, run->id, l, cut);
        if (n && !r->md) report_puts(&r->b, "<pre class=\"console\">");
        for (int i = 0; i < n; i++) {
            cmd_log_fmt_time(when, sizeof when, l[i].t, 0);
            snprintf(t, sizeof t, "%s %-8s ", when, l[i].kind);
            report_puts(&r->b, r->md ? "- `" : "<span class=\"when\">");
            if (r->md) report_puts(&r->b, when), report_puts(&r->b, "` ");
            report_esc(r, r->md ? l[i].kind : t);   /* kind: stored text */
            report_puts(&r->b, r->md ? ": " : "</span>");
            report_esc(r, l[i].text);
            report_puts(&r->b, "\n");
        }
        if (n && !r->md) report_puts(&r->b, "</pre>\n");
        else if (n) report_puts(&r->b, "\n");
        runstore_console_free(l, n);
    }
    if (r->n > k_max) {
        snprintf(t, sizeof t, "The consoles of the other %d runs are not in this report:"
                 " `lmlab log ID` prints one.", r->n - k_max);
        report_para(r, t);
    }
}

static const char CSS[] =
    "<style>body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;"
    "padding:0 1em;color:#222}table{border-collapse:collapse;margin:1em 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f3f3f3}"
    "tbody tr:nth-child(even){background:#fafafa}img.plot{max-width:100%;border:1px solid #eee}"
    "figure{margin:1em 0}figcaption{color:#555;font-size:12px}pre{white-space:pre-wrap;"
    "background:#f7f7f7;padding:.6em;border-radius:4px}.when{color:#777}"
    "pre.console{font-size:12px}</style>\n";

static void write_doc(Report *r, const char *title, const char *series)
{
    if (r->md) {
        report_puts(&r->b, "# ");
        report_esc(r, title);
        report_puts(&r->b, "\n\n");
    } else {
        report_puts(&r->b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"generator\" content=\"lmlab report\"><title>");
        report_esc(r, title);
        report_puts(&r->b, "</title>\n");
        report_put(&r->b, CSS, sizeof CSS - 1);
        report_puts(&r->b, "</head><body>\n<h1 id=\"title\">");
        report_esc(r, title);
        report_puts(&r->b, "</h1>\n");
    }
    section_machine(r);
    report_heading(r, 2, "Curves", "curves");
    fig_curves(r, "loss", "training loss of the best runs", "train loss");
    fig_curves(r, "val_loss", "validation loss of the best runs", "val loss");
    section_runs(r);
    section_series(r, series);
    section_groups(r);
    section_sweep(r);
    section_samples(r);
    section_notes(r);
    section_console(r);
    if (!r->md) report_puts(&r->b, "</body></html>\n");
}

/* ---- the command ------------------------------------------------------------------------ */

/* Appends rows (taking ownership of their strings; ids already listed are freed). */
static int append_rows(Report *r, RunRow *rows, int n, char *err)
{
    RunRow *q = realloc(r->runs, sizeof *q * (size_t)(r->n + n + 1));
    if (!q) {
        runstore_rows_free(rows, n);
        return err_set(err, LM_ENOMEM, "out of memory");
    }
    r->runs = q;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < r->n && !dup; j++) dup = r->runs[j].id == rows[i].id;
        if (dup) runstore_row_free(&rows[i]);
        else r->runs[r->n++] = rows[i];
    }
    free(rows);
    return LM_OK;
}

/* runs=1,2,5 (ids) or a filter as `runs` takes; sweep=ID adds its runs. */
static int collect(Report *r, const char *runs, char *err)
{
    int status = LM_OK, n = 0;
    RunRow *rows = NULL;
    if (runs && runs[0] && strspn(runs, "0123456789, ") == strlen(runs)) {
        for (const char *p = runs; *p && !status;) {
            long id = strtol(p, NULL, 10);
            p += strcspn(p, ",");
            p += *p == ',';
            if (id <= 0) continue;
            RunRow *one = calloc(1, sizeof *one);
            if (!one) return err_set(err, LM_ENOMEM, "out of memory");
            if ((status = runstore_get(r->st, id, one, err))) free(one);
            else status = append_rows(r, one, 1, err);
        }
    } else if (runs) {
        char filter[512];
        snprintf(filter, sizeof filter, "%s", runs);
        if (!(status = runstore_list(r->st, filter, "best", 0, &rows, &n, err)))
            status = append_rows(r, rows, n, err);
    }
    if (!status && r->sweep > 0) {
        char filter[64];
        SweepRow sw;
        if ((status = runstore_sweep_get(r->st, r->sweep, &sw, err))) return status;
        free(sw.spec);
        snprintf(filter, sizeof filter, "sweep=%ld", r->sweep);
        if (!(status = runstore_list(r->st, filter, "best", 0, &rows, &n, err)))
            status = append_rows(r, rows, n, err);
    }
    if (!status && r->n == 0)
        status = err_set(err, LM_EARG, "no run matches: `runs` lists them (runs=1,2,3 or"
                         " runs=\"model=msa\" or sweep=ID)");
    if (!status) qsort(r->runs, (size_t)r->n, sizeof *r->runs, by_best);
    return status;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n > k && !strcasecmp(s + n - k, suf);
}

/* Whether path may receive the report (issue 46 item 11): a symbolic link never (a
 * report never writes through one); an existing file or folder only with overwrite=true,
 * *existed set. LM_OK or LM_EARG with what to do. */
static int check_target(const char *path, int folder, int overwrite, int *existed, char *err)
{
    struct stat sb;
    *existed = 0;
    if (lstat(path, &sb)) return LM_OK;
    if (S_ISLNK(sb.st_mode)) {
        char to[512];
        ssize_t k = readlink(path, to, sizeof to - 1);
        to[k > 0 ? k : 0] = 0;
        return err_set(err, LM_EARG, "%s is a symbolic link (to %s): a report never writes"
                       " through a link; name another file, or remove the link", path, to);
    }
    if (folder && !S_ISDIR(sb.st_mode))
        return err_set(err, LM_EARG, "%s exists and is not a folder: the report's images go"
                       " there; move it away", path);
    if (!folder && S_ISDIR(sb.st_mode))
        return err_set(err, LM_EARG, "%s is a folder; name a file", path);
    *existed = S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode);
    if (*existed && !overwrite)
        return err_set(err, LM_EARG, "%s exists; add overwrite=true to replace it (or name"
                       " another file)", path);
    return LM_OK;
}

/* md: NAME_files/ beside the report (created); html: a private temporary folder. */
static int prepare_dirs(Report *r, const char *file, int overwrite, char *err)
{
    if (!r->md) {
        const char *tmp = getenv("TMPDIR");
        snprintf(r->tmpdir, sizeof r->tmpdir, "%s/lmlab-report-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        return mkdtemp(r->tmpdir) ? LM_OK : err_set(err, LM_EIO, "cannot make a temporary folder"
                                                    " in %s", tmp && *tmp ? tmp : "/tmp");
    }
    snprintf(r->files_dir, sizeof r->files_dir, "%.*s_files", (int)(strlen(file) - 3), file);
    const char *base = strrchr(r->files_dir, '/');
    snprintf(r->files_rel, sizeof r->files_rel, "%s", base ? base + 1 : r->files_dir);
    int existed = 0, status = check_target(r->files_dir, 1, overwrite, &existed, err);
    if (status) return status;
    if (mkdir(r->files_dir, 0777) && errno != EEXIST)
        return err_set(err, LM_EIO, "cannot create %s for the report's images: %s", r->files_dir,
                       strerror(errno));
    return LM_OK;
}

int cmd_report(Session *s, int argc, const LexWord *argv)
{
    const char *runs = NULL, *file = NULL, *title = NULL, *series = "*";
    int overwrite = 0, existed = 0;
    Report r = {.s = s};
    for (int i = 1; i < argc; i++) {
        const LexWord *w = &argv[i];
        if (w->key && !strcmp(w->key, "runs")) runs = w->value;
        else if (w->key && !strcmp(w->key, "file")) file = w->value;
        else if (w->key && !strcmp(w->key, "title")) title = w->value;
        else if (w->key && !strcmp(w->key, "overwrite") &&
                 (!strcmp(w->value, "true") || !strcmp(w->value, "false")))
            overwrite = !strcmp(w->value, "true");
        else if (w->key && !strcmp(w->key, "series")) series = w->value;
        else if (w->key && !strcmp(w->key, "sweep") && (r.sweep = session_parse_run_id(w->value)) > 0) {}
        else
            return session_error(s, LM_EARG, "report takes runs=ID,ID,...|\"FILTER\", sweep=ID,"
                                 " title=\"...\", series=PATTERN, file=NAME.html|NAME.md and"
                                 " overwrite=true|false, not '%s'", w->text);
    }
    {
        char perr[LM_ERR_LEN];
        if (series_pattern_check(series, perr))
            return session_error(s, LM_EARG, "series=: %s", perr);
    }
    if (!file || !(ends_with(file, ".html") || ends_with(file, ".htm") || ends_with(file, ".md")))
        return session_error(s, LM_EARG, "report needs file=NAME.html (one self-contained file)"
                             " or file=NAME.md (Markdown with images beside it)");
    if (!runs && r.sweep <= 0)
        return session_error(s, LM_EARG, "report needs runs=ID,ID,... (or runs=\"FILTER\", as"
                             " `runs` takes) or sweep=ID");
    r.md = ends_with(file, ".md");
    if (!(r.st = session_store(s))) return LM_EDB;
    char err[LM_ERR_LEN], deftitle[160];
    double t0 = sysinfo_now();
    int status = check_target(file, 0, overwrite, &existed, err);
    if (!status) status = collect(&r, runs, err);
    if (!status) status = prepare_dirs(&r, file, overwrite, err);
    if (!status) {
        snprintf(deftitle, sizeof deftitle, "lmlab report: %d run%s%s", r.n, r.n == 1 ? "" : "s",
                 r.sweep > 0 ? " of a sweep" : "");
        write_doc(&r, title ? title : deftitle, series);
        if (r.b.oom) status = err_set(err, LM_ENOMEM, "out of memory writing the report");
    }
    OutFile o;
    if (!status && !(status = outfile_open(&o, file, err))) {
        if (outfile_write(&o, r.b.p, r.b.n)) {
            outfile_abort(&o);
            status = err_set(err, LM_EIO, "cannot write %s: %s", file, strerror(errno));
        } else {
            status = outfile_commit(&o, file, err);
        }
    }
    if (r.tmpdir[0]) rmdir(r.tmpdir);
    runstore_rows_free(r.runs, r.n);
    double dt = sysinfo_now() - t0;
    if (!status && s->json)
        session_emit_json(s, json_pack("{s:b s:s s:i s:i s:I s:f s:s}", "ok", 1, "file", file,
                                       "runs", r.n, "figures", r.n_fig, "bytes",
                                       (json_int_t)r.b.n, "seconds", dt, "format",
                                       r.md ? "markdown" : "html"));
    else if (!status)
        session_printf(s, "wrote %s%s: %d run%s, %d figure%s, %.1f KiB in %.2f s%s%s", file,
                       existed ? " (replaced the old one)" : "", r.n, r.n == 1 ? "" : "s",
                       r.n_fig, r.n_fig == 1 ? "" : "s", r.b.n / 1024.0, dt,
                       r.md ? "; images in " : "", r.md ? r.files_dir : "");
    free(r.b.p);
    return status ? session_error(s, status, "%s", err) : LM_OK;
}
