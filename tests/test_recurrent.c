/* test_recurrent.c — the LSTM/GRU/RNN kernels and the recurrent LM family: finite-
 * difference checks of the cell kernels, PyTorch parity on the rnn_* fixtures (logits,
 * loss, every gradient), decode-step == full forward, carried state == one long forward,
 * dropout wiring (FD with a replayed mask), init and configuration checks.
 * Not a training test. */
#include "check.h"
#include "err.h"
#include "model.h"
#include "recurrent.h"
#include "safetensors.h"

#include <string.h>

static const char *kind_names[] = {"lstm", "gru", "rnn"};

/* ---- kernel FD check ---- */

typedef struct {
    int kind, T, B, C, H, G;
    float *w[4], *x, *h0, *c0, *R;   /* weights w_ih, w_hh, b_ih, b_hh */
    RecurrentActs a;
    float *scratch;
} Cell;

static float *rnd(Rng *r, long n, float s)
{
    float *p = malloc((size_t)n * sizeof(float));
    rng_fill_uniform(r, p, n, -s, s);
    return p;
}

static double cell_loss(Cell *c)
{
    RecurrentWeights w = {c->w[0], c->w[1], c->w[2], c->w[3]};
    recurrent_forward(c->kind, &c->a, c->scratch, c->x, c->h0, c->c0, &w, c->T, c->B, c->C,
                      c->H);
    double s = 0;
    for (long i = 0; i < (long)c->T * c->B * c->H; i++)
        s += (double)c->R[i] * c->a.h[i];
    return s;
}

/* Central differences of cell_loss over every entry of p (n), compared to g. */
static void fd_compare(Cell *c, const char *what, float *p, const float *g, long n)
{
    float *num = malloc((size_t)n * sizeof(float));
    const float eps = 1e-2f;
    for (long i = 0; i < n; i++) {
        float keep = p[i];
        p[i] = keep + eps;
        double lp = cell_loss(c);
        p[i] = keep - eps;
        double lm = cell_loss(c);
        p[i] = keep;
        num[i] = (float)((lp - lm) / (2 * eps));
    }
    char label[192];
    snprintf(label, sizeof label, "FD %s %s", kind_names[c->kind], what);
    /* float forward, eps 1e-2: truncation ~eps^2, rounding ~1e-7/eps */
    CHECK_CLOSE(label, g, num, n, 1e-2, 2e-3);
    free(num);
}

static void test_cell_fd(int kind)
{
    Rng r;
    rng_seed(&r, 42 + kind);
    Cell c = {.kind = kind, .T = 4, .B = 2, .C = 3, .H = 5};
    c.G = recurrent_gates(kind);
    long GH = c.G * c.H, N = (long)c.T * c.B;
    long sizes[4] = {GH * c.C, GH * c.H, GH, GH};
    for (int i = 0; i < 4; i++)
        c.w[i] = rnd(&r, sizes[i], 0.6f);
    c.x = rnd(&r, N * c.C, 1.0f);
    c.h0 = rnd(&r, (long)c.B * c.H, 0.5f);
    c.c0 = rnd(&r, (long)c.B * c.H, 0.5f);
    c.R = rnd(&r, N * c.H, 1.0f);
    c.a.h = calloc((size_t)N * c.H, sizeof(float));
    c.a.c = kind == RECURRENT_LSTM ? calloc((size_t)N * c.H, sizeof(float)) : NULL;
    c.a.act = kind != RECURRENT_RNN ? calloc((size_t)N * GH, sizeof(float)) : NULL;
    c.a.hn = kind == RECURRENT_GRU ? calloc((size_t)N * c.H, sizeof(float)) : NULL;
    c.scratch = calloc((size_t)c.B * GH, sizeof(float));
    float *gw[4], *dx = calloc((size_t)N * c.C, sizeof(float));
    for (int i = 0; i < 4; i++)
        gw[i] = calloc((size_t)sizes[i], sizeof(float));
    float *da_ih = calloc((size_t)N * GH, sizeof(float)), *da_hh = calloc((size_t)N * GH, 4);
    float *carry = calloc(2 * (size_t)c.B * c.H, sizeof(float));
    cell_loss(&c);
    RecurrentWeights w = {c.w[0], c.w[1], c.w[2], c.w[3]};
    RecurrentGrads g = {gw[0], gw[1], gw[2], gw[3]};
    recurrent_backward(kind, dx, &g, da_ih, da_hh, carry, c.R, &c.a, c.x, c.h0, c.c0, &w, c.T,
                       c.B, c.C, c.H);
    const char *names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    for (int i = 0; i < 4; i++)
        fd_compare(&c, names[i], c.w[i], gw[i], sizes[i]);
    fd_compare(&c, "input", c.x, dx, N * c.C);
    /* backward adds: a second call doubles every gradient */
    float first = gw[1][3];
    cell_loss(&c);   /* fd_compare left the activations of a perturbed forward */
    recurrent_backward(kind, dx, &g, da_ih, da_hh, carry, c.R, &c.a, c.x, c.h0, c.c0, &w, c.T,
                       c.B, c.C, c.H);
    CHECK(fabsf(gw[1][3] - 2 * first) <= 1e-6f * (1 + fabsf(first)), "backward accumulates");
    for (int i = 0; i < 4; i++) {
        free(c.w[i]);
        free(gw[i]);
    }
    free(c.x); free(c.h0); free(c.c0); free(c.R); free(c.a.h); free(c.a.c); free(c.a.act);
    free(c.a.hn); free(c.scratch); free(dx); free(da_ih); free(da_hh); free(carry);
}

