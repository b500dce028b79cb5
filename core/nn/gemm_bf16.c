/* gemm_bf16.c — the bf16 packed product (see gemm_bf16.h): CPU detection, rounding, the
 * blocked driver (the packing itself is gemm_bf16_pack.c's: portable, or AVX-512 on the
 * avx512-bf16 and amx-bf16 kernels), and the micro-kernel built twice from
 * gemm_bf16_kern.inc (AVX512-BF16 intrinsics under target(); the portable emulation of
 * vdpbf16ps, multi-versioned per CPU level like every C kernel: CPU_CLONES, cpu.h).
 * Blocking (GotoBLAS-style): KC = 256 values of K per packed block, MC = 96 rows of A,
 * NC = 512 columns of B when B is packed per call. A is packed once per product against a
 * B packed whole (a cached weight, or a per-call B that fits the scratch), in one of three
 * orders chosen by size: each block of A walks every column (run_packed); a B larger than
 * L2 is walked in L2-sized column chunks against A packed whole (run_packed_wide); K over
 * KA_MAX goes a K block at a time (run_deep).
 * The AMX kernel (gemm_bf16_amx.c) runs under this same driver: its own A layout
 * (pack_a) and block of products (run_block), the same B panels.
 * Not a BLAS: row-major only, no threads. */
#include "gemm_bf16.h"

#include "cpu.h"
#include "gemm_bf16_amx.h"
#include "gemm_bf16_pack.h"
#include "gemm_bf16_pair.h"
#include "sysinfo.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GEMM_BF16_X86 1
#endif

#define KC GEMM_BF16_KC   /* even: packed pairs never straddle two K blocks */
#define MC GEMM_BF16_PACK_MAX_ROWS   /* 96: a multiple of GEMM_BF16_MR */
#define NC 512   /* a multiple of GEMM_BF16_NR */
#define PAIR_ELEMS (2 * GEMM_BF16_NR)   /* bf16 per K pair of one B panel */

/* ---- CPU ---- */

void gemm_bf16_cpu(int *avx512_bf16, int *amx_bf16)
{
    sysinfo_bf16(avx512_bf16, amx_bf16);
}

/* Why the kernel is not the CPU's best, or what forced it ("" when nothing to say). */
static char g_note[192];

/* LMLAB_BF16_KERNEL: -1 unset, else the kernel named (an unknown name is noted and
 * ignored: the choice cannot fail, show machine prints the note). */
static int forced_kernel(void)
{
    const char *e = getenv(GEMM_BF16_KERNEL_ENV);
    if (!e || !*e)
        return -1;
    if (!strcmp(e, "amx"))
        return GEMM_BF16_AMX;
    if (!strcmp(e, "avx512"))
        return GEMM_BF16_AVX512;
    if (!strcmp(e, "emulated"))
        return GEMM_BF16_EMULATED;
    snprintf(g_note, sizeof g_note, "%s=%.32s is not amx, avx512 or emulated: ignored",
             GEMM_BF16_KERNEL_ENV, e);
    return -1;
}

/* Whether the AMX kernel can run in this process: the CPU has amx_bf16 and avx512_bf16
 * and Linux granted the tile data (asked once per process; why it did not in g_amx_why). */
static int g_amx_ok;
static char g_amx_why[128];
static pthread_once_t g_amx_once = PTHREAD_ONCE_INIT;

static void amx_grant(void)
{
    int avx, amx;
    gemm_bf16_cpu(&avx, &amx);
    if (!avx || !amx)
        snprintf(g_amx_why, sizeof g_amx_why, "this CPU lacks %s",
                 amx ? "avx512_bf16" : "amx_bf16");
    else
        g_amx_ok = gemm_bf16_amx_grant(g_amx_why, sizeof g_amx_why) == 0;
}

int gemm_bf16_kernel_available(GemmBf16Kernel k)
{
    if (k == GEMM_BF16_AMX) {   /* asked per gemm_bf16 call: no cpuid here (it traps to the
                                 * hypervisor in a VM), the answer is kept */
        pthread_once(&g_amx_once, amx_grant);
        return g_amx_ok;
    }
    int avx, amx;
    gemm_bf16_cpu(&avx, &amx);
    return k == GEMM_BF16_EMULATED || (k == GEMM_BF16_AVX512 && avx);
}

