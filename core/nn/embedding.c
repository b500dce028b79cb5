/* embedding.c — nn.Embedding lookup and gradient scatter (see embedding.h).
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.Embedding.html
 * Not sparse: the gradient is scattered into the dense (V, C) slab. */
#include "embedding.h"

#include "cpu.h"

#include <stddef.h>

CPU_CLONES
void embedding_forward(float *out, const int *tokens, const float *wte, float scale, int N,
                       int C)
{
    for (int n = 0; n < N; n++) {
        const float *row = wte + (size_t)tokens[n] * C;
        float *o = out + (size_t)n * C;
        for (int c = 0; c < C; c++)
            o[c] = row[c] * scale;
    }
}

CPU_CLONES
void embedding_backward(float *dwte, const float *dout, const int *tokens, float scale, int N,
                        int C)
{
    for (int n = 0; n < N; n++) {
        float *g = dwte + (size_t)tokens[n] * C;
        const float *d = dout + (size_t)n * C;
        for (int c = 0; c < C; c++)
            g[c] += d[c] * scale;
    }
}
