/* dispatcher.c — the Dispatcher layer (arXiv 2105.03994), paper and multi-head variants,
 * as one implementation: the variants differ only in the projection row width (hd or d),
 * the gate width (levels or levels*heads) and the gate activation (sigmoid or none).
 * Layout: every buffer is batch-major (B,T,d) and is reinterpreted, never transposed, as
 * (N=B*heads, T, hd) head sequences and as (rows, width) matrices for the projections.
 * Projections are single matmul (cblas_sgemm or bf16) calls; the shift-and-sum runs all
 * levels of one head sequence (contiguous hd-float rows) before the next, so the sequence
 * stays in L1/L2. The forward keeps V_0 and the last level state; backward recomputes
 * one sequence's intermediate states at a time, in cache (docs/step.md); a forward for
 * evaluation (dispatcher_forward_infer) updates V_0 in place.
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
    return dispatcher_coeff_floats(dd, B, T) + 2 * (size_t)B * T * dd->d;
}

size_t dispatcher_infer_floats(const DispatcherDims *dd, int B, int T)
{
    return (size_t)B * T * dd->d;
}

size_t dispatcher_scratch_floats(const DispatcherDims *dd, int B, int T)
{
    int used = dispatcher_used_levels(dd, T);
    size_t rec = used > 1 ? (size_t)(used - 1) * T * (dd->d / dd->heads) : 0;
    return (size_t)B * T * dd->d + (size_t)B * dd->heads * T * dd->levels + rec;
}

const float *dispatcher_coeffs(const DispatcherDims *dd, const float *act, int B, int T)
{
    (void)dd, (void)B, (void)T;
    return act;   /* the coefficients lead the act block */
}

/* c = act(gate) * [t >= 2^k] over one head sequence's (T,L) gates, in place. */
CPU_INLINE void gate_activate(float *c, DispatcherKind kind, int T, int L)
{
    for (int t = 0; t < T; t++) {
        float *row = c + (size_t)t * L;
        for (int k = 0; k < L; k++) {
            float a = kind == DISPATCHER_PAPER ? 1.0f / (1.0f + expf(-row[k])) : row[k];
            row[k] = (t >= (1L << k)) ? a : 0.0f;
        }
    }
}

/* One head sequence of level k, in place: v(t) = v(t) + c_k(t) v(t - 2^k) for t >= 2^k
 * (rows t < 2^k stay). Descending t reads v(t - 2^k) before it is updated: the same
 * operation, on the same values, as writing a new level state. cn points at c_k(0). */
CPU_INLINE void level_forward_inplace(float *restrict vn, const float *restrict cn, int k,
                                      int T, int hd, int L)
{
    int s = 1 << k;
    for (int t = T - 1; t >= s; t--) {
        float c = cn[(size_t)t * L];
        float *restrict o = vn + (size_t)t * hd;
        const float *restrict b = vn + (size_t)(t - s) * hd;
        for (int i = 0; i < hd; i++)
            o[i] = o[i] + c * b[i];
    }
}

/* The same level, out of place: dn = the new state of sn (backward's recomputation). */
CPU_INLINE void level_forward(float *restrict dn, const float *restrict sn,
                              const float *restrict cn, int k, int T, int hd, int L)
{
    int s = 1 << k;
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

/* One position of a level's backward, in one pass over the row d = dV_{k+1}(t):
 * returns d . v (v = V_k(t - 2^k)) in 32 independent lanes (so the adds do not wait on
 * one another), the lanes summed pairwise at the end (16 + 16, 8 + 8, 4 + 4, 2 + 2, 1 + 1),
 * and adds c d into y = dV(t - 2^k). The lanes are four 8-float vectors kept in registers
 * (GCC's vector types: one AVX register each, two SSE ones on the baseline), the pairwise
 * sum in vector adds down to 8 lanes: as an array, GCC spilled the lanes and summed them
 * one by one.
 * Rows whose length is not a multiple of 32 take the array form (the same operations). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float dsp_v8 __attribute__((vector_size(32), aligned(4), may_alias));

CPU_INLINE float dot_axpy(float *restrict y, const float *restrict d, const float *restrict v,
                          float c, int n)
{
    if (n % 32 == 0) {
        dsp_v8 a0 = {0}, a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < n; i += 32) {
            dsp_v8 d0 = *(const dsp_v8 *)(d + i), d1 = *(const dsp_v8 *)(d + i + 8);
            dsp_v8 d2 = *(const dsp_v8 *)(d + i + 16), d3 = *(const dsp_v8 *)(d + i + 24);
            a0 += d0 * *(const dsp_v8 *)(v + i);
            a1 += d1 * *(const dsp_v8 *)(v + i + 8);
            a2 += d2 * *(const dsp_v8 *)(v + i + 16);
            a3 += d3 * *(const dsp_v8 *)(v + i + 24);
            *(dsp_v8 *)(y + i) = *(const dsp_v8 *)(y + i) + c * d0;
            *(dsp_v8 *)(y + i + 8) = *(const dsp_v8 *)(y + i + 8) + c * d1;
            *(dsp_v8 *)(y + i + 16) = *(const dsp_v8 *)(y + i + 16) + c * d2;
            *(dsp_v8 *)(y + i + 24) = *(const dsp_v8 *)(y + i + 24) + c * d3;
        }
        a0 += a2;   /* lanes l += l + 16 */
        a1 += a3;
        a0 += a1;   /* l += l + 8 */
        float q0 = a0[0] + a0[4], q1 = a0[1] + a0[5];   /* l += l + 4 */
        float q2 = a0[2] + a0[6], q3 = a0[3] + a0[7];
        return (q0 + q2) + (q1 + q3);                   /* l += l + 2, then 1 */
    }
    float acc[32] = {0};
    for (int i = 0; i < n; i++) {
        acc[i & 31] += d[i] * v[i];
        y[i] += c * d[i];
    }
    for (int w = 16; w >= 1; w /= 2)
        for (int l = 0; l < w; l++)
            acc[l] += acc[l + w];
    return acc[0];
}
#pragma GCC diagnostic pop

