/* cmd_plot.c — `plot`: figures for papers from the run store. Curves of several runs
 * (a metric against step, tokens or training time, optionally smoothed) with a legend
 * and labelled axes, or one run's gate heatmap (layer x shift, mean gate) at a step.
 * Reads the store and prepares arrays; the drawing is plot/plot.c (cairo). Not here: the
 * dashboard's terminal plots (ui/), or any statistics beyond a moving average. */
#include "cmd_plot.h"
#include "smooth.h"

#include "err.h"
#include "metrics.h"
#include "series.h"
#include "plot.h"
#include "runstore_group.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_MAX_RUNS 16
#define PLOT_MAX_GATE_DIM 64

typedef struct {
    const char *metric, *x, *file, *title, *step, *band, *group, *series;
    int smooth;
    long ids[PLOT_MAX_RUNS];
    int n_ids, gates, sweep;
} PlotArgs;

static const char *key_value(const LexWord *w, const char *key)
{
    return w->key && !strcmp(w->key, key) ? w->value : NULL;
}

static int parse_args(Session *s, int argc, const LexWord *argv, PlotArgs *a)
{
    memset(a, 0, sizeof *a);
    a->metric = "train", a->x = "step", a->smooth = 1;
    for (int i = 1; i < argc; i++) {
        const LexWord *w = &argv[i];
        const char *v;
        if ((v = key_value(w, "metric"))) a->metric = v;
        else if ((v = key_value(w, "x"))) a->x = v;
        else if ((v = key_value(w, "file"))) a->file = v;
        else if ((v = key_value(w, "title"))) a->title = v;
        else if ((v = key_value(w, "step"))) a->step = v;
        else if ((v = key_value(w, "band"))) a->band = v;
        else if ((v = key_value(w, "group"))) a->group = v;
        else if ((v = key_value(w, "series"))) a->series = v;
        else if ((v = key_value(w, "smooth"))) {
            char *end;
            long k = strtol(v, &end, 10);
            if (*end || k < 1 || k > 10000)
                return session_error(s, LM_EARG, "smooth=%s: give a window of 1..10000 points "
                                     "(1 = no smoothing)", v);
            a->smooth = (int)k;
        } else if (w->key) {
            return session_error(s, LM_EARG, "plot has no setting '%s' (metric= x= smooth= "
                                 "title= step= band= group= series= file=)", w->key);
        } else if (i == 1 && !strcmp(w->text, "gates")) {
            a->gates = 1;
        } else if (i == 1 && !strcmp(w->text, "sweep")) {
            a->sweep = 1;
        } else {
            if (a->n_ids == PLOT_MAX_RUNS)
                return session_error(s, LM_EARG, "too many runs (at most %d)", PLOT_MAX_RUNS);
            long id = session_parse_run_id(w->text);
            if (id <= 0)
                return session_error(s, LM_EARG, "run id expected, got '%s' — `runs` lists "
                                     "them", w->text);
            a->ids[a->n_ids++] = id;
        }
    }
    if (!a->file || !*a->file)
        return session_error(s, LM_EARG, "plot needs file=PATH ending in .svg, .png or .pdf, "
                             "e.g. `plot 3 4 file=cmp.png`");
    if (!plot_format_ok(a->file))
        return session_error(s, LM_EARG, "cannot tell the image type from '%s': name it .svg, "
                             ".png or .pdf", a->file);
    if (a->band && strcmp(a->band, "std") && strcmp(a->band, "minmax"))
        return session_error(s, LM_EARG, "band=%s: the band is std (mean ± std) or minmax",
                             a->band);
    if (a->sweep && a->n_ids != 1)
        return session_error(s, LM_EARG, "plot sweep draws one sweep: give its id, e.g. `plot "
                             "sweep 2 file=par.png` (`sweep list` lists them)");
    if (a->group && !a->band) a->band = "std";
    if (a->n_ids == 0 && a->group) return LM_OK;
    if (a->n_ids == 0)
        return session_error(s, LM_EARG, a->gates ? "plot gates needs a run id, e.g. `plot "
                             "gates 3 file=gates.png`" : "plot needs run ids, e.g. `plot 3 4 "
                             "file=cmp.png`; `runs` lists them");
    if (a->series && (a->n_ids != 1 || a->gates || a->sweep || a->band))
        return session_error(s, LM_EARG, "plot ID series=PATTERN draws one run's series as a "
                             "grid: give one run id, e.g. `plot 3 series='gate/*' file=g.png`");
    if (a->gates && a->n_ids > 1)
        return session_error(s, LM_EARG, "plot gates draws one run; give one id");
    if (strcmp(a->x, "step") && strcmp(a->x, "tokens") && strcmp(a->x, "time"))
        return session_error(s, LM_EARG, "x=%s: the x axis is step, tokens or time", a->x);
    return LM_OK;
}

