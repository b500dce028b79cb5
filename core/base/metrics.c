/* metrics.c — the per-step metrics of metrics.def as a table (names, kinds, digits, help)
 * and by position, so the store, the export and the commands loop over them instead of
 * naming each one; and the 64-bin histogram a named histogram series records
 * (series_hist_fill). Not the records' storage (core/store) nor their producer (core/train). */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_KIND_REAL STEP_REAL
#define STEP_KIND_INT STEP_INT
#define STEP_DIGITS_float 9
#define STEP_DIGITS_double 16
#define STEP_DIGITS_long 16

const StepMetricInfo STEP_METRICS[STEP_METRIC_N] = {
#define STEP_METRIC(name, type, kind, aliases, unit, agg, flags, console, help) \
    {#name, STEP_KIND_##kind, STEP_DIGITS_##type, help},
#include "metrics.def"
#undef STEP_METRIC
};

double step_metric_get(const StepMetric *m, int i)
{
    switch (i) {
#define STEP_METRIC(name, type, kind, ...) case STEP_M_##name: return (double)m->name;
#include "metrics.def"
#undef STEP_METRIC
    }
    return NAN;
}

void step_metric_set(StepMetric *m, int i, double v)
{
    switch (i) {
/* a NaN or infinity never reaches an integer field (that conversion is undefined): 0 */
#define STEP_METRIC(name, type, kind, ...) \
    case STEP_M_##name: m->name = (type)((type)0.5 != 0 || isfinite(v) ? v : 0); break;
#include "metrics.def"
#undef STEP_METRIC
    }
}

int step_metric_find(const char *name)
{
    for (int i = 0; name && i < STEP_METRIC_N; i++)
        if (!strcmp(STEP_METRICS[i].name, name))
            return i;
    return -1;
}

void series_hist_fill(SeriesHist *h, const float *x, long n)
{
    memset(h, 0, sizeof *h);
    double lo = INFINITY, hi = -INFINITY;
    for (long i = 0; i < n; i++) {
        float v = x[i];
        if (isnan(v)) h->n_nan++;
        else if (isinf(v)) v > 0 ? h->n_posinf++ : h->n_neginf++;
        else {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            h->sum += v;
            h->sum_sq += (double)v * v;
            h->num++;
        }
    }
    h->lo = h->num ? lo : NAN;
    h->hi = h->num ? hi : NAN;
    if (!h->num) return;
    double scale = hi > lo ? SERIES_HIST_BINS / (hi - lo) : 0;
    for (long i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        long b = (long)((x[i] - lo) * scale);
        h->counts[b < 0 ? 0 : b >= SERIES_HIST_BINS ? SERIES_HIST_BINS - 1 : b]++;
    }
}

void series_batch_free(SeriesBatch *b)
{
    if (!b) return;
    free(b->scalars);
    free(b->hists);
    free(b);
}

const char *metric_ppl_text(double ppl, char *buf)
{
    if (isnan(ppl)) snprintf(buf, METRIC_PPL_TEXT, "nan");
    else if (isinf(ppl)) snprintf(buf, METRIC_PPL_TEXT, ppl > 0 ? "inf" : "-inf");
    else snprintf(buf, METRIC_PPL_TEXT, fabs(ppl) < 1e6 ? "%.3f" : "%.4g", ppl);
    return buf;
}

double metric_eta(long step, long total, double elapsed, double time_budget)
{
    double left = step > 0 && elapsed > 0 && total > step
                      ? elapsed / (double)step * (double)(total - step)
                      : total > 0 && step >= total ? 0 : NAN;
    if (time_budget > 0 && step > 0) {
        double budget_left = fmax(time_budget - elapsed, 0);
        if (!(left <= budget_left))
            left = budget_left;
    }
    return left;
}
