/* test_gemm_bf16.c — the bf16 product (gemm_bf16.h) and its dispatch (matmul.h).
 * Kernel correctness is checked four ways on every shape (M, N, K off the 12 x 32 x 256
 * blocking, all four transposes, padded leading dimensions, alpha/beta incl. beta = 0
 * over NaN):
 *  - the portable emulation of vdpbf16ps equals, bit for bit, a scalar reference that
 *    takes the same bf16 products in the same order (odd k, then even k, per pair; fp32
 *    fma; per 256-deep K block alpha*acc is added into C) — this pins packing and
 *    indexing exactly;
 *  - the AVX512-BF16 kernel (where the CPU has it) equals the emulation bit for bit: its
 *    AVX-512 packing against the emulation's portable packing, through whole products;
 *  - every available kernel (the AVX512-BF16 one only where the CPU has it, the AMX one
 *    only where the CPU has AMX-BF16 and Linux grants the tiles) is within
 *    K * 2^-23 * sum|a_k b_k| (fp32 accumulation error of K terms) of a double-precision
 *    product of the same bf16-rounded inputs;
 *  - it is within 2^-7 * sum|a_k b_k| of the fp32 sgemm product (bf16 input rounding,
 *    2^-9 relative per input) and differs from it (the inputs really were rounded).
 * AMX: more shapes on the tile edges (M, N, K of 1, 15, 16, 17, 31, 33, 255, 257), beta 1
 * accumulated in the tiles (the same bits split over calls, the bound with a large C), its
 * bits against the AVX512 kernel's (they differ: tdpbf16ps does not round like
 * vdpbf16ps; the test measures by how much, and checks AMX is deterministic), two threads
 * running it at once (each loads its own tile configuration), and the kernel choice under
 * LMLAB_BF16_KERNEL (in forked children, as the choice is once per process).
 * matmul: outside a scope it is cblas_sgemm bit for bit; inside a bf16 scope it is
 * gemm_bf16, a weight's packed copy is reused until matmul_weights_changed. */
#include "check.h"
#include "gemm_bf16.h"
#include "linear.h"
#include "matmul.h"
#include "rng.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static float *rand_mat(Rng *r, size_t n)
{
    float *p = xmalloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(rng_uniform(r) * 2.0 - 1.0);
    return p;
}

static float rb(float x)   /* x rounded to bf16 */
{
    return gemm_bf16_to_float(gemm_bf16_round(x));
}

static void test_round(void)
{
    CHECK(gemm_bf16_round(1.0f) == 0x3f80, "1.0");
    CHECK(gemm_bf16_round(-2.0f) == 0xc000, "-2.0");
    CHECK(gemm_bf16_round(1.0f + 0x1p-8f) == 0x3f80, "a tie rounds to even (down)");
    CHECK(gemm_bf16_round(1.0f + 3 * 0x1p-8f) == 0x3f82, "a tie rounds to even (up)");
    CHECK(gemm_bf16_round(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81, "above a tie rounds up");
    CHECK(gemm_bf16_round(INFINITY) == 0x7f80, "inf");
    CHECK(gemm_bf16_round(3.4e38f) == 0x7f80, "overflow rounds to inf (RNE)");
    CHECK(isnan(gemm_bf16_to_float(gemm_bf16_round(NAN))), "NaN stays NaN");
    CHECK(gemm_bf16_round(1e-40f) == 0, "subnormal flushes to +0");
    CHECK(gemm_bf16_round(-1e-40f) == 0x8000, "negative subnormal flushes to -0");
    CHECK(gemm_bf16_to_float(0x4049) == 3.140625f, "bf16 -> float is exact");
}

typedef struct {
    int M, N, K;
} Shape;

/* op(X)(i, k) for X stored rows x cols with leading dimension ld */
static float at(const float *X, int t, int ld, int i, int k)
{
    return t ? X[(size_t)k * ld + i] : X[(size_t)i * ld + k];
}

/* The emulation's exact order: per 256-deep K block, acc over pairs (odd k first), then
 * the store rule of gemm_bf16_kern.inc. */
static void ref_ordered(int ta, int tb, Shape s, float alpha, const float *A, int lda,
                        const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < s.M; i++)
        for (int j = 0; j < s.N; j++) {
            float *c = &C[(size_t)i * ldc + j];
            for (int k0 = 0; k0 < s.K; k0 += 256) {
                int k1 = k0 + 256 < s.K ? k0 + 256 : s.K;
                float acc = 0;
                for (int k = k0; k < k1; k += 2) {
                    if (k + 1 < k1)
                        acc = fmaf(rb(at(A, ta, lda, i, k + 1)), rb(at(B, !tb, ldb, j, k + 1)), acc);
                    acc = fmaf(rb(at(A, ta, lda, i, k)), rb(at(B, !tb, ldb, j, k)), acc);
                }
                float bet = k0 ? 1.0f : beta;
                if (bet == 0.0f)
                    *c = alpha * acc;
                else if (bet == 1.0f)
                    *c += alpha * acc;
                else
                    *c = alpha * acc + bet * *c;
            }
        }
}

