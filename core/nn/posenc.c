/* posenc.c — sinusoidal and learned position encodings (see posenc.h).
 * Reference: PyTorch examples, word_language_model/model.py PositionalEncoding:
 *   div_term = torch.exp(torch.arange(0, C, 2).float() * (-math.log(10000.0) / C))
 *   pe[:, 0::2] = torch.sin(position * div_term); pe[:, 1::2] = torch.cos(...)
 * The python scalar is rounded to float32; the product 2i*k, the exp, the product
 * pos*div and sin/cos are all float32, as in torch. torch's CPU exp is SLEEF's
 * Sleef_expf8_u10, which differs from glibc expf by 1 ulp for 25 of the 256 div_i at
 * C=512; multiplied by t ~ 5000 that moved sin/cos by up to 2.4e-4. So div_i uses the
 * same SLEEF algorithm (posenc_expf, bit-identical to torch for every div_i checked).
 * Measured against torch 1.13 (AVX2 capability) for T=5000, C=512: max abs difference
 * 6.0e-8 over the whole table (1-ulp disagreements of SLEEF sinf/cosf with glibc in
 * ~26% of entries); the same 6.0e-8 for C = 200, 64 and 1024.
 * Not a learned-table initialiser (the model initialises its own parameters). */
#include "posenc.h"

#include "cpu.h"

#include <math.h>
#include <stddef.h>

/* SLEEF xexpf (u10, FMA build): rint range reduction with a two-part ln2, the degree-5
 * polynomial, 1 + s + s^2 u, then scaling by 2^q. fmaf keeps it exact without -mfma. */
static float posenc_expf(float d)
{
    float q = rintf(d * 1.442695040888963407359924681001892137426645954152985934f);
    float s = fmaf(q, -0.693145751953125f, d);
    s = fmaf(q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    return ldexpf(u, (int)q);
}

void posenc_sinusoid(float *table, int T, int C)
{
    float k = (float)(-log(10000.0) / C);
    for (int i = 0; 2 * i < C; i++) {
        float div = posenc_expf((float)(2 * i) * k);
        for (int t = 0; t < T; t++) {
            float a = (float)t * div;
            float *row = table + (size_t)t * C;
            row[2 * i] = sinf(a);
            if (2 * i + 1 < C)
                row[2 * i + 1] = cosf(a);
        }
    }
}

CPU_CLONES
void posenc_add(float *x, const float *table, int B, int T, int C, int t0)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float *xr = x + ((size_t)b * T + t) * C;
            const float *pr = table + (size_t)(t0 + t) * C;
            for (int c = 0; c < C; c++)
                xr[c] += pr[c];
        }
}

CPU_CLONES
void posenc_backward(float *dtable, const float *dx, int B, int T, int C, int t0)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *dr = dx + ((size_t)b * T + t) * C;
            float *gr = dtable + (size_t)(t0 + t) * C;
            for (int c = 0; c < C; c++)
                gr[c] += dr[c];
        }
}
