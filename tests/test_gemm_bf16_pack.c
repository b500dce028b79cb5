/* test_gemm_bf16_pack.c — the bf16 packing (core/nn/gemm_bf16_pack.h): B panels, AMX A
 * tiles and the AVX512 kernel's A micro-panels (each in both stored layouts), by the
 * portable code and, where the CPU has AVX512-BF16, by the AVX-512 code, each compared
 * bit for bit with a reference written here from the layouts' definitions and
 * gemm_bf16_round (round_u's rule): every packed pair, every padding pair, and nothing
 * written past the block. The data are random values, random bit patterns of every
 * exponent, and every special value (+-0, +-subnormals, +-inf, NaNs with payloads, quiet
 * and signalling, ties at even and odd, max finite that rounds to inf), on edge sizes
 * (K values odd, M, N and pairs off the 16/32 multiples, offsets into a padded matrix).
 * Run under qemu without AVX-512 too (qemu_cpus): there only the portable code runs. */
#include "check.h"
#include "gemm_bf16.h"
#include "gemm_bf16_pack.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xa5a5a5a5u

static const uint32_t specials[] = {
    0x00000000u, 0x80000000u,                              /* +-0 */
    0x00000001u, 0x007fffffu, 0x80000001u, 0x807fffffu,    /* +-subnormals */
    0x00400000u, 0x80400000u,
    0x00800000u, 0x80800000u, 0x00ffffffu,                 /* smallest normals */
    0x7f800000u, 0xff800000u,                              /* +-inf */
    0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,    /* NaNs: quiet, signalling, */
    0x7fbfffffu, 0x7fa12345u, 0xffc0ffffu, 0x7fff0001u,    /* with payloads */
    0x7f810000u, 0xff80ffffu,
    0x3f808000u, 0x3f818000u, 0xbf808000u, 0xbf818000u,    /* ties: to even (down, up) */
    0x3f807fffu, 0x3f808001u, 0x3f817fffu,                 /* just below / above a tie */
    0x7f7fffffu, 0xff7fffffu, 0x7f7f8000u, 0x7f7f7fffu,    /* max finite: -> inf, tie, stays */
    0x3f800000u, 0xc0490fdbu,
};
#define N_SPECIAL (sizeof specials / sizeof specials[0])

static float from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* n 4-byte words, 64-byte aligned (the size rounded up to the alignment, as C11 asks). */
static void *alloc_words(size_t n)
{
    void *p = aligned_alloc(64, (n * 4 + 63) & ~(size_t)63);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static float *data(Rng *r, size_t n)
{
    float *p = alloc_words(n);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = rng_below(r, 8);
        p[i] = k < 3 ? from_bits(specials[rng_below(r, N_SPECIAL)])
               : k < 5 ? from_bits(rng_u32(r))
               : (float)(rng_uniform(r) * 4.0 - 2.0);
    }
    /* every special value at least once, at the front (the first rows and columns) */
    for (size_t i = 0; i < N_SPECIAL && i < n; i++)
        p[i] = from_bits(specials[i]);
    return p;
}

/* The pair of values lo and hi (hi absent: 0) as the layouts define it. */
static uint32_t ref_pair(const float *lo, const float *hi)
{
    return (uint32_t)gemm_bf16_round(lo ? *lo : 0.0f) |
           (uint32_t)gemm_bf16_round(hi ? *hi : 0.0f) << 16;
}

/* op(X)[i][k] of X stored row-major with leading dimension ld; t: stored transposed. */
static const float *op(const float *X, int t, int ld, int i, int k)
{
    return t ? X + (size_t)k * ld + i : X + (size_t)i * ld + k;
}

static int n_cases, n_bad;

/* B block (k0, kc, j0, nc) of op(B) (K x N) into panels pstride apart, checked against
 * the reference and for no write past kp pairs of each panel. */