/* Largest |C - ref| / bound over the matrix, where ref is the double product of the bf16
 * inputs and bound = rel * sum_k |a_k b_k| * |alpha| + 1e-30 + crel * |beta c0|: the C
 * term is 2^-22 (one rounding, C added once) unless crel is given (> 0). */
static double worst_vs_c(int ta, int tb, Shape s, float alpha, const float *A, int lda,
                         const float *B, int ldb, float beta, const float *C0, const float *C,
                         int ldc, int round_inputs, double rel, double crel)
{
    double worst = 0;
    for (int i = 0; i < s.M; i++)
        for (int j = 0; j < s.N; j++) {
            double sum = 0, mag = 0;
            for (int k = 0; k < s.K; k++) {
                double a = at(A, ta, lda, i, k), b = at(B, !tb, ldb, j, k);
                if (round_inputs) {
                    a = rb((float)a);
                    b = rb((float)b);
                }
                sum += a * b;
                mag += fabs(a * b);
            }
            double c0 = beta == 0.0f ? 0 : C0[(size_t)i * ldc + j];
            double ref = alpha * sum + beta * c0;
            double bound = rel * mag * fabs(alpha) + (crel > 0 ? crel : 0x1p-22) * fabs(beta * c0) + 1e-30;
            double e = fabs(C[(size_t)i * ldc + j] - ref) / bound;
            if (!(e <= worst))
                worst = e;
        }
    return worst;
}

static double worst_vs(int ta, int tb, Shape s, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, const float *C0, const float *C,
                       int ldc, int round_inputs, double rel)
{
    return worst_vs_c(ta, tb, s, alpha, A, lda, B, ldb, beta, C0, C, ldc, round_inputs, rel, 0);
}

static void fill_c(float *C, size_t n, float beta, Rng *r)
{
    for (size_t i = 0; i < n; i++)
        C[i] = beta == 0.0f ? NAN : (float)(rng_uniform(r) - 0.5);
}

/* One shape, one transpose pair, one alpha/beta, against every reference. */
static void check_case(GemmBf16Kernel kern, int ta, int tb, Shape s, float alpha, float beta,
                       Rng *r, void *scratch)
{
    int lda = (ta ? s.M : s.K) + 3, ldb = (tb ? s.K : s.N) + 1, ldc = s.N + 2;
    size_t na = (size_t)(ta ? s.K : s.M) * lda, nb = (size_t)(tb ? s.N : s.K) * ldb;
    size_t nc = (size_t)s.M * ldc;
    float *A = rand_mat(r, na), *B = rand_mat(r, nb), *C0 = xmalloc(nc * 4), *C = xmalloc(nc * 4);
    fill_c(C0, nc, beta, r);
    memcpy(C, C0, nc * 4);
    gemm_bf16(kern, ta, tb, s.M, s.N, s.K, alpha, A, lda, B, ldb, NULL, beta, C, ldc, scratch);
    char what[160];
    snprintf(what, sizeof what, "%s M=%d N=%d K=%d ta=%d tb=%d alpha=%g beta=%g",
             gemm_bf16_kernel_name(kern), s.M, s.N, s.K, ta, tb, alpha, beta);
    if (kern == GEMM_BF16_AVX512) {   /* vdpbf16ps is what the emulation computes: the
                                       * AVX-512 packing and kernel give its bits exactly */
        float *E = xmalloc(nc * 4);
        memcpy(E, C0, nc * 4);
        gemm_bf16(GEMM_BF16_EMULATED, ta, tb, s.M, s.N, s.K, alpha, A, lda, B, ldb, NULL, beta,
                  E, ldc, scratch);
        int same = 1;
        for (int i = 0; i < s.M; i++)
            same &= !memcmp(E + (size_t)i * ldc, C + (size_t)i * ldc, (size_t)s.N * 4);
        CHECK(same, "%s: differs from the emulated kernel's bits", what);
        free(E);
    }
    if (kern == GEMM_BF16_EMULATED) {
        float *R = xmalloc(nc * 4);
        memcpy(R, C0, nc * 4);
        ref_ordered(ta, tb, s, alpha, A, lda, B, ldb, beta, R, ldc);
        int same = 1;
        for (int i = 0; i < s.M; i++)
            same &= !memcmp(R + (size_t)i * ldc, C + (size_t)i * ldc, (size_t)s.N * 4);
        CHECK(same, "%s: emulation differs from the ordered reference", what);
        free(R);
    }
    double e = worst_vs(ta, tb, s, alpha, A, lda, B, ldb, beta, C0, C, ldc, 1,
                        (s.K + 2) * 0x1p-23);
    CHECK(e <= 1.0, "%s: %.2f of the fp32-accumulation bound", what, e);
    double e32 = worst_vs(ta, tb, s, alpha, A, lda, B, ldb, beta, C0, C, ldc, 0, 0x1p-7);
    CHECK(e32 <= 1.0, "%s: %.2f of the bf16-rounding bound vs fp32", what, e32);
    /* a pre-packed B gives the same bits as B packed per call */
    GemmBf16PackedB pk = {xmalloc(gemm_bf16_packed_b_elems(s.K, s.N) * 2), 0, 0, 0};
    gemm_bf16_pack_b(&pk, tb, s.K, s.N, B, ldb);
    float *P = xmalloc(nc * 4);
    memcpy(P, C0, nc * 4);
    gemm_bf16(kern, ta, tb, s.M, s.N, s.K, alpha, A, lda, NULL, 0, &pk, beta, P, ldc, scratch);
    int same = 1;
    for (int i = 0; i < s.M; i++)
        same &= !memcmp(P + (size_t)i * ldc, C + (size_t)i * ldc, (size_t)s.N * 4);
    CHECK(same, "%s: pre-packed B differs from B packed per call", what);
    free(pk.data); free(P);
    free(A); free(B); free(C0); free(C);
}