/* The registry's name of metric= (an alias such as train, val or test resolved; an
 * unknown name is left for runstore_series to refuse with its did-you-mean). */
static const char *series_name(const char *metric, char *buf)
{
    SeriesRef ref;
    if (series_find(metric, &ref, NULL)) return metric;
    return strcpy(buf, ref.name);
}

/* The y axis label of a series: its help in the registry. */
static const char *y_label(const char *series)
{
    SeriesRef ref;
    return series_find(series, &ref, NULL) ? series : ref.info->help;
}

/* value at `step` of a step-ordered table, linear between its points (proportional to
 * the step outside them: tokens and time grow with the step). */
static double interp(const SeriesPoint *t, int n, long step)
{
    if (n == 0) return NAN;
    if (step <= t[0].step) return t[0].step > 0 ? t[0].value * step / t[0].step : t[0].value;
    if (step >= t[n - 1].step) return t[n - 1].value * step / (double)t[n - 1].step;
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (t[mid].step <= step) lo = mid;
        else hi = mid;
    }
    double u = (double)(step - t[lo].step) / (double)(t[hi].step - t[lo].step);
    return t[lo].value + u * (t[hi].value - t[lo].value);
}

/* The values, smoothed by the one EMA (core/base/smooth.h) over a span of k points. */
static void smooth_values(const SeriesPoint *p, int n, int k, double *out)
{
    for (int i = 0; i < n; i++)
        out[i] = p[i].value;
    smooth_ema_debiased(out, n, smooth_weight(k), out);
}

typedef struct {
    double *x, *y;
    char label[96];
} RunCurve;

/* Loads one run's curve; reports and returns the status on failure. */
static int load_curve(Session *s, RunStore *st, const PlotArgs *a, long id, RunCurve *c,
                      int *n_points)
{
    char err[LM_ERR_LEN];
    char canon[SERIES_NAME_LEN];
    const char *name = series_name(a->metric, canon);
    SeriesPoint *p = NULL, *xt = NULL;
    int n = 0, nx = 0;
    RunRow r;
    int status = runstore_get(st, id, &r, err);
    if (status) return session_error(s, status, "no run %ld — `runs` lists them", id);
    snprintf(c->label, sizeof c->label, "#%ld %s", id, r.name);
    runstore_row_free(&r);
    if ((status = runstore_series(st, id, name, &p, &n, err)))
        return session_error(s, status, "metric=%s: %s", a->metric, err);
    if (n == 0) {
        free(p);
        return session_error(s, LM_EARG, "run %ld has no %s points yet%s", id, name,
                             strncmp(name, "val", 3) ? "" : " (no evaluation: eval_every=0?)");
    }
    if (strcmp(a->x, "step") && (status = runstore_series(st, id, strcmp(a->x, "tokens")
                                                          ? "elapsed" : "tokens", &xt, &nx, err))) {
        free(p);
        return session_error(s, status, "%s", err);
    }
    c->x = malloc((size_t)n * sizeof *c->x);
    c->y = malloc((size_t)n * sizeof *c->y);
    if (!c->x || !c->y) {
        free(p), free(xt);
        return session_error(s, LM_ENOMEM, "out of memory plotting");
    }
    for (int i = 0; i < n; i++)
        c->x[i] = xt ? interp(xt, nx, p[i].step) : (double)p[i].step;
    smooth_values(p, n, a->smooth, c->y);
    free(p), free(xt);
    *n_points = n;
    return LM_OK;
}

