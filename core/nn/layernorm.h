/* layernorm.h — nn.LayerNorm over the last dimension C (eps = 1e-5, biased variance),
 * forward and backward over N rows. Not RMSNorm, not batch norm. */
#ifndef LM_LAYERNORM_H
#define LM_LAYERNORM_H

#define LAYERNORM_EPS 1e-5f

/* out[n,:] = (inp[n,:] - mean_n) * rstd_n * w + b with rstd_n = 1/sqrt(var_n + eps).
 * mean and rstd (per row) are saved for layernorm_backward; either may be NULL at
 * inference. w and b may be NULL (no affine: w = 1, b = 0). out may alias inp.
 * Never fails. */
void layernorm_forward(float *out,       /* (N, C) */
                       float *mean,      /* (N) or NULL */
                       float *rstd,      /* (N) or NULL */
                       const float *inp, /* (N, C) */
                       const float *w,   /* (C) or NULL */
                       const float *b,   /* (C) or NULL */
                       int N, int C);

/* res = x + y (the residual add), then layernorm_forward(out, mean, rstd, res, w, b):
 * each row normalised while it is in L1, the same bits as residual_forward followed by
 * layernorm_forward. res must not alias x, y or out. Never fails. */
void layernorm_residual_forward(float *out,       /* (N, C) */
                                float *res,       /* (N, C): x + y */
                                float *mean,      /* (N) or NULL */
                                float *rstd,      /* (N) or NULL */
                                const float *x,   /* (N, C) */
                                const float *y,   /* (N, C) */
                                const float *w,   /* (C) or NULL */
                                const float *b,   /* (C) or NULL */
                                int N, int C);

/* Gradients of layernorm_forward, ADDED: dinp += ..., dw += sum_n dout * xhat,
 * db += sum_n dout. dw, db may be NULL (skipped); w may be NULL (as in forward).
 * mean and rstd are the ones the forward saved. dinp, dw and db must not alias dout, inp,
 * w or one another. Never fails. */
void layernorm_backward(float *dinp,       /* (N, C) */
                        float *dw,         /* (C) or NULL */
                        float *db,         /* (C) or NULL */
                        const float *dout, /* (N, C) */
                        const float *inp,  /* (N, C) */
                        const float *w,    /* (C) or NULL */
                        const float *mean, /* (N) */
                        const float *rstd, /* (N) */
                        int N, int C);

#endif
