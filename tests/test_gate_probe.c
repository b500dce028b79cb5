/* test_gate_probe.c — the gate probe against the model it probes: its coefficients are
 * the layers' own (ModelOps.gates after the same forward), its per-token values equal
 * dispatcher_token_gate over them (what `coeffs` and the dashboard printed before the
 * probe existed) for one and several heads, sequence b of a batch equals probing that
 * sequence alone (batch offsets), the training flag comes back, and a model without
 * gates is refused with a message. Exact equality: the same float operations run. */
#include "check.h"
#include "config.h"
#include "dispatcher.h"
#include "err.h"
#include "gate_probe.h"
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NV 11
#define NT 16

static Model *make(const char *model, int heads, int B, char *err)
{
    Config c;
    config_defaults(&c);
    c.d = 16; c.heads = heads; c.nhid = 24; c.layers = 2; c.bptt = NT; c.dropout = 0.3f;
    if (config_set(&c, "model", model, err))
        return NULL;
    Model *m = model_create(&c, NV, err);
    if (m && model_alloc(m, B, NT, err)) {
        model_destroy(m);
        return NULL;
    }
    return m;
}

static void probe_matches_layers(const char *model, int heads)
{
    char err[LM_ERR_LEN];
    int B = 3, tok[3 * NT];
    for (int i = 0; i < B * NT; i++)
        tok[i] = (i * 5 + 2) % NV;
    Model *m = make(model, heads, B, err);
    CHECK(m != NULL, "%s: %s", model, err);
    if (!m)
        return;
    m->training = 1; /* the probe runs in evaluation mode and restores this */
    GateProbe gp;
    CHECK(gate_probe_run(&gp, m, tok, B, NT, GATE_PROBE_TOKENS, err) == LM_OK, "%s", err);
    CHECK(m->training == 1, "training flag not restored");
    CHECK(gp.layers == 2 && gp.levels == 4 && gp.heads == heads && gp.B == B && gp.T == NT,
          "%s: shape %d x %d x %d", model, gp.layers, gp.levels, gp.heads);
    /* the same forward by hand, as the callers did before the probe */
    m->training = 0;
    CHECK(model_forward(m, tok, NULL, B, NT, NULL, NULL) == LM_OK, "forward");
    long diff = 0, masked = 0;
    for (int l = 0; l < gp.layers; l++) {
        const float *c = m->ops->gates(m, l);
        CHECK(c == gp.coeff[l], "%s layer %d: not the layer's coefficients", model, l);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < NT; t++)
                for (int k = 0; k < gp.levels; k++) {
                    float want = dispatcher_token_gate(c + (size_t)b * heads * NT * gp.levels, NT,
                                                       heads, gp.levels, t, k);
                    diff += gate_probe_token(&gp, l, b, t, k) != want;
                    masked += gate_probe_masked(&gp, t, k);
                }
    }
    CHECK(diff == 0, "%s heads=%d: %ld per-token gates differ", model, heads, diff);
    /* one head: positions t < 2^k are masked (1+2+4+8 per layer, per sequence, at NT=16) */
    long want_masked = heads == 1 ? 2L * B * (1 + 2 + 4 + 8) : 0;
    CHECK(masked == want_masked, "%s heads=%d: %ld masked, want %ld", model, heads, masked,
          want_masked);
    /* sequence 1 of the batch equals probing it alone */
    GateProbe one;
    CHECK(gate_probe_run(&one, m, tok + NT, 1, NT, GATE_PROBE_TOKENS, err) == LM_OK, "%s", err);
    double worst = 0;
    for (int l = 0; l < one.layers; l++)
        for (int t = 0; t < NT; t++)
            for (int k = 0; k < one.levels; k++) {
                double e = fabs(gate_probe_token(&one, l, 0, t, k) - gate_probe_token(&gp, l, 1, t, k));
                if (e > worst) worst = e;
            }
    printf("  %-14s heads=%d: batch row 1 vs alone, max abs diff %.3g\n", model, heads, worst);
    CHECK(worst < 1e-5, "%s: sequence 1 of the batch gives other gates (%g)", model, worst);
    gate_probe_free(&one);
    gate_probe_free(&gp);
    CHECK(gp.coeff == NULL && gp.token == NULL && gp.layers == 0, "free zeroes");
    model_destroy(m);
}

int main(void)
{
    probe_matches_layers("dispatcher", 1);
    probe_matches_layers("dispatcher", 2);
    probe_matches_layers("dispatcher-mh", 4);

    char err[LM_ERR_LEN];
    int tok[NT] = {0};
    Model *m = make("msa", 2, 1, err);
    CHECK(m != NULL, "%s", err);
    if (m) {
        GateProbe gp;
        CHECK(gate_probe_run(&gp, m, tok, 1, NT, 0, err) == LM_EARG && strstr(err, "no gates"),
              "msa probed: %s", err);
        model_destroy(m);
    }
    m = make("dispatcher", 1, 1, err);
    if (m) {
        GateProbe gp;
        int bad[NT] = {NV + 3};
        CHECK(gate_probe_run(&gp, m, bad, 1, NT, 0, err) == LM_EARG &&
              strstr(err, "forward pass failed"), "a token outside the vocabulary: %s", err);
        CHECK(gate_probe_run(&gp, m, tok, 1, NT, 0, err) == LM_OK && gp.token == NULL,
              "without GATE_PROBE_TOKENS no per-token array");
        gate_probe_free(&gp);
        model_destroy(m);
    }
    return check_summary();
}
