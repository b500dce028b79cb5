/* gemm_bf16_pack.h — packing fp32 operands into gemm_bf16's bf16 layouts
 * (gemm_bf16_pack.c), for gemm_bf16.c, gemm_bf16_amx.c and their tests only: B into
 * panels of 32 columns (every kernel), A into rows of whole tiles of pairs (the AMX
 * kernel) or into micro-panels of 12 rows (the AVX512 and emulated kernels). Each has a portable version (any CPU) and an AVX-512 one (cvtne2ps2bf16 for
 * the rounding, in-register 16 x 16 transposes for the transposed layouts) that the
 * caller asks for only where the CPU has AVX512-BF16; both give the same bits, those of
 * gemm_bf16_pair.h's round_u. Not an interface of its own: gemm_bf16.h is the product's. */
#ifndef LM_GEMM_BF16_PACK_H
#define LM_GEMM_BF16_PACK_H

#include <stddef.h>
#include <stdint.h>

/* Rows of A one pack holds at most: gemm_bf16.c's MC (its blocks of A), and the size of
 * the packing's own row buffers. */
#define GEMM_BF16_PACK_MAX_ROWS 96

/* Pairs per packed row of A for kp pairs of K: kp rounded up to whole tiles (16 pairs). */
static inline size_t gemm_bf16_pack_a_stride(int kp)
{
    return (size_t)(kp + 15) / 16 * 16;
}

/* Where pair p of row i sits in a packed A block for the AMX kernel (kpp =
 * gemm_bf16_pack_a_stride): groups of 16 rows, group g at g * 16 * kpp pairs, each group
 * its kpp / 16 tiles in K order, each tile 16 rows x 16 pairs contiguous (1 KB; row r of a
 * tile at r * 16). A tile load is one sequential 1 KB read, not 16 rows kpp pairs apart:
 * 1.09-1.20x the tiles' throughput in a scratch measurement on Emerald Rapids
 * (docs/step.md). Pairs p..p+15 of a row, p a multiple of 16, are contiguous. */
static inline size_t gemm_bf16_pack_a_at(size_t kpp, int i, size_t p)
{
    return (size_t)(i & ~15) * kpp + (p & ~(size_t)15) * 16 + (size_t)(i & 15) * 16 + (p & 15);
}

/* Packs op(B) rows k0..k0+kc, columns j0..j0+nc into panels of 32 columns, panel q at
 * dst + q * pstride (bf16), K pair p of column c at pair p * 32 + c of the panel (as one
 * 32-bit pair, low half the even k). Zero-padded to whole panels and pairs; writes
 * exactly (kc + 1) / 2 pairs of each panel. tb != 0: B is stored N x K. avx512: the
 * AVX-512 version (the CPU must have AVX512-BF16), else the portable one. */
void gemm_bf16_pack_b_block(uint16_t *dst, size_t pstride, int tb, const float *B, int ldb,
                            int k0, int kc, int j0, int nc, int avx512);

/* Packs op(A) rows i0..i0+mc, K values k0..k0+kc as rows of gemm_bf16_pack_a_stride(kp)
 * pairs in tiles (pair p of row i at dst + gemm_bf16_pack_a_at(stride, i, p)), zero-padded
 * to whole pairs, whole tiles of pairs and whole 16-row tiles; ta != 0: A is stored K x M. At most GEMM_BF16_PACK_MAX_ROWS rows, kc <= 256. avx512 as
 * above. */
void gemm_bf16_pack_a_tiles(uint32_t *dst, int ta, const float *A, int lda, int i0, int mc,
                            int k0, int kc, int avx512);

/* Packs op(A) rows i0..i0+mc, K values k0..k0+kc for the AVX512 kernel: micro-panels of
 * GEMM_BF16_MR rows, panel r at dst + r * kp * MR, zero-padded to a whole panel. ta = 0:
 * row i of a panel holds its kp pairs contiguously (pair p at i * kp + p); ta != 0 (A
 * stored K x M): pair p of the panel's rows together (p * MR + i). At most GEMM_BF16_PACK_MAX_ROWS rows.
 * avx512 as above. */
void gemm_bf16_pack_a_panels(uint32_t *dst, int ta, const float *A, int lda, int i0, int mc,
                             int k0, int kc, int avx512);

#endif