static void test_kernel(GemmBf16Kernel kern, void *scratch)
{
    static const Shape shapes[] = {{1, 1, 1}, {5, 7, 3}, {12, 32, 2}, {13, 33, 17},
        {97, 65, 255}, {100, 31, 257}, {37, 530, 300}, {200, 40, 600}, {3, 2, 513},
        {7, 2081, 2100}};   /* last: B too big to pack whole per call, K > KA_MAX (2048) */
    Rng r;
    rng_seed(&r, 29);
    int n0 = check_failed_;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int t = 0; t < 4; t++) {
            float alpha = (si + t) % 3 == 2 ? -0.75f : 1.0f;
            float beta = (si + t) % 3 == 0 ? 0.0f : (si + t) % 3 == 1 ? 1.0f : 0.5f;
            check_case(kern, t & 1, t >> 1, shapes[si], alpha, beta, &r, scratch);
        }
    printf("  kernel %s: %zu shapes x 4 transposes %s\n", gemm_bf16_kernel_name(kern),
           sizeof shapes / sizeof shapes[0], check_failed_ == n0 ? "ok" : "FAILED");
    /* the inputs really are rounded: bf16 differs from sgemm on random data */
    Shape s = {8, 8, 64};
    float *A = rand_mat(&r, 512), *B = rand_mat(&r, 512), C[64], D[64];
    gemm_bf16(kern, 0, 0, s.M, s.N, s.K, 1, A, 64, B, 8, NULL, 0, C, 8, scratch);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 8, 8, 64, 1, A, 64, B, 8, 0, D, 8);
    CHECK(memcmp(C, D, sizeof C) != 0, "bf16 product equals the fp32 one: inputs not rounded?");
    free(A); free(B);
}

/* C (M x N, ldc N) from a pre-packed B, in one call or as two calls split at K = k1 (a
 * multiple of GEMM_BF16_KC; the second adds with beta 1 on a view of B's rows). */
static float *product_prepacked(GemmBf16Kernel kern, int ta, Shape s, float alpha,
                                const float *A, int lda, const GemmBf16PackedB *pk, float beta,
                                const float *C0, int k1, void *scratch)
{
    float *C = xmalloc((size_t)s.M * s.N * 4);
    memcpy(C, C0, (size_t)s.M * s.N * 4);
    if (!k1) {
        gemm_bf16(kern, ta, 0, s.M, s.N, s.K, alpha, A, lda, NULL, 0, pk, beta, C, s.N, scratch);
        return C;
    }
    GemmBf16PackedB lo = gemm_bf16_packed_rows(pk, 0, k1), hi = gemm_bf16_packed_rows(pk, k1, s.K - k1);
    gemm_bf16(kern, ta, 0, s.M, s.N, k1, alpha, A, lda, NULL, 0, &lo, beta, C, s.N, scratch);
    gemm_bf16(kern, ta, 0, s.M, s.N, s.K - k1, alpha, ta ? A + (size_t)k1 * lda : A + k1, lda,
              NULL, 0, &hi, 1.0f, C, s.N, scratch);
    return C;
}

/* The driver's loop orders for a pre-packed B give the bits of its plain order: a wide B
 * (more than L2 holds: A packed whole, once or in two super-blocks of rows, B walked in
 * chunks of columns) against B packed per call (A block by block, every column each);
 * a deep product (K over 2048; a small C: K blocks outermost, a larger one: row blocks
 * outermost) against the same product split at K = 2048 into two calls that each run
 * the plain order. */