/* ---- the model ---- */

static Model *make_model(const char *kind, int V, int d, int nhid, int layers, int tie,
                         float dropout, char *err)
{
    Model *m = calloc(1, sizeof *m);
    if (config_set(&m->cfg, "model", kind, err)) {
        free(m);
        return NULL;
    }
    m->cfg.d = d;
    m->cfg.nhid = nhid;
    m->cfg.layers = layers;
    m->cfg.tie = tie;
    m->cfg.dropout = dropout;
    m->cfg.seed = 1;
    m->vocab = V;
    params_init(&m->params);
    rng_seed(&m->rng, 1);
    if (model_recurrent_init(m, err) != LM_OK) {
        params_free(&m->params);
        free(m);
        return NULL;
    }
    return m;
}

static const char *fixture(const char *name)
{
    static char path[1024];
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "tests/fixtures", name);
    return path;
}

static int load_params(Model *m, const SafeTensors *st, char *err)
{
    for (int i = 0; i < m->params.n; i++) {
        char name[PARAMS_NAME_LEN + 8];
        snprintf(name, sizeof name, "param.%s", m->params.info[i].name);
        int rc = safetensors_read_f32(st, name, params_data(&m->params, i),
                                      m->params.info[i].numel, err);
        if (rc != LM_OK)
            return rc;
    }
    return LM_OK;
}

/* (T,B,...) fixture layout to (B,T,...) */
static void tb_to_bt(float *dst, const float *src, int T, int B, int C)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            memcpy(dst + ((long)b * T + t) * C, src + ((long)t * B + b) * C,
                   (size_t)C * sizeof(float));
}

