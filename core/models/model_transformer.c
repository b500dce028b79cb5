/* model_transformer.c — the seed's Transformer LM with a pluggable mixer: Dispatcher
 * (paper), Dispatcher-MH (the reference repository's multi-head layer) or causal MSA.
 * x = emb(tokens) * sqrt(d) + positions; blocks post-norm (the seed: x = LN1(x + mix(x));
 * x = LN2(x + W2 act(W1 x))) or pre-norm (x = x + mix(LN1 x); x = x + FFN(LN2 x), final
 * LN); linear decoder. Dropout as the seed's Block (after positions, on the mixer
 * output, the FFN hidden and the FFN output); Dispatcher layers also skip whole levels
 * with probability `dropout` (the multi-head variant never skips level 0).
 * The decoder and the loss run in row chunks, fused with the decoder's backward, so
 * logits of a large vocabulary never sit in memory whole. Not here: the kernels
 * (dispatcher.c, attention.c, ...) and incremental decoding (model_decode.c). */
#include "model_transformer.h"

#include "activation.h"
#include "attention.h"
#include "crossentropy.h"
#include "dispatcher.h"
#include "dropout.h"
#include "embedding.h"
#include "err.h"
#include "layernorm.h"
#include "linear.h"
#include "posenc.h"
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGIT_BUDGET (16L << 20) /* floats of logits kept at once */

static int add_param(Model *m, int *idx, int no_decay, const char *fmt, int layer, int ndim,
                     int s0, int s1)
{
    char name[PARAMS_NAME_LEN];
    snprintf(name, sizeof name, fmt, layer);
    int shape[2] = {s0, s1};
    *idx = params_add(&m->params, name, ndim, shape, no_decay);
    return *idx < 0;
}

static int register_params(Model *m, Transformer *tf)
{
    const Config *c = &m->cfg;
    int d = c->d, V = m->vocab, bad = 0;
    bad |= add_param(m, &tf->p_wte, 0, "encoder.weight", 0, 2, V, d);
    if (!strcmp(c->pos, "learned"))
        bad |= add_param(m, &tf->p_wpe, 0, "pos_embedding.weight", 0, 2, c->bptt, d);
    for (int l = 0; l < c->layers; l++) {
        BlockParams *b = &tf->blocks[l];
        if (tf->mixer == MIXER_MSA) {
            bad |= add_param(m, &b->w_mix[0], 0, "blocks.%d.mixer.in_proj_weight", l, 2, 3 * d, d);
            bad |= add_param(m, &b->w_mix[1], 1, "blocks.%d.mixer.in_proj_bias", l, 1, 3 * d, 0);
            bad |= add_param(m, &b->w_mix[2], 0, "blocks.%d.mixer.out_proj.weight", l, 2, d, d);
            bad |= add_param(m, &b->w_mix[3], 1, "blocks.%d.mixer.out_proj.bias", l, 1, d, 0);
        } else {
            int r = tf->dd.kind == DISPATCHER_PAPER ? d / c->heads : d;
            int g = tf->dd.kind == DISPATCHER_PAPER ? tf->dd.levels : tf->dd.levels * c->heads;
            bad |= add_param(m, &b->w_mix[0], 0, "blocks.%d.mixer.linear_in.weight", l, 2, r, r);
            bad |= add_param(m, &b->w_mix[1], 0, "blocks.%d.mixer.internal_attention.weight", l,
                             2, g, r);
            bad |= add_param(m, &b->w_mix[2], 0, "blocks.%d.mixer.linear_out.weight", l, 2, r, r);
            b->w_mix[3] = -1;
        }
        bad |= add_param(m, &b->w1, 0, "blocks.%d.linear1.weight", l, 2, c->nhid, d);
        bad |= add_param(m, &b->b1, 1, "blocks.%d.linear1.bias", l, 1, c->nhid, 0);
        bad |= add_param(m, &b->w2, 0, "blocks.%d.linear2.weight", l, 2, d, c->nhid);
        bad |= add_param(m, &b->b2, 1, "blocks.%d.linear2.bias", l, 1, d, 0);
        bad |= add_param(m, &b->ln1w, 1, "blocks.%d.norm1.weight", l, 1, d, 0);
        bad |= add_param(m, &b->ln1b, 1, "blocks.%d.norm1.bias", l, 1, d, 0);
        bad |= add_param(m, &b->ln2w, 1, "blocks.%d.norm2.weight", l, 1, d, 0);
        bad |= add_param(m, &b->ln2b, 1, "blocks.%d.norm2.bias", l, 1, d, 0);
    }
    if (tf->prenorm) {
        bad |= add_param(m, &tf->p_lnfw, 1, "norm_f.weight", 0, 1, d, 0);
        bad |= add_param(m, &tf->p_lnfb, 1, "norm_f.bias", 0, 1, d, 0);
    }
    tf->p_dec_w = tf->p_wte;
    if (!c->tie)
        bad |= add_param(m, &tf->p_dec_w, 0, "decoder.weight", 0, 2, V, d);
    bad |= add_param(m, &tf->p_dec_b, 1, "decoder.bias", 0, 1, V, 0);
    return bad;
}

