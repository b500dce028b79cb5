/* decoder_loss.h — how every family ends: the decoder (a linear layer to V logits) and
 * the cross-entropy, over row chunks, so that the logits of a large vocabulary never sit
 * in memory whole (at most DECODER_LOGIT_BUDGET floats at once). When a training
 * forward's logits fit whole, its gradient (softmax - onehot) stays in them and the
 * family's backward runs the decoder's backward once it knows the scale; when they do
 * not, each chunk's decoder backward runs right after its loss (fused), into unscaled
 * gradients (dw, db: only then allocated) that the backward scales. Either way
 * decoder_loss_backward finishes it. Not responsible for the layers under the decoder,
 * nor for allocating: the family carves the buffers from its own slab
 * (decoder_loss_rows, decoder_loss_dw_floats, decoder_loss_db_floats). */
#ifndef LM_DECODER_LOSS_H
#define LM_DECODER_LOSS_H

#include <stddef.h>

#define DECODER_LOGIT_BUDGET (16L << 20) /* floats of logits kept at once */

typedef struct {
    float *logits;   /* (rows, V): one chunk of logits, or all of them */
    size_t rows;     /* rows of logits at once (decoder_loss_rows) */
    float *dw, *db;  /* (V, C_in), (V): a chunked training forward's decoder gradients,
                        unscaled; db NULL when the decoder has no bias. Needed (and
                        allocated) only where rows < the rows allocated for */
    int has_logits;  /* the logits of the last forward without targets are all there */
    /* the last training forward, for the backward: kept whole (deferred) or fused */
    int deferred, fused;
    const float *x, *w;
    int N, C_in, V;
} DecoderLoss;

/* Rows of logits a DecoderLoss keeps for forwards of up to N rows over V classes: N when
 * N x V fits the budget, else as many as fit (at least 1). */
size_t decoder_loss_rows(size_t N, int V);

/* Floats of dw and db (with_bias) for forwards of up to N rows: 0 when their logits fit
 * whole (the backward then needs none), else V x C_in and V. */
size_t decoder_loss_dw_floats(size_t N, int V, int C_in);
size_t decoder_loss_db_floats(size_t N, int V, int with_bias);

/* The decoder over N rows of x (N, C_in) with weights w (V, C_in) and bias b (V or NULL).
 * Without targets: keeps the logits of all N rows for the caller (dl->logits; LM_ENOMEM
 * when they do not fit dl->rows). With targets (-1: not counted): *loss_sum (the sum of
 * the counted rows' losses) and *count. Training as well: the gradient of loss_sum is
 * kept for decoder_loss_backward (x and w must stay as they are until then; dx is
 * written here when the rows are chunked, there otherwise). LM_OK. */
int decoder_loss_forward(DecoderLoss *dl, int training, const float *x, const float *w,
                         const float *b, const int *targets, int N, int C_in, int V,
                         float *dx, double *loss_sum, long *count);

/* The last training forward's gradients times scale: dx (N, C_in, the forward's) written,
 * and the decoder's weight and bias gradients ADDED into gw (V, C_in) and gb (V; skipped
 * when NULL). Once per training forward. */
void decoder_loss_backward(DecoderLoss *dl, float scale, float *dx, float *gw, float *gb);

#endif
