/* registry.c — the model family table, generated from families.def so that a family's
 * name, flags and functions are written once. Not a plugin loader: families are linked
 * in. */
#include "registry.h"

#include <string.h>

#define FAMILY(kind, name, flags, init, act_bytes) \
    int init(Model *m, char *err);                 \
    size_t act_bytes(Model *m, int B, int T);
#include "families.def"
#undef FAMILY

static const ModelFamily FAMILIES[] = {
#define FAMILY(kind, name, flags, init, act_bytes) {name, kind, flags, init, act_bytes},
#include "families.def"
#undef FAMILY
};
#define N_FAMILIES ((int)(sizeof FAMILIES / sizeof FAMILIES[0]))

const ModelFamily *registry_family(ModelKind kind)
{
    if ((unsigned)kind >= (unsigned)N_FAMILIES)
        return NULL;
    return &FAMILIES[kind];
}

const ModelFamily *registry_find(const char *name)
{
    for (int i = 0; i < N_FAMILIES; i++)
        if (!strcmp(FAMILIES[i].name, name))
            return &FAMILIES[i];
    return NULL;
}

int registry_count(void)
{
    return N_FAMILIES;
}