/* PyTorch's default nn.Linear init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for W and b. */
static void init_linear(Model *m, int w, int b, int fan_in)
{
    float k = 1.0f / sqrtf((float)fan_in);
    ParamSet *ps = &m->params;
    rng_fill_uniform(&m->rng, params_data(ps, w), (long)ps->info[w].numel, -k, k);
    if (b >= 0)
        rng_fill_uniform(&m->rng, params_data(ps, b), (long)ps->info[b].numel, -k, k);
}

static void fill(float *x, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        x[i] = v;
}

static void init_params(Model *m, Transformer *tf)
{
    const Config *c = &m->cfg;
    ParamSet *ps = &m->params;
    int gpt = !strcmp(c->init, "normal");
    for (int i = 0; i < ps->n; i++) {
        ParamInfo *p = &ps->info[i];
        float *x = params_data(ps, i);
        if (strstr(p->name, "norm") && strstr(p->name, ".weight"))
            fill(x, p->numel, 1.0f);
        else if (gpt || p->ndim == 1)
            gpt && p->ndim == 2 ? rng_fill_normal(&m->rng, x, (long)p->numel, 0, 0.02f)
                                : fill(x, p->numel, 0.0f);
    }
    if (gpt)
        return;
    rng_fill_uniform(&m->rng, params_data(ps, tf->p_wte), (long)ps->info[tf->p_wte].numel,
                     -0.1f, 0.1f);
    if (tf->p_wpe >= 0)
        rng_fill_normal(&m->rng, params_data(ps, tf->p_wpe), (long)ps->info[tf->p_wpe].numel,
                        0, 0.02f);
    for (int l = 0; l < c->layers; l++) {
        BlockParams *b = &tf->blocks[l];
        if (tf->mixer == MIXER_MSA) { /* xavier_uniform in_proj, zero biases */
            float k = sqrtf(6.0f / (float)(c->d + 3 * c->d));
            rng_fill_uniform(&m->rng, params_data(ps, b->w_mix[0]),
                             (long)ps->info[b->w_mix[0]].numel, -k, k);
            init_linear(m, b->w_mix[2], -1, c->d);
        } else {
            int fan = ps->info[b->w_mix[0]].shape[1];
            for (int j = 0; j < 3; j++)
                init_linear(m, b->w_mix[j], -1, fan);
        }
        init_linear(m, b->w1, b->b1, c->d);
        init_linear(m, b->w2, b->b2, c->nhid);
    }
    if (!c->tie)
        rng_fill_uniform(&m->rng, params_data(ps, tf->p_dec_w),
                         (long)ps->info[tf->p_dec_w].numel, -0.1f, 0.1f);
    fill(params_data(ps, tf->p_dec_b), ps->info[tf->p_dec_b].numel, 0.0f);
}

static void tf_destroy(Model *m);