static void test_loop_orders(GemmBf16Kernel kern, int quick, void *scratch)
{
    static const Shape wide[] = {{200, 600, 600}, {1000, 160, 2048}};
    static const Shape deep[] = {{70, 300, 2300}, {200, 1700, 2100}};   /* C 82 KB, 1.3 MB */
    Rng r;
    rng_seed(&r, 37);
    int n0 = check_failed_, n = 0;
    for (int c = 0; c < 4; c++)
        for (int ta = 0; ta < 2; ta++) {
            if (quick && (c == 1 || c == 3 || ta))
                continue;   /* the emulation: the cheap shapes, one transpose */
            Shape s = c < 2 ? wide[c] : deep[c - 2];
            float alpha = ta ? -0.75f : 1.0f, beta = c == 0 ? 0.0f : c % 2 ? 1.0f : 0.5f;
            int lda = ta ? s.M : s.K;
            float *A = rand_mat(&r, (size_t)s.M * s.K), *B = rand_mat(&r, (size_t)s.K * s.N);
            float *C0 = xmalloc((size_t)s.M * s.N * 4);
            fill_c(C0, (size_t)s.M * s.N, beta, &r);
            GemmBf16PackedB pk = {xmalloc(gemm_bf16_packed_b_elems(s.K, s.N) * 2), 0, 0, 0};
            gemm_bf16_pack_b(&pk, 0, s.K, s.N, B, s.N);
            float *P = product_prepacked(kern, ta, s, alpha, A, lda, &pk, beta, C0, 0, scratch);
            float *Q;
            if (c < 2) {
                Q = xmalloc((size_t)s.M * s.N * 4);
                memcpy(Q, C0, (size_t)s.M * s.N * 4);
                gemm_bf16(kern, ta, 0, s.M, s.N, s.K, alpha, A, lda, B, s.N, NULL, beta, Q, s.N,
                          scratch);
            } else {
                Q = product_prepacked(kern, ta, s, alpha, A, lda, &pk, beta, C0, 2048, scratch);
            }
            CHECK(!memcmp(P, Q, (size_t)s.M * s.N * 4),
                  "%s M=%d N=%d K=%d ta=%d: the %s order changed the bits",
                  gemm_bf16_kernel_name(kern), s.M, s.N, s.K, ta, c < 2 ? "wide" : "deep");
            n++;
            free(P); free(Q); free(pk.data); free(A); free(B); free(C0);
        }
    printf("  kernel %s: %d products in the wide and deep loop orders %s\n",
           gemm_bf16_kernel_name(kern), n, check_failed_ == n0 ? "ok" : "FAILED");
}

/* The AMX tile edges: M and N around 16 and 32 (tiles, the 2 x 2 micro-kernel), K around
 * 16 pairs and the 256-deep K block, odd K, every transpose and alpha/beta. */
static void test_amx_edges(void *scratch)
{
    static const int mn[][2] = {{1, 1}, {15, 17}, {16, 16}, {17, 15}, {31, 33}, {33, 31},
                                {32, 64}, {255, 33}};
    static const int ks[] = {1, 15, 16, 17, 31, 33, 255, 257};
    Rng r;
    rng_seed(&r, 31);
    int n0 = check_failed_, n = 0;
    for (size_t a = 0; a < sizeof mn / sizeof mn[0]; a++)
        for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++) {
            int t = (int)(a + b) % 4, v = (int)(a + 2 * b) % 3;
            float alpha = v == 2 ? -0.75f : 1.0f, beta = v == 0 ? 0.0f : v == 1 ? 1.0f : 0.5f;
            check_case(GEMM_BF16_AMX, t & 1, t >> 1, (Shape){mn[a][0], mn[a][1], ks[b]}, alpha,
                       beta, &r, scratch);
            n++;
        }
    check_case(GEMM_BF16_AMX, 1, 0, (Shape){257, 255, 31}, 1, 0, &r, scratch);
    printf("  kernel amx-bf16: %d tile-edge shapes %s\n", n + 1,
           check_failed_ == n0 ? "ok" : "FAILED");
}

/* AMX with alpha 1 and beta 1 (C loaded into the tiles: every dW accumulation and every
 * K block after the first): an element's bits do not depend on where it sits (a whole
 * 32 x 32 block or an edge, one call or the rows and columns split over four calls, as
 * shards split a product), and C stays within the bound with C up to 64 times larger
 * than the products' sum (where accumulating in the tiles rounds most). */
static void test_amx_accumulate(void *scratch)
{
    static const Shape shapes[] = {{70, 45, 300}, {65, 128, 384}, {33, 31, 17}, {96, 96, 600},
                                   {384, 65, 128}};
    Rng r;
    rng_seed(&r, 41);
    int n0 = check_failed_;
    double worst = 0, worst_once = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int big = 0; big < 2; big++) {
            Shape s = shapes[si];
            size_t nc = (size_t)s.M * s.N;
            float *A = rand_mat(&r, (size_t)s.M * s.K), *B = rand_mat(&r, (size_t)s.K * s.N);
            float *C0 = rand_mat(&r, nc), *C = xmalloc(nc * 4), *D = xmalloc(nc * 4);
            for (size_t i = 0; i < nc; i++)
                C0[i] *= big ? 64.0f * sqrtf((float)s.K) : 1.0f;
            memcpy(C, C0, nc * 4);
            memcpy(D, C0, nc * 4);
            gemm_bf16(GEMM_BF16_AMX, 0, 0, s.M, s.N, s.K, 1, A, s.K, B, s.N, NULL, 1, C, s.N,
                      scratch);
            int m1 = s.M / 2 + 3, n1 = 17;
            for (int q = 0; q < 4; q++) {
                int i0 = q & 1 ? m1 : 0, j0 = q & 2 ? n1 : 0;
                int m = q & 1 ? s.M - m1 : m1, n = q & 2 ? s.N - n1 : n1;
                gemm_bf16(GEMM_BF16_AMX, 0, 0, m, n, s.K, 1, A + (size_t)i0 * s.K, s.K, B + j0,
                          s.N, NULL, 1, D + (size_t)i0 * s.N + j0, s.N, scratch);
            }
            CHECK(!memcmp(C, D, nc * 4), "amx beta=1 M=%d N=%d K=%d: split over four calls "
                  "differs from one call", s.M, s.N, s.K);
            double rel = (s.K + 2) * 0x1p-23;
            double e = worst_vs_c(0, 0, s, 1, A, s.K, B, s.N, 1, C0, C, s.N, 1, rel, rel);
            double e1 = worst_vs(0, 0, s, 1, A, s.K, B, s.N, 1, C0, C, s.N, 1, rel);
            CHECK(e1 <= 1.0, "amx beta=1 M=%d N=%d K=%d |C| x%s: %.2f of the bound", s.M, s.N,
                  s.K, big ? "64" : "1", e1);
            worst = e > worst ? e : worst;
            worst_once = e1 > worst_once ? e1 : worst_once;
            free(A); free(B); free(C0); free(C); free(D);
        }
    printf("  amx-bf16 beta=1 in the tiles: split calls give the same bits; worst %.3f of the "
           "bound (K+2) 2^-23 sum|ab| + 2^-22 |c| (%.3f of (K+2) 2^-23 (sum|ab| + |c|)) %s\n",
           worst_once, worst, check_failed_ == n0 ? "ok" : "FAILED");
}

