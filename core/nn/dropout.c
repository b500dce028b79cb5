/* dropout.c — inverted dropout (see dropout.h).
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.Dropout.html
 * One uniform draw per element from the caller's Rng, so a run is reproducible from its
 * seed. Not vectorised (the generator is sequential); not used at inference. */
#include "dropout.h"

#include <string.h>

void dropout_forward(float *out, float *mask, const float *inp, float p, long n, Rng *rng)
{
    if (p <= 0.0f) {
        if (out != inp)
            memmove(out, inp, (size_t)n * sizeof *out);
        if (mask)
            for (long i = 0; i < n; i++)
                mask[i] = 1.0f;
        return;
    }
    float keep = p >= 1.0f ? 0.0f : 1.0f / (1.0f - p);
    for (long i = 0; i < n; i++) {
        float m = rng_uniform(rng) < p ? 0.0f : keep;
        mask[i] = m;
        out[i] = inp[i] * m;
    }
}

void dropout_backward(float *dinp, const float *dout, const float *mask, long n)
{
    for (long i = 0; i < n; i++)
        dinp[i] += dout[i] * mask[i];
}
