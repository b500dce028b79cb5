/* test_blas_select.c — the OpenBLAS core decision as a table (CPU feature sets x the core
 * OpenBLAS chose x the user's OPENBLAS_CORETYPE -> override or not, and to what), Intel and
 * AMD alike; the rank table; the cpuid reader's consistency on this machine; and the
 * describe/brief lines under the environment the re-executed lmlab sees. The re-exec itself
 * is tested end to end on the binary (tests/e2e_blas.sh). */
#include "blas_select.h"
#include "check.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

enum { SSE3, AVX, AVX2, AVX512, AVX512BF16, AVX512_NO_OS };

/* A CPU of a vendor at one feature level. */
static BlasCpu cpu_at(BlasCpuVendor v, int level)
{
    BlasCpu c = {.vendor = v, .family = v == BLAS_CPU_AMD ? 25 : 6, .sse3 = 1};
    if (level >= AVX) c.avx = c.os_avx = 1;
    if (level >= AVX2) c.avx2 = c.fma = 1;
    if (level >= AVX512) {
        c.avx512f = c.avx512cd = c.avx512bw = c.avx512dq = c.avx512vl = 1;
        c.os_avx512 = level != AVX512_NO_OS;
    }
    if (level == AVX512BF16) c.avx512bf16 = 1;
    return c;
}