/* AMX against AVX512 on the same inputs: how many outputs differ in their bits and by how
 * much, in units of the fp32-accumulation bound both kernels meet (each is within 1 of
 * the double product, so at most 2 apart). AMX repeated gives the same bits. */
static void test_amx_vs_avx512(void *scratch)
{
    static const Shape shapes[] = {{64, 64, 32}, {33, 45, 17}, {96, 64, 256}, {100, 100, 1000},
                                   {7, 2081, 2100}};
    Rng r;
    rng_seed(&r, 37);
    long differ = 0, total = 0;
    double worst = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        Shape s = shapes[si];
        float *A = rand_mat(&r, (size_t)s.M * s.K), *B = rand_mat(&r, (size_t)s.K * s.N);
        float *X = xmalloc((size_t)s.M * s.N * 4), *Y = xmalloc((size_t)s.M * s.N * 4);
        float *Z = xmalloc((size_t)s.M * s.N * 4);
        gemm_bf16(GEMM_BF16_AVX512, 0, 0, s.M, s.N, s.K, 1, A, s.K, B, s.N, NULL, 0, X, s.N, scratch);
        gemm_bf16(GEMM_BF16_AMX, 0, 0, s.M, s.N, s.K, 1, A, s.K, B, s.N, NULL, 0, Y, s.N, scratch);
        gemm_bf16(GEMM_BF16_AMX, 0, 0, s.M, s.N, s.K, 1, A, s.K, B, s.N, NULL, 0, Z, s.N, scratch);
        CHECK(!memcmp(Y, Z, (size_t)s.M * s.N * 4), "amx M=%d N=%d K=%d: two runs differ", s.M,
              s.N, s.K);
        for (int i = 0; i < s.M; i++)
            for (int j = 0; j < s.N; j++) {
                double mag = 0;
                for (int k = 0; k < s.K; k++)
                    mag += fabs((double)rb(A[(size_t)i * s.K + k]) * rb(B[(size_t)k * s.N + j]));
                float x = X[(size_t)i * s.N + j], y = Y[(size_t)i * s.N + j];
                double e = fabs((double)x - y) / ((s.K + 2) * 0x1p-23 * mag + 1e-30);
                differ += memcmp(&x, &y, 4) != 0;
                worst = e > worst ? e : worst;
                total++;
            }
        free(A); free(B); free(X); free(Y); free(Z);
    }
    printf("  amx-bf16 vs avx512-bf16: %ld of %ld outputs differ in their bits, the largest "
           "difference %.3f of the fp32-accumulation bound\n", differ, total, worst);
    CHECK(worst <= 2.0, "amx and avx512 differ by %.2f bounds (each must be within 1)", worst);
}

typedef struct {
    int id;
    const float *A, *B;
    const float *want;   /* the product run alone */
    int bad;
} AmxThread;

#define TM 70
#define TN 90
#define TK 300

static void *amx_thread(void *arg)
{
    AmxThread *t = arg;
    void *scratch = xmalloc(gemm_bf16_scratch_bytes());
    float *C = xmalloc(TM * TN * 4);
    for (int it = 0; it < 200 && !t->bad; it++) {
        gemm_bf16(GEMM_BF16_AMX, t->id, 0, TM, TN, TK, 1, t->A, t->id ? TM : TK, t->B, TN,
                  NULL, 0, C, TN, scratch);
        t->bad = memcmp(C, t->want, TM * TN * 4) != 0;
    }
    free(scratch);
    free(C);
    return NULL;
}

