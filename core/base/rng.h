/* rng.h — a small deterministic random number generator (PCG32) for initialisation,
 * dropout, batching and sampling. Same seed, same stream, on every machine.
 * Not cryptographic, not PyTorch's generator (fixtures carry their own weights). */
#ifndef LM_RNG_H
#define LM_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc;
} Rng;

/* Seeds the generator; the same seed always gives the same stream. */
void rng_seed(Rng *r, uint64_t seed);
/* Next 32 random bits. */
uint32_t rng_u32(Rng *r);
/* Uniform in [0, n) for n > 0, without modulo bias. */
uint32_t rng_below(Rng *r, uint32_t n);
/* Uniform float in [0, 1). */
float rng_uniform(Rng *r);
/* Standard normal (Box-Muller). */
float rng_normal(Rng *r);
/* Fills x[0..n) with uniform values in [lo, hi). */
void rng_fill_uniform(Rng *r, float *x, long n, float lo, float hi);
/* Fills x[0..n) with normal values of the given mean and std. */
void rng_fill_normal(Rng *r, float *x, long n, float mean, float std);

#endif
