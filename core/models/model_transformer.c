/* model_transformer.c — the seed's Transformer LM with a pluggable mixer: Dispatcher
 * (paper), Dispatcher-MH (the reference repository's multi-head layer) or causal MSA.
 * x = emb(tokens) * sqrt(d) + positions; blocks post-norm (the seed: x = LN1(x + mix(x));
 * x = LN2(x + W2 act(W1 x))) or pre-norm (x = x + mix(LN1 x); x = x + FFN(LN2 x), final
 * LN); linear decoder. Dropout as the seed's Block (after positions, on the mixer
 * output, the FFN hidden and the FFN output); Dispatcher layers also skip whole levels
 * with probability `dropout` (the multi-head variant never skips level 0).
 * The decoder and the loss run in row chunks (decoder_loss.c), so logits of a large
 * vocabulary never sit in memory whole. Not here: the kernels
 * (dispatcher.c, attention.c, ...), construction and activation memory
 * (model_transformer_build.c), incremental decoding and gate coefficients
 * (model_transformer_decode.c). */
#include "model_transformer.h"

#include "activation.h"
#include "attention.h"
#include "cpu.h"
#include "dispatcher.h"
#include "dropout.h"
#include "embedding.h"
#include "err.h"
#include "layernorm.h"
#include "linear.h"
#include "posenc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W(i) params_data(&m->params, (i))
#define G(i) params_grad(&m->params, (i))
CPU_CLONES
static void mul_inplace(float *restrict x, const float *restrict mask, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] *= mask[i];
}

static void mixer_forward(Model *m, Transformer *tf, int l, float *out, const float *inp,
                          int B, int T)
{
    BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    if (tf->mixer == MIXER_MSA) {
        attention_forward(&tf->ad, out, a->mix_act, inp, W(bp->w_mix[0]), W(bp->w_mix[1]),
                          W(bp->w_mix[2]), W(bp->w_mix[3]), B, T);
        return;
    }
    if (m->weights_only) {   /* never trains: one level state, coefficients per layer */
        dispatcher_forward_infer(&tf->dd, out, a->coef, tf->mix_states, inp, W(bp->w_mix[0]),
                                 W(bp->w_mix[1]), W(bp->w_mix[2]), B, T);
        return;
    }
    memset(a->skip, 0, sizeof a->skip);
    if (m->training && m->cfg.dropout > 0) {   /* one draw per level for the whole batch */
        uint32_t site = m->drop.site++;
        for (int k = tf->dd.kind == DISPATCHER_MH ? 1 : 0; k < tf->dd.levels; k++)
            a->skip[k] = drop_uniform(m->drop.seed, site, UINT64_MAX, (uint64_t)k) <
                         m->cfg.dropout;
    }
    dispatcher_forward(&tf->dd, out, a->mix_act, inp, W(bp->w_mix[0]), W(bp->w_mix[1]),
                       W(bp->w_mix[2]), a->skip, B, T, tf->pk_mix ? tf->mix_scratch : NULL,
                       tf->pk_mix && tf->prenorm ? (uint16_t *)a->n1 : NULL);
}

static void mixer_backward(Model *m, Transformer *tf, int l, float *dinp, const float *dout,
                           const float *inp, int B, int T)
{
    BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    if (tf->mixer == MIXER_MSA)
        attention_backward(&tf->ad, dinp, G(bp->w_mix[0]), G(bp->w_mix[1]), G(bp->w_mix[2]),
                           G(bp->w_mix[3]), tf->mix_scratch, dout, a->mix_act, inp,
                           W(bp->w_mix[0]), W(bp->w_mix[2]), B, T);
    else
        dispatcher_backward(&tf->dd, dinp, G(bp->w_mix[0]), G(bp->w_mix[1]), G(bp->w_mix[2]),
                            tf->mix_scratch, dout, a->mix_act, inp, W(bp->w_mix[0]),
                            W(bp->w_mix[1]), W(bp->w_mix[2]), a->skip, B, T, tf->pk_mix,
                            tf->pk_mix && tf->prenorm ? (const uint16_t *)a->n1 : NULL);
}

