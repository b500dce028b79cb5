/* params.h — a model's parameters as named tensors in parallel flat slabs (values,
 * gradients), llm.c style: zeroing gradients is one memset, the optimizer one loop.
 * Names are the PyTorch names (`blocks.0.linear1.weight`), so checkpoints and fixtures
 * use one mapping. Not an autodiff system: layers read and write their slices. */
#ifndef LM_PARAMS_H
#define LM_PARAMS_H

#include <stddef.h>

#define PARAMS_NAME_LEN 96
#define PARAMS_MAX_DIM 4

typedef struct {
    char name[PARAMS_NAME_LEN];
    int ndim;
    int shape[PARAMS_MAX_DIM];
    size_t offset;   /* into data/grad, in floats */
    size_t numel;
    int no_decay;    /* biases, norms: excluded from weight decay */
} ParamInfo;

typedef struct {
    ParamInfo *info;
    int n, cap;
    size_t total;    /* floats in each slab */
    float *data;     /* (total) values, NULL until params_alloc */
    float *grad;     /* (total) gradients */
} ParamSet;

/* Caller-owned: params_init zeroes the struct, params_free releases everything. */
void params_init(ParamSet *ps);
void params_free(ParamSet *ps);

/* Registers a tensor before params_alloc; returns its index or -1 when out of memory
 * or when called after params_alloc. shape has ndim entries (1..4). */
int params_add(ParamSet *ps, const char *name, int ndim, const int *shape, int no_decay);

/* Allocates the zeroed value and gradient slabs. LM_OK or LM_ENOMEM (message in err). */
int params_alloc(ParamSet *ps, char *err);

/* Allocates the zeroed value slab only (grad stays NULL): a model that is never trained
 * (sampling, evaluation). LM_OK or LM_ENOMEM. */
int params_alloc_weights(ParamSet *ps, char *err);

/* The value / gradient slice of tensor i (valid after params_alloc). */
float *params_data(const ParamSet *ps, int i);
float *params_grad(const ParamSet *ps, int i);

/* Index of the tensor with this name, or -1. */
int params_find(const ParamSet *ps, const char *name);

/* Sets every gradient to zero. */
void params_zero_grad(ParamSet *ps);

#endif