/* Backward of level k over one head sequence, in place: on entry dn = dL/dV_{k+1}, on
 * exit dL/dV_k; gn[t L] = dV_{k+1}(t) . V_k(t - 2^k). Ascending t is safe in place: row
 * t is read before any later t' = t + 2^k writes into it. */
CPU_INLINE void level_backward(float *dn, float *gn, const float *vn, const float *cn,
                               int k, int T, int hd, int L)
{
    int s = 1 << k;
    for (int t = s; t < T; t++)
        gn[(size_t)t * L] = dot_axpy(dn + (size_t)(t - s) * hd, dn + (size_t)t * hd,
                                     vn + (size_t)(t - s) * hd, cn[(size_t)t * L], hd);
}

/* The shift-and-sum's forward, sequence-outer and level-inner: the gates of one head
 * sequence, then every level applied in place to its copy of V_0 in vout (T*hd floats,
 * tens of KB: it stays in L1/L2), then the next sequence; vout == v0 updates V_0 itself.
 * Level-outer loops over level states in memory, as before, streamed (used+1) (B,T,d)
 * buffers through memory per forward; the float operations per element are the same,
 * in the same order: the same bits. */
CPU_CLONES
static void scan_forward(float *vout, const float *v0, float *coef, DispatcherKind kind,
                         const unsigned char *skip, int used, int N, int T, int hd, int L)
{
    for (int n = 0; n < N; n++) {
        float *cn = coef + (size_t)n * T * L;
        size_t off = (size_t)n * T * hd;
        gate_activate(cn, kind, T, L);
        if (vout != v0)
            memcpy(vout + off, v0 + off, sizeof(float) * (size_t)T * hd);
        for (int k = 0; k < used; k++)
            if (!(skip && skip[k]))
                level_forward_inplace(vout + off, cn + k, k, T, hd, L);
    }
}

/* The shift-and-sum's backward, sequence-outer like scan_forward: per head sequence, the
 * level states V_1..V_{applied-1} are recomputed from V_0 into rec ((applied-1)*T*hd
 * floats, cache-resident) with the forward's operations (the same bits), then the levels
 * run backward over them. On entry dv = dL/dV_applied, on exit dL/dV_0; dg = dL/dgate
 * (the sigmoid's derivative applied for the paper variant; masked entries stay 0). */
