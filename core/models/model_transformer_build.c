/* model_transformer_build.c — the transformer family's construction and memory:
 * parameter registration with the PyTorch names, the seed's initialisation, and the one
 * activation slab (its layout counts floats with a NULL slab, which is also what
 * model_estimate_bytes uses through the registry): a training model's, every layer's
 * activations for backward, or a weights-only model's, one layer's worth shared by all
 * (tf_layout_blocks_weights). Not the forward or backward
 * (model_transformer.c) nor decoding (model_transformer_decode.c). */
#include "model_transformer.h"

#include "err.h"
#include "posenc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void init_params(Model *m)
{
    Transformer *tf = m->impl;
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
    tf->mixer = c->model_kind == MODEL_MSA ? MIXER_MSA : MIXER_DISPATCHER;
    tf->dd.kind = c->model_kind == MODEL_DISPATCHER_MH ? DISPATCHER_MH : DISPATCHER_PAPER;
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
    if (register_params(m, tf)) {
        transformer_destroy(m);
        return err_set(err, LM_ENOMEM, "out of memory for parameters");
    }
    return model_finish_init(m, &transformer_ops, init_params, err);
}

static void tf_free_acts(Transformer *tf)
{
    free(tf->slab);
    free(tf->tok);
    tf->slab = NULL;
    tf->tok = NULL;
}

void transformer_destroy(Model *m)
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

#define TAKE(ptr, n) do { if (slab) (ptr) = slab + *off; *off += ((size_t)(n) + 15) & ~(size_t)15; } while (0)

/* A training model's blocks: each layer keeps every activation its backward reads, and
 * its dropout masks when dropout > 0. What the next residual consumes at once and no
 * backward reads (the mixer's and the FFN's outputs) goes through the one fwd_tmp. */
static void tf_layout_blocks_train(Model *m, Transformer *tf, float *slab, size_t *off, int B,
                                   int T)
{
    const Config *c = &m->cfg;
    size_t N = (size_t)B * T, d = (size_t)c->d, h = (size_t)c->nhid;
    int drop = c->dropout > 0;
    size_t mix_act = tf->mixer == MIXER_MSA ? attention_act_floats(&tf->ad, B, T)
                                            : dispatcher_act_floats(&tf->dd, B, T);
    TAKE(tf->fwd_tmp, N * d);
    TAKE(tf->fwd_x1, N * d);
    TAKE(tf->fwd_h, N * h);
    for (int l = 0; l < c->layers; l++) {
        LayerActs *a = &tf->layers[l];
        TAKE(a->mix_act, mix_act);
        TAKE(a->r1, N * d);
        TAKE(a->x1, N * d);
        TAKE(a->mean1, N); TAKE(a->rstd1, N);
        if (tf->gelu) TAKE(a->hpre, N * h);
        TAKE(a->hact, N * h);
        if (!tf->prenorm) TAKE(a->r2, N * d);
        TAKE(a->out, N * d);
        TAKE(a->mean2, N); TAKE(a->rstd2, N);
        if (tf->prenorm) TAKE(a->n1, N * d);
        if (drop) { TAKE(a->mask1, N * d); TAKE(a->maskh, N * h); TAKE(a->mask2, N * d); }
        if (slab) {
            a->coef = tf->mixer == MIXER_MSA ? NULL : a->mix_act; /* they lead the act */
            a->mix_out = a->f = tf->fwd_tmp;
            if (!tf->gelu)
                a->hpre = a->hact;
        }
    }
}

/* A weights-only model's blocks (model_create_weights: forward, never backward). Nothing
 * reads a block's buffers once the next block ran, except its output (the next block's
 * input) and the Dispatcher's coefficients (ModelOps.gates: the gate probe reads every
 * layer's after one forward). So the outputs alternate between two buffers (layer l
 * writes out[l % 2] and reads out[(l-1) % 2]), each layer keeps its coefficients, and
 * everything else is one set every layer reuses: the mixer's state (Dispatcher: two
 * level states, dispatcher_forward_infer; MSA: one attention_act_floats) and the norms',
 * residuals' and FFN's buffers. No dropout masks. */
