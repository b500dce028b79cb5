/* decoder_loss.c — the decoder and the cross-entropy over row chunks (decoder_loss.h). */
#include "decoder_loss.h"

#include "crossentropy.h"
#include "err.h"
#include "linear.h"

#include <string.h>

size_t decoder_loss_rows(size_t N, int V)
{
    if (N * (size_t)V <= (size_t)DECODER_LOGIT_BUDGET)
        return N;
    return (size_t)(DECODER_LOGIT_BUDGET / V) + 1;
}

size_t decoder_loss_dw_floats(size_t N, int V, int C_in)
{
    return decoder_loss_rows(N, V) < N ? (size_t)V * C_in : 0;
}

size_t decoder_loss_db_floats(size_t N, int V, int with_bias)
{
    return with_bias && decoder_loss_rows(N, V) < N ? (size_t)V : 0;
}

int decoder_loss_forward(DecoderLoss *dl, int training, const float *x, const float *w,
                         const float *b, const int *targets, int N, int C_in, int V,
                         float *dx, double *loss_sum, long *count)
{
    dl->has_logits = dl->deferred = dl->fused = 0;
    if (!targets) {
        if (dl->rows < (size_t)N)
            return LM_ENOMEM;
        linear_forward(dl->logits, x, w, b, N, C_in, V);
        dl->has_logits = 1;
        return LM_OK;
    }
    double sum = 0;
    long cnt = 0;
    for (int i = 0; i < N; i++)
        cnt += targets[i] >= 0;
    if (training) {
        dl->x = x;
        dl->w = w;
        dl->N = N;
        dl->C_in = C_in;
        dl->V = V;
        dl->deferred = (size_t)N <= dl->rows;
        dl->fused = !dl->deferred;
    }
    if (dl->fused) {
        memset(dx, 0, (size_t)N * C_in * sizeof(float));
        memset(dl->dw, 0, (size_t)V * C_in * sizeof(float));
        if (b)
            memset(dl->db, 0, (size_t)V * sizeof(float));
    }
    for (int r0 = 0; r0 < N; r0 += (int)dl->rows) {
        int R = N - r0 < (int)dl->rows ? N - r0 : (int)dl->rows;
        const float *xr = x + (size_t)r0 * C_in;
        linear_forward(dl->logits, xr, w, b, R, C_in, V);
        if (!training) {
            sum += crossentropy_forward(NULL, dl->logits, targets + r0, R, V);
            continue;
        }
        /* the logits become (softmax - onehot) */
        sum += crossentropy_forward_backward(dl->logits, dl->logits, targets + r0, R, V, 1.0f);
        if (dl->fused)
            linear_backward(dx + (size_t)r0 * C_in, dl->dw, b ? dl->db : NULL, dl->logits, xr,
                            w, R, C_in, V);
    }
    if (loss_sum)
        *loss_sum = sum;
    if (count)
        *count = cnt;
    return LM_OK;
}

static void scale_add(float *restrict acc, const float *restrict x, float s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc[i] += s * x[i];
}

void decoder_loss_backward(DecoderLoss *dl, float scale, float *dx, float *gw, float *gb)
{
    size_t n = (size_t)dl->N * dl->C_in;
    if (dl->deferred) {
        if (scale != 1.0f)
            for (size_t i = 0; i < (size_t)dl->N * dl->V; i++)
                dl->logits[i] *= scale;
        memset(dx, 0, n * sizeof(float));
        linear_backward(dx, gw, gb, dl->logits, dl->x, dl->w, dl->N, dl->C_in, dl->V);
    } else if (dl->fused) {
        for (size_t i = 0; i < n; i++)
            dx[i] *= scale;
        scale_add(gw, dl->dw, scale, (size_t)dl->V * dl->C_in);
        if (gb && dl->db)
            scale_add(gb, dl->db, scale, (size_t)dl->V);
    }
    dl->deferred = dl->fused = 0;
}
