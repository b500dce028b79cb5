/* sweep_halving.c — the successive-halving rule (see sweep.h): the rungs of a budget, who
 * is promoted from a rung (the best 1/eta, a NaN never), and who is still alive at a rung
 * given every trial's metric at each rung. Pure arithmetic over arrays. Not here: running
 * the rungs (sweep_runner_thread.c). */
#include "sweep.h"

#include <math.h>
#include <stdlib.h>

int sweep_halving_rungs(long min_steps, int eta, long steps, long *rungs, int cap)
{
    int n = 0;
    for (long r = min_steps; r > 0 && r < steps && n < cap - 1; r *= eta)
        rungs[n++] = r;
    rungs[n++] = steps;
    return n;
}

int sweep_halving_promote(const double *metric, int n, int eta, int *keep)
{
    int quota = (n + eta - 1) / eta, kept = 0;
    for (int i = 0; i < n; i++)
        keep[i] = 0;
    while (kept < quota) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!keep[i] && isfinite(metric[i]) && (best < 0 || metric[i] < metric[best]))
                best = i;
        if (best < 0)
            break;
        keep[best] = 1;
        kept++;
    }
    return kept;
}

int sweep_halving_alive(const double *metric, int n, int n_rungs, int eta, int rung,
                        int *alive, int *stopped_at)
{
    double *m = malloc((size_t)(n > 0 ? n : 1) * sizeof *m);
    int *idx = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *idx), n_alive = n;
    if (!m || !idx) {
        free(m);
        free(idx);
        return -1;
    }
    int *keep = idx + n;
    for (int t = 0; t < n; t++) {
        alive[t] = 1;
        if (stopped_at) stopped_at[t] = -1;
    }
    for (int i = 0; i < rung && i < n_rungs - 1; i++) {
        int c = 0;
        for (int t = 0; t < n; t++)
            if (alive[t]) {
                idx[c] = t;
                m[c++] = metric[(size_t)t * n_rungs + i];
            }
        sweep_halving_promote(m, c, eta, keep);
        n_alive = 0;
        for (int j = 0; j < c; j++) {
            if (keep[j]) {
                n_alive++;
                continue;
            }
            alive[idx[j]] = 0;
            if (stopped_at) stopped_at[idx[j]] = i;
        }
    }
    free(m);
    free(idx);
    return n_alive;
}