static void check_b(const float *B, int tb, int ldb, int k0, int kc, int j0, int nc,
                    int avx512)
{
    int kp = (kc + 1) / 2, panels = (nc + 31) / 32;
    size_t pstride = (size_t)(kp + 3) * 64;   /* three pairs of slack per panel */
    size_t n = (size_t)panels * pstride / 2;
    uint32_t *dst = alloc_words(n);
    for (size_t i = 0; i < n; i++)
        dst[i] = SENTINEL;
    gemm_bf16_pack_b_block((uint16_t *)dst, pstride, tb, B, ldb, k0, kc, j0, nc, avx512);
    int bad = 0;
    for (int q = 0; q < panels; q++) {
        const uint32_t *panel = dst + (size_t)q * pstride / 2;
        for (int p = 0; p < kp + 3; p++)
            for (int c = 0; c < 32; c++) {
                int n_ = j0 + 32 * q + c, k = k0 + 2 * p;
                uint32_t want = p >= kp ? SENTINEL
                                : 32 * q + c >= nc ? 0
                                : ref_pair(op(B, !tb, ldb, n_, k),
                                           2 * p + 1 < kc ? op(B, !tb, ldb, n_, k + 1) : NULL);
                uint32_t got = panel[(size_t)p * 32 + c];
                if (got != want && bad++ < 3)
                    fprintf(stderr, "  pack_b %s tb=%d k0=%d kc=%d j0=%d nc=%d: panel %d pair %d "
                            "column %d is %08x, want %08x\n", avx512 ? "avx512" : "portable",
                            tb, k0, kc, j0, nc, q, p, c, got, want);
            }
    }
    n_cases++;
    n_bad += bad != 0;
    free(dst);
}

static void check_a(const float *A, int ta, int lda, int i0, int mc, int k0, int kc,
                    int avx512)
{
    int kp = (kc + 1) / 2, rows = (mc + 15) / 16 * 16;
    size_t kpp = gemm_bf16_pack_a_stride(kp), n = (size_t)(rows + 1) * kpp;
    uint32_t *dst = alloc_words(n);
    for (size_t i = 0; i < n; i++)
        dst[i] = SENTINEL;
    gemm_bf16_pack_a_tiles(dst, ta, A, lda, i0, mc, k0, kc, avx512);
    int bad = 0;
    for (int i = 0; i <= rows; i++)
        for (size_t p = 0; p < kpp; p++) {
            int k = k0 + 2 * (int)p;
            uint32_t want = i == rows ? SENTINEL
                            : i >= mc || (int)p >= kp ? 0
                            : ref_pair(op(A, ta, lda, i0 + i, k),
                                       2 * (int)p + 1 < kc ? op(A, ta, lda, i0 + i, k + 1) : NULL);
            uint32_t got = dst[i == rows ? (size_t)rows * kpp + p   /* past the block */
                                          : gemm_bf16_pack_a_at(kpp, i, p)];
            if (got != want && bad++ < 3)
                fprintf(stderr, "  pack_a %s ta=%d i0=%d mc=%d k0=%d kc=%d: row %d pair %zu is "
                        "%08x, want %08x\n", avx512 ? "avx512" : "portable", ta, i0, mc, k0,
                        kc, i, p, got, want);
        }
    n_cases++;
    n_bad += bad != 0;
    free(dst);
}

