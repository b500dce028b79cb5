/* batcher.c — cutting (B,T) windows from a token sequence (see batcher.h).
 * References: PyTorch examples word_language_model main.py batchify / get_batch; the seed
 * notebook's get_batch (nanoGPT). */
#include "batcher.h"

#include "err.h"

#include <string.h>

int batcher_mode_parse(const char *name, BatchMode *mode)
{
    if (name && !strcmp(name, "stream")) *mode = BATCH_STREAM;
    else if (name && !strcmp(name, "random")) *mode = BATCH_RANDOM;
    else return -1;
    return 0;
}

void batcher_init(Batcher *b, const TokSeq *data, int B, int T, BatchMode mode,
                  unsigned long long seed)
{
    memset(b, 0, sizeof *b);
    b->data = data;
    b->n = data->n;
    b->B = B > 0 ? B : 1;
    b->T = T > 0 ? T : 1;
    b->mode = mode;
    b->stream_len = b->n / (uint64_t)b->B;
    b->per_epoch = b->n / ((uint64_t)b->B * (uint64_t)b->T);
    if (b->per_epoch == 0) b->per_epoch = 1;
    rng_seed(&b->rng, seed);
}

/* Uniform in [0, n) for n > 0, also beyond 32 bits (below 2^32 the draws of rng_below,
 * so small corpora cut the same windows as ever). */
static uint64_t rng_index(Rng *r, uint64_t n)
{
    if (n <= UINT32_MAX) return rng_below(r, (uint32_t)n);
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
        uint64_t x = (uint64_t)rng_u32(r) << 32 | rng_u32(r);
        if (x < lim) return x % n;
    }
}

/* One row: x = data[s, s+L), y = data[s+1, s+L+1). */
static int read_row(const TokSeq *d, uint64_t s, size_t L, int *x, int *y, char *err)
{
    int rc = tokseq_read(d, s, L, x, err);
    if (!rc) {
        memcpy(y, x + 1, sizeof(int) * (L - 1));
        rc = tokseq_read(d, s + L, 1, y + L - 1, err);
    }
    return rc;
}

int batcher_next(Batcher *b, int *x, int *y, int *new_epoch, char *err)
{
    int wrapped = 0;
    size_t L;
    if (new_epoch) *new_epoch = 0;
    if (b->mode == BATCH_STREAM) {
        if (b->stream_len < 2) return 0;
        if (b->pos >= b->stream_len - 1) {
            b->pos = 0;
            b->epoch++;
            wrapped = 1;
        }
        L = b->stream_len - 1 - b->pos < (uint64_t)b->T ? (size_t)(b->stream_len - 1 - b->pos)
                                                        : (size_t)b->T;
        for (int r = 0; r < b->B; r++)
            if (read_row(b->data, (uint64_t)r * b->stream_len + b->pos, L, x + (size_t)r * L,
                         y + (size_t)r * L, err))
                return -1;
        b->pos += L;
    } else {
        if (b->n < 3) return 0;
        L = b->n < (uint64_t)b->T + 2 ? (size_t)(b->n - 2) : (size_t)b->T;
        if (b->pos >= b->per_epoch) {
            b->pos = 0;
            b->epoch++;
            wrapped = 1;
        }
        for (int r = 0; r < b->B; r++) {
            uint64_t s = rng_index(&b->rng, b->n - L - 1);
            if (read_row(b->data, s, L, x + (size_t)r * L, y + (size_t)r * L, err))
                return -1;
        }
        b->pos++;
    }
    if (new_epoch) *new_epoch = wrapped;
    return (int)L;
}

double batcher_epoch(const Batcher *b)
{
    if (b->mode == BATCH_STREAM)
        return (double)b->epoch + (b->stream_len > 1 ? (double)b->pos / (double)(b->stream_len - 1) : 0);
    return (double)b->epoch + (double)b->pos / (double)b->per_epoch;
}

void batcher_get_state(const Batcher *b, unsigned long long state[4])
{
    state[0] = b->pos;
    state[1] = b->epoch;
    state[2] = b->rng.state;
    state[3] = b->rng.inc;
}

void batcher_set_state(Batcher *b, const unsigned long long state[4])
{
    b->pos = state[0];
    b->epoch = state[1];
    b->rng.state = state[2];
    b->rng.inc = state[3];
}
