/* activation.c — ReLU, GELU (exact erf form) and residual adds (see activation.h).
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.GELU.html
 * GELU: libm's erff/expf are calls gcc does not vectorise without -ffast-math (4x slower
 * than torch here), so erf uses the formula torch's own vectorised CPU kernel uses
 * (Abramowitz & Stegun 7.1.26: erf(z) = 1 - t r(t) exp(-z^2), t = 1/(1+p|z|), absolute
 * error <= 1.5e-7) with a branch-free polynomial exp, and loops vectorise. The backward
 * shares the one exp(-x^2/2) between Phi and phi. Not an autodiff system: the caller
 * keeps whatever each backward needs (relu: out, gelu: inp). */
#include "activation.h"

#include "cpu.h"
#include "fastmath.h"

#include <stdint.h>

#define GELU_INV_SQRT2 0.70710678118654752440f
#define GELU_INV_SQRT_2PI 0.39894228040143267794f

/* erf(z) given e = exp(-z^2) (A&S 7.1.26, the coefficients of torch's Vectorized erf). */
static inline float act_erf(float z, float e)
{
    float a = z < 0.0f ? -z : z;
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float r = 1.061405429f;
    r = r * t - 1.453152027f;
    r = r * t + 1.421413741f;
    r = r * t - 0.284496736f;
    r = r * t + 0.254829592f;
    float y = 1.0f - r * t * e;
    return z < 0.0f ? -y : y;
}

CPU_CLONES
void relu_forward(float *out, const float *inp, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

CPU_CLONES
void relu_backward(float *dinp, const float *dout, const float *out, long n)
{
    for (long i = 0; i < n; i++)
        dinp[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

CPU_CLONES
void gelu_forward(float *out, const float *inp, long n)
{
    for (long i = 0; i < n; i++) {
        float x = inp[i];
        float z = x * GELU_INV_SQRT2;
        out[i] = 0.5f * x * (1.0f + act_erf(z, fast_expf(-z * z)));
    }
}

/* d GELU / dx = Phi(x) + x phi(x), sharing one exp(-x^2/2) between them. */
static inline float gelu_grad(float x)
{
    float e = fast_expf(-0.5f * x * x);   /* exp(-z^2) with z = x / sqrt 2 */
    float cdf = 0.5f * (1.0f + act_erf(x * GELU_INV_SQRT2, e));
    float pdf = GELU_INV_SQRT_2PI * e;
    return cdf + x * pdf;
}

CPU_CLONES
void gelu_backward(float *dinp, const float *dout, const float *inp, long n)
{
    for (long i = 0; i < n; i++)
        dinp[i] += dout[i] * gelu_grad(inp[i]);
}

CPU_CLONES
void gelu_grad_mul(float *d, const float *x, long n)
{
    for (long i = 0; i < n; i++)
        d[i] *= gelu_grad(x[i]);
}

CPU_CLONES
void residual_forward(float *out, const float *a, const float *b, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

CPU_CLONES
void add_inplace(float *acc, const float *x, long n)
{
    for (long i = 0; i < n; i++)
        acc[i] += x[i];
}
