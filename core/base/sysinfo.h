/* sysinfo.h — what the machine offers and what the process uses: cores, memory (from
 * /proc/meminfo), resident set size (from /proc/self/status), the OpenBLAS build and
 * thread count, and clocks. Linux only. Not a profiler and not a monitor thread: each
 * call reads the current value once. */
#ifndef LM_SYSINFO_H
#define LM_SYSINFO_H

#include <stddef.h>

/* CPUs this process may run on (its affinity mask), at least 1. */
int sysinfo_cores(void);

/* MemTotal / MemAvailable from /proc/meminfo, in bytes; 0 when unreadable. */
double sysinfo_mem_total(void);
double sysinfo_mem_available(void);

/* Under an address-space limit (ulimit -v): the bytes this process may still map, less
 * SYSINFO_AS_RESERVE for what a training maps besides the model (OpenBLAS's 128 MiB work
 * buffer at the first product, a malloc arena per thread); OpenBLAS spins forever when
 * that buffer cannot be mapped, so a model is checked against this too. -1 when there is
 * no limit; 0 when nothing is left. */
double sysinfo_as_headroom(void);
#define SYSINFO_AS_RESERVE (192.0 * 1024 * 1024)

/* This process's resident set size now (VmRSS) and at its peak (VmHWM), in KiB, from
 * /proc/self/status; -1 when unreadable. */
long sysinfo_rss_kb(void);
long sysinfo_peak_rss_kb(void);

/* Writes openblas_get_config() and the thread count into buf ("OpenBLAS 0.3.21
 * NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64, 2 threads"), truncated
 * to cap bytes; returns buf. */
const char *sysinfo_blas(char *buf, size_t cap);

/* The BLAS kernel family the numbers depend on: openblas_get_config()'s version and core
 * without build flags or MAX_THREADS ("OpenBLAS 0.3.21 Cooperlake"); returns buf. Two
 * families may round a product differently; one family gives the same bits every time. */
const char *sysinfo_blas_kernels(char *buf, size_t cap);

/* Sets OpenBLAS's thread count; n <= 0 means one per core (sysinfo_cores()). */
void sysinfo_set_threads(int n);

/* One line for logs and the dashboard: "2 cores, 24.0 GiB, OpenBLAS 0.3.21 Haswell
 * MAX_THREADS=64" (OpenBLAS build flags such as DYNAMIC_ARCH left out), then, when the
 * kernels are not OpenBLAS's own choice, who chose them and why (blas_select_brief: "(chosen
 * by lmlab: OpenBLAS chose Haswell, weaker than this CPU supports)"), and last the bf16
 * support (", bf16: avx512_bf16 no, amx_bf16 no"), truncated to cap bytes. */
void sysinfo_describe(char *buf, size_t cap);

/* What this CPU and OS offer for bf16 matrix products (each 0/1): avx512_bf16 (cpuid
 * 7.1 EAX bit 5 with AVX-512 F/BW/VL and XCR0 saving opmask and zmm state) and amx_bf16
 * (cpuid 7.0 EDX bits 22 and 24, XCR0 saving tile state; the process would still have to
 * ask the kernel for XTILEDATA). Never fails; 0 and 0 off x86. */
void sysinfo_bf16(int *avx512_bf16, int *amx_bf16);

/* The commit this binary was built from ("git describe --always --dirty" at build
 * time), "unknown" outside a git checkout. */
const char *sysinfo_git_rev(void);

/* Monotonic seconds (for durations) and Unix time in seconds (for timestamps). */
double sysinfo_now(void);
double sysinfo_wall(void);

#endif