static void tf_layout_blocks_weights(Model *m, Transformer *tf, float *slab, size_t *off, int B,
                                     int T)
{
    const Config *c = &m->cfg;
    size_t N = (size_t)B * T, d = (size_t)c->d, h = (size_t)c->nhid;
    LayerActs s = {0};
    float *mix = NULL, *outs[2] = {NULL, NULL};
    TAKE(mix, tf->mixer == MIXER_MSA ? attention_act_floats(&tf->ad, B, T)
                                     : dispatcher_infer_floats(&tf->dd, B, T));
    TAKE(s.mix_out, N * d);
    TAKE(s.r1, N * d);
    TAKE(s.x1, N * d);
    TAKE(s.mean1, N); TAKE(s.rstd1, N);
    if (tf->gelu) TAKE(s.hpre, N * h);
    TAKE(s.hact, N * h);
    if (!tf->gelu) s.hpre = s.hact;
    TAKE(s.f, N * d);
    if (!tf->prenorm) TAKE(s.r2, N * d);
    TAKE(s.mean2, N); TAKE(s.rstd2, N);
    if (tf->prenorm) TAKE(s.n1, N * d);
    for (int i = 0; i < (c->layers > 1 ? 2 : 1); i++)
        TAKE(outs[i], N * d);
    if (slab)
        tf->mix_states = tf->mixer == MIXER_MSA ? NULL : mix;
    for (int l = 0; l < c->layers; l++) {
        float *coef = NULL;
        if (tf->mixer == MIXER_DISPATCHER)
            TAKE(coef, dispatcher_coeff_floats(&tf->dd, B, T));
        if (slab) {
            LayerActs *a = &tf->layers[l];
            *a = s;
            a->out = outs[l % 2];
            a->mix_act = tf->mixer == MIXER_MSA ? mix : NULL;
            a->coef = coef;
        }
    }
}

/* Carves every activation buffer from one slab; with `slab` NULL only counts floats. A
 * weights-only model takes no backward buffers, dropout masks or tokens. */
static size_t tf_layout(Model *m, Transformer *tf, float *slab, int B, int T)
{
    const Config *c = &m->cfg;
    size_t N = (size_t)B * T, d = (size_t)c->d, h = (size_t)c->nhid, o = 0, *off = &o;
    int train = !m->weights_only;
    TAKE(tf->x0, N * d);
    if (train && c->dropout > 0) TAKE(tf->mask0, N * d);
    if (train)
        tf_layout_blocks_train(m, tf, slab, off, B, T);
    else
        tf_layout_blocks_weights(m, tf, slab, off, B, T);
    if (tf->prenorm) { TAKE(tf->xf, N * d); TAKE(tf->meanf, N); TAKE(tf->rstdf, N); }
    o += decoder_loss_layout(&tf->dec, slab ? slab + o : NULL, N, m->vocab, c->d, 1, train);
    if (train) {
        size_t mix_scr = tf->mixer == MIXER_MSA ? attention_scratch_floats(&tf->ad, B, T)
                                                : dispatcher_scratch_floats(&tf->dd, B, T);
        TAKE(tf->dx, N * d);
        TAKE(tf->dy, N * d);
        TAKE(tf->dh, N * h);
        TAKE(tf->dh2, N * h);
        TAKE(tf->dr, N * d);
        TAKE(tf->mix_scratch, mix_scr);
    }
    TAKE(tf->pos_table, (size_t)(T > c->bptt ? T : c->bptt) * d);
    return o;
}
#undef TAKE

/* Tokens kept for the embedding's backward: none for a weights-only model. */
static size_t tf_ints(const Model *m, int B, int T)
{
    return m->weights_only ? 0 : (size_t)B * T;
}

/* Bytes transformer_alloc takes for (B,T): the slab (rounded as aligned_alloc is asked) and the
 * tokens. Registry entry of the transformer family. */
size_t model_transformer_act_bytes(Model *m, int B, int T)
{
    size_t n = tf_layout(m, m->impl, NULL, B, T);
    return model_act_bytes(n, tf_ints(m, B, T));
}

int transformer_alloc(Model *m, int B, int T, char *err)
{
    Transformer *tf = m->impl;
    tf_free_acts(tf);
    size_t n = tf_layout(m, tf, NULL, B, T);
    int rc = model_act_alloc(m, n, tf_ints(m, B, T), &tf->slab, &tf->tok, B, T, err);
    if (rc)
        return rc;
    tf_layout(m, tf, tf->slab, B, T);
    if (!strcmp(m->cfg.pos, "sinusoidal"))
        posenc_sinusoid(tf->pos_table, T > m->cfg.bptt ? T : m->cfg.bptt, m->cfg.d);
    m->B = B;
    m->T = T;
    return LM_OK;
}
