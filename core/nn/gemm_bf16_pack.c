/* gemm_bf16_pack.c — packing fp32 operands into gemm_bf16's bf16 layouts (see
 * gemm_bf16_pack.h): B panels for every kernel, A rows of whole tiles for the AMX kernel.
 * Two versions of each, the same bits:
 *  - portable C on round_u (gemm_bf16_pair.h), multi-versioned per CPU level (CPU_CLONES);
 *    what the emulated kernel uses, on any CPU;
 *  - AVX-512 under target(): vcvtne2ps2bf16 rounds 32 floats at once (RNE, NaN -> quiet
 *    NaN (u >> 16) | 0x40, zero and subnormal inputs -> signed zero: round_u's rule, the
 *    SDM's VCVTNE2PS2BF16), masked loads give the edges' zero padding, and the transposed
 *    layouts (A stored K x M, B stored N x K) go through 16 x 16 transposes of 32-bit
 *    pairs in registers, so every store is a whole 64-byte row. gemm_bf16.c asks for it
 *    only on the AVX512-BF16 and AMX kernels (chosen once from cpuid, docs/cpu.md).
 * Not a kernel: no products here; not the choice of version (the caller's). */
#include "gemm_bf16_pack.h"

#include "cpu.h"
#include "gemm_bf16.h"
#include "gemm_bf16_pair.h"

#include <string.h>

#define NR GEMM_BF16_NR   /* columns of one B panel */
#define MR GEMM_BF16_MR   /* rows of one A micro-panel of the AVX512 kernel */

/* ---- portable ---- */

CPU_CLONES
static void pack_b_portable(uint16_t *restrict dst, size_t pstride, int tb, const float *B,
                            int ldb, int k0, int kc, int j0, int nc)
{
    int kp = (kc + 1) / 2, full = kc / 2;
    for (int q = 0; q * NR < nc; q++) {
        uint32_t *restrict panel = (uint32_t *)(dst + (size_t)q * pstride);
        int n0 = j0 + q * NR, w = nc - q * NR;
        w = w < NR ? w : NR;
        if (!tb) {   /* B row-major K x N: each pair of rows is contiguous in n */
            for (int p = 0; p < kp; p++) {
                const float *lo = B + (size_t)(k0 + 2 * p) * ldb + n0;
                const float *hi = 2 * p + 1 < kc ? lo + ldb : NULL;
                uint32_t *out = panel + (size_t)p * NR;
                if (hi && w == NR)
                    for (int c = 0; c < NR; c++)
                        out[c] = pair_bits(lo[c], hi[c]);
                else
                    for (int c = 0; c < NR; c++)
                        out[c] = c < w ? pair_bits(lo[c], hi ? hi[c] : 0.0f) : 0;
            }
        } else {     /* B stored N x K: each column is a contiguous row of pairs */
            for (int c = 0; c < NR; c++) {
                const float *col = B + (size_t)(n0 + c) * ldb + k0;
                if (c >= w) {
                    for (int p = 0; p < kp; p++)
                        panel[(size_t)p * NR + c] = 0;
                    continue;
                }
                for (int p = 0; p < full; p++)
                    panel[(size_t)p * NR + c] = pair_at(col + 2 * p);
                if (kc & 1)
                    panel[(size_t)full * NR + c] = pair_bits(col[kc - 1], 0.0f);
            }
        }
    }
}

/* Rows mc..rows-1 of a packed A block (the last tile's padding), zero. */
static void zero_a_rows(uint32_t *dst, size_t kpp, int mc, int rows)
{
    for (int i = mc; i < rows; i++)
        for (size_t p0 = 0; p0 < kpp; p0 += 16)
            memset(dst + gemm_bf16_pack_a_at(kpp, i, p0), 0, 16 * sizeof *dst);
}

