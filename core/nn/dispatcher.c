/* dispatcher.c — the Dispatcher layer (arXiv 2105.03994), paper and multi-head variants,
 * as one implementation: the variants differ only in the projection row width (hd or d),
 * the gate width (levels or levels*heads) and the gate activation (sigmoid or none).
 * Layout: every buffer is batch-major (B,T,d) and is reinterpreted, never transposed, as
 * (N=B*heads, T, hd) head sequences and as (rows, width) matrices for the projections.
 * Projections are single matmul (cblas_sgemm or bf16) calls; the shift-and-sum runs level by level over
 * contiguous hd-float rows. Backward stores every applied level's V (no recomputation);
 * a forward for evaluation (dispatcher_forward_infer) keeps two, used alternately.
 * Not responsible for drawing level dropout (the caller passes skip[]). */
#include "dispatcher.h"

#include "cpu.h"
#include "linear.h"
#include "matmul.h"
#include "sysinfo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The matrix views of one forward: M rows of width r feed the projections, the gates
 * have g columns; N head sequences of T positions of hd floats each. */
typedef struct {
    int r, g, M, N, hd, L;
} Geom;

static Geom geom(const DispatcherDims *dd, int B, int T)
{
    Geom G;
    G.hd = dd->d / dd->heads;
    G.L = dd->levels;
    G.N = B * dd->heads;
    if (dd->kind == DISPATCHER_PAPER) {
        G.r = G.hd;
        G.g = G.L;
        G.M = B * T * dd->heads;
    } else {
        G.r = dd->d;
        G.g = G.L * dd->heads;
        G.M = B * T;
    }
    return G;
}

int dispatcher_levels(int bptt)
{
    int L = 0;
    while (bptt >= 2) {
        bptt >>= 1;
        L++;
    }
    return L;
}

size_t dispatcher_w_in_floats(const DispatcherDims *dd)
{
    size_t r = dd->kind == DISPATCHER_PAPER ? (size_t)(dd->d / dd->heads) : (size_t)dd->d;
    return r * r;
}

size_t dispatcher_w_gate_floats(const DispatcherDims *dd)
{
    if (dd->kind == DISPATCHER_PAPER)
        return (size_t)dd->levels * (size_t)(dd->d / dd->heads);
    return (size_t)dd->levels * (size_t)dd->heads * (size_t)dd->d;
}

int dispatcher_used_levels(const DispatcherDims *dd, int T)
{
    int k = 0;
    while (k < dd->levels && (1L << k) <= T)
        k++;
    return k;
}

size_t dispatcher_coeff_floats(const DispatcherDims *dd, int B, int T)
{
    return (size_t)B * dd->heads * T * dd->levels;
}

size_t dispatcher_act_floats(const DispatcherDims *dd, int B, int T)
{
    size_t nv = (size_t)B * T * dd->d;
    return dispatcher_coeff_floats(dd, B, T) + nv * (size_t)(dispatcher_used_levels(dd, T) + 1);
}

size_t dispatcher_infer_floats(const DispatcherDims *dd, int B, int T)
{
    return 2 * (size_t)B * T * dd->d;
}

size_t dispatcher_scratch_floats(const DispatcherDims *dd, int B, int T)
{
    return (size_t)B * T * dd->d + (size_t)B * dd->heads * T * dd->levels;
}

const float *dispatcher_coeffs(const DispatcherDims *dd, const float *act, int B, int T)
{
    (void)dd, (void)B, (void)T;
    return act;   /* the coefficients lead the act block */
}

/* c = act(gate) * [t >= 2^k] over (N,T,L), in place. */
CPU_CLONES
static void gate_activate(float *c, DispatcherKind kind, int N, int T, int L)
{
    for (int n = 0; n < N; n++) {
        for (int t = 0; t < T; t++) {
            float *row = c + ((size_t)n * T + t) * L;
            for (int k = 0; k < L; k++) {
                float a = kind == DISPATCHER_PAPER ? 1.0f / (1.0f + expf(-row[k])) : row[k];
                row[k] = (t >= (1L << k)) ? a : 0.0f;
            }
        }
    }
}

/* dst(t) = src(t) + c_k(t) src(t - 2^k) for every head sequence; dst(t) = src(t) where
 * t < 2^k (the mask zeroes c there). */
CPU_CLONES
static void level_forward(float *restrict dst, const float *restrict src,
                          const float *restrict coef, int k, int N, int T, int hd, int L)
{
    int s = 1 << k;
    for (int n = 0; n < N; n++) {
        const float *sn = src + (size_t)n * T * hd;
        float *dn = dst + (size_t)n * T * hd;
        const float *cn = coef + (size_t)n * T * L + k;
        memcpy(dn, sn, sizeof(float) * (size_t)s * hd);
        for (int t = s; t < T; t++) {
            float c = cn[(size_t)t * L];
            const float *restrict a = sn + (size_t)t * hd;
            const float *restrict b = sn + (size_t)(t - s) * hd;
            float *restrict o = dn + (size_t)t * hd;
            for (int i = 0; i < hd; i++)
                o[i] = a[i] + c * b[i];
        }
    }
}

