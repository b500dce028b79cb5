/* linear.h — the fully connected layer y = x W^T + b in PyTorch nn.Linear layout
 * (w is (C_out, C_in)), forward and backward over batch-major rows, via cblas_sgemm.
 * Not a general matrix library and not an allocator: callers own every buffer. */
#ifndef LM_LINEAR_H
#define LM_LINEAR_H

#include <stddef.h>
#include <stdint.h>

/* out = inp . w^T + b for N rows. b may be NULL (no bias). out is overwritten and must
 * not alias inp or w. Never fails. */
/* y (rows) = alpha * w (rows, cols; row stride ldw) . x (cols) + beta * y; for one-row
 * products (incremental decoding), where BLAS set-up and threads cost more than the
 * arithmetic. beta = 0 ignores y's previous contents. */
void linear_matvec(float *y, const float *w, int ldw, const float *x, int rows, int cols,
                   float alpha, float beta);

void linear_forward(float *out,        /* (N, C_out) */
                    const float *inp,  /* (N, C_in) */
                    const float *w,    /* (C_out, C_in) */
                    const float *b,    /* (C_out) or NULL */
                    int N, int C_in, int C_out);

/* Gradients of linear_forward, ADDED into the outputs: dinp += dout . w,
 * dw += dout^T . inp, db += column sums of dout. Any of dinp, dw, db may be NULL
 * (that gradient is skipped). Never fails. */
void linear_backward(float *dinp,       /* (N, C_in) or NULL */
                     float *dw,         /* (C_out, C_in) or NULL */
                     float *db,         /* (C_out) or NULL */
                     const float *dout, /* (N, C_out) */
                     const float *inp,  /* (N, C_in) */
                     const float *w,    /* (C_out, C_in) */
                     int N, int C_in, int C_out);

/* The feed-forward's activation, applied by the fused calls below. */
typedef enum { LINEAR_RELU, LINEAR_GELU } LinearAct;

/* The feed-forward's first layer fused with its activation: pre = inp . w^T + b, out =
 * act(pre), with the bias and the activation applied in one pass over each row of the
 * product while it is in cache (instead of copying the bias into every row first and a
 * separate activation pass). Same values as linear_forward + relu_forward/gelu_forward.
 * pre and out must not alias inp or w, nor each other, except pre == out with
 * LINEAR_RELU: relu(x W^T + b) is then written once, in place (relu's backward reads only
 * out). Never fails. */
void linear_forward_act(float *pre,       /* (N, C_out) */
                        float *out,       /* (N, C_out) */
                        const float *inp, /* (N, C_in) */
                        const float *w,   /* (C_out, C_in) */
                        const float *b,   /* (C_out) or NULL */
                        int N, int C_in, int C_out, LinearAct act);

/* Backward of a linear layer whose input `inp` was an activation's output, through that
 * activation: dpre = (dout . w) * act'(pre), OVERWRITTEN (no zeroing needed first);
 * dw += dout^T . inp and db += column sums of dout as linear_backward. Replaces memset +
 * linear_backward + memset + relu_backward/gelu_backward. ReLU's derivative is read off
 * inp (pre may be NULL), GELU's off pre. dpre must not alias the others. Never fails. */
void linear_backward_act(float *dpre,       /* (N, C_in) */
                         float *dw,         /* (C_out, C_in) or NULL */
                         float *db,         /* (C_out) or NULL */
                         const float *dout, /* (N, C_out) */
                         const float *inp,  /* (N, C_in) the activation's output */
                         const float *pre,  /* (N, C_in) its input (GELU) or NULL */
                         const float *w,    /* (C_out, C_in) */
                         int N, int C_in, int C_out, LinearAct act);

/* The ReLU's sign bits of an (N, C) output: row n's bits are words n * W .. n * W + W - 1,
 * W = linear_relu_words(C), bit c % 32 of word c / 32 set where out[n, c] > 0. */
size_t linear_relu_words(int C);
/* linear_forward_act(out, out, inp, w, b, N, C_in, C_out, LINEAR_RELU) (b not NULL, N > 1),
 * also writing out's sign bits. Never fails. */
void linear_forward_relu_bits(float *out, uint32_t *bits, const float *inp, const float *w,
                              const float *b, int N, int C_in, int C_out);
/* dpre = (dout . w) masked by the bits (linear_forward_relu_bits), OVERWRITTEN: what
 * linear_backward_act computes for dpre from the ReLU's output. Never fails. */
void linear_backward_relu_bits(float *dpre, const float *dout, const uint32_t *bits,
                               const float *w, int N, int C_in, int C_out);
#endif
