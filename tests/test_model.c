/* test_model.c — whole-LM PyTorch parity (dispatcher_lm, dispatcher_mh_lm, msa_lm):
 * logits, loss, gate coefficients and every parameter gradient against the fixtures
 * written by PyTorch 1.13 (tolerances: logits atol 1e-4; loss rtol 1e-5; gradients
 * rtol 1e-4 / atol 2e-5 — float32 summation order differs between BLAS and PyTorch);
 * a finite-difference check of the whole model for norm=pre, learned positions,
 * GELU and tying (no fixture exists for those); incremental decoding equal to a full
 * recompute (1e-4); for every family of the registry, model_estimate_bytes equal to the
 * bytes model_create + model_alloc take (parameters x 4 for values, gradients and Adam's
 * two moments, plus the activations), exactly; for a weights-only model of every family
 * (model_create_weights: sampling and evaluation) the same forward numbers bit for bit,
 * the activation bytes it saves (saved_bytes states the formula) and its estimate equal
 * to its allocation. */
#include "check.h"
#include "checkpoint.h"
#include "config.h"
#include "attention.h"
#include "dispatcher.h"
#include "err.h"
#include "gate_probe.h"
#include "model.h"
#include "registry.h"
#include "safetensors.h"
#include "timemix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fixture_path(const char *name, char *buf, size_t cap)
{
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(buf, cap, "%s/%s.safetensors", dir ? dir : "tests/fixtures", name);
    return buf;
}

static int meta_int(const SafeTensors *st, const char *key)
{
    const char *v = safetensors_meta(st, key);
    return v ? atoi(v) : -1;
}

/* (T,B,...) -> (B,T,...) for `inner` values per position. */
static void to_batch_major(float *dst, const float *src, int T, int B, int inner)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            memcpy(dst + ((size_t)b * T + t) * inner, src + ((size_t)t * B + b) * inner,
                   (size_t)inner * sizeof(float));
}

static void to_batch_major_i(int *dst, const int *src, int T, int B)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            dst[b * T + t] = src[t * B + b];
}

static void parity(const char *name)
{
    char path[512], err[LM_ERR_LEN];
    SafeTensors *st = NULL;
    printf("%s\n", name);
    if (safetensors_open(fixture_path(name, path, sizeof path), &st, err)) {
        CHECK(0, "%s", err);
        return;
    }
    Config c;
    config_defaults(&c);
    CHECK(config_set(&c, "model", safetensors_meta(st, "model"), err) == LM_OK, "%s", err);
    c.d = meta_int(st, "d"); c.heads = meta_int(st, "heads"); c.nhid = meta_int(st, "nhid");
    c.layers = meta_int(st, "layers"); c.bptt = meta_int(st, "bptt");
    int V = meta_int(st, "ntoken"), T = meta_int(st, "T"), B = meta_int(st, "B"), N = B * T;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "model_create: %s", err);
    if (!m) { safetensors_close(st); return; }
    CHECK(model_alloc(m, B, T, err) == LM_OK, "alloc: %s", err);
    CHECK(checkpoint_read_weights(m, st, "param.", err) == LM_OK, "weights: %s", err);

    int *tok_tb = malloc(N * sizeof(int)), *tgt_tb = malloc(N * sizeof(int));
    int *tok = malloc(N * sizeof(int)), *tgt = malloc(N * sizeof(int));
    safetensors_read_i32(st, "tokens", tok_tb, N, err);
    safetensors_read_i32(st, "targets", tgt_tb, N, err);
    to_batch_major_i(tok, tok_tb, T, B);
    to_batch_major_i(tgt, tgt_tb, T, B);

    /* logits and gates: forward without targets */
    float *ref = malloc((size_t)N * V * sizeof(float)), *ref_bm = malloc((size_t)N * V * sizeof(float));
    safetensors_read_f32(st, "logits", ref, (size_t)N * V, err);
    to_batch_major(ref_bm, ref, T, B, V);
    m->training = 0;
    CHECK(model_forward(m, tok, NULL, B, T, NULL, NULL) == LM_OK, "forward");
    const float *logits = m->ops->logits(m);
    CHECK(logits != NULL, "no logits");
    if (logits) CHECK_CLOSE("logits", logits, ref_bm, (long)N * V, 1e-5, 1e-4);
    for (int l = 0; l < m->n_gate_layers; l++) {
        char key[64];
        snprintf(key, sizeof key, "coefficients.%d", l);
        const StTensor *t = safetensors_find(st, key);
        const float *g = m->ops->gates(m, l);
        CHECK(t && g, "%s missing", key);
        if (!t || !g) continue;
        float *cref = malloc(t->numel * sizeof(float));
        safetensors_read_f32(st, key, cref, t->numel, err);
        CHECK_CLOSE(key, g, cref, (long)t->numel, 1e-5, 1e-6);
        free(cref);
    }

    /* loss and gradients: training forward with targets, backward of the mean */
    m->training = 1;
    double loss_sum;
    long count;
    params_zero_grad(&m->params);
    CHECK(model_forward(m, tok, tgt, B, T, &loss_sum, &count) == LM_OK, "forward(train)");
    model_backward(m, 1.0f / (float)count);
    float loss = (float)(loss_sum / count), ref_loss;
    safetensors_read_f32(st, "loss", &ref_loss, 1, err);
    CHECK_CLOSE("loss", &loss, &ref_loss, 1, 1e-5, 1e-6);
    for (int i = 0; i < m->params.n; i++) {
        const ParamInfo *p = &m->params.info[i];
        char key[PARAMS_NAME_LEN + 8];
        snprintf(key, sizeof key, "grad.%s", p->name);
        float *g = malloc(p->numel * sizeof(float));
        CHECK(safetensors_read_f32(st, key, g, p->numel, err) == LM_OK, "%s", err);
        CHECK_CLOSE(key, params_grad(&m->params, i), g, (long)p->numel, 1e-4, 2e-5);
        free(g);
    }
    free(tok_tb); free(tgt_tb); free(tok); free(tgt); free(ref); free(ref_bm);
    model_destroy(m);
    safetensors_close(st);
}

