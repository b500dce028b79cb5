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

#include "gemm_bf16.h"

#include <cblas.h>
#include <stddef.h>
#include <stdint.h>

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

/* Packed operands: an activation that only products read again (a backward's
 * dw = dout^T . x) can be kept as the bf16 pack those products take, made once while it
 * is in cache, at half its fp32 size, instead of fp32 rows packed again in the backward.
 * The products give the same bits as matmul on the fp32 rows in the same scope. */
/* 1 when the calling thread is in a bf16 scope and has its product scratch (allocated
 * here): the only state in which a model keeps packed operands. Never with
 * MATMUL_PACKS_ENV=0 (a test hook: the packs must not change a bit of training; "fp32"
 * makes matmul_packed take its path for a thread with no scratch). */
#define MATMUL_PACKS_ENV "LMLAB_BF16_PACKS"
int matmul_packs(void);
/* bf16 elements of the pack of a K x N op(B). */
size_t matmul_packed_elems(int K, int N);
/* The pack of a whole op(B) (K x N) at data (matmul_packed_elems), for matmul_pack_b_rows
 * to fill or matmul_packed to read. */
GemmBf16PackedB matmul_packed_b(uint16_t *data, int K, int N);
/* pk = op(B) (K x N; tb: B stored N x K) packed into data (matmul_packed_elems). */
void matmul_pack_b(GemmBf16PackedB *pk, uint16_t *data, CBLAS_TRANSPOSE tb, int K, int N,
                   const float *B, int ldb);
/* Rows k0 .. k0 + kc - 1 of pk's row-major op(B) (rows: row k0, ldb apart; k0 even) into
 * pk (matmul_packed_b): the same pack as matmul_pack_b, a block of rows at a time. */
void matmul_pack_b_rows(GemmBf16PackedB *pk, int k0, int kc, const float *rows, int ldb);
/* Rows k0 .. k0 + kc - 1 (k0 even) of a pack, as a pack of their own (pk's storage). */
GemmBf16PackedB matmul_packed_rows(const GemmBf16PackedB *pk, int k0, int kc);
/* matmul with op(B) given as a pack (pb->K x pb->N): C (M x pb->N) = alpha op(A) op(B) +
 * beta C, op(A) M x pb->K. In bf16 (gemm_bf16) on any thread that can have its scratch;
 * where it cannot (memory), by plain loops on the same bf16 values with fp32 sums (other
 * bits, slowly), so it never fails. */
void matmul_packed(CBLAS_TRANSPOSE ta, int M, float alpha, const float *A, int lda,
                   const GemmBf16PackedB *pb, float beta, float *C, int ldc);

#endif
