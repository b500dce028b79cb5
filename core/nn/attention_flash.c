/* attention_flash.c — fused causal attention of one head (see attention_flash.h).
 * Forward: K (transposed) and V packed once, zero-padded (rows to whole 64-row tiles,
 * head width to a multiple of 8), so the tile products have no edge cases (padded keys
 * are masked as j > i, padded rows are not written back); for each tile of FLASH_BR
 * queries, the key tiles up to the diagonal: S = Qs KT (Qs = alpha q), the running row
 * max m and sum l, acc = acc e^(m_old - m) + P V; then o = acc / l, lse = m + log l.
 * Backward per panel of FLASH_BC keys j0.. against the query rows i >= j0: P =
 * e^(alpha q k^T - lse), dV += P^T dO, dP = dO V^T, dS = P (dP - D) with D_i = dO_i . o_i,
 * dQ += alpha dS K, dK += alpha dS^T Q (sgemm).
 * The FMA contraction below (fp-contract=fast) only changes rounding. */
#pragma GCC optimize("fp-contract=fast")
#pragma GCC diagnostic ignored "-Wpsabi"
#include "attention_flash.h"

#include "cpu.h"
#include "dropout.h"
#include "fastmath.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#define FL_TP 64   /* rows are padded to a multiple of this (>= FLASH_BR, FLASH_BC) */
#define INL static inline __attribute__((always_inline))

#define FL_CLONES CPU_CLONES

typedef float v8 __attribute__((vector_size(32)));

INL v8 ld8(const float *p)
{
    v8 r;
    memcpy(&r, p, sizeof r);
    return r;
}

INL void st8(float *p, v8 x)
{
    memcpy(p, &x, sizeof x);
}

INL v8 splat0(void)
{
    return (v8){0};
}

static int round_up(int x, int m)
{
    return (x + m - 1) / m * m;
}

static size_t round16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* Rows i..i+7 of C (8, 16-column panels) = or += A B, n a multiple of 16: 16 accumulators
 * against 2 loads of B and 8 broadcasts a step (the 4-row block below is load-bound). */
INL void gemm_nn8(float *restrict C, int ldc, const float *restrict A, int lda,
                  const float *restrict Bm, int ldb, int n, int k, int add)
{
    for (int j = 0; j < n; j += 16) {
        v8 x[8][2];
        for (int r = 0; r < 8; r++)
            x[r][0] = x[r][1] = splat0();
        for (int p = 0; p < k; p++) {
            v8 b0 = ld8(Bm + (size_t)p * ldb + j), b1 = ld8(Bm + (size_t)p * ldb + j + 8);
            for (int r = 0; r < 8; r++) {
                float a = A[(size_t)r * lda + p];
                x[r][0] += a * b0;
                x[r][1] += a * b1;
            }
        }
        for (int r = 0; r < 8; r++) {
            float *c = C + (size_t)r * ldc + j;
            if (add) {
                x[r][0] += ld8(c);
                x[r][1] += ld8(c + 8);
            }
            st8(c, x[r][0]);
            st8(c + 8, x[r][1]);
        }
    }
}

