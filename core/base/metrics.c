/* metrics.c — the per-step metrics of metrics.def as a table (names, kinds, digits, help)
 * and by position, so the store, the export and the commands loop over them instead of
 * naming each one. Not the records' storage (core/store) nor their producer (core/train). */
#include "metrics.h"

#include <math.h>
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