static void test_table(void)
{
    static const struct {
        BlasCpuVendor vendor;
        int level;
        const char *chosen, *user;
        int override;
        const char *core;
    } rows[] = {
        /* the machine: Intel family 6 model 207, AVX-512 + BF16, 0.3.21 -> Prescott */
        {BLAS_CPU_INTEL, AVX512BF16, "Prescott", NULL, 1, "Cooperlake"},
        {BLAS_CPU_INTEL, AVX512BF16, "Cooperlake", NULL, 0, "Cooperlake"},
        {BLAS_CPU_INTEL, AVX512BF16, "SapphireRapids", NULL, 0, "SapphireRapids"},
        {BLAS_CPU_INTEL, AVX512BF16, "SkylakeX", NULL, 1, "Cooperlake"},
        {BLAS_CPU_INTEL, AVX512, "Haswell", NULL, 1, "SkylakeX"},
        {BLAS_CPU_INTEL, AVX512, "SkylakeX", NULL, 0, "SkylakeX"},
        {BLAS_CPU_INTEL, AVX512, "Unknown", NULL, 1, "SkylakeX"},
        {BLAS_CPU_INTEL, AVX512_NO_OS, "Haswell", NULL, 0, "Haswell"}, /* OS lacks zmm state */
        {BLAS_CPU_INTEL, AVX512_NO_OS, "Prescott", NULL, 1, "Haswell"},
        {BLAS_CPU_INTEL, AVX2, "Prescott", NULL, 1, "Haswell"},
        {BLAS_CPU_INTEL, AVX2, "haswell", NULL, 0, "haswell"},
        {BLAS_CPU_INTEL, AVX2, "Nehalem", NULL, 1, "Haswell"},
        {BLAS_CPU_INTEL, AVX, "Core2", NULL, 1, "Sandybridge"},
        {BLAS_CPU_INTEL, AVX, "Sandybridge", NULL, 0, "Sandybridge"},
        {BLAS_CPU_INTEL, SSE3, "Prescott", NULL, 0, "Prescott"},
        {BLAS_CPU_INTEL, SSE3, "Nehalem", NULL, 0, "Nehalem"},
        /* AMD: Zen 5 with AVX-512 + BF16 seen as Haswell/Zen; Zen 2/3 at AVX2 */
        {BLAS_CPU_AMD, AVX512BF16, "Haswell", NULL, 1, "Cooperlake"},
        {BLAS_CPU_AMD, AVX512BF16, "Zen", NULL, 1, "Cooperlake"},
        {BLAS_CPU_AMD, AVX512, "Zen", NULL, 1, "SkylakeX"},
        {BLAS_CPU_AMD, AVX2, "Zen", NULL, 0, "Zen"},
        {BLAS_CPU_AMD, AVX2, "Haswell", NULL, 0, "Haswell"},
        {BLAS_CPU_AMD, AVX2, "Prescott", NULL, 1, "Zen"},
        {BLAS_CPU_AMD, AVX2, "Barcelona", NULL, 1, "Zen"},
        {BLAS_CPU_AMD, AVX, "Bulldozer", NULL, 0, "Bulldozer"},
        {BLAS_CPU_AMD, AVX2, "Excavator", NULL, 0, "Excavator"},
        /* the user's variable always wins, weaker or not */
        {BLAS_CPU_INTEL, AVX512BF16, "Prescott", "Prescott", 0, "Prescott"},
        {BLAS_CPU_AMD, AVX512BF16, "Haswell", "Haswell", 0, "Haswell"},
        {BLAS_CPU_INTEL, AVX2, "Prescott", "SkylakeX", 0, "SkylakeX"},
        /* names lmlab does not rank are kept; no x86 features, nothing to judge */
        {BLAS_CPU_INTEL, AVX512, "FutureLake", NULL, 0, "FutureLake"},
        {BLAS_CPU_OTHER, -1, "ARMV8", NULL, 0, "ARMV8"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        BlasCpu c = rows[i].level < 0 ? (BlasCpu){0} : cpu_at(rows[i].vendor, rows[i].level);
        BlasChoice ch;
        blas_select_decide(&c, rows[i].chosen, rows[i].user, &ch);
        CHECK(ch.override == rows[i].override && !strcmp(ch.core, rows[i].core),
              "row %zu (%s, level %d, chose %s, user %s): override %d core %s, want %d %s (%s)",
              i, rows[i].vendor == BLAS_CPU_AMD ? "AMD" : "Intel", rows[i].level,
              rows[i].chosen, rows[i].user ? rows[i].user : "-", ch.override, ch.core,
              rows[i].override, rows[i].core, ch.reason);
        CHECK(ch.reason[0] != 0, "row %zu has no reason", i);
        if (ch.override)
            CHECK(strstr(ch.reason, rows[i].chosen) && strstr(ch.reason, rows[i].core),
                  "row %zu: reason names neither core: %s", i, ch.reason);
        if (rows[i].user)
            CHECK(strstr(ch.reason, "set by the user") != NULL, "row %zu: %s", i, ch.reason);
    }
}

static void test_ranks(void)
{
    CHECK(blas_select_core_rank("Prescott") < blas_select_core_rank("Sandybridge"), "ranks");
    CHECK(blas_select_core_rank("Sandybridge") < blas_select_core_rank("Haswell"), "ranks");
    CHECK(blas_select_core_rank("Haswell") == blas_select_core_rank("ZEN"), "case");
    CHECK(blas_select_core_rank("Haswell") < blas_select_core_rank("SkylakeX"), "ranks");
    CHECK(blas_select_core_rank("SkylakeX") < blas_select_core_rank("Cooperlake"), "ranks");
    CHECK(blas_select_core_rank("Unknown") == 0, "Unknown ranks lowest");
    CHECK(blas_select_core_rank("nonsense") == -1 && blas_select_core_rank(NULL) == -1,
          "unranked");
    BlasCpu none = {0};
    CHECK(!strcmp(blas_select_best_core(&none), ""), "no features, no core");
}

/* The reader on this machine: consistent flags, and its best core ranked by the table. */
static void test_this_cpu(void)
{
    BlasCpu c;
    blas_select_read_cpu(&c);
    char text[200];
    printf("  %s; best core %s; OpenBLAS runs %s\n", blas_select_cpu_text(&c, text,
           sizeof text), blas_select_best_core(&c), openblas_get_corename());
#if defined(__x86_64__)
    CHECK(c.vendor != BLAS_CPU_OTHER || c.sse3, "an x86-64 CPU has SSE3");
    CHECK(c.family > 0, "family %d", c.family);
    CHECK(blas_select_core_rank(blas_select_best_core(&c)) >= 1, "best %s",
          blas_select_best_core(&c));
#endif
    CHECK(!c.os_avx512 || c.os_avx, "zmm state implies ymm state");
    CHECK(!c.avx512bf16 || c.avx512f, "BF16 without AVX-512F");
    char tiny[8];
    blas_select_cpu_text(&c, tiny, sizeof tiny);
    CHECK(strlen(tiny) == sizeof tiny - 1, "truncates: '%s'", tiny);
}

/* The lines the re-executed process prints: the mark and the variable as main sets them. */
static void test_describe(void)
{
    char buf[256];
    const char *running = openblas_get_corename();
    unsetenv(BLAS_SELECT_MARK_ENV);
    unsetenv(BLAS_SELECT_TEST_ENV);
    setenv("OPENBLAS_CORETYPE", running, 1);
    CHECK(strstr(blas_select_brief(buf, sizeof buf), "set by the user") != NULL, "%s", buf);
    CHECK(strstr(blas_select_describe(buf, sizeof buf), "set by the user") != NULL, "%s", buf);
    setenv(BLAS_SELECT_MARK_ENV, "Prescott", 1);
    CHECK(strstr(blas_select_brief(buf, sizeof buf), "chosen by lmlab: OpenBLAS chose "
                                                      "Prescott") != NULL, "%s", buf);
    CHECK(strstr(blas_select_describe(buf, sizeof buf), "chosen by lmlab") != NULL, "%s", buf);
    setenv("OPENBLAS_CORETYPE", "NotTheRunningCore", 1);
    CHECK(strstr(blas_select_describe(buf, sizeof buf), "but the library kept") != NULL, "%s",
          buf);
    unsetenv(BLAS_SELECT_MARK_ENV);
    unsetenv("OPENBLAS_CORETYPE");
    CHECK(blas_select_brief(buf, sizeof buf)[0] == 0, "OpenBLAS's own choice: '%s'", buf);
    BlasChoice ch;
    const char *chosen;
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);      /* the user's variable: never re-exec */
    setenv(BLAS_SELECT_TEST_ENV, "Prescott", 1);
    CHECK(blas_select_plan(&ch, &chosen) == 0 && !strcmp(chosen, "Prescott"), "user wins");
    unsetenv("OPENBLAS_CORETYPE");
    setenv(BLAS_SELECT_MARK_ENV, "Prescott", 1);     /* already re-executed: never again */
    CHECK(blas_select_plan(&ch, &chosen) == 0, "a second re-exec");
    unsetenv(BLAS_SELECT_MARK_ENV);
    unsetenv(BLAS_SELECT_TEST_ENV);
}