/* Dropout in place of x (B,T,w) with the forward's key (model.h: Model.drop). */
static void maybe_dropout(Model *m, float *x, float *mask, int B, int T, int w)
{
    if (m->training && m->cfg.dropout > 0)
        dropout_forward(x, mask, x, m->cfg.dropout, &m->drop, B, T, w, 0);
}

/* Where block l's FFN input x1 and hidden activation go in this forward: the layer's own
 * buffers while its backward reads them as fp32 rows, else the rows every layer shares
 * (fwd_x1, fwd_h: in cache for the next product; the backward reads their packs, or no
 * backward follows). A weights-only model has no shared rows: its layers share theirs. */
static float *ffn_x1(const Transformer *tf, const LayerActs *a)
{
    return tf->fwd_x1 && (tf->pk || !tf->trained) ? tf->fwd_x1 : a->x1;
}

/* Pre-norm's n1, the mixer's input: the same shared rows as x1 (n1 is read before the
 * block's x1 is written, and the next block's n1 after this block's FFN) where the
 * backward reads its pack. */
static float *mixer_n1(const Transformer *tf, const LayerActs *a)
{
    return tf->fwd_x1 && (tf->pk_mix || !tf->trained) ? tf->fwd_x1 : a->n1;
}

static float *ffn_h(const Transformer *tf, const LayerActs *a)
{
    return tf->fwd_h && (tf->pk_h || !tf->trained) ? tf->fwd_h : a->hact;
}

/* Rows of one block of the FFN when its hidden rows are not kept (ffn_forward). */
#define FFN_ROWS 96

/* The FFN of block l on x1 (N=B*T,d) into f: W2 act(W1 x1 + b1) + b2, with dropout.
 * Where the hidden rows are not kept as fp32 (a forward with no backward, or the
 * backward reads hact's pack and sign bits), no dropout draws over them and the products
 * are bf16 (lmlab's kernels: each row's values are its own; no block of one row, which
 * takes the one-row path), FFN_ROWS rows at a time: the hidden block stays in cache from
 * its product through the bias, activation and pack to the second product, with the same
 * bits as the whole. fp32 products are OpenBLAS's, whose rows may depend on the rows
 * around them (SkylakeX's kernels give a last block of 12 rows other bits than the same
 * rows inside a product of 300): one product of every row, as training's. */
static void ffn_forward(Model *m, Transformer *tf, int l, int B, int T)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int N = B * T, d = m->cfg.d, h = m->cfg.nhid;
    LinearAct act = tf->gelu ? LINEAR_GELU : LINEAR_RELU;
    float *x1 = ffn_x1(tf, a), *hact = ffn_h(tf, a);
    if (tf->pk)   /* the backward's dW1 operand, packed while x1 is in cache */
        matmul_pack_b(&a->x1_pk, (uint16_t *)a->x1, CblasNoTrans, N, d, x1, d);
    if (hact == tf->fwd_h && !(m->training && m->cfg.dropout > 0) && matmul_bf16_active()) {
        if (tf->pk_h)
            a->h_pk = matmul_packed_b((uint16_t *)a->hact, N, h);
        for (int i0 = 0; i0 < N;) {
            int r = N - i0 < FFN_ROWS ? N - i0 : FFN_ROWS;
            r += N - i0 - r == 1;   /* never a last block of one row */
            const float *xb = x1 + (size_t)i0 * d;
            if (tf->pk_h) {
                linear_forward_relu_bits(hact, a->hbits + (size_t)i0 * linear_relu_words(h), xb,
                                         W(bp->w1), W(bp->b1), r, d, h);
                matmul_pack_b_rows(&a->h_pk, i0, r, hact, h);
            } else {
                linear_forward_act(tf->gelu ? a->hpre + (size_t)i0 * h : hact, hact, xb,
                                   W(bp->w1), W(bp->b1), r, d, h, act);
            }
            linear_forward(a->f + (size_t)i0 * d, hact, W(bp->w2), W(bp->b2), r, h, d);
            i0 += r;
        }
        return;
    }
    /* bias + activation fused into one pass after the product */
    linear_forward_act(hact == a->hact ? a->hpre : hact, hact, x1, W(bp->w1), W(bp->b1), N, d,
                       h, act);
    maybe_dropout(m, hact, a->maskh, B, T, h);
    linear_forward(a->f, hact, W(bp->w2), W(bp->b2), N, h, d);
    maybe_dropout(m, a->f, a->mask2, B, T, d);
}

