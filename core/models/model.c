/* model.c — creating a model from its configuration and the thin wrappers over the
 * family vtable (model.h). Which family a configuration means is the registry's
 * (families.def, parsed once by config_set); nothing here knows a family by name. */
#include "model.h"

#include "err.h"
#include "matmul.h"
#include "registry.h"
#include "sysinfo.h"

#include <stdlib.h>
#include <string.h>

/* mode 0: everything; 1: weights without gradients; 2: parameters registered only. */
static Model *model_build(const Config *cfg, int V, int mode, char *err)
{
    if (V < 2) {
        err_set(err, LM_EARG, "vocabulary of %d tokens: need at least 2", V);
        return NULL;
    }
    if (config_validate(cfg, err))
        return NULL;
    const ModelFamily *fam = registry_family(cfg->model_kind);
    if (!fam) {
        err_set(err, LM_EARG, "unknown model '%s' (set it with model=NAME)", cfg->model);
        return NULL;
    }
    Model *m = calloc(1, sizeof *m);
    if (!m) {
        err_set(err, LM_ENOMEM, "out of memory creating the model");
        return NULL;
    }
    m->cfg = *cfg;
    m->vocab = V;
    m->weights_only = mode == 1;
    m->estimate_only = mode == 2;
    params_init(&m->params);
    rng_seed(&m->rng, (uint64_t)cfg->seed);
    int rc = fam->init(m, err);
    if (rc) {
        if (m->ops && m->ops->destroy)
            m->ops->destroy(m);
        params_free(&m->params);
        free(m);
        return NULL;
    }
    return m;
}

Model *model_create(const Config *cfg, int V, char *err)
{
    return model_build(cfg, V, 0, err);
}

Model *model_create_weights(const Config *cfg, int V, char *err)
{
    return model_build(cfg, V, 1, err);
}

Model *model_describe(const Config *cfg, int V, char *err)
{
    return model_build(cfg, V, 2, err);
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
    if (m->training && m->weights_only)   /* it has no masks or saved activations */
        return LM_ESTATE;
    if (m->training && !m->drop_set)
        model_drop_key(m, model_drop_seed(m), 0);
    m->drop.site = 0;
    m->drop_set = 0;
    const void *scope = matmul_scope_enter(m->params.data);   /* bf16 if its slab is */
    int rc = m->ops->forward(m, tokens, targets, B, T, loss_sum, count);
    matmul_scope_exit(scope);
    return rc;
}

/* The slab's bytes as aligned_alloc is asked for them (a multiple of its 64). */
static size_t slab_bytes(size_t n_floats)
{
    return (n_floats * sizeof(float) + 63) & ~(size_t)63;
}

size_t model_act_bytes(size_t n_floats, size_t n_ints)
{
    return slab_bytes(n_floats) + n_ints * sizeof(int);
}

int model_act_alloc(Model *m, size_t n_floats, size_t n_ints, float **slab, int **ints, int B,
                    int T, char *err)
{
    size_t bytes = slab_bytes(n_floats);
    *slab = aligned_alloc(64, bytes ? bytes : 64);
    *ints = malloc(n_ints ? n_ints * sizeof(int) : 1);
    if (!*slab || !*ints) {
        free(*slab);
        free(*ints);
        *slab = NULL;
        *ints = NULL;
        m->B = m->T = 0;
        double mib = (double)model_act_bytes(n_floats, n_ints) / (1 << 20);
        return err_set(err, LM_ENOMEM, "cannot allocate %.1f %s of activations for batch=%d "
                       "x bptt=%d: lower batch or bptt", mib >= 1024 ? mib / 1024 : mib,
                       mib >= 1024 ? "GiB" : "MiB", B, T);
    }
    memset(*slab, 0, n_floats * sizeof(float));
    m->act_bytes = model_act_bytes(n_floats, n_ints);
    return LM_OK;
}

void model_drop_key(Model *m, uint64_t seed, long row0)
{
    m->drop = (DropKey){.seed = seed, .row0 = row0};
    m->drop_set = 1;
}

uint64_t model_drop_seed(Model *m)
{
    uint64_t hi = rng_u32(&m->rng);
    return hi << 32 | rng_u32(&m->rng);
}

void model_backward(Model *m, float scale)
{
    m->prof_in_backward = 1;
    const void *scope = matmul_scope_enter(m->params.data);
    m->ops->backward(m, scale);
    matmul_scope_exit(scope);
    m->prof_in_backward = 0;
}