CPU_CLONES
static void scan_backward(float *dv, float *dg, float *rec, const float *v0,
                          const float *coef, DispatcherKind kind, const unsigned char *skip,
                          int used, int N, int T, int hd, int L)
{
    size_t seq = (size_t)T * hd;
    for (int n = 0; n < N; n++) {
        size_t off = (size_t)n * seq, coff = (size_t)n * T * L;
        float *dn = dv + off, *gn = dg + coff;
        const float *cn = coef + coff;
        const float *vj = v0 + off;   /* V_j of this sequence: V_0, then rec's */
        int j = 0, last = -1;
        for (int k = 0; k < used; k++) {   /* recompute: level k maps V_j to V_{j+1} */
            if (skip && skip[k])
                continue;
            if (last >= 0) {
                level_forward(rec + (size_t)j * seq, vj, cn + last, last, T, hd, L);
                vj = rec + (size_t)j * seq;
                j++;
            }
            last = k;
        }
        memset(gn, 0, sizeof(float) * (size_t)T * L);
        for (int k = used - 1; k >= 0; k--) {
            if (skip && skip[k])
                continue;
            const float *vk = j ? rec + (size_t)(j - 1) * seq : v0 + off;
            level_backward(dn, gn + k, vk, cn + k, k, T, hd, L);
            if (j)
                j--;
        }
        if (kind == DISPATCHER_PAPER) {   /* d sigmoid = c (1 - c); masked entries have dc = 0 */
            for (size_t i = 0; i < (size_t)T * L; i++)
                gn[i] *= cn[i] * (1.0f - cn[i]);
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

/* The forward: the projections write V_0 into v0 and the gates into coef; the
 * shift-and-sum leaves the last level state in vout (vout == v0: in place); out = its
 * projection. */
static void forward_levels(const DispatcherDims *dd, float *out, float *coef, float *v0,
                           float *vout, const float *inp, const float *w_in,
                           const float *w_gate, const float *w_out, const unsigned char *skip,
                           int B, int T)
{
    Geom G = geom(dd, B, T);
    matmul(CblasNoTrans, CblasTrans, G.M, G.r, G.r, 1.0f, inp, G.r,
                w_in, G.r, 0.0f, v0, G.r);
    matmul(CblasNoTrans, CblasTrans, G.M, G.g, G.r, 1.0f, inp, G.r,
                w_gate, G.r, 0.0f, coef, G.g);
    double t0 = scan_begin(dd);
    scan_forward(vout, v0, coef, dd->kind, skip, dispatcher_used_levels(dd, T), G.N, T, G.hd,
                 G.L);
    scan_end(dd, t0);
    matmul(CblasNoTrans, CblasTrans, G.M, G.r, G.r, 1.0f, vout, G.r, w_out, G.r, 0.0f, out,
                G.r);
}

/* A (M, r) matrix's pack (the B of a backward's dw = d^T . x) at room. */
static GemmBf16PackedB packed_at(const DispatcherDims *dd, const uint16_t *room, int B, int T)
{
    Geom G = geom(dd, B, T);
    return matmul_packed_b((uint16_t *)room, G.M, G.r);
}

int dispatcher_packs_fit(const DispatcherDims *dd, int B, int T)
{
    Geom G = geom(dd, B, T);
    return matmul_packed_elems(G.M, G.r) * 2 <= (size_t)B * T * dd->d * sizeof(float);
}

void dispatcher_forward(const DispatcherDims *dd, float *out, float *act, const float *inp,
                        const float *w_in, const float *w_gate, const float *w_out,
                        const unsigned char *skip, int B, int T, float *vrows,
                        uint16_t *inp_room)
{
    size_t nv = (size_t)B * T * dd->d;
    float *v0 = act + dispatcher_coeff_floats(dd, B, T);
    forward_levels(dd, out, act, v0, vrows ? vrows : v0 + nv, inp, w_in, w_gate, w_out, skip,
                   B, T);
    if (!vrows)
        return;
    Geom G = geom(dd, B, T);   /* the backward's B operands, packed while in cache */
    GemmBf16PackedB pk;
    matmul_pack_b(&pk, (uint16_t *)(v0 + nv), CblasNoTrans, G.M, G.r, vrows, G.r);
    if (inp_room)
        matmul_pack_b(&pk, inp_room, CblasNoTrans, G.M, G.r, inp, G.r);
}

void dispatcher_forward_infer(const DispatcherDims *dd, float *out, float *coef, float *states,
                              const float *inp, const float *w_in, const float *w_gate,
                              const float *w_out, int B, int T)
{
    forward_levels(dd, out, coef, states, states, inp, w_in, w_gate, w_out, NULL, B, T);
}

/* dw (+)= d^T . x for d (M, n) and x (M, r): on x's pack where the forward kept one. */
static void weight_grad(const DispatcherDims *dd, float *dw, const float *d, int n,
                        const float *x, const uint16_t *x_packed, int B, int T)
{
    Geom G = geom(dd, B, T);
    if (x_packed) {
        GemmBf16PackedB pk = packed_at(dd, x_packed, B, T);
        matmul_packed(CblasTrans, n, 1.0f, d, n, &pk, 1.0f, dw, G.r);
        return;
    }
    matmul(CblasTrans, CblasNoTrans, n, G.r, G.M, 1.0f, d, n, x, G.r, 1.0f, dw, G.r);
}

CPU_CLONES
void dispatcher_backward(const DispatcherDims *dd, float *dinp, float *dw_in, float *dw_gate,
                         float *dw_out, float *scratch, const float *dout, const float *act,
                         const float *inp, const float *w_in, const float *w_gate,
                         const float *w_out, const unsigned char *skip, int B, int T,
                         int packed, const uint16_t *inp_packed)
{
    Geom G = geom(dd, B, T);
    size_t nv = (size_t)B * T * dd->d, nc = dispatcher_coeff_floats(dd, B, T);
    const float *coef = act;
    const float *v0 = act + nc, *vout = v0 + nv;
    float *dv = scratch, *dg = scratch + nv, *rec = dg + nc;

    weight_grad(dd, dw_out, dout, G.r, vout, packed ? (const uint16_t *)vout : NULL, B, T);
    matmul(CblasNoTrans, CblasNoTrans, G.M, G.r, G.r, 1.0f, dout, G.r,
                w_out, G.r, 0.0f, dv, G.r);
    double t0 = scan_begin(dd);
    scan_backward(dv, dg, rec, v0, coef, dd->kind, skip, dispatcher_used_levels(dd, T), G.N, T,
                  G.hd, G.L);
    scan_end(dd, t0);
    weight_grad(dd, dw_in, dv, G.r, inp, inp_packed, B, T);
    matmul(CblasNoTrans, CblasNoTrans, G.M, G.r, G.r, 1.0f, dv, G.r,
                w_in, G.r, 1.0f, dinp, G.r);
    weight_grad(dd, dw_gate, dg, G.g, inp, inp_packed, B, T);
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
