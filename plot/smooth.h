/* smooth.h — THE smoothing of lmlab's curves, shared by the dashboard (training and
 * history views), `plot` and `export ... smooth=K`: an exponential moving average with
 * start-up debiasing, as TensorBoard smooths. Debiasing divides the average by the weight
 * it has accumulated (1 - w^n after n points), so the curve starts at the first raw value
 * and bends no more at its start than anywhere else (no kink where a window fills). */
#ifndef LM_SMOOTH_H
#define LM_SMOOTH_H

/* The EMA weight of a span of k points (alpha = 2/(k+1), weight = 1 - alpha): k = 1 is
 * no smoothing (weight 0). */
double smooth_weight(int k);

/* out[i] = the debiased EMA of y[0..i] with weight w in [0, 1). Non-finite points are
 * copied and skipped by the average; out may be y. */
void smooth_ema(const double *y, double *out, int n, double w);

#endif