static GemmBf16Kernel select_once(void)
{
    int avx, amx, want = forced_kernel();
    gemm_bf16_cpu(&avx, &amx);
    if (want == GEMM_BF16_EMULATED) {
        snprintf(g_note, sizeof g_note, "forced by %s=emulated", GEMM_BF16_KERNEL_ENV);
        return GEMM_BF16_EMULATED;
    }
    if (want >= 0 && !(want == GEMM_BF16_AMX ? avx && amx : avx))
        snprintf(g_note, sizeof g_note, "%s=%s but this CPU lacks %s: ignored",
                 GEMM_BF16_KERNEL_ENV, want == GEMM_BF16_AMX ? "amx" : "avx512",
                 want == GEMM_BF16_AMX ? "amx_bf16 (or avx512_bf16)" : "avx512_bf16");
    if (avx && amx && want != GEMM_BF16_AVX512) {
        if (gemm_bf16_kernel_available(GEMM_BF16_AMX))
            return GEMM_BF16_AMX;
        snprintf(g_note, sizeof g_note, "amx_bf16 unused: %s", g_amx_why);
    } else if (avx && amx) {
        snprintf(g_note, sizeof g_note, "amx_bf16 unused: forced by %s=avx512",
                 GEMM_BF16_KERNEL_ENV);
    }
    if (avx)
        return GEMM_BF16_AVX512;
    const char *e = getenv(GEMM_BF16_EMULATE_ENV);
    return e && !strcmp(e, "1") ? GEMM_BF16_EMULATED : GEMM_BF16_NONE;
}

static GemmBf16Kernel g_chosen;
static pthread_once_t g_chosen_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
    g_chosen = select_once();
}

GemmBf16Kernel gemm_bf16_select_kernel(void)
{
    pthread_once(&g_chosen_once, choose);
    return g_chosen;
}

const char *gemm_bf16_kernel_note(void)
{
    pthread_once(&g_chosen_once, choose);
    return g_note;
}

const char *gemm_bf16_kernel_name(GemmBf16Kernel k)
{
    return k == GEMM_BF16_AMX ? "amx-bf16" : k == GEMM_BF16_AVX512 ? "avx512-bf16"
           : k == GEMM_BF16_EMULATED ? "emulated" : "none";
}

/* ---- rounding ---- */

uint16_t gemm_bf16_round(float x)
{
    return (uint16_t)round_bits(x);
}

float gemm_bf16_to_float(uint16_t h)
{
    return u2f((uint32_t)h << 16);
}

/* ---- packing ---- */

size_t gemm_bf16_packed_b_elems(int K, int N)
{
    size_t panels = (size_t)(N + GEMM_BF16_NR - 1) / GEMM_BF16_NR;
    return panels * (size_t)((K + 1) / 2) * PAIR_ELEMS;
}

/* Whether kernel k packs on AVX-512 (gemm_bf16_pack.h): the kernels that need
 * AVX512-BF16 do; the emulated one packs portably. */
static int packs_on_avx512(GemmBf16Kernel k)
{
    return k == GEMM_BF16_AVX512 || k == GEMM_BF16_AMX;
}

/* bf16 elements from one panel of p to the next. */
static size_t packed_pstride(const GemmBf16PackedB *p)
{
    return (size_t)p->kpairs * PAIR_ELEMS;
}

GemmBf16PackedB gemm_bf16_packed_b(uint16_t *data, int K, int N)
{
    return (GemmBf16PackedB){data, K, N, (K + 1) / 2};
}

float gemm_bf16_packed_value(const GemmBf16PackedB *p, int k, int n)
{
    size_t at = (size_t)(n / GEMM_BF16_NR) * packed_pstride(p) +
                ((size_t)(k / 2) * GEMM_BF16_NR + (size_t)(n % GEMM_BF16_NR)) * 2 + (size_t)(k & 1);
    return gemm_bf16_to_float(p->data[at]);
}

GemmBf16PackedB gemm_bf16_packed_rows(const GemmBf16PackedB *p, int k0, int kc)
{
    return (GemmBf16PackedB){p->data + (size_t)(k0 / 2) * PAIR_ELEMS, kc, p->N,
                             (int)(packed_pstride(p) / PAIR_ELEMS)};
}

void gemm_bf16_pack_b(GemmBf16PackedB *p, int tb, int K, int N, const float *B, int ldb)
{
    *p = gemm_bf16_packed_b(p->data, K, N);
    if (K > 0 && N > 0)
        gemm_bf16_pack_b_block(p->data, packed_pstride(p), tb, B, ldb, 0, K, 0, N,
                               packs_on_avx512(gemm_bf16_select_kernel()));
}

