/* test_diag.c — the training diagnostics (diag.h) against hand computations on tiny
 * models (MSA d=8, 2 heads; Dispatcher d=8, 3 levels; one block, batch 3 in 3 shards):
 *   grad/<t>    the L2 norm of the whole batch's gradient from a separate model that runs
 *               the batch unsharded (1e-5: another order of float sums);
 *   weight/<t>  the L2 norm of the initial weights; update/<t> = ||w' - w|| / ||w|| with
 *               w' = w - 0.1 g in float, one plain SGD step (lr 0.1, no clipping);
 *   act/0/mean|std|max  mean, std, max of the unsharded model's block output, itself checked as
 *               the decoder's input (the loss recomputed by hand from it);
 *   attn_entropy  the attention kernel's entropies against softmax(q k^T / sqrt(hd))
 *               computed by hand from the input and weights, then the sharded run's against
 *               the unsharded model's;
 *   gate_entropy / gate_saturated  binary entropy in bits and the share <= 0.01 or >= 0.99
 *               by hand from the unsharded model's gate coefficients (gate weights scaled
 *               up so that some saturate);
 *   hist/weight, hist/grad  the 64 bins of the tensors;
 * the same numbers, bit for bit, on 1 and 3 threads; and a diverging step (a NaN gradient,
 * an infinite weight) recorded as NaN and Inf without an update ratio. */
#include "attention.h"
#include "check.h"
#include "config.h"
#include "diag.h"
#include "err.h"
#include "model.h"
#include "optim.h"
#include "replicas.h"
#include "shardplan.h"
#include "update.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, V = 7 };

static int close_rel(double a, double b, double tol)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= tol * fmax(1e-12, fmax(fabs(a), fabs(b)));
}

static const NamedScalar *find(const SeriesBatch *b, const char *name)
{
    for (int i = 0; b && i < b->n_scalars; i++)
        if (!strcmp(b->scalars[i].name, name)) return &b->scalars[i];
    return NULL;
}

static double val(const SeriesBatch *b, const char *name)
{
    const NamedScalar *s = find(b, name);
    CHECK(s != NULL, "series %s present", name);
    return s ? s->value : NAN;
}

static Model *tiny(const char *family, int T, char *err)
{
    Config c;
    config_defaults(&c);
    CHECK(config_set(&c, "model", family, err) == LM_OK, "model=%s: %s", family, err);
    c.d = 8; c.nhid = 16; c.layers = 1; c.bptt = T; c.batch = B; c.dropout = 0; c.tie = 0;
    c.heads = !strcmp(family, "msa") ? 2 : 1;
    Model *m = model_create(&c, V, err);
    CHECK(m && model_alloc(m, B, T, err) == LM_OK, "model: %s", err);
    return m;
}

/* Gate weights scaled so that some gates saturate (Dispatcher only). */
static void sharpen(Model *m)
{
    int g = params_find(&m->params, "blocks.0.mixer.internal_attention.weight");
    if (g < 0) return;
    float *w = params_data(&m->params, g);
    for (size_t i = 0; i < m->params.info[g].numel; i++) w[i] *= 40;
}

/* One diagnosed step of `family` on `threads` threads, batch in 3 shards, SGD lr 0.1. */
static SeriesBatch *diagnosed_step(const char *family, int T, int threads, const int *x,
                                   const int *y, float **g_out)
{
    char err[LM_ERR_LEN];
    Model *m = tiny(family, T, err);
    sharpen(m);
    ShardPlan plan;
    CHECK(shardplan_init(&plan, B, 3, err) == LM_OK, "plan: %s", err);
    Replicas *r = replicas_create(m, &plan, 0, plan.S, threads, T, err);
    CHECK(r != NULL, "replicas: %s", err);
    Diag *dg = diag_create(m, r, 1, err);
    CHECK(dg && diag_due(dg, 1) && !diag_due(NULL, 1), "diag_create: %s", err);
    m->training = 1;
    double loss;
    long n;
    CHECK(replicas_step(r, x, y, B, T, &loss, &n) == LM_OK, "step");
    float gn = update_grad_norm(r, &m->params);
    if (g_out) {
        *g_out = malloc(m->params.total * sizeof(float));
        memcpy(*g_out, m->params.grad, m->params.total * sizeof(float));
    }
    diag_collect(dg, m, r, 1);
    Optimizer o;
    CHECK(optim_init(&o, OPTIM_SGD, m->params.total, 0.9f, 0.999f, 1e-8f, 0, 0, err) == LM_OK,
          "optim: %s", err);
    update_apply(r, &o, &m->params, gn, 0, 0.1f);
    SeriesBatch *b = diag_finish(dg, m, 1);
    CHECK(b && b->step == 1, "a batch");
    optim_free(&o);
    diag_destroy(dg);
    replicas_destroy(r);
    model_destroy(m);
    return b;
}

