/* cpu.c — which variant of the CPU_CLONES kernels this process runs (see cpu.h). Asks
 * the same question as GCC's resolver (libgcc's __builtin_cpu_supports on the levels of
 * cpu.def, best first), so what `show machine` names is what the loader bound. Not a
 * feature detector for OpenBLAS (blas_select.c) or bf16 (sysinfo_bf16). */
#include "cpu.h"

#define CPU_LEVEL_TEXT(id, clone, name, what) [id] = name " (" what ")",
static const char *const level_text[CPU_N_LEVELS] = {
    CPU_LEVELS(CPU_LEVEL_TEXT)
    [CPU_BASE] = "x86-64 (SSE2)",
    [CPU_NATIVE] = "native (-march=native, this build's machine only)",
};

CpuLevel cpu_level(void)
{
#if defined(LMLAB_NATIVE)
    return CPU_NATIVE;
#elif defined(LMLAB_NO_CLONES)
    return CPU_BASE;   /* a ThreadSanitizer build: the baseline code only */
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
#define CPU_LEVEL_TEST(id, clone, name, what) \
    if (__builtin_cpu_supports(name))         \
        return id;
    CPU_LEVELS(CPU_LEVEL_TEST)
    return CPU_BASE;
#else
    return CPU_BASE;
#endif
}

const char *cpu_level_text(CpuLevel level)
{
    return level >= 0 && level < CPU_N_LEVELS ? level_text[level] : "unknown";
}