/* Loss in double for finite differences, eval mode (no dropout). */
static double loss_of(Model *m, const int *tok, const int *tgt, int B, int T)
{
    double s;
    long n;
    m->training = 0;
    model_forward(m, tok, tgt, B, T, &s, &n);
    return s / n;
}

static void finite_differences(const char *label, const char *const *pairs)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 8; c.heads = 2; c.nhid = 12; c.layers = 2; c.bptt = 8;
    for (int i = 0; pairs[i]; i++)
        CHECK(config_set_pair(&c, pairs[i], err) == LM_OK, "%s", err);
    int V = 11, B = 2, T = 8, N = B * T;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "%s: %s", label, err);
    if (!m) return;
    model_alloc(m, B, T, err);
    int tok[64], tgt[64];
    Rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < N; i++) { tok[i] = (int)rng_below(&r, V); tgt[i] = (int)rng_below(&r, V); }
    tgt[3] = -1;   /* ignored target */
    /* perturb LayerNorm weights away from 1 so their gradients are exercised */
    for (size_t i = 0; i < m->params.total; i++)
        m->params.data[i] += 0.05f * rng_normal(&r);
    m->training = 1;
    double s;
    long n;
    params_zero_grad(&m->params);
    model_forward(m, tok, tgt, B, T, &s, &n);
    model_backward(m, 1.0f / n);
    /* central differences on a sample of parameters; eps 1e-2 with float32 forward: the
     * truncation error is O(eps^2) ~1e-4, rounding ~1e-7/eps ~1e-5 */
    double worst = 0;
    for (int k = 0; k < 60; k++) {
        size_t i = rng_below(&r, (uint32_t)m->params.total);
        float keep = m->params.data[i], eps = 1e-2f;
        m->params.data[i] = keep + eps;
        double lp = loss_of(m, tok, tgt, B, T);
        m->params.data[i] = keep - eps;
        double lm = loss_of(m, tok, tgt, B, T);
        m->params.data[i] = keep;
        double fd = (lp - lm) / (2 * eps), an = m->params.grad[i];
        double e = fabs(fd - an) / (1e-3 + 5e-2 * fabs(fd));
        if (e > worst) worst = e;
    }
    printf("  FD %-30s worst %.2f of tolerance (atol 1e-3, rtol 5e-2)\n", label, worst);
    CHECK(worst <= 1.0, "%s: finite differences disagree (%.2f)", label, worst);
    model_destroy(m);
}

