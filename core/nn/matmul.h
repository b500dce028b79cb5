/* matmul.h — the one matrix product the nn layers call: cblas_sgemm (row-major) unless the
 * calling thread is inside a bf16 scope, then gemm_bf16 (bf16 inputs, fp32 accumulation).
 * precision=bf16 is per model: the trainer attaches the model's weight slab
 * (matmul_bf16_attach), model_forward/model_backward open a scope for that slab on the
 * thread that runs them (replicas included: they share the primary's slab), and every
 * product in the scope runs in bf16. A B operand that lies inside the attached slab is a
 * weight: its packed bf16 copy is cached and re-packed only after
 * matmul_weights_changed (the optimizer step), not per call.
 * Outside any scope the product is exactly cblas_sgemm (fp32 runs are bit-identical to
 * before). Not a BLAS and not a thread pool: each call runs on its caller's thread. */
#ifndef LM_MATMUL_H
#define LM_MATMUL_H

#include <cblas.h>
#include <stddef.h>

/* cblas_sgemm(CblasRowMajor, ta, tb, ...) or, in a bf16 scope, its bf16 version. Never
 * fails (if bf16 scratch memory cannot be had, the product runs in fp32). */
void matmul(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);

/* Marks the weight slab [slab, slab + n) as a bf16 model's. LM_OK; LM_EARG (message in
 * err) when this CPU has no bf16 kernel (gemm_bf16_select_kernel() is NONE); LM_ENOMEM
 * when the registry is full. Attaching an attached slab again only resets its cache. */
int matmul_bf16_attach(const float *slab, size_t n, char *err);
/* Forgets the slab and frees its cached packed weights. No thread may be in its scope.
 * Unknown or NULL slabs are ignored. */
void matmul_bf16_detach(const float *slab);
/* The slab's weights changed (an optimizer step, a load): cached packs are stale. Cheap;
 * a no-op for slabs never attached. Not concurrent with products in the slab's scope. */
void matmul_weights_changed(const float *slab);

/* Opens the calling thread's bf16 scope for `slab` when it is attached (else the thread
 * runs fp32 until the matching exit). Returns the previous scope, for matmul_scope_exit. */
const void *matmul_scope_enter(const float *slab);
void matmul_scope_exit(const void *prev);
/* 1 when the calling thread is in a bf16 scope. */
int matmul_bf16_active(void);

#endif
