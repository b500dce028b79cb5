/* dispatcher.h — the Dispatcher layer of arXiv 2105.03994 ("shift and sum" message passing
 * over log2(bptt) levels), forward, backward and a streaming decoder, in two variants:
 *   DISPATCHER_PAPER — the paper's layer: (hd,hd) projections and (levels,hd) sigmoid gates
 *                      shared by every head (fractalego/dispatcher, dispatcher_model.py);
 *   DISPATCHER_MH    — the reference repository's later multi-head layer: (d,d)
 *                      projections, a d -> levels*heads gate map, no sigmoid
 *                      (dispatcher_model_multihead.py).
 * Heads, as the reference forms them: the (B,T,d) buffer is viewed as (N=B*heads, T, hd)
 * WITHOUT a transpose, so head h of batch b is the contiguous block h of that batch's T*d
 * floats and a head-sequence position is one hd-chunk (see tests/fixtures/README.md).
 * For one head sequence:
 *     V_0(t) = W_in x_t;  c_k(t) = act(w_k . x_t) * [t >= 2^k]
 *     V_{k+1}(t) = V_k(t) + c_k(t) V_k(t - 2^k)   (k = 0..levels-1, stop once 2^k > T)
 *     y_t = W_out V_levels(t)
 * Not a transformer block (no residual, norm or feed-forward here) and not a variant with
 * a conventional per-feature head split. */
#ifndef LM_DISPATCHER_H
#define LM_DISPATCHER_H

#include <stddef.h>
#include <stdint.h>

typedef enum { DISPATCHER_PAPER, DISPATCHER_MH } DispatcherKind;

typedef struct {
    DispatcherKind kind;
    int d, heads, levels;   /* d divisible by heads; levels = dispatcher_levels(bptt) */
    double *scan_s;         /* NULL, or where the seconds of the shift-and-sum (the gates'
                               activation and the levels, forward or backward, without the
                               products) are added: bench's stage split */
} DispatcherDims;

/* Parameter shapes (PyTorch names linear_in.weight, internal_attention.weight,
 * linear_out.weight):
 *   paper: w_in (hd,hd), w_gate (levels,hd),       w_out (hd,hd)
 *   mh:    w_in (d,d),   w_gate (levels*heads,d),  w_out (d,d)                          */

/* floor(log2(bptt)) for bptt >= 1 (0 for bptt < 1). */
int dispatcher_levels(int bptt);

/* Number of floats of each parameter tensor for these dims. */
size_t dispatcher_w_in_floats(const DispatcherDims *dd);
size_t dispatcher_w_gate_floats(const DispatcherDims *dd);

/* Levels the full forward applies for a head sequence of length T: those with 2^k <= T
 * (and k < levels), before any level dropout. */
int dispatcher_used_levels(const DispatcherDims *dd, int T);

/* Floats of the coefficients (B*heads,T,levels) one forward of (B,T) writes. */
size_t dispatcher_coeff_floats(const DispatcherDims *dd, int B, int T);

/* Floats the layer saves per forward of (B,T): the coefficients (B*heads,T,levels), the
 * level state V_0 and the last level state (each B*T*d), in that order. Backward
 * recomputes the states between, one head sequence at a time in its scratch (cheaper
 * than streaming every level's state through memory). */
size_t dispatcher_act_floats(const DispatcherDims *dd, int B, int T);

/* Floats of level states dispatcher_forward_infer needs for (B,T): one (B,T,d) state,
 * updated in place level by level, however many levels apply. */
size_t dispatcher_infer_floats(const DispatcherDims *dd, int B, int T);

/* Floats of scratch dispatcher_backward needs for (B,T): one (B,T,d) gradient buffer
 * (updated in place level by level), the gate gradients (B*heads,T,levels) and one head
 * sequence's recomputed level states ((used levels - 1) * T * d/heads). */
size_t dispatcher_scratch_floats(const DispatcherDims *dd, int B, int T);

/* Packed operands (matmul.h): a training forward in a bf16 scope (matmul_packs()) may keep
 * the last level state, and its input where nothing else reads it, as the bf16 packs the
 * backward's dw_out and dw_in/dw_gate products take, instead of fp32 rows: the same
 * bits, half the bytes, packed once while in cache. 1 when both packs fit the room of
 * the fp32 rows they replace ((B,T,d) floats each). */
int dispatcher_packs_fit(const DispatcherDims *dd, int B, int T);

/* Forward over x (B,T,d). skip (levels entries, may be NULL = none) drops whole levels:
 * skip[k] != 0 makes V_{k+1} = V_k (level dropout; the caller draws skip[], and the MH
 * variant's caller never skips level 0). act receives what backward needs and must hold
 * dispatcher_act_floats(dd,B,T) floats. out must not alias inp or act.
 * vrows NULL: act keeps the last level state's fp32 rows. Else (dispatcher_packs_fit, in
 * a bf16 scope) the rows go through vrows ((B,T,d) floats of the caller's; the backward's
 * scratch may serve) and act keeps their pack; and where inp_room is not NULL, inp's pack
 * is written there ((B,T,d) floats of room, not inp itself) for the backward, which then
 * never reads inp. Never fails. */
