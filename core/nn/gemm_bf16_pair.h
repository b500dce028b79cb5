/* gemm_bf16_pair.h — fp32 -> bf16 rounding and bf16 pairs, for the packing loops of
 * gemm_bf16.c and gemm_bf16_amx.c (one definition of the rounding both kernels see).
 * Static inline helpers only; not part of gemm_bf16.h's interface. */
#ifndef LM_GEMM_BF16_PAIR_H
#define LM_GEMM_BF16_PAIR_H

#include <stdint.h>
#include <string.h>

static inline uint32_t f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static inline float u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* Branch-free (selects, so packing loops vectorise): RNE; NaN stays a quiet NaN; zero and
 * subnormals become a signed zero. */
static inline uint32_t round_u(uint32_t u)
{
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    r = (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x0040u : r;
    return (u & 0x7f800000u) == 0 ? (u >> 16) & 0x8000u : r;
}

static inline uint32_t round_bits(float x)
{
    return round_u(f2u(x));
}

static inline uint32_t pair_bits(float lo, float hi)
{
    return round_bits(lo) | round_bits(hi) << 16;
}

/* The pair at p[0], p[1] (read as one 64-bit word, so the loops over it vectorise). */
static inline uint32_t pair_at(const float *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return round_u((uint32_t)v) | round_u((uint32_t)(v >> 32)) << 16;
}

#endif
