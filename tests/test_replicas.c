/* test_replicas.c — data-parallel replicas give the single model's loss and gradients:
 * the same batch through 1, 2 and 3 replicas (3 splits 5 rows unevenly: 2+2+1), with the
 * gradient sum spread over the workers (phase 2), and twice in a row (the grads are
 * zeroed, not accumulated, between steps). Tolerance: float sums in a different order. */
#include "check.h"
#include "config.h"
#include "err.h"
#include "model.h"
#include "replicas.h"
#include "rng.h"

#include <stdlib.h>
#include <string.h>

enum { B = 5, T = 16, V = 11 };

/* Loss and a copy of the gradients after one step with n replicas. */
static double step_with(int n, const int *x, const int *y, float **grad, long *np)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 16; c.nhid = 32; c.layers = 2; c.bptt = T; c.batch = B; c.dropout = 0;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "model_create: %s", err);
    if (!m)
        return -1;
    CHECK(model_alloc(m, B, T, err) == LM_OK, "model_alloc: %s", err);
    Replicas *r = replicas_create(m, n, B, T, err);
    CHECK(r != NULL && replicas_count(r) == n, "replicas_create(%d): %s", n, err);
    m->training = 1;
    double loss = 0;
    long cnt = 0;
    for (int rep = 0; rep < 2 && r; rep++)
        CHECK(replicas_step(r, x, y, B, T, &loss, &cnt) == LM_OK, "step");
    CHECK(cnt == (long)B * T, "count %ld", cnt);
    *np = (long)m->params.total;
    *grad = malloc(m->params.total * sizeof(float));
    memcpy(*grad, m->params.grad, m->params.total * sizeof(float));
    replicas_destroy(r);
    model_destroy(m);
    return loss;
}

int main(void)
{
    int x[B * T], y[B * T];
    Rng rng;
    rng_seed(&rng, 7);
    for (int i = 0; i < B * T; i++) {
        x[i] = (int)rng_below(&rng, V);
        y[i] = (int)rng_below(&rng, V);
    }
    float *g1 = NULL, *gn = NULL;
    long n1 = 0, nn = 0;
    double l1 = step_with(1, x, y, &g1, &n1);
    for (int n = 2; n <= 3; n++) {
        double ln = step_with(n, x, y, &gn, &nn);
        CHECK(nn == n1 && nn > 0, "param counts %ld vs %ld", nn, n1);
        CHECK(fabs(ln - l1) <= 1e-4 * fabs(l1), "loss %d replicas %.7f vs 1: %.7f", n, ln, l1);
        if (nn == n1) {
            char what[64];
            snprintf(what, sizeof what, "grads, %d replicas vs 1", n);
            CHECK_CLOSE(what, gn, g1, n1, 1e-4, 1e-6);
        }
        free(gn);
    }
    free(g1);
    return check_summary();
}
