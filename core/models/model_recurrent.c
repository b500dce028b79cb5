/* model_recurrent.c — the recurrent LM family (cfg.model = lstm | gru | rnn) as in
 * PyTorch's word_language_model example (github.com/pytorch/examples, RNNModel):
 * embedding -> dropout -> stacked cells (dropout between layers) -> dropout -> linear
 * decoder, optionally tied to the embedding. Parameter names are PyTorch's (encoder.weight,
 * rnn.weight_ih_l0, ..., decoder.weight, decoder.bias), so fixtures and checkpoints map
 * one to one. The hidden state can be carried (detached) from one forward to the next.
 * Not a cell implementation (recurrent.c) and not a sampler: decode_step only advances
 * the state one token at a time. */
#include "model.h"

#include "decoder_loss.h"
#include "dropout.h"
#include "embedding.h"
#include "err.h"
#include "linear.h"
#include "recurrent.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int kind, L, d, H, V, G, tie;
    float p;
    int p_enc, p_dec_w, p_dec_b;
    int (*p_layer)[4];   /* per layer: weight_ih, weight_hh, bias_ih, bias_hh */
    float *slab;
    int *tok;            /* (T*B) tokens of the last forward, time-major */
    float *emb, *mask_emb;           /* (T,B,d) embedded input (dropped in place), mask */
    RecurrentActs *acts;             /* per layer (weights-only: shared, but for h) */
    float **drop, **mask;            /* per layer (T,B,H): dropped output, mask */
    float *out_bt;       /* (B,T,H) decoder input */
    DecoderLoss dec;     /* the decoder + loss: its logits chunk, unscaled gradients */
    float *scratch;      /* (B,G*H) */
    float *g0, *g1;      /* (T,B,max(d,H)) backward ping-pong buffers */
    float *da_ih, *da_hh, *carry, *dbt;   /* dbt: (B,T,H) the decoder's input gradient */
    float *init_h, *init_c;   /* (L,B,H) initial state of the last forward */
    float *state_h, *state_c; /* (L,B,H) carried state */
    int state_B, fwd_B, fwd_T, dropping, trained;
} Recurrent;

struct DecodeState {
    Model *m;
    float *h, *c;        /* (L,H) state */
    float *x;            /* (max(d,H)) */
    float *hnew, *cnew;  /* (L,H) */
    float *act, *hn, *scratch;   /* (G*H), (H), (G*H) */
};

static RecurrentWeights layer_weights(const Model *m, const Recurrent *r, int l)
{
    const ParamSet *ps = &m->params;
    RecurrentWeights w = {params_data(ps, r->p_layer[l][0]), params_data(ps, r->p_layer[l][1]),
                          params_data(ps, r->p_layer[l][2]), params_data(ps, r->p_layer[l][3])};
    return w;
}

static RecurrentGrads layer_grads(const Model *m, const Recurrent *r, int l)
{
    const ParamSet *ps = &m->params;
    RecurrentGrads g = {params_grad(ps, r->p_layer[l][0]), params_grad(ps, r->p_layer[l][1]),
                        params_grad(ps, r->p_layer[l][2]), params_grad(ps, r->p_layer[l][3])};
    return g;
}

/* ---- construction ---- */

static int register_params(Model *m, Recurrent *r)
{
    ParamSet *ps = &m->params;
    int GH = r->G * r->H;
    r->p_enc = params_add(ps, "encoder.weight", 2, (int[]){r->V, r->d}, 0);
    int bad = r->p_enc < 0;
    for (int l = 0; l < r->L; l++) {
        char name[PARAMS_NAME_LEN];
        int in = l ? r->H : r->d;
        snprintf(name, sizeof name, "rnn.weight_ih_l%d", l);
        bad |= (r->p_layer[l][0] = params_add(ps, name, 2, (int[]){GH, in}, 0)) < 0;
        snprintf(name, sizeof name, "rnn.weight_hh_l%d", l);
        bad |= (r->p_layer[l][1] = params_add(ps, name, 2, (int[]){GH, r->H}, 0)) < 0;
        snprintf(name, sizeof name, "rnn.bias_ih_l%d", l);
        bad |= (r->p_layer[l][2] = params_add(ps, name, 1, (int[]){GH}, 1)) < 0;
        snprintf(name, sizeof name, "rnn.bias_hh_l%d", l);
        bad |= (r->p_layer[l][3] = params_add(ps, name, 1, (int[]){GH}, 1)) < 0;
    }
    r->p_dec_w = r->tie ? r->p_enc : params_add(ps, "decoder.weight", 2, (int[]){r->V, r->H}, 0);
    r->p_dec_b = params_add(ps, "decoder.bias", 1, (int[]){r->V}, 1);
    return bad || r->p_dec_w < 0 || r->p_dec_b < 0;
}