static void check_params(const char *family, const SeriesBatch *b, Model *ref,
                         const float *g_shard)
{
    const ParamSet *ps = &ref->params;
    for (int i = 0; i < ps->n; i++) {
        const ParamInfo *pi = &ps->info[i];
        const float *w = params_data(ps, i), *g = params_grad(ps, i);
        double gg = 0, ww = 0, gs = 0;
        for (size_t j = 0; j < pi->numel; j++) {
            gg += (double)g[j] * g[j];
            ww += (double)w[j] * w[j];
            float wn = w[j] - 0.1f * g_shard[pi->offset + j];   /* the step, in float */
            gs += ((double)wn - w[j]) * ((double)wn - w[j]);
        }
        char name[SERIES_NAME_LEN];
        snprintf(name, sizeof name, "grad/%s", pi->name);
        CHECK(close_rel(val(b, name), sqrt(gg), 1e-5), "%s %s: %.9g vs %.9g by hand", family,
              name, val(b, name), sqrt(gg));
        snprintf(name, sizeof name, "weight/%s", pi->name);
        CHECK(close_rel(val(b, name), sqrt(ww), 1e-12), "%s %s", family, name);
        snprintf(name, sizeof name, "update/%s", pi->name);
        if (ww > 0)
            CHECK(close_rel(val(b, name), sqrt(gs) / sqrt(ww), 1e-9), "%s %s: %.9g vs "
                  "%.9g", family, name, val(b, name), sqrt(gs) / sqrt(ww));
        else
            CHECK(!find(b, name), "%s %s: no ratio for an all-zero tensor", family, name);
        SeriesHist want;
        series_hist_fill(&want, w, (long)pi->numel);
        int found = 0;
        snprintf(name, sizeof name, "hist/weight/%s", pi->name);
        for (int h = 0; h < b->n_hists; h++)
            if (!strcmp(b->hists[h].name, name))
                found = !memcmp(b->hists[h].h.counts, want.counts, sizeof want.counts) &&
                        b->hists[h].h.num == (long)pi->numel;
        CHECK(found, "%s %s: the weights' bins", family, name);
    }
}

/* The unsharded model's block output: its mean, std and max by hand, and the loss
 * recomputed from it through the decoder (post-norm: it is the decoder's input). */
static void check_acts(const char *family, const SeriesBatch *b, Model *ref, int T,
                       const int *y, double ref_loss)
{
    int rB = 0, rT = 0, d = ref->cfg.d;
    const float *out = model_block_output(ref, 0, &rB, &rT);
    CHECK(out && rB == B && rT == T, "%s: the block output of the last forward", family);
    if (!out) return;
    size_t n = (size_t)B * T * d;
    double s = 0, s2 = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        s += out[i];
        mx = fmax(mx, fabs(out[i]));
    }
    double mean = s / n;
    for (size_t i = 0; i < n; i++) s2 += (out[i] - mean) * (out[i] - mean);
    CHECK(close_rel(val(b, "act/0/mean"), mean, 1e-9), "%s act mean %.12g vs %.12g", family,
          val(b, "act/0/mean"), mean);
    CHECK(close_rel(val(b, "act/0/std"), sqrt(s2 / n), 1e-9), "%s act std", family);
    CHECK(val(b, "act/0/max") == mx, "%s act max", family);
    const float *W = params_data(&ref->params, params_find(&ref->params, "decoder.weight"));
    const float *bias = params_data(&ref->params, params_find(&ref->params, "decoder.bias"));
    double loss = 0;
    for (int r = 0; r < B * T; r++) {
        double z[V], zmax = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++) {
            z[v] = bias[v];
            for (int k = 0; k < d; k++) z[v] += (double)out[(size_t)r * d + k] * W[v * d + k];
            zmax = fmax(zmax, z[v]);
        }
        for (int v = 0; v < V; v++) sum += exp(z[v] - zmax);
        loss += log(sum) + zmax - z[y[r]];
    }
    CHECK(close_rel(loss, ref_loss, 1e-4), "%s: the block output is the decoder's input "
          "(loss %.7g by hand, %.7g)", family, loss, ref_loss);
}