int model_transformer_init(Model *m, char *err)
{
    const Config *c = &m->cfg;
    Transformer *tf = calloc(1, sizeof *tf);
    if (!tf || !(tf->blocks = calloc((size_t)c->layers, sizeof *tf->blocks)) ||
        !(tf->layers = calloc((size_t)c->layers, sizeof *tf->layers))) {
        if (tf) { free(tf->blocks); free(tf); }
        return err_set(err, LM_ENOMEM, "out of memory creating the model");
    }
    m->impl = tf;
    tf->p_wpe = tf->p_lnfw = tf->p_lnfb = -1;
    tf->prenorm = !strcmp(c->norm, "pre");
    tf->gelu = !strcmp(c->act, "gelu");
    tf->mixer = !strcmp(c->model, "msa") ? MIXER_MSA : MIXER_DISPATCHER;
    tf->dd.kind = !strcmp(c->model, "dispatcher-mh") ? DISPATCHER_MH : DISPATCHER_PAPER;
    tf->dd.d = c->d;
    tf->dd.heads = c->heads;
    tf->dd.levels = dispatcher_levels(c->bptt);
    tf->ad.d = c->d;
    tf->ad.heads = c->heads;
    if (tf->mixer == MIXER_DISPATCHER) {
        m->n_gate_layers = c->layers;
        m->gate_heads = c->heads;
        m->gate_levels = tf->dd.levels;
    }
    if (register_params(m, tf) || params_alloc(&m->params, err)) {
        tf_destroy(m);
        return err[0] ? LM_ENOMEM : err_set(err, LM_ENOMEM, "out of memory for parameters");
    }
    init_params(m, tf);
    m->ops = &transformer_ops;
    return LM_OK;
}

static void tf_free_acts(Transformer *tf)
{
    free(tf->slab);
    free(tf->tok);
    tf->slab = NULL;
    tf->tok = NULL;
}

static void tf_destroy(Model *m)
{
    Transformer *tf = m->impl;
    if (!tf)
        return;
    tf_free_acts(tf);
    free(tf->blocks);
    free(tf->layers);
    free(tf);
    m->impl = NULL;
}

/* Carves every activation buffer from one slab; with `slab` NULL only counts floats. */
static size_t tf_layout(Model *m, Transformer *tf, float *slab, int B, int T)
{
    const Config *c = &m->cfg;
    size_t N = (size_t)B * T, d = (size_t)c->d, h = (size_t)c->nhid, off = 0;
    int drop = c->dropout > 0;
#define TAKE(ptr, n) do { if (slab) (ptr) = slab + off; off += ((size_t)(n) + 15) & ~(size_t)15; } while (0)
    size_t mix_act = tf->mixer == MIXER_MSA ? attention_act_floats(&tf->ad, B, T)
                                            : dispatcher_act_floats(&tf->dd, B, T);
    size_t mix_scr = tf->mixer == MIXER_MSA ? attention_scratch_floats(&tf->ad, B, T)
                                            : dispatcher_scratch_floats(&tf->dd, B, T);
    TAKE(tf->x0, N * d);
    if (drop) TAKE(tf->mask0, N * d);
    for (int l = 0; l < c->layers; l++) {
        LayerActs *a = &tf->layers[l];
        TAKE(a->mix_act, mix_act);
        TAKE(a->mix_out, N * d);
        TAKE(a->r1, N * d);
        TAKE(a->x1, N * d);
        TAKE(a->mean1, N); TAKE(a->rstd1, N);
        TAKE(a->hpre, N * h);
        TAKE(a->hact, N * h);
        TAKE(a->f, N * d);
        TAKE(a->r2, N * d);
        TAKE(a->out, N * d);
        TAKE(a->mean2, N); TAKE(a->rstd2, N);
        if (tf->prenorm) TAKE(a->n1, N * d);
        if (drop) { TAKE(a->mask1, N * d); TAKE(a->maskh, N * h); TAKE(a->mask2, N * d); }
    }
    if (tf->prenorm) { TAKE(tf->xf, N * d); TAKE(tf->meanf, N); TAKE(tf->rstdf, N); }
    tf->logit_rows = N * (size_t)m->vocab <= (size_t)LOGIT_BUDGET ? N
                   : (size_t)(LOGIT_BUDGET / m->vocab) + 1;
    TAKE(tf->logits, tf->logit_rows * (size_t)m->vocab);
    TAKE(tf->dx, N * d);
    TAKE(tf->dy, N * d);
    TAKE(tf->dh, N * h);
    TAKE(tf->dh2, N * h);
    TAKE(tf->dr, N * d);
    TAKE(tf->mix_scratch, mix_scr);
    TAKE(tf->dec_dw, (size_t)m->vocab * d);
    TAKE(tf->dec_db, (size_t)m->vocab);
    TAKE(tf->pos_table, (size_t)(T > c->bptt ? T : c->bptt) * d);
#undef TAKE
    return off;
}