/* Cached incremental decoding equals the full forward's logits at every position. */
static void decode_matches(const char *const *pairs)
{
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 16; c.heads = 1; c.nhid = 24; c.layers = 2; c.bptt = 16;
    for (int i = 0; pairs[i]; i++)
        config_set_pair(&c, pairs[i], err);
    int V = 13, T = 16;
    Model *m = model_create(&c, V, err);
    CHECK(m != NULL, "%s", err);
    if (!m) return;
    model_alloc(m, 1, T, err);
    int tok[16];
    for (int t = 0; t < T; t++) tok[t] = (t * 7 + 3) % V;
    m->training = 0;
    model_forward(m, tok, NULL, 1, T, NULL, NULL);
    const float *full = m->ops->logits(m);
    DecodeState *ds = m->ops->decode_create(m, err);
    CHECK(ds != NULL, "decode_create: %s", err);
    if (ds) {
        float step[13];
        double worst = 0;
        for (int t = 0; t < T; t++) {
            CHECK(m->ops->decode_step(m, ds, tok[t], t, step) == LM_OK, "step %d", t);
            for (int v = 0; v < V; v++) {
                double e = fabs(step[v] - full[t * V + v]);
                if (e > worst) worst = e;
            }
        }
        printf("  decode %-28s max abs diff %.3g\n", pairs[0], worst);
        CHECK(worst < 1e-4, "cached decoding differs by %g", worst);
        m->ops->decode_destroy(ds);
    }
    model_destroy(m);
}

/* Estimate == allocation for one configuration of every family. */
static void estimate_is_allocation(const char *label, const char *const *pairs, int V, int B,
                                   int T)
{
    char err[LM_ERR_LEN];
    for (int f = 0; f < registry_count(); f++) {
        const ModelFamily *fam = registry_family((ModelKind)f);
        Config c;
        config_defaults(&c);
        c.d = 16; c.nhid = 24; c.layers = 2; c.bptt = 32; /* pairs may change these */
        for (int i = 0; pairs[i]; i++)
            CHECK(config_set_pair(&c, pairs[i], err) == LM_OK, "%s", err);
        CHECK(config_set(&c, "model", fam->name, err) == LM_OK, "%s", err);
        CHECK(c.model_kind == fam->kind && registry_find(fam->name) == fam &&
              !strcmp(config_model_name(fam->kind), fam->name), "%s: kind", fam->name);
        if (c.tie && config_is_recurrent(&c))
            c.nhid = c.d;
        double est = model_estimate_bytes(&c, V, B, T);
        Model *m = model_create(&c, V, err);
        CHECK(m != NULL, "%s %s: %s", label, fam->name, err);
        if (!m)
            continue;
        CHECK(model_alloc(m, B, T, err) == LM_OK, "%s %s alloc: %s", label, fam->name, err);
        double actual = 4.0 * sizeof(float) * (double)m->params.total + (double)m->act_bytes;
        CHECK(est == actual && est > 0, "%s %s: estimate %.0f bytes, allocated %.0f", label,
              fam->name, est, actual);
        model_destroy(m);
        est = model_estimate_weights_bytes(&c, V, B, T);   /* open, sample runs= */
        m = model_create_weights(&c, V, err);
        CHECK(m && model_alloc(m, B, T, err) == LM_OK, "%s %s weights-only: %s", label,
              fam->name, err);
        if (!m)
            continue;
        actual = sizeof(float) * (double)m->params.total + (double)m->act_bytes;
        CHECK(est == actual && est > 0, "%s %s weights-only: estimate %.0f bytes, allocated "
              "%.0f", label, fam->name, est, actual);
        model_destroy(m);
    }
}

static size_t r16(size_t n)
{
    return (n + 15) & ~(size_t)15;   /* every buffer of a layout starts 16 floats apart */
}

