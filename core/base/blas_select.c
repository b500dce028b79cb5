/* blas_select.c — the CPU's features, OpenBLAS core ranks and the override decision (see
 * blas_select.h). The cpuid reader is the only machine-specific part; the decision is a
 * pure function of its arguments so tests/test_blas_select.c can table-test it for CPUs
 * this machine is not. Reference: OpenBLAS driver/others/dynamic.c (core names, the
 * OPENBLAS_CORETYPE override) and Intel SDM vol. 2A, CPUID leaves 1 and 7. */
#include "blas_select.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

void blas_select_read_cpu(BlasCpu *cpu)
{
    memset(cpu, 0, sizeof *cpu);
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0, max = 0;
    if (!__get_cpuid(0, &max, &b, &c, &d))
        return;
    char vendor[13];
    memcpy(vendor, &b, 4); memcpy(vendor + 4, &d, 4); memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    cpu->vendor = !strcmp(vendor, "GenuineIntel") ? BLAS_CPU_INTEL
                : !strcmp(vendor, "AuthenticAMD") ? BLAS_CPU_AMD : BLAS_CPU_OTHER;
    __get_cpuid(1, &a, &b, &c, &d);
    int fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;
    cpu->family = fam == 0xf ? fam + (int)((a >> 20) & 0xff) : fam;
    cpu->model = fam == 0x6 || fam == 0xf ? mod | (int)((a >> 12) & 0xf0) : mod;
    cpu->sse3 = c & 1;
    cpu->fma = (c >> 12) & 1;
    cpu->avx = (c >> 28) & 1;
    if ((c >> 27) & 1) {                    /* OSXSAVE: XCR0 says which registers the OS saves */
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        cpu->os_avx = (lo & 0x6) == 0x6;
        cpu->os_avx512 = (lo & 0xe6) == 0xe6;
    }
    if (max >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        cpu->avx2 = (b >> 5) & 1;
        cpu->avx512f = (b >> 16) & 1;
        cpu->avx512dq = (b >> 17) & 1;
        cpu->avx512cd = (b >> 28) & 1;
        cpu->avx512bw = (b >> 30) & 1;
        cpu->avx512vl = (b >> 31) & 1;
        __cpuid_count(7, 1, a, b, c, d);
        cpu->avx512bf16 = (a >> 5) & 1;
    }
#endif
}

static int has_avx512(const BlasCpu *c)
{
    return c->os_avx512 && c->avx512f && c->avx512cd && c->avx512bw && c->avx512dq &&
           c->avx512vl;
}

const char *blas_select_best_core(const BlasCpu *c)
{
    if (c->vendor == BLAS_CPU_OTHER && !c->sse3)
        return "";
    if (has_avx512(c))
        return c->avx512bf16 ? "Cooperlake" : "SkylakeX";
    if (c->os_avx && c->avx2 && c->fma)
        return c->vendor == BLAS_CPU_AMD ? "Zen" : "Haswell";
    if (c->os_avx && c->avx)
        return "Sandybridge";
    return c->sse3 ? "Prescott" : "";
}

/* OpenBLAS's x86-64 core names (dynamic.c) by the instructions their kernels use. */
static const struct { const char *name; int rank; } RANKS[] = {
    {"Unknown", 0}, {"Katmai", 1}, {"Coppermine", 1}, {"Northwood", 1}, {"Prescott", 1},
    {"Banias", 1}, {"Atom", 1}, {"Core2", 1}, {"Penryn", 1}, {"Dunnington", 1},
    {"Nehalem", 1}, {"Athlon", 1}, {"Opteron", 1}, {"Opteron_SSE3", 1}, {"Barcelona", 1},
    {"Bobcat", 1}, {"Nano", 1}, {"Sandybridge", 2}, {"Bulldozer", 2}, {"Piledriver", 2},
    {"Steamroller", 2}, {"Excavator", 3}, {"Haswell", 3}, {"Zen", 3}, {"SkylakeX", 4},
    {"Cooperlake", 5}, {"SapphireRapids", 6},
};

int blas_select_core_rank(const char *core)
{
    for (size_t i = 0; core && i < sizeof RANKS / sizeof RANKS[0]; i++)
        if (!strcasecmp(core, RANKS[i].name))
            return RANKS[i].rank;
    return -1;
}