/* Each stage timed into m->prof (model_prof_begin/end; free unless bench profiles). */
static void block_forward(Model *m, Transformer *tf, int l, const float *x, int B, int T)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int N = B * T, d = m->cfg.d;
    const float *mix_in = x;
    double t0;
    if (tf->prenorm && l == 0) {   /* later layers' LN1 ran in the previous block's tail */
        t0 = model_prof_begin(m);
        layernorm_forward(mixer_n1(tf, a), a->mean1, a->rstd1, x, W(bp->ln1w), W(bp->ln1b), N,
                          d);
        model_prof_end(m, PROF_NORM, t0);
    }
    if (tf->prenorm)
        mix_in = mixer_n1(tf, a);
    ModelNestedProf mp = model_prof_begin_nested(m, &tf->dd.scan_s, PROF_SCAN);
    mixer_forward(m, tf, l, a->mix_out, mix_in, B, T);
    maybe_dropout(m, a->mix_out, a->mask1, B, T, d);
    model_prof_end_nested(m, PROF_MIXER, mp);

    t0 = model_prof_begin(m);
    if (tf->prenorm)   /* r1 = x + mix, normalised row by row in the same pass */
        layernorm_residual_forward(ffn_x1(tf, a), a->r1, a->mean2, a->rstd2, x, a->mix_out,
                                   W(bp->ln2w), W(bp->ln2b), N, d);
    else
        layernorm_residual_forward(ffn_x1(tf, a), a->r1, a->mean1, a->rstd1, x, a->mix_out,
                                   W(bp->ln1w), W(bp->ln1b), N, d);
    model_prof_end(m, PROF_NORM, t0);

    t0 = model_prof_begin(m);
    ffn_forward(m, tf, l, B, T);
    model_prof_end(m, PROF_FFN, t0);

    t0 = model_prof_begin(m);
    if (tf->prenorm) {   /* out = r1 + f, normalised in the same pass by the next norm:
                          * the next block's LN1, or the final norm after the last */
        if (l + 1 < m->cfg.layers) {
            const BlockParams *nb = &tf->blocks[l + 1];
            LayerActs *na = &tf->layers[l + 1];
            layernorm_residual_forward(mixer_n1(tf, na), a->out, na->mean1, na->rstd1, a->r1,
                                       a->f, W(nb->ln1w), W(nb->ln1b), N, d);
        } else {
            layernorm_residual_forward(tf->xf, a->out, tf->meanf, tf->rstdf, a->r1, a->f,
                                       W(tf->p_lnfw), W(tf->p_lnfb), N, d);
        }
    } else {
        layernorm_residual_forward(a->out, a->r2, a->mean2, a->rstd2, ffn_x1(tf, a), a->f,
                                   W(bp->ln2w), W(bp->ln2b), N, d);
    }
    model_prof_end(m, PROF_NORM, t0);
}

/* The FFN's first layer backward from d(pre-activation) in dh2: dx1 +=, dW1 +=, db1 +=;
 * dW1 on x1's pack when the forward kept one. */
static void ffn_backward_in(Model *m, Transformer *tf, int l, float *dx1, int N)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int d = m->cfg.d, h = m->cfg.nhid;
    if (!tf->pk) {
        linear_backward(dx1, G(bp->w1), G(bp->b1), tf->dh2, a->x1, W(bp->w1), N, d, h);
        return;
    }
    linear_backward(dx1, NULL, G(bp->b1), tf->dh2, NULL, W(bp->w1), N, d, h);
    matmul_packed(CblasTrans, h, 1.0f, tf->dh2, h, &a->x1_pk, 1.0f, G(bp->w1), d);
}

/* The packed FFN's backward below W2, GEMM_BF16_KC rows at a time (the hidden gradient
 * block stays in cache through the mask, dx1, db1 and dW1): dpre = the masked df . W2 per
 * block; dx1 +=, db1 += row by row; dW1 += each block's dpre^T . x1's rows: one product
 * over all rows adds into dW1 once per GEMM_BF16_KC of them, in increasing rows, as
 * these do: the same bits on every kernel (no block of one row: a last row joins the
 * block before, which the product then splits where the whole one does). */
