/* model.c — creating a model from its configuration and the thin wrappers over the
 * family vtable (model.h). Which family a name means is decided here and only here. */
#include "model.h"

#include "dispatcher.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

Model *model_create(const Config *cfg, int V, char *err)
{
    if (V < 2) {
        err_set(err, LM_EARG, "vocabulary of %d tokens: need at least 2", V);
        return NULL;
    }
    if (config_validate(cfg, err))
        return NULL;
    Model *m = calloc(1, sizeof *m);
    if (!m) {
        err_set(err, LM_ENOMEM, "out of memory creating the model");
        return NULL;
    }
    m->cfg = *cfg;
    m->vocab = V;
    params_init(&m->params);
    rng_seed(&m->rng, (uint64_t)cfg->seed);
    int rc;
    if (config_is_transformer(cfg))
        rc = model_transformer_init(m, err);
    else if (config_is_recurrent(cfg))
        rc = model_recurrent_init(m, err);
    else if (!strcmp(cfg->model, "linear"))
        rc = model_linear_init(m, err);
    else
        rc = err_set(err, LM_EARG, "unknown model '%s'", cfg->model);
    if (rc) {
        if (m->ops && m->ops->destroy)
            m->ops->destroy(m);
        params_free(&m->params);
        free(m);
        return NULL;
    }
    return m;
}

void model_destroy(Model *m)
{
    if (!m)
        return;
    if (m->ops && m->ops->destroy)
        m->ops->destroy(m);
    params_free(&m->params);
    free(m);
}

int model_alloc(Model *m, int B, int T, char *err)
{
    if (B < 1 || T < 1)
        return err_set(err, LM_EARG, "batch=%d x T=%d: both must be positive", B, T);
    return m->ops->alloc(m, B, T, err);
}

int model_forward(Model *m, const int *tokens, const int *targets, int B, int T,
                  double *loss_sum, long *count)
{
    return m->ops->forward(m, tokens, targets, B, T, loss_sum, count);
}

void model_backward(Model *m, float scale)
{
    m->ops->backward(m, scale);
}

long model_param_count(const Model *m)
{
    long n = 0;
    for (int i = 0; i < m->params.n; i++)
        n += (long)m->params.info[i].numel;
    return n;
}

/* Floats of parameters for the configuration (an estimate for recurrent/linear). */
static double param_floats(const Config *c, int V)
{
    double d = c->d, h = c->nhid, L = c->layers, emb = (double)V * d;
    double dec = c->tie ? V : (double)V * d + V;
    if (config_is_transformer(c)) {
        double mix = !strcmp(c->model, "msa") ? 4 * d * d + 4 * d
                   : !strcmp(c->model, "dispatcher") ? 2 * (d / c->heads) * (d / c->heads) +
                                                         config_levels(c) * (d / c->heads)
                   : 2 * d * d + config_levels(c) * c->heads * d;
        return emb + dec + L * (mix + 2 * d * h + h + d + 4 * d);
    }
    if (config_is_recurrent(c))
        return emb + dec + L * 4 * (h * (d > h ? d : h) + h * h + 2 * h);
    return emb + (double)c->bptt * c->bptt + d * d + d;
}

double model_estimate_bytes(const Config *c, int V, int B, int T)
{
    double P = param_floats(c, V);
    double N = (double)B * T, d = c->d, h = c->nhid, acts;
    if (config_is_transformer(c)) {
        double mix = !strcmp(c->model, "msa") ? 4 * N * d + (double)B * c->heads * T * T * 2
                                              : (config_levels(c) + 2) * N * d;
        acts = c->layers * (mix + 9 * N * d + 2 * N * h) + 8 * N * d + 2 * N * h;
        double logit_rows = N * V <= (16 << 20) ? N : (16 << 20) / (double)V;
        acts += logit_rows * V + (double)V * d;
    } else if (config_is_recurrent(c)) {
        acts = c->layers * N * h * 8 + N * (d + h) + N * V;
    } else {
        acts = N * d * 4 + N * V * 2 + (double)B * c->bptt * d * 2;
    }
    return 4.0 * (4 * P + acts);
}