/* The thread cap under an address-space limit (ulimit -v): 1 below 512 MiB + 256 MiB a
 * core, none without a limit or above it. */
static void test_thread_cap(void)
{
    double mib = 1024.0 * 1024;
    CHECK(blas_select_thread_cap_for(0, 2) == 0, "no limit: no cap");
    CHECK(blas_select_thread_cap_for(100000 * 1024.0, 2) == 1, "ulimit -v 100000: one thread");
    CHECK(blas_select_thread_cap_for(150000 * 1024.0, 2) == 1, "ulimit -v 150000: one thread");
    CHECK(blas_select_thread_cap_for(1023 * mib, 2) == 1, "just below 512 + 2 x 256 MiB");
    CHECK(blas_select_thread_cap_for(1024 * mib, 2) == 0, "at 512 + 2 x 256 MiB: no cap");
    CHECK(blas_select_thread_cap_for(4096 * mib, 64) == 1, "4 GiB for 64 cores: one thread");
    CHECK(blas_select_thread_cap_for(800 * mib, 0) == 0 && blas_select_thread_cap_for(700 * mib, 0) == 1, "0 cores counts as 1");
}

int main(void)
{
    test_table();
    test_ranks();
    test_this_cpu();
    test_describe();
    test_thread_cap();
    return check_summary();
}