/* word_language_model's init_weights plus PyTorch's default for the cells. */
static void init_params(Model *m)
{
    Recurrent *r = m->impl;
    ParamSet *ps = &m->params;
    rng_fill_uniform(&m->rng, params_data(ps, r->p_enc), (long)ps->info[r->p_enc].numel,
                     -0.1f, 0.1f);
    float k = 1.0f / sqrtf((float)r->H);
    for (int l = 0; l < r->L; l++)
        for (int j = 0; j < 4; j++) {
            int i = r->p_layer[l][j];
            rng_fill_uniform(&m->rng, params_data(ps, i), (long)ps->info[i].numel, -k, k);
        }
    if (!r->tie)
        rng_fill_uniform(&m->rng, params_data(ps, r->p_dec_w),
                         (long)ps->info[r->p_dec_w].numel, -0.1f, 0.1f);
    memset(params_data(ps, r->p_dec_b), 0, (size_t)r->V * sizeof(float));
}

static void rec_free_acts(Recurrent *r)
{
    free(r->slab);
    free(r->tok);
    r->slab = NULL;
    r->tok = NULL;
}

static void rec_destroy(Model *m)
{
    Recurrent *r = m->impl;
    if (!r)
        return;
    rec_free_acts(r);
    free(r->p_layer);
    free(r->acts);
    free(r->drop);
    free(r->mask);
    free(r);
    m->impl = NULL;
}

static const ModelOps recurrent_ops;

/* Registers, allocates and initialises the parameters of an lstm/gru/rnn LM from m->cfg
 * and m->vocab, using m->rng; sets m->ops and m->impl. LM_EARG for a bad configuration
 * (unknown model, tie with d != nhid, non-positive sizes), LM_ENOMEM. On failure m->impl
 * is NULL and nothing else is owned. */
int model_recurrent_init(Model *m, char *err)
{
    const Config *c = &m->cfg;
    int kind = c->model_kind == MODEL_LSTM ? RECURRENT_LSTM
             : c->model_kind == MODEL_GRU  ? RECURRENT_GRU
             : c->model_kind == MODEL_RNN  ? RECURRENT_RNN : -1;
    if (kind < 0)
        return err_set(err, LM_EARG, "model=%s is not a recurrent model (lstm, gru, rnn)",
                       c->model);
    if (c->d < 1 || c->nhid < 1 || c->layers < 1 || m->vocab < 1)
        return err_set(err, LM_EARG, "recurrent model needs d, nhid, layers and a vocabulary "
                       "of at least 1 (got d=%d nhid=%d layers=%d V=%d)",
                       c->d, c->nhid, c->layers, m->vocab);
    if (c->tie && c->d != c->nhid)
        return err_set(err, LM_EARG, "tie=true needs d == nhid for model=%s (d=%d, nhid=%d): "
                       "set nhid=%d or tie=false", c->model, c->d, c->nhid, c->d);
    Recurrent *r = calloc(1, sizeof *r);
    if (!r)
        return err_set(err, LM_ENOMEM, "out of memory creating the model");
    m->impl = r;
    r->kind = kind;
    r->L = c->layers;
    r->d = c->d;
    r->H = c->nhid;
    r->V = m->vocab;
    r->G = recurrent_gates(kind);
    r->tie = c->tie;
    r->p = c->dropout;
    r->p_layer = calloc((size_t)r->L, sizeof *r->p_layer);
    r->acts = calloc((size_t)r->L, sizeof *r->acts);
    r->drop = calloc((size_t)r->L, sizeof *r->drop);
    r->mask = calloc((size_t)r->L, sizeof *r->mask);
    if (!r->p_layer || !r->acts || !r->drop || !r->mask || register_params(m, r)) {
        rec_destroy(m);
        return err_set(err, LM_ENOMEM, "out of memory registering the parameters");
    }
    m->n_gate_layers = 0;
    return model_finish_init(m, &recurrent_ops, init_params, err);
}