/* Two threads running AMX products at once (one with ta = 1) get the bits each gets alone. */
static void test_amx_threads(void *scratch)
{
    Rng r;
    rng_seed(&r, 41);
    AmxThread t[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        float *want = xmalloc(TM * TN * 4);
        t[i] = (AmxThread){i, rand_mat(&r, TM * TK), rand_mat(&r, TK * TN), want, 0};
        gemm_bf16(GEMM_BF16_AMX, i, 0, TM, TN, TK, 1, t[i].A, i ? TM : TK, t[i].B, TN, NULL, 0,
                  want, TN, scratch);
    }
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, amx_thread, &t[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CHECK(!t[i].bad, "amx thread %d: a product run beside another thread differs", i);
        free((void *)t[i].A); free((void *)t[i].B); free((void *)t[i].want);
    }
    printf("  amx-bf16 on 2 threads at once: %s\n", t[0].bad || t[1].bad ? "FAILED" : "ok");
}

/* gemm_bf16_select_kernel() under LMLAB_BF16_KERNEL=value (NULL: unset), in a forked
 * child (the choice is made once per process): the kernel, and the note in note. */
static GemmBf16Kernel chosen_with(const char *value, char *note, size_t cap)
{
    int fd[2];
    if (pipe(fd) != 0)
        return GEMM_BF16_NONE;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        if (value)
            setenv(GEMM_BF16_KERNEL_ENV, value, 1);
        else
            unsetenv(GEMM_BF16_KERNEL_ENV);
        char out[256];
        int k = gemm_bf16_select_kernel();
        int len = snprintf(out, sizeof out, "%d %s", k, gemm_bf16_kernel_note());
        _exit(write(fd[1], out, (size_t)len) == len ? 0 : 1);
    }
    close(fd[1]);
    char in[256] = {0};
    ssize_t got = read(fd[0], in, sizeof in - 1);
    close(fd[0]);
    waitpid(pid, NULL, 0);
    int k = got > 0 ? atoi(in) : -1;
    const char *sp = got > 0 ? strchr(in, ' ') : NULL;
    snprintf(note, cap, "%s", sp ? sp + 1 : "");
    return (GemmBf16Kernel)k;
}

/* LMLAB_BF16_KERNEL chooses among what the CPU has; an unknown value is ignored, noted. */
static void test_select(int avx, int amx_ok)
{
    char note[256];
    GemmBf16Kernel best = chosen_with(NULL, note, sizeof note);
    GemmBf16Kernel want_best = amx_ok ? GEMM_BF16_AMX : avx ? GEMM_BF16_AVX512 : GEMM_BF16_EMULATED;
    CHECK(best == want_best, "unset: chose %s, expected %s", gemm_bf16_kernel_name(best),
          gemm_bf16_kernel_name(want_best));
    CHECK(chosen_with("emulated", note, sizeof note) == GEMM_BF16_EMULATED, "=emulated");
    CHECK(strstr(note, "forced"), "=emulated: the note says it was forced: '%s'", note);
    GemmBf16Kernel k = chosen_with("avx512", note, sizeof note);
    CHECK(k == (avx ? GEMM_BF16_AVX512 : best), "=avx512: chose %s", gemm_bf16_kernel_name(k));
    CHECK(avx || strstr(note, "lacks avx512_bf16"), "=avx512 without it: noted: '%s'", note);
    k = chosen_with("amx", note, sizeof note);
    CHECK(k == best, "=amx: chose %s, expected %s", gemm_bf16_kernel_name(k),
          gemm_bf16_kernel_name(best));
    k = chosen_with("sse2", note, sizeof note);
    CHECK(k == best, "=sse2: chose %s, expected it ignored", gemm_bf16_kernel_name(k));
    CHECK(strstr(note, "LMLAB_BF16_KERNEL=sse2 is not amx, avx512 or emulated: ignored"),
          "=sse2: the note says so: '%s'", note);
    printf("  LMLAB_BF16_KERNEL: unset %s, avx512 %s, an unknown value ignored and noted\n",
           gemm_bf16_kernel_name(best), gemm_bf16_kernel_name(avx ? GEMM_BF16_AVX512 : best));
}

