/* test_muon.c — the Muon optimizer (core/train/muon.c and optim.c's OPTIM_MUON):
 * which tensors it takes; the Newton–Schulz iteration on random 8x32, 32x8 and 16x16
 * matrices (every singular value of the result in [0.6, 1.25], the result aligned with
 * its input); two steps on a tiny ParamSet (3x5 and 5x3 matrices, a bias) against a
 * double-precision reference written here (Muon for the matrices, AdamW for the bias,
 * weight decay with decay_all 0 and 1 for a no_decay bias), to 1e-5; and the same steps split into slices and
 * workers in several ways giving identical bits. The threaded path is test_replicas'; a
 * training run and its bit-identical resume are test_trainer's. Fixed seeds. */
#include "check.h"
#include "config.h"
#include "err.h"
#include "model.h"
#include "muon.h"
#include "optim.h"
#include "params.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- double-precision references ---- */

/* The eigenvalues of the symmetric a (m, m) (destroyed) into ev, by cyclic Jacobi. */
static void ref_eigenvalues(double *a, int m, double *ev)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int p = 0; p < m; p++)
            for (int q = p + 1; q < m; q++)
                off += a[p * m + q] * a[p * m + q];
        if (off < 1e-24)
            break;
        for (int p = 0; p < m; p++)
            for (int q = p + 1; q < m; q++) {
                double apq = a[p * m + q];
                if (fabs(apq) < 1e-300)
                    continue;
                double theta = (a[q * m + q] - a[p * m + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < m; k++) {   /* A = J^T A J: columns p, q */
                    double akp = a[k * m + p], akq = a[k * m + q];
                    a[k * m + p] = c * akp - s * akq;
                    a[k * m + q] = s * akp + c * akq;
                }
                for (int k = 0; k < m; k++) {   /* rows p, q */
                    double apk = a[p * m + k], aqk = a[q * m + k];
                    a[p * m + k] = c * apk - s * aqk;
                    a[q * m + k] = s * apk + c * aqk;
                }
            }
    }
    for (int i = 0; i < m; i++)
        ev[i] = a[i * m + i];
}

/* Muon's orthogonalisation of u (rows, cols) in double, written from the reference
 * muon.py: normalise, transpose to the short side, 5 quintic steps, transpose back. */
static void ref_orthogonalize(double *out, const double *u, int rows, int cols)
{
    int tr = rows > cols, m = tr ? cols : rows, n = tr ? rows : cols;
    size_t mn = sizeof(double) * (size_t)m * n, mm = sizeof(double) * (size_t)m * m;
    double *x = malloc(mn), *y = malloc(mn), *a = malloc(mm), *b = malloc(mm);
    double ss = 0;
    for (int i = 0; i < rows * cols; i++)
        ss += u[i] * u[i];
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < cols; k++)
            x[tr ? k * rows + i : i * cols + k] = u[i * cols + k] / (sqrt(ss) + 1e-7);
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < m; i++)          /* A = X X^T */
            for (int j = 0; j < m; j++) {
                double acc = 0;
                for (int k = 0; k < n; k++)
                    acc += x[i * n + k] * x[j * n + k];
                a[i * m + j] = acc;
            }
        for (int i = 0; i < m; i++)          /* B = b A + c A A */
            for (int j = 0; j < m; j++) {
                double acc = 0;
                for (int k = 0; k < m; k++)
                    acc += a[i * m + k] * a[k * m + j];
                b[i * m + j] = -4.7750 * a[i * m + j] + 2.0315 * acc;
            }
        for (int i = 0; i < m; i++)          /* X = a X + B X */
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int k = 0; k < m; k++)
                    acc += b[i * m + k] * x[k * n + j];
                y[i * n + j] = 3.4445 * x[i * n + j] + acc;
            }
        memcpy(x, y, mn);
    }
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < cols; k++)
            out[i * cols + k] = x[tr ? k * rows + i : i * cols + k];
    free(x), free(y), free(a), free(b);
}

/* ---- which tensors ---- */

