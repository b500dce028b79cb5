/* model_linear.c — the linear LM of seed 004 (cfg.model = linear; ashegde's
 * LinearLM_and_tiny_shakespeare notebook after Malach 2023): tokens -> embedding tied to
 * the output head -> causal lower-triangular time mixing over a fixed context ctx = bptt
 * (timemix.c; shorter inputs zero-padded) -> channel mixer (d,d) -> lm_head (no bias).
 * Parameter names follow the reference: lm_head.weight (the tied embedding, registered
 * once), time_mix.weight/.bias, channel_mixer.weight/.bias. Nothing is nonlinear.
 * Not a recurrent model: there is no state; decoding keeps a sliding window of the last
 * ctx tokens and recomputes the one output position needed. */
#include "model.h"

#include "decoder_loss.h"
#include "embedding.h"
#include "err.h"
#include "linear.h"
#include "timemix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int V, d, ctx;
    int p_head, p_tw, p_tb, p_cw, p_cb;
    float *slab;
    int *tok;              /* (T*B) tokens of the last forward, time-major */
    float *x, *y;          /* (T,B,d) embedded input, time-mixed (time-major) */
    float *ybt, *z;        /* (B,T,d) time-mixed (batch-major), channel-mixed */
    DecoderLoss dec;       /* the decoder (tied to the embedding) + loss over row chunks */
    float *dz, *dybt, *dy, *dx;  /* backward buffers, shaped like their forward values */
    float *scratch;        /* timemix backward scratch */
    int fwd_B, fwd_T, trained;
} LinearLM;

struct DecodeState {
    int *win;              /* (ctx) the last tokens, oldest first */
    int n;                 /* tokens in the window */
    float *y, *z;          /* (d) */
};

static void lin_destroy(Model *m);
static const ModelOps linear_ops;

static int register_params(Model *m, LinearLM *lm)
{
    ParamSet *ps = &m->params;
    lm->p_head = params_add(ps, "lm_head.weight", 2, (int[]){lm->V, lm->d}, 0);
    lm->p_tw = params_add(ps, "time_mix.weight", 2, (int[]){lm->ctx, lm->ctx}, 0);
    lm->p_tb = params_add(ps, "time_mix.bias", 1, (int[]){lm->ctx}, 1);
    lm->p_cw = params_add(ps, "channel_mixer.weight", 2, (int[]){lm->d, lm->d}, 0);
    lm->p_cb = params_add(ps, "channel_mixer.bias", 1, (int[]){lm->d}, 1);
    return lm->p_head < 0 || lm->p_tw < 0 || lm->p_tb < 0 || lm->p_cw < 0 || lm->p_cb < 0;
}

/* nn.Linear's default init: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias
 * (kaiming_uniform with a = sqrt(5)); time_mix.weight then lower-triangularised. */
static void init_params(Model *m)
{
    LinearLM *lm = m->impl;
    ParamSet *ps = &m->params;
    float kd = 1.0f / sqrtf((float)lm->d), kc = 1.0f / sqrtf((float)lm->ctx);
    rng_fill_uniform(&m->rng, params_data(ps, lm->p_head), (long)lm->V * lm->d, -kd, kd);
    float *w = params_data(ps, lm->p_tw);
    rng_fill_uniform(&m->rng, w, (long)lm->ctx * lm->ctx, -kc, kc);
    for (int i = 0; i < lm->ctx; i++)
        for (int j = i + 1; j < lm->ctx; j++)
            w[(long)i * lm->ctx + j] = 0.0f;
    rng_fill_uniform(&m->rng, params_data(ps, lm->p_tb), lm->ctx, -kc, kc);
    rng_fill_uniform(&m->rng, params_data(ps, lm->p_cw), (long)lm->d * lm->d, -kd, kd);
    rng_fill_uniform(&m->rng, params_data(ps, lm->p_cb), lm->d, -kd, kd);
}

/* Registers, allocates and initialises the linear LM's parameters from m->cfg (d, bptt
 * as the context) and m->vocab, using m->rng; sets m->ops and m->impl. LM_EARG for
 * non-positive sizes, LM_ENOMEM. On failure m->impl is NULL. */