/* matmul: fp32 outside a scope, bf16 inside, cached weights until weights_changed. */
static void test_matmul(void *scratch)
{
    Rng r;
    rng_seed(&r, 7);
    int N = 40, Cin = 70, Cout = 50;
    float *slab = rand_mat(&r, (size_t)Cout * Cin + 10), *w = slab + 10;   /* a weight */
    float *x = rand_mat(&r, (size_t)N * Cin);
    float *y = xmalloc((size_t)N * Cout * 4), *ref = xmalloc((size_t)N * Cout * 4);
    size_t ny = (size_t)N * Cout * 4;
    char err[256];
    matmul(CblasNoTrans, CblasTrans, N, Cout, Cin, 1, x, Cin, w, Cin, 0, y, Cout);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, Cout, Cin, 1, x, Cin, w, Cin, 0,
                ref, Cout);
    CHECK(!memcmp(y, ref, ny), "no scope: matmul must be cblas_sgemm bit for bit");
    CHECK(matmul_bf16_attach(slab, (size_t)Cout * Cin + 10, err) == 0, "attach: %s", err);
    const void *prev = matmul_scope_enter(slab);
    CHECK(matmul_bf16_active(), "the scope is bf16");
    matmul(CblasNoTrans, CblasTrans, N, Cout, Cin, 1, x, Cin, w, Cin, 0, y, Cout);
    gemm_bf16(gemm_bf16_select_kernel(), 0, 1, N, Cout, Cin, 1, x, Cin, w, Cin, NULL, 0, ref,
              Cout, scratch);
    CHECK(!memcmp(y, ref, ny), "in scope: matmul must be gemm_bf16");
    float keep = w[0];
    w[0] += 0.5f;   /* without weights_changed the cached pack is used */
    matmul(CblasNoTrans, CblasTrans, N, Cout, Cin, 1, x, Cin, w, Cin, 0, y, Cout);
    CHECK(!memcmp(y, ref, ny), "the packed weight is cached, not re-packed per call");
    matmul_weights_changed(slab);
    matmul(CblasNoTrans, CblasTrans, N, Cout, Cin, 1, x, Cin, w, Cin, 0, y, Cout);
    gemm_bf16(gemm_bf16_select_kernel(), 0, 1, N, Cout, Cin, 1, x, Cin, w, Cin, NULL, 0, ref,
              Cout, scratch);
    CHECK(!memcmp(y, ref, ny), "after weights_changed the new weights are packed");
    w[0] = keep;
    /* packed operands (matmul_pack_b, matmul_packed): the bits of matmul on the fp32 rows,
     * for dW = dy^T x accumulated (beta 1) and a plain product, at odd and even K */
    CHECK(matmul_packs(), "a bf16 scope can keep packed operands");
    for (int rows = N - 1; rows <= N; rows++) {
        float *dyp = rand_mat(&r, (size_t)rows * Cout), *xp = rand_mat(&r, (size_t)rows * Cin);
        float *g = xmalloc((size_t)Cout * Cin * 4), *gref = xmalloc((size_t)Cout * Cin * 4);
        uint16_t *pkd = xmalloc(matmul_packed_elems(rows, Cin) * 2);
        GemmBf16PackedB pk;
        for (size_t i = 0; i < (size_t)Cout * Cin; i++)
            g[i] = gref[i] = 0.25f;
        matmul_pack_b(&pk, pkd, CblasNoTrans, rows, Cin, xp, Cin);
        matmul_packed(CblasTrans, Cout, 1, dyp, Cout, &pk, 1, g, Cin);
        matmul(CblasTrans, CblasNoTrans, Cout, Cin, rows, 1, dyp, Cout, xp, Cin, 1, gref, Cin);
        CHECK(!memcmp(g, gref, (size_t)Cout * Cin * 4),
              "K=%d: dW on a packed x must be matmul's on its rows, bit for bit", rows);
        /* a thread with no scratch (MATMUL_PACKS_ENV=fp32): fp32 on the pack's values */
        float *gf = xmalloc((size_t)Cout * Cin * 4);
        for (size_t i = 0; i < (size_t)Cout * Cin; i++)
            gf[i] = 0.25f;
        setenv(MATMUL_PACKS_ENV, "fp32", 1);
        matmul_packed(CblasTrans, Cout, 1, dyp, Cout, &pk, 1, gf, Cin);
        unsetenv(MATMUL_PACKS_ENV);
        CHECK_CLOSE("dW on a pack without scratch vs with", gf, g, (long)Cout * Cin, 0, 0.05);
        CHECK(memcmp(gf, g, (size_t)Cout * Cin * 4) != 0, "the no-scratch path ran gemm_bf16");
        free(gf);
        float *a = rand_mat(&r, (size_t)Cout * rows);   /* (Cout, rows) . x: not transposed */
        matmul_packed(CblasNoTrans, Cout, 0.5f, a, rows, &pk, 0, g, Cin);
        matmul(CblasNoTrans, CblasNoTrans, Cout, Cin, rows, 0.5f, a, rows, xp, Cin, 0, gref, Cin);
        CHECK(!memcmp(g, gref, (size_t)Cout * Cin * 4), "K=%d: a . packed x, alpha 0.5", rows);
        free(dyp); free(xp); free(g); free(gref); free(pkd); free(a);
    }
    /* a pack built in blocks of rows (matmul_pack_b_rows) is the whole's pack, and dW
     * accumulated block by block on row views of it (matmul_packed_rows) is the whole
     * product's, bit for bit: blocks of GEMM_BF16_KC rows, a last row joining the block
     * before */
    for (int rows = 2 * GEMM_BF16_KC + 1; rows <= 600; rows += 600 - (2 * GEMM_BF16_KC + 1)) {
        float *dyp = rand_mat(&r, (size_t)rows * Cout), *xp = rand_mat(&r, (size_t)rows * Cin);
        float *g = xmalloc((size_t)Cout * Cin * 4), *gref = xmalloc((size_t)Cout * Cin * 4);
        size_t ne = matmul_packed_elems(rows, Cin);
        uint16_t *whole = xmalloc(ne * 2), *blocks = xmalloc(ne * 2);
        GemmBf16PackedB pw, pb = matmul_packed_b(blocks, rows, Cin);
        matmul_pack_b(&pw, whole, CblasNoTrans, rows, Cin, xp, Cin);
        memset(blocks, 0xff, ne * 2);
        for (int i0 = 0, kc; i0 < rows; i0 += kc) {   /* blocks of 96 rows: any even size */
            kc = rows - i0 < 96 ? rows - i0 : 96;
            kc += rows - i0 - kc == 1;
            matmul_pack_b_rows(&pb, i0, kc, xp + (size_t)i0 * Cin, Cin);
        }
        CHECK(!memcmp(whole, blocks, ne * 2), "K=%d: the pack built by rows differs", rows);
        for (size_t i = 0; i < (size_t)Cout * Cin; i++)
            g[i] = gref[i] = 0.25f;
        matmul(CblasTrans, CblasNoTrans, Cout, Cin, rows, 1, dyp, Cout, xp, Cin, 1, gref, Cin);
        for (int i0 = 0, kc; i0 < rows; i0 += kc) {
            kc = rows - i0 < GEMM_BF16_KC ? rows - i0 : GEMM_BF16_KC;
            kc += rows - i0 - kc == 1;
            GemmBf16PackedB view = matmul_packed_rows(&pb, i0, kc);
            matmul_packed(CblasTrans, Cout, 1, dyp + (size_t)i0 * Cout, Cout, &view, 1, g, Cin);
        }
        CHECK(!memcmp(g, gref, (size_t)Cout * Cin * 4),
              "K=%d: dW in blocks of rows on views differs from the whole product", rows);
        free(dyp); free(xp); free(g); free(gref); free(whole); free(blocks);
    }
    /* linear.c's three products in scope: within bf16 rounding of fp32 */
    float *dy = rand_mat(&r, (size_t)N * Cout), *dx = xmalloc((size_t)N * Cin * 4);
    float *dw = xmalloc((size_t)Cout * Cin * 4), *dx32 = xmalloc((size_t)N * Cin * 4);
    float *dw32 = xmalloc((size_t)Cout * Cin * 4), *y32 = xmalloc(ny);
    memset(dx, 0, (size_t)N * Cin * 4); memset(dw, 0, (size_t)Cout * Cin * 4);
    matmul_weights_changed(slab);
    linear_forward(y, x, w, NULL, N, Cin, Cout);
    linear_backward(dx, dw, NULL, dy, x, w, N, Cin, Cout);
    matmul_scope_exit(prev);
    CHECK(!matmul_bf16_active() && !matmul_packs(), "scope closed: no packed operands");
    memset(dx32, 0, (size_t)N * Cin * 4); memset(dw32, 0, (size_t)Cout * Cin * 4);
    linear_forward(y32, x, w, NULL, N, Cin, Cout);
    linear_backward(dx32, dw32, NULL, dy, x, w, N, Cin, Cout);
    CHECK_CLOSE("linear forward bf16 vs fp32", y, y32, (long)N * Cout, 0, 0.05);
    CHECK_CLOSE("linear dX bf16 vs fp32", dx, dx32, (long)N * Cin, 0, 0.05);
    CHECK_CLOSE("linear dW bf16 vs fp32", dw, dw32, (long)Cout * Cin, 0, 0.05);
    CHECK(memcmp(y, y32, ny) != 0, "linear in a bf16 scope ran fp32");
    matmul_bf16_detach(slab);
    prev = matmul_scope_enter(slab);
    CHECK(!matmul_bf16_active(), "a detached slab's scope is fp32");
    matmul_scope_exit(prev);
    free(slab); free(x); free(y); free(ref); free(dy); free(dx); free(dw); free(dx32);
    free(dw32); free(y32);
}