/* C (m,n) = or += A (m,k) B (k,n); m a multiple of 4, n of 8. */
INL void gemm_nn(float *restrict C, int ldc, const float *restrict A, int lda,
                 const float *restrict Bm, int ldb, int m, int n, int k, int add)
{
    if (n % 16 == 0) {
        int i8 = m / 8 * 8;
        for (int i = 0; i < i8; i += 8)
            gemm_nn8(C + (size_t)i * ldc, ldc, A + (size_t)i * lda, lda, Bm, ldb, n, k, add);
        C += (size_t)i8 * ldc;
        A += (size_t)i8 * lda;
        m -= i8;
    }
    for (int i = 0; i < m; i += 4) {
        const float *a0 = A + (size_t)i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        float *c0 = C + (size_t)i * ldc, *c1 = c0 + ldc, *c2 = c1 + ldc, *c3 = c2 + ldc;
        int j = 0;
        for (; j + 16 <= n; j += 16) {
            v8 x00 = {0}, x01 = {0}, x10 = {0}, x11 = {0}, x20 = {0}, x21 = {0}, x30 = {0},
               x31 = {0};
            for (int p = 0; p < k; p++) {
                v8 b0 = ld8(Bm + (size_t)p * ldb + j), b1 = ld8(Bm + (size_t)p * ldb + j + 8);
                x00 += a0[p] * b0; x01 += a0[p] * b1;
                x10 += a1[p] * b0; x11 += a1[p] * b1;
                x20 += a2[p] * b0; x21 += a2[p] * b1;
                x30 += a3[p] * b0; x31 += a3[p] * b1;
            }
            if (add) {
                x00 += ld8(c0 + j); x01 += ld8(c0 + j + 8); x10 += ld8(c1 + j);
                x11 += ld8(c1 + j + 8); x20 += ld8(c2 + j); x21 += ld8(c2 + j + 8);
                x30 += ld8(c3 + j); x31 += ld8(c3 + j + 8);
            }
            st8(c0 + j, x00); st8(c0 + j + 8, x01); st8(c1 + j, x10); st8(c1 + j + 8, x11);
            st8(c2 + j, x20); st8(c2 + j + 8, x21); st8(c3 + j, x30); st8(c3 + j + 8, x31);
        }
        for (; j < n; j += 8) {
            v8 x0 = {0}, x1 = {0}, x2 = {0}, x3 = {0};
            for (int p = 0; p < k; p++) {
                v8 b0 = ld8(Bm + (size_t)p * ldb + j);
                x0 += a0[p] * b0; x1 += a1[p] * b0; x2 += a2[p] * b0; x3 += a3[p] * b0;
            }
            if (add) {
                x0 += ld8(c0 + j); x1 += ld8(c1 + j); x2 += ld8(c2 + j); x3 += ld8(c3 + j);
            }
            st8(c0 + j, x0); st8(c1 + j, x1); st8(c2 + j, x2); st8(c3 + j, x3);
        }
    }
}

/* dst (Tp, hdp) rows = s * src rows (T rows of hd, stride ld), zeros elsewhere. */
INL void pack_rows(float *restrict dst, const float *restrict src, int ld, int T, int Tp,
                   int hd, int hdp, float s)
{
    for (int i = 0; i < Tp; i++)
        for (int c = 0; c < hdp; c++)
            dst[(size_t)i * hdp + c] = i < T && c < hd ? s * src[(size_t)i * ld + c] : 0.0f;
}

/* dst (hdp, Tp) = the transpose of src's (T, hd) rows, zeros elsewhere. */
INL void pack_cols(float *restrict dst, const float *restrict src, int ld, int T, int Tp,
                   int hd, int hdp)
{
    memset(dst, 0, sizeof(float) * (size_t)hdp * Tp);
    for (int i = 0; i < T; i++)
        for (int c = 0; c < hd; c++)
            dst[(size_t)c * Tp + i] = src[(size_t)i * ld + c];
}

static int head_pad(int hd)
{
    return round_up(hd, 8);
}

size_t attention_flash_forward_floats(int T, int hd)
{
    size_t Tp = (size_t)round_up(T, FL_TP), hdp = (size_t)head_pad(hd);
    return round16(hdp * Tp) * 2 + round16((size_t)FLASH_BR * hdp) * 2 +
           round16((size_t)FLASH_BR * FLASH_BC) + 2 * round16(FLASH_BR);
}

int attention_flash_kept(const FlashHead *fh, int i, int j)
{
    return !(fh->p > 0.0f) ||
           drop_uniform(fh->seed, 0, fh->stream, (uint64_t)i * fh->T + (uint64_t)j) >= fh->p;
}

/* P row r (query i) *= the dropout mask scaled by 1/(1-p), columns j0..j0+n. */
static void mask_row(const FlashHead *fh, float *restrict P, int i, int j0, int n)
{
    float scale = 1.0f / (1.0f - fh->p);
    for (int j = 0; j < n; j++)
        P[j] *= attention_flash_kept(fh, i, j0 + j) ? scale : 0.0f;
}

typedef int32_t v8i __attribute__((vector_size(32)));

INL v8 splat(float x)
{
    return (v8){x, x, x, x, x, x, x, x};
}

/* m ? a : b lane by lane (m lanes all ones or all zeros). */
INL v8 select8(v8i m, v8 a, v8 b)
{
    return (v8)(((v8i)a & m) | ((v8i)b & ~m));
}

/* Lanes j0+l < n all ones. */
INL v8i lanes_below(int j0, int n)
{
    v8i idx = {0, 1, 2, 3, 4, 5, 6, 7};
    return idx + j0 < n;
}

/* fastmath.h's fast_expf on 8 lanes: its constants (FASTEXP_*) and steps; FMA may round
 * differently. */
