/* pickle_apply.c — the only places the restricted unpickler gives a global meaning
 * (see pickle.h): BINPERSID makes a storage from ('storage', <torch.XStorage>, key,
 * location, numel); REDUCE applies OrderedDict, _rebuild_tensor_v2 and
 * _rebuild_parameter and nothing else; BUILD is accepted only on a dict (a state_dict's
 * _metadata). Reference: torch/serialization.py (_save's persistent_id) and
 * torch/_utils.py (_rebuild_tensor_v2). Not here: the opcode loop (pickle.c). */
#include "pickle.h"

#include "checked.h"
#include "err.h"
#include "private/pickle_impl.h"

#include <string.h>

static int is_int(const PkObj *o)
{
    return o->kind == PK_INT || o->kind == PK_BOOL;
}

/* BINPERSID: ('storage', <torch.XStorage>, key, location, numel) becomes a PK_STORAGE. */
int pickle_op_persid(Unpickler *u)
{
    PkObj *pid;
    int rc = pickle_pop(u, &pid);
    if (rc)
        return rc;
    if (pid->kind != PK_TUPLE || pid->n != 5 || pid->items[0]->kind != PK_STR ||
        strcmp(pid->items[0]->s, "storage") || pid->items[1]->kind != PK_GLOBAL ||
        !pickle_storage_elem_size(pid->items[1]->global) || pid->items[2]->kind != PK_STR ||
        pid->items[3]->kind != PK_STR || !is_int(pid->items[4]) || pid->items[4]->i < 0)
        return pickle_fail(u, "%s", "a persistent id that is not ('storage', torch.XStorage, key, "
                    "location, numel)");
    PkObj *o = pickle_new_obj(u, PK_STORAGE);
    if (!o || !(o->s = strdup(pid->items[2]->s)))
        return pickle_oom(u);
    o->global = pid->items[1]->global;
    o->numel = pid->items[4]->i;
    return pickle_push(u, o);
}

static int int_tuple(const PkObj *t, long long *out)
{
    if (t->kind != PK_TUPLE || t->n > PK_MAX_DIM)
        return -1;
    for (int i = 0; i < t->n; i++) {
        if (!is_int(t->items[i]) || t->items[i]->i < 0 || t->items[i]->i > (1LL << 40))
            return -1;
        out[i] = t->items[i]->i;
    }
    return 0;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]):
 * checked so that every element the tensor addresses lies inside its storage. */
static int rebuild_tensor(Unpickler *u, const PkObj *args)
{
    PkObj *t = pickle_new_obj(u, PK_TENSOR);
    if (!t)
        return pickle_oom(u);
    const PkObj *const *a = (const PkObj *const *)args->items;
    if (args->n < 6 || args->n > 7 || a[0]->kind != PK_STORAGE || !is_int(a[1]) ||
        a[1]->i < 0 || int_tuple(a[2], t->shape) || int_tuple(a[3], t->stride) ||
        a[2]->n != a[3]->n)
        return pickle_fail(u, "%s", "_rebuild_tensor_v2 with arguments that are not (storage, "
                    "offset, size, stride, requires_grad, hooks)");
    t->storage = a[0];
    t->offset = a[1]->i;
    t->ndim = a[2]->n;
    size_t numel, end;   /* overflow-checked: a wrapped product must not pass */
    if (checked_view_extent(t->ndim, t->shape, t->stride, t->offset, &numel, &end) ||
        numel > ((size_t)1 << 40))
        return pickle_fail(u, "%s", "a tensor with an absurd number of elements or extent");
    if (numel > 0 && end > (size_t)t->storage->numel)
        return pickle_fail(u, "%s", "a tensor that reaches past the end of its storage");
    return pickle_push(u, t);
}

int pickle_op_reduce(Unpickler *u)
{
    PkObj *args, *fn;
    int rc = pickle_pop(u, &args);
    if (!rc)
        rc = pickle_pop(u, &fn);
    if (rc)
        return rc;
    if (fn->kind != PK_GLOBAL || args->kind != PK_TUPLE)
        return pickle_fail(u, "%s", "REDUCE of something that is not an accepted global");
    switch (fn->global) {
    case PKG_ORDERED_DICT:
        if (args->n)
            return pickle_fail(u, "%s", "OrderedDict called with arguments");
        return pickle_push_new(u, PK_DICT, NULL);
    case PKG_REBUILD_TENSOR_V2:
        return rebuild_tensor(u, args);
    case PKG_REBUILD_PARAMETER:   /* (tensor, requires_grad, hooks): the tensor itself */
        if (args->n != 3 || args->items[0]->kind != PK_TENSOR)
            return pickle_fail(u, "%s", "_rebuild_parameter without a tensor");
        return pickle_push(u, args->items[0]);
    default:
        return pickle_fail(u, "refused to call '%s': only OrderedDict and the tensor rebuilders "
                    "are applied", pickle_global_name(fn->global));
    }
}

/* BUILD sets an object's state: torch.save only does it for the state_dict's
 * `_metadata` attribute of an OrderedDict, which carries no weights and is dropped. */
int pickle_op_build(Unpickler *u)
{
    PkObj *state;
    int rc = pickle_pop(u, &state);
    if (rc)
        return rc;
    if (u->sp <= pickle_floor_of(u) || u->stack[u->sp - 1]->kind != PK_DICT)
        return pickle_fail(u, "%s", "BUILD on something other than a dict");
    return LM_OK;
}