static void ffn_backward_blocks(Model *m, Transformer *tf, int l, float *dx1, const float *df,
                                int N)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int d = m->cfg.d, h = m->cfg.nhid;
    size_t W = linear_relu_words(h);
    for (int i0 = 0; i0 < N;) {
        int r = N - i0 < GEMM_BF16_KC ? N - i0 : GEMM_BF16_KC;
        r += N - i0 - r == 1;
        linear_backward_relu_bits(tf->dh2, df + (size_t)i0 * d, a->hbits + (size_t)i0 * W,
                                  W(bp->w2), r, h, d);
        linear_backward(dx1 + (size_t)i0 * d, NULL, G(bp->b1), tf->dh2, NULL, W(bp->w1), r, d,
                        h);
        GemmBf16PackedB rows = matmul_packed_rows(&a->x1_pk, i0, r);
        matmul_packed(CblasTrans, h, 1.0f, tf->dh2, h, &rows, 1.0f, G(bp->w1), d);
        i0 += r;
    }
}

/* FFN backward shared by both norms: from d(FFN output) `df` to d(FFN input) added
 * into `dx1`. Uses dy, dh, dh2 as scratch. */
static void ffn_backward(Model *m, Transformer *tf, int l, float *dx1, const float *df, int N)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int d = m->cfg.d, h = m->cfg.nhid, drop = m->training && m->cfg.dropout > 0;
    size_t Nd = (size_t)N * d, Nh = (size_t)N * h;
    if (drop) {
        memset(tf->dy, 0, Nd * sizeof(float));
        dropout_backward(tf->dy, df, a->mask2, (long)Nd);
        df = tf->dy;
    }
    if (tf->pk_h) {   /* hact and x1 as their packs, the ReLU's mask as bits */
        matmul_packed(CblasTrans, d, 1.0f, df, d, &a->h_pk, 1.0f, G(bp->w2), h);
        linear_backward(NULL, NULL, G(bp->b2), df, NULL, NULL, N, h, d);
        ffn_backward_blocks(m, tf, l, dx1, df, N);
        return;
    }
    if (!drop) {   /* through W2 and the activation in one: no zeroing, one pass */
        linear_backward_act(tf->dh2, G(bp->w2), G(bp->b2), df, a->hact, a->hpre, W(bp->w2), N,
                            h, d, tf->gelu ? LINEAR_GELU : LINEAR_RELU);
        ffn_backward_in(m, tf, l, dx1, N);
        return;
    }
    memset(tf->dh, 0, Nh * sizeof(float));
    linear_backward(tf->dh, G(bp->w2), G(bp->b2), df, a->hact, W(bp->w2), N, h, d);
    if (drop)
        mul_inplace(tf->dh, a->maskh, Nh);
    memset(tf->dh2, 0, Nh * sizeof(float));
    if (tf->gelu)
        gelu_backward(tf->dh2, tf->dh, a->hpre, (long)Nh);
    else
        relu_backward(tf->dh2, tf->dh, a->hact, (long)Nh);
    ffn_backward_in(m, tf, l, dx1, N);
}

