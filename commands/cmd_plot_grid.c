/* cmd_plot_grid.c — `plot ID series=PATTERN file=F`: every series of one run whose name
 * matches the pattern (gate/..., sys/..., val...: * is any run of bytes; the registry's names, core/base/series.h) as
 * small multiples on one page (plot/plot_grid.c; a histogram series as a heat strip over
 * its steps), and the same figure for the report's
 * grid section. A pattern that matches none of the run's series is refused with the
 * series the run has. And `series [ID] [PATTERN]`: the registry's names, or a run's series
 * with the number each reads as. Not the dashboard's grid (ui/view_grid.c). */
#include "cmd_plot.h"

#include "err.h"
#include "jsonval.h"
#include "plot.h"
#include "plot_read.h"
#include "runstore_series.h"
#include "series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A histogram series as a heat strip of panel p: each step's counts over its largest,
 * its steps as p's x (*heat malloc'd, the caller frees). */
static int heat_of(RunStore *st, long id, const char *name, PlotPanel *p, double **xs,
                   double **heat, char *err)
{
    HistPoint *h = NULL;
    int n = 0, status = runstore_hist_series(st, id, name, &h, &n, err);
    if (status || n == 0) {
        free(h);
        return status;
    }
    double *x = realloc(*xs, (size_t)n * sizeof *x);
    if (x) *xs = x;
    *heat = malloc((size_t)n * SERIES_HIST_BINS * sizeof **heat);
    if (!x || !*heat) {
        free(h);
        return err_set(err, LM_ENOMEM, "out of memory plotting");
    }
    for (int i = 0; i < n; i++) {
        long top = 0;
        for (int b = 0; b < SERIES_HIST_BINS; b++) top = h[i].h.counts[b] > top ? h[i].h.counts[b] : top;
        for (int b = 0; b < SERIES_HIST_BINS; b++)
            (*heat)[(long)i * SERIES_HIST_BINS + b] = top ? (double)h[i].h.counts[b] / top : NAN;
        x[i] = (double)h[i].step;
    }
    p->x = x;
    p->n = n;
    p->heat = *heat;
    p->heat_rows = SERIES_HIST_BINS;
    free(h);
    return LM_OK;
}

int cmd_plot_grid_draw(RunStore *st, long id, char (*names)[SERIES_NAME_LEN], PlotCurve *c,
                       int n, const char *path, const char *title, int *n_decimated, char *err)
{
    char shown[SERIES_NAME_LEN * 4];
    int dec = 0, status = LM_OK;
    if (n_decimated) *n_decimated = 0;
    PlotPanel *p = calloc((size_t)n + 1, sizeof *p);
    char (*titles)[SERIES_NAME_LEN * 4] = calloc((size_t)n + 1, sizeof *titles);
    double **heats = calloc((size_t)n + 1, sizeof *heats);
    if (!p || !titles || !heats) status = err_set(err, LM_ENOMEM, "out of memory plotting");
    for (int k = 0; !status && k < n; k++) {
        dec += c[k].n < c[k].n_all;   /* read decimated (M4): the grid draws no more */
        SeriesRef ref;
        series_find(names[k], &ref, NULL);
        snprintf(titles[k], sizeof titles[k], "%s%s%s%s",
                 series_escape(shown, sizeof shown, names[k]), ref.info && ref.info->unit[0]
                 ? " (" : "", ref.info ? ref.info->unit : "", ref.info && ref.info->unit[0]
                 ? ")" : "");
        p[k] = (PlotPanel){.title = titles[k], .x = c[k].x, .y = c[k].y, .n = c[k].n};
        if (ref.info && ref.info->kind == SERIES_KIND_HIST)   /* a heat strip over the steps */
            status = heat_of(st, id, names[k], &p[k], &c[k].x, &heats[k], err);
    }
    if (!status) status = plot_grid(path, p, n, title, err);
    if (!status && n_decimated) *n_decimated = dec;
    for (int k = 0; heats && k < n; k++) free(heats[k]);
    free(p), free(titles), free(heats);
    return status;
}

