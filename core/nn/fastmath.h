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

static inline float fast_expf(float x)
{
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    float fn = x * 1.44269504088896341f + 12582912.0f;  /* 1.5 * 2^23: rounds to an int */
    fn -= 12582912.0f;
    float r = x - fn * 0.693359375f;
    r = r - fn * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* unsigned: a NaN x (fn then INT_MIN) must not overflow; p is NaN, so is the result */
    uint32_t bits = (uint32_t)((int32_t)fn + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

#endif
