/* smooth.c — the debiased exponential moving average (see smooth.h). Reference: the
 * smoothing of TensorBoard's scalar dashboard (tensorboard/plugins/scalar, "debiased
 * EMA") and Kingma & Ba, "Adam" (2015), section 3, for the 1 - beta^t correction. */
#include "smooth.h"

#include <math.h>

static double clamp_weight(double w)
{
    if (!(w >= 0)) return 0;
    return w > 0.999999 ? 0.999999 : w;
}

void smooth_ema_debiased(const double *y, int n, double weight, double *out)
{
    double w = clamp_weight(weight), m = 0, wk = 1;   /* wk = weight^k */
    for (int i = 0; i < n; i++) {
        double v = y[i];
        if (!isfinite(v)) {   /* passed through, as TensorBoard's smoothing does */
            out[i] = v;
            continue;
        }
        m = w * m + (1 - w) * v;
        wk *= w;
        out[i] = m / (1 - wk);
    }
}

double smooth_ema_last(const double *y, int n, double weight)
{
    double w = clamp_weight(weight), m = 0, wk = 1, last = NAN;
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i])) continue;
        m = w * m + (1 - w) * y[i];
        wk *= w;
        last = m / (1 - wk);
    }
    return last;
}

double smooth_weight(int k)
{
    return k <= 1 ? 0.0 : 1.0 - 2.0 / (k + 1.0);
}