static int tf_alloc(Model *m, int B, int T, char *err)
{
    Transformer *tf = m->impl;
    tf_free_acts(tf);
    size_t n = tf_layout(m, tf, NULL, B, T);
    tf->slab = aligned_alloc(64, ((n * sizeof(float)) + 63) & ~(size_t)63);
    tf->tok = malloc((size_t)B * T * sizeof(int));
    if (!tf->slab || !tf->tok)
        return err_set(err, LM_ENOMEM, "cannot allocate %.1f GiB of activations for batch=%d "
                       "x bptt=%d: lower batch or bptt", (double)n * 4 / (1 << 30), B, T);
    memset(tf->slab, 0, n * sizeof(float));
    tf_layout(m, tf, tf->slab, B, T);
    if (!strcmp(m->cfg.pos, "sinusoidal"))
        posenc_sinusoid(tf->pos_table, T > m->cfg.bptt ? T : m->cfg.bptt, m->cfg.d);
    m->B = B;
    m->T = T;
    return LM_OK;
}

#define W(i) params_data(&m->params, (i))
#define G(i) params_grad(&m->params, (i))
/* Times a statement into m->prof[part] when profiling (bench); free otherwise. */
#define PT(part, stmt)                                                        \
    do {                                                                      \
        double t0_ = m->profiling ? sysinfo_now() : 0;                        \
        stmt;                                                                 \
        if (m->profiling) m->prof[part] += sysinfo_now() - t0_;               \
    } while (0)

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
    memset(a->skip, 0, sizeof a->skip);
    if (m->training && m->cfg.dropout > 0)
        for (int k = tf->dd.kind == DISPATCHER_MH ? 1 : 0; k < tf->dd.levels; k++)
            a->skip[k] = rng_uniform(&m->rng) < m->cfg.dropout;
    dispatcher_forward(&tf->dd, out, a->mix_act, inp, W(bp->w_mix[0]), W(bp->w_mix[1]),
                       W(bp->w_mix[2]), a->skip, B, T);
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
                            W(bp->w_mix[1]), W(bp->w_mix[2]), a->skip, B, T);
}

static void maybe_dropout(Model *m, float *x, float *mask, size_t n)
{
    if (m->training && m->cfg.dropout > 0)
        dropout_forward(x, mask, x, m->cfg.dropout, (long)n, &m->rng);
}

static void block_forward(Model *m, Transformer *tf, int l, const float *x, int B, int T)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int N = B * T, d = m->cfg.d, h = m->cfg.nhid;
    size_t Nd = (size_t)N * d, Nh = (size_t)N * h;
    const float *mix_in = x;
    if (tf->prenorm) {
        PT(PROF_NORM, layernorm_forward(a->n1, a->mean1, a->rstd1, x, W(bp->ln1w), W(bp->ln1b),
                                        N, d));
        mix_in = a->n1;
    }
    PT(PROF_MIXER, mixer_forward(m, tf, l, a->mix_out, mix_in, B, T);
                   maybe_dropout(m, a->mix_out, a->mask1, Nd));
    PT(PROF_NORM, residual_forward(a->r1, x, a->mix_out, (long)Nd);
                  if (tf->prenorm)
                      layernorm_forward(a->x1, a->mean2, a->rstd2, a->r1, W(bp->ln2w),
                                        W(bp->ln2b), N, d);
                  else
                      layernorm_forward(a->x1, a->mean1, a->rstd1, a->r1, W(bp->ln1w),
                                        W(bp->ln1b), N, d));
    PT(PROF_FFN, if (tf->gelu) {
                     linear_forward(a->hpre, a->x1, W(bp->w1), W(bp->b1), N, d, h);
                     gelu_forward(a->hact, a->hpre, (long)Nh);
                 } else {   /* bias + ReLU fused into one pass after the product */
                     linear_forward_relu(a->hpre, a->hact, a->x1, W(bp->w1), W(bp->b1), N, d, h);
                 }
                 maybe_dropout(m, a->hact, a->maskh, Nh);
                 linear_forward(a->f, a->hact, W(bp->w2), W(bp->b2), N, h, d);
                 maybe_dropout(m, a->f, a->mask2, Nd));
    PT(PROF_NORM, if (tf->prenorm) {
                      residual_forward(a->out, a->r1, a->f, (long)Nd);
                  } else {
                      residual_forward(a->r2, a->x1, a->f, (long)Nd);
                      layernorm_forward(a->out, a->mean2, a->rstd2, a->r2, W(bp->ln2w),
                                        W(bp->ln2b), N, d);
                  });
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
    if (!drop && !tf->gelu) {   /* through W2 and the ReLU in one: no zeroing, one pass */
        linear_backward_relu(tf->dh2, G(bp->w2), G(bp->b2), df, a->hact, W(bp->w2), N, h, d);
        linear_backward(dx1, G(bp->w1), G(bp->b1), tf->dh2, a->x1, W(bp->w1), N, d, h);
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
    linear_backward(dx1, G(bp->w1), G(bp->b1), tf->dh2, a->x1, W(bp->w1), N, d, h);
}