void blas_select_decide(const BlasCpu *cpu, const char *chosen, const char *user,
                        BlasChoice *out)
{
    memset(out, 0, sizeof *out);
    const char *best = blas_select_best_core(cpu);
    snprintf(out->core, sizeof out->core, "%s", chosen ? chosen : "");
    int have = blas_select_core_rank(chosen), want = blas_select_core_rank(best);
    if (user && *user) {
        snprintf(out->core, sizeof out->core, "%s", user);
        snprintf(out->reason, sizeof out->reason, "OPENBLAS_CORETYPE=%s set by the user, kept; "
                 "the best for this CPU is %s", user, *best ? best : "unknown");
    } else if (!*best) {
        snprintf(out->reason, sizeof out->reason, "no x86 CPU features to judge by: "
                 "OpenBLAS's choice kept");
    } else if (have < 0) {
        snprintf(out->reason, sizeof out->reason, "OpenBLAS chose '%s', a core lmlab does not "
                 "rank: kept", chosen ? chosen : "");
    } else if (have < want) {
        snprintf(out->core, sizeof out->core, "%s", best);
        out->override = 1;
        snprintf(out->reason, sizeof out->reason, "OpenBLAS chose %s, weaker than this CPU "
                 "supports (%s)", chosen, best);
    } else {
        snprintf(out->reason, sizeof out->reason, "OpenBLAS's choice, %s", have == want ?
                 "the best for this CPU" : "stronger than lmlab's table expects");
    }
}

const char *blas_select_cpu_text(const BlasCpu *c, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    int n = snprintf(buf, cap, "%s family %d model %d:", c->vendor == BLAS_CPU_INTEL ? "Intel"
                     : c->vendor == BLAS_CPU_AMD ? "AMD" : "other", c->family, c->model);
    const struct { int on; const char *name; } f[] = {
        {c->sse3, " SSE3"}, {c->avx && c->os_avx, " AVX"}, {c->avx2 && c->os_avx, " AVX2"},
        {c->fma, " FMA"}, {has_avx512(c), " AVX-512 (F CD BW DQ VL)"},
        {has_avx512(c) && c->avx512bf16, " BF16"},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0] && n >= 0 && (size_t)n < cap; i++)
        if (f[i].on)
            n += snprintf(buf + n, cap - (size_t)n, "%s", f[i].name);
    return buf;
}

const char *blas_select_describe(char *buf, size_t cap)
{
    if (!cap)
        return buf;
    const char *running = openblas_get_corename(), *mark = getenv(BLAS_SELECT_MARK_ENV);
    const char *user = getenv("OPENBLAS_CORETYPE");
    BlasCpu cpu;
    blas_select_read_cpu(&cpu);
    if (mark && user) {                     /* the re-executed process: lmlab set the variable */
        if (strcasecmp(running, user))
            snprintf(buf, cap, "%s kernels (lmlab asked for %s over OpenBLAS's %s, but the "
                     "library kept %s)", running, user, mark, running);
        else
        {
            char cpu_text[160];
            snprintf(buf, cap, "%s kernels (chosen by lmlab: OpenBLAS chose %s, weaker than "
                     "this CPU supports: %s)", running, mark,
                     blas_select_cpu_text(&cpu, cpu_text, sizeof cpu_text));
        }
        return buf;
    }
    const char *hook = getenv(BLAS_SELECT_TEST_ENV);
    BlasChoice ch;
    blas_select_decide(&cpu, hook && *hook ? hook : running, user, &ch);
    if (ch.override)
        snprintf(buf, cap, "%s kernels (%s; not overridden in this process)", running,
                 ch.reason);
    else
        snprintf(buf, cap, "%s kernels (%s)", running, ch.reason);
    return buf;
}

int blas_select_plan(BlasChoice *out, const char **chosen)
{
    const char *hook = getenv(BLAS_SELECT_TEST_ENV);
    *chosen = hook && *hook ? hook : openblas_get_corename();
    BlasCpu cpu;
    blas_select_read_cpu(&cpu);
    blas_select_decide(&cpu, *chosen, getenv("OPENBLAS_CORETYPE"), out);
    const char *config = openblas_get_config();
    return out->override && !getenv(BLAS_SELECT_MARK_ENV) && config &&
           strstr(config, "DYNAMIC_ARCH") != NULL;
}

const char *blas_select_brief(char *buf, size_t cap)
{
    if (!cap)
        return buf;
    const char *running = openblas_get_corename(), *mark = getenv(BLAS_SELECT_MARK_ENV);
    const char *user = getenv("OPENBLAS_CORETYPE");
    if (mark && user && !strcasecmp(running, user))
        snprintf(buf, cap, "chosen by lmlab: OpenBLAS chose %s, weaker than this CPU "
                 "supports", mark);
    else if (user && *user && !mark)
        snprintf(buf, cap, "OPENBLAS_CORETYPE=%s set by the user", user);
    else
        buf[0] = 0;
    return buf;
}

int blas_select_thread_cap_for(double limit_bytes, int cores)
{
    if (limit_bytes <= 0)
        return 0;
    return limit_bytes < BLAS_SELECT_AS_BASE + BLAS_SELECT_AS_PER_THREAD * (cores > 1 ? cores : 1)
         ? 1 : 0;
}

int blas_select_thread_cap(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return blas_select_thread_cap_for((double)rl.rlim_cur, cores > 0 ? (int)cores : 1);
}
