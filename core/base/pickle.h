/* pickle.h — a restricted reader of the Python pickles `torch.save` writes (its
 * `data.pkl`): protocol 2 (torch's default; the few protocol-4 framing opcodes are also
 * understood), building a small tree of plain values: None, bool, int, float, str,
 * tuple, list, dict (OrderedDict too), storages and tensors.
 * Restricted: the only globals it accepts are collections.OrderedDict,
 * torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and the torch
 * *Storage types, and REDUCE only applies those. Anything else (another global, an
 * opcode outside the list) is refused with a message naming it: it never imports,
 * calls or executes anything. Reference: Python's Lib/pickletools.py (opcode meanings),
 * torch/serialization.py (_save's persistent_id) and torch/_utils.py (_rebuild_tensor_v2).
 * Not here: the zip around data.pkl and the storages' bytes (torchfile.c). */
#ifndef LM_PICKLE_H
#define LM_PICKLE_H

#include <stddef.h>

typedef enum {
    PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_TUPLE, PK_LIST, PK_DICT,
    PK_GLOBAL,   /* one of the accepted globals (PkObj.global) */
    PK_STORAGE,  /* a persistent id ('storage', type, key, location, numel) */
    PK_TENSOR    /* _rebuild_tensor_v2(storage, offset, size, stride, ...) */
} PkKind;

/* The accepted globals. PKG_STORAGE_* map to element types. */
typedef enum {
    PKG_ORDERED_DICT, PKG_REBUILD_TENSOR_V2, PKG_REBUILD_PARAMETER,
    PKG_STORAGE_FLOAT, PKG_STORAGE_DOUBLE, PKG_STORAGE_HALF, PKG_STORAGE_BFLOAT16,
    PKG_STORAGE_LONG, PKG_STORAGE_INT, PKG_STORAGE_SHORT, PKG_STORAGE_CHAR,
    PKG_STORAGE_BYTE, PKG_STORAGE_BOOL, PKG_N
} PkGlobal;

#define PK_MAX_DIM 8

typedef struct PkObj PkObj;
struct PkObj {
    PkKind kind;
    long long i;            /* PK_BOOL, PK_INT */
    double f;               /* PK_FLOAT */
    char *s;                /* PK_STR (NUL-terminated, UTF-8 as written), PK_STORAGE key */
    size_t len;             /* PK_STR bytes */
    PkObj **items;          /* PK_TUPLE/PK_LIST: n items; PK_DICT: n/2 (key, value) pairs */
    int n, cap;
    PkGlobal global;        /* PK_GLOBAL; PK_STORAGE: its storage type */
    long long numel;        /* PK_STORAGE: elements */
    const PkObj *storage;   /* PK_TENSOR */
    long long offset;       /* PK_TENSOR: storage offset, in elements */
    int ndim;               /* PK_TENSOR */
    long long shape[PK_MAX_DIM], stride[PK_MAX_DIM];
};

typedef struct Pickle Pickle;   /* owns every PkObj of one load */

/* Reads a pickle from buf[0..n). LM_OK with *out (release with pickle_free) and *root
 * (the value STOP returned, owned by *out); LM_EFORMAT with a message naming the byte
 * offset and the opcode or global refused (truncated, unknown opcode, a global outside
 * the list, a malformed tensor, a tensor reaching past its storage); LM_ENOMEM. Never
 * crashes or loops on any input; memory is bounded by a constant times n. */
int pickle_load(const unsigned char *buf, size_t n, Pickle **out, const PkObj **root,
                char *err);
void pickle_free(Pickle *p);

/* The value of dict d for the string key, or NULL (also when d is not a dict). */
const PkObj *pickle_dict_get(const PkObj *d, const char *key);

/* "collections.OrderedDict", "torch.FloatStorage", ...; and a kind's name ("dict"). */
const char *pickle_global_name(PkGlobal g);
const char *pickle_kind_name(PkKind k);

/* Bytes per element of a storage type (0 for none). */
size_t pickle_storage_elem_size(PkGlobal g);

#endif
