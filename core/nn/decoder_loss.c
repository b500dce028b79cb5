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

int decoder_loss_forward(DecoderLoss *dl, int training, const float *x, const float *w,
                         const float *b, const int *targets, int N, int C_in, int V,
                         float *dx, double *loss_sum, long *count)
{
    dl->has_logits = 0;
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
        memset(dx, 0, (size_t)N * C_in * sizeof(float));
        memset(dl->dw, 0, (size_t)V * C_in * sizeof(float));
        if (dl->db)
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
        sum += crossentropy_forward_backward(dl->logits, dl->logits, targets + r0, R, V, 1.0f);
        linear_backward(dx + (size_t)r0 * C_in, dl->dw, dl->db, dl->logits, xr, w, R, C_in, V);
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

void decoder_loss_backward(const DecoderLoss *dl, float scale, float *dx, size_t n,
                           float *gw, float *gb, int C_in, int V)
{
    for (size_t i = 0; i < n; i++)
        dx[i] *= scale;
    scale_add(gw, dl->dw, scale, (size_t)V * C_in);
    if (gb && dl->db)
        scale_add(gb, dl->db, scale, (size_t)V);
}
