/* gemm_bf16.h — a packed matrix product with bf16 inputs and fp32 accumulation:
 * C = alpha op(A) op(B) + beta C, row-major, op = identity or transpose, as cblas_sgemm.
 * A and B are rounded to bf16 (round-to-nearest-even, subnormals flushed to zero) while
 * they are packed into panels; the products are accumulated in fp32 by one of three
 * kernels, chosen once per process (gemm_bf16_select_kernel):
 *  - amx-bf16: AMX tiles, tdpbf16ps on 2 x 2 tiles of 16 x 16 fp32 (gemm_bf16_amx.c),
 *    where the CPU has AMX-BF16 and Linux grants the tile state;
 *  - avx512-bf16: vdpbf16ps (per fp32 lane: acc += a_hi*b_hi, then acc += a_lo*b_lo;
 *    Intel SDM, VDPBF16PS), 32 columns x 12 rows per micro-kernel call;
 *  - emulated: the same micro-kernel source compiled against a portable emulation of
 *    vdpbf16ps (plain C, same products in the same order, the same bits): it runs on any
 *    CPU and is what tests use where the CPU lacks AVX512-BF16; it is slower than sgemm
 *    and users never get it unless they ask for it.
 * AMX and AVX512 give different bits (tdpbf16ps rounds its pairs' sums differently; both
 * are within the fp32-accumulation bound of the exact product, docs/bf16.md), so a bf16
 * run is bit-identical for any thread or process count on one kernel, not across them.
 * Not threaded (callers run one product per thread), never allocates (the caller passes
 * gemm_bf16_scratch_bytes() of scratch), never fails. */
#ifndef LM_GEMM_BF16_H
#define LM_GEMM_BF16_H

#include <stddef.h>
#include <stdint.h>

/* Test hook: "1" makes gemm_bf16_select_kernel() pick the portable emulation when the
 * CPU lacks AVX512-BF16 (then precision=bf16 runs bf16 numerics, slowly). */
#define GEMM_BF16_EMULATE_ENV "LMLAB_TEST_BF16_EMULATE"
/* "amx", "avx512" or "emulated" makes gemm_bf16_select_kernel() take that kernel where
 * the CPU has it (emulated: anywhere), e.g. to compare amx-bf16 with avx512-bf16 on one
 * CPU; an unknown value, or a kernel the CPU lacks, is ignored and noted
 * (gemm_bf16_kernel_note, printed by show machine). */
#define GEMM_BF16_KERNEL_ENV "LMLAB_BF16_KERNEL"

#define GEMM_BF16_MR 12   /* rows of A per micro-kernel */
#define GEMM_BF16_KC 256  /* values of K per block: a product adds into C once per block
                             (in increasing K), so a product split at multiples of this
                             along K, accumulating, gives its bits on every kernel */
#define GEMM_BF16_NR 32   /* columns of B per micro-kernel (two 16-lane vectors) */

typedef enum {
    GEMM_BF16_NONE = 0,     /* no bf16 kernel: the caller must use fp32 */
    GEMM_BF16_AVX512 = 1,   /* vdpbf16ps (AVX512-BF16) */
    GEMM_BF16_EMULATED = 2, /* the portable emulation of vdpbf16ps */
    GEMM_BF16_AMX = 3       /* tdpbf16ps tiles (AMX-BF16), epilogue on AVX-512 */
} GemmBf16Kernel;

/* What the CPU and OS offer: avx512_bf16 needs cpuid leaf 7.1 EAX bit 5, AVX-512 F/BW/VL
 * and XCR0 saving opmask + zmm state; amx_bf16 is leaf 7.0 EDX bit 22 with AMX-TILE and
 * XCR0 tile state (Linux must still grant the tile data per process: see below). Never
 * fails. */
void gemm_bf16_cpu(int *avx512_bf16, int *amx_bf16);

/* The kernel products will run on, decided once per process: AMX when the CPU has
 * amx_bf16 and avx512_bf16 and Linux grants the tile data (arch_prctl
 * ARCH_REQ_XCOMP_PERM, asked here, once, before any thread uses a tile); else AVX512
 * when the CPU has it; else EMULATED when the environment sets GEMM_BF16_EMULATE_ENV=1;
 * else NONE. GEMM_BF16_KERNEL_ENV overrides within what the CPU has. */
