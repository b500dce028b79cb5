/* attention_flash.h — the fused causal attention of one (batch, head): softmax(alpha q k^T
 * + causal mask) v forward and its backward without a T x T matrix (FlashAttention-2,
 * Dao 2023, arXiv:2307.08691): the forward runs tiles of FLASH_BR query rows by FLASH_BC
 * keys with an online softmax (running row max and sum) and keeps only each row's
 * log-sum-exp; the backward recomputes the weights from it, one panel of FLASH_BC keys
 * against all later query rows at a time (work O(T FLASH_BC)). Operands are strided
 * slices of the packed qkv buffer. The forward's tile products are hand-vectorised (GCC
 * vector extensions, compiled per CPU level and bound at load: CPU_CLONES, cpu.h); the
 * backward's panels are cblas_sgemm calls, which measured faster there.
 * Optional dropout on the attention weights with a counter-based mask (dropout.h's
 * drop_uniform keyed by seed, stream, row and column), so the backward recomputes it.
 * Not the projections (attention.c) and not multi-threaded: callers split (batch, head)
 * over threads (the replicas split the batch). Kernels never allocate, print or fail. */
#ifndef LM_ATTENTION_FLASH_H
#define LM_ATTENTION_FLASH_H

#include <stddef.h>
#include <stdint.h>

#define FLASH_BR 32   /* query rows per tile */
#define FLASH_BC 64   /* keys per tile */

typedef struct {
    int T, hd;        /* sequence length, head width */
    float alpha;      /* score scale, 1/sqrt(hd) */
    float p;          /* dropout probability on the weights, 0 = none */
    uint64_t seed;    /* dropout mask key (with stream) */
    uint64_t stream;  /* which (batch, head) this is, for the mask */
} FlashHead;

/* Floats of the work areas attention_flash_forward (T, hd) and _backward (T) need. */
size_t attention_flash_forward_floats(int T, int hd);
size_t attention_flash_backward_floats(int T);

/* o[i] = sum_{j<=i} softmax_j(alpha q_i.k_j) v_j (with the dropout mask when fh->p > 0,
 * kept weights scaled by 1/(1-p)) for i < T; lse[i] = log sum_{j<=i} exp(alpha q_i.k_j).
 * q, k, v rows have stride ldq, o rows stride ldo. */
void attention_flash_forward(const FlashHead *fh,
                             float *o, int ldo,   /* (T, hd) strided */
                             float *lse,          /* (T) */
                             float *work,         /* attention_flash_forward_floats */
                             const float *q, const float *k, const float *v, int ldq);

/* Gradients of sum(o * dO) through the forward that produced o and lse, ADDED into dq,
 * dk, dv (rows of stride lddq). */
void attention_flash_backward(const FlashHead *fh,
                              float *dq, float *dk, float *dv, int lddq,
                              float *work,        /* attention_flash_backward_floats */
                              const float *dO, const float *o, int ldo,
                              const float *lse,
                              const float *q, const float *k, const float *v, int ldq);

/* 1 when the forward with fh kept weight (i, j), j <= i, 0 when dropout zeroed it. */
int attention_flash_kept(const FlashHead *fh, int i, int j);

#endif
