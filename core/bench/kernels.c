/* kernels.c — what code runs each kernel family here (see kernels.h): asks OpenBLAS
 * (sysinfo_blas_kernels), gemm_bf16 and cpu.h; chooses nothing itself. */
#include "kernels.h"

#include "cpu.h"
#include "gemm_bf16.h"
#include "sysinfo.h"

#include <stdio.h>

#define KERNEL_FAMILY_NAME(id, name, what) [id] = name,
static const char *const family_name[KERNEL_N_FAMILIES] = {KERNEL_FAMILIES(KERNEL_FAMILY_NAME)};

const char *kernels_family_name(KernelFamily f)
{
    return f >= 0 && f < KERNEL_N_FAMILIES ? family_name[f] : NULL;
}

const char *kernels_chosen(KernelFamily f, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    switch (f) {
    case KERNEL_SGEMM:
        return sysinfo_blas_kernels(buf, cap);
    case KERNEL_BF16: {
        GemmBf16Kernel k = gemm_bf16_select_kernel();
        const char *note = gemm_bf16_kernel_note();
        snprintf(buf, cap, "%s%s%s",
                 k == GEMM_BF16_AMX ? "amx-bf16 (tdpbf16ps tiles)"
                 : k == GEMM_BF16_AVX512 ? "avx512-bf16 (vdpbf16ps)"
                 : k == GEMM_BF16_EMULATED ? "emulated (test hook; the C emulation of vdpbf16ps)"
                                           : "none (no AVX512-BF16: precision=bf16 is refused)",
                 *note ? "; " : "", note);
        return buf;
    }
    case KERNEL_ATTENTION:
    case KERNEL_ELEMENTWISE:
    case KERNEL_OPTIMIZER:
        snprintf(buf, cap, "%s", cpu_level_text(cpu_level()));
        return buf;
    default:
        snprintf(buf, cap, "unknown");
        return buf;
    }
}