/* Bytes of activations a weights-only model (model_create_weights) saves over a training
 * model of configuration c at (B,T): what only backward reads. N = B*T, L layers, each
 * term one buffer rounded to 16 floats, 4 bytes a float or int:
 *  transformer: the buffers of L-1 blocks (mix_out, r1, x1, f, r2: 5 Nd; hpre, hact:
 *    2 Nh; four norm statistics: 4 N; pre-norm's n1: Nd) and pre-norm's unused r2 (Nd);
 *    L - min(L,2) block outputs (Nd); the mixer's saved state: Dispatcher
 *    L 2 Nd - Nd (V_0 and the last level state per layer against one shared state; the
 *    coefficients, N heads levels per layer, stay; they shared one buffer with the values
 *    in training), MSA (L-1) attention_act_floats; dropout masks
 *    (Nd + L (2 Nd + Nh)); backward buffers (dx, dy, dr: 3 Nd; dh, dh2: 2 Nh; the mixer's
 *    scratch; the decoder's dW and db: Vd + V); the N tokens;
 *  linear: ybt and z (2 Nd, written into x's and y's buffers), dz, dybt, dy, dx (4 Nd),
 *    the time-mix scratch;
 *  recurrent: L - min(L,2) hidden-state buffers (NH); L-1 sets of the cell's saved state
 *    (LSTM c: NH, gates: 4 NH; GRU gates: 3 NH, hn: NH); dropout outputs and masks
 *    (Nd + 2 L NH); backward (g0, g1: 2 N max(d,H); da_ih: N G H; GRU da_hh: N G H;
 *    carry: 2 BH; dbt: NH). The decoder's dW and db, which only chunked logits need,
 *    are not taken at these sizes (N x V fits the logit budget). */
static size_t saved_bytes(const Config *c, int B, int T)
{
    size_t N = (size_t)B * T, d = (size_t)c->d, h = (size_t)c->nhid, L = (size_t)c->layers;
    size_t Nd = r16(N * d), Nh = r16(N * h), two = L > 1 ? 2 : 1, fl = 0, ints = 0;
    int drop = c->dropout > 0;
    if (c->model_kind == MODEL_LINEAR) {
        fl = 6 * Nd + r16((size_t)timemix_scratch_floats(T, B * c->d));
    } else if (config_is_recurrent(c)) {
        int lstm = c->model_kind == MODEL_LSTM, gru = c->model_kind == MODEL_GRU;
        size_t G = lstm ? 4 : gru ? 3 : 1, NGH = r16(N * G * h), C = c->d > c->nhid ? d : h;
        size_t cell = (lstm ? Nh : 0) + (G > 1 ? NGH : 0) + (gru ? Nh : 0);
        fl = (L - two) * Nh + (L - 1) * cell + (drop ? Nd + 2 * L * Nh : 0) +
             2 * r16(N * C) + NGH + (gru ? NGH : 0) + r16(2 * (size_t)B * h) + Nh;
    } else {
        DispatcherDims dd = {c->model_kind == MODEL_DISPATCHER_MH ? DISPATCHER_MH
                                                                   : DISPATCHER_PAPER,
                             c->d, c->heads, dispatcher_levels(c->bptt), NULL};
        AttentionDims ad = {c->d, c->heads};
        int msa = c->model_kind == MODEL_MSA;
        /* a training layer's own buffers but its output: r1, x1, r2 (post) or n1 (pre),
         * hact, hpre (gelu only: relu's is hact), the norms' statistics; the weights-only
         * model's one shared set holds these plus mix_out and f (2 Nd), which training
         * sends through its one fwd_tmp (Nd); training's rows of x1 and hact where the
         * backward reads their bf16 packs, or no backward follows: fwd_x1, fwd_h (Nd + Nh) */
        size_t gelu = !strcmp(c->act, "gelu");
        size_t block = 3 * Nd + (1 + gelu) * Nh + 4 * r16(N);
        size_t nc = N * (size_t)c->heads * (size_t)dd.levels;   /* coefficients */
        size_t mixer = msa ? (L - 1) * r16(attention_act_floats(&ad, B, T))
                           : L * (r16(nc + 2 * N * d) - r16(nc)) - r16(N * d);
        size_t scratch = msa ? attention_scratch_floats(&ad, B, T)
                             : dispatcher_scratch_floats(&dd, B, T);
        fl = (L - 1) * block - Nd + (L - two) * Nd + mixer + Nd + Nh +
             (drop ? Nd + L * (2 * Nd + Nh) : 0) + 3 * Nd + 2 * Nh + r16(scratch);
        ints = N;
    }
    return (fl + ints) * 4;
}

