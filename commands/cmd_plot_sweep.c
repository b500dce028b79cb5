/* cmd_plot_sweep.c — `plot sweep ID file=par.png`: a sweep's trials as parallel
 * coordinates. The axes and each value's place on them come from
 * core/sweep/sweep_analysis.c (log axes where a setting spans more than 20x, categorical
 * settings evenly spaced), the metric is the sweep's own (best_val or final_val of done
 * trials), the drawing is plot/plot_parallel.c. */
#include "cmd_plot.h"
#include "cmd_analysis.h"

#include "err.h"
#include "plot.h"
#include "sweep_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PS_TICKS 8

typedef struct {
    char label[SWEEP_MAX_PARAMS + 1][48];
    char text[SWEEP_MAX_PARAMS + 1][PS_TICKS][24];
    const char *tl[SWEEP_MAX_PARAMS + 1][PS_TICKS];
    double tp[SWEEP_MAX_PARAMS + 1][PS_TICKS];
} Ticks;

/* Tick positions and labels of one setting's axis: every value when there are few,
 * else its ends and middle. */
static int axis_ticks(const SweepAxis *a, double *pos, char text[][24])
{
    int n = 0;
    if (!a->numeric || a->n_levels <= PS_TICKS) {
        for (int l = 0; l < a->n_levels && n < PS_TICKS; l++) {
            pos[n] = sweep_axis_pos(a, a->levels[l]);
            snprintf(text[n++], 24, "%.23s", a->levels[l]);
        }
        return n;
    }
    double mid = a->log_axis ? sqrt(a->lo * a->hi) : (a->lo + a->hi) / 2, v[3] = {a->lo, mid, a->hi};
    for (int k = 0; k < 3; k++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.3g", v[k]);
        pos[n] = sweep_axis_pos(a, buf);
        snprintf(text[n++], 24, "%.23s", buf);
    }
    return n;
}

int cmd_plot_sweep(Session *s, RunStore *st, long sweep, const char *file, const char *title)
{
    SweepTrialRow *t;
    double *metric;
    int n, final;
    if (cmd_analysis_sweep_metric(s, st, sweep, &t, &metric, &n, &final)) return LM_EARG;
    const char **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    SweepAxis axes[SWEEP_MAX_PARAMS];
    int na = 0, status = LM_OK;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; p && i < n; i++) {
        p[i] = t[i].params;
        if (isfinite(metric[i])) lo = fmin(lo, metric[i]), hi = fmax(hi, metric[i]);
    }
    if (p) na = sweep_axes(p, n, axes, SWEEP_MAX_PARAMS);
    const char *mname = final ? "final_val" : "best_val";
    if (!p) status = session_error(s, LM_ENOMEM, "out of memory");
    else if (na == 0 || !isfinite(lo))
        status = session_error(s, LM_EARG, "sweep %ld has %s: nothing to draw yet", sweep,
                               na == 0 ? "no swept setting" : "no finished trial");
    Ticks *tk = calloc(1, sizeof *tk);
    double *pos = malloc((size_t)(n ? n : 1) * (size_t)(na + 1) * sizeof *pos);
    if (!status && (!tk || !pos)) status = session_error(s, LM_ENOMEM, "out of memory");
    PlotParAxis pa[SWEEP_MAX_PARAMS + 1];
    for (int k = 0; !status && k <= na; k++) {
        int nt;
        if (k < na) {
            nt = axis_ticks(&axes[k], tk->tp[k], tk->text[k]);
            snprintf(tk->label[k], sizeof tk->label[k], "%.31s%s", axes[k].key,
                     axes[k].log_axis ? " (log)" : "");
        } else {
            nt = 3;
            for (int j = 0; j < 3; j++) {
                tk->tp[k][j] = j / 2.0;
                snprintf(tk->text[k][j], 24, "%.4f", lo + (hi - lo) * j / 2.0);
            }
            snprintf(tk->label[k], sizeof tk->label[k], "%s", mname);
        }
        for (int j = 0; j < nt; j++) tk->tl[k][j] = tk->text[k][j];
        pa[k] = (PlotParAxis){tk->label[k], nt, tk->tp[k], tk->tl[k]};
    }
    for (int i = 0; !status && i < n; i++) {
        char v[SWEEP_VALUE_LEN];
        for (int k = 0; k < na; k++)
            pos[(size_t)i * (na + 1) + k] = sweep_param_value(t[i].params, axes[k].key, v, sizeof v)
                                             ? sweep_axis_pos(&axes[k], v) : NAN;
        pos[(size_t)i * (na + 1) + na] = hi > lo ? (metric[i] - lo) / (hi - lo) : 0.5;
    }
    char ttl[160], err[LM_ERR_LEN];
    snprintf(ttl, sizeof ttl, "sweep #%ld: %d trials, coloured by %s (lower is better)", sweep,
             n, mname);
    PlotAxes ax = {title ? title : ttl, NULL, NULL};
    if (!status && (status = plot_parallel(file, pa, na + 1, pos, metric, n, lo, hi, mname, &ax,
                                           err)))
        session_error(s, status, "%s", err);
    if (!status && s->json)
        session_emit_json(s, json_pack("{s:b s:s s:I s:i s:i s:s}", "ok", 1, "file", file,
                                       "sweep", (json_int_t)sweep, "trials", n, "axes", na + 1,
                                       "metric", mname));
    else if (!status)
        session_printf(s, "wrote %s: parallel coordinates of sweep %ld (%d trials, %d settings "
                       "+ %s)", file, sweep, n, na, mname);
    free(p), free(t), free(metric), free(tk), free(pos);
    return status;
}