CPU_CLONES
static void pack_a_portable(uint32_t *dst, int ta, const float *A, int lda, int i0, int mc,
                            int k0, int kc)
{
    int kp = (kc + 1) / 2, full = kc / 2, rows = (mc + 15) / 16 * 16;
    size_t kpp = gemm_bf16_pack_a_stride(kp);
    if (ta) {   /* stored K x M: 16 pairs (32 stored rows) at a time are converted in
                 * passes along i into blk, then written out 16 pairs per row */
        uint32_t blk[16][GEMM_BF16_PACK_MAX_ROWS];
        for (int p0 = 0; p0 < kp; p0 += 16) {
            int np = kp - p0 < 16 ? kp - p0 : 16;
            for (int q = 0; q < np; q++) {
                int p = p0 + q;
                const float *restrict lo = A + (size_t)(k0 + 2 * p) * lda + i0;
                if (2 * p + 1 < kc) {
                    const float *restrict hi = lo + lda;
                    for (int i = 0; i < mc; i++)
                        blk[q][i] = pair_bits(lo[i], hi[i]);
                } else {
                    for (int i = 0; i < mc; i++)
                        blk[q][i] = pair_bits(lo[i], 0.0f);
                }
            }
            for (int q = np; q < 16; q++)
                for (int i = 0; i < mc; i++)
                    blk[q][i] = 0;
            for (int i = 0; i < mc; i++) {
                uint32_t *restrict out = dst + gemm_bf16_pack_a_at(kpp, i, (size_t)p0);
                for (int q = 0; q < 16; q++)
                    out[q] = blk[q][i];
            }
        }
    } else {
        for (int i = 0; i < mc; i++) {
            const float *row = A + (size_t)(i0 + i) * lda + k0;
            for (size_t p = 0; p < kpp; p++)
                dst[gemm_bf16_pack_a_at(kpp, i, p)] =
                    (int)p < full ? pair_at(row + 2 * p)
                    : (int)p == full && (kc & 1) ? pair_bits(row[kc - 1], 0.0f) : 0;
        }
    }
    zero_a_rows(dst, kpp, mc, rows);
}

/* The AVX512 kernel's A: micro-panels of MR rows (gemm_bf16_pack.h). */
CPU_CLONES
static void pack_panels_portable(uint32_t *restrict dst, int ta, const float *A, int lda,
                                 int i0, int mc, int k0, int kc)
{
    int kp = (kc + 1) / 2, full = kc / 2;
    if (ta) {   /* pair of stored rows outermost: each row's mc values are read in order,
                 * once, rounded in one vectorised pass into row, then dealt out to the
                 * panels MR at a time (zero-padded to whole panels) */
        uint32_t row[GEMM_BF16_PACK_MAX_ROWS + MR];
        for (int i = mc; i % MR; i++)   /* the last panel's padding, once */
            row[i] = 0;
        for (int p = 0; p < kp; p++) {
            const float *restrict lo = A + (size_t)(k0 + 2 * p) * lda + i0;
            if (2 * p + 1 < kc) {
                const float *restrict hi = lo + lda;
                for (int i = 0; i < mc; i++)
                    row[i] = pair_bits(lo[i], hi[i]);
            } else {
                for (int i = 0; i < mc; i++)
                    row[i] = pair_bits(lo[i], 0.0f);
            }
            for (int r = 0; r * MR < mc; r++)
                memcpy(dst + (size_t)r * kp * MR + (size_t)p * MR,
                       row + r * MR, MR * sizeof *row);
        }
        return;
    }
    for (int r = 0; r * MR < mc; r++) {
        uint32_t *restrict panel = dst + (size_t)r * kp * MR;
        int m0 = i0 + r * MR, h = mc - r * MR;
        h = h < MR ? h : MR;
        for (int i = 0; i < MR; i++) {
            uint32_t *restrict out = panel + (size_t)i * kp;
            if (i >= h) {
                memset(out, 0, (size_t)kp * sizeof *out);
                continue;
            }
            const float *row = A + (size_t)(m0 + i) * lda + k0;
            for (int p = 0; p < full; p++)
                out[p] = pair_at(row + 2 * p);
            if (kc & 1)
                out[full] = pair_bits(row[kc - 1], 0.0f);
        }
    }
}

