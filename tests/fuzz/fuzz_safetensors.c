/* fuzz_safetensors.c — libFuzzer target for the safetensors reader and the checkpoint
 * layer above it: the input is written to a memfd and opened by path (as `open` and
 * `train resume=` do) with safetensors_open, then checkpoint_open (metadata: format,
 * configuration, tokenizer, training state) and checkpoint_read_weights into a tiny
 * model, so truncated, corrupt and foreign files all go through the real paths.
 * Invariants: a failure leaves a message and no object; every tensor accepted lies
 * inside the data area with numel x dtype size bytes; find() returns the tensor listed;
 * reading any tensor either succeeds or fails with a message, never touches bytes outside.
 * Not built by meson: scripts/fuzz.sh builds and runs every target. By hand, from the
 * source root:
 *
 *   scripts/fuzz.sh 0 safetensors    # builds /tmp/lmlab-fuzz/fuzz_safetensors
 *   /tmp/lmlab-fuzz/fuzz_safetensors -max_total_time=120 -max_len=8192 /tmp/st_work \
 *     tests/fuzz/corpus/safetensors
 *   mkdir /tmp/st_min && /tmp/lmlab-fuzz/fuzz_safetensors -merge=1 -use_counters=0 \
 *     /tmp/st_min tests/fuzz/corpus/safetensors /tmp/st_work   # then replace the corpus
 */
#include "checked.h"
#include "checkpoint.h"
#include "config.h"
#include "err.h"
#include "model.h"
#include "safetensors.h"
#include "tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_ASSERT(c) \
    do { \
        if (!(c)) __builtin_trap(); \
    } while (0)

#define FUZZ_MAX_READ (1u << 20) /* elements read back per tensor */

static void fuzz_tensors(const SafeTensors *st)
{
    static float f[FUZZ_MAX_READ];
    static int ix[FUZZ_MAX_READ];
    char err[LM_ERR_LEN];
    int n = safetensors_count(st);
    FUZZ_ASSERT(n >= 0 && safetensors_at(st, n) == NULL && safetensors_at(st, -1) == NULL);
    for (int i = 0; i < n; i++) {
        const StTensor *t = safetensors_at(st, i);
        FUZZ_ASSERT(t && t->name[0] && t->ndim >= 0 && t->ndim <= ST_MAX_DIM);
        size_t numel = 1, bytes;   /* overflow-checked (checked.h): no wrapped product */
        for (int k = 0; k < t->ndim; k++)
            FUZZ_ASSERT(t->shape[k] >= 0 && !checked_mul(numel, (size_t)t->shape[k], &numel));
        FUZZ_ASSERT(numel == t->numel && t->begin <= t->end);
        FUZZ_ASSERT(!checked_mul(numel, safetensors_dtype_size(t->dtype), &bytes) &&
                    t->end - t->begin == bytes);
        FUZZ_ASSERT(safetensors_find(st, t->name) == t);
        const unsigned char *p = safetensors_data(st, t);
        volatile unsigned char sink = 0;
        for (size_t b = 0; b < t->end - t->begin; b++)
            sink ^= p[b];            /* ASan: every byte is inside the buffer */
        (void)sink;
        if (numel > FUZZ_MAX_READ)
            continue;
        err[0] = 0;
        if (safetensors_read_f32(st, t->name, f, numel, err))
            FUZZ_ASSERT(err[0]);
        err[0] = 0;
        if (safetensors_read_i32(st, t->name, ix, numel, err))
            FUZZ_ASSERT(err[0]);
        FUZZ_ASSERT(safetensors_read_f32(st, t->name, f, numel + 1, err) != LM_OK);
    }
}

/* A tiny model that any input's weights are tried against (missing tensors, shapes). */
static Model *fuzz_model(void)
{
    static Model *m;
    if (!m) {
        Config c;
        char err[LM_ERR_LEN];
        config_defaults(&c);
        c.d = 8; c.nhid = 16; c.layers = 1; c.bptt = 8; c.batch = 1;
        m = model_create(&c, 5, err);
        FUZZ_ASSERT(m);
    }
    return m;
}

static void fuzz_checkpoint(const char *path)
{
    char err[LM_ERR_LEN] = "";
    CheckpointInfo info = {0};
    SafeTensors *st = NULL;
    if (checkpoint_open(path, &info, &st, err) != LM_OK) {
        FUZZ_ASSERT(err[0] && st == NULL);
        checkpoint_info_free(&info);
        return;
    }
    FUZZ_ASSERT(st);
    if (info.tokenizer_json) {
        Tokenizer *tok = NULL;
        if (tokenizer_load(info.tokenizer_json, &tok, err) == LM_OK)
            FUZZ_ASSERT(tokenizer_vocab_size(tok) > 0);
        tokenizer_destroy(tok);
    }
    err[0] = 0;
    if (checkpoint_read_weights(fuzz_model(), st, "", err))
        FUZZ_ASSERT(err[0]);
    checkpoint_info_free(&info);
    safetensors_close(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("fuzz_safetensors", 0);
    if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
        return 0;
    char path[64], err[LM_ERR_LEN] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    SafeTensors *st = (SafeTensors *)1;
    if (safetensors_open(path, &st, err) == LM_OK) {
        FUZZ_ASSERT(st);
        fuzz_tensors(st);
        (void)safetensors_meta(st, "format");
        safetensors_close(st);
        fuzz_checkpoint(path);
    } else {
        FUZZ_ASSERT(err[0] && st == NULL);
    }
    return 0;
}