void gemm_bf16_pack_b_rows(GemmBf16PackedB *p, int k0, int kc, const float *rows, int ldb)
{
    if (kc > 0 && p->N > 0)
        gemm_bf16_pack_b_block(p->data + (size_t)(k0 / 2) * PAIR_ELEMS, packed_pstride(p), 0,
                               rows, ldb, 0, kc, 0, p->N,
                               packs_on_avx512(gemm_bf16_select_kernel()));
}

/* ---- micro-kernels ---- */

/* The portable vdpbf16ps on 16-lane GCC vectors: per lane, acc += a_hi * b_hi, then
 * acc += a_lo * b_lo (the instruction's order). A product of two bf16 values is exact in
 * fp32 (8 + 8 significant bits), so each multiply-add rounds once, as the fused one does
 * (products below fp32's normal range aside, which the instruction flushes anyway). */
#pragma GCC diagnostic ignored "-Wpsabi"   /* static helpers, inlined: no ABI is crossed */
typedef float EmuF __attribute__((vector_size(64)));
typedef uint32_t EmuI __attribute__((vector_size(64)));
/* the same, for loads and stores at any 4-byte-aligned address of another type */
typedef float EmuFu __attribute__((vector_size(64), aligned(4), may_alias));
typedef uint32_t EmuIu __attribute__((vector_size(64), aligned(4), may_alias));

static inline EmuF emu_zero(void)
{
    return (EmuF){0};
}

static inline EmuI emu_load(const uint16_t *p)
{
    return *(const EmuIu *)p;
}

static inline EmuI emu_bcast(const uint32_t *p)
{
    return (EmuI){0} + *p;
}

static inline EmuF emu_dp(EmuF acc, EmuI a, EmuI b)
{
    EmuI m = (EmuI){0} + 0xffff0000u;
    acc += (EmuF)(a & m) * (EmuF)(b & m);
    acc += (EmuF)(a << 16) * (EmuF)(b << 16);
    return acc;
}

#define KERN_ATTR CPU_CLONES   /* the emulation vectorises at every level, same bits */
#define KERN_NAME kern_emu
#define EPI_NAME epi_emu
#define VECF EmuF
#define VECI EmuI
#define V_ZERO() emu_zero()
#define V_LOAD_B(p) emu_load(p)
#define V_BCAST(p) emu_bcast(p)
#define V_DP(acc, a, b) emu_dp(acc, a, b)
#define V_STORE(dst, v) (*(EmuFu *)(dst) = (v))
#define V_LOADF(p) (*(const EmuFu *)(p))
#include "gemm_bf16_kern.inc"
#undef KERN_ATTR
#undef KERN_NAME
#undef EPI_NAME
#undef VECF
#undef VECI
#undef V_ZERO
#undef V_LOAD_B
#undef V_BCAST
#undef V_DP
#undef V_STORE
#undef V_LOADF

#if defined(GEMM_BF16_X86) && defined(__GNUC__) && (__GNUC__ >= 10 || defined(__clang__))
#define GEMM_BF16_HAVE_AVX512 1
#define KERN_ATTR __attribute__((target("avx512f,avx512bf16,avx512bw,avx512vl")))
#define KERN_NAME kern_avx512
#define EPI_NAME epi_avx512
#define VECF __m512
#define VECI __m512bh
#define V_ZERO() _mm512_setzero_ps()
#define V_LOAD_B(p) ((__m512bh)_mm512_loadu_si512((const void *)(p)))
#define V_BCAST(p) ((__m512bh)_mm512_set1_epi32((int)*(p)))
#define V_DP(acc, a, b) _mm512_dpbf16_ps(acc, a, b)
#define V_STORE(dst, v) _mm512_storeu_ps(dst, v)
#define V_LOADF(p) _mm512_loadu_ps(p)
#include "gemm_bf16_kern.inc"
#endif

typedef void (*KernFn)(int, const uint32_t *, size_t, size_t, const uint16_t *, float *,
                       size_t, int);
typedef void (*EpiFn)(const float *, float *, int, int, int, float, float);

/* ---- driver ---- */