/* d(block output) in tf->dx  ->  d(block input) in tf->dx. */
static void block_backward(Model *m, Transformer *tf, int l, const float *x, int B, int T)
{
    const BlockParams *bp = &tf->blocks[l];
    LayerActs *a = &tf->layers[l];
    int N = B * T, d = m->cfg.d, drop = m->training && m->cfg.dropout > 0;
    size_t Nd = (size_t)N * d, bytes = Nd * sizeof(float);
    if (!tf->prenorm) {
        PT(PROF_NORM, memset(tf->dr, 0, bytes);
                      layernorm_backward(tf->dr, G(bp->ln2w), G(bp->ln2b), tf->dx, a->r2,
                                         W(bp->ln2w), a->mean2, a->rstd2, N, d));
        PT(PROF_FFN, ffn_backward(m, tf, l, tf->dr, tf->dr, N)); /* d r2 in, d x1 out */
        PT(PROF_NORM, memset(tf->dy, 0, bytes);
                      layernorm_backward(tf->dy, G(bp->ln1w), G(bp->ln1b), tf->dr, a->r1,
                                         W(bp->ln1w), a->mean1, a->rstd1, N, d);
                      memcpy(tf->dx, tf->dy, bytes)); /* residual path of r1 = x + mix */
        PT(PROF_MIXER, if (drop) mul_inplace(tf->dy, a->mask1, Nd);
                       mixer_backward(m, tf, l, tf->dx, tf->dy, x, B, T));
        return;
    }
    PT(PROF_FFN, memset(tf->dr, 0, bytes);
                 ffn_backward(m, tf, l, tf->dr, tf->dx, N)); /* dr = d x1, x1 = LN2(r1) */
    PT(PROF_NORM, layernorm_backward(tf->dx, G(bp->ln2w), G(bp->ln2b), tf->dr, a->r1,
                                     W(bp->ln2w), a->mean2, a->rstd2, N, d); /* dx = d r1 */
                  memcpy(tf->dy, tf->dx, bytes));
    PT(PROF_MIXER, if (drop) mul_inplace(tf->dy, a->mask1, Nd);
                   memset(tf->dr, 0, bytes);
                   mixer_backward(m, tf, l, tf->dr, tf->dy, a->n1, B, T));
    PT(PROF_NORM, layernorm_backward(tf->dx, G(bp->ln1w), G(bp->ln1b), tf->dr, x, W(bp->ln1w),
                                     a->mean1, a->rstd1, N, d));
}

/* Decoder + cross-entropy over row chunks. Training: fused with the decoder's backward
 * (dx, dec_dw, dec_db, all unscaled). Without targets: keeps the logits. */