#define TAKE(ptr, n) do { if (slab) (ptr) = slab + *off; *off += ((size_t)(n) + 15) & ~(size_t)15; } while (0)

/* A weights-only model's layers (forward, never backward): layer l reads only layer
 * l-1's hidden states, so those alternate between two buffers (layer l writes h[l % 2])
 * and the cell states, gate activations and GRU's hn, dead once the layer ran (its final
 * state is copied out first), are one set every layer reuses. No dropout outputs or
 * masks. */
static void rec_layout_layers_weights(Recurrent *r, float *slab, size_t *off, size_t N)
{
    size_t H = (size_t)r->H, GH = (size_t)r->G * H;
    RecurrentActs s = {0};
    float *hs[2] = {NULL, NULL};
    for (int i = 0; i < (r->L > 1 ? 2 : 1); i++)
        TAKE(hs[i], N * H);
    if (r->kind == RECURRENT_LSTM) TAKE(s.c, N * H);
    if (r->kind != RECURRENT_RNN) TAKE(s.act, N * GH);
    if (r->kind == RECURRENT_GRU) TAKE(s.hn, N * H);
    for (int l = 0; slab && l < r->L; l++) {
        r->acts[l] = s;
        r->acts[l].h = hs[l % 2];
    }
}

/* Carves every activation buffer from one slab; with slab NULL only counts floats. A
 * weights-only model takes no backward buffers, dropout masks or targets. */
static size_t rec_layout(Recurrent *r, int weights_only, float *slab, int B, int T)
{
    size_t N = (size_t)B * T, H = (size_t)r->H, GH = (size_t)r->G * H, BH = (size_t)B * H;
    size_t C = (size_t)(r->d > r->H ? r->d : r->H), LBH = (size_t)r->L * BH, o = 0, *off = &o;
    int drop = r->p > 0 && !weights_only;
    TAKE(r->emb, N * r->d);
    if (drop) TAKE(r->mask_emb, N * r->d);
    if (weights_only)
        rec_layout_layers_weights(r, slab, off, N);
    for (int l = 0; !weights_only && l < r->L; l++) {
        RecurrentActs *a = &r->acts[l];
        TAKE(a->h, N * H);
        if (r->kind == RECURRENT_LSTM) TAKE(a->c, N * H);
        if (r->kind != RECURRENT_RNN) TAKE(a->act, N * GH);
        if (r->kind == RECURRENT_GRU) TAKE(a->hn, N * H);
        if (drop) { TAKE(r->drop[l], N * H); TAKE(r->mask[l], N * H); }
    }
    TAKE(r->out_bt, N * H);
    *off += decoder_loss_layout(&r->dec, slab ? slab + *off : NULL, N, r->V, r->H, 1,
                                !weights_only);
    TAKE(r->scratch, (size_t)B * GH);
    if (!weights_only) {
        TAKE(r->g0, N * C);
        TAKE(r->g1, N * C);
        TAKE(r->da_ih, N * GH);
        if (r->kind == RECURRENT_GRU) TAKE(r->da_hh, N * GH);
        TAKE(r->carry, 2 * BH);
        TAKE(r->dbt, N * H);
    }
    TAKE(r->init_h, LBH); TAKE(r->init_c, LBH);
    TAKE(r->state_h, LBH); TAKE(r->state_c, LBH);
    return o;
}
#undef TAKE

/* The ints rec_alloc takes: the tokens, time-major. */
static size_t rec_ints(int B, int T)
{
    return (size_t)B * T;
}

/* Bytes rec_alloc takes for (B,T): the slab (rounded as aligned_alloc is asked),
 * tokens and targets. Registry entry of the recurrent family. */
size_t model_recurrent_act_bytes(Model *m, int B, int T)
{
    size_t n = rec_layout(m->impl, m->weights_only, NULL, B, T);
    return model_act_bytes(n, rec_ints(B, T));
}

