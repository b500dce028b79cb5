/* dropout.h — inverted dropout as nn.Dropout in training mode: kept elements are scaled
 * by 1/(1-p) so inference needs no rescaling. Masks are counter-based, not drawn from a
 * sequential stream: the mask of an element is a pure function of (step seed, call site,
 * global batch row, position in the row), so a step's masks are the same however its
 * batch is split over threads (replicas) or processes (MPI ranks). The generator is
 * lmlab's own (a SplitMix64 hash), not PyTorch's: masks differ from torch, the statistics
 * match. Not spatial dropout; not attention-weight dropout (attention.h has its own). */
#ifndef LM_DROPOUT_H
#define LM_DROPOUT_H

#include <stdint.h>

/* What makes a forward's masks: seed (one per training step), row0 (the global index of
 * this model's first batch row) and site (counts the dropout calls of one forward; the
 * model resets it to 0 at the start of each forward). */
typedef struct {
    uint64_t seed;
    long row0;
    uint32_t site;
} DropKey;

/* The uniform in [0,1) behind element j of global row `row` at call site `site`. */
float drop_uniform(uint64_t seed, uint32_t site, uint64_t row, uint64_t j);

/* Dropout of a batch of B rows (global rows key->row0 ..) of T positions x w features:
 * batch-major (B,T,w) or, when time_major, (T,B,w). mask[i] = 0 with probability p, else
 * 1/(1-p); out = inp * mask (out may alias inp). Uses call site key->site and advances it.
 * p <= 0: out = inp and mask (may then be NULL) is filled with 1. p >= 1: all zeros. */
void dropout_forward(float *out,       /* (B*T*w) */
                     float *mask,      /* (B*T*w) */
                     const float *inp, /* (B*T*w) */
                     float p, DropKey *key, int B, int T, int w, int time_major);

/* dinp += dout * mask, with the mask of the forward. Never fails. */
void dropout_backward(float *dinp,       /* (n) */
                      const float *dout, /* (n) */
                      const float *mask, /* (n) */
                      long n);

#endif
