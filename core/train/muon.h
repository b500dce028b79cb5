/* muon.h — Muon (Keller Jordan, 2024; kellerjordan.github.io/posts/muon, the reference
 * muon.py): momentum whose update of a hidden weight matrix is orthogonalised by five steps
 * of a quintic Newton–Schulz iteration before it is applied,
 *   buf = mu*buf + (1-mu)*G;  U = (1-mu)*G + mu*buf             (Nesterov)
 *   X = NS5(U / (||U||_F + 1e-7))   (on U^T when rows > cols: the small Gram matrix)
 *   p *= 1 - lr*wd;  p -= lr * sqrt(max(1, rows/cols)) * X
 * in fp32 with OpenBLAS for the products (muon.c says which). The iteration's coefficients
 * (3.4445, -4.7750, 2.0315) push every singular value into roughly [0.7, 1.2] rather than
 * to exactly 1; the reference found that good enough, and 5 steps suffice.
 * Not an optimizer by itself: optim.c owns the state (the momentum buffer is its `m`) and
 * gives every other tensor AdamW (kind OPTIM_MUON); this file is the matrix arithmetic,
 * which tensors qualify, and how whole matrices are shared out between worker threads. */
#ifndef LM_MUON_H
#define LM_MUON_H

#include "params.h"

#include <stddef.h>

#define MUON_MAX_WORKERS 64

typedef struct {
    int tensor;      /* index in the ParamSet */
    size_t offset;   /* into the slabs, in floats */
    int rows, cols;  /* as stored, row-major */
    double cost;     /* the Newton–Schulz multiply-adds, for sharing matrices out */
} MuonMatrix;

/* 1 when Muon updates this tensor: a 2-D hidden weight matrix. Not the embeddings and
 * output heads (encoder.weight, pos_embedding, decoder.weight, lm_head: their rows are
 * per-token vectors, not a linear map between hidden spaces), not the Dispatcher's gate
 * maps (internal_attention.weight, (levels, d): one row per sigmoid gate), nothing with
 * ndim != 2 (biases, norms). */
int muon_wants(const ParamInfo *p);

/* Floats of workspace muon_update / muon_orthogonalize need for a (rows, cols) matrix. */
size_t muon_work_floats(int rows, int cols);

/* out (rows, cols) = NS5(g / (||g||_F + 1e-7)), g unchanged (may not alias out).
 * work: muon_work_floats(rows, cols) floats. Never fails, never allocates. */
void muon_orthogonalize(float *out, const float *g, int rows, int cols, float *work);

/* One Muon step of the matrix p (rows, cols) with gradient g and momentum buffer buf
 * (both (rows, cols)): buf is updated, p shrinks by `shrink` (1 - lr*wd, or 1) and moves
 * by -lr * sqrt(max(1, rows/cols)) * NS5(U). work: muon_work_floats(rows, cols) floats.
 * Never fails, never allocates. */
void muon_update(float *p, const float *g, float *buf, int rows, int cols, float momentum,
                 float lr, float shrink, float *work);

/* Shares whole matrices out between n_workers (<= MUON_MAX_WORKERS) threads: called for
 * each matrix in turn, largest cost first, with load[0..n_workers) zeroed before the first,
 * it returns the least loaded worker (the lowest index on ties) and adds cost to its load.
 * Every worker replays the same sequence, so each matrix is updated by exactly one of
 * them, whole, with the same arithmetic whatever n_workers is. */
int muon_next_owner(double *load, int n_workers, double cost);

#endif