/* The same forward in a training model (evaluation mode) and a weights-only model: the
 * loss, the logits and (Dispatcher) every layer's gate coefficients through the gate
 * probe, bit for bit. */
static void same_forward(const char *what, Model *mt, Model *mw, const int *tok,
                         const int *tgt, int B, int T)
{
    char err[LM_ERR_LEN];
    double st = -1, sw = -2;
    long nt = -1, nw = -2;
    int rt = model_forward(mt, tok, tgt, B, T, &st, &nt);
    int rw = model_forward(mw, tok, tgt, B, T, &sw, &nw);
    CHECK(rt == LM_OK && rw == LM_OK, "%s: forward %d / %d", what, rt, rw);
    CHECK(st == sw && nt == nw, "%s: loss %.9g over %ld, weights-only %.9g over %ld", what,
          st, nt, sw, nw);
    model_forward(mt, tok, NULL, B, T, NULL, NULL);
    model_forward(mw, tok, NULL, B, T, NULL, NULL);
    const float *lt = mt->ops->logits(mt), *lw = mw->ops->logits(mw);
    CHECK(lt && lw && !memcmp(lt, lw, (size_t)B * T * mt->vocab * sizeof(float)),
          "%s: logits differ", what);
    if (!mt->n_gate_layers)
        return;
    GateProbe gt, gw;
    CHECK(gate_probe_run(&gt, mt, tok, B, T, 0, err) == LM_OK, "%s: %s", what, err);
    CHECK(gate_probe_run(&gw, mw, tok, B, T, 0, err) == LM_OK, "%s: %s", what, err);
    size_t nc = (size_t)B * mt->gate_heads * T * mt->gate_levels;
    for (int l = 0; l < gt.layers && l < gw.layers; l++)
        CHECK(gt.coeff[l] && gw.coeff[l] && !memcmp(gt.coeff[l], gw.coeff[l], nc * sizeof(float)),
              "%s: gate coefficients of layer %d differ", what, l);
    if (gw.layers > 1)   /* distinct layers: one shared buffer would have shown above */
        CHECK(memcmp(gw.coeff[0], gw.coeff[gw.layers - 1], nc * sizeof(float)) != 0,
              "%s: the first and last layers' coefficients are equal", what);
    gate_probe_free(&gt);
    gate_probe_free(&gw);
}

/* For every family: a weights-only model given a training model's weights forwards the
 * same numbers (at the allocated (B,T), at a smaller window, and with the recurrent
 * state carried over two windows), refuses a training forward, takes saved_bytes fewer
 * bytes of activations, and model_estimate_weights_bytes is what it takes. */
