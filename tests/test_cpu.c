/* test_cpu.c — the run-time choice of CPU-specific code (cpu.h, kernels.h): the level
 * the loader bound is the one GCC's resolver tests for, every kernel family is named, and
 * the kernels give the same numbers on every CPU level. Run natively and, by
 * tests/qemu_cpus.sh, under qemu-x86_64 -cpu Nehalem (x86-64 baseline) and -cpu Haswell
 * (x86-64-v3), which pass LMLAB_TEST_CPU_LEVEL (the level that CPU must bind) and
 * LMLAB_TEST_CPU_DIGEST (the native run's digest).
 * The digest covers kernels whose bits do not depend on the level (no FMA contraction, no
 * reassociated sums: GELU forward and backward, layer norm forward and backward, the
 * softmax and the fused cross-entropy (fast_expf, vectorised on every level since
 * -fno-trapping-math), Adam, the bf16 emulation),
 * so it must match exactly; the contracted kernels (flash attention, the mat-vec) are
 * checked against a double-precision reference within the tolerance stated there. */
#include "check.h"
#include "activation.h"
#include "attention_flash.h"
#include "cpu.h"
#include "crossentropy.h"
#include "err.h"
#include "gemm_bf16.h"
#include "kernels.h"
#include "layernorm.h"
#include "linear.h"
#include "optim.h"
#include "params.h"

#include <stdint.h>
#include <string.h>

static uint64_t g_digest = 1469598103934665603ull;   /* FNV-1a over the outputs' bits */

static void digest_floats(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, 4);
        for (int b = 0; b < 4; b++) {
            g_digest ^= (u >> (8 * b)) & 0xffu;
            g_digest *= 1099511628211ull;
        }
    }
}

static uint64_t g_rng = 88172645463325252ull;
static float frand(void)   /* uniform in [-1, 1) */
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float)((g_rng >> 40) * (1.0 / 8388608.0)) - 1.0f;
}

static void fill(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = frand();
}

static void test_level(void)
{
    CpuLevel lv = cpu_level();
    CHECK(lv >= 0 && lv < CPU_N_LEVELS, "level %d", (int)lv);
    CHECK(cpu_level() == lv, "decided once");
#if defined(LMLAB_NATIVE)
    CHECK(lv == CPU_NATIVE, "a -march=native build has no clones: %s", cpu_level_text(lv));
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
    CpuLevel want = __builtin_cpu_supports("x86-64-v4")   ? CPU_V4
                    : __builtin_cpu_supports("x86-64-v3") ? CPU_V3
                                                          : CPU_BASE;
    CHECK(lv == want, "bound %s, GCC's resolver picks %s", cpu_level_text(lv),
          cpu_level_text(want));
#endif
    for (int i = 0; i < CPU_N_LEVELS; i++)
        for (int j = 0; j < i; j++)
            CHECK(strcmp(cpu_level_text((CpuLevel)i), cpu_level_text((CpuLevel)j)),
                  "levels %d and %d share a name", i, j);
    CHECK(!strcmp(cpu_level_text((CpuLevel)-1), "unknown"), "out of range");
    const char *expect = getenv("LMLAB_TEST_CPU_LEVEL");
    if (expect && *expect) {
        size_t n = strlen(expect);
        const char *got = cpu_level_text(lv);
        CHECK(!strncmp(got, expect, n) && got[n] == ' ', "this CPU must bind %s, got %s",
              expect, got);
    }
    printf("cpu level: %s\n", cpu_level_text(lv));
}

static void test_families(void)
{
    char buf[256];
    for (int f = 0; f < KERNEL_N_FAMILIES; f++) {
        const char *name = kernels_family_name((KernelFamily)f);
        CHECK(name && *name, "family %d has a name", f);
        CHECK(*kernels_chosen((KernelFamily)f, buf, sizeof buf), "family %s named", name);
        printf("%-12s %s\n", name, buf);
    }
    CHECK(!strcmp(kernels_chosen(KERNEL_ELEMENTWISE, buf, sizeof buf),
                  cpu_level_text(cpu_level())),
          "elementwise is the bound level: %s", buf);
    CHECK(!strcmp(kernels_chosen(KERNEL_SGEMM, buf, sizeof buf), "") == 0 &&
              !strncmp(buf, "OpenBLAS", 8),
          "sgemm names OpenBLAS: %s", buf);
    CHECK(kernels_family_name(KERNEL_N_FAMILIES) == NULL, "out of range");
}

/* Level-independent bits: GELU, layer norm, the softmax and cross-entropy, Adam, the bf16
 * emulation. */
