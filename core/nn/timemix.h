/* timemix.h — causal linear mixing across time, the core of seed 004's linear LM
 * (Malach 2023, "Auto-regressive next-token predictors are universal learners"):
 * y_i = sum_{j<=i} W[i,j] x_j + b[i] for positions i < T <= ctx, every column of x mixed
 * the same way. W (ctx,ctx) is read lower-triangular only (BLAS strmm), so inputs shorter
 * than ctx behave exactly as zero-padded ones. Layout: TIME-major (T, N), N = B*d columns.
 * Not the channel mixer or the LM (model_linear.c); not an allocator. */
#ifndef LM_TIMEMIX_H
#define LM_TIMEMIX_H

/* y = tril(W[:T,:T]) x + b[:T] (broadcast along each row). y must not alias x.
 * Never fails. */
void timemix_forward(float *y,        /* (T, N) */
                     const float *x,  /* (T, N) */
                     const float *w,  /* (ctx, ctx), lower triangle used */
                     const float *b,  /* (ctx) */
                     int T, int N, int ctx);

/* Gradients of timemix_forward, ADDED: dx += tril(W)^T dy; dw[i][j] += (dy x^T)[i][j]
 * for j <= i < T only (the upper triangle of dw is never written: the seed's gradient
 * mask); db[i] += row sums of dy. scratch: T*N + T*T floats. Never fails. */
void timemix_backward(float *dx,        /* (T, N) */
                      float *dw,        /* (ctx, ctx) */
                      float *db,        /* (ctx) */
                      float *scratch,   /* (T*N + T*T) */
                      const float *dy,  /* (T, N) */
                      const float *x,   /* (T, N) */
                      const float *w,   /* (ctx, ctx) */
                      int T, int N, int ctx);

/* Floats of scratch timemix_backward needs. */
long timemix_scratch_floats(int T, int N);

#endif