static void test_parity(const char *cell, const char *file)
{
    char err[LM_ERR_LEN] = "";
    SafeTensors *st;
    if (safetensors_open(fixture(file), &st, err) != LM_OK) {
        CHECK(0, "%s", err);
        return;
    }
    int V = atoi(safetensors_meta(st, "ntoken")), T = atoi(safetensors_meta(st, "T"));
    int B = atoi(safetensors_meta(st, "B")), d = atoi(safetensors_meta(st, "d"));
    int nhid = atoi(safetensors_meta(st, "nhid")), L = atoi(safetensors_meta(st, "layers"));
    Model *m = make_model(cell, V, d, nhid, L, 1, 0.0f, err);
    CHECK(m != NULL, "init %s: %s", cell, err);
    if (!m) {
        safetensors_close(st);
        return;
    }
    CHECK(m->params.n == 2 + 4 * L, "%s: %d tensors (tied once)", cell, m->params.n);
    CHECK(load_params(m, st, err) == LM_OK, "%s", err);
    int N = T * B, *tok_tb = malloc(N * sizeof(int)), *tgt_tb = malloc(N * sizeof(int));
    int *tok = malloc(N * sizeof(int)), *tgt = malloc(N * sizeof(int));
    safetensors_read_i32(st, "tokens", tok_tb, N, err);
    safetensors_read_i32(st, "targets", tgt_tb, N, err);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            tok[b * T + t] = tok_tb[t * B + b];
            tgt[b * T + t] = tgt_tb[t * B + b];
        }
    float *ref = malloc((size_t)N * V * sizeof(float)), *ref_bt = malloc((size_t)N * V * 4);
    safetensors_read_f32(st, "logits", ref, (size_t)N * V, err);
    tb_to_bt(ref_bt, ref, T, B, V);
    CHECK(m->ops->alloc(m, B, T, err) == LM_OK, "%s", err);
    char label[192];
    /* logits: no targets */
    CHECK(m->ops->forward(m, tok, NULL, B, T, NULL, NULL) == LM_OK, "forward");
    snprintf(label, sizeof label, "%s logits", cell);
    CHECK_CLOSE(label, m->ops->logits(m), ref_bt, (long)N * V, 1e-5, 1e-5);
    /* loss and gradients in training mode */
    m->training = 1;
    double loss_sum = 0;
    long count = 0;
    CHECK(m->ops->forward(m, tok, tgt, B, T, &loss_sum, &count) == LM_OK, "forward");
    float loss = (float)(loss_sum / count), ref_loss;
    safetensors_read_f32(st, "loss", &ref_loss, 1, err);
    snprintf(label, sizeof label, "%s loss", cell);
    CHECK_CLOSE(label, &loss, &ref_loss, 1, 1e-5, 1e-6);
    params_zero_grad(&m->params);
    m->ops->backward(m, 1.0f / (float)count);
    for (int i = 0; i < m->params.n; i++) {
        char name[PARAMS_NAME_LEN + 8];
        size_t n = m->params.info[i].numel;
        float *g = malloc(n * sizeof(float));
        snprintf(name, sizeof name, "grad.%s", m->params.info[i].name);
        CHECK(safetensors_read_f32(st, name, g, n, err) == LM_OK, "%s", err);
        snprintf(label, sizeof label, "%s %s", cell, name);
        CHECK_CLOSE(label, params_grad(&m->params, i), g, (long)n, 1e-5, 1e-5);
        free(g);
    }
    free(tok_tb); free(tgt_tb); free(tok); free(tgt); free(ref); free(ref_bt);
    model_destroy(m);
    safetensors_close(st);
}

/* Decode step by step == full forward; carried halves == one forward; reset works. */
static void test_decode_and_carry(const char *cell)
{
    char err[LM_ERR_LEN] = "", label[192];
    int V = 23, T = 8, B = 3;
    Model *m = make_model(cell, V, 12, 10, 2, 0, 0.0f, err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    Rng r;
    rng_seed(&r, 7);
    int tok[24];
    for (int i = 0; i < B * T; i++)
        tok[i] = (int)rng_below(&r, V);
    m->ops->alloc(m, B, T, err);
    m->ops->forward(m, tok, NULL, B, T, NULL, NULL);
    float *full = malloc((size_t)B * T * V * sizeof(float)), *step = malloc(V * sizeof(float));
    memcpy(full, m->ops->logits(m), (size_t)B * T * V * sizeof(float));
    DecodeState *ds = m->ops->decode_create(m, err);
    double worst = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            m->ops->decode_step(m, ds, tok[b * T + t], t, step);
            for (int v = 0; v < V; v++)
                worst = fmax(worst, fabs(step[v] - full[((long)b * T + t) * V + v]));
        }
    printf("  %-40s max abs err %.3g\n", cell, worst);
    CHECK(worst <= 1e-4, "%s decode vs forward: %g", cell, worst);
    m->ops->decode_destroy(ds);
    /* carried state: two halves of T/2 == one forward of T */
    m->carry_state = 1;
    m->ops->reset_state(m);
    int half[2][12];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            half[t / (T / 2)][b * (T / 2) + t % (T / 2)] = tok[b * T + t];
    float *two = malloc((size_t)B * T * V * sizeof(float));
    for (int k = 0; k < 2; k++) {
        m->ops->forward(m, half[k], NULL, B, T / 2, NULL, NULL);
        const float *lg = m->ops->logits(m);
        for (int b = 0; b < B; b++)
            memcpy(two + ((long)b * T + k * (T / 2)) * V, lg + (long)b * (T / 2) * V,
                   (size_t)(T / 2) * V * sizeof(float));
    }
    snprintf(label, sizeof label, "%s carried halves vs full", cell);
    CHECK_CLOSE(label, two, full, (long)B * T * V, 1e-5, 1e-5);
    /* without reset the next forward differs from a fresh one; after reset it matches */
    m->ops->forward(m, tok, NULL, B, T, NULL, NULL);
    double diff = 0;
    for (long i = 0; i < (long)B * T * V; i++)
        diff = fmax(diff, fabs(m->ops->logits(m)[i] - full[i]));
    CHECK(diff > 1e-4, "%s: carried state changes the output (%g)", cell, diff);
    m->ops->reset_state(m);
    m->ops->forward(m, tok, NULL, B, T, NULL, NULL);
    snprintf(label, sizeof label, "%s after reset_state", cell);
    CHECK_CLOSE(label, m->ops->logits(m), full, (long)B * T * V, 0, 1e-7);
    free(full); free(step); free(two);
    model_destroy(m);
}

