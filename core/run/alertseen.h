/* alertseen.h — the newest value of every series of the one registry (core/base/series.h)
 * a run has produced, kept from its events on the recorder thread, so an alert rule on
 * any series (`alert ID on='val<2.0'`, `on='gate/0/1>0.9'`) is checked against it.
 * Not the rules (alertrule.h) nor acting on them (alerts.h). */
#ifndef LM_ALERTSEEN_H
#define LM_ALERTSEEN_H

#include "metrics.h"
#include "series.h"
#include "sysmetrics.h"
#include "trainer.h"

#define ALERTSEEN_MAX_GATES 256

typedef struct {
    StepMetric last;        /* valid when has_step */
    int has_step;
    EvalMetric eval[2];     /* the newest valid and test evaluations */
    int has_eval[2];
    double best_val;        /* NAN before the first valid evaluation */
    long best_step;         /* the step of best_val */
    GateStat gates[ALERTSEEN_MAX_GATES];
    int n_gates;
    SysSample sys;          /* rank 0's newest sample, valid when has_sys */
    int has_sys;
    NamedScalar *named;     /* (n_named) the newest diagnostics' scalars and histograms'
                               means, malloc'd */
    int n_named;
    long named_step;        /* their step */
} AlertSeen;

/* Nothing seen yet. */
void alertseen_init(AlertSeen *a);
/* Frees what a holds (the named values); a is then as after alertseen_init. */
void alertseen_free(AlertSeen *a);
/* Keeps what ev (a step, an evaluation, gate statistics, named series) says. */
void alertseen_event(AlertSeen *a, const TrainEvent *ev);
/* Keeps rank 0's newest system sample. */
void alertseen_sys(AlertSeen *a, const SysSample *x);
/* The newest value of ref (an AlertValueFn over an AlertSeen), NaN when none yet; its
 * step into *at (-1 for a system sample, which has none). */
double alertseen_value(const void *seen, const SeriesRef *ref, long *at);

#endif