#define KA_MAX 2048                            /* K up to which an A block is packed whole */
#define A_ELEMS ((size_t)MC * KC / 2)          /* uint32 pairs of one K block of A */
#define A_BLOCKS (KA_MAX / KC)                 /* K blocks of A packed at once */
#define B_ELEMS ((size_t)NC * KC)              /* bf16 */
#define BW_ELEMS ((size_t)2 << 20)             /* bf16 of a B packed whole per call (4 MiB) */
#define TILE_FLOATS (32 * GEMM_BF16_NR)        /* 32 rows: the AMX kernel's 2 x 2 tiles */
#define L2_B_BYTES ((size_t)512 << 10)         /* of a pre-packed B kept in L2 while A meets it */
#define C_L2_BYTES ((size_t)1280 << 10)        /* of a C kept in L2 through every K block */

size_t gemm_bf16_scratch_bytes(void)
{
    return A_ELEMS * A_BLOCKS * 4 + BW_ELEMS * 2 + TILE_FLOATS * 4;
}

typedef struct {
    KernFn kern;
    EpiFn epi;
    float *tile;
    float alpha;
    float *C;
    int ldc;
    int ta;   /* A's packed layout (gemm_bf16_pack_a_panels) */
    int amx;  /* the AMX kernel: A packed by gemm_bf16_pack_a_tiles, blocks run there */
    int fast; /* the AVX-512 packing (gemm_bf16_pack.h): on the AVX512 and AMX kernels */
} Run;

static void pack_a(const Run *r, uint32_t *dst, const float *A, int lda, int i0, int mc,
                   int k0, int kc)
{
    if (r->amx)
        gemm_bf16_pack_a_tiles(dst, r->ta, A, lda, i0, mc, k0, kc, r->fast);
    else
        gemm_bf16_pack_a_panels(dst, r->ta, A, lda, i0, mc, k0, kc, r->fast);
}

/* Every micro-kernel of one packed A block (apack: rows i0.., mc) against nc columns of
 * packed B starting at column j0 (panels pstride apart), kp pairs each. */
static void run_block(const Run *r, const uint32_t *apack, const uint16_t *bview,
                      size_t pstride, int kp, int i0, int mc, int j0, int nc, float beta)
{
    if (r->amx) {
        gemm_bf16_amx_block(apack, kp, mc, bview, pstride, nc, r->C + (size_t)i0 * r->ldc + j0,
                            r->ldc, r->alpha, beta, r->tile, r->epi);
        return;
    }
    int direct = r->alpha == 1.0f && (beta == 0.0f || beta == 1.0f);
    for (int jp = 0; jp < nc; jp += GEMM_BF16_NR) {
        const uint16_t *bp = bview + (size_t)(jp / GEMM_BF16_NR) * pstride;
        int nv = nc - jp < GEMM_BF16_NR ? nc - jp : GEMM_BF16_NR;
        for (int ip = 0; ip < mc; ip += GEMM_BF16_MR) {
            int mv = mc - ip < GEMM_BF16_MR ? mc - ip : GEMM_BF16_MR;
            const uint32_t *ap = apack + (size_t)(ip / GEMM_BF16_MR) * kp * GEMM_BF16_MR;
            size_t rs = r->ta ? 1 : (size_t)kp, ps = r->ta ? GEMM_BF16_MR : 1;
            float *c = r->C + (size_t)(i0 + ip) * r->ldc + j0 + jp;
            if (direct && mv == GEMM_BF16_MR && nv == GEMM_BF16_NR) {   /* no tile trip */
                r->kern(kp, ap, rs, ps, bp, c, (size_t)r->ldc, beta != 0.0f);
                continue;
            }
            r->kern(kp, ap, rs, ps, bp, r->tile, GEMM_BF16_NR, 0);
            r->epi(r->tile, c, r->ldc, mv, nv, r->alpha, beta);
        }
    }
}

CPU_CLONES
static void scale_c(float *C, int ldc, int M, int N, float beta)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            C[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[(size_t)i * ldc + j];
}

/* run_packed's product for K over KA_MAX: A is packed one K block at a time. With a small
 * C (the decoder's dX = dlogits W: K = V) the K blocks run outermost, so each block of B
 * meets every row while it is in cache and C stays there throughout; with a larger C each
 * MC-row block walks every K block (C's rows in cache, B from memory once per block). */
