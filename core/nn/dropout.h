/* dropout.h — inverted dropout as nn.Dropout in training mode: kept elements are scaled
 * by 1/(1-p) so inference needs no rescaling. The random stream is lmlab's PCG32, not
 * PyTorch's (masks differ from torch; the statistics match). Not spatial dropout. */
#ifndef LM_DROPOUT_H
#define LM_DROPOUT_H

#include "rng.h"

/* mask[i] = 0 with probability p, else 1/(1-p); out = inp * mask. out may alias inp.
 * p <= 0: out = inp and mask is filled with 1 (no random numbers drawn). p >= 1: all
 * zeros. mask may be NULL when p <= 0 (nothing to remember). Never fails. */
void dropout_forward(float *out,       /* (n) */
                     float *mask,      /* (n) */
                     const float *inp, /* (n) */
                     float p, long n, Rng *rng);

/* dinp += dout * mask, with the mask of the forward. Never fails. */
void dropout_backward(float *dinp,       /* (n) */
                      const float *dout, /* (n) */
                      const float *mask, /* (n) */
                      long n);

#endif
