/* dropout.c — inverted dropout with counter-based masks (see dropout.h).
 * Reference: https://pytorch.org/docs/stable/generated/torch.nn.Dropout.html
 * The hash is SplitMix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014): one 64-bit mix per element of a key that names the
 * element, as counter-based generators do (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC 2011). Each row's key is mixed once; elements add j times the
 * golden-ratio increment, as SplitMix64's own stream does. Not used at inference. */
#include "dropout.h"

#include "cpu.h"

#include <string.h>

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define GOLDEN 0x9E3779B97F4A7C15ull

/* The key of one (seed, site, row): every element of the row counts on from it. */
static inline uint64_t row_key(uint64_t seed, uint32_t site, uint64_t row)
{
    return mix64(mix64(seed ^ ((uint64_t)site << 40)) + row * GOLDEN);
}

static inline float to_unit(uint64_t h)
{
    return (float)(h >> 40) * (1.0f / 16777216.0f);   /* top 24 bits: exact in a float */
}

/* The uniform of position j of a row, from the row's key. */
static inline float elem_unit(uint64_t key, uint64_t j)
{
    return to_unit(mix64(key + (j + 1) * GOLDEN));
}

float drop_uniform(uint64_t seed, uint32_t site, uint64_t row, uint64_t j)
{
    return elem_unit(row_key(seed, site, row), j);
}

/* n elements of one row's run of positions, starting at position-in-row j0. */
CPU_CLONES
static void drop_run(float *out, float *mask, const float *inp, long n, uint64_t key,
                     uint64_t j0, float p, float keep)
{
    for (long i = 0; i < n; i++) {
        float m = elem_unit(key, j0 + (uint64_t)i) < p ? 0.0f : keep;
        mask[i] = m;
        out[i] = inp[i] * m;
    }
}

void dropout_forward(float *out, float *mask, const float *inp, float p, DropKey *key, int B,
                     int T, int w, int time_major)
{
    long n = (long)B * T * w;
    uint32_t site = key->site++;
    if (p <= 0.0f) {
        if (out != inp)
            memmove(out, inp, (size_t)n * sizeof *out);
        if (mask)
            for (long i = 0; i < n; i++)
                mask[i] = 1.0f;
        return;
    }
    float keep = p >= 1.0f ? 0.0f : 1.0f / (1.0f - p);
    for (int b = 0; b < B; b++) {
        uint64_t k = row_key(key->seed, site, (uint64_t)(key->row0 + b));
        if (!time_major) {
            size_t o = (size_t)b * T * w;
            drop_run(out + o, mask + o, inp + o, (long)T * w, k, 0, p, keep);
        } else {
            for (int t = 0; t < T; t++) {
                size_t o = ((size_t)t * B + b) * w;
                drop_run(out + o, mask + o, inp + o, w, k, (uint64_t)t * w, p, keep);
            }
        }
    }
}

CPU_CLONES
void dropout_backward(float *dinp, const float *dout, const float *mask, long n)
{
    for (long i = 0; i < n; i++)
        dinp[i] += dout[i] * mask[i];
}
