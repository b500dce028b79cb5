/* gate_probe.h — what a Dispatcher model's gates say about some tokens: runs the model
 * over them and hands back, per layer, the gate coefficients as the layers computed them
 * and, on request, one gate value per token and level (its heads averaged). The one
 * place that reads gates for the trainer's gate statistics, the `coeffs` command and the
 * dashboard's tokens view, so none of them needs the Dispatcher kernel's layout.
 * Not a statistics module (the trainer bins the coefficients) and not a renderer. */
#ifndef LM_GATE_PROBE_H
#define LM_GATE_PROBE_H

#include "model.h"

/* gate_probe_run flags: also fill GateProbe.token. */
#define GATE_PROBE_TOKENS 1u

typedef struct {
    int layers, levels, heads;  /* gate layers, levels and heads of the model */
    int B, T;                   /* the probed batch */
    const float **coeff;        /* (layers) each (B*heads, T, levels) as the layer computed
                                   them (act(gate) x level mask), or NULL for a layer that
                                   kept none; points into the model: valid until its next
                                   forward */
    float *token;               /* (layers, B, T, levels) the gate of token t at level k
                                   averaged over the token's heads; NULL without
                                   GATE_PROBE_TOKENS */
} GateProbe;

/* Runs m over tokens (B,T) in evaluation mode (m->training restored after) and fills gp
 * (caller-owned; release with gate_probe_free). B and T must fit the model's allocation.
 * LM_OK; LM_EARG when the model has no gates (only Dispatcher models do); the forward's
 * status with "the forward pass failed (...)"; LM_ENOMEM. A forward that only lacked room
 * for the logits still computed every gate: that is LM_OK. */
int gate_probe_run(GateProbe *gp, Model *m, const int *tokens, int B, int T, unsigned flags,
                   char *err);

/* Releases what gate_probe_run allocated; the struct is zeroed. */
void gate_probe_free(GateProbe *gp);

/* gp->token of layer l, sequence b, position t, level k. */
float gate_probe_token(const GateProbe *gp, int l, int b, int t, int k);

/* 1 when level k at position t reaches before the sequence start (t < 2^k) with one
 * head, so no gate applies (its coefficient is the mask's 0): displays show it apart.
 * With several heads a token's chunks sit at other head positions and always count. */
int gate_probe_masked(const GateProbe *gp, int t, int k);

#endif
