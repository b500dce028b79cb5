/* model_transformer.h — internal state of the transformer family, shared by
 * model_transformer_build.c (construction, activation memory), model_transformer.c
 * (forward, backward) and model_transformer_decode.c (incremental decoding, gate
 * coefficients). Not a public API: use model.h. */
#ifndef LM_MODEL_TRANSFORMER_H
#define LM_MODEL_TRANSFORMER_H

#include "attention.h"
#include "decoder_loss.h"
#include "dispatcher.h"
#include "matmul.h"
#include "model.h"

enum { MIXER_DISPATCHER, MIXER_MSA };
#define TF_MAX_LEVELS 32

typedef struct {          /* parameter indices into Model.params */
    int w_mix[4];         /* dispatcher: linear_in, internal_attention, linear_out, -1;
                             msa: in_proj_weight, in_proj_bias, out_proj.weight, .bias */
    int w1, b1, w2, b2, ln1w, ln1b, ln2w, ln2b;
} BlockParams;

typedef struct {          /* one block's saved activations, each (N = B*T rows); in a
                             weights-only model every layer's point into one shared set,
                             except out (two buffers, alternately) and coef (per layer) */
    float *n1;            /* (N,d) pre-norm: LN1(x), the mixer input */
    float *mix_act;       /* mixer's own saved state (weights-only Dispatcher: NULL) */
    float *coef;          /* Dispatcher: (B*heads,T,levels) gate coefficients of the last
                             forward (training: the head of mix_act); MSA: NULL */
    float *mix_out;       /* (N,d) mixer output (after dropout); training: Transformer.fwd_tmp */
    float *r1, *x1;       /* (N,d) x + mix; post: LN1(r1), pre: LN2(r1) (FFN input) */
    float *mean1, *rstd1, *mean2, *rstd2; /* (N) */
    float *hpre, *hact;   /* (N,nhid) W1 x + b1, act(hpre) after dropout; relu: hpre is
                             hact (its backward reads only hact: the product is written
                             there and the bias and relu applied in place) */
    GemmBf16PackedB x1_pk, h_pk; /* Transformer.pk: x1 and hact kept as the bf16 packs of
                             the backward's dW1 and dW2 products, in x1's and hact's room */
    uint32_t *hbits;      /* Transformer.pk_h: hact's sign bits (linear.h), after h_pk */
    float *f;             /* (N,d) FFN output after dropout; training: Transformer.fwd_tmp */
    float *r2;            /* (N,d) post-norm: x1 + f */
    float *out;           /* (N,d) block output */
    float *mask1, *maskh, *mask2; /* dropout masks (NULL when dropout = 0) */
    unsigned char skip[TF_MAX_LEVELS]; /* dispatcher levels skipped in this forward */
} LayerActs;

typedef struct {
    int mixer, prenorm, gelu;
    DispatcherDims dd;
    AttentionDims ad;
    int p_wte, p_wpe, p_lnfw, p_lnfb, p_dec_w, p_dec_b;
    BlockParams *blocks;
    LayerActs *layers;
    float *slab;          /* every activation below lives in it */
    float *mix_states;    /* weights-only Dispatcher: the level states all layers share
                             (dispatcher_infer_floats) */
    int *tok;             /* (N) tokens of the last training forward (not weights-only) */
    float *x0, *mask0;    /* (N,d) embedded input */
    float *xf, *meanf, *rstdf; /* pre-norm final LayerNorm */
    DecoderLoss dec;      /* the decoder + loss: its logits chunk, unscaled gradients */
    float *fwd_tmp;       /* (N,d) training: every layer's mix_out and f, which the next
                             residual consumes at once and no backward reads: one buffer
                             that stays in cache, not one per layer written to memory */
    float *fwd_x1, *fwd_h; /* (N,d), (N,nhid) training: x1 (and pre-norm's n1) and hact
                             when no backward reads them as fp32 rows (pk, pk_h, pk_mix, or
                             a forward with no backward) */
    int pk, pk_h, pk_mix; /* this forward keeps x1 (pk), hact (pk_h) and the Dispatcher's
                             last level state and pre-norm n1 (pk_mix) as packs */
    float *dx, *dy, *dr, *dh, *dh2, *mix_scratch; /* backward scratch */
    float *pos_table;     /* (max(T,bptt), d) sinusoidal table */
    int fwd_B, fwd_T, trained;
} Transformer;

extern const ModelOps transformer_ops;

/* model_transformer_build.c: ModelOps.alloc and .destroy. */
int transformer_alloc(Model *m, int B, int T, char *err);
void transformer_destroy(Model *m);

/* model_transformer_decode.c */
DecodeState *transformer_decode_create(Model *m, char *err);
int transformer_decode_step(Model *m, DecodeState *st, int token, int pos, float *logits);
void transformer_decode_destroy(DecodeState *st);
const float *transformer_gates(Model *m, int layer);

/* model_transformer_diag.c: ModelOps.block_output and .attention_entropy. */
const float *transformer_block_output(Model *m, int layer, int *B, int *T);
int transformer_attention_entropy(Model *m, int layer, double *sum);

#endif
