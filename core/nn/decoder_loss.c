/* decoder_loss.c — the decoder and the cross-entropy over row chunks (decoder_loss.h). */
#include "decoder_loss.h"

#include "cpu.h"
#include "crossentropy.h"
#include "err.h"
#include "linear.h"
#include "sysinfo.h"

#include <string.h>

/* Rows of logits kept at once for forwards of up to N rows. */
static size_t decoder_loss_rows(size_t N, int V)
{
    if (N * (size_t)V <= (size_t)DECODER_LOGIT_BUDGET)
        return N;
    return (size_t)(DECODER_LOGIT_BUDGET / V) + 1;
}

static size_t r16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

size_t decoder_loss_layout(DecoderLoss *dl, float *at, size_t N, int V, int C_in,
                           int with_bias, int train)
{
    dl->rows = decoder_loss_rows(N, V);
    size_t off = r16(dl->rows * (size_t)V);
    int grads = train && dl->rows < N;   /* only a chunked forward fuses its backward */
    if (at) {
        dl->logits = at;
        dl->dw = grads ? at + off : NULL;
        dl->db = grads && with_bias ? at + off + r16((size_t)V * C_in) : NULL;
    }
    if (grads)
        off += r16((size_t)V * C_in) + (with_bias ? r16((size_t)V) : 0);
    return off;
}

/* The clock when the elementwise work is timed (dl->elem_s), else 0. */
static double elem_begin(const DecoderLoss *dl)
{
    return dl->elem_s ? sysinfo_now() : 0;
}

static void elem_end(const DecoderLoss *dl, double t0)
{
    if (dl->elem_s)
        *dl->elem_s += sysinfo_now() - t0;
}

const float *decoder_loss_logits(const DecoderLoss *dl)
{
    return dl->has_logits ? dl->logits : NULL;
}

long decoder_loss_count(const int *targets, size_t N)
{
    long cnt = 0;
    for (size_t i = 0; i < N; i++)
        cnt += targets[i] >= 0;
    return cnt;
}

int decoder_loss_forward(DecoderLoss *dl, int training, const float *x, const float *w,
                         const float *b, const int *targets, int N, int C_in, int V,
                         float *dx, double *loss_sum, long *count)
{
    dl->has_logits = 0;
    dl->pending = DECODER_IDLE;
    if (!targets) {
        if (dl->rows < (size_t)N)
            return LM_ENOMEM;
        linear_forward(dl->logits, x, w, b, N, C_in, V);
        dl->has_logits = 1;
        return LM_OK;
    }
    double sum = 0;
    long cnt = decoder_loss_count(targets, (size_t)N);
    if (training) {
        dl->x = x;
        dl->w = w;
        dl->N = N;
        dl->C_in = C_in;
        dl->V = V;
        dl->pending = (size_t)N <= dl->rows ? DECODER_DEFERRED : DECODER_FUSED;
    }
    double t0 = elem_begin(dl);
    if (dl->pending == DECODER_FUSED) {
        memset(dx, 0, (size_t)N * C_in * sizeof(float));
        memset(dl->dw, 0, (size_t)V * C_in * sizeof(float));
        if (b)
            memset(dl->db, 0, (size_t)V * sizeof(float));
    }
    elem_end(dl, t0);
    for (int r0 = 0; r0 < N; r0 += (int)dl->rows) {
        int R = N - r0 < (int)dl->rows ? N - r0 : (int)dl->rows;
        const float *xr = x + (size_t)r0 * C_in;
        linear_forward(dl->logits, xr, w, b, R, C_in, V);
        t0 = elem_begin(dl);
        if (!training)
            sum += crossentropy_forward(NULL, dl->logits, targets + r0, R, V);
        else   /* the logits become (softmax - onehot) */
            sum += crossentropy_forward_backward(dl->logits, dl->logits, targets + r0, R, V,
                                                 1.0f);
        elem_end(dl, t0);
        if (!training)
            continue;
        if (dl->pending == DECODER_FUSED)
            linear_backward(dx + (size_t)r0 * C_in, dl->dw, b ? dl->db : NULL, dl->logits, xr,
                            w, R, C_in, V);
    }
    if (loss_sum)
        *loss_sum = sum;
    if (count)
        *count = cnt;
    return LM_OK;
}

CPU_CLONES
static void scale_add(float *restrict acc, const float *restrict x, float s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc[i] += s * x[i];
}

void decoder_loss_backward(DecoderLoss *dl, float scale, float *dx, float *gw, float *gb)
{
    size_t n = (size_t)dl->N * dl->C_in;
    double t0 = elem_begin(dl);
    if (dl->pending == DECODER_DEFERRED) {
        if (scale != 1.0f)
            for (size_t i = 0; i < (size_t)dl->N * dl->V; i++)
                dl->logits[i] *= scale;
        memset(dx, 0, n * sizeof(float));
        elem_end(dl, t0);
        linear_backward(dx, gw, gb, dl->logits, dl->x, dl->w, dl->N, dl->C_in, dl->V);
        t0 = elem_begin(dl);
    } else if (dl->pending == DECODER_FUSED) {
        for (size_t i = 0; i < n; i++)
            dx[i] *= scale;
        scale_add(gw, dl->dw, scale, (size_t)dl->V * dl->C_in);
        if (gb && dl->db)
            scale_add(gb, dl->db, scale, (size_t)dl->V);
    }
    elem_end(dl, t0);
    dl->pending = DECODER_IDLE;
}
