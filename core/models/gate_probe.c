/* gate_probe.c — one forward over a batch, then the gate coefficients of every
 * Dispatcher layer (ModelOps.gates) and, on request, per-token values averaged over the
 * heads (dispatcher_token_gate: the reference's head reshape without transpose). Not a
 * second forward path: the model's own forward runs, nothing is recomputed. */
#include "gate_probe.h"

#include "dispatcher.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

static void fill_tokens(GateProbe *gp)
{
    int L = gp->levels, H = gp->heads, T = gp->T;
    for (int l = 0; l < gp->layers; l++)
        for (int b = 0; b < gp->B; b++) {
            const float *c = gp->coeff[l];
            float *out = gp->token + (((size_t)l * gp->B + b) * T) * L;
            for (int t = 0; t < T; t++)
                for (int k = 0; k < L; k++)
                    out[(size_t)t * L + k] = c ? dispatcher_token_gate(
                                                     c + (size_t)b * H * T * L, T, H, L, t, k)
                                               : 0.0f;
        }
}

int gate_probe_run(GateProbe *gp, Model *m, const int *tokens, int B, int T, unsigned flags,
                   char *err)
{
    memset(gp, 0, sizeof *gp);
    if (!m->n_gate_layers || !m->ops->gates)
        return err_set(err, LM_EARG, "%s has no gates (only Dispatcher models do)",
                       m->cfg.model);
    int was = m->training;
    m->training = 0;
    int rc = model_forward(m, tokens, NULL, B, T, NULL, NULL);
    m->training = was;
    if (rc && rc != LM_ENOMEM) /* LM_ENOMEM here: the logits did not fit, the gates did */
        return err_set(err, rc, "the forward pass failed (%s)", err_name(rc));
    gp->layers = m->n_gate_layers;
    gp->levels = m->gate_levels;
    gp->heads = m->gate_heads;
    gp->B = B;
    gp->T = T;
    gp->coeff = calloc((size_t)gp->layers, sizeof *gp->coeff);
    if (flags & GATE_PROBE_TOKENS)
        gp->token = malloc((size_t)gp->layers * B * T * gp->levels * sizeof *gp->token);
    if (!gp->coeff || ((flags & GATE_PROBE_TOKENS) && !gp->token)) {
        gate_probe_free(gp);
        return err_set(err, LM_ENOMEM, "out of memory for the gates of %d tokens", B * T);
    }
    for (int l = 0; l < gp->layers; l++)
        gp->coeff[l] = m->ops->gates(m, l);
    if (gp->token)
        fill_tokens(gp);
    return LM_OK;
}

void gate_probe_free(GateProbe *gp)
{
    if (!gp)
        return;
    free(gp->coeff);
    free(gp->token);
    memset(gp, 0, sizeof *gp);
}

float gate_probe_token(const GateProbe *gp, int l, int b, int t, int k)
{
    return gp->token[(((size_t)l * gp->B + b) * gp->T + t) * gp->levels + k];
}

int gate_probe_masked(const GateProbe *gp, int t, int k)
{
    return t < (1 << k) && gp->heads == 1;
}