/* The attention kernel's entropies against a softmax by hand (B=2, T=5, d=4, 2 heads). */
static void test_attention_kernel(void)
{
    enum { b2 = 2, T = 5, d = 4, H = 2, hd = 2 };
    AttentionDims ad = {.d = d, .heads = H};
    float inp[b2 * T * d], wq[3 * d * d], bq[3 * d], wo[d * d], bo[d], out[b2 * T * d];
    for (int i = 0; i < b2 * T * d; i++) inp[i] = sinf(0.7f * i);
    for (int i = 0; i < 3 * d * d; i++) wq[i] = cosf(1.3f * i);
    for (int i = 0; i < 3 * d; i++) bq[i] = 0.1f * i - 0.5f;
    for (int i = 0; i < d * d; i++) wo[i] = 0.05f * i;
    memset(bo, 0, sizeof bo);
    float *act = calloc(attention_act_floats(&ad, b2, T), sizeof(float));
    attention_forward(&ad, out, act, inp, wq, bq, wo, bo, b2, T);
    double got[H] = {0}, want[H] = {0}, row[T];
    attention_entropy_sum(&ad, act, b2, T, got, row);
    for (int b = 0; b < b2; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                double q[hd], s[T], z = 0, e = 0;
                for (int c = 0; c < hd; c++) {
                    q[c] = bq[h * hd + c];
                    for (int k = 0; k < d; k++)
                        q[c] += (double)inp[(b * T + i) * d + k] * wq[(h * hd + c) * d + k];
                }
                for (int j = 0; j <= i; j++) {
                    s[j] = 0;
                    for (int c = 0; c < hd; c++) {
                        double kk = bq[d + h * hd + c];
                        for (int k = 0; k < d; k++)
                            kk += (double)inp[(b * T + j) * d + k] * wq[(d + h * hd + c) * d + k];
                        s[j] += q[c] * kk / sqrt((double)hd);
                    }
                    z += exp(s[j]);
                }
                for (int j = 0; j <= i; j++) {
                    double p = exp(s[j]) / z;
                    e -= p * log(p);
                }
                want[h] += e;
            }
    for (int h = 0; h < H; h++)
        CHECK(close_rel(got[h], want[h], 1e-5), "head %d entropy %.9g vs %.9g by hand", h,
              got[h], want[h]);
    free(act);
}

