/* model_transformer_diag.c — what the trainer's diagnostics read from a transformer's last
 * forward (ModelOps.block_output, .attention_entropy): a block's output and, for MSA, each
 * head's attention entropy. Reads saved activations only; never runs a forward. Not the
 * statistics over them (core/train/diag.c) and not the gate coefficients
 * (transformer_gates, model_transformer_decode.c). */
#include "model_transformer.h"
#include "err.h"

#include <stdlib.h>

const float *transformer_block_output(Model *m, int layer, int *B, int *T)
{
    Transformer *tf = m->impl;
    if (m->weights_only || layer < 0 || layer >= m->cfg.layers || !tf->fwd_B)
        return NULL;
    *B = tf->fwd_B;
    *T = tf->fwd_T;
    return tf->layers[layer].out;
}

int transformer_attention_entropy(Model *m, int layer, double *sum)
{
    Transformer *tf = m->impl;
    if (tf->mixer != MIXER_MSA || layer < 0 || layer >= m->cfg.layers)
        return LM_EARG;
    if (!sum)   /* the question only: this layer has attention */
        return LM_OK;
    if (m->weights_only || !tf->fwd_B)
        return LM_EARG;
    double *row = malloc((size_t)tf->fwd_T * sizeof *row);
    if (!row)
        return LM_ENOMEM;
    attention_entropy_sum(&tf->ad, tf->layers[layer].mix_act, tf->fwd_B, tf->fwd_T, sum, row);
    free(row);
    return LM_OK;
}