INL v8 exp8(v8 x)
{
    x = select8(x < splat(FASTEXP_LO), splat(FASTEXP_LO), x);
    x = select8(x > splat(FASTEXP_HI), splat(FASTEXP_HI), x);
    v8 fn = x * FASTEXP_LOG2E + FASTEXP_ROUND;
    fn -= FASTEXP_ROUND;
    v8 r = x - fn * FASTEXP_LN2_HI;
    r = r - fn * FASTEXP_LN2_LO;
    v8 p = splat(FASTEXP_P0);
    p = p * r + FASTEXP_P1;
    p = p * r + FASTEXP_P2;
    p = p * r + FASTEXP_P3;
    p = p * r + FASTEXP_P4;
    p = p * r + FASTEXP_P5;
    p = p * r * r + r + 1.0f;
    v8i bits = (__builtin_convertvector(fn, v8i) + 127) << 23;
    return p * (v8)bits;
}

/* row[j] = e^(row[j] - m) for j < n, 0 for n <= j < ncp (ncp a multiple of 8); returns
 * the sum of the row. */
INL float exp_row(float *restrict row, float m, int n, int ncp)
{
    v8 sum = splat(0.0f);
    for (int j = 0; j < ncp; j += 8) {
        v8 e = j < n ? exp8(ld8(row + j) - m) : splat(0.0f);
        if (j + 8 > n)
            e = select8(lanes_below(j, n), e, splat(0.0f));
        st8(row + j, e);
        sum += e;
    }
    return ((sum[0] + sum[4]) + (sum[1] + sum[5])) + ((sum[2] + sum[6]) + (sum[3] + sum[7]));
}

/* max(m, row[0..n)). */
INL float max_row(const float *restrict row, float m, int n)
{
    v8 mx = splat(m);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        v8 x = ld8(row + j);
        mx = select8(x > mx, x, mx);
    }
    for (; j < n; j++)
        m = row[j] > m ? row[j] : m;
    for (int l = 0; l < 8; l++)
        m = mx[l] > m ? mx[l] : m;
    return m;
}

/* One row of the online softmax: S row (valid columns n, of ncp) becomes P = e^(S - m_new),
 * m, l updated; returns the factor the row's accumulator must be scaled by. */
INL float online_row(float *restrict S, int n, int ncp, float *m, float *l)
{
    float mx = max_row(S, *m, n > 0 ? n : 0);
    float corr = fast_expf(*m - mx);
    *l = *l * corr + exp_row(S, mx, n, ncp);
    *m = mx;
    return corr;
}

FL_CLONES
void attention_flash_forward(const FlashHead *fh, float *o, int ldo, float *lse, float *work,
                             const float *q, const float *k, const float *v, int ldq)
{
    int T = fh->T, hd = fh->hd, hdp = head_pad(hd), Tp = round_up(T, FL_TP);
    float *KT = work, *Vp = KT + round16((size_t)hdp * Tp);
    float *Qt = Vp + round16((size_t)hdp * Tp), *acc = Qt + round16((size_t)FLASH_BR * hdp);
    float *S = acc + round16((size_t)FLASH_BR * hdp), *m = S + FLASH_BR * FLASH_BC;
    float *l = m + round16(FLASH_BR);
    pack_cols(KT, k, ldq, T, Tp, hd, hdp);
    pack_rows(Vp, v, ldq, T, Tp, hd, hdp, 1.0f);
    for (int i0 = 0; i0 < T; i0 += FLASH_BR) {
        int rows = T - i0 < FLASH_BR ? T - i0 : FLASH_BR, mr = round_up(rows, 4);
        pack_rows(Qt, q + (size_t)i0 * ldq, ldq, rows, mr, hd, hdp, fh->alpha);
        memset(acc, 0, sizeof(float) * (size_t)mr * hdp);
        for (int r = 0; r < mr; r++) {
            m[r] = -1e30f;
            l[r] = 0.0f;
        }
        for (int j0 = 0; j0 < i0 + rows; j0 += FLASH_BC) {
            int cols = i0 + rows - j0 < FLASH_BC ? i0 + rows - j0 : FLASH_BC;
            int ncp = round_up(cols, 8);
            gemm_nn(S, FLASH_BC, Qt, hdp, KT + j0, Tp, mr, ncp, hdp, 0);
            for (int r = 0; r < mr; r++) {
                int i = i0 + r, n = r < rows ? (i + 1 - j0 < ncp ? i + 1 - j0 : ncp) : 0;
                float *Sr = S + (size_t)r * FLASH_BC;
                float corr = online_row(Sr, n, ncp, &m[r], &l[r]);
                if (corr != 1.0f)
                    for (int c = 0; c < hdp; c++)
                        acc[(size_t)r * hdp + c] *= corr;
                if (fh->p > 0.0f && n > 0)
                    mask_row(fh, Sr, i, j0, n);
            }
            gemm_nn(acc, hdp, S, FLASH_BC, Vp + (size_t)j0 * hdp, hdp, mr, hdp, ncp, 1);
        }
        for (int r = 0; r < rows; r++) {
            float inv = 1.0f / l[r];
            for (int c = 0; c < hd; c++)
                o[(size_t)(i0 + r) * ldo + c] = acc[(size_t)r * hdp + c] * inv;
            lse[i0 + r] = m[r] + logf(l[r]);
        }
    }
}