static void test_exact_kernels(void)
{
    enum { N = 7, C = 133, NG = 1001 };
    static float x[N * C], out[N * C], w[C], b[C], mean[N], rstd[N], dout[N * C];
    static float dx[N * C], dw[C], db[C], g[NG], go[NG];
    fill(x, N * C), fill(w, C), fill(b, C), fill(dout, N * C), fill(g, NG);
    for (int i = 0; i < NG; i++)
        g[i] *= 6.0f;
    gelu_forward(go, g, NG);
    digest_floats(go, NG);
    memcpy(go, g, sizeof go);
    gelu_backward(go, g, g, NG);   /* dinp += dout * GELU'(inp) */
    digest_floats(go, NG);
    enum { R = 3, V = 333 };   /* rows of logits; V not a multiple of 16: the tails too */
    static float lg[R * V], pr[R * V];
    int tg[R] = {5, -1, V - 1};   /* one row ignored */
    fill(lg, R * V);
    for (int i = 0; i < R * V; i++)
        lg[i] *= 40.0f;   /* some beyond fast_expf's clamp at -87 once the max is taken off */
    softmax_forward(pr, lg, R, V, 0.7f);
    digest_floats(pr, R * V);
    float loss = (float)crossentropy_forward_backward(pr, lg, tg, R, V, 0.25f);
    digest_floats(pr, R * V), digest_floats(&loss, 1);
    layernorm_forward(out, mean, rstd, x, w, b, N, C);
    layernorm_backward(dx, dw, db, dout, x, w, mean, rstd, N, C);
    digest_floats(out, N * C), digest_floats(dx, N * C), digest_floats(dw, C);
    digest_floats(db, C);

    ParamSet ps;
    Optimizer o;
    char err[LM_ERR_LEN];
    params_init(&ps);
    int shape[1] = {517};
    CHECK(params_add(&ps, "w", 1, shape, 0) >= 0, "add");
    CHECK(params_alloc(&ps, err) == LM_OK, "%s", err);
    fill(ps.data, ps.total);
    CHECK(optim_init(&o, OPTIM_ADAMW, ps.total, 0.9f, 0.95f, 1e-8f, 0.1f, 0.0f, err) == LM_OK,
          "%s", err);
    for (int step = 0; step < 3; step++) {
        fill(ps.grad, ps.total);
        optim_step(&o, &ps, 1e-2f);
    }
    digest_floats(ps.data, ps.total);
    optim_free(&o);
    params_free(&ps);

    enum { M = 37, K = 70, NN = 45 };
    static float A[M * K], B[K * NN], Cm[M * NN];
    fill(A, M * K), fill(B, K * NN);
    void *scratch = aligned_alloc(64, (gemm_bf16_scratch_bytes() + 63) & ~(size_t)63);
    CHECK(scratch != NULL, "scratch");
    if (scratch) {
        gemm_bf16(GEMM_BF16_EMULATED, 0, 0, M, NN, K, 1.0f, A, K, B, NN, NULL, 0.0f, Cm, NN,
                  scratch);
        digest_floats(Cm, M * NN);
    }
    free(scratch);
    char hex[32];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)g_digest);
    printf("digest %s\n", hex);
    const char *expect = getenv("LMLAB_TEST_CPU_DIGEST");
    if (expect && *expect)
        CHECK(!strcmp(hex, expect), "the level-independent kernels give other bits here "
              "(%s) than in the native run (%s)", hex, expect);
}

/* The contracted kernels, against double references: the flash attention forward
 * (rtol 1e-5, atol 1e-6) and the mat-vec (rtol 1e-5, atol 1e-5 on sums of 77 terms). */
static void test_contracted_kernels(void)
{
    enum { T = 75, HD = 16, LD = 3 * HD };
    static float qkv[T * LD], o[T * HD], lse[T], ref[T * HD];
    fill(qkv, T * LD);
    float *work = malloc(attention_flash_forward_floats(T, HD) * sizeof(float));
    CHECK(work != NULL, "work");
    if (!work)
        return;
    FlashHead fh = {T, HD, 0.25f, 0.0f, 1, 0};
    attention_flash_forward(&fh, o, HD, lse, work, qkv, qkv + HD, qkv + 2 * HD, LD);
    free(work);
    for (int i = 0; i < T; i++) {
        double s[T], m = -1e300, sum = 0;
        for (int j = 0; j <= i; j++) {
            double d = 0;
            for (int c = 0; c < HD; c++)
                d += (double)qkv[i * LD + c] * qkv[j * LD + HD + c];
            s[j] = 0.25 * d;
            m = s[j] > m ? s[j] : m;
        }
        for (int j = 0; j <= i; j++)
            sum += exp(s[j] - m);
        for (int c = 0; c < HD; c++) {
            double acc = 0;
            for (int j = 0; j <= i; j++)
                acc += exp(s[j] - m) / sum * qkv[j * LD + 2 * HD + c];
            ref[i * HD + c] = (float)acc;
        }
    }
    double worst = check_max_err(o, ref, T * HD, 1e-5, 1e-6, NULL);
    CHECK(worst <= 1.0, "flash attention off its reference: %.3g of the tolerance", worst);

    enum { R = 9, CI = 77 };
    static float wm[R * CI], xv[CI], y[R], yref[R];
    fill(wm, R * CI), fill(xv, CI);
    linear_matvec(y, wm, CI, xv, R, CI, 1.0f, 0.0f);
    for (int r = 0; r < R; r++) {
        double d = 0;
        for (int c = 0; c < CI; c++)
            d += (double)wm[r * CI + c] * xv[c];
        yref[r] = (float)d;
    }
    worst = check_max_err(y, yref, R, 1e-5, 1e-5, NULL);
    CHECK(worst <= 1.0, "mat-vec off its reference: %.3g of the tolerance", worst);
}

int main(void)
{
    test_level();
    test_families();
    test_exact_kernels();
    test_contracted_kernels();
    return check_summary();
}