static void test_family(const char *family, int T)
{
    char err[LM_ERR_LEN];
    int x[B * 16], y[B * 16];
    for (int i = 0; i < B * T; i++) {
        x[i] = (i * 5 + 1) % V;
        y[i] = (i * 3 + 2) % V;
    }
    float *g1 = NULL, *g3 = NULL;
    SeriesBatch *b1 = diagnosed_step(family, T, 1, x, y, &g1);
    SeriesBatch *b3 = diagnosed_step(family, T, 3, x, y, &g3);
    int same = b1 && b3 && b1->n_scalars == b3->n_scalars && b1->n_hists == b3->n_hists;
    for (int i = 0; same && i < b1->n_scalars; i++)
        same = !strcmp(b1->scalars[i].name, b3->scalars[i].name) &&
               !memcmp(&b1->scalars[i].value, &b3->scalars[i].value, sizeof(double));
    for (int i = 0; same && i < b1->n_hists; i++)
        same = !memcmp(&b1->hists[i], &b3->hists[i], sizeof b1->hists[i]);
    CHECK(same, "%s: 1 and 3 threads give the same numbers to the bit", family);

    /* the reference: the same initial model, the whole batch unsharded */
    Model *ref = tiny(family, T, err);
    sharpen(ref);
    ref->training = 1;
    double loss;
    long n;
    params_zero_grad(&ref->params);
    CHECK(model_forward(ref, x, y, B, T, &loss, &n) == LM_OK, "ref forward");
    model_backward(ref, 1.0f / (float)n);
    check_params(family, b1, ref, g1);
    check_acts(family, b1, ref, T, y, loss);
    if (!strcmp(family, "msa")) {
        double sum[2] = {0};
        CHECK(model_attention_entropy(ref, 0, sum) == LM_OK, "entropy");
        for (int h = 0; h < 2; h++) {
            char name[64];
            snprintf(name, sizeof name, "attn_entropy/0/%d", h);
            CHECK(close_rel(val(b1, name), sum[h] / (B * T), 1e-9), "%s %.12g vs %.12g", name,
                  val(b1, name), sum[h] / (B * T));
        }
        CHECK(!find(b1, "gate_entropy/0/0"), "no gates in MSA");
    } else {
        const float *c = ref->ops->gates(ref, 0);
        int K = ref->gate_levels, partly = 0;
        CHECK(c && K == 3, "gates: %d levels", K);
        for (int k = 0; c && k < K; k++) {
            double e = 0, sat = 0, cnt = 0;
            for (int i = 0; i < B * ref->gate_heads; i++)
                for (int t = 1 << k; t < T; t++) {
                    double g = c[((size_t)i * T + t) * K + k];
                    e += g <= 0 || g >= 1 ? 0 : -(g * log2(g) + (1 - g) * log2(1 - g));
                    sat += g <= 0.01 || g >= 0.99;
                    cnt++;
                }
            char name[64];
            snprintf(name, sizeof name, "gate_entropy/0/%d", k);
            CHECK(close_rel(val(b1, name), e / cnt, 1e-9), "%s: %.9g vs %.9g by hand", name,
                  val(b1, name), e / cnt);
            snprintf(name, sizeof name, "gate_saturated/0/%d", k);
            CHECK(val(b1, name) == sat / cnt, "%s: %.9g vs %.9g by hand", name, val(b1, name),
                  sat / cnt);
            partly |= sat > 0 && sat < cnt;
        }
        CHECK(partly, "some level has saturated and unsaturated gates (a real test)");
        CHECK(!find(b1, "attn_entropy/0/0"), "no attention in a Dispatcher");
    }
    model_destroy(ref);
    series_batch_free(b1);
    series_batch_free(b3);
    free(g1);
    free(g3);
}

/* A diverging step: a NaN gradient and an infinite weight are recorded as such, and
 * finishing without an update gives no ratios. */
static void test_nonfinite(void)
{
    char err[LM_ERR_LEN];
    Model *m = tiny("msa", 4, err);
    Diag *dg = diag_create(m, NULL, 100, err);
    CHECK(dg && !diag_due(dg, 1) && diag_due(dg, 200), "every 100");
    int x[B * 4], y[B * 4];
    for (int i = 0; i < B * 4; i++) x[i] = y[i] = i % V;
    m->training = 1;
    double loss;
    long n;
    params_zero_grad(&m->params);
    model_forward(m, x, y, B, 4, &loss, &n);
    model_backward(m, 1.0f / (float)n);
    params_grad(&m->params, 0)[0] = NAN;
    params_data(&m->params, 1)[0] = INFINITY;
    diag_collect(dg, m, NULL, 7);
    SeriesBatch *b = diag_finish(dg, m, 0);
    char g0[SERIES_NAME_LEN], w1[SERIES_NAME_LEN];
    snprintf(g0, sizeof g0, "grad/%s", m->params.info[0].name);
    snprintf(w1, sizeof w1, "weight/%s", m->params.info[1].name);
    CHECK(b && b->step == 7 && isnan(val(b, g0)) && isinf(val(b, w1)), "NaN and Inf kept");
    int nan_bins = 0, inf_bins = 0, ratios = 0;
    for (int h = 0; b && h < b->n_hists; h++) {
        nan_bins += b->hists[h].h.n_nan;
        inf_bins += b->hists[h].h.n_posinf;
    }
    for (int i = 0; b && i < b->n_scalars; i++) ratios += !strncmp(b->scalars[i].name, "update/", 7);
    CHECK(nan_bins == 1 && inf_bins == 1 && ratios == 0, "histograms count them apart (%d, "
          "%d); no update ratio without an update (%d)", nan_bins, inf_bins, ratios);
    CHECK(!diag_finish(dg, m, 1), "finish twice: nothing");
    series_batch_free(b);
    diag_destroy(dg);
    model_destroy(m);
}

int main(void)
{
    test_attention_kernel();
    test_family("msa", 4);
    test_family("dispatcher", 8);
    test_nonfinite();
    return check_summary();
}