size_t attention_flash_backward_floats(int T)
{
    return 3 * round16((size_t)round_up(T, 8) * FLASH_BC) + round16((size_t)T);
}

/* Key panels of FLASH_BC keys against every later query row, the products as sgemm calls
 * on the strided q, k, v, dO (they pay here: panels of T x 64 against ~5 hand tiles). */
FL_CLONES
void attention_flash_backward(const FlashHead *fh, float *dq, float *dk, float *dv, int lddq,
                               float *work, const float *dO, const float *o, int ldo,
                               const float *lse, const float *q, const float *k,
                               const float *v, int ldq)
{
    int T = fh->T, hd = fh->hd, drop = fh->p > 0.0f;
    size_t panel = round16((size_t)round_up(T, 8) * FLASH_BC);
    float *P = work, *dP = P + panel, *Pd = dP + panel, *D = Pd + panel;
    float scale = drop ? 1.0f / (1.0f - fh->p) : 1.0f, alpha = fh->alpha;
    for (int i = 0; i < T; i++) {
        float s = 0.0f;
        for (int c = 0; c < hd; c++)
            s += dO[(size_t)i * ldo + c] * o[(size_t)i * ldo + c];
        D[i] = s;
    }
    for (int j0 = 0; j0 < T; j0 += FLASH_BC) {
        int c = T - j0 < FLASH_BC ? T - j0 : FLASH_BC, R = T - j0, ncp = round_up(c, 8);
        const float *qj = q + (size_t)j0 * ldq, *dOj = dO + (size_t)j0 * ldo;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, c, hd, alpha, qj, ldq,
                    k + (size_t)j0 * ldq, ldq, 0.0f, P, FLASH_BC);
        for (int r = 0; r < R; r++) {
            int n = r + 1 < ncp ? r + 1 : ncp;
            float *Pr = P + (size_t)r * FLASH_BC;
            exp_row(Pr, lse[j0 + r], n, ncp);
            if (drop) {
                memcpy(Pd + (size_t)r * FLASH_BC, Pr, sizeof(float) * (size_t)ncp);
                mask_row(fh, Pd + (size_t)r * FLASH_BC, j0 + r, j0, n < c ? n : c);
            }
        }
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, c, hd, R, 1.0f, drop ? Pd : P,
                    FLASH_BC, dOj, ldo, 1.0f, dv + (size_t)j0 * lddq, lddq);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, c, hd, 1.0f, dOj, ldo,
                    v + (size_t)j0 * ldq, ldq, 0.0f, dP, FLASH_BC);
        for (int r = 0; r < R; r++) {
            float *g = dP + (size_t)r * FLASH_BC, di = D[j0 + r];
            const float *p = P + (size_t)r * FLASH_BC, *pd = Pd + (size_t)r * FLASH_BC;
            if (drop)
                for (int j = 0; j < c; j++)
                    g[j] = p[j] * (g[j] * (pd[j] != 0.0f ? scale : 0.0f) - di);
            else
                for (int j = 0; j < c; j++)
                    g[j] = p[j] * (g[j] - di);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, hd, c, alpha, dP, FLASH_BC,
                    k + (size_t)j0 * ldq, ldq, 1.0f, dq + (size_t)j0 * lddq, lddq);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, c, hd, R, alpha, dP, FLASH_BC, qj,
                    ldq, 1.0f, dk + (size_t)j0 * lddq, lddq);
    }
}