/* a . b in 32 independent lanes (four 8-wide or two 16-wide vector accumulators once the
 * compiler vectorises it), so the adds do not wait on one another: with one accumulator
 * the dot of a 128-float row was a chain of dependent adds, the bulk of the backward's
 * own time. The lanes are summed pairwise at the end. */
static inline float dot(const float *restrict a, const float *restrict b, int n)
{
    float acc[32] = {0};
    int i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 32; l++)
            acc[l] += a[i + l] * b[i + l];
    for (; i < n; i++)
        acc[i & 31] += a[i] * b[i];
    for (int w = 16; w >= 1; w /= 2)
        for (int l = 0; l < w; l++)
            acc[l] += acc[l + w];
    return acc[0];
}

static inline void axpy(float *restrict y, const float *restrict x, float a, int n)
{
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* Backward of one level, in place: on entry dv = dL/dV_{k+1}, on exit dL/dV_k;
 * dc[n,t,k] = dV_{k+1}(t) . V_k(t - 2^k). Ascending t is safe in place: row t is read
 * before any later t' = t + 2^k writes into it. */
CPU_CLONES
static void level_backward(float *dv, float *dc, const float *vk, const float *coef,
                           int k, int N, int T, int hd, int L)
{
    int s = 1 << k;
    for (int n = 0; n < N; n++) {
        float *dn = dv + (size_t)n * T * hd;
        const float *vn = vk + (size_t)n * T * hd;
        const float *cn = coef + (size_t)n * T * L + k;
        float *gn = dc + (size_t)n * T * L + k;
        for (int t = s; t < T; t++) {
            const float *drow = dn + (size_t)t * hd;
            gn[(size_t)t * L] = dot(drow, vn + (size_t)(t - s) * hd, hd);
            axpy(dn + (size_t)(t - s) * hd, drow, cn[(size_t)t * L], hd);
        }
    }
}

/* The clock when the shift-and-sum is timed (dd->scan_s), else 0. */
static double scan_begin(const DispatcherDims *dd)
{
    return dd->scan_s ? sysinfo_now() : 0;
}

static void scan_end(const DispatcherDims *dd, double t0)
{
    if (dd->scan_s)
        *dd->scan_s += sysinfo_now() - t0;
}

/* The forward over coefficients coef and level states V: with keep, V holds V_0..V_used
 * (level j+1 written after level j, what backward reads); without, V holds two states
 * and level j+1 overwrites the one level j-1 used. The same float operations either way. */
static void forward_levels(const DispatcherDims *dd, float *out, float *coef, float *V,
                           int keep, const float *inp, const float *w_in, const float *w_gate,
                           const float *w_out, const unsigned char *skip, int B, int T)
{
    Geom G = geom(dd, B, T);
    size_t nv = (size_t)B * T * dd->d;
    matmul(CblasNoTrans, CblasTrans, G.M, G.r, G.r, 1.0f, inp, G.r,
                w_in, G.r, 0.0f, V, G.r);
    matmul(CblasNoTrans, CblasTrans, G.M, G.g, G.r, 1.0f, inp, G.r,
                w_gate, G.r, 0.0f, coef, G.g);
    double t0 = scan_begin(dd);
    gate_activate(coef, dd->kind, G.N, T, G.L);
    int used = dispatcher_used_levels(dd, T), j = 0;
    for (int k = 0; k < used; k++) {
        if (skip && skip[k])
            continue;
        float *src = V + (size_t)(keep ? j : j & 1) * nv;
        float *dst = V + (size_t)(keep ? j + 1 : (j + 1) & 1) * nv;
        level_forward(dst, src, coef, k, G.N, T, G.hd, G.L);
        j++;
    }
    scan_end(dd, t0);
    matmul(CblasNoTrans, CblasTrans, G.M, G.r, G.r, 1.0f, V + (size_t)(keep ? j : j & 1) * nv,
                G.r, w_out, G.r, 0.0f, out, G.r);
}

void dispatcher_forward(const DispatcherDims *dd, float *out, float *act, const float *inp,
                        const float *w_in, const float *w_gate, const float *w_out,
                        const unsigned char *skip, int B, int T)
{
    forward_levels(dd, out, act, act + dispatcher_coeff_floats(dd, B, T), 1, inp, w_in, w_gate,
                   w_out, skip, B, T);
}

void dispatcher_forward_infer(const DispatcherDims *dd, float *out, float *coef, float *states,
                              const float *inp, const float *w_in, const float *w_gate,
                              const float *w_out, int B, int T)
{
    forward_levels(dd, out, coef, states, 0, inp, w_in, w_gate, w_out, NULL, B, T);
}

CPU_CLONES
void dispatcher_backward(const DispatcherDims *dd, float *dinp, float *dw_in, float *dw_gate,
                         float *dw_out, float *scratch, const float *dout, const float *act,
                         const float *inp, const float *w_in, const float *w_gate,
                         const float *w_out, const unsigned char *skip, int B, int T)
{
    Geom G = geom(dd, B, T);
    size_t nv = (size_t)B * T * dd->d, nc = dispatcher_coeff_floats(dd, B, T);
    const float *coef = act;
    const float *V = act + nc;
    float *dv = scratch, *dg = scratch + nv;
    int used = dispatcher_used_levels(dd, T), applied = 0;
    for (int k = 0; k < used; k++)
        applied += !(skip && skip[k]);

    matmul(CblasTrans, CblasNoTrans, G.r, G.r, G.M, 1.0f, dout, G.r,
                V + applied * nv, G.r, 1.0f, dw_out, G.r);
    matmul(CblasNoTrans, CblasNoTrans, G.M, G.r, G.r, 1.0f, dout, G.r,
                w_out, G.r, 0.0f, dv, G.r);
    double t0 = scan_begin(dd);
    memset(dg, 0, sizeof(float) * nc);
    int j = applied;
    for (int k = used - 1; k >= 0; k--) {
        if (skip && skip[k])
            continue;
        j--;
        level_backward(dv, dg, V + j * nv, coef, k, G.N, T, G.hd, G.L);
    }
    if (dd->kind == DISPATCHER_PAPER) {   /* d sigmoid = c (1 - c); masked entries have dc = 0 */
        for (size_t i = 0; i < nc; i++)
            dg[i] *= coef[i] * (1.0f - coef[i]);
    }
    scan_end(dd, t0);
    matmul(CblasTrans, CblasNoTrans, G.r, G.r, G.M, 1.0f, dv, G.r, inp,
                G.r, 1.0f, dw_in, G.r);
    matmul(CblasNoTrans, CblasNoTrans, G.M, G.r, G.r, 1.0f, dv, G.r,
                w_in, G.r, 1.0f, dinp, G.r);
    matmul(CblasTrans, CblasNoTrans, G.g, G.r, G.M, 1.0f, dg, G.g, inp,
                G.r, 1.0f, dw_gate, G.r);
    matmul(CblasNoTrans, CblasNoTrans, G.M, G.r, G.g, 1.0f, dg, G.g,
                w_gate, G.r, 1.0f, dinp, G.r);
}

/* ---- streaming decoder (heads == 1) ---- */

struct DispatcherCache {
    int d, levels;
    float *ring;    /* level k: 2^k slots of d floats at offset (2^k - 1) * d */
    float *v;       /* (d) the running state V_k(t) */
    float *gate;    /* (levels) */
};

DispatcherCache *dispatcher_cache_create(const DispatcherDims *dd)
{
    if (dd->heads != 1 || dd->d <= 0 || dd->levels < 0 || dd->levels > 24)
        return NULL;
    DispatcherCache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->d = dd->d;
    c->levels = dd->levels;
    size_t slots = ((size_t)1 << dd->levels) - 1;
    c->ring = calloc(slots * dd->d + 1, sizeof(float));
    c->v = calloc((size_t)dd->d, sizeof(float));
    c->gate = calloc((size_t)dd->levels + 1, sizeof(float));
    if (!c->ring || !c->v || !c->gate) {
        dispatcher_cache_destroy(c);
        return NULL;
    }
    return c;
}

void dispatcher_cache_destroy(DispatcherCache *c)
{
    if (!c)
        return;
    free(c->ring);
    free(c->v);
    free(c->gate);
    free(c);
}

void dispatcher_cache_reset(DispatcherCache *c)
{
    size_t slots = ((size_t)1 << c->levels) - 1;
    memset(c->ring, 0, sizeof(float) * slots * c->d);
}

CPU_CLONES
void dispatcher_step(const DispatcherDims *dd, DispatcherCache *c, float *out, float *coeff,
                     const float *inp, const float *w_in, const float *w_gate,
                     const float *w_out, int t)
{
    int d = c->d, L = c->levels;
    float *restrict v = c->v;
    linear_matvec(v, w_in, d, inp, d, d, 1.0f, 0.0f);
    if (L > 0)
        linear_matvec(c->gate, w_gate, d, inp, L, d, 1.0f, 0.0f);
    for (int k = 0; k < L; k++) {
        long s = 1L << k;
        float *restrict slot = c->ring + ((size_t)(s - 1) + (size_t)(t & (s - 1))) * d;
        float ck = t >= s ? (dd->kind == DISPATCHER_PAPER
                                 ? 1.0f / (1.0f + expf(-c->gate[k])) : c->gate[k])
                          : 0.0f;
        if (coeff)
            coeff[k] = ck;
        /* the slot holds V_k(t - 2^k); it now takes V_k(t) */
        if (t >= s) {
            for (int i = 0; i < d; i++) {
                float p = slot[i];
                slot[i] = v[i];
                v[i] += ck * p;
            }
        } else {
            memcpy(slot, v, sizeof(float) * d);
        }
    }
    linear_matvec(out, w_out, d, v, d, d, 1.0f, 0.0f);
}

float dispatcher_token_gate(const float *coeff, int T, int heads, int levels, int j, int k)
{
    float sum = 0;
    for (int c = 0; c < heads; c++) {
        int q = j * heads + c, head = q / T, pos = q % T;
        sum += coeff[((size_t)head * T + pos) * levels + k];
    }
    return sum / (float)heads;
}
