/* fastmath.h — a branch-free float exp that loops calling it can vectorise: glibc's
 * expf is a call gcc will not vectorise without -ffast-math, which lmlab avoids (NaN
 * detection and PyTorch parity need IEEE semantics). Cephes expf: round-to-nearest range
 * reduction x = n ln2 + r (ln2 split in two, Cody-Waite), a degree-6 polynomial, 2^n
 * built in the exponent bits. Relative error about 2e-7; x is clamped to [-87, 88], so
 * tiny results bottom out at ~1.6e-38 instead of denormals. Header-only on purpose. */
#ifndef LM_FASTMATH_H
#define LM_FASTMATH_H

#include <stdint.h>
#include <string.h>

/* The constants of fast_expf, shared with every vector version of it (attention_flash.c's
 * exp8), so the scalar and vector exps are one algorithm. */
#define FASTEXP_LO -87.0f                    /* x clamped to [LO, HI] */
#define FASTEXP_HI 88.0f
#define FASTEXP_LOG2E 1.44269504088896341f
#define FASTEXP_ROUND 12582912.0f            /* 1.5 * 2^23: adding it rounds to an int */
#define FASTEXP_LN2_HI 0.693359375f          /* ln 2 = LN2_HI - LN2_LO, Cody-Waite */
#define FASTEXP_LN2_LO -2.12194440e-4f
#define FASTEXP_P0 1.9875691500e-4f          /* the degree-6 polynomial, highest first */
#define FASTEXP_P1 1.3981999507e-3f
#define FASTEXP_P2 8.3334519073e-3f
#define FASTEXP_P3 4.1665795894e-2f
#define FASTEXP_P4 1.6666665459e-1f
#define FASTEXP_P5 5.0000001201e-1f

static inline float fast_expf(float x)
{
    x = x < FASTEXP_LO ? FASTEXP_LO : x;
    x = x > FASTEXP_HI ? FASTEXP_HI : x;
    float fn = x * FASTEXP_LOG2E + FASTEXP_ROUND;
    fn -= FASTEXP_ROUND;
    float r = x - fn * FASTEXP_LN2_HI;
    r = r - fn * FASTEXP_LN2_LO;
    float p = FASTEXP_P0;
    p = p * r + FASTEXP_P1;
    p = p * r + FASTEXP_P2;
    p = p * r + FASTEXP_P3;
    p = p * r + FASTEXP_P4;
    p = p * r + FASTEXP_P5;
    p = p * r * r + r + 1.0f;
    /* unsigned: a NaN x (fn then INT_MIN) must not overflow; p is NaN, so is the result */
    uint32_t bits = (uint32_t)((int32_t)fn + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

#endif
