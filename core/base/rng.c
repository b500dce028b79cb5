/* rng.c — PCG32 (O'Neill, pcg-random.org, "PCG-XSH-RR") and the distributions built on it. */
#include "rng.h"

#include <math.h>

void rng_seed(Rng *r, uint64_t seed)
{
    r->state = 0;
    r->inc = (seed << 1u) | 1u;
    rng_u32(r);
    r->state += seed ^ 0x853c49e6748fea9bULL;
    rng_u32(r);
}

uint32_t rng_u32(Rng *r)
{
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

uint32_t rng_below(Rng *r, uint32_t n)
{
    uint32_t threshold = (uint32_t)(-n) % n;
    for (;;) {
        uint32_t x = rng_u32(r);
        if (x >= threshold)
            return x % n;
    }
}

float rng_uniform(Rng *r)
{
    return (float)(rng_u32(r) >> 8) * (1.0f / 16777216.0f);
}

float rng_normal(Rng *r)
{
    float u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-12f)
        u1 = 1e-12f;
    return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}

void rng_fill_uniform(Rng *r, float *x, long n, float lo, float hi)
{
    for (long i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * rng_uniform(r);
}

void rng_fill_normal(Rng *r, float *x, long n, float mean, float std)
{
    for (long i = 0; i < n; i++)
        x[i] = mean + std * rng_normal(r);
}