static int rec_alloc(Model *m, int B, int T, char *err)
{
    Recurrent *r = m->impl;
    if (B < 1 || T < 1)
        return err_set(err, LM_EARG, "batch and bptt must be >= 1 (got %d, %d)", B, T);
    rec_free_acts(r);
    size_t n = rec_layout(r, m->weights_only, NULL, B, T);
    int rc = model_act_alloc(m, n, rec_ints(B, T), &r->slab, &r->tok, B, T, err);
    if (rc)
        return rc;
    rec_layout(r, m->weights_only, r->slab, B, T);
    r->state_B = 0;
    r->trained = 0;
    m->B = B;
    m->T = T;
    return LM_OK;
}

/* ---- forward / backward ---- */

/* Sets init_h/init_c for a forward over B sequences: the carried state or zeros. */
static void prepare_state(Model *m, Recurrent *r, int B)
{
    size_t n = (size_t)r->L * B * r->H * sizeof(float);
    if (!m->carry_state || r->state_B != B) {
        memset(r->state_h, 0, n);
        memset(r->state_c, 0, n);
        r->state_B = B;
    }
    memcpy(r->init_h, r->state_h, n);
    memcpy(r->init_c, r->state_c, n);
}

/* Runs the stack over the embedded input; returns the top layer's (dropped) output. */
static const float *run_layers(Model *m, Recurrent *r, int B, int T)
{
    long BH = (long)B * r->H;
    const float *x = r->emb;
    for (int l = 0; l < r->L; l++) {
        RecurrentWeights w = layer_weights(m, r, l);
        RecurrentActs *a = &r->acts[l];
        recurrent_forward(r->kind, a, r->scratch, x, r->init_h + l * BH, r->init_c + l * BH,
                          &w, T, B, l ? r->H : r->d, r->H);
        if (m->carry_state) {
            memcpy(r->state_h + l * BH, a->h + (T - 1) * BH, (size_t)BH * sizeof(float));
            if (a->c)
                memcpy(r->state_c + l * BH, a->c + (T - 1) * BH, (size_t)BH * sizeof(float));
        }
        x = a->h;
        if (r->dropping) {
            dropout_forward(r->drop[l], r->mask[l], a->h, r->p, &m->drop, B, T, r->H, 1);
            x = r->drop[l];
        }
    }
    return x;
}

static int rec_forward(Model *m, const int *tokens, const int *targets, int B, int T,
                       double *loss_sum, long *count)
{
    Recurrent *r = m->impl;
    if (!r->slab || B > m->B || T > m->T || B < 1 || T < 1)
        return LM_ESTATE;
    long N = (long)B * T;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            r->tok[(long)t * B + b] = tokens[(long)b * T + t];
    r->dropping = m->training && r->p > 0;
    r->trained = 0;
    prepare_state(m, r, B);
    embedding_forward(r->emb, r->tok, params_data(&m->params, r->p_enc), 1.0f, (int)N, r->d);
    if (r->dropping)
        dropout_forward(r->emb, r->mask_emb, r->emb, r->p, &m->drop, B, T, r->d, 1);
    const float *top = run_layers(m, r, B, T);
    model_transpose_tb(r->out_bt, top, B, T, r->H, 1);
    r->fwd_B = B;
    r->fwd_T = T;
    int rc = decoder_loss_forward(&r->dec, m->training, r->out_bt,
                                  params_data(&m->params, r->p_dec_w),
                                  params_data(&m->params, r->p_dec_b), targets, (int)N, r->H,
                                  r->V, r->dbt, loss_sum, count);
    r->trained = !rc && m->training && targets;
    return rc;
}

/* The gradient g through a dropout mask into spare (zeroed first), or g itself when no
 * dropout was applied. */
static float *drop_back(const Recurrent *r, float *g, float *spare, const float *mask, long n)
{
    if (!r->dropping)
        return g;
    memset(spare, 0, (size_t)n * sizeof(float));
    dropout_backward(spare, g, mask, n);
    return spare;
}

