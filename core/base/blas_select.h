/* blas_select.h — which OpenBLAS kernels this CPU deserves. OpenBLAS (DYNAMIC_ARCH builds)
 * picks a "core" (a kernel set) at load time from the CPU it sees; releases before 0.3.25
 * do not know newer CPUs and fall back to far weaker kernels (Prescott's SSE3 on an
 * AVX-512 Sapphire Rapids, Haswell's AVX2 on an AVX-512 Zen 5), leaving 2-4x of sgemm
 * unused. This module reads the CPU's features (cpuid, xgetbv), ranks OpenBLAS core names,
 * and decides -- a pure function, table-tested -- whether the chosen core is weaker than
 * the CPU supports and which to ask for instead (through OPENBLAS_CORETYPE, which the
 * library reads only in its load-time constructor: app/main.c re-executes lmlab with it
 * set). Not a BLAS wrapper and not a tuner: it never times anything. */
#ifndef LM_BLAS_SELECT_H
#define LM_BLAS_SELECT_H

#include <stddef.h>

/* The environment variable lmlab sets on the re-executed process: the core OpenBLAS had
 * chosen by itself. Its presence also forbids a second re-exec (no loops). */
#define BLAS_SELECT_MARK_ENV "LMLAB_BLAS_OVERRODE"
/* Test hook: makes lmlab believe OpenBLAS chose this core (the e2e test uses Prescott). */
#define BLAS_SELECT_TEST_ENV "LMLAB_TEST_BLAS_CORENAME"

typedef enum { BLAS_CPU_OTHER, BLAS_CPU_INTEL, BLAS_CPU_AMD } BlasCpuVendor;

/* What the CPU and the operating system support (each flag 0/1). `os_avx` / `os_avx512`
 * say the OS saves the ymm / zmm registers (XCR0), without which the instructions fault. */
typedef struct {
    BlasCpuVendor vendor;
    int family, model;                      /* display family and model */
    int sse3, avx, fma, avx2;
    int avx512f, avx512cd, avx512bw, avx512dq, avx512vl, avx512bf16;
    int os_avx, os_avx512;
} BlasCpu;

/* The decision: the core to run and, when it differs from OpenBLAS's, why. */
typedef struct {
    char core[32];       /* the best core for this CPU (OpenBLAS spelling), or the chosen one */
    int override;        /* 1: ask OpenBLAS for `core` instead of the one it chose */
    char reason[200];    /* one sentence either way */
} BlasChoice;

/* Reads the running CPU with cpuid/xgetbv; on a non-x86 build every flag is 0 and the
 * vendor BLAS_CPU_OTHER. Never fails. */
void blas_select_read_cpu(BlasCpu *cpu);

/* The strongest OpenBLAS core whose instructions `cpu` fully supports: Cooperlake
 * (AVX-512 F/CD/BW/DQ/VL + BF16), SkylakeX (AVX-512 without BF16), Haswell or Zen (AVX2 +
 * FMA, by vendor), Sandybridge (AVX), Prescott (SSE3); "" when none (not x86). */
const char *blas_select_best_core(const BlasCpu *cpu);

/* The capability rank of an OpenBLAS core name (case-insensitive): 0 "Unknown", 1 SSE-era
 * cores (Prescott, Core2, Nehalem, Opteron...), 2 AVX (Sandybridge, Bulldozer...), 3 AVX2
 * (Haswell, Zen, Excavator), 4 SkylakeX, 5 Cooperlake, 6 SapphireRapids; -1 for a name
 * lmlab does not know. */
int blas_select_core_rank(const char *core);

/* The decision, pure: given what the CPU supports, the core OpenBLAS chose and the user's
 * OPENBLAS_CORETYPE (NULL or "" when unset), fills `out`. Overrides only when OpenBLAS's
 * core ranks strictly below the best the CPU supports, the user set nothing, and the
 * chosen name is one lmlab knows. */
void blas_select_decide(const BlasCpu *cpu, const char *chosen, const char *user_coretype,
                        BlasChoice *out);

/* For the process's start (app/main.c): decides for the running CPU and the core OpenBLAS
 * chose (or the test hook's name, BLAS_SELECT_TEST_ENV), stores that name in *chosen, and
 * returns 1 when the process should be re-executed with OPENBLAS_CORETYPE=out->core: an
 * override is due, the user set no OPENBLAS_CORETYPE, this is not already the re-executed
 * process (BLAS_SELECT_MARK_ENV unset) and the library is a DYNAMIC_ARCH build (others
 * ignore the variable). 0 otherwise. */
int blas_select_plan(BlasChoice *out, const char **chosen);

/* Address space one OpenBLAS thread needs beyond the first, with room to spare: its
 * 32 MiB work buffer and the 64 MiB malloc arena glibc reserves for a new thread. */
#define BLAS_SELECT_AS_PER_THREAD (256.0 * 1024 * 1024)
#define BLAS_SELECT_AS_BASE (512.0 * 1024 * 1024)

/* The OpenBLAS thread count an address-space limit (`ulimit -v`, RLIMIT_AS) of
 * limit_bytes leaves room for on a machine of `cores`: 1 when the limit is finite
 * (limit_bytes > 0) and below BLAS_SELECT_AS_BASE + BLAS_SELECT_AS_PER_THREAD x cores,
 * else 0 (no cap). Under such a limit OpenBLAS's worker threads, started by its load-time
 * constructor, cannot map their buffers and spin forever, and exit() waits for them:
 * `ulimit -v 120000; lmlab --help` never returned. Pure, for tests. */
int blas_select_thread_cap_for(double limit_bytes, int cores);

/* blas_select_thread_cap_for of this process's RLIMIT_AS and the machine's cores. */
int blas_select_thread_cap(void);

/* Writes "Intel family 6 model 207: AVX2 FMA AVX-512 (F CD BW DQ VL) BF16" into buf
 * (truncated to cap); returns buf. */
const char *blas_select_cpu_text(const BlasCpu *cpu, char *buf, size_t cap);

/* One line on the kernels this process runs and why, for `bench`, `show machine` and run
 * records: "SkylakeX kernels (chosen by lmlab over OpenBLAS's Haswell: ...)",
 * "Haswell kernels (OpenBLAS's choice, the best for this CPU)", "... (OPENBLAS_CORETYPE
 * set by the user; ...)". Reads the environment and the loaded library. Returns buf. */
const char *blas_select_describe(char *buf, size_t cap);

/* The short form for run records (sysinfo_describe): "chosen by lmlab: OpenBLAS chose
 * Haswell, weaker than this CPU supports", "OPENBLAS_CORETYPE=X set by the user", or ""
 * when OpenBLAS's own choice runs. Returns buf. */
const char *blas_select_brief(char *buf, size_t cap);

#endif