static void weights_only_matches(const char *label, const char *const *pairs)
{
    char err[LM_ERR_LEN];
    /* N = 385 rows: the FFN's row blocks (96) end in one of 97, never of one row */
    int V = 48, B = 11, T = 35, N = B * T;
    for (int f = 0; f < registry_count(); f++) {
        const ModelFamily *fam = registry_family((ModelKind)f);
        Config c;
        config_defaults(&c);
        c.d = 16; c.nhid = 32; c.layers = 3; c.bptt = 64; c.heads = 2; /* pairs may change */
        for (int i = 0; pairs[i]; i++)
            CHECK(config_set_pair(&c, pairs[i], err) == LM_OK, "%s", err);
        CHECK(config_set(&c, "model", fam->name, err) == LM_OK, "%s", err);
        if (c.tie && config_is_recurrent(&c))
            c.nhid = c.d;
        char what[96];
        snprintf(what, sizeof what, "%s %s", label, fam->name);
        Model *mt = model_create(&c, V, err), *mw = model_create_weights(&c, V, err);
        CHECK(mt && mw, "%s: %s", what, err);
        if (!mt || !mw || model_alloc(mt, B, T, err) || model_alloc(mw, B, T, err)) {
            CHECK(0, "%s: %s", what, err);
            model_destroy(mt), model_destroy(mw);
            continue;
        }
        Rng r;
        rng_seed(&r, 99 + (uint64_t)f);
        for (size_t i = 0; i < mt->params.total; i++)   /* away from the initialisation */
            mt->params.data[i] += 0.05f * rng_normal(&r);
        memcpy(mw->params.data, mt->params.data, mt->params.total * sizeof(float));
        int tok[385], tgt[385];
        for (int i = 0; i < N; i++) { tok[i] = (int)rng_below(&r, V); tgt[i] = (int)rng_below(&r, V); }
        tgt[5] = -1;
        same_forward(what, mt, mw, tok, tgt, B, T);
        same_forward(what, mt, mw, tok + 3, tgt + 3, B - 1, T - 5);
        mt->carry_state = mw->carry_state = 1;   /* recurrent: the state of window 1 */
        same_forward(what, mt, mw, tok, tgt, B, T);
        same_forward(what, mt, mw, tok + N / 2, tgt + N / 2, B, T / 2);
        mw->training = 1;
        CHECK(model_forward(mw, tok, tgt, B, T, NULL, NULL) == LM_ESTATE,
              "%s: a training forward of a weights-only model is refused", what);
        size_t saved = saved_bytes(&c, B, T);
        printf("  weights-only %-36s activations %7zu B, training %7zu B (saves %zu)\n", what,
               mw->act_bytes, mt->act_bytes, mt->act_bytes - mw->act_bytes);
        CHECK(mt->act_bytes - mw->act_bytes == saved && saved > 0,
              "%s: saves %zu bytes of activations, want %zu", what,
              mt->act_bytes - mw->act_bytes, saved);
        double est = model_estimate_weights_bytes(&c, V, B, T);
        double actual = sizeof(float) * (double)mw->params.total + (double)mw->act_bytes;
        CHECK(est == actual, "%s: weights-only estimate %.0f bytes, allocated %.0f", what, est,
              actual);
        model_destroy(mt);
        model_destroy(mw);
    }
}

/* For every family, a batch whose logits exceed the 16M-float budget (V classes x 512
 * rows): the activations hold a chunk of logits, not all of them, and the loss, count and
 * gradients equal the sums over the batch's two halves, so the chunks cover every row
 * once and the fused decoder backward lands on the right rows. V = 70000: 240-row chunks,
 * the halves chunked too, elsewhere; V = 40000: 420-row chunks, and the halves' logits
 * fit whole, so the backward that runs the decoder's after the forward is checked
 * against the fused one. */
static void chunked_decoder(int V)
{
    char err[LM_ERR_LEN];
    enum { B = 8, T = 64, N = B * T };
    static int tok[N], tgt[N];
    Rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < N; i++) { tok[i] = (int)rng_below(&r, V); tgt[i] = (int)rng_below(&r, V); }
    tgt[7] = -1;
    for (int f = 0; f < registry_count(); f++) {
        const ModelFamily *fam = registry_family((ModelKind)f);
        Config c;
        config_defaults(&c);
        c.d = 16; c.nhid = 16; c.layers = 1; c.bptt = T; c.dropout = 0;
        CHECK(config_set(&c, "model", fam->name, err) == LM_OK, "%s", err);
        Model *m = model_create(&c, V, err);
        CHECK(m && model_alloc(m, B, T, err) == LM_OK, "%s: %s", fam->name, err);
        if (!m || !m->B) { model_destroy(m); continue; }
        CHECK(m->act_bytes < (size_t)N * V * sizeof(float), "%s: %zu bytes of activations: "
              "all %d x %d logits?", fam->name, m->act_bytes, N, V);
        size_t P = m->params.total;
        float *whole = malloc(P * sizeof *whole);
        double lw = 0, lh[2] = {0, 0};
        long cw = 0, ch[2] = {0, 0};
        m->training = 1;
        params_zero_grad(&m->params);
        CHECK(model_forward(m, tok, tgt, B, T, &lw, &cw) == LM_OK, "%s: forward", fam->name);
        model_backward(m, 1.0f);
        memcpy(whole, m->params.grad, P * sizeof *whole);
        params_zero_grad(&m->params);
        for (int h = 0; h < 2; h++) {   /* grads add up over the halves */
            CHECK(model_forward(m, tok + h * N / 2, tgt + h * N / 2, B / 2, T, &lh[h], &ch[h])
                  == LM_OK, "%s: half %d", fam->name, h);
            model_backward(m, 1.0f);
        }
        CHECK(cw == N - 1 && ch[0] + ch[1] == cw, "%s: counted %ld, halves %ld + %ld",
              fam->name, cw, ch[0], ch[1]);
        CHECK(fabs(lw - (lh[0] + lh[1])) <= 1e-9 * fabs(lw), "%s: loss %.12g, halves %.12g",
              fam->name, lw, lh[0] + lh[1]);
        double worst = 0, mag = 0;
        for (size_t i = 0; i < P; i++) {
            worst = fmax(worst, fabs((double)whole[i] - m->params.grad[i]));
            mag = fmax(mag, fabs((double)whole[i]));
        }
        CHECK(mag > 0 && worst <= 1e-5 * mag, "%s: gradients differ by %.3g (largest %.3g)",
              fam->name, worst, mag);
        printf("  chunked decoder V=%d %-14s %zu bytes of activations (all logits: %zu), loss "
               "%.6f per token, gradients within %.2g of the halves'\n", V, fam->name,
               m->act_bytes, (size_t)N * V * sizeof(float), lw / cw, worst / mag);
        free(whole);
        model_destroy(m);
    }
}