static int plot_runs(Session *s, RunStore *st, const PlotArgs *a)
{
    RunCurve c[PLOT_MAX_RUNS] = {0};
    PlotSeries ps[PLOT_MAX_RUNS];
    int status = LM_OK, points = 0;
    for (int i = 0; i < a->n_ids && !status; i++) {
        int n = 0;
        status = load_curve(s, st, a, a->ids[i], &c[i], &n);
        ps[i] = (PlotSeries){.label = c[i].label, .x = c[i].x, .y = c[i].y, .n = n};
        points += n;
    }
    char title[160], err[LM_ERR_LEN], canon[SERIES_NAME_LEN];
    const char *series = series_name(a->metric, canon);
    const char *xl = !strcmp(a->x, "step") ? "step" : !strcmp(a->x, "tokens")
                     ? "tokens seen" : "training time (s)";
    if (a->smooth > 1) snprintf(title, sizeof title, "%s (EMA over %d points, debiased)",
                                y_label(series), a->smooth);
    else snprintf(title, sizeof title, "%s", y_label(series));
    PlotAxes ax = {a->title ? a->title : title, xl, y_label(series)};
    if (!status && (status = plot_curves(a->file, ps, a->n_ids, &ax, err)))
        session_error(s, status, "%s", err);
    for (int i = 0; i < a->n_ids; i++) free(c[i].x), free(c[i].y);
    if (status) return status;
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:s s:s s:i s:i}", "ok", 1, "file", a->file,
                                       "metric", series, "x", a->x, "runs", a->n_ids, "points",
                                       points));
    else
        session_printf(s, "wrote %s: %s of %d run%s against %s (%d points)", a->file, series,
                       a->n_ids, a->n_ids == 1 ? "" : "s", a->x, points);
    return LM_OK;
}

/* ---- groups as bands ------------------------------------------------------------------ */

#define PLOT_MAX_GROUPS 8

typedef struct {
    char label[128];
    double *x, *mean, *lo, *hi;
    int n;
} Band;

/* Linear value of curve c (n points, x ascending) at x; NaN outside its range. */
static double at_x(const RunCurve *c, int n, double x)
{
    if (n == 0 || x < c->x[0] || x > c->x[n - 1]) return NAN;
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (c->x[mid] <= x) lo = mid;
        else hi = mid;
    }
    if (c->x[hi] == c->x[lo]) return c->y[lo];
    double u = (x - c->x[lo]) / (c->x[hi] - c->x[lo]);
    return c->y[lo] + u * (c->y[hi] - c->y[lo]);
}

/* The band of runs ids (n): on the longest member's x points, the mean of the members
 * that reach each point, with mean ± std (sample) or min..max. */
static int band_of(Session *s, RunStore *st, const PlotArgs *a, const long *ids, int n,
                   const char *name, Band *b)
{
    RunCurve c[PLOT_MAX_RUNS] = {0};
    int np[PLOT_MAX_RUNS] = {0}, status = LM_OK, longest = 0;
    if (n > PLOT_MAX_RUNS) n = PLOT_MAX_RUNS;
    for (int i = 0; i < n && !status; i++) {
        status = load_curve(s, st, a, ids[i], &c[i], &np[i]);
        if (!status && np[i] > np[longest]) longest = i;
    }
    int m = status ? 0 : np[longest];
    b->x = malloc((size_t)(m ? m : 1) * sizeof *b->x);
    b->mean = malloc((size_t)(m ? m : 1) * sizeof *b->mean);
    b->lo = malloc((size_t)(m ? m : 1) * sizeof *b->lo);
    b->hi = malloc((size_t)(m ? m : 1) * sizeof *b->hi);
    if (!status && (!b->x || !b->mean || !b->lo || !b->hi))
        status = session_error(s, LM_ENOMEM, "out of memory plotting");
    for (int j = 0; !status && j < m; j++) {
        double x = c[longest].x[j], v[PLOT_MAX_RUNS], sum = 0, ss = 0, mn = INFINITY, mx = -INFINITY;
        int k = 0;
        for (int i = 0; i < n; i++) {
            double y = at_x(&c[i], np[i], x);
            if (isfinite(y)) v[k++] = y, sum += y, mn = fmin(mn, y), mx = fmax(mx, y);
        }
        double mean = k ? sum / k : NAN;
        for (int i = 0; i < k; i++) ss += (v[i] - mean) * (v[i] - mean);
        double sd = k > 1 ? sqrt(ss / (k - 1)) : 0;
        b->x[j] = x, b->mean[j] = mean;
        b->lo[j] = !strcmp(a->band, "std") ? mean - sd : k ? mn : NAN;
        b->hi[j] = !strcmp(a->band, "std") ? mean + sd : k ? mx : NAN;
    }
    b->n = m;
    snprintf(b->label, sizeof b->label, "%s (N=%d, mean %s)", name, n,
             !strcmp(a->band, "std") ? "± std" : "and min..max");
    for (int i = 0; i < PLOT_MAX_RUNS; i++) free(c[i].x), free(c[i].y);
    return status;
}