static int decode_rows(Model *m, Transformer *tf, const float *x, const int *targets, int N,
                       double *loss_sum, long *count)
{
    int d = m->cfg.d, V = m->vocab;
    const float *wd = W(tf->p_dec_w), *bd = W(tf->p_dec_b);
    if (!targets) {
        if (tf->logit_rows < (size_t)N)
            return LM_ENOMEM;
        linear_forward(tf->logits, x, wd, bd, N, d, V);
        tf->has_logits = 1;
        return LM_OK;
    }
    double sum = 0;
    long cnt = 0;
    for (int i = 0; i < N; i++)
        cnt += targets[i] >= 0;
    if (m->training) {
        memset(tf->dx, 0, (size_t)N * d * sizeof(float));
        memset(tf->dec_dw, 0, (size_t)V * d * sizeof(float));
        memset(tf->dec_db, 0, (size_t)V * sizeof(float));
    }
    for (int r0 = 0; r0 < N; r0 += (int)tf->logit_rows) {
        int R = N - r0 < (int)tf->logit_rows ? N - r0 : (int)tf->logit_rows;
        const float *xr = x + (size_t)r0 * d;
        linear_forward(tf->logits, xr, wd, bd, R, d, V);
        if (!m->training) {
            sum += crossentropy_forward(NULL, tf->logits, targets + r0, R, V);
            continue;
        }
        sum += crossentropy_forward_backward(tf->logits, tf->logits, targets + r0, R, V, 1.0f);
        linear_backward(tf->dx + (size_t)r0 * d, tf->dec_dw, tf->dec_db, tf->logits, xr, wd, R,
                        d, V);
    }
    tf->has_logits = 0;
    *loss_sum = sum;
    *count = cnt;
    return LM_OK;
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
    memcpy(tf->tok, tokens, (size_t)N * sizeof(int));
    PT(PROF_EMBED, embedding_forward(tf->x0, tokens, W(tf->p_wte), sqrtf((float)d), N, d);
                   posenc_add(tf->x0, tf->p_wpe >= 0 ? W(tf->p_wpe) : tf->pos_table, B, T, d, 0);
                   maybe_dropout(m, tf->x0, tf->mask0, (size_t)N * d));
    const float *x = tf->x0;
    for (int l = 0; l < c->layers; l++) {
        block_forward(m, tf, l, x, B, T);
        x = tf->layers[l].out;
    }
    if (tf->prenorm) {
        layernorm_forward(tf->xf, tf->meanf, tf->rstdf, x, W(tf->p_lnfw), W(tf->p_lnfb), N, d);
        x = tf->xf;
    }
    tf->fwd_B = B;
    tf->fwd_T = T;
    tf->trained = m->training && targets;
    double s = 0;
    long n = 0;
    int rc;
    PT(PROF_DECODER, rc = decode_rows(m, tf, x, targets, N, &s, &n));
    if (loss_sum) *loss_sum = s;
    if (count) *count = n;
    return rc;
}

static void scale_add(float *restrict acc, const float *restrict x, float s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc[i] += s * x[i];
}

static void tf_backward(Model *m, float scale)
{
    Transformer *tf = m->impl;
    const Config *c = &m->cfg;
    if (!tf->trained)
        return;
    int B = tf->fwd_B, T = tf->fwd_T, N = B * T, d = c->d, V = m->vocab;
    size_t Nd = (size_t)N * d;
    PT(PROF_DECODER, for (size_t i = 0; i < Nd; i++) tf->dx[i] *= scale;
                     scale_add(G(tf->p_dec_w), tf->dec_dw, scale, (size_t)V * d);
                     scale_add(G(tf->p_dec_b), tf->dec_db, scale, (size_t)V));
    if (tf->prenorm) {
        memset(tf->dr, 0, Nd * sizeof(float));
        layernorm_backward(tf->dr, G(tf->p_lnfw), G(tf->p_lnfb), tf->dx,
                           tf->layers[c->layers - 1].out, W(tf->p_lnfw), tf->meanf, tf->rstdf,
                           N, d);
        memcpy(tf->dx, tf->dr, Nd * sizeof(float));
    }
    for (int l = c->layers - 1; l >= 0; l--)
        block_backward(m, tf, l, l ? tf->layers[l - 1].out : tf->x0, B, T);
    PT(PROF_EMBED, if (c->dropout > 0) mul_inplace(tf->dx, tf->mask0, Nd);
                   if (tf->p_wpe >= 0) posenc_backward(G(tf->p_wpe), tf->dx, B, T, d, 0);
                   embedding_backward(G(tf->p_wte), tf->dx, tf->tok, sqrtf((float)d), N, d));
    tf->trained = 0;
}

static const float *tf_logits(Model *m)
{
    Transformer *tf = m->impl;
    return tf->has_logits ? tf->logits : NULL;
}

static void tf_reset_state(Model *m)
{
    (void)m;
}

const ModelOps transformer_ops = {
    .alloc = tf_alloc,
    .forward = tf_forward,
    .backward = tf_backward,
    .logits = tf_logits,
    .reset_state = tf_reset_state,
    .decode_create = transformer_decode_create,
    .decode_step = transformer_decode_step,
    .decode_destroy = transformer_decode_destroy,
    .gates = transformer_gates,
    .destroy = tf_destroy,
};