/* The AVX512 kernel's micro-panels of MR rows (both layouts), kp pairs per row. */
static void check_panels(const float *A, int ta, int lda, int i0, int mc, int k0, int kc,
                         int avx512)
{
    int kp = (kc + 1) / 2, panels = (mc + GEMM_BF16_MR - 1) / GEMM_BF16_MR;
    size_t used = (size_t)panels * kp * GEMM_BF16_MR, n = used + 64;
    uint32_t *dst = alloc_words(n);
    for (size_t i = 0; i < n; i++)
        dst[i] = SENTINEL;
    gemm_bf16_pack_a_panels(dst, ta, A, lda, i0, mc, k0, kc, avx512);
    int bad = 0;
    for (size_t x = 0; x < n; x++) {
        uint32_t want = SENTINEL;
        if (x < used) {
            size_t r = x / ((size_t)kp * GEMM_BF16_MR), o = x % ((size_t)kp * GEMM_BF16_MR);
            int i = (int)(ta ? o % GEMM_BF16_MR : o / kp), p = (int)(ta ? o / GEMM_BF16_MR : o % kp);
            int row = (int)r * GEMM_BF16_MR + i, k = k0 + 2 * p;
            want = row >= mc ? 0
                   : ref_pair(op(A, ta, lda, i0 + row, k),
                              2 * p + 1 < kc ? op(A, ta, lda, i0 + row, k + 1) : NULL);
        }
        if (dst[x] != want && bad++ < 3)
            fprintf(stderr, "  pack_a_panels %s ta=%d i0=%d mc=%d k0=%d kc=%d: word %zu is %08x, "
                    "want %08x\n", avx512 ? "avx512" : "portable", ta, i0, mc, k0, kc, x,
                    dst[x], want);
    }
    n_cases++;
    n_bad += bad != 0;
    free(dst);
}

static void test_pack(int avx512, Rng *r)
{
    /* one 300 x 300 matrix with a padded leading dimension serves every layout */
    enum { DIM = 300, LD = 307 };
    float *X = data(r, (size_t)DIM * LD);
    static const int ks[] = {1, 2, 15, 16, 17, 31, 32, 33, 63, 255, 256};
    static const int ns[] = {1, 15, 16, 17, 31, 32, 33, 65, 100};
    static const int ms[] = {1, 15, 16, 17, 31, 33, 47, 95, 96};
    static const int offs[][2] = {{0, 0}, {2, 5}, {7, 32}};
    n_cases = n_bad = 0;
    for (int t = 0; t < 2; t++)
        for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
            for (size_t o = 0; o < 3; o++) {
                for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
                    check_b(X, t, LD, offs[o][0], ks[a], offs[o][1], ns[b], avx512);
                for (size_t b = 0; b < sizeof ms / sizeof ms[0]; b++) {
                    check_a(X, t, LD, offs[o][1], ms[b], offs[o][0], ks[a], avx512);
                    check_panels(X, t, LD, offs[o][1], ms[b], offs[o][0], ks[a], avx512);
                }
            }
    CHECK(n_bad == 0, "%s packing: %d of %d blocks differ from the reference",
          avx512 ? "AVX-512" : "portable", n_bad, n_cases);
    printf("  %s packing: %d blocks (B panels, AMX A tiles, A micro-panels; both layouts) %s\n",
           avx512 ? "AVX-512" : "portable", n_cases, n_bad ? "FAILED" : "bit for bit");
    free(X);
}

/* The rounding rule itself on the special values (what both packings must reproduce). */
static void test_specials(void)
{
    CHECK(gemm_bf16_round(from_bits(0x7f800001u)) == 0x7fc0, "signalling NaN -> quiet");
    CHECK(gemm_bf16_round(from_bits(0xff812345u)) == 0xffc1, "NaN keeps sign and payload");
    CHECK(gemm_bf16_round(from_bits(0x807fffffu)) == 0x8000, "-subnormal -> -0");
    CHECK(gemm_bf16_round(from_bits(0x7f7fffffu)) == 0x7f80, "max finite rounds to inf");
    CHECK(gemm_bf16_round(from_bits(0x7f7f7fffu)) == 0x7f7f, "below the tie stays");
    CHECK(gemm_bf16_round(from_bits(0x3f818000u)) == 0x3f82, "tie at odd rounds up");
    CHECK(gemm_bf16_round(from_bits(0x3f808000u)) == 0x3f80, "tie at even rounds down");
}

int main(void)
{
    int avx, amx;
    gemm_bf16_cpu(&avx, &amx);
    Rng r;
    rng_seed(&r, 50);
    test_specials();
    test_pack(0, &r);
    if (avx)
        test_pack(1, &r);
    else
        printf("  AVX-512 packing: not run, this CPU lacks avx512_bf16\n");
    return check_summary();
}
