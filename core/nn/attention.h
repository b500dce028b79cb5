/* attention.h — causal multi-head self-attention, the MSA baseline's mixer, matching
 * PyTorch's nn.MultiheadAttention(d, heads) called as mha(x, x, x, attn_mask=causal -inf)
 * (pytorch.org/docs/1.13/generated/torch.nn.MultiheadAttention.html): in_proj_weight
 * (3d,d) packs the q, k, v projections, heads are the conventional feature slices of
 * width hd = d/heads, scores are scaled by 1/sqrt(hd). Forward, backward, and a key/value
 * cache for incremental decoding. Optional dropout on the attention weights, as PyTorch
 * applies it (after the softmax, kept weights scaled by 1/(1-p)).
 * Not a transformer block (no residual, norm or feed-forward), no key padding masks, no
 * cross-attention. */
#ifndef LM_ATTENTION_H
#define LM_ATTENTION_H

#include <stddef.h>

#include "rng.h"

typedef struct {
    int d, heads;   /* d divisible by heads */
} AttentionDims;

/* Floats saved per forward of (B,T): qkv (B,T,3d), the head outputs before out_proj
 * (B,T,d), one log-sum-exp per (batch, head, row) (B*heads*T), one head's work area
 * (O(T d/heads), attention_flash.h) and the dropout p and seed. No (T,T) matrix. */
size_t attention_act_floats(const AttentionDims *ad, int B, int T);

/* Floats of scratch attention_backward needs: dqkv (B,T,3d), d(head outputs) (B,T,d)
 * and one head's backward work area (O(T d/heads)). */
size_t attention_scratch_floats(const AttentionDims *ad, int B, int T);

/* out = out_proj(softmax(q k^T / sqrt(hd) + causal mask) v) for x (B,T,d), without
 * dropout. act receives what backward needs (attention_act_floats). out must not alias
 * inp or act. Never fails. */
void attention_forward(const AttentionDims *ad,
                       float *out,          /* (B,T,d) */
                       float *act,          /* (attention_act_floats) */
                       const float *inp,    /* (B,T,d) */
                       const float *w_qkv,  /* (3d,d) in_proj_weight */
                       const float *b_qkv,  /* (3d) in_proj_bias */
                       const float *w_o,    /* (d,d) out_proj.weight */
                       const float *b_o,    /* (d) out_proj.bias */
                       int B, int T);

/* attention_forward with dropout p in [0,1) on the attention weights: each weight is
 * zeroed with probability p and the kept ones scaled by 1/(1-p). The mask is a pure
 * function of one seed drawn from rng (two rng_u32), the (batch, head) and the weight's
 * (row, column), so backward recomputes it. p == 0 (rng may then be NULL) is
 * attention_forward. */
void attention_forward_dropout(const AttentionDims *ad, float *out, float *act,
                               const float *inp, const float *w_qkv, const float *b_qkv,
                               const float *w_o, const float *b_o, float p, Rng *rng,
                               int B, int T);

/* Diagnostics: each head's attention entropy, in nats, of the last forward whose act this
 * is (the weights before dropout: softmax_j(q_i.k_j / sqrt(hd)), j <= i), ADDED over the
 * B*T rows into sum[h] (heads entries), recomputed in double from the saved q and k.
 * row: T doubles of scratch. Never fails; O(B heads T^2 hd / 2). */
void attention_entropy_sum(const AttentionDims *ad, const float *act, int B, int T,
                           double *sum, double *row);

/* 1 when the last forward into act (B,T) kept the attention weight (i, j), j <= i, of
 * batch row b and head h; 0 when its dropout zeroed it (always 1 without dropout). */
int attention_weight_kept(const AttentionDims *ad, const float *act, int B, int T, int b,
                          int h, int i, int j);

/* Gradients of sum(out * dout) through the last forward (with or without dropout) with
 * the same act, inp and weights; ADDED into dinp, dw_qkv, db_qkv, dw_o, db_o. scratch
 * holds attention_scratch_floats(ad,B,T) floats. Never fails. */
void attention_backward(const AttentionDims *ad,
                        float *dinp,          /* (B,T,d) */
                        float *dw_qkv,        /* (3d,d) */
                        float *db_qkv,        /* (3d) */
                        float *dw_o,          /* (d,d) */
                        float *db_o,          /* (d) */
                        float *scratch,       /* (attention_scratch_floats) */
                        const float *dout,    /* (B,T,d) */
                        const float *act,     /* from the forward */
                        const float *inp,     /* (B,T,d) */
                        const float *w_qkv,   /* (3d,d) */
                        const float *w_o,     /* (d,d) */
                        int B, int T);

/* Key/value cache of one sequence for up to max_T positions: 2*max_T*d floats plus
 * O(max_T + d) work space. Past max_T the caller must crop its context and restart. */
typedef struct AttentionCache AttentionCache;   /* heap object */

/* A cache for positions 0..max_T-1, or NULL when out of memory or max_T < 1. */
AttentionCache *attention_cache_create(const AttentionDims *ad, int max_T);
/* Releases the cache; NULL is a no-op. */
void attention_cache_destroy(AttentionCache *c);
/* Forgets the sequence (the next step must be t = 0). */
void attention_cache_reset(AttentionCache *c);

/* Feeds the token at position t and writes its output (d), which equals row t of
 * attention_forward over the first t+1 tokens. Positions go 0,1,2,...; t may also go
 * back (t <= the number of positions fed), which forgets positions >= t. LM_OK, or
 * LM_EARG when t >= max_T, t < 0 or t skips ahead (nothing is changed then). */
int attention_step(const AttentionDims *ad, AttentionCache *c,
                   float *out,          /* (d) */
                   const float *inp,    /* (d) */
                   const float *w_qkv, const float *b_qkv,
                   const float *w_o, const float *b_o, int t);

#endif
