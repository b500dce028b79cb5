/* kernels.h — which code runs each kernel family (kernels.def) in this process: the
 * OpenBLAS core for sgemm, the bf16 micro-kernel, and for the C kernels the CPU level
 * whose CPU_CLONES variants the loader bound (cpu.h). For `show machine` and `bench`.
 * Not a chooser: it reports what the mechanisms of cpu.h, gemm_bf16.h and
 * blas_select.h chose. */
#ifndef LM_KERNELS_H
#define LM_KERNELS_H

#include <stddef.h>

#include "kernels.def"

#define KERNEL_FAMILY_ID(id, name, what) id,
typedef enum { KERNEL_FAMILIES(KERNEL_FAMILY_ID) KERNEL_N_FAMILIES } KernelFamily;

/* The family's short name ("sgemm"), NULL out of range. */
const char *kernels_family_name(KernelFamily f);

/* What runs family f here, into buf (truncated to cap): "OpenBLAS 0.3.21 Cooperlake",
 * "avx512-bf16 (vdpbf16ps)", "x86-64-v4 (AVX-512 F/BW/CD/DQ/VL)"; returns buf. */
const char *kernels_chosen(KernelFamily f, char *buf, size_t cap);

#endif