/* `plot ... band=std|minmax`: each group=NAME (comma separated) a band, or the given
 * runs as one. */
static int plot_bands(Session *s, RunStore *st, const PlotArgs *a)
{
    Band b[PLOT_MAX_GROUPS];
    memset(b, 0, sizeof b);
    PlotSeries ps[PLOT_MAX_GROUPS];
    int nb = 0, status = LM_OK, runs = 0;
    char err[LM_ERR_LEN], names[512];
    snprintf(names, sizeof names, "%s", a->group ? a->group : "");
    char *save = NULL;
    for (char *g = strtok_r(names, ",", &save); g && !status; g = strtok_r(NULL, ",", &save)) {
        long *ids = NULL;
        int n = 0;
        if (nb == PLOT_MAX_GROUPS)
            status = session_error(s, LM_EARG, "at most %d groups in one plot", PLOT_MAX_GROUPS);
        else if ((status = runstore_group_members(st, g, &ids, &n, err)))
            session_error(s, status, "%s", err);
        else if (!(status = band_of(s, st, a, ids, n, g, &b[nb]))) nb++, runs += n;
        free(ids);
    }
    if (!status && a->n_ids) {
        char name[64];
        snprintf(name, sizeof name, "runs %ld..%ld", a->ids[0], a->ids[a->n_ids - 1]);
        if (nb == PLOT_MAX_GROUPS)
            status = session_error(s, LM_EARG, "at most %d groups in one plot", PLOT_MAX_GROUPS);
        else if (!(status = band_of(s, st, a, a->ids, a->n_ids, name, &b[nb]))) nb++, runs += a->n_ids;
    }
    for (int k = 0; k < nb; k++)
        ps[k] = (PlotSeries){.label = b[k].label, .x = b[k].x, .y = b[k].mean, .n = b[k].n,
                             .lo = b[k].lo, .hi = b[k].hi};
    char title[200], canon[SERIES_NAME_LEN];
    const char *series = series_name(a->metric, canon);
    snprintf(title, sizeof title, "%s: mean of each group, band %s", y_label(series),
             !strcmp(a->band, "std") ? "± 1 std" : "min..max");
    PlotAxes ax = {a->title ? a->title : title, !strcmp(a->x, "step") ? "step"
                   : !strcmp(a->x, "tokens") ? "tokens seen" : "training time (s)", y_label(series)};
    if (!status && (status = plot_curves(a->file, ps, nb, &ax, err)))
        session_error(s, status, "%s", err);
    for (int k = 0; k < PLOT_MAX_GROUPS; k++) free(b[k].x), free(b[k].mean), free(b[k].lo), free(b[k].hi);
    if (status) return status;
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:s s:s s:i s:i}", "ok", 1, "file", a->file,
                                       "metric", series, "band", a->band, "groups", nb, "runs",
                                       runs));
    else
        session_printf(s, "wrote %s: %s of %d group%s (%d runs) as mean with a %s band", a->file,
                       series, nb, nb == 1 ? "" : "s", runs, a->band);
    return LM_OK;
}

/* The mean of every recorded (layer, level) at the last recorded step <= *step (or the
 * last step when *step < 0), into v (layers, levels); *step receives the step drawn. */
static int load_gates(Session *s, RunStore *st, long id, double *v, int *layers, int *levels,
                      long *step)
{
    char err[LM_ERR_LEN];
    GateStat *g[PLOT_MAX_GATE_DIM][PLOT_MAX_GATE_DIM] = {{0}};
    int n[PLOT_MAX_GATE_DIM][PLOT_MAX_GATE_DIM] = {{0}}, status = LM_OK;
    *layers = *levels = 0;
    for (int l = 0; l < PLOT_MAX_GATE_DIM && !status; l++) {
        for (int k = 0; k < PLOT_MAX_GATE_DIM && !status; k++) {
            status = runstore_gate_history(st, id, l, k, &g[l][k], &n[l][k], err);
            if (!status && n[l][k] == 0) break;
            if (l == 0 && !status) *levels = k + 1;
        }
        if (status || n[l][0] == 0) break;
        *layers = l + 1;
    }
    long want = *step, best = -1;
    for (int i = 0; !status && *layers && i < n[0][0]; i++)
        if ((want < 0 || g[0][0][i].step <= want) && g[0][0][i].step > best) best = g[0][0][i].step;
    for (int l = 0; l < *layers; l++)
        for (int k = 0; k < *levels; k++) {
            v[l * *levels + k] = NAN;
            for (int i = 0; i < n[l][k]; i++)
                if (g[l][k][i].step == best) v[l * *levels + k] = g[l][k][i].mean;
        }
    for (int l = 0; l < PLOT_MAX_GATE_DIM; l++)
        for (int k = 0; k < PLOT_MAX_GATE_DIM; k++) free(g[l][k]);
    if (status) return session_error(s, status, "%s", err);
    if (*layers == 0)
        return session_error(s, LM_EARG, "run %ld has no gate statistics (only dispatcher runs "
                             "record them, every eval_every steps)", id);
    if (best < 0)
        return session_error(s, LM_EARG, "run %ld has no gate statistics at or before step %ld",
                             id, want);
    *step = best;
    return LM_OK;
}

