/* params.c — named parameter slabs (see params.h). */
#include "params.h"

#include "err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void params_init(ParamSet *ps)
{
    memset(ps, 0, sizeof *ps);
}

void params_free(ParamSet *ps)
{
    if (!ps)
        return;
    free(ps->info);
    free(ps->data);
    free(ps->grad);
    params_init(ps);
}

int params_add(ParamSet *ps, const char *name, int ndim, const int *shape, int no_decay)
{
    if (ps->data || ndim < 1 || ndim > PARAMS_MAX_DIM)
        return -1;
    if (ps->n == ps->cap) {
        int cap = ps->cap ? ps->cap * 2 : 32;
        ParamInfo *info = realloc(ps->info, (size_t)cap * sizeof *info);
        if (!info)
            return -1;
        ps->info = info;
        ps->cap = cap;
    }
    ParamInfo *p = &ps->info[ps->n];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->ndim = ndim;
    p->numel = 1;
    for (int i = 0; i < ndim; i++) {
        p->shape[i] = shape[i];
        p->numel *= (size_t)shape[i];
    }
    /* keep every tensor 16-float aligned so vector loads never straddle tensors */
    p->offset = ps->total;
    ps->total += (p->numel + 15) & ~(size_t)15;
    p->no_decay = no_decay;
    return ps->n++;
}

int params_alloc(ParamSet *ps, char *err)
{
    size_t bytes = (ps->total ? ps->total : 1) * sizeof(float);
    ps->data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    ps->grad = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!ps->data || !ps->grad) {
        free(ps->data);
        free(ps->grad);
        ps->data = ps->grad = NULL;
        return err_set(err, LM_ENOMEM, "cannot allocate %zu MB for the parameters",
                       2 * bytes >> 20);
    }
    memset(ps->data, 0, bytes);
    memset(ps->grad, 0, bytes);
    return LM_OK;
}

int params_alloc_weights(ParamSet *ps, char *err)
{
    size_t bytes = (ps->total ? ps->total : 1) * sizeof(float);
    ps->data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!ps->data)
        return err_set(err, LM_ENOMEM, "cannot allocate %zu MB for the parameters", bytes >> 20);
    memset(ps->data, 0, bytes);
    return LM_OK;
}

float *params_data(const ParamSet *ps, int i)
{
    assert(i >= 0 && i < ps->n && ps->data);
    return ps->data + ps->info[i].offset;
}

float *params_grad(const ParamSet *ps, int i)
{
    assert(i >= 0 && i < ps->n && ps->grad);
    return ps->grad + ps->info[i].offset;
}

int params_find(const ParamSet *ps, const char *name)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->info[i].name, name) == 0)
            return i;
    return -1;
}

void params_zero_grad(ParamSet *ps)
{
    if (ps->grad)
        memset(ps->grad, 0, ps->total * sizeof(float));
}
