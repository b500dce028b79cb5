/* activation.c — ReLU, GELU (exact erf form) and residual adds (see activation.h).
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.GELU.html
 * GELU calls erff/expf from libm, which gcc does not vectorise without -ffast-math; it
 * is a small share of a layer's time next to the matrix products. Not an autodiff
 * system: the caller keeps whatever each backward needs (relu: out, gelu: inp). */
#include "activation.h"

#include <math.h>

#define GELU_INV_SQRT2 0.70710678118654752440f
#define GELU_INV_SQRT_2PI 0.39894228040143267794f

void relu_forward(float *out, const float *inp, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float *dinp, const float *dout, const float *out, long n)
{
    for (long i = 0; i < n; i++)
        dinp[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

void gelu_forward(float *out, const float *inp, long n)
{
    for (long i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + erff(x * GELU_INV_SQRT2));
    }
}

void gelu_backward(float *dinp, const float *dout, const float *inp, long n)
{
    for (long i = 0; i < n; i++) {
        float x = inp[i];
        float cdf = 0.5f * (1.0f + erff(x * GELU_INV_SQRT2));
        float pdf = GELU_INV_SQRT_2PI * expf(-0.5f * x * x);
        dinp[i] += dout[i] * (cdf + x * pdf);
    }
}

void residual_forward(float *out, const float *a, const float *b, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void add_inplace(float *acc, const float *x, long n)
{
    for (long i = 0; i < n; i++)
        acc[i] += x[i];
}