void dispatcher_forward(const DispatcherDims *dd,
                        float *out,                 /* (B,T,d) */
                        float *act,                 /* (dispatcher_act_floats) */
                        const float *inp,           /* (B,T,d) */
                        const float *w_in,          /* see parameter shapes above */
                        const float *w_gate,
                        const float *w_out,
                        const unsigned char *skip,  /* (levels) or NULL */
                        int B, int T, float *vrows, uint16_t *inp_room);

/* dispatcher_forward for a forward no backward follows (evaluation, sampling): the same
 * out and coefficients, bit for bit, as dispatcher_forward without level dropout, but
 * keeping one level state, updated in place. coef (dispatcher_coeff_floats)
 * and states (dispatcher_infer_floats) are separate, so a model can keep each layer's
 * coefficients while its layers share one states buffer. out must not alias inp, coef
 * or states. Never fails. */
void dispatcher_forward_infer(const DispatcherDims *dd,
                              float *out,           /* (B,T,d) */
                              float *coef,          /* (B*heads,T,levels) */
                              float *states,        /* (dispatcher_infer_floats) */
                              const float *inp,     /* (B,T,d) */
                              const float *w_in, const float *w_gate, const float *w_out,
                              int B, int T);

/* Gradients of sum(out * dout) through the last dispatcher_forward with the same act,
 * inp, weights and skip; ADDED into dinp and dw_*. scratch holds
 * dispatcher_scratch_floats(dd,B,T) floats. packed: that forward had vrows (act holds
 * the last level state's pack); inp_packed: its inp_room (inp is not read; may be NULL),
 * else NULL. Never fails. */
void dispatcher_backward(const DispatcherDims *dd,
                         float *dinp,                /* (B,T,d) */
                         float *dw_in,               /* like w_in */
                         float *dw_gate,             /* like w_gate */
                         float *dw_out,              /* like w_out */
                         float *scratch,             /* (dispatcher_scratch_floats) */
                         const float *dout,          /* (B,T,d) */
                         const float *act,           /* from dispatcher_forward */
                         const float *inp,           /* (B,T,d) */
                         const float *w_in,
                         const float *w_gate,
                         const float *w_out,
                         const unsigned char *skip,  /* (levels) or NULL, as in forward */
                         int B, int T, int packed, const uint16_t *inp_packed);

/* The coefficients of the last forward, (B*heads, T, levels): act(gate) x level mask,
 * what the fixtures call `coefficients` (all levels, including skipped ones). Points
 * into act. */
/* The gate of token j at level k in coefficients (heads, T, levels) of one sequence,
 * averaged over the token's heads: token j's H feature chunks are head-sequence
 * positions q = j*H + c of head q / T (the reshape without transpose). For displays. */
float dispatcher_token_gate(const float *coeff, int T, int heads, int levels, int j, int k);

const float *dispatcher_coeffs(const DispatcherDims *dd, const float *act, int B, int T);

/* Streaming decoder for one sequence, heads == 1 only (either kind). With heads > 1 the
 * head blocks are slices of the whole (T,d) buffer and move when T grows, so no streaming
 * cache exists: the caller must recompute the window with dispatcher_forward.
 * The cache keeps, per level k, a ring of the last 2^k states V_k (2^levels - 1 vectors
 * of d floats in all) plus scratch, so a token costs O(levels*d) for the mixing plus the
 * three projections, however long the text. Positions keep counting past bptt (no level
 * is dropped for length; only the level mask [t >= 2^k] applies), as the reference's
 * generation does. */
typedef struct DispatcherCache DispatcherCache;   /* heap object */

/* A reset cache, or NULL when out of memory or when dd->heads != 1. */
DispatcherCache *dispatcher_cache_create(const DispatcherDims *dd);
/* Releases the cache; NULL is a no-op. */
void dispatcher_cache_destroy(DispatcherCache *c);
/* Forgets the sequence (the next step must be t = 0). */
void dispatcher_cache_reset(DispatcherCache *c);

/* Feeds the token at position t (t = 0,1,2,... consecutively after a reset) and writes
 * its output; coeff (levels, may be NULL) receives its coefficients. For t < T <= bptt the
 * outputs equal dispatcher_forward over the first T tokens (no level dropout). */
void dispatcher_step(const DispatcherDims *dd, DispatcherCache *c,
                     float *out,          /* (d) */
                     float *coeff,        /* (levels) or NULL */
                     const float *inp,    /* (d) */
                     const float *w_in, const float *w_gate, const float *w_out,
                     int t);

#endif
