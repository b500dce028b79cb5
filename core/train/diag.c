/* diag.c — a training run's diagnostics (see diag.h): per-tensor norms, update ratios and
 * histograms from the parameter slabs, and per-block activation, gate and attention
 * numbers from every shard's saved activations, each shard's sums kept apart and added in
 * shard order (under mpirun after one allreduce that only moves each shard's numbers from
 * the process that holds it), so the numbers never depend on threads or processes.
 * All sums in double, element by element in order. Not the event queue nor the storage. */
#include "diag.h"

#include "dist.h"
#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per shard, in this order: for each block [sum, sum_sq, max_abs, n] of its output; for
 * each gate layer and level [entropy sum, saturated, n]; for each block [entropy sum of
 * each attention head..., rows] (zeros for a block without attention). */
enum { ACT_K = 4, GATE_K = 3 };

struct Diag {
    int every;
    int S;                 /* shards of the plan */
    int L;                 /* blocks with an output (0: a family without blocks) */
    int GL, GH, GK;        /* gate layers, heads, levels */
    int AH;                /* attention heads (0: no attention) */
    int *att;              /* (L) 1 when block l has attention */
    size_t K;              /* doubles per shard */
    double *red;           /* (S * K) */
    float *before;         /* (params.total) the weights before the update */
    SeriesBatch *b;        /* being built between collect and finish */
    int cap_scalars;
};

Diag *diag_create(const Model *m, Replicas *r, int every, char *err)
{
    Diag *d = calloc(1, sizeof *d);
    if (!d) goto oom;
    d->every = every;
    d->S = r ? replicas_plan(r)->S : 1;
    d->L = m->ops->block_output ? m->cfg.layers : 0;
    d->GL = m->n_gate_layers;
    d->GH = m->gate_heads;
    d->GK = m->gate_levels;
    d->att = calloc((size_t)(d->L ? d->L : 1), sizeof *d->att);
    if (!d->att) goto oom;
    for (int l = 0; l < d->L; l++)
        if (model_attention_entropy((Model *)m, l, NULL) == LM_OK) {
            d->att[l] = 1;
            d->AH = m->cfg.heads;
        }
    d->K = (size_t)d->L * ACT_K + (size_t)d->GL * d->GK * GATE_K +
           (size_t)d->L * (d->AH + 1);
    d->red = calloc((size_t)d->S * d->K + 1, sizeof *d->red);
    d->before = malloc((m->params.total ? m->params.total : 1) * sizeof *d->before);
    if (!d->red || !d->before) goto oom;
    d->cap_scalars = 3 * m->params.n + 3 * d->L + 2 * d->GL * d->GK + d->L * d->AH;
    return d;
oom:
    diag_destroy(d);
    err_set(err, LM_ENOMEM, "out of memory for diagnostics (a copy of the weights)");
    return NULL;
}

void diag_destroy(Diag *d)
{
    if (!d) return;
    series_batch_free(d->b);
    free(d->att);
    free(d->red);
    free(d->before);
    free(d);
}

int diag_due(const Diag *d, long step)
{
    return d && d->every > 0 && step > 0 && step % d->every == 0;
}