int main(void)
{
    parity("dispatcher_lm");
    parity("dispatcher_mh_lm");
    parity("msa_lm");
    const char *post[] = {"model=dispatcher", NULL};
    const char *pre[] = {"model=dispatcher", "norm=pre", "pos=learned", "act=gelu", "tie=true", NULL};
    const char *mh[] = {"model=dispatcher-mh", "norm=pre", NULL};
    const char *msa[] = {"model=msa", "tie=true", "act=gelu", NULL};
    const char *msapre[] = {"model=msa", "norm=pre", "pos=learned", NULL};
    finite_differences("dispatcher post", post);
    finite_differences("dispatcher pre/learned/gelu/tie", pre);
    finite_differences("dispatcher-mh pre", mh);
    finite_differences("msa tie/gelu", msa);
    finite_differences("msa pre/learned", msapre);
    const char *d1[] = {"model=dispatcher", NULL};
    const char *d2[] = {"model=dispatcher-mh", NULL};
    const char *d3[] = {"model=msa", "heads=4", NULL};
    const char *d4[] = {"model=dispatcher", "norm=pre", "pos=learned", NULL};
    decode_matches(d1);
    decode_matches(d2);
    decode_matches(d3);
    decode_matches(d4);
    const char *plain[] = {NULL};
    const char *drop[] = {"dropout=0.2", "tie=true", NULL};
    const char *prenorm[] = {"norm=pre", "pos=learned", "heads=2", NULL};
    estimate_is_allocation("defaults", plain, 50, 3, 32);
    estimate_is_allocation("dropout/tie", drop, 50, 2, 16);
    estimate_is_allocation("pre-norm/heads", prenorm, 70, 4, 32);
    /* 70000 x 4 x 64 logits exceed the transformer's 16M-float budget: chunked rows */
    const char *long_ctx[] = {"bptt=64", NULL};
    estimate_is_allocation("chunked logits", long_ctx, 70000, 4, 64);
    chunked_decoder(70000);
    chunked_decoder(40000);
    const char *wo_drop[] = {"dropout=0.2", NULL};
    const char *wo_pre[] = {"norm=pre", "pos=learned", "act=gelu", "layers=1", "heads=1", NULL};
    const char *wo_tie[] = {"layers=4", "tie=true", NULL};
    weights_only_matches("dropout, 3 layers", wo_drop);
    weights_only_matches("pre-norm/learned/gelu, 1 layer", wo_pre);
    weights_only_matches("tie, 4 layers", wo_tie);
    char err[LM_ERR_LEN];
    Config bad;
    config_defaults(&bad);
    bad.model_kind = MODEL_N_KINDS;
    CHECK(model_create(&bad, 50, err) == NULL && strstr(err, "unknown model"),
          "a kind outside the registry is refused: %s", err);
    CHECK(model_estimate_bytes(&bad, 50, 2, 8) == 0, "no estimate outside the registry");
    return check_summary();
}
