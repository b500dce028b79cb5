/* registry.h — the table of model families behind model_create and model_estimate_bytes,
 * built from families.def (one line per `model=` value: name, flags, init, activation
 * bytes). Not where a family is implemented: that is its own file (model_*.c). */
#ifndef LM_REGISTRY_H
#define LM_REGISTRY_H

#include "model.h"

typedef struct {
    const char *name;      /* the `model=` value */
    ModelKind kind;
    int flags;             /* MODEL_F_* */
    /* Registers parameters in m->params, sets m->ops and m->impl; unless
     * m->estimate_only, also allocates and initialises the parameters. */
    int (*init)(Model *m, char *err);
    /* Bytes model_alloc(m, B, T) allocates for activations, counted by the family's own
     * layout function with a NULL slab (works on an estimate_only model; the weights-only
     * layout when m->weights_only). */
    size_t (*act_bytes)(Model *m, int B, int T);
} ModelFamily;

/* The family of a kind, or NULL when the kind is out of range. */
const ModelFamily *registry_family(ModelKind kind);

/* The family named name, or NULL. */
const ModelFamily *registry_find(const char *name);

/* The number of families; registry_family(0 .. n-1) are all of them. */
int registry_count(void);

#endif