/* ---- AVX-512 ---- */

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && \
    (__GNUC__ >= 10 || defined(__clang__))
#define PACK_HAVE_AVX512 1
#include <immintrin.h>

#define PK_ATTR __attribute__((target("avx512f,avx512bf16,avx512bw,avx512vl")))
#define PK_INLINE PK_ATTR static inline __attribute__((always_inline))

/* The first n of 16 lanes (n clamped to 0..16). */
static inline __mmask16 lanes(int n)
{
    return n <= 0 ? 0 : n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
}

/* 32 floats at p (those from n on read as 0, never touched) -> 16 pairs in order:
 * pair t = round(p[2t]) | round(p[2t + 1]) << 16. */
PK_INLINE __m512i row32(const float *p, int n)
{
    __m512 lo = _mm512_maskz_loadu_ps(lanes(n), p);
    __m512 hi = _mm512_maskz_loadu_ps(lanes(n - 16), p + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

/* Pairs of two 16-float vectors: pair i = round(lo[i]) | round(hi[i]) << 16. */
PK_INLINE __m512i pairs16(__m512 lo, __m512 hi)
{
    static const uint16_t ix[32] __attribute__((aligned(64))) = {
        0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
        8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    __m512i w = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);   /* lo0..lo15, hi0..hi15 */
    return _mm512_permutexvar_epi16(_mm512_load_si512((const void *)ix), w);
}

/* r[i][j] <- r[j][i], 32-bit elements: 4 x 4 within 128-bit lanes (unpack 32, 64), then
 * the lanes across rows (two rounds of shuffle_i32x4). */
PK_INLINE void transpose16(__m512i r[16])
{
    __m512i t[16], u[16];
    for (int g = 0; g < 4; g++) {
        __m512i *x = r + 4 * g, *y = t + 4 * g, *z = u + 4 * g;
        y[0] = _mm512_unpacklo_epi32(x[0], x[1]);
        y[1] = _mm512_unpackhi_epi32(x[0], x[1]);
        y[2] = _mm512_unpacklo_epi32(x[2], x[3]);
        y[3] = _mm512_unpackhi_epi32(x[2], x[3]);
        z[0] = _mm512_unpacklo_epi64(y[0], y[2]);   /* lane L: column 4L of rows 4g.. */
        z[1] = _mm512_unpackhi_epi64(y[0], y[2]);   /* column 4L + 1 */
        z[2] = _mm512_unpacklo_epi64(y[1], y[3]);
        z[3] = _mm512_unpackhi_epi64(y[1], y[3]);
    }
    for (int c = 0; c < 4; c++) {
        __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44);
        __m512i v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xee);
        __m512i w0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
        __m512i w1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xee);
        r[c] = _mm512_shuffle_i32x4(v0, w0, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(v0, w0, 0xdd);
        r[8 + c] = _mm512_shuffle_i32x4(v1, w1, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(v1, w1, 0xdd);
    }
}

PK_ATTR static void pack_b_avx512(uint16_t *dst, size_t pstride, int tb, const float *B,
                                  int ldb, int k0, int kc, int j0, int nc)
{
    int kp = (kc + 1) / 2;
    for (int q = 0; q * NR < nc; q++) {
        uint32_t *panel = (uint32_t *)(dst + (size_t)q * pstride);
        int n0 = j0 + q * NR, w = nc - q * NR;
        w = w < NR ? w : NR;
        if (!tb) {   /* two rows of B -> one row of 32 pairs */
            __mmask16 m0 = lanes(w), m1 = lanes(w - 16);
            for (int p = 0; p < kp; p++) {
                const float *lo = B + (size_t)(k0 + 2 * p) * ldb + n0;
                __m512 l0 = _mm512_maskz_loadu_ps(m0, lo), l1 = _mm512_maskz_loadu_ps(m1, lo + 16);
                __m512 h0 = _mm512_setzero_ps(), h1 = h0;
                if (2 * p + 1 < kc) {
                    h0 = _mm512_maskz_loadu_ps(m0, lo + ldb);
                    h1 = _mm512_maskz_loadu_ps(m1, lo + ldb + 16);
                }
                _mm512_storeu_si512((void *)(panel + (size_t)p * NR), pairs16(l0, h0));
                _mm512_storeu_si512((void *)(panel + (size_t)p * NR + 16), pairs16(l1, h1));
            }
            continue;
        }
        /* B stored N x K: 16 columns x 16 pairs converted along K, then transposed */
        for (int cb = 0; cb < NR; cb += 16)
            for (int p0 = 0; p0 < kp; p0 += 16) {
                __m512i v[16];
                for (int c = 0; c < 16; c++)
                    v[c] = cb + c < w
                               ? row32(B + (size_t)(n0 + cb + c) * ldb + k0 + 2 * p0, kc - 2 * p0)
                               : _mm512_setzero_si512();
                transpose16(v);
                int np = kp - p0 < 16 ? kp - p0 : 16;
                for (int t = 0; t < np; t++)
                    _mm512_storeu_si512((void *)(panel + (size_t)(p0 + t) * NR + cb), v[t]);
            }
    }
}

PK_ATTR static void pack_a_avx512(uint32_t *dst, int ta, const float *A, int lda, int i0,
                                  int mc, int k0, int kc)
{
    int kp = (kc + 1) / 2, rows = (mc + 15) / 16 * 16;
    size_t kpp = gemm_bf16_pack_a_stride(kp);
    if (!ta) {   /* each row's pairs are its values in order: 32 floats per store */
        for (int i = 0; i < mc; i++) {
            const float *row = A + (size_t)(i0 + i) * lda + k0;
            for (size_t p0 = 0; p0 < kpp; p0 += 16)
                _mm512_storeu_si512((void *)(dst + gemm_bf16_pack_a_at(kpp, i, p0)),
                                    row32(row + 2 * p0, kc - 2 * (int)p0));
        }
        zero_a_rows(dst, kpp, mc, rows);
        return;
    }
    /* stored K x M: 16 pairs (32 stored rows) x 16 values of i, transposed to 16 rows of
     * 16 pairs; the padding rows up to a whole tile come out zero from the masked loads.
     * Each stored row gives only mc values (the decoder's dW: 96 of a 28782-wide row of
     * dlogits), too short for the hardware's prefetch: the next 32 rows' are asked for
     * while these are transposed. */
    for (size_t p0 = 0; p0 < kpp; p0 += 16) {
        for (int k = 2 * (int)p0 + 32; k < 2 * (int)p0 + 64 && k < kc; k++)
            for (int ib = 0; ib < mc; ib += 16)
                _mm_prefetch((const char *)(A + (size_t)(k0 + k) * lda + i0 + ib), _MM_HINT_T0);
        for (int ib = 0; ib < rows; ib += 16) {
            __mmask16 m = lanes(mc - ib);
            __m512i v[16];
            for (int t = 0; t < 16; t++) {
                int k = 2 * ((int)p0 + t);
                if (k >= kc) {
                    v[t] = _mm512_setzero_si512();
                    continue;
                }
                const float *lo = A + (size_t)(k0 + k) * lda + i0 + ib;
                __m512 h = k + 1 < kc ? _mm512_maskz_loadu_ps(m, lo + lda) : _mm512_setzero_ps();
                v[t] = pairs16(_mm512_maskz_loadu_ps(m, lo), h);
            }
            transpose16(v);
            for (int t = 0; t < 16; t++)
                _mm512_storeu_si512((void *)(dst + gemm_bf16_pack_a_at(kpp, ib + t, p0)), v[t]);
        }
    }
}
PK_ATTR static void pack_panels_avx512(uint32_t *dst, int ta, const float *A, int lda, int i0,
                                       int mc, int k0, int kc)
{
    int kp = (kc + 1) / 2;
    if (ta) {   /* as the portable code: each pair of stored rows rounded into row (16
                 * values of i per instruction), then dealt out to the panels MR at a time */
        uint32_t row[GEMM_BF16_PACK_MAX_ROWS + MR] __attribute__((aligned(64)));
        for (int i = mc; i % MR; i++)   /* the last panel's padding, once */
            row[i] = 0;
        for (int p = 0; p < kp; p++) {
            const float *lo = A + (size_t)(k0 + 2 * p) * lda + i0;
            int two = 2 * p + 1 < kc;
            for (int ib = 0; ib < mc; ib += 16) {
                __mmask16 m = lanes(mc - ib);
                __m512 h = two ? _mm512_maskz_loadu_ps(m, lo + lda + ib) : _mm512_setzero_ps();
                _mm512_mask_storeu_epi32(row + ib, m, pairs16(_mm512_maskz_loadu_ps(m, lo + ib), h));
            }
            for (int r = 0; r * MR < mc; r++)
                memcpy(dst + (size_t)r * kp * MR + (size_t)p * MR, row + r * MR, MR * sizeof *row);
        }
        return;
    }
    /* row-major: each row's pairs are its values in order, 32 at a time; masked stores
     * end each row at its kp pairs (the rows are kp apart, not padded) */
    for (int r = 0; r * MR < mc; r++) {
        uint32_t *panel = dst + (size_t)r * kp * MR;
        int h = mc - r * MR < MR ? mc - r * MR : MR;
        for (int i = 0; i < MR; i++) {
            uint32_t *out = panel + (size_t)i * kp;
            if (i >= h) {
                memset(out, 0, (size_t)kp * sizeof *out);
                continue;
            }
            const float *row = A + (size_t)(i0 + r * MR + i) * lda + k0;
            for (int p0 = 0; p0 < kp; p0 += 16)
                _mm512_mask_storeu_epi32(out + p0, lanes(kp - p0), row32(row + 2 * p0, kc - 2 * p0));
        }
    }
}
#endif

/* ---- the choice ---- */

void gemm_bf16_pack_b_block(uint16_t *dst, size_t pstride, int tb, const float *B, int ldb,
                            int k0, int kc, int j0, int nc, int avx512)
{
#ifdef PACK_HAVE_AVX512
    if (avx512) {
        pack_b_avx512(dst, pstride, tb, B, ldb, k0, kc, j0, nc);
        return;
    }
#else
    (void)avx512;
#endif
    pack_b_portable(dst, pstride, tb, B, ldb, k0, kc, j0, nc);
}

void gemm_bf16_pack_a_tiles(uint32_t *dst, int ta, const float *A, int lda, int i0, int mc,
                            int k0, int kc, int avx512)
{
#ifdef PACK_HAVE_AVX512
    if (avx512) {
        pack_a_avx512(dst, ta, A, lda, i0, mc, k0, kc);
        return;
    }
#else
    (void)avx512;
#endif
    pack_a_portable(dst, ta, A, lda, i0, mc, k0, kc);
}

void gemm_bf16_pack_a_panels(uint32_t *dst, int ta, const float *A, int lda, int i0, int mc,
                             int k0, int kc, int avx512)
{
#ifdef PACK_HAVE_AVX512
    if (avx512) {
        pack_panels_avx512(dst, ta, A, lda, i0, mc, k0, kc);
        return;
    }
#else
    (void)avx512;
#endif
    pack_panels_portable(dst, ta, A, lda, i0, mc, k0, kc);
}
