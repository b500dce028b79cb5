/* decoder_loss.h — how every family ends: the decoder (a linear layer to V logits) and
 * the cross-entropy, over row chunks, so that the logits of a large vocabulary never sit
 * in memory whole (at most DECODER_LOGIT_BUDGET floats at once). A training forward fuses
 * the decoder's backward into it (softmax - onehot through the linear layer, chunk by
 * chunk), leaving unscaled gradients that the family's backward scales once it knows
 * the scale (decoder_loss_backward). Not responsible for the layers under the decoder,
 * nor for allocating: the family carves the buffers (decoder_loss_rows says how many
 * rows of logits) from its own slab. */
#ifndef LM_DECODER_LOSS_H
#define LM_DECODER_LOSS_H

#include <stddef.h>

#define DECODER_LOGIT_BUDGET (16L << 20) /* floats of logits kept at once */

typedef struct {
    float *logits;   /* (rows, V): one chunk of logits, or all of them */
    size_t rows;     /* rows of logits at once (decoder_loss_rows) */
    float *dw, *db;  /* (V, C_in), (V): the last training forward's decoder gradients,
                        unscaled; db NULL when the decoder has no bias. NULL when the model
                        never trains */
    int has_logits;  /* the logits of the last forward without targets are all there */
} DecoderLoss;

/* Rows of logits a DecoderLoss keeps for forwards of N rows over V classes: N when N x V
 * fits the budget, else as many as fit (at least 1). */
size_t decoder_loss_rows(size_t N, int V);

/* The decoder over N rows of x (N, C_in) with weights w (V, C_in) and bias b (V or NULL).
 * Without targets: keeps the logits of all N rows for the caller (dl->logits; LM_ENOMEM
 * when they do not fit dl->rows). With targets (-1: not counted): *loss_sum (the sum of
 * the counted rows' losses) and *count; training as well, dx (N, C_in) = d(loss_sum)/dx
 * (overwritten) and dl->dw, dl->db its weights' gradients (overwritten). LM_OK. */
int decoder_loss_forward(DecoderLoss *dl, int training, const float *x, const float *w,
                         const float *b, const int *targets, int N, int C_in, int V,
                         float *dx, double *loss_sum, long *count);

/* The last training forward's gradients times scale: dx (n floats) scaled in place, and
 * scale x dl->dw, dl->db ADDED into gw (V, C_in) and gb (V; skipped when NULL). */
void decoder_loss_backward(const DecoderLoss *dl, float scale, float *dx, size_t n,
                           float *gw, float *gb, int C_in, int V);

#endif