int model_linear_init(Model *m, char *err)
{
    const Config *c = &m->cfg;
    if (c->model_kind != MODEL_LINEAR)
        return err_set(err, LM_EARG, "model=%s is not the linear LM", c->model);
    if (c->d < 1 || c->bptt < 1 || m->vocab < 1)
        return err_set(err, LM_EARG, "the linear LM needs d, bptt (its context) and a "
                       "vocabulary of at least 1 (got d=%d bptt=%d V=%d)",
                       c->d, c->bptt, m->vocab);
    LinearLM *lm = calloc(1, sizeof *lm);
    if (!lm)
        return err_set(err, LM_ENOMEM, "out of memory creating the model");
    m->impl = lm;
    lm->V = m->vocab;
    lm->d = c->d;
    lm->ctx = c->bptt;
    if (register_params(m, lm)) {
        lin_destroy(m);
        return err_set(err, LM_ENOMEM, "out of memory registering the parameters");
    }
    m->n_gate_layers = 0;
    return model_finish_init(m, &linear_ops, init_params, err);
}

static void lin_free_acts(LinearLM *lm)
{
    free(lm->slab);
    free(lm->tok);
    lm->slab = NULL;
    lm->tok = NULL;
}

static void lin_destroy(Model *m)
{
    LinearLM *lm = m->impl;
    if (!lm)
        return;
    lin_free_acts(lm);
    free(lm);
    m->impl = NULL;
}

/* Carves the buffers from one slab; with slab NULL only counts floats. A weights-only
 * model (forward, never backward) takes no backward buffers, and its forward's values
 * share two buffers: ybt is written into x's (dead once time-mixed), z into y's (dead
 * once transposed). */
static size_t lin_layout(LinearLM *lm, int weights_only, float *slab, int B, int T)
{
    size_t N = (size_t)B * T, nd = N * (size_t)lm->d, off = 0;
#define TAKE(ptr, n) do { if (slab) (ptr) = slab + off; off += ((size_t)(n) + 15) & ~(size_t)15; } while (0)
    TAKE(lm->x, nd); TAKE(lm->y, nd);
    off += decoder_loss_layout(&lm->dec, slab ? slab + off : NULL, N, lm->V, lm->d, 0,
                               !weights_only);
    if (weights_only) {
        if (slab) { lm->ybt = lm->x; lm->z = lm->y; }
        return off;
    }
    TAKE(lm->ybt, nd); TAKE(lm->z, nd);
    TAKE(lm->dz, nd); TAKE(lm->dybt, nd); TAKE(lm->dy, nd); TAKE(lm->dx, nd);
    TAKE(lm->scratch, (size_t)timemix_scratch_floats(T, B * lm->d));
#undef TAKE
    return off;
}

/* Bytes lin_alloc takes for (B,T): the slab (rounded as aligned_alloc is asked) and
 * the tokens. Registry entry of the linear family. */
size_t model_linear_act_bytes(Model *m, int B, int T)
{
    size_t n = lin_layout(m->impl, m->weights_only, NULL, B, T);
    return model_act_bytes(n, (size_t)B * T);
}

static int lin_alloc(Model *m, int B, int T, char *err)
{
    LinearLM *lm = m->impl;
    if (B < 1 || T < 1 || T > lm->ctx)
        return err_set(err, LM_EARG, "the linear LM reads windows of 1..%d tokens (its "
                       "context, bptt); got batch=%d x %d", lm->ctx, B, T);
    lin_free_acts(lm);
    size_t n = lin_layout(lm, m->weights_only, NULL, B, T);
    int rc = model_act_alloc(m, n, (size_t)B * T, &lm->slab, &lm->tok, B, T, err);
    if (rc)
        return rc;
    lin_layout(lm, m->weights_only, lm->slab, B, T);
    lm->trained = 0;
    m->B = B;
    m->T = T;
    return LM_OK;
}

static int lin_forward(Model *m, const int *tokens, const int *targets, int B, int T,
                       double *loss_sum, long *count)
{
    LinearLM *lm = m->impl;
    const ParamSet *ps = &m->params;
    if (!lm->slab || B < 1 || T < 1 || B > m->B || T > m->T)
        return LM_ESTATE;
    int N = B * T, d = lm->d;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            lm->tok[(long)t * B + b] = tokens[(long)b * T + t];
    const float *wte = params_data(ps, lm->p_head);
    embedding_forward(lm->x, lm->tok, wte, 1.0f, N, d);
    timemix_forward(lm->y, lm->x, params_data(ps, lm->p_tw), params_data(ps, lm->p_tb), T,
                    B * d, lm->ctx);
    model_transpose_tb(lm->ybt, lm->y, B, T, d, 1);
    linear_forward(lm->z, lm->ybt, params_data(ps, lm->p_cw), params_data(ps, lm->p_cb), N, d,
                   d);
    lm->fwd_B = B;
    lm->fwd_T = T;
    int rc = decoder_loss_forward(&lm->dec, m->training, lm->z, wte, NULL, targets, N, d,
                                  lm->V, lm->dz, loss_sum, count);
    lm->trained = !rc && m->training && targets;
    return rc;
}

