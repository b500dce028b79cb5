/* alertseen.c — the newest value of every registry series from a run's events (see
 * alertseen.h). Where a value comes from follows the registry's source of the series;
 * no list of series names here. */
#include "alertseen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void alertseen_init(AlertSeen *a)
{
    memset(a, 0, sizeof *a);
    a->best_val = NAN;
}

void alertseen_free(AlertSeen *a)
{
    free(a->named);
    alertseen_init(a);
}

/* The newest diagnostics: every named scalar and each histogram's mean, by name. */
static void keep_named(AlertSeen *a, const SeriesBatch *b)
{
    int n = b->n_scalars + b->n_hists;
    NamedScalar *v = n ? realloc(a->named, (size_t)n * sizeof *v) : a->named;
    if (!v) return;   /* out of memory: the older values stay */
    a->named = v;
    a->n_named = n;
    a->named_step = b->step;
    for (int i = 0; i < b->n_scalars; i++) v[i] = b->scalars[i];
    for (int i = 0; i < b->n_hists; i++) {
        const SeriesHist *h = &b->hists[i].h;
        snprintf(v[b->n_scalars + i].name, sizeof v->name, "%s", b->hists[i].name);
        v[b->n_scalars + i].value = h->num > 0 ? h->sum / (double)h->num : NAN;
    }
}

void alertseen_event(AlertSeen *a, const TrainEvent *ev)
{
    if (ev->kind == TEV_SERIES && ev->series) {
        keep_named(a, ev->series);
        return;
    }
    if (ev->kind == TEV_STEP) {
        a->last = ev->step;
        a->has_step = 1;
    } else if (ev->kind == TEV_EVAL) {
        int k = !strcmp(ev->eval.split, "test");
        a->eval[k] = ev->eval;
        a->has_eval[k] = 1;
        if (!k && (isnan(a->best_val) || ev->eval.loss < a->best_val)) {
            a->best_val = ev->eval.loss;
            a->best_step = ev->eval.step;
        }
    } else if (ev->kind == TEV_GATES) {
        a->n_gates = ev->n_gates < ALERTSEEN_MAX_GATES ? ev->n_gates : ALERTSEEN_MAX_GATES;
        memcpy(a->gates, ev->gates, (size_t)a->n_gates * sizeof *a->gates);
    }
}

void alertseen_sys(AlertSeen *a, const SysSample *x)
{
    if (x->rank == 0) {
        a->sys = *x;
        a->has_sys = 1;
    }
}

/* An evaluation's column ("loss", "ppl", "bpc") by name: the evals table's columns. */
static double eval_column(const EvalMetric *e, const char *col)
{
    return !strcmp(col, "ppl") ? e->ppl : !strcmp(col, "bpc") ? e->bpc : e->loss;
}

double alertseen_value(const void *seen, const SeriesRef *ref, long *at)
{
    const AlertSeen *a = seen;
    const SeriesEntry *i = ref->info;
    *at = -1;
    switch (i->source) {
    case SERIES_SRC_METRICS:
        *at = a->last.step;
        return a->has_step ? step_metric_get(&a->last, i->step_index) : NAN;
    case SERIES_SRC_EVAL: {
        int k = !strncmp(i->where, "test:", 5);
        const char *col = strchr(i->where, ':');
        *at = a->eval[k].step;
        return a->has_eval[k] ? eval_column(&a->eval[k], col ? col + 1 : "loss") : NAN;
    }
    case SERIES_SRC_BEST:
        *at = a->best_step;
        return a->best_val;
    case SERIES_SRC_SYS:
        return a->has_sys ? sysmetrics_value(&a->sys, i->where) : NAN;
    case SERIES_SRC_GATE:
        for (int g = 0; g < a->n_gates; g++)
            if (a->gates[g].layer == ref->arg[0] && a->gates[g].level == ref->arg[1]) {
                *at = a->gates[g].step;
                return a->gates[g].mean;
            }
        return NAN;
    case SERIES_SRC_NAMED:
    case SERIES_SRC_HIST:
        for (int k = 0; k < a->n_named; k++)
            if (!strcmp(a->named[k].name, ref->name)) {
                *at = a->named_step;
                return a->named[k].value;
            }
        return NAN;
    }
    return NAN;
}
