/* muon.c — Muon's matrix arithmetic (see muon.h): the Nesterov momentum, the quintic
 * Newton–Schulz iteration with (m, m) Gram matrices, m = min(rows, cols), in fp32 OpenBLAS
 * (ssyrk, ssymm: the products are symmetric), and the scaled update. The reference is
 * muon.py's zeropower_via_newtonschulz5 and muon_update.
 * Not the AdamW part, the state or the threads (optim.c, update.c). */
#include "muon.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#define NS_STEPS 5
static const float NS_A = 3.4445f, NS_B = -4.7750f, NS_C = 2.0315f;

int muon_wants(const ParamInfo *p)
{
    static const char *const skip[] = {"encoder.weight", "pos_embedding", "decoder.weight",
                                       "lm_head", "internal_attention"};
    if (p->ndim != 2)
        return 0;
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strstr(p->name, skip[i]))
            return 0;
    return 1;
}

size_t muon_work_floats(int rows, int cols)
{
    size_t m = (size_t)(rows < cols ? rows : cols);
    return 2 * (size_t)rows * cols + 2 * m * m;   /* X and its next iterate; A, B (m,m) */
}

/* Copies the upper triangle of the symmetric a (m, m) into its lower one. */
static void mirror_upper(float *a, int m)
{
    for (int i = 1; i < m; i++)
        for (int j = 0; j < i; j++)
            a[(size_t)i * m + j] = a[(size_t)j * m + i];
}

/* Scales x (rows, cols), whose squares sum to ss, to Frobenius norm ~1, then runs
 *   A = X X^T;  B = b A + c A A;  X = a X + B X
 * five times, leaving the result in x. For a tall x (rows > cols) the reference runs this
 * on X^T; the same iteration transposed is A = X^T X, X = a X + X B, which is what runs
 * here, so the Gram matrices are (m, m) with m = min(rows, cols) and nothing is
 * transposed. A and B are symmetric: ssyrk computes their upper triangles (half the
 * multiply-adds of a general product) and ssymm reads B's. y (rows, cols), a and b
 * (m, m) are scratch. */
static void newton_schulz(float *x, int rows, int cols, double ss, float *y, float *a,
                          float *b)
{
    const int tall = rows > cols, m = tall ? cols : rows, k = tall ? rows : cols;
    const size_t n = (size_t)rows * cols, mm = (size_t)m * m;
    const float scale = (float)(1.0 / (sqrt(ss) + 1e-7));
    float *x0 = x;
    for (size_t i = 0; i < n; i++)
        x[i] *= scale;
    for (int s = 0; s < NS_STEPS; s++) {
        cblas_ssyrk(CblasRowMajor, CblasUpper, tall ? CblasTrans : CblasNoTrans, m, k, 1.0f,
                    x, cols, 0.0f, a, m);                             /* A = X X^T (X^T X) */
        mirror_upper(a, m);
        memcpy(b, a, mm * sizeof *b);
        cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, m, m, NS_C, a, m, NS_B, b, m);
                                                                      /* B = bA + cAA */
        memcpy(y, x, n * sizeof *y);
        cblas_ssymm(CblasRowMajor, tall ? CblasRight : CblasLeft, CblasUpper, rows, cols,
                    1.0f, b, m, x, cols, NS_A, y, cols);              /* Y = aX + BX (XB) */
        float *t = x;
        x = y;
        y = t;
    }
    if (x != x0)
        memcpy(x0, x, n * sizeof *x0);
}

void muon_orthogonalize(float *out, const float *g, int rows, int cols, float *work)
{
    const size_t n = (size_t)rows * cols;
    const size_t m = (size_t)(rows < cols ? rows : cols);
    float *x = work, *y = x + n, *a = y + n, *b = a + m * m;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = g[i];
        ss += (double)g[i] * g[i];
    }
    newton_schulz(x, rows, cols, ss, y, a, b);
    memcpy(out, x, n * sizeof *out);
}

void muon_update(float *p, const float *g, float *buf, int rows, int cols, float momentum,
                 float lr, float shrink, float *work)
{
    const size_t n = (size_t)rows * cols;
    const size_t m = (size_t)(rows < cols ? rows : cols);
    float *x = work, *y = x + n, *a = y + n, *b = a + m * m;
    const float mu = momentum, c = 1.0f - momentum;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        float bi = mu * buf[i] + c * g[i];   /* buf.lerp_(g, 1 - mu) */
        float u = c * g[i] + mu * bi;        /* Nesterov: g.lerp_(buf, mu) */
        buf[i] = bi;
        x[i] = u;
        ss += (double)u * u;
    }
    newton_schulz(x, rows, cols, ss, y, a, b);
    const float neg_step = (float)(-(double)lr * sqrt(rows > cols ? (double)rows / cols : 1.0));
    for (size_t i = 0; i < n; i++)
        p[i] = p[i] * shrink + neg_step * x[i];
}

int muon_next_owner(double *load, int n_workers, double cost)
{
    int w = 0;
    for (int i = 1; i < n_workers; i++)
        if (load[i] < load[w])
            w = i;
    load[w] += cost;
    return w;
}
