/* chart_ticks.h — the chart's ticks and tick labels (chart_ticks.c); chart.h includes it. */
#ifndef LMLAB_UI_CHART_TICKS_H
#define LMLAB_UI_CHART_TICKS_H

#define MAX_TICKS 64

typedef struct {
    double v[MAX_TICKS];
    int n;
    double step;              /* linear spacing, 0 for log ticks */
} Ticks;

/* Formats a tick value for a tick spacing `step` ("2.5", "10k", "1.5M", "0.001") into
 * buf (n bytes). Exposed for the dashboard's readouts and for tests. */
void chart_format_tick(char *buf, int n, double v, double step);

/* The 1, 2, 5 x 10^k step giving at most about max_ticks intervals over range. */
double chart_nice_step(double range, int max_ticks);
/* Widens an empty range [v, v] to something drawable. */
void chart_widen(double *lo, double *hi);
/* Linear ticks: multiples of step inside [lo, hi]. */
void chart_ticks_linear(Ticks *t, double lo, double hi, double step);
/* Log axis: widens [*lo, *hi] (positive) to 1-2-5 values and lists ticks. */
void chart_ticks_log(Ticks *t, double *lo, double *hi, int max_ticks);
/* Widens [*lo, *hi] to multiples of *step (a smaller 1-2-5 step when that wastes more
 * than a third of `rows`). */
void chart_snap_range(double *lo, double *hi, double *step, int rows);

#endif