GemmBf16Kernel gemm_bf16_select_kernel(void);
/* "amx-bf16", "avx512-bf16", "emulated", "none". */
const char *gemm_bf16_kernel_name(GemmBf16Kernel k);
/* One line on why the chosen kernel is not the CPU's best or what forced it (Linux
 * refused the tile state, GEMM_BF16_KERNEL_ENV set or unknown), "" when nothing. */
const char *gemm_bf16_kernel_note(void);

/* Whether kernel k can run in this process (AMX: asks Linux for the tile state, once). */
int gemm_bf16_kernel_available(GemmBf16Kernel k);

/* fp32 -> bf16 bits, round-to-nearest-even; NaN stays NaN; subnormals become +-0 (as
 * vdpbf16ps treats its inputs). And back (exact). */
uint16_t gemm_bf16_round(float x);
float gemm_bf16_to_float(uint16_t h);

/* A packed B operand (K x N after op): N in panels of GEMM_BF16_NR columns, each panel
 * holding all of K as (K+1)/2 pairs x NR columns x 2 bf16, zero-padded. */
typedef struct {
    uint16_t *data;   /* caller-owned, gemm_bf16_packed_b_elems(K, N) elements */
    int K, N;
    int kpairs;       /* pairs each panel holds as stored: (K + 1) / 2 for a whole pack,
                         more in a view of some of a larger pack's rows (gemm_bf16_packed_rows) */
} GemmBf16PackedB;

size_t gemm_bf16_packed_b_elems(int K, int N);
/* The pack of a whole op(B) (K x N) at data (gemm_bf16_packed_b_elems elements). */
GemmBf16PackedB gemm_bf16_packed_b(uint16_t *data, int K, int N);
/* Element (k, n) of op(B) as pack p holds it (bf16, widened exactly). */
float gemm_bf16_packed_value(const GemmBf16PackedB *p, int k, int n);
/* Packs op(B) (K x N; tb != 0: B is stored N x K) into p->data; sets p->K, p->N. */
void gemm_bf16_pack_b(GemmBf16PackedB *p, int tb, int K, int N, const float *B, int ldb);
/* Rows k0 .. k0 + kc - 1 of pack p (k0 even) as a pack of their own, in p's storage. */
GemmBf16PackedB gemm_bf16_packed_rows(const GemmBf16PackedB *p, int k0, int kc);
/* Packs rows k0 .. k0 + kc - 1 of a row-major op(B) (rows: row k0, ldb apart) into p
 * (p->data, p->K, p->N set; k0 even): the pack of the whole, built a block of rows at
 * a time (the same bits as gemm_bf16_pack). */
void gemm_bf16_pack_b_rows(GemmBf16PackedB *p, int k0, int kc, const float *rows, int ldb);

/* Bytes of scratch one gemm_bf16 call needs (panels of A and of B blocks). */
size_t gemm_bf16_scratch_bytes(void);

/* C (M x N, ldc) = alpha op(A) op(B) + beta C with op(A) M x K (ta != 0: A stored K x M),
 * op(B) K x N (tb != 0: B stored N x K). If pb is not NULL it is op(B) already packed
 * (B, tb, ldb ignored). beta == 0 never reads C. kernel must not be GEMM_BF16_NONE and
 * must be available (gemm_bf16_kernel_available; AMX where Linux refused the tiles runs
 * the AVX512 kernel). The AMX kernel loads this thread's tile configuration at the start
 * of the call and releases the tiles at its end, so any thread may call it.
 * scratch: gemm_bf16_scratch_bytes(), 64-byte aligned. Nothing for M, N <= 0; K <= 0 scales C by beta. */
void gemm_bf16(GemmBf16Kernel kernel, int ta, int tb, int M, int N, int K, float alpha,
               const float *A, int lda, const float *B, int ldb, const GemmBf16PackedB *pb,
               float beta, float *C, int ldc, void *scratch);

#endif
