/* model_transformer_decode.c — incremental decoding for the transformer family: one
 * token at a time through per-layer caches (Dispatcher: the per-level cache, O(levels*d)
 * mixing per token however long the text; MSA: the key/value cache), and the gate
 * coefficients of the last forward. Positions keep counting as in the reference's
 * generation scripts (sinusoidal table of 5000 positions, its max_len); past the cache's
 * limit decode_step answers LM_EARG and the sampler re-primes a shorter window.
 * Not here: Dispatcher with heads > 1 (its head blocks depend on T, so no streaming
 * cache exists: decode_create refuses and the sampler recomputes the window). */
#include "model_transformer.h"

#include "activation.h"
#include "embedding.h"
#include "err.h"
#include "layernorm.h"
#include "linear.h"
#include "posenc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DECODE_MAX_POS 5000

struct DecodeState {
    Model *m;
    DispatcherCache **dc;
    AttentionCache **ac;
    float *x, *y, *r, *x1, *h, *f, *table;
    int max_pos;
};

#define W(i) params_data(&m->params, (i))

void transformer_decode_destroy(DecodeState *st)
{
    if (!st)
        return;
    int L = st->m->cfg.layers;
    for (int l = 0; l < L; l++) {
        if (st->dc) dispatcher_cache_destroy(st->dc[l]);
        if (st->ac) attention_cache_destroy(st->ac[l]);
    }
    free(st->dc);
    free(st->ac);
    free(st->x);
    free(st->table);
    free(st);
}

DecodeState *transformer_decode_create(Model *m, char *err)
{
    Transformer *tf = m->impl;
    const Config *c = &m->cfg;
    if (tf->mixer == MIXER_DISPATCHER && c->heads > 1) {
        err_set(err, LM_EARG, "no streaming cache for Dispatcher with heads=%d: its head "
                "blocks depend on the text length", c->heads);
        return NULL;
    }
    DecodeState *st = calloc(1, sizeof *st);
    if (!st)
        goto nomem;
    st->m = m;
    st->max_pos = tf->mixer == MIXER_MSA || tf->p_wpe >= 0 ? c->bptt : DECODE_MAX_POS;
    size_t d = (size_t)c->d, h = (size_t)c->nhid;
    st->x = malloc((5 * d + h) * sizeof(float));
    if (!st->x)
        goto nomem;
    st->y = st->x + d; st->r = st->y + d; st->x1 = st->r + d; st->f = st->x1 + d;
    st->h = st->f + d;
    if (tf->p_wpe < 0) {
        st->table = malloc((size_t)st->max_pos * d * sizeof(float));
        if (!st->table)
            goto nomem;
        posenc_sinusoid(st->table, st->max_pos, c->d);
    }
    if (tf->mixer == MIXER_MSA) {
        if (!(st->ac = calloc((size_t)c->layers, sizeof *st->ac)))
            goto nomem;
        for (int l = 0; l < c->layers; l++)
            if (!(st->ac[l] = attention_cache_create(&tf->ad, st->max_pos)))
                goto nomem;
    } else {
        if (!(st->dc = calloc((size_t)c->layers, sizeof *st->dc)))
            goto nomem;
        for (int l = 0; l < c->layers; l++)
            if (!(st->dc[l] = dispatcher_cache_create(&tf->dd)))
                goto nomem;
    }
    return st;
nomem:
    transformer_decode_destroy(st);
    err_set(err, LM_ENOMEM, "out of memory for the decoding cache");
    return NULL;
}

static void ffn_step(Model *m, const BlockParams *bp, DecodeState *st, const float *in)
{
    const Config *c = &m->cfg;
    Transformer *tf = m->impl;
    linear_forward(st->h, in, W(bp->w1), W(bp->b1), 1, c->d, c->nhid);
    if (tf->gelu)
        gelu_forward(st->h, st->h, c->nhid);
    else
        relu_forward(st->h, st->h, c->nhid);
    linear_forward(st->f, st->h, W(bp->w2), W(bp->b2), 1, c->nhid, c->d);
}

static void block_step(Model *m, DecodeState *st, int l, int pos)
{
    Transformer *tf = m->impl;
    const BlockParams *bp = &tf->blocks[l];
    int d = m->cfg.d;
    const float *mix_in = st->x;
    if (tf->prenorm) {
        layernorm_forward(st->x1, NULL, NULL, st->x, W(bp->ln1w), W(bp->ln1b), 1, d);
        mix_in = st->x1;
    }
    if (tf->mixer == MIXER_MSA)
        attention_step(&tf->ad, st->ac[l], st->y, mix_in, W(bp->w_mix[0]), W(bp->w_mix[1]),
                       W(bp->w_mix[2]), W(bp->w_mix[3]), pos);
    else
        dispatcher_step(&tf->dd, st->dc[l], st->y, NULL, mix_in, W(bp->w_mix[0]),
                        W(bp->w_mix[1]), W(bp->w_mix[2]), pos);
    residual_forward(st->r, st->x, st->y, d);
    if (tf->prenorm) {
        layernorm_forward(st->x1, NULL, NULL, st->r, W(bp->ln2w), W(bp->ln2b), 1, d);
        ffn_step(m, bp, st, st->x1);
        residual_forward(st->x, st->r, st->f, d);
    } else {
        layernorm_forward(st->x1, NULL, NULL, st->r, W(bp->ln1w), W(bp->ln1b), 1, d);
        ffn_step(m, bp, st, st->x1);
        residual_forward(st->r, st->x1, st->f, d);
        layernorm_forward(st->x, NULL, NULL, st->r, W(bp->ln2w), W(bp->ln2b), 1, d);
    }
}

int transformer_decode_step(Model *m, DecodeState *st, int token, int pos, float *logits)
{
    Transformer *tf = m->impl;
    const Config *c = &m->cfg;
    if (pos < 0 || pos >= st->max_pos || token < 0 || token >= m->vocab)
        return LM_EARG;
    if (pos == 0) {
        for (int l = 0; l < c->layers; l++) {
            if (st->dc) dispatcher_cache_reset(st->dc[l]);
            if (st->ac) attention_cache_reset(st->ac[l]);
        }
    }
    int d = c->d;
    embedding_forward(st->x, &token, W(tf->p_wte), sqrtf((float)d), 1, d);
    const float *pe = tf->p_wpe >= 0 ? W(tf->p_wpe) : st->table;
    add_inplace(st->x, pe + (size_t)pos * d, d);
    for (int l = 0; l < c->layers; l++)
        block_step(m, st, l, pos);
    const float *x = st->x;
    if (tf->prenorm) {
        layernorm_forward(st->r, NULL, NULL, st->x, W(tf->p_lnfw), W(tf->p_lnfb), 1, d);
        x = st->r;
    }
    linear_forward(logits, x, W(tf->p_dec_w), W(tf->p_dec_b), 1, d, m->vocab);
    return LM_OK;
}

const float *transformer_gates(Model *m, int layer)
{
    Transformer *tf = m->impl;
    if (tf->mixer != MIXER_DISPATCHER || layer < 0 || layer >= m->cfg.layers || !tf->fwd_B)
        return NULL;
    return tf->layers[layer].coef;
}
