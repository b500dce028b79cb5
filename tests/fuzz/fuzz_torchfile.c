/* fuzz_torchfile.c — libFuzzer target for the restricted unpickler (pickle.c) and the
 * torch.save zip reader above it (torchfile.c). An input starting like a zip ("PK\3\4")
 * goes through torchfile_open_memory (libzip, data.pkl, the state_dict, every storage);
 * anything else is a data.pkl for pickle_load directly, since a mutated pickle inside a
 * zip mostly dies at the CRC check.
 * Invariants: a failure leaves a message and no object; every tensor the unpickler
 * accepts addresses only elements inside its storage (the extent computed with the
 * overflow-checked checked_view_extent, so a wrapped product cannot pass); every tensor
 * torchfile returns has numel x dtype size bytes (checked) and reads back (raw, floats
 * converted, integers as int) or fails with a message (a damaged storage is found when
 * read); ASan sees every gather.
 * Corpus (tests/fuzz/corpus/torchfile/): the fixtures' data.pkl, small torch.save files
 * written by python3-torch 1.13 (bare, wrapped with epoch/loss/lists, strided, half,
 * double, long, a Parameter, protocol 4) with their data.pkl, and hostile pickles
 * (os.system, builtins.eval), plus the inputs under 1 KB a 6-minute run added (-merge=1),
 * and issue 25's crafted sizes (hostile-*.pt, from tests/fuzz/make_hostile_pt.py: a
 * storage whose numel*4 wraps, at offset 0 and 2^40; a stride whose extent wraps; a
 * stride-0 16384x16384 view of 4 bytes).
 * Not built by meson: scripts/fuzz.sh builds and runs it:
 *
 *   scripts/fuzz.sh 0 torchfile     # builds /tmp/lmlab-fuzz/fuzz_torchfile
 *   /tmp/lmlab-fuzz/fuzz_torchfile -max_total_time=120 -max_len=8192 /tmp/tf_work \
 *     tests/fuzz/corpus/torchfile
 */
#include "checked.h"
#include "err.h"
#include "pickle.h"
#include "safetensors.h"
#include "torchfile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(c) \
    do { \
        if (!(c)) __builtin_trap(); \
    } while (0)

/* Every tensor reachable from root (bounded walk: the tree may share or cycle). */
static void check_tree(const PkObj *root)
{
    const PkObj *stack[256];
    int sp = 0, steps = 0;
    stack[sp++] = root;
    while (sp && steps++ < 100000) {
        const PkObj *o = stack[--sp];
        if (o->kind == PK_TENSOR) {   /* the extent, overflow-checked (checked.h) */
            size_t numel, end;
            FUZZ_ASSERT(checked_view_extent(o->ndim, o->shape, o->stride, o->offset, &numel,
                                            &end) == 0);
            FUZZ_ASSERT(o->storage && o->storage->kind == PK_STORAGE);
            FUZZ_ASSERT(numel == 0 || end <= (size_t)o->storage->numel);
        }
        if (o->kind == PK_TUPLE || o->kind == PK_LIST || o->kind == PK_DICT)
            for (int i = 0; i < o->n && sp < 256; i++)
                stack[sp++] = o->items[i];
    }
}

static void check_tensors(const SafeTensors *st)
{
    char err[LM_ERR_LEN];
    for (int i = 0; i < safetensors_count(st); i++) {
        const StTensor *t = safetensors_at(st, i);
        FUZZ_ASSERT(t && safetensors_find(st, t->name));
        size_t numel = 1, bytes;
        for (int k = 0; k < t->ndim; k++)
            FUZZ_ASSERT(t->shape[k] >= 0 && !checked_mul(numel, (size_t)t->shape[k], &numel));
        FUZZ_ASSERT(numel == t->numel);
        FUZZ_ASSERT(!checked_mul(numel, safetensors_dtype_size(t->dtype), &bytes) &&
                    bytes == t->end - t->begin);
        if (t->numel > (1u << 20))
            continue;
        unsigned char *raw = malloc(bytes + 1);   /* ASan: the gather stays in bounds */
        if (raw && safetensors_read_raw(st, t, raw, bytes, err) != LM_OK)
            FUZZ_ASSERT(err[0]);
        free(raw);
        if (t->dtype == ST_I64 || t->dtype == ST_I32 || t->dtype == ST_U8) {
            int *x = malloc(t->numel * sizeof(int) + 1);
            if (x && safetensors_read_i32(st, t->name, x, t->numel, err) != LM_OK)
                FUZZ_ASSERT(err[0]);
            free(x);
        } else {
            float *x = malloc(t->numel * sizeof(float) + 1);
            if (x && safetensors_read_f32(st, t->name, x, t->numel, err) != LM_OK)
                FUZZ_ASSERT(err[0]);   /* a damaged storage is found when it is read */
            free(x);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[LM_ERR_LEN];
    err[0] = 0;
    if (torchfile_is_zip(data, size)) {
        SafeTensors *st = NULL;
        int rc = torchfile_open_memory(data, size, "fuzz", &st, err);
        FUZZ_ASSERT(rc == LM_OK ? st != NULL : st == NULL && err[0]);
        if (st)
            check_tensors(st);
        safetensors_close(st);
        return 0;
    }
    Pickle *p = NULL;
    const PkObj *root = NULL;
    int rc = pickle_load(data, size, &p, &root, err);
    FUZZ_ASSERT(rc == LM_OK ? p && root : !p && !root && err[0]);
    if (root)
        check_tree(root);
    pickle_free(p);
    return 0;
}
