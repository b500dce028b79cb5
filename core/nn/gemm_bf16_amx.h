/* gemm_bf16_amx.h — the AMX-BF16 pieces of gemm_bf16 (gemm_bf16_amx.c), for gemm_bf16.c
 * only: asking Linux for the tile state, the tile configuration of one call, and one
 * block of products on TDPBF16PS tiles. Not an interface of its
 * own: gemm_bf16.h is the product's; everything here assumes gemm_bf16.c's blocking. */
#ifndef LM_GEMM_BF16_AMX_H
#define LM_GEMM_BF16_AMX_H

#include <stddef.h>
#include <stdint.h>

/* Asks Linux for permission to use the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA), once per process before any thread uses a tile: 0, or -1 with why
 * in why (the errno text, or "built without AMX intrinsics"). */
int gemm_bf16_amx_grant(char *why, size_t cap);

/* Loads this thread's tile configuration (8 tiles of 16 rows x 64 bytes) / releases the
 * tiles. One pair around every gemm_bf16 call on the AMX kernel, on its calling thread. */
void gemm_bf16_amx_begin(void);
void gemm_bf16_amx_end(void);

/* The store of a tile buffer into C: C (mv x nv) = alpha tile + beta C, tile rows 32
 * floats apart (gemm_bf16.c's epilogue, the one the AVX512 kernel uses). */
typedef void (*GemmBf16AmxEpi)(const float *tile, float *C, int ldc, int mv, int nv,
                               float alpha, float beta);

/* Every 32 x 32 block of C (i0, j0 already applied; ldc) from a packed A block
 * (gemm_bf16_pack_a_tiles: mc rows, kp pairs) against nc columns of gemm_bf16.c's packed B
 * panels (bview, panels pstride bf16 apart, pair p of column c at uint32 p * 32 + c):
 * C = alpha A.B + beta C through tile (32 x 32 floats, 64-byte aligned) and epi, or
 * stored straight from the tiles when whole with alpha 1 and beta 0. Tiles are zeroed
 * per call: one K block's sum, added as gemm_bf16_kern.inc's kernel adds it. */
void gemm_bf16_amx_block(const uint32_t *apack, int kp, int mc, const uint16_t *bview,
                         size_t pstride, int nc, float *C, int ldc, float alpha, float beta,
                         float *tile, GemmBf16AmxEpi epi);

#endif
