/* gemm_bf16_amx.c — gemm_bf16's AMX-BF16 kernel (see gemm_bf16_amx.h): C tiles of 16 x 16
 * fp32 accumulate TDPBF16PS products of A tiles (16 rows x 16 bf16 pairs) and B tiles
 * (16 pairs x 16 columns). The micro-kernel is 2 x 2 tiles: 32 rows of A (tmm4-5) against
 * 32 columns of B (tmm6-7, one packed panel of gemm_bf16.c) into tmm0-3. B panels are used
 * as gemm_bf16_pack.c packs them (VNNI pairs, rows 128 bytes apart), and A as it packs it
 * for AMX (tiles of 16 rows x 16 pairs, each 1 KB contiguous). Chosen by
 * gemm_bf16_select_kernel(), never by the caller.
 * Not a driver: gemm_bf16.c's blocking (K blocks of 256, MC = 96) calls it per block. */
#include "gemm_bf16_amx.h"

#include "gemm_bf16_pack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    (__GNUC__ >= 11 || defined(__clang__))
#define GEMM_BF16_HAVE_AMX 1
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define NR 32                    /* columns of one packed B panel (GEMM_BF16_NR) */
#define TR 16                    /* rows of a tile; pairs of K per A tile */
#define TILE_ROW 64              /* bytes per tile row: a packed A tile's row stride */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
#define AMX_ATTR __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bf16,avx512bw,avx512vl")))

#ifdef GEMM_BF16_HAVE_AMX

int gemm_bf16_amx_grant(char *why, size_t cap)
{
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0)
        return 0;
    snprintf(why, cap, "Linux refused the tile state (arch_prctl ARCH_REQ_XCOMP_PERM: %s)",
             strerror(errno));
    return -1;
}

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} TileConfig;

/* Every tile 16 rows x 64 bytes. A constant, not a local filled in: GCC 12's
 * _tile_loadconfig tells the compiler it reads 8 bytes of the configuration, so the
 * stores of a local's rows and colsb were dropped as dead (and tilezero then faulted). */
static const TileConfig tile_config __attribute__((aligned(64))) = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {TR, TR, TR, TR, TR, TR, TR, TR},
};

AMX_ATTR void gemm_bf16_amx_begin(void)
{
    _tile_loadconfig(&tile_config);
}

AMX_ATTR void gemm_bf16_amx_end(void)
{
    _tile_release();
}

/* out (16 or 32 rows x 32 columns, rows ldo floats apart) = (add ? out : 0) + the sum
 * over kp pairs of a (its 16-row groups 16 * kpp pairs apart, each group's tiles of 16
 * pairs contiguous: gemm_bf16_pack_a_at) times b (a packed panel; its last partial
 * tile of pairs from btail, zero-padded to 16 pairs), accumulated in the tiles: with add,
 * out is loaded into them first. two: 32 rows (tmm5 and tmm2-3 too), else 16. */
AMX_ATTR static void tiles(int kp, const uint32_t *a, size_t kpp, int two, const uint32_t *b,
                           const uint32_t *btail, float *out, size_t ldo, int add)
{
    size_t os = ldo * 4;
    if (add) {
        _tile_loadd(0, out, os);
        _tile_loadd(1, out + 16, os);
        if (two) {
            _tile_loadd(2, out + TR * ldo, os);
            _tile_loadd(3, out + TR * ldo + 16, os);
        }
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (int p = 0; p < kp; p += TR) {
        const uint32_t *bt = p + TR <= kp ? b + (size_t)p * NR : btail;
        _tile_loadd(6, bt, NR * 4);
        _tile_loadd(7, bt + 16, NR * 4);
        _tile_loadd(4, a + (size_t)p * TR, TILE_ROW);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        if (two) {
            _tile_loadd(5, a + (size_t)TR * kpp + (size_t)p * TR, TILE_ROW);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, out, os);
    _tile_stored(1, out + 16, os);
    if (two) {
        _tile_stored(2, out + TR * ldo, os);
        _tile_stored(3, out + TR * ldo + 16, os);
    }
}

AMX_ATTR void gemm_bf16_amx_block(const uint32_t *apack, int kp, int mc, const uint16_t *bview,
                                  size_t pstride, int nc, float *C, int ldc, float alpha,
                                  float beta, float *tile, GemmBf16AmxEpi epi)
{
    uint32_t btail[TR * NR] __attribute__((aligned(64)));
    size_t kpp = gemm_bf16_pack_a_stride(kp);
    int whole = kp / TR * TR, rest = kp - whole;
    /* alpha 1, beta 0 or 1: C is stored from (and with beta 1 first loaded into) the tiles */
    int direct = alpha == 1.0f && (beta == 0.0f || beta == 1.0f), add = beta != 0.0f;
    for (int jp = 0; jp < nc; jp += NR) {
        const uint32_t *bp = (const uint32_t *)(bview + (size_t)(jp / NR) * pstride);
        int nv = nc - jp < NR ? nc - jp : NR;
        if (rest) {   /* the panel's last pairs, zero-padded to a whole tile of pairs */
            memcpy(btail, bp + (size_t)whole * NR, (size_t)rest * NR * 4);
            memset(btail + (size_t)rest * NR, 0, (size_t)(TR - rest) * NR * 4);
        }
        for (int ip = 0; ip < mc; ip += 2 * TR) {
            int mv = mc - ip < 2 * TR ? mc - ip : 2 * TR;
            const uint32_t *a = apack + (size_t)ip * kpp;
            float *c = C + (size_t)ip * ldc + jp;
            if (direct && nv == NR && (mv == 2 * TR || mv == TR)) {   /* no tile trip */
                tiles(kp, a, kpp, mv > TR, bp, btail, c, (size_t)ldc, add);
                continue;
            }
            if (direct && add) {   /* an edge accumulates as a whole tile does: the same
                                    * bits wherever an element of C sits */
                for (int i = 0; i < 2 * TR; i++) {
                    float *t = tile + (size_t)i * NR;
                    int n = i < mv ? nv : 0;
                    if (n)
                        memcpy(t, c + (size_t)i * ldc, (size_t)n * 4);
                    memset(t + n, 0, (size_t)(NR - n) * 4);
                }
                tiles(kp, a, kpp, mv > TR, bp, btail, tile, NR, 1);
                for (int i = 0; i < mv; i++)
                    memcpy(c + (size_t)i * ldc, tile + (size_t)i * NR, (size_t)nv * 4);
                continue;
            }
            tiles(kp, a, kpp, mv > TR, bp, btail, tile, NR, 0);
            epi(tile, c, ldc, mv, nv, alpha, beta);
        }
    }
}

#else   /* no AMX intrinsics in this build: gemm_bf16_amx_grant refuses, so the rest is
         * never called */

int gemm_bf16_amx_grant(char *why, size_t cap)
{
    snprintf(why, cap, "this build has no AMX code (not x86-64 Linux with GCC 11+)");
    return -1;
}

void gemm_bf16_amx_begin(void)
{
}

void gemm_bf16_amx_end(void)
{
}

void gemm_bf16_amx_block(const uint32_t *apack, int kp, int mc, const uint16_t *bview,
                         size_t pstride, int nc, float *C, int ldc, float alpha, float beta,
                         float *tile, GemmBf16AmxEpi epi)
{
    (void)apack; (void)kp; (void)mc; (void)bview; (void)pstride; (void)nc; (void)C;
    (void)ldc; (void)alpha; (void)beta; (void)tile; (void)epi;
}

#endif
