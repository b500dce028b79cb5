/* chart_ticks.c — the chart's axis ticks: Heckbert's "nice numbers" (Graphics Gems 1990)
 * for linear axes, 1-2-5 values for log axes, and the tick labels' text (chart.h). Not
 * the drawing: chart.c places the labels. */
#include "chart_ticks.h"

#include <math.h>
#include <stdio.h>

/* The 1, 2, 5 x 10^k step giving at most about max_ticks intervals over range. */
double chart_nice_step(double range, int max_ticks)
{
    if (max_ticks < 1)
        max_ticks = 1;
    double raw = range / max_ticks;
    if (!(raw > 0) || !isfinite(raw))
        return 1;
    double mag = pow(10, floor(log10(raw)));
    double norm = raw / mag;
    return (norm <= 1 + 1e-9 ? 1 : norm <= 2 + 1e-9 ? 2 : norm <= 5 + 1e-9 ? 5 : 10) * mag;
}

/* Widens an empty range [v, v] to something drawable. */
void chart_widen(double *lo, double *hi)
{
    if (*hi > *lo)
        return;
    double pad = *lo != 0 ? fabs(*lo) * 0.5 : 1;
    *lo -= pad;
    *hi += pad;
}

/* Linear ticks: multiples of step inside [lo, hi]. */
void chart_ticks_linear(Ticks *t, double lo, double hi, double step)
{
    t->n = 0;
    t->step = step;
    double first = ceil(lo / step - 1e-9) * step;
    for (int k = 0; t->n < MAX_TICKS; k++) {
        double v = first + k * step;
        if (v > hi + step * 1e-9)
            break;
        t->v[t->n++] = fabs(v) < step * 1e-9 ? 0 : v;
    }
}

/* The 1-2-5 sequence value number k (k = 3e + {0,1,2} gives {1,2,5} x 10^e). */
static double seq125(int k)
{
    int e = (int)floor(k / 3.0);
    static const double m[3] = {1, 2, 5};
    return m[k - 3 * e] * pow(10, e);
}

/* Log axis: widens [*lo, *hi] (positive) to 1-2-5 values and lists ticks; with many
 * decades, only powers of ten (every few decades when they would crowd). */
void chart_ticks_log(Ticks *t, double *lo, double *hi, int max_ticks)
{
    int klo = (int)floor(log10(*lo) * 3) - 3, khi = (int)ceil(log10(*hi) * 3) + 3;
    while (seq125(klo + 1) <= *lo * (1 + 1e-12))
        klo++;
    while (seq125(khi - 1) >= *hi * (1 - 1e-12))
        khi--;
    if (khi <= klo)
        khi = klo + 1;
    *lo = seq125(klo);
    *hi = seq125(khi);
    t->n = 0;
    t->step = 0;
    int every = 1;
    if (khi - klo > max_ticks) {
        every = 3;   /* decades only */
        while ((khi - klo) / every > max_ticks && every < 300)
            every += 3;
    }
    for (int k = klo; k <= khi && t->n < MAX_TICKS; k++)
        if (every == 1 || ((k % every) + every) % every == 0)
            t->v[t->n++] = seq125(k);
}

void chart_format_tick(char *buf, int n, double v, double step)
{
    if (n <= 0)
        return;
    if (!(step > 0))
        step = fabs(v) > 0 ? fabs(v) : 1;
    /* the unit comes from the value and the spacing, so 5000 next to 10k reads 5k */
    double a = fmax(fabs(v), 10 * step), scale = 1;
    const char *suffix = "";
    if (a >= 1e12 || !isfinite(v)) {   /* past the suffixes (a diverging loss): 6e+11 */
        snprintf(buf, (size_t)n, "%.2g", v);
        return;
    }
    if (a >= 1e9) {
        scale = 1e9;
        suffix = "G";
    } else if (a >= 1e6) {
        scale = 1e6;
        suffix = "M";
    } else if (a >= 1e4) {
        scale = 1e3;
        suffix = "k";
    }
    int dec = (int)ceil(-log10(step / scale) - 1e-9);
    if (dec < 0)
        dec = 0;
    if (v == 0)
        snprintf(buf, (size_t)n, "0");
    else if (dec > 5)
        snprintf(buf, (size_t)n, "%.2g", v);
    else
        snprintf(buf, (size_t)n, "%.*f%s", dec, v / scale, suffix);
}

/* Widens [*lo, *hi] to multiples of *step; when that wastes more than a third of the
 * height, takes the next smaller 1-2-5 step if its ticks still fit one per row. */
void chart_snap_range(double *lo, double *hi, double *step, int rows)
{
    double l = floor(*lo / *step + 1e-9) * *step, h = ceil(*hi / *step - 1e-9) * *step;
    if (h - l > 1.5 * (*hi - *lo)) {
        double mag = pow(10, floor(log10(*step) + 1e-9)), norm = *step / mag;
        double s2 = norm < 1.5 ? 0.5 * mag : norm < 3 ? mag : 2 * mag;
        double l2 = floor(*lo / s2 + 1e-9) * s2, h2 = ceil(*hi / s2 - 1e-9) * s2;
        if ((h2 - l2) / s2 <= rows - 1 + 1e-9) {
            *lo = l2;
            *hi = h2;
            *step = s2;
            return;
        }
    }
    *lo = l;
    *hi = h;
}