static void rec_backward(Model *m, float scale)
{
    Recurrent *r = m->impl;
    if (!r->trained)
        return;
    int B = r->fwd_B, T = r->fwd_T, H = r->H;
    long N = (long)B * T, BH = (long)B * H;
    ParamSet *ps = &m->params;
    decoder_loss_backward(&r->dec, scale, r->dbt, params_grad(ps, r->p_dec_w),
                          params_grad(ps, r->p_dec_b));
    model_transpose_tb(r->g0, r->dbt, B, T, H, 0);
    float *gh = drop_back(r, r->g0, r->g1, r->mask[r->L - 1], N * H);
    for (int l = r->L - 1; l >= 0; l--) {
        int C_in = l ? H : r->d;
        float *gx = gh == r->g0 ? r->g1 : r->g0;
        float *spare = gh;   /* gh is dead once the layer's backward ran */
        memset(gx, 0, (size_t)N * C_in * sizeof(float));
        RecurrentWeights w = layer_weights(m, r, l);
        RecurrentGrads g = layer_grads(m, r, l);
        const float *x = l == 0 ? r->emb : r->dropping ? r->drop[l - 1] : r->acts[l - 1].h;
        recurrent_backward(r->kind, gx, &g, r->da_ih, r->da_hh, r->carry, gh, &r->acts[l], x,
                           r->init_h + l * BH, r->init_c + l * BH, &w, T, B, C_in, H);
        gh = drop_back(r, gx, spare, l ? r->mask[l - 1] : r->mask_emb, N * C_in);
    }
    embedding_backward(params_grad(ps, r->p_enc), gh, r->tok, 1.0f, (int)N, r->d);
    r->trained = 0;
}

static const float *rec_logits(Model *m)
{
    Recurrent *r = m->impl;
    return decoder_loss_logits(&r->dec);
}

static void rec_reset_state(Model *m)
{
    Recurrent *r = m->impl;
    if (r->state_h) {
        size_t n = (size_t)r->L * m->B * r->H * sizeof(float);
        memset(r->state_h, 0, n);
        memset(r->state_c, 0, n);
    }
    r->state_B = 0;
}

/* ---- incremental decoding ---- */

static DecodeState *rec_decode_create(Model *m, char *err)
{
    Recurrent *r = m->impl;
    size_t LH = (size_t)r->L * r->H, GH = (size_t)r->G * r->H;
    size_t C = (size_t)(r->d > r->H ? r->d : r->H);
    DecodeState *st = calloc(1, sizeof *st);
    float *buf = calloc(4 * LH + C + 2 * GH + r->H, sizeof(float));
    if (!st || !buf) {
        free(st);
        free(buf);
        err_set(err, LM_ENOMEM, "out of memory for the decoding state");
        return NULL;
    }
    st->m = m;
    st->h = buf;
    st->c = st->h + LH;
    st->hnew = st->c + LH;
    st->cnew = st->hnew + LH;
    st->x = st->cnew + LH;
    st->act = st->x + C;
    st->scratch = st->act + GH;
    st->hn = st->scratch + GH;
    return st;
}

static int rec_decode_step(Model *m, DecodeState *st, int token, int pos, float *logits)
{
    Recurrent *r = m->impl;
    if (token < 0 || token >= r->V)
        return LM_EARG;
    size_t LH = (size_t)r->L * r->H;
    if (pos == 0) {
        memset(st->h, 0, LH * sizeof(float));
        memset(st->c, 0, LH * sizeof(float));
    }
    embedding_forward(st->x, &token, params_data(&m->params, r->p_enc), 1.0f, 1, r->d);
    const float *x = st->x;
    for (int l = 0; l < r->L; l++) {
        RecurrentWeights w = layer_weights(m, r, l);
        RecurrentActs a = {st->hnew + l * r->H, st->cnew + l * r->H, st->act, st->hn};
        recurrent_forward(r->kind, &a, st->scratch, x, st->h + l * r->H, st->c + l * r->H, &w,
                          1, 1, l ? r->H : r->d, r->H);
        x = a.h;
    }
    memcpy(st->h, st->hnew, LH * sizeof(float));
    memcpy(st->c, st->cnew, LH * sizeof(float));
    linear_forward(logits, x, params_data(&m->params, r->p_dec_w),
                   params_data(&m->params, r->p_dec_b), 1, r->H, r->V);
    return LM_OK;
}

static void rec_decode_destroy(DecodeState *st)
{
    if (!st)
        return;
    free(st->h);
    free(st);
}

static const ModelOps recurrent_ops = {
    .alloc = rec_alloc,
    .forward = rec_forward,
    .backward = rec_backward,
    .logits = rec_logits,
    .reset_state = rec_reset_state,
    .decode_create = rec_decode_create,
    .decode_step = rec_decode_step,
    .decode_destroy = rec_decode_destroy,
    .destroy = rec_destroy,
};