static int plot_gates(Session *s, RunStore *st, const PlotArgs *a)
{
    long step = -1;
    if (a->step) {
        char *end;
        step = strtol(a->step, &end, 10);
        if (*end || step < 0)
            return session_error(s, LM_EARG, "step=%s: give a step number", a->step);
    }
    RunRow r;
    char err[LM_ERR_LEN];
    if (runstore_get(st, a->ids[0], &r, err))
        return session_error(s, LM_EARG, "no run %ld — `runs` lists them", a->ids[0]);
    runstore_row_free(&r);
    static double v[PLOT_MAX_GATE_DIM * PLOT_MAX_GATE_DIM];
    int layers, levels;
    if (load_gates(s, st, a->ids[0], v, &layers, &levels, &step)) return LM_EARG;
    char rl[PLOT_MAX_GATE_DIM][16], cl[PLOT_MAX_GATE_DIM][24], title[160];
    const char *rows[PLOT_MAX_GATE_DIM], *cols[PLOT_MAX_GATE_DIM];
    for (int l = 0; l < layers; l++) snprintf(rl[l], sizeof rl[l], "L%d", l), rows[l] = rl[l];
    for (int k = 0; k < levels; k++) snprintf(cl[k], sizeof cl[k], "%ld", 1L << k), cols[k] = cl[k];
    snprintf(title, sizeof title, "run #%ld: mean gate per layer and shift at step %ld",
             a->ids[0], step);
    PlotAxes ax = {a->title ? a->title : title, "shift (tokens back)", "layer"};
    int status = plot_heatmap(a->file, v, layers, levels, 0, 1, rows, cols, &ax, err);
    if (status) return session_error(s, status, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:I s:I s:i s:i}", "ok", 1, "file", a->file,
                                       "run", (json_int_t)a->ids[0], "step", (json_int_t)step,
                                       "layers", layers, "levels", levels));
    else
        session_printf(s, "wrote %s: gates of run %ld at step %ld (%d layers x %d shifts)",
                       a->file, a->ids[0], step, layers, levels);
    return LM_OK;
}

/* `plot ID series=PATTERN file=F`: the run's matching series as a grid. */
static int plot_series_grid(Session *s, RunStore *st, const PlotArgs *a)
{
    char err[LM_ERR_LEN], title[200], shown[SERIES_NAME_LEN * 4];
    int n = 0;
    snprintf(title, sizeof title, "run #%ld: %s", a->ids[0],
             series_escape(shown, sizeof shown, a->series));
    int status = cmd_plot_grid_file(st, a->ids[0], a->series, a->file,
                                    a->title ? a->title : title, &n, NULL, err);
    if (status) return session_error(s, status, "series=%s: %s", shown, err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:I s:s s:i}", "ok", 1, "file", a->file, "run",
                                       (json_int_t)a->ids[0], "series", a->series, "n", n));
    else
        session_printf(s, "wrote %s: %d series of run %ld matching %s", a->file, n, a->ids[0],
                       shown);
    return LM_OK;
}

int cmd_plot(Session *s, int argc, const LexWord *argv)
{
    PlotArgs a;
    if (parse_args(s, argc, argv, &a)) return LM_EARG;
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    if (a.sweep) return cmd_plot_sweep(s, st, a.ids[0], a.file, a.title);
    if (a.band) return plot_bands(s, st, &a);
    if (a.series) return plot_series_grid(s, st, &a);
    return a.gates ? plot_gates(s, st, &a) : plot_runs(s, st, &a);
}
