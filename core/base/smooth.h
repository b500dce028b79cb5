/* smooth.h — THE smoothing of lmlab's curves, shared by the dashboard (training and
 * history views), `plot ... smooth=K`, exports and the runs table's final_smooth: an
 * exponential moving average with the zero-start bias removed, as TensorBoard's and W&B's
 * "smoothing" slider does (the EMA of the first k points divided by 1 - weight^k, as Adam
 * debiases its moments), so a curve starts at its first raw value with no kink where a
 * window would fill. Pure: no allocation, no printing. Not a model fit. */
#ifndef LM_SMOOTH_H
#define LM_SMOOTH_H

/* The EMA weight of a span of k points (alpha = 2/(k+1), weight = 1 - alpha): k <= 1 is
 * no smoothing (weight 0); k = 19 is weight 0.9. */
double smooth_weight(int k);

/* out[i] = debiased EMA of the finite values among y[0..i]:
 *   m_k = weight * m_{k-1} + (1 - weight) * y,  out = m_k / (1 - weight^k),
 * k counting finite values only. A NaN or infinite y[i] leaves the state untouched and
 * is passed through, out[i] = y[i] (as TensorBoard's smoothing): a gap stays a gap and an
 * overflow stays +inf, so that a chart marks each for what it is.
 * weight in [0, 1): 0 copies y; values outside are clamped to [0, 0.999999].
 * out may equal y (in place). n <= 0 does nothing. */
void smooth_ema_debiased(const double *y, int n, double weight, double *out);

/* The last finite value of smooth_ema_debiased(y, n, weight) without an output array;
 * NaN when y has no finite value. */
double smooth_ema_last(const double *y, int n, double weight);

#endif
