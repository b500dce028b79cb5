/* smooth.c — the one debiased EMA (smooth.h). */
#include "smooth.h"

#include <math.h>

double smooth_weight(int k)
{
    return k <= 1 ? 0.0 : 1.0 - 2.0 / (k + 1.0);
}

void smooth_ema(const double *y, double *out, int n, double w)
{
    double last = 0, acc = 1;   /* acc = w^count: the weight not yet accumulated */
    for (int i = 0; i < n; i++) {
        double v = y[i];
        if (!isfinite(v)) {
            out[i] = v;
            continue;
        }
        last = last * w + (1 - w) * v;
        acc *= w;
        out[i] = acc < 1 ? last / (1 - acc) : v;
    }
}