static void lin_backward(Model *m, float scale)
{
    LinearLM *lm = m->impl;
    if (!lm->trained)
        return;
    ParamSet *ps = &m->params;
    int B = lm->fwd_B, T = lm->fwd_T, N = B * T, d = lm->d;
    size_t nd = (size_t)N * d * sizeof(float);
    float *dwte = params_grad(ps, lm->p_head);
    decoder_loss_backward(&lm->dec, scale, lm->dz, dwte, NULL);
    memset(lm->dybt, 0, nd);
    linear_backward(lm->dybt, params_grad(ps, lm->p_cw), params_grad(ps, lm->p_cb), lm->dz,
                    lm->ybt, params_data(ps, lm->p_cw), N, d, d);
    model_transpose_tb(lm->dy, lm->dybt, B, T, d, 0);
    memset(lm->dx, 0, nd);
    timemix_backward(lm->dx, params_grad(ps, lm->p_tw), params_grad(ps, lm->p_tb), lm->scratch,
                     lm->dy, lm->x, params_data(ps, lm->p_tw), T, B * d, lm->ctx);
    embedding_backward(dwte, lm->dx, lm->tok, 1.0f, N, d);
    lm->trained = 0;
}

static const float *lin_logits(Model *m)
{
    return decoder_loss_logits(&((LinearLM *)m->impl)->dec);
}

static void lin_reset_state(Model *m)
{
    (void)m;
}

static DecodeState *lin_decode_create(Model *m, char *err)
{
    LinearLM *lm = m->impl;
    DecodeState *st = calloc(1, sizeof *st);
    int *win = malloc((size_t)lm->ctx * sizeof(int));
    float *buf = malloc(2 * (size_t)lm->d * sizeof(float));
    if (!st || !win || !buf) {
        free(st);
        free(win);
        free(buf);
        err_set(err, LM_ENOMEM, "out of memory for the decoding state");
        return NULL;
    }
    st->win = win;
    st->y = buf;
    st->z = buf + lm->d;
    return st;
}

/* Appends token to the window (dropping the oldest past ctx) and writes the logits of
 * the window's last position: O(ctx*d + d*d + V*d). */
static int lin_decode_step(Model *m, DecodeState *st, int token, int pos, float *logits)
{
    LinearLM *lm = m->impl;
    const ParamSet *ps = &m->params;
    if (token < 0 || token >= lm->V)
        return LM_EARG;
    if (pos == 0)
        st->n = 0;
    if (st->n == lm->ctx) {
        memmove(st->win, st->win + 1, (size_t)(lm->ctx - 1) * sizeof(int));
        st->n--;
    }
    st->win[st->n++] = token;
    int i = st->n - 1, d = lm->d;
    const float *w = params_data(ps, lm->p_tw) + (long)i * lm->ctx;
    const float *wte = params_data(ps, lm->p_head);
    float bi = params_data(ps, lm->p_tb)[i];
    for (int k = 0; k < d; k++)
        st->y[k] = bi;
    for (int j = 0; j <= i; j++) {
        const float *e = wte + (long)st->win[j] * d;
        for (int k = 0; k < d; k++)
            st->y[k] += w[j] * e[k];
    }
    linear_forward(st->z, st->y, params_data(ps, lm->p_cw), params_data(ps, lm->p_cb), 1, d, d);
    linear_forward(logits, st->z, wte, NULL, 1, d, lm->V);
    return LM_OK;
}

static void lin_decode_destroy(DecodeState *st)
{
    if (!st)
        return;
    free(st->win);
    free(st->y);
    free(st);
}

static const ModelOps linear_ops = {
    .alloc = lin_alloc,
    .forward = lin_forward,
    .backward = lin_backward,
    .logits = lin_logits,
    .reset_state = lin_reset_state,
    .decode_create = lin_decode_create,
    .decode_step = lin_decode_step,
    .decode_destroy = lin_decode_destroy,
    .destroy = lin_destroy,
};
