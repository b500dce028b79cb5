/* decoder_loss.h — how every family ends: the decoder (a linear layer to V logits) and
 * the cross-entropy, over row chunks, so that the logits of a large vocabulary never sit
 * in memory whole (at most DECODER_LOGIT_BUDGET floats at once). When a training
 * forward's logits fit whole, its gradient (softmax - onehot) stays in them and the
 * family's backward runs the decoder's backward once it knows the scale; when they do
 * not, each chunk's decoder backward runs right after its loss (fused), into unscaled
 * gradients (dw, db: only then allocated) that the backward scales. Either way
 * decoder_loss_backward finishes it. Not responsible for the layers under the decoder,
 * nor for allocating: the family gives it room in its own slab (decoder_loss_layout). */
#ifndef LM_DECODER_LOSS_H
#define LM_DECODER_LOSS_H

#include <stddef.h>

#define DECODER_LOGIT_BUDGET (16L << 20) /* floats of logits kept at once */

typedef enum {
    DECODER_IDLE,       /* no training forward waiting for its backward */
    DECODER_DEFERRED,   /* its logits fit whole: they hold (softmax - onehot) */
    DECODER_FUSED       /* chunked: dx, dw, db hold its unscaled gradients */
} DecoderPending;

typedef struct {
    float *logits;   /* (rows, V): one chunk of logits, or all of them */
    size_t rows;     /* rows of logits at once (decoder_loss_layout) */
    float *dw, *db;  /* (V, C_in), (V): a chunked training forward's decoder gradients,
                        unscaled; NULL where never chunked (db also without a bias) */
    int has_logits;  /* the logits of the last forward without targets are all there */
    DecoderPending pending;   /* the last training forward, for the backward */
    const float *x, *w;
    int N, C_in, V;
    double *elem_s;  /* NULL, or where the seconds of everything but the products go (the
                        softmax, the loss, zeroing and scaling the gradients): bench's
                        "softmax+loss", so that the decoder's share is its products' */
} DecoderLoss;

/* Lays out dl's buffers for forwards of up to N rows at `at` (a family's slab; NULL: only
 * count), each rounded up to 16 floats as the families' layouts are: the logits chunk,
 * and for a model that trains (train) and may be chunked, dw and db (with_bias). Sets
 * dl->rows: N when N x V fits the budget, else as many as fit (at least 1). Returns the
 * floats taken. */
size_t decoder_loss_layout(DecoderLoss *dl, float *at, size_t N, int V, int C_in,
                           int with_bias, int train);

/* The logits the last forward without targets kept (all N rows), or NULL. */
const float *decoder_loss_logits(const DecoderLoss *dl);

/* The targets a loss counts: those >= 0 (-1: not counted). The *count of every model's
 * forward (model.h), which a caller can know before the forward. */
long decoder_loss_count(const int *targets, size_t N);

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