static void add_scalar(SeriesBatch *b, int cap, const char *name, double v)
{
    if (!b->scalars || b->n_scalars >= cap) return;
    NamedScalar *x = &b->scalars[b->n_scalars++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->value = v;
}

/* Largest magnitude with NaN winning (fmax would drop it). */
static double max_nan(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

static double norm2(const float *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    return s;
}

/* The gradient and weight numbers and histograms (the lead alone), and the weights' copy. */
static void collect_params(Diag *d, const Model *m, SeriesBatch *b)
{
    const ParamSet *ps = &m->params;
    for (int i = 0; i < ps->n; i++) {
        const ParamInfo *pi = &ps->info[i];
        const float *w = params_data(ps, i), *g = params_grad(ps, i);
        char name[SERIES_NAME_LEN];
        snprintf(name, sizeof name, "grad/%s", pi->name);
        add_scalar(b, d->cap_scalars, name, sqrt(norm2(g, pi->numel)));
        snprintf(name, sizeof name, "weight/%s", pi->name);
        add_scalar(b, d->cap_scalars, name, sqrt(norm2(w, pi->numel)));
        if (b->hists) {
            NamedHist *hw = &b->hists[b->n_hists++], *hg = &b->hists[b->n_hists++];
            snprintf(hw->name, sizeof hw->name, "hist/weight/%s", pi->name);
            snprintf(hg->name, sizeof hg->name, "hist/grad/%s", pi->name);
            series_hist_fill(&hw->h, w, (long)pi->numel);
            series_hist_fill(&hg->h, g, (long)pi->numel);
        }
    }
    memcpy(d->before, ps->data, ps->total * sizeof *d->before);
}

/* Shard s's sums from the model that computed it, into row (K doubles, zeroed). */
static void shard_sums(Diag *d, Model *m, double *row)
{
    double *p = row;
    for (int l = 0; l < d->L; l++, p += ACT_K) {
        int B = 0, T = 0;
        const float *y = model_block_output(m, l, &B, &T);
        size_t n = y ? (size_t)B * T * m->cfg.d : 0;
        double s = 0, s2 = 0, mx = 0;
        for (size_t i = 0; i < n; i++) {
            s += y[i];
            s2 += (double)y[i] * y[i];
            mx = max_nan(mx, fabs((double)y[i]));
        }
        p[0] = s, p[1] = s2, p[2] = mx, p[3] = (double)n;
    }
    for (int l = 0; l < d->GL; l++) {
        int B = 0, T = 0;
        const float *c = m->ops->gates ? m->ops->gates(m, l) : NULL;
        if (c && !model_block_output(m, l, &B, &T)) c = NULL;
        for (int k = 0; k < d->GK; k++, p += GATE_K)
            for (int i = 0; c && i < B * d->GH; i++)
                for (int t = 1 << k; t < T; t++) {
                    double g = c[((size_t)i * T + t) * d->GK + k];
                    double h = 0;
                    if (isnan(g)) h = NAN;
                    else if (g > 0 && g < 1) h = -(g * log2(g) + (1 - g) * log2(1 - g));
                    p[0] += h;
                    p[1] += g <= 0.01 || g >= 0.99;
                    p[2] += 1;
                }
    }
    for (int l = 0; l < d->L; l++, p += d->AH + 1) {
        int B = 0, T = 0;
        if (d->att[l] && model_block_output(m, l, &B, &T) &&
            model_attention_entropy(m, l, p) == LM_OK)
            p[d->AH] = (double)B * T;
    }
}

/* The activation, gate and attention series from the shards' sums (every rank calls it). */
static void collect_acts(Diag *d, Replicas *r, Model *m0, SeriesBatch *b)
{
    if (!d->K) return;
    memset(d->red, 0, (size_t)d->S * d->K * sizeof *d->red);
    for (int s = 0; s < d->S; s++) {
        Model *m = r ? replicas_shard_model(r, s) : (s == 0 ? m0 : NULL);
        if (m) shard_sums(d, m, d->red + (size_t)s * d->K);
    }
    if (dist_size() > 1) dist_allreduce_sum_f64(d->red, (size_t)d->S * d->K);
    double *tot = calloc(d->K, sizeof *tot);
    if (!tot) return;
    for (int s = 0; s < d->S; s++) {
        const double *row = d->red + (size_t)s * d->K;
        for (size_t j = 0; j < d->K; j++) {
            int is_max = j < (size_t)d->L * ACT_K && j % ACT_K == 2;
            tot[j] = is_max ? (s ? max_nan(tot[j], row[j]) : row[j]) : tot[j] + row[j];
        }
    }
    const double *p = tot;
    char name[SERIES_NAME_LEN];
    int cap = d->cap_scalars;
    for (int l = 0; l < d->L; l++, p += ACT_K) {
        if (p[3] <= 0) continue;
        double mean = p[0] / p[3], var = p[1] / p[3] - mean * mean;
        snprintf(name, sizeof name, "act/%d/mean", l);
        add_scalar(b, cap, name, mean);
        snprintf(name, sizeof name, "act/%d/std", l);
        add_scalar(b, cap, name, var > 0 || isnan(var) ? sqrt(var) : 0);
        snprintf(name, sizeof name, "act/%d/max", l);
        add_scalar(b, cap, name, p[2]);
    }
    for (int l = 0; l < d->GL; l++)
        for (int k = 0; k < d->GK; k++, p += GATE_K) {
            if (p[2] <= 0) continue;
            snprintf(name, sizeof name, "gate_entropy/%d/%d", l, k);
            add_scalar(b, cap, name, p[0] / p[2]);
            snprintf(name, sizeof name, "gate_saturated/%d/%d", l, k);
            add_scalar(b, cap, name, p[1] / p[2]);
        }
    for (int l = 0; l < d->L; l++, p += d->AH + 1)
        for (int h = 0; d->att[l] && h < d->AH && p[d->AH] > 0; h++) {
            snprintf(name, sizeof name, "attn_entropy/%d/%d", l, h);
            add_scalar(b, cap, name, p[h] / p[d->AH]);
        }
    free(tot);
}

void diag_collect(Diag *d, Model *m, Replicas *r, long step)
{
    if (!d) return;
    series_batch_free(d->b);
    int lead = dist_rank() == 0;
    SeriesBatch *b = lead ? calloc(1, sizeof *b) : NULL;
    SeriesBatch scratch = {0};   /* the other ranks: the collective part only */
    if (b) {
        b->step = step;
        b->scalars = calloc((size_t)d->cap_scalars + 1, sizeof *b->scalars);
        b->hists = calloc((size_t)m->params.n * 2 + 1, sizeof *b->hists);
        collect_params(d, m, b);
    }
    collect_acts(d, r, m, b ? b : &scratch);
    d->b = b;
}

SeriesBatch *diag_finish(Diag *d, const Model *m, int updated)
{
    if (!d || !d->b) return NULL;
    SeriesBatch *b = d->b;
    d->b = NULL;
    const ParamSet *ps = &m->params;
    for (int i = 0; updated && i < ps->n; i++) {
        const ParamInfo *pi = &ps->info[i];
        const float *w = params_data(ps, i), *w0 = d->before + pi->offset;
        double dd = 0, ww = norm2(w0, pi->numel);
        for (size_t j = 0; j < pi->numel; j++)
            dd += ((double)w[j] - w0[j]) * ((double)w[j] - w0[j]);
        char name[SERIES_NAME_LEN];
        snprintf(name, sizeof name, "update/%s", pi->name);
        if (ww > 0 || isnan(ww))
            add_scalar(b, d->cap_scalars, name, sqrt(dd) / sqrt(ww));
    }
    if (!b->scalars || !b->hists) {
        series_batch_free(b);
        return NULL;
    }
    return b;
}
