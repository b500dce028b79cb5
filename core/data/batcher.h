/* batcher.h — (B,T) windows cut from a token sequence (tokseq.h) for training: stream
 * batching as PyTorch word_language_model's batchify/get_batch (B contiguous streams read
 * in consecutive windows), random batching as the seed notebook's get_batch (nanoGPT: B
 * uniform window starts). Positions are 64-bit, so a split of any size (many shards, past
 * 2^32 tokens) is cut the same way; each window is read as it is needed (pread over token
 * files), so nothing but the batch is held. Not here: the evaluation's windows
 * (evaluate.c), loading data (dataset.h). */
#ifndef LM_BATCHER_H
#define LM_BATCHER_H

#include "rng.h"
#include "tokseq.h"

#include <stdint.h>

typedef enum { BATCH_STREAM, BATCH_RANDOM } BatchMode;

/* "stream" | "random" -> *mode. 0 ok, -1 unknown. */
int batcher_mode_parse(const char *name, BatchMode *mode);

typedef struct {
    const TokSeq *data;       /* not owned */
    uint64_t n;
    int B, T;
    BatchMode mode;
    uint64_t stream_len;      /* stream: tokens per stream, n / B */
    uint64_t per_epoch;       /* random: batches per epoch, n / (B*T), at least 1 */
    uint64_t pos;             /* stream: offset of the next window in each stream;
                                 random: batches drawn in this epoch */
    unsigned long long epoch; /* completed epochs */
    Rng rng;                  /* random: window starts */
} Batcher;

/* Sets up batching of data (kept by the caller while b is used) into (B,T) windows.
 * Stream: the data trimmed to a multiple of B and cut into B contiguous streams, read in
 * consecutive windows of T. Random: B windows with starts uniform over [0, n - T - 1) per
 * batch, n / (B*T) batches to an epoch. */
void batcher_init(Batcher *b, const TokSeq *data, int B, int T, BatchMode mode,
                  unsigned long long seed);

/* Writes the next batch: x, y (B, L) batch-major and packed, y[b,t] the token after
 * x[b,t], and returns L: T, or less for the last window of a stream epoch (and, in random
 * mode, when n < T + 2: n - 2). *new_epoch (may be NULL) is 1 when this call started a
 * new epoch. Returns 0 when the data is too short for any window (stream: n < 2B;
 * random: n < 3), -1 when reading failed (tokseq_read's message in err: a changed file,
 * an id beyond the vocabulary). x and y need room for B*T ints. Never allocates. */
int batcher_next(Batcher *b, int *x, int *y, int *new_epoch, char *err);

/* Fractional epochs done (epoch + the fraction of the current one). */
double batcher_epoch(const Batcher *b);

/* The state for an exact resume: pos, epoch and the RNG. set_state on a batcher
 * initialised with the same data, B, T and mode continues the same sequence (the state
 * holds no process count: under mpirun every rank cuts the same global batch). */
void batcher_get_state(const Batcher *b, unsigned long long state[4]);
void batcher_set_state(Batcher *b, const unsigned long long state[4]);

#endif