/* d(block output) in tf->dx  ->  d(block input) in tf->dx; stages timed as forward. */
static void block_backward(Model *m, Transformer *tf, int l, const float *x, int B, int T)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int N = B * T, d = m->cfg.d, drop = m->training && m->cfg.dropout > 0;
    size_t Nd = (size_t)N * d, bytes = Nd * sizeof(float);
    double t0;
    if (!tf->prenorm) {
        t0 = model_prof_begin(m);
        memset(tf->dr, 0, bytes);
        layernorm_backward(tf->dr, G(bp->ln2w), G(bp->ln2b), tf->dx, a->r2, W(bp->ln2w),
                           a->mean2, a->rstd2, N, d);
        model_prof_end(m, PROF_NORM, t0);
        t0 = model_prof_begin(m);
        ffn_backward(m, tf, l, tf->dr, tf->dr, N); /* d r2 in, d x1 out */
        model_prof_end(m, PROF_FFN, t0);
        t0 = model_prof_begin(m);
        memset(tf->dy, 0, bytes);
        layernorm_backward(tf->dy, G(bp->ln1w), G(bp->ln1b), tf->dr, a->r1, W(bp->ln1w),
                           a->mean1, a->rstd1, N, d);
        memcpy(tf->dx, tf->dy, bytes); /* residual path of r1 = x + mix */
        model_prof_end(m, PROF_NORM, t0);
        ModelNestedProf mp = model_prof_begin_nested(m, &tf->dd.scan_s, PROF_SCAN);
        if (drop)
            mul_inplace(tf->dy, a->mask1, Nd);
        mixer_backward(m, tf, l, tf->dx, tf->dy, x, B, T);
        model_prof_end_nested(m, PROF_MIXER, mp);
        return;
    }
    t0 = model_prof_begin(m);
    memset(tf->dr, 0, bytes);
    ffn_backward(m, tf, l, tf->dr, tf->dx, N); /* dr = d x1, x1 = LN2(r1) */
    model_prof_end(m, PROF_FFN, t0);
    t0 = model_prof_begin(m);
    layernorm_backward(tf->dx, G(bp->ln2w), G(bp->ln2b), tf->dr, a->r1, W(bp->ln2w), a->mean2,
                       a->rstd2, N, d); /* dx = d r1 */
    if (drop)   /* d mix = dx * mask; without dropout the mixer reads dx itself */
        memcpy(tf->dy, tf->dx, bytes);
    model_prof_end(m, PROF_NORM, t0);
    ModelNestedProf mp = model_prof_begin_nested(m, &tf->dd.scan_s, PROF_SCAN);
    if (drop)
        mul_inplace(tf->dy, a->mask1, Nd);
    memset(tf->dr, 0, bytes);
    mixer_backward(m, tf, l, tf->dr, drop ? tf->dy : tf->dx, a->n1, B, T);
    model_prof_end_nested(m, PROF_MIXER, mp);
    t0 = model_prof_begin(m);
    layernorm_backward(tf->dx, G(bp->ln1w), G(bp->ln1b), tf->dr, x, W(bp->ln1w), a->mean1,
                       a->rstd1, N, d);
    model_prof_end(m, PROF_NORM, t0);
}

/* Whether this forward keeps x1 (pk), hact (pk_h) and the Dispatcher's last level state
 * and pre-norm input n1 (pk_mix) as the bf16 packs the backward's weight-gradient products
 * take (matmul.h): a forward with a backward, in a bf16 scope, where each pack fits its
 * fp32 buffer's room (hact's with its sign bits after it, for a ReLU with no dropout:
 * with dropout or GELU the backward reads hact or hpre itself). */
static void tf_choose_packs(Model *m, Transformer *tf, int B, int T)
{
    int N = B * T, d = m->cfg.d, h = m->cfg.nhid;
    size_t room_x1 = (size_t)N * d * sizeof(float), room_h = (size_t)N * h * sizeof(float);
    size_t bits_at = (matmul_packed_elems(N, h) * 2 + 7) / 8 * 8;   /* after h_pk, in bytes */
    size_t need_h = bits_at + (size_t)N * linear_relu_words(h) * sizeof(uint32_t);
    tf->pk = tf->trained && tf->fwd_x1 && matmul_packed_elems(N, d) * 2 <= room_x1 &&
             matmul_packs();
    tf->pk_h = tf->pk && tf->fwd_h && !tf->gelu && !(m->cfg.dropout > 0) && need_h <= room_h;
    tf->pk_mix = tf->pk && tf->mixer == MIXER_DISPATCHER && dispatcher_packs_fit(&tf->dd, B, T);
    for (int l = 0; l < m->cfg.layers && tf->pk_h; l++)
        tf->layers[l].hbits = (uint32_t *)((char *)tf->layers[l].hact + bits_at);
}