static void test_selection(void)
{
    printf("which tensors Muon takes\n");
    static const struct { const char *name; int ndim, want; } cases[] = {
        {"blocks.0.linear1.weight", 2, 1},        {"blocks.3.mixer.linear_in.weight", 2, 1},
        {"blocks.0.mixer.in_proj_weight", 2, 1},  {"rnn.weight_hh_l0", 2, 1},
        {"channel_mixer.weight", 2, 1},           {"time_mix.weight", 2, 1},
        {"blocks.0.linear1.bias", 1, 0},          {"blocks.0.norm1.weight", 1, 0},
        {"encoder.weight", 2, 0},                 {"pos_embedding.weight", 2, 0},
        {"decoder.weight", 2, 0},                 {"lm_head.weight", 2, 0},
        {"blocks.1.mixer.internal_attention.weight", 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ParamInfo p = {.ndim = cases[i].ndim, .shape = {4, 4}};
        snprintf(p.name, sizeof p.name, "%s", cases[i].name);
        CHECK(muon_wants(&p) == cases[i].want, "%s: muon_wants %d", p.name, muon_wants(&p));
    }
    /* the speedrun's family: per layer linear_in, linear_out, linear1, linear2 */
    char err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    c.d = 16; c.nhid = 32; c.layers = 3; c.bptt = 16;
    Model *m = model_create(&c, 11, err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    Optimizer o;
    CHECK(optim_init(&o, OPTIM_MUON, m->params.total, 0.9f, 0.999f, 1e-8f, 0, 0, err) == LM_OK,
          "%s", err);
    CHECK(optim_init_params(&o, &m->params, 0, err) == LM_EARG, "0 workers refused");
    CHECK(optim_init_params(&o, &m->params, 2, err) == LM_OK, "%s", err);
    CHECK(o.n_muon == 4 * c.layers, "%d Muon matrices, want %d", o.n_muon, 4 * c.layers);
    for (int k = 1; k < o.n_muon; k++)
        CHECK(o.muon[k - 1].cost >= o.muon[k].cost, "matrices not largest first");
    CHECK(o.muon_work_n == muon_work_floats(32, 16), "workspace %zu floats", o.muon_work_n);
    optim_free(&o);
    model_destroy(m);
}

/* ---- Newton–Schulz ---- */

static void check_orthogonal(int rows, int cols, unsigned seed)
{
    int m = rows < cols ? rows : cols;
    size_t n = (size_t)rows * cols;
    float *g = malloc(n * sizeof(float)), *x = malloc(n * sizeof(float));
    float *work = malloc(muon_work_floats(rows, cols) * sizeof(float));
    double *gram = malloc(sizeof(double) * (size_t)m * m), ev[32];
    Rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        g[i] = rng_normal(&r);
    muon_orthogonalize(x, g, rows, cols, work);
    for (int i = 0; i < m; i++)   /* X X^T, or X^T X for a tall X: the small Gram matrix */
        for (int j = 0; j < m; j++) {
            double acc = 0;
            for (int k = 0; k < (rows < cols ? cols : rows); k++)
                acc += rows <= cols ? (double)x[i * cols + k] * x[j * cols + k]
                                    : (double)x[k * cols + i] * x[k * cols + j];
            gram[i * m + j] = acc;
        }
    ref_eigenvalues(gram, m, ev);
    double lo = 1e9, hi = -1e9;
    for (int i = 0; i < m; i++)
        lo = fmin(lo, ev[i]), hi = fmax(hi, ev[i]);
    printf("  %2dx%-2d singular values in [%.3f, %.3f]\n", rows, cols, sqrt(fmax(lo, 0)),
           sqrt(hi));
    CHECK(lo >= 0.36 && hi <= 1.6, "%dx%d: eigenvalues of the Gram matrix in [%g, %g], want "
          "[0.36, 1.6]", rows, cols, lo, hi);
    double dot = 0, nx = 0, ng = 0;
    int agree = 0;
    for (size_t i = 0; i < n; i++) {
        dot += (double)x[i] * g[i], nx += (double)x[i] * x[i], ng += (double)g[i] * g[i];
        agree += (x[i] > 0) == (g[i] > 0);
    }
    double cosine = dot / sqrt(nx * ng);
    CHECK(cosine > 0.6 && agree > 0.65 * (double)n, "%dx%d: cosine with the input %.3f, signs "
          "agreeing %d of %zu", rows, cols, cosine, agree, n);
    free(g), free(x), free(work), free(gram);
}

static void test_newton_schulz(void)
{
    printf("Newton-Schulz orthogonalisation\n");
    check_orthogonal(8, 32, 1);
    check_orthogonal(32, 8, 2);
    check_orthogonal(16, 16, 3);
}

/* ---- two steps against the reference ---- */

/* w (3,5), b (5), w2 (5,3); the slab keeps tensors 16-float aligned: offsets 0, 16, 32 */
enum { NW = 15, NB = 5, OW = 0, OB = 16, OV = 32, NTOT = 48 };

static void make_set(ParamSet *ps)
{
    char err[LM_ERR_LEN];
    params_init(ps);
    params_add(ps, "blocks.0.w", 2, (const int[]){3, 5}, 0);
    params_add(ps, "blocks.0.b", 1, (const int[]){5}, 1);
    params_add(ps, "blocks.0.w2", 2, (const int[]){5, 3}, 0);
    CHECK(params_alloc(ps, err) == LM_OK, "%s", err);
    CHECK(ps->total == NTOT && ps->info[1].offset == OB && ps->info[2].offset == OV,
          "layout: %zu floats, offsets %zu %zu", ps->total, ps->info[1].offset,
          ps->info[2].offset);
    for (int i = 0; i < NTOT; i++)
        ps->data[i] = 0.3f * sinf(1.7f * (float)i + 0.4f);
}

static float grad_at(int step, int i)
{
    return 0.2f * cosf(0.9f * (float)i * (float)(step + 1)) + 0.05f * (float)(i % 3);
}

/* decay_all 1: every tensor decays; 0: the bias (no_decay) does not */
static void check_against_reference(int decay_all)
{
    printf("two Muon steps against a double-precision reference, decay_all=%d\n", decay_all);
    const double lr = 2e-3, scale = 10, mu = 0.95, wd = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    char err[LM_ERR_LEN];
    ParamSet ps;
    make_set(&ps);
    Optimizer o;
    CHECK(optim_init(&o, OPTIM_MUON, ps.total, 0.9f, 0.999f, 1e-8f, 0.1f, 0, err) == LM_OK, "%s",
          err);
    o.decay_all = decay_all;
    CHECK(optim_init_params(&o, &ps, 1, err) == LM_OK && o.n_muon == 2, "%s", err);
    double p[NTOT], buf[NTOT] = {0}, am[NB] = {0}, av[NB] = {0}, u[NW], x[NW];
    for (int i = 0; i < NTOT; i++)
        p[i] = ps.data[i];
    for (int step = 0; step < 2; step++) {
        for (int i = 0; i < NTOT; i++)
            ps.grad[i] = grad_at(step, i);
        optim_step(&o, &ps, (float)lr);
        static const struct { int off, rows, cols; } mats[2] = {{OW, 3, 5}, {OV, 5, 3}};
        for (int k = 0; k < 2; k++) {   /* the matrices: Muon */
            const int off = mats[k].off, rows = mats[k].rows, cols = mats[k].cols;
            for (int i = 0; i < NW; i++) {
                double g = ps.grad[off + i];
                buf[off + i] = mu * buf[off + i] + (1 - mu) * g;
                u[i] = (1 - mu) * g + mu * buf[off + i];
            }
            ref_orthogonalize(x, u, rows, cols);
            for (int i = 0; i < NW; i++)
                p[off + i] = p[off + i] * (1 - lr * scale * wd) -
                             lr * scale * sqrt(fmax(1.0, (double)rows / cols)) * x[i];
        }
        for (int i = 0; i < NB; i++) {  /* the bias: AdamW */
            double g = ps.grad[OB + i];
            if (decay_all)
                p[OB + i] *= 1 - lr * wd;
            am[i] = b1 * am[i] + (1 - b1) * g;
            av[i] = b2 * av[i] + (1 - b2) * g * g;
            double bc1 = 1 - pow(b1, step + 1), bc2 = 1 - pow(b2, step + 1);
            p[OB + i] -= lr / bc1 * am[i] / (sqrt(av[i]) / sqrt(bc2) + eps);
        }
    }
    float want[NTOT], want_buf[NTOT];
    for (int i = 0; i < NTOT; i++)
        want[i] = (float)p[i], want_buf[i] = (float)buf[i];
    /* float32 Newton-Schulz against double: the update's error ~1e-7 of lr*scale */
    CHECK_CLOSE("3x5 matrix after 2 steps", ps.data + OW, want + OW, NW, 0, 1e-5);
    CHECK_CLOSE("5x3 matrix after 2 steps", ps.data + OV, want + OV, NW, 0, 1e-5);
    CHECK_CLOSE("bias (AdamW) after 2 steps", ps.data + OB, want + OB, NB, 0, 1e-5);
    CHECK_CLOSE("3x5 momentum buffer", o.m + OW, want_buf + OW, NW, 0, 1e-7);
    CHECK_CLOSE("5x3 momentum buffer", o.m + OV, want_buf + OV, NW, 0, 1e-7);
    int v_zero = 1;
    for (int i = 0; i < NW; i++)
        v_zero &= o.v[OW + i] == 0 && o.v[OV + i] == 0;
    CHECK(v_zero && o.v[OB] > 0, "v is AdamW's alone");
    double moved = 0;
    for (int i = 0; i < NW; i++)
        moved += fabs((double)ps.data[i] - 0.3 * sin(1.7 * i + 0.4));
    CHECK(moved > 15 * 0.5 * lr * scale, "the matrix moved by %g in all", moved);
    optim_free(&o);
    params_free(&ps);
}

/* ---- the split does not matter ---- */

/* Two steps with [0, total) cut at `cut` into two ranges and the matrices shared among
 * n_workers (run one after the other here; test_replicas runs them on threads). */
static void steps_split(float *out, size_t cut, int n_workers)
{
    char err[LM_ERR_LEN];
    ParamSet ps;
    make_set(&ps);
    Optimizer o;
    CHECK(optim_init(&o, OPTIM_MUON, ps.total, 0.9f, 0.999f, 1e-8f, 0.1f, 0, err) == LM_OK, "%s",
          err);
    CHECK(optim_init_params(&o, &ps, n_workers, err) == LM_OK, "%s", err);
    for (int step = 0; step < 2; step++) {
        for (int i = 0; i < NTOT; i++)
            ps.grad[i] = grad_at(step, i);
        optim_step_begin(&o);
        optim_step_range(&o, &ps, 2e-3f, cut, ps.total);
        for (int w = n_workers - 1; w >= 0; w--)
            optim_step_matrices(&o, &ps, 2e-3f, w, n_workers);
        optim_step_range(&o, &ps, 2e-3f, 0, cut);
    }
    memcpy(out, ps.data, sizeof(float) * NTOT);
    memcpy(out + NTOT, o.m, sizeof(float) * NTOT);
    optim_free(&o);
    params_free(&ps);
}

static void test_split_independent(void)
{
    printf("slices and workers do not change the bits\n");
    float ref[2 * NTOT], got[2 * NTOT];
    steps_split(ref, 0, 1);
    static const struct { size_t cut; int workers; } ways[] = {{7, 2}, {OB, 2}, {OB + 3, 3},
                                                               {OV + 1, 1}, {NTOT, 2}};
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        steps_split(got, ways[i].cut, ways[i].workers);
        CHECK(!memcmp(ref, got, sizeof ref), "cut at %zu, %d workers: differs", ways[i].cut,
              ways[i].workers);
    }
}

int main(void)
{
    test_selection();
    test_newton_schulz();
    check_against_reference(0);
    check_against_reference(1);
    test_split_independent();
    return check_summary();
}
