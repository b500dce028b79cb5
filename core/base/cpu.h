/* cpu.h — the one mechanism that picks CPU-specific code at run time: GCC's function
 * multi-versioning. A kernel marked CPU_CLONES is compiled once per level of cpu.def
 * plus the x86-64 baseline, and the dynamic loader calls GCC's resolver once (an ifunc)
 * to bind the best variant this CPU runs; no #if on the compiler's target macros, no
 * -march=native. The one kernel the compiler cannot write from C, the bf16 micro-kernel
 * (vdpbf16ps), has its variants written with target() and is chosen once from cpuid
 * (sysinfo_bf16, core/nn/gemm_bf16.c). OpenBLAS chooses its own sgemm kernels
 * (blas_select.h). Not a tuner: nothing here times anything.
 * Building with -Dnative=true (an opt-in for experiments) compiles everything for the
 * build machine instead (LMLAB_NATIVE): CPU_CLONES is then empty. See docs/cpu.md. */
#ifndef LM_CPU_H
#define LM_CPU_H

#include <stddef.h>

#include "cpu.def"

#define CPU_LEVEL_ID(id, clone, name, what) id,
typedef enum {
    CPU_LEVELS(CPU_LEVEL_ID)
    CPU_BASE,     /* x86-64 (SSE2): the "default" clone */
    CPU_NATIVE,   /* built with -march=native (LMLAB_NATIVE): no clones */
    CPU_N_LEVELS
} CpuLevel;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(LMLAB_NATIVE) && \
    !defined(LMLAB_NO_CLONES)
#define CPU_LEVEL_CLONE(id, clone, name, what) clone,
/* Put before a function definition: one variant per level, bound once at load. Use it
 * on functions that loop over rows or slabs (a call costs an indirect jump), not on
 * per-element helpers (those are inlined into each variant). */
#define CPU_CLONES \
    __attribute__((target_clones(CPU_LEVELS(CPU_LEVEL_CLONE) "default")))
#else
#define CPU_CLONES
#endif

/* A per-row or per-step helper of CPU_CLONES kernels: inlined into each variant, so it
 * runs at the variant's level with no call between (a helper GCC chose not to inline
 * would run the baseline's code). */
#define CPU_INLINE static inline __attribute__((always_inline))

/* The level whose variants the loader bound in this process (the same test as GCC's
 * resolver: the best cpu.def level this CPU supports), CPU_NATIVE in a -march=native
 * build, CPU_BASE off x86-64. Decided once. */
CpuLevel cpu_level(void);

/* "x86-64-v4 (AVX-512 F/BW/CD/DQ/VL)", "x86-64 (SSE2)", "native (-march=native)". */
const char *cpu_level_text(CpuLevel level);

#endif