int main(void)
{
    setenv(GEMM_BF16_EMULATE_ENV, "1", 1);   /* the emulation where the CPU has no kernel */
    int avx, amx;
    gemm_bf16_cpu(&avx, &amx);
    int amx_ok = gemm_bf16_kernel_available(GEMM_BF16_AMX);
    test_select(avx, amx_ok);
    printf("cpu: avx512_bf16 %s, amx_bf16 %s%s; products run on %s\n", avx ? "yes" : "no",
           amx ? "yes" : "no", amx && !amx_ok ? " (Linux refused the tiles)" : "",
           gemm_bf16_kernel_name(gemm_bf16_select_kernel()));
    void *scratch = xmalloc(gemm_bf16_scratch_bytes());
    test_round();
    test_kernel(GEMM_BF16_EMULATED, scratch);
    test_loop_orders(GEMM_BF16_EMULATED, 1, scratch);
    if (avx) {
        test_kernel(GEMM_BF16_AVX512, scratch);
        test_loop_orders(GEMM_BF16_AVX512, 0, scratch);
    } else {
        printf("  kernel avx512-bf16: not run, this CPU lacks avx512_bf16 (only the "
               "emulation of its instruction was checked)\n");
    }
    if (amx_ok) {
        test_kernel(GEMM_BF16_AMX, scratch);
        test_loop_orders(GEMM_BF16_AMX, 0, scratch);
        test_amx_edges(scratch);
        test_amx_vs_avx512(scratch);
        test_amx_accumulate(scratch);
        test_amx_threads(scratch);
    } else {
        printf("  kernel amx-bf16: not run, no AMX here (%s)\n",
               amx ? "Linux refused the tile state" : "this CPU lacks amx_bf16");
    }
    test_matmul(scratch);
    free(scratch);
    return check_summary();
}