static void run_deep(const Run *r, uint32_t *apack, const float *A, int lda, int M, int N,
                     int K, const uint16_t *pb, size_t pstride, float beta)
{
    int k_outer = (size_t)M * N * 4 <= C_L2_BYTES;
    int nk = (K + KC - 1) / KC, ni = (M + MC - 1) / MC;
    for (int u = 0; u < (k_outer ? nk : ni); u++)
        for (int v = 0; v < (k_outer ? ni : nk); v++) {
            int k0 = (k_outer ? u : v) * KC, i0 = (k_outer ? v : u) * MC;
            int kc = K - k0 < KC ? K - k0 : KC, mc = M - i0 < MC ? M - i0 : MC;
            pack_a(r, apack, A, lda, i0, mc, k0, kc);
            run_block(r, apack, pb + (size_t)(k0 / 2) * PAIR_ELEMS, pstride, (kc + 1) / 2, i0,
                      mc, 0, N, k0 ? 1.0f : beta);
        }
}

/* The product against a B packed whole (K x N panels, pstride apart). With K <= KA_MAX
 * each block of MC rows of A is packed for all of K first, then walked NC columns at a
 * time through every K block, so that C's MC x NC chunk stays in cache between the K
 * blocks instead of going to memory and back once per K block (the decoder's logits,
 * M x 28782). Either order adds each K block's tile into C in increasing K: the same
 * bits. */
static void run_packed(const Run *r, uint32_t *apack, const float *A, int lda, int M, int N,
                       int K, const uint16_t *pb, size_t pstride, float beta)
{
    if (K > KA_MAX) {
        run_deep(r, apack, A, lda, M, N, K, pb, pstride, beta);
        return;
    }
    for (int i0 = 0; i0 < M; i0 += MC) {
        int mc = M - i0 < MC ? M - i0 : MC;
        for (int k0 = 0; k0 < K; k0 += KC)
            pack_a(r, apack + (size_t)(k0 / KC) * A_ELEMS, A, lda, i0, mc, k0,
                   K - k0 < KC ? K - k0 : KC);
        for (int j0 = 0; j0 < N; j0 += NC) {
            int nc = N - j0 < NC ? N - j0 : NC;
            for (int k0 = 0; k0 < K; k0 += KC) {
                int kc = K - k0 < KC ? K - k0 : KC;
                run_block(r, apack + (size_t)(k0 / KC) * A_ELEMS,
                          pb + (size_t)(k0 / 2) * PAIR_ELEMS + (size_t)(j0 / GEMM_BF16_NR) * pstride,
                          pstride, (kc + 1) / 2, i0, mc, j0, nc, k0 ? 1.0f : beta);
            }
        }
    }
}

/* The product against a pre-packed B too large to stay in cache (the decoder's V x d
 * weight, 28782 columns: 29 MB in bf16) with A small enough to be packed whole into the
 * area (the scratch's room for a B packed per call, unused here): A is packed once, a
 * super-block of rows at a time, then B is walked in chunks of columns that stay in L2
 * (L2_B_BYTES), each meeting every block of the super-block. B then comes from memory
 * once per super-block instead of once per MC rows. Each K block's tile is still added
 * into C in increasing K: the same bits as run_packed. 0 when A's rows do not fit (one
 * super-block must hold MC rows) or K exceeds KA_MAX: the caller runs run_packed. */
static int run_packed_wide(const Run *r, uint32_t *area, size_t area_bytes, const float *A,
                           int lda, int M, int N, int K, const uint16_t *pb, size_t pstride,
                           float beta)
{
    int kb = (K + KC - 1) / KC;
    size_t block_bytes = (size_t)kb * A_ELEMS * 4;   /* one MC-row block, every K block */
    int per = (int)(area_bytes / block_bytes);        /* MC-row blocks a super-block holds */
    if (K > KA_MAX || per < 1 || (size_t)K * N * 2 <= L2_B_BYTES)
        return 0;
    int nc = (int)(L2_B_BYTES / ((size_t)K * 2)) / GEMM_BF16_NR * GEMM_BF16_NR;
    nc = nc < GEMM_BF16_NR ? GEMM_BF16_NR : nc;
    for (int s0 = 0; s0 < M; s0 += per * MC) {
        int rows = M - s0 < per * MC ? M - s0 : per * MC;
        for (int i0 = s0; i0 < s0 + rows; i0 += MC) {
            uint32_t *blk = area + (size_t)((i0 - s0) / MC) * kb * A_ELEMS;
            int mc = s0 + rows - i0 < MC ? s0 + rows - i0 : MC;
            for (int k0 = 0; k0 < K; k0 += KC)
                pack_a(r, blk + (size_t)(k0 / KC) * A_ELEMS, A, lda, i0, mc, k0,
                       K - k0 < KC ? K - k0 : KC);
        }
        for (int j0 = 0; j0 < N; j0 += nc) {
            int w = N - j0 < nc ? N - j0 : nc;
            for (int i0 = s0; i0 < s0 + rows; i0 += MC) {
                const uint32_t *blk = area + (size_t)((i0 - s0) / MC) * kb * A_ELEMS;
                int mc = s0 + rows - i0 < MC ? s0 + rows - i0 : MC;
                for (int k0 = 0; k0 < K; k0 += KC) {
                    int kc = K - k0 < KC ? K - k0 : KC;
                    run_block(r, blk + (size_t)(k0 / KC) * A_ELEMS,
                              pb + (size_t)(k0 / 2) * PAIR_ELEMS +
                                  (size_t)(j0 / GEMM_BF16_NR) * pstride,
                              pstride, (kc + 1) / 2, i0, mc, j0, w, k0 ? 1.0f : beta);
                }
            }
        }
    }
    return 1;
}

