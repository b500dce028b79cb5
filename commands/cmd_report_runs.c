/* cmd_report_runs.c — the report's sections about the runs themselves: the machine and
 * versions, the curves of the best runs (read decimated as `plot` draws them), the runs
 * table with the settings that differ, and every named series (the best run's as a grid
 * of small charts, a table of each series' number per run). Not here: seed groups and the
 * sweep (cmd_report_sweep.c), samples, notes and consoles (cmd_report_text.c), the
 * document's primitives (report_doc.c). */
#include "cmd_report.h"
#include "report_doc.h"
#include "cmd_log.h"
#include "cmd_plot.h"
#include "plot.h"
#include "plot_read.h"
#include "series.h"
#include "runrecord.h"
#include "runstore_row.h"
#include "sysinfo.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_MAX_CURVES 10
#define REPORT_MAX_COLS 12

/* The best run's curves, read in one pass over its rows (plot_read_many): its loss and
 * val_loss for the curves' figures and every series of the grid (a 5 M-step run's rows
 * were read once for each of them, eight times). */
typedef struct {
    char (*names)[SERIES_NAME_LEN];   /* the grid's n_grid series, then loss and val_loss
                                         when the grid has not got them */
    int n, n_grid;
    PlotCurve *c;
    int status, list_status;          /* the read's; the grid's list's (a pattern that
                                         matches nothing) */
    char err[LM_ERR_LEN], list_err[LM_ERR_LEN];
} BestCurves;

static void best_read(Report *r, const char *pattern, BestCurves *b)
{
    memset(b, 0, sizeof *b);
    b->status = b->list_status = LM_EARG;
    if (!r->n) return;
    long id = r->runs[0].id;
    char (*grid)[SERIES_NAME_LEN] = NULL;
    int ng = 0;
    b->list_status = runstore_series_list(r->st, id, pattern, &grid, &ng, b->list_err);
    b->names = calloc((size_t)ng + 2, sizeof *b->names);
    b->c = calloc((size_t)ng + 2, sizeof *b->c);
    const char **ptr = calloc((size_t)ng + 2, sizeof *ptr);
    if (!b->names || !b->c || !ptr) {
        b->status = err_set(b->err, LM_ENOMEM, "out of memory reading run %ld", id);
        free(grid), free(ptr);
        return;
    }
    if (ng) memcpy(b->names, grid, (size_t)ng * sizeof *grid);
    b->n = b->n_grid = ng;
    static const char *const CURVES[] = {"loss", "val_loss"};
    for (int i = 0; i < 2; i++) {
        int have = 0;
        for (int k = 0; k < b->n_grid && !have; k++) have = !strcmp(b->names[k], CURVES[i]);
        if (!have) snprintf(b->names[b->n++], SERIES_NAME_LEN, "%s", CURVES[i]);
    }
    for (int k = 0; k < b->n; k++) ptr[k] = b->names[k];
    b->status = plot_read_many(r->st, id, ptr, b->n, b->c, b->err);
    free(grid), free(ptr);
}

/* The best run's curve of metric, NULL when it could not be read. */
static PlotCurve *best_curve(BestCurves *b, const char *metric)
{
    for (int k = 0; !b->status && k < b->n; k++)
        if (!strcmp(b->names[k], metric)) return &b->c[k];
    return NULL;
}

static void best_free(BestCurves *b)
{
    for (int k = 0; b->c && k < b->n; k++) plot_read_free(&b->c[k]);
    free(b->c), free(b->names);
}

/* Curves of metric for the best REPORT_MAX_CURVES runs (r->runs sorted by best), each
 * read decimated as `plot` draws (plot_read.h: M4, spikes, dips and every NaN or infinity
 * kept); a paragraph under the figure says which curves were drawn from part of their
 * points. */