int cmd_plot_grid_file(RunStore *st, long id, const char *pattern, const char *path,
                       const char *title, int *n_series, int *n_decimated, char *err)
{
    char (*names)[SERIES_NAME_LEN] = NULL;
    int n = 0, status = runstore_series_list(st, id, pattern, &names, &n, err);
    *n_series = 0;
    if (n_decimated) *n_decimated = 0;
    if (status) return status;
    PlotCurve *c = calloc((size_t)n + 1, sizeof *c);
    const char **ptr = calloc((size_t)n + 1, sizeof *ptr);
    if (!c || !ptr) status = err_set(err, LM_ENOMEM, "out of memory plotting");
    for (int k = 0; !status && k < n; k++) ptr[k] = names[k];
    if (!status) status = plot_read_many(st, id, ptr, n, c, err);   /* the rows once */
    if (!status) status = cmd_plot_grid_draw(st, id, names, c, n, path, title, n_decimated, err);
    if (!status) *n_series = n;
    for (int k = 0; c && k < n; k++) plot_read_free(&c[k]);
    free(c), free(ptr), free(names);
    return status;
}

/* One registry entry as a line or a JSON object. */
static void print_info(Session *s, const SeriesEntry *i)
{
    if (s->json) {
        session_emit_json(s, json_pack("{s:s s:s s:s s:s s:s s:b s:s}", "name", i->name,
                                       "aliases", i->aliases, "unit", i->unit, "kind",
                                       series_kind_name(i->kind), "agg", series_agg_name(i->agg),
                                       "family", i->family, "help", i->help));
        return;
    }
    session_printf(s, "%-18s %-16s %-11s %-15s %-5s %s", i->name, i->aliases[0] ? i->aliases
                   : "-", i->unit[0] ? i->unit : "-", series_kind_name(i->kind),
                   series_agg_name(i->agg), i->help);
}

/* A run's series matching pattern (NULL: all) with each one's number. */
static int print_run(Session *s, RunStore *st, long id, const char *pattern)
{
    char err[LM_ERR_LEN], shown[SERIES_NAME_LEN * 4];
    char (*names)[SERIES_NAME_LEN] = NULL;
    int n = 0, status = runstore_series_list(st, id, pattern, &names, &n, err);
    if (status) return session_error(s, status, "%s", err);
    if (!s->json)
        session_printf(s, "%-24s %-14s %-15s %-5s %s", "series", "value", "kind", "agg", "unit");
    for (int k = 0; k < n; k++) {
        SeriesRef ref;
        double v = NAN;
        series_find(names[k], &ref, NULL);
        runstore_series_summary(st, id, names[k], &v, err);
        if (s->json)
            session_emit_json(s, json_pack("{s:I s:s s:o s:s s:s s:s}", "run", (json_int_t)id,
                                           "name", names[k], "value", jsonval_num(v),
                                           "kind", series_kind_name(ref.info->kind),
                                           "agg", series_agg_name(ref.info->agg), "unit",
                                           ref.info->unit));
        else
            session_printf(s, "%-24s %-14.6g %-15s %-5s %s", series_escape(shown, sizeof shown,
                           names[k]), v, series_kind_name(ref.info->kind),
                           series_agg_name(ref.info->agg), ref.info->unit);
    }
    free(names);
    return LM_OK;
}

int cmd_series(Session *s, int argc, const LexWord *argv)
{
    long id = 0;
    const char *pattern = NULL;
    char err[LM_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        if (argv[i].key)
            return session_error(s, LM_EARG, "series takes no settings: `series [RUN_ID] "
                                 "[PATTERN]`");
        if (!id && !pattern && session_parse_run_id(argv[i].text) > 0)
            id = session_parse_run_id(argv[i].text);
        else if (!pattern)
            pattern = argv[i].text;
        else
            return session_error(s, LM_EARG, "series takes one run id and one pattern, e.g. "
                                 "`series 3 'gate/*'`");
    }
    if (pattern && series_pattern_check(pattern, err)) return session_error(s, LM_EARG, "%s", err);
    if (id) {
        RunStore *st = session_store(s);
        return st ? print_run(s, st, id, pattern) : LM_EDB;
    }
    if (!s->json)
        session_printf(s, "%-18s %-16s %-11s %-15s %-5s %s", "name", "aliases", "unit", "kind",
                       "agg", "help");
    int shown = 0;
    for (int i = 0; i < series_count(); i++)
        if (!pattern || series_match(pattern, series_info(i)->name))
            print_info(s, series_info(i)), shown++;
    if (!shown)
        return session_error(s, LM_EARG, "no series name matches '%s' (`series` lists them)",
                             pattern);
    return LM_OK;
}