/* The product once r is set: B pre-packed, packed whole into the scratch, or packed NC
 * columns x KC rows at a time. */
static void run_product(const Run *r, int tb, int M, int N, int K, const float *A, int lda,
                        const float *B, int ldb, const GemmBf16PackedB *pb, float beta,
                        uint32_t *apack, uint16_t *bpack)
{
    if (pb) {   /* B packed whole (a cached weight) */
        if (!run_packed_wide(r, (uint32_t *)bpack, BW_ELEMS * 2, A, lda, M, N, K, pb->data,
                             packed_pstride(pb), beta))
            run_packed(r, apack, A, lda, M, N, K, pb->data, packed_pstride(pb), beta);
        return;
    }
    if (gemm_bf16_packed_b_elems(K, N) <= BW_ELEMS) {
        /* B fits the scratch whole (dW = dY^T X: K = the rows, N = d): pack it once, so
         * C (the gradient, V x d for the decoder) is walked once, not once per K block */
        gemm_bf16_pack_b_block(bpack, (size_t)((K + 1) / 2) * PAIR_ELEMS, tb, B, ldb, 0, K, 0,
                               N, r->fast);
        run_packed(r, apack, A, lda, M, N, K, bpack, (size_t)((K + 1) / 2) * PAIR_ELEMS, beta);
        return;
    }
    for (int j0 = 0; j0 < N; j0 += NC) {
        int nc = N - j0 < NC ? N - j0 : NC;
        for (int k0 = 0; k0 < K; k0 += KC) {
            int kc = K - k0 < KC ? K - k0 : KC, kp = (kc + 1) / 2;
            gemm_bf16_pack_b_block(bpack, (size_t)kp * PAIR_ELEMS, tb, B, ldb, k0, kc, j0, nc,
                                   r->fast);
            for (int i0 = 0; i0 < M; i0 += MC) {
                int mc = M - i0 < MC ? M - i0 : MC;
                pack_a(r, apack, A, lda, i0, mc, k0, kc);
                run_block(r, apack, bpack, (size_t)kp * PAIR_ELEMS, kp, i0, mc, j0, nc,
                          k0 ? 1.0f : beta);
            }
        }
    }
}

void gemm_bf16(GemmBf16Kernel kernel, int ta, int tb, int M, int N, int K, float alpha,
               const float *A, int lda, const float *B, int ldb, const GemmBf16PackedB *pb,
               float beta, float *C, int ldc, void *scratch)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        scale_c(C, ldc, M, N, beta);
        return;
    }
    uint32_t *apack = scratch;
    uint16_t *bpack = (uint16_t *)((char *)scratch + A_ELEMS * A_BLOCKS * 4);
    Run r = {kern_emu, epi_emu, (float *)((char *)bpack + BW_ELEMS * 2), alpha, C, ldc, ta, 0,
             0};
#ifdef GEMM_BF16_HAVE_AVX512
    if (packs_on_avx512(kernel)) {   /* the kernels on AVX512-BF16 */
        r.kern = kern_avx512;
        r.epi = epi_avx512;
        r.fast = 1;
        /* never a tile without Linux's grant: AVX512 then (the same CPU has it) */
        r.amx = kernel == GEMM_BF16_AMX && gemm_bf16_kernel_available(GEMM_BF16_AMX);
    }
#else
    (void)kernel;
#endif
    if (r.amx)   /* this thread's tiles, configured for this call only */
        gemm_bf16_amx_begin();
    run_product(&r, tb, M, N, K, A, lda, B, ldb, pb, beta, apack, bpack);
    if (r.amx)
        gemm_bf16_amx_end();
}