static int tf_forward(Model *m, const int *tokens, const int *targets, int B, int T,
                      double *loss_sum, long *count)
{
    Transformer *tf = m->impl;
    const Config *c = &m->cfg;
    if (B > m->B || T > m->T || B * T > m->B * m->T)
        return LM_EARG;
    int N = B * T, d = c->d;
    for (int i = 0; i < N; i++)
        if (tokens[i] < 0 || tokens[i] >= m->vocab)
            return LM_EARG;
    if (!m->weights_only)   /* for the embedding's backward */
        memcpy(tf->tok, tokens, (size_t)N * sizeof(int));
    double t0 = model_prof_begin(m);
    embedding_forward(tf->x0, tokens, W(tf->p_wte), sqrtf((float)d), N, d);
    posenc_add(tf->x0, tf->p_wpe >= 0 ? W(tf->p_wpe) : tf->pos_table, B, T, d, 0);
    maybe_dropout(m, tf->x0, tf->mask0, B, T, d);
    model_prof_end(m, PROF_EMBED, t0);
    tf->trained = m->training && targets;
    tf_choose_packs(m, tf, B, T);
    const float *x = tf->x0;
    for (int l = 0; l < c->layers; l++) {
        block_forward(m, tf, l, x, B, T);
        x = tf->layers[l].out;
    }
    if (tf->prenorm)   /* the final norm ran in the last block's tail */
        x = tf->xf;
    tf->fwd_B = B;
    tf->fwd_T = T;
    double s = 0;
    long n = 0;
    ModelNestedProf dp = model_prof_begin_nested(m, &tf->dec.elem_s, PROF_LOSS);
    int rc = decoder_loss_forward(&tf->dec, m->training, x, W(tf->p_dec_w), W(tf->p_dec_b),
                                  targets, N, d, m->vocab, tf->dx, &s, &n);
    model_prof_end_nested(m, PROF_DECODER, dp);
    if (loss_sum) *loss_sum = s;
    if (count) *count = n;
    return rc;
}

static void tf_backward(Model *m, float scale)
{
    Transformer *tf = m->impl;
    const Config *c = &m->cfg;
    if (!tf->trained)
        return;
    int B = tf->fwd_B, T = tf->fwd_T, N = B * T, d = c->d;
    size_t Nd = (size_t)N * d;
    ModelNestedProf dp = model_prof_begin_nested(m, &tf->dec.elem_s, PROF_LOSS);
    decoder_loss_backward(&tf->dec, scale, tf->dx, G(tf->p_dec_w), G(tf->p_dec_b));
    model_prof_end_nested(m, PROF_DECODER, dp);
    double t0;
    if (tf->prenorm) {
        t0 = model_prof_begin(m);
        memset(tf->dr, 0, Nd * sizeof(float));
        layernorm_backward(tf->dr, G(tf->p_lnfw), G(tf->p_lnfb), tf->dx,
                           tf->layers[c->layers - 1].out, W(tf->p_lnfw), tf->meanf, tf->rstdf,
                           N, d);
        memcpy(tf->dx, tf->dr, Nd * sizeof(float));
        model_prof_end(m, PROF_NORM, t0);
    }
    for (int l = c->layers - 1; l >= 0; l--)
        block_backward(m, tf, l, l ? tf->layers[l - 1].out : tf->x0, B, T);
    t0 = model_prof_begin(m);
    if (c->dropout > 0)
        mul_inplace(tf->dx, tf->mask0, Nd);
    if (tf->p_wpe >= 0)
        posenc_backward(G(tf->p_wpe), tf->dx, B, T, d, 0);
    embedding_backward(G(tf->p_wte), tf->dx, tf->tok, sqrtf((float)d), N, d);
    model_prof_end(m, PROF_EMBED, t0);
    tf->trained = 0;
}

static const float *tf_logits(Model *m)
{
    Transformer *tf = m->impl;
    return decoder_loss_logits(&tf->dec);
}

static void tf_reset_state(Model *m)
{
    (void)m;
}

const ModelOps transformer_ops = {
    .alloc = transformer_alloc,
    .forward = tf_forward,
    .backward = tf_backward,
    .logits = tf_logits,
    .reset_state = tf_reset_state,
    .decode_create = transformer_decode_create,
    .decode_step = transformer_decode_step,
    .decode_destroy = transformer_decode_destroy,
    .gates = transformer_gates,
    .block_output = transformer_block_output,
    .attention_entropy = transformer_attention_entropy,
    .destroy = transformer_destroy,
};