void model_transpose_tb(float *dst, const float *src, int B, int T, int C, int to_bt)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            const float *s = to_bt ? src + ((long)t * B + b) * C : src + ((long)b * T + t) * C;
            float *o = to_bt ? dst + ((long)b * T + t) * C : dst + ((long)t * B + b) * C;
            memcpy(o, s, (size_t)C * sizeof(float));
        }
}

int model_carries_state(const Model *m)
{
    const ModelFamily *f = registry_family(m->cfg.model_kind);
    return f && (f->flags & MODEL_F_RECURRENT);
}

const float *model_block_output(Model *m, int layer, int *B, int *T)
{
    return m->ops->block_output ? m->ops->block_output(m, layer, B, T) : NULL;
}

int model_attention_entropy(Model *m, int layer, double *sum)
{
    return m->ops->attention_entropy ? m->ops->attention_entropy(m, layer, sum) : LM_EARG;
}

long model_param_count(const Model *m)
{
    long n = 0;
    for (int i = 0; i < m->params.n; i++)
        n += (long)m->params.info[i].numel;
    return n;
}

int model_finish_init(Model *m, const ModelOps *ops, void (*init_weights)(Model *m),
                      char *err)
{
    m->ops = ops;
    if (m->estimate_only)
        return LM_OK;
    if ((m->weights_only ? params_alloc_weights(&m->params, err)
                         : params_alloc(&m->params, err)) != LM_OK) {
        ops->destroy(m);
        m->ops = NULL;
        return LM_ENOMEM;
    }
    init_weights(m);
    return LM_OK;
}

/* Floats per parameter: value, gradient and Adam's two moments when training (4), the
 * value alone for a model only sampled and evaluated (1), whose activations are then
 * the weights-only layout's (the family's act_bytes reads m.weights_only). */
static double estimate_bytes(const Config *c, int V, int B, int T, int floats)
{
    const ModelFamily *fam = registry_family(c->model_kind);
    if (!fam || V < 1 || B < 1 || T < 1)
        return 0;
    Model m = {.cfg = *c, .vocab = V, .estimate_only = 1, .weights_only = floats == 1};
    char err[LM_ERR_LEN];
    params_init(&m.params);
    double bytes = 0;
    if (fam->init(&m, err) == LM_OK)
        bytes = floats * sizeof(float) * (double)m.params.total +
                (double)fam->act_bytes(&m, B, T);
    if (m.ops && m.ops->destroy)
        m.ops->destroy(&m);
    params_free(&m.params);
    return bytes;
}

double model_estimate_bytes(const Config *c, int V, int B, int T)
{
    return estimate_bytes(c, V, B, T, 4);
}

double model_estimate_weights_bytes(const Config *c, int V, int B, int T)
{
    return estimate_bytes(c, V, B, T, 1);
}

static int check_memory(const Config *c, int V, int B, int T, int floats, char *err)
{
    double need = estimate_bytes(c, V, B, T, floats);
    double have = sysinfo_mem_available(), as = sysinfo_as_headroom();
    int limited = as >= 0 && (have <= 0 || as < have);   /* ulimit -v binds first */
    if (limited) have = as;
    if (need <= 0)
        return err_set(err, LM_EARG, "model=%s d=%d layers=%d with vocabulary %d cannot be "
                       "built", c->model, c->d, c->layers, V);
    if ((have > 0 || limited) && need > 0.85 * have)   /* the rest: the system, the data */
        return err_set(err, LM_ENOMEM, "this model needs about %.2f GiB (%s and activations "
                       "for batch=%d x bptt=%d, vocabulary %d) but %.2f GiB is available%s, "
                       "of which a model may take 85%% (%.2f GiB): lower batch, bptt, d, "
                       "layers or vocab_size%s", need / (1 << 30),
                       floats == 4 ? "parameters, optimizer state" : "its weights", B, T, V,
                       have / (1 << 30), limited ? " under the address-space limit (ulimit "
                       "-v, less 192 MiB for OpenBLAS and threads)" : "",
                       0.85 * have / (1 << 30), limited ? ", or raise the limit" : "");
    return LM_OK;
}

int model_check_memory(const Config *c, int V, int B, int T, char *err)
{
    return check_memory(c, V, B, T, 4, err);
}

int model_check_memory_weights(const Config *c, int V, int B, int T, char *err)
{
    return check_memory(c, V, B, T, 1, err);
}