static void fig_curves(Report *r, const char *metric, const char *title, const char *ylabel,
                       BestCurves *best)
{
    PlotSeries ser[REPORT_MAX_CURVES];
    PlotCurve cur[REPORT_MAX_CURVES];
    char labels[REPORT_MAX_CURVES][96], err[LM_ERR_LEN], path[1200], note[1024];
    int k = 0, o = 0, own[REPORT_MAX_CURVES];   /* own: read here (else the best run's) */
    for (int i = 0; i < r->n && k < REPORT_MAX_CURVES; i++) {
        PlotCurve *b = i ? NULL : best_curve(best, metric);
        own[k] = !b;
        if (b) cur[k] = *b;
        else if (plot_read_series(r->st, r->runs[i].id, metric, &cur[k], err)) continue;
        if (!cur[k].n) {
            if (own[k]) plot_read_free(&cur[k]);
            continue;
        }
        char from[48];
        runrecord_fmt_parent(from, sizeof from, &r->runs[i]);
        if (r->runs[i].parent_run > 0)   /* a fork's lineage in its label */
            snprintf(labels[k], sizeof labels[k], "#%ld %.50s (%.24s)", r->runs[i].id,
                     r->runs[i].name, from);
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
    for (int i = 0; i < k; i++)
        if (own[i]) plot_read_free(&cur[i]);
}

#define REPORT_SERIES_RUNS 8   /* the series table's columns: the best runs */

/* Every series of the registry the runs have (core/base/series.h): the best run's as a
 * grid of small charts (the figure `plot ID series=PATTERN` draws), then a table of each
 * series' number per run (its aggregation: "val_loss (min)"), names escaped. */
static void section_series(Report *r, const char *pattern, BestCurves *best)
{
    char err[LM_ERR_LEN], path[1200], cap[SERIES_NAME_LEN * 4 + 96], shown[SERIES_NAME_LEN * 4];
    report_heading(r, 2, "Series", "series");
    if (!r->n) return;
    int n = 0, shown_runs = r->n < REPORT_SERIES_RUNS ? r->n : REPORT_SERIES_RUNS;
    report_fig_path(r, path, sizeof path);
    snprintf(cap, sizeof cap, "every series of run #%ld matching %s, against step",
             r->runs[0].id, series_escape(shown, sizeof shown, pattern));
    int dec = 0, status = best->list_status;
    if (status) snprintf(err, sizeof err, "%s", best->list_err);
    else if ((status = best->status)) snprintf(err, sizeof err, "%s", best->err);
    else if (!(status = cmd_plot_grid_draw(r->st, r->runs[0].id, best->names, best->c,
                                           best->n_grid, path, cap, &dec, err)))
        n = best->n_grid;
    if (status == LM_OK) {
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
        runstore_fmt_best(f[5], 48, w->best_val, runstore_best_estimated(w));   /* ~: as runs */
        est |= !isnan(w->best_val) && runstore_best_estimated(w);
        snprintf(f[6], 48, isnan(w->final_val) ? "-" : "%.4f", w->final_val);
        snprintf(f[7], 48, m.n ? "%.0f" : "-", m.cpu_mean);
        snprintf(f[8], 48, m.n ? "%.0f" : "-", m.rss_peak);
        snprintf(f[9], 48, m.n ? "%.2f" : "-", m.load_mean);
        char from[64] = "-";
        if (w->parent_run > 0)
            snprintf(from, sizeof from, "%s #%ld at step %ld",
                     w->parent_init ? "init_from" : "fork of", w->parent_run, w->parent_step);
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

void cmd_report_write_runs(Report *r, const char *series)
{
    BestCurves best;
    best_read(r, series, &best);
    section_machine(r);
    report_heading(r, 2, "Curves", "curves");
    fig_curves(r, "loss", "training loss of the best runs", "train loss", &best);
    fig_curves(r, "val_loss", "validation loss of the best runs", "val loss", &best);
    section_runs(r);
    section_series(r, series, &best);
    best_free(&best);
}