/* Model-level FD with dropout: the rng is replayed so every forward draws the same masks. */
static void test_dropout_fd(const char *cell, int tie)
{
    char err[LM_ERR_LEN] = "", label[192];
    int V = 11, T = 5, B = 2;
    Model *m = make_model(cell, V, 6, tie ? 6 : 7, 2, tie, 0.3f, err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    Rng r;
    rng_seed(&r, 9);
    int tok[10], tgt[10];
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int)rng_below(&r, V);
        tgt[i] = i == 3 ? -1 : (int)rng_below(&r, V);   /* one ignored target */
    }
    m->ops->alloc(m, B, T, err);
    m->training = 1;
    Rng keep = m->rng;
    double base;
    long count;
    model_forward(m, tok, tgt, B, T, &base, &count);
    CHECK(count == B * T - 1, "count %ld", count);
    params_zero_grad(&m->params);
    m->ops->backward(m, 1.0f);
    for (int i = 0; i < m->params.n; i++) {
        float *p = params_data(&m->params, i), *g = params_grad(&m->params, i);
        int n = (int)m->params.info[i].numel, k = n < 12 ? n : 12;
        float num[12], ana[12];
        for (int j = 0; j < k; j++) {
            int idx = (int)((long)j * 7919 % n);
            float save = p[idx], eps = 1e-2f;
            double lp, lm;
            p[idx] = save + eps;
            m->rng = keep;
            model_forward(m, tok, tgt, B, T, &lp, &count);
            p[idx] = save - eps;
            m->rng = keep;
            model_forward(m, tok, tgt, B, T, &lm, &count);
            p[idx] = save;
            num[j] = (float)((lp - lm) / (2 * eps));
            ana[j] = g[idx];
        }
        snprintf(label, sizeof label, "FD dropout %s%s %s", cell, tie ? " tied" : "",
                 m->params.info[i].name);
        CHECK_CLOSE(label, ana, num, k, 2e-2, 3e-3);
    }
    model_destroy(m);
}

static void test_init(void)
{
    char err[LM_ERR_LEN] = "";
    Model *m = make_model("lstm", 10, 8, 9, 1, 1, 0.0f, err);
    CHECK(m == NULL && strstr(err, "d == nhid"), "tie with d != nhid refused: %s", err);
    m = make_model("transformer", 10, 8, 8, 1, 0, 0.0f, err);
    CHECK(m == NULL, "unknown model refused: %s", err);
    m = make_model("gru", 50, 8, 16, 2, 0, 0.0f, err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    const ParamSet *ps = &m->params;
    int ok = 1;
    for (int i = 0; i < ps->n; i++) {
        const char *nm = ps->info[i].name;
        float bound = !strncmp(nm, "rnn.", 4) ? 0.25f : !strcmp(nm, "decoder.bias") ? 0 : 0.1f;
        float mx = 0;
        for (size_t j = 0; j < ps->info[i].numel; j++)
            mx = fmaxf(mx, fabsf(params_data(ps, i)[j]));
        ok &= mx <= bound && (bound == 0 || mx > 0.8f * bound);
    }
    CHECK(ok, "init ranges: encoder/decoder 0.1, rnn 1/sqrt(nhid), decoder bias 0");
    CHECK(params_find(ps, "decoder.weight") >= 0 && m->ops->gates == NULL && m->n_gate_layers == 0, "untied");
    model_destroy(m);
}

int main(void)
{
    for (int k = 0; k < 3; k++)
        test_cell_fd(k);
    test_parity("lstm", "rnn_lstm.safetensors");
    test_parity("gru", "rnn_gru.safetensors");
    test_parity("rnn", "rnn_rnn_tanh.safetensors");
    for (int k = 0; k < 3; k++) {
        test_decode_and_carry(kind_names[k]);
        test_dropout_fd(kind_names[k], 0);
        test_dropout_fd(kind_names[k], 1);
    }
    test_init();
    return check_summary();
}
