/* test_optim.c — optimizers, gradient clipping and lr schedules against PyTorch 1.13:
 * Adam/AdamW parity with tests/fixtures/optim.safetensors, SGD with momentum against
 * numbers printed by torch (hard-coded below), clipping, NaN handling, and every
 * schedule at chosen steps against hand-computed values; at the end, sanity checks of
 * core/sysinfo.c (cores, memory, RSS, OpenBLAS, clocks). */
#include "check.h"
#include "err.h"
#include "optim.h"
#include "params.h"
#include "safetensors.h"
#include "schedule.h"
#include "sysinfo.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A ParamSet with tensors of the given sizes (1-D), allocated. */
static void make_params(ParamSet *ps, int n, const int *sizes, const int *no_decay)
{
    char err[LM_ERR_LEN], name[32];
    params_init(ps);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "t%d", i);
        params_add(ps, name, 1, &sizes[i], no_decay ? no_decay[i] : 0);
    }
    CHECK(params_alloc(ps, err) == LM_OK, "%s", err);
}

/* Replays the fixture's 3 clipped steps for prefix ("adam" or "adamw"). */
static void check_fixture(const SafeTensors *st, const char *prefix, OptimKind kind,
                          float b1, float b2, float eps, float wd)
{
    enum { N = 35 };   /* (5,7) */
    char err[LM_ERR_LEN], name[64];
    float want[N];
    int shape[2] = {5, 7};
    ParamSet ps;
    params_init(&ps);
    params_add(&ps, "w", 2, shape, 0);
    CHECK(params_alloc(&ps, err) == LM_OK, "%s", err);
    Optimizer o;
    CHECK(optim_init(&o, kind, ps.total, b1, b2, eps, wd, 0, err) == LM_OK, "%s", err);
    snprintf(name, sizeof name, "%s.p0", prefix);
    CHECK(safetensors_read_f32(st, name, ps.data, N, err) == LM_OK, "%s", err);
    for (int k = 0; k < 3; k++) {
        params_zero_grad(&ps);
        snprintf(name, sizeof name, "%s.g%d", prefix, k);
        CHECK(safetensors_read_f32(st, name, ps.grad, N, err) == LM_OK, "%s", err);
        float norm = optim_clip_grad_norm(ps.grad, ps.total, 0.5f);
        CHECK(isfinite(norm) && norm > 0, "%s step %d: norm %g", prefix, k, (double)norm);
        optim_step(&o, &ps, 1e-3f);
        snprintf(name, sizeof name, "%s.p%d", prefix, k + 1);
        CHECK(safetensors_read_f32(st, name, want, N, err) == LM_OK, "%s", err);
        char what[64];
        snprintf(what, sizeof what, "%s params after step %d", prefix, k + 1);
        /* tolerance from the brief: float32 rounding of the update, rtol 1e-6, atol 1e-7 */
        CHECK_CLOSE(what, ps.data, want, N, 1e-6, 1e-7);
    }
    CHECK(o.t == 3, "step count %ld", o.t);
    optim_free(&o);
    params_free(&ps);
}

static void test_fixture_parity(void)
{
    printf("Adam/AdamW parity with optim.safetensors\n");
    const char *dir = getenv("LMLAB_FIXTURES");
    char path[1024], err[LM_ERR_LEN];
    snprintf(path, sizeof path, "%s/optim.safetensors", dir ? dir : "tests/fixtures");
    SafeTensors *st = NULL;
    int rc = safetensors_open(path, &st, err);
    CHECK(rc == LM_OK, "%s", err);
    if (rc != LM_OK)
        return;
    check_fixture(st, "adam", OPTIM_ADAM, 0.9f, 0.98f, 1e-9f, 0.0f);
    check_fixture(st, "adamw", OPTIM_ADAMW, 0.9f, 0.999f, 1e-8f, 0.1f);
    safetensors_close(st);
}

/* SGD lr 0.1, momentum 0.9, weight decay 0.01, 3 steps. Reference from /usr/bin/python3,
 * torch 1.13: w = torch.tensor(W0), b = torch.tensor(B0) (requires_grad); for the three
 * (gw, gb) below: w.grad, b.grad = gw, gb; opt.step(); print with %.9g.
 * decay_all=1: torch.optim.SGD([w, b], lr=0.1, momentum=0.9, weight_decay=0.01).
 * decay_all=0: param groups [{'params':[w]}, {'params':[b], 'weight_decay':0.0}]. */
static void test_sgd_momentum(void)
{
    printf("SGD with momentum against torch\n");
    static const float w0[6] = {0.5f, -1.25f, 2.0f, 0.125f, -0.75f, 1.5f};
    static const float b0[3] = {0.25f, -0.5f, 1.0f};
    static const float gw[3][6] = {{0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f},
                                   {0.05f, 0.15f, -0.25f, 0.35f, -0.45f, 0.55f},
                                   {-0.3f, 0.2f, -0.1f, 0.0f, 0.1f, 0.2f}};
    static const float gb[3][3] = {{1.0f, -1.0f, 0.5f}, {-0.5f, 0.25f, 0.125f},
                                   {0.75f, -0.25f, -1.5f}};
    static const float want_w[6] = {0.490640402f, -1.2373544f,  1.96507859f,
                                    0.166082397f, -0.805651128f, 1.52951932f};
    static const float want_b_all[3] = {-0.0020714181f, -0.249052331f, 0.985347271f};
    static const float want_b_nodecay[3] = {-0.000999984331f, -0.25150001f, 0.990750015f};
    for (int decay_all = 1; decay_all >= 0; decay_all--) {
        ParamSet ps;
        char err[LM_ERR_LEN];
        make_params(&ps, 2, (const int[]){6, 3}, (const int[]){0, 1});
        memcpy(params_data(&ps, 0), w0, sizeof w0);
        memcpy(params_data(&ps, 1), b0, sizeof b0);
        Optimizer o;
        CHECK(optim_init(&o, OPTIM_SGD, ps.total, 0, 0, 0, 0.01f, 0.9f, err) == LM_OK, "%s", err);
        CHECK(o.m != NULL && o.v == NULL, "SGD with momentum keeps one buffer");
        o.decay_all = decay_all;
        for (int k = 0; k < 3; k++) {
            memcpy(params_grad(&ps, 0), gw[k], sizeof gw[k]);
            memcpy(params_grad(&ps, 1), gb[k], sizeof gb[k]);
            optim_step(&o, &ps, 0.1f);
        }
        /* float32 rounding of 3 steps on O(1) values: rtol 1e-6, atol 1e-7 */
        CHECK_CLOSE(decay_all ? "sgd weight (decay_all=1)" : "sgd weight (decay_all=0)",
                    params_data(&ps, 0), want_w, 6, 1e-6, 1e-7);
        CHECK_CLOSE(decay_all ? "sgd bias (decay_all=1)" : "sgd bias, no_decay (decay_all=0)",
                    params_data(&ps, 1), decay_all ? want_b_all : want_b_nodecay, 3, 1e-6,
                    1e-7);
        optim_free(&o);
        params_free(&ps);
    }
}

/* AdamW with decay_all=0: a no_decay tensor must move exactly as under Adam without
 * weight decay, a decayed one must differ. */
static void test_adamw_no_decay(void)
{
    printf("AdamW no_decay exclusion\n");
    char err[LM_ERR_LEN];
    ParamSet a, b;
    make_params(&a, 2, (const int[]){20, 5}, (const int[]){0, 1});
    make_params(&b, 2, (const int[]){20, 5}, (const int[]){0, 1});
    for (size_t i = 0; i < a.total; i++) {
        a.data[i] = b.data[i] = 0.5f + 0.01f * (float)i;
        a.grad[i] = b.grad[i] = 0.1f * sinf((float)i);
    }
    Optimizer oa, ob;
    CHECK(optim_init(&oa, OPTIM_ADAMW, a.total, 0.9f, 0.999f, 1e-8f, 0.1f, 0, err) == LM_OK,
          "%s", err);
    CHECK(optim_init(&ob, OPTIM_ADAM, b.total, 0.9f, 0.999f, 1e-8f, 0.0f, 0, err) == LM_OK,
          "%s", err);
    oa.decay_all = 0;
    for (int k = 0; k < 3; k++) {
        optim_step(&oa, &a, 1e-2f);
        optim_step(&ob, &b, 1e-2f);
    }
    CHECK(memcmp(params_data(&a, 1), params_data(&b, 1), 5 * sizeof(float)) == 0,
          "no_decay tensor must match Adam without decay bit for bit");
    CHECK(params_data(&a, 0)[3] < params_data(&b, 0)[3], "decayed tensor must shrink more");
    optim_free(&oa);
    optim_free(&ob);
    params_free(&a);
    params_free(&b);
}

/* A moment whose gradient stays 0 decays by beta each step into the subnormal range,
 * where, rounded, it stays (m = 4 x 2^-149: 0.9 m rounds back to it): every vector
 * holding one then took a microcode assist every step. The optimizer flushes such a
 * moment to zero. Over 1,500 steps (one gradient, then zeros), for Adam, AdamW and SGD
 * with momentum: no moment is ever subnormal, the flushed moments are exactly those the
 * unflushed formula (written out here, PyTorch's order) makes subnormal, and the weights
 * are that formula's to the bit. (Adam runs without its coupled decay here: that drives
 * a dead unit's weights to ~1e-34, where the flushed moments move them by ~1e-37.) */
static int subnormal(float x)
{
    return x != 0 && fabsf(x) < FLT_MIN;
}

static void test_subnormal_moments(void)
{
    printf("subnormal moments flushed\n");
    enum { N = 37, STEPS = 1500 };
    const OptimKind kinds[] = {OPTIM_ADAM, OPTIM_ADAMW, OPTIM_SGD};
    for (int ki = 0; ki < 3; ki++) {
        OptimKind kind = kinds[ki];
        char err[LM_ERR_LEN];
        ParamSet ps;
        make_params(&ps, 1, (const int[]){N}, (const int[]){0});
        Optimizer o;
        float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = kind == OPTIM_ADAMW ? 0.01f : 0;
        CHECK(optim_init(&o, kind, ps.total, b1, b2, eps, wd, 0.9f, err) == LM_OK, "%s", err);
        float p[N], m[N] = {0}, v[N] = {0};
        for (int i = 0; i < N; i++)
            p[i] = ps.data[i] = 0.5f - 0.02f * (float)i;
        int flushed = 0, bad = 0, differ = 0;
        float lr = 1e-2f;
        for (int t = 1; t <= STEPS; t++) {
            for (int i = 0; i < N; i++)   /* one gradient, then nothing (a dead unit) */
                ps.grad[i] = t == 1 ? 1e-3f * (float)(i + 1) : 0.0f;
            optim_step(&o, &ps, lr);
            double bc1 = 1.0 - pow(0.9, t), bc2 = 1.0 - pow(0.999, t);
            float neg_step = (float)(-((double)lr / bc1)), bc2s = (float)sqrt(bc2);
            float shrink = kind == OPTIM_ADAMW ? (float)(1.0 - (double)lr * 0.01) : 1.0f;
            float l2 = kind == OPTIM_ADAM ? wd : 0.0f;
            for (int i = 0; i < N; i++) {
                float g = ps.grad[i];
                if (kind == OPTIM_SGD) {   /* m = momentum m + g (m_1 = g) */
                    m[i] = t == 1 ? g : m[i] * 0.9f + g;
                    p[i] = p[i] + -lr * m[i];
                } else {
                    float pi = p[i] * shrink, gi = g + l2 * pi;
                    m[i] = m[i] * b1 + (float)(1.0 - 0.9) * gi;   /* 1 - beta as decimals */
                    v[i] = v[i] * b2 + (float)(1.0 - 0.999) * gi * gi;
                    p[i] = pi + neg_step * m[i] / (sqrtf(v[i]) / bc2s + eps);
                }
                float om = o.m[i], ov = o.v ? o.v[i] : 0;
                bad += subnormal(om) || subnormal(ov);
                if (subnormal(m[i]))
                    flushed += om == 0;
                else
                    differ += om != m[i];
                differ += p[i] != ps.data[i];
            }
        }
        CHECK(bad == 0, "%s: %d subnormal moments kept", optim_kind_name(kind), bad);
        CHECK(flushed > 0, "%s: the unflushed moments went subnormal (%d flushed)",
              optim_kind_name(kind), flushed);
        CHECK(differ == 0, "%s: %d weights or normal moments differ from the formula's",
              optim_kind_name(kind), differ);
        optim_free(&o);
        params_free(&ps);
    }
}

/* The vectorised body and the scalar tail must compute the same thing: 37 identical
 * elements (4 vectors of 8 + 5 tail) must stay bit-identical through 3 AdamW steps. */
static void test_lanes_agree(void)
{
    printf("vector body and scalar tail agree\n");
    char err[LM_ERR_LEN];
    ParamSet ps;
    make_params(&ps, 1, (const int[]){37}, NULL);
    Optimizer o;
    CHECK(optim_init(&o, OPTIM_ADAMW, ps.total, 0.9f, 0.999f, 1e-8f, 0.1f, 0, err) == LM_OK,
          "%s", err);
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 37; i++) {
            if (k == 0)
                ps.data[i] = 0.7f;
            ps.grad[i] = 0.3f - 0.2f * (float)k;
        }
        optim_step(&o, &ps, 3e-3f);
    }
    int same = 1;
    for (int i = 1; i < 37; i++)
        same &= ps.data[i] == ps.data[0] && o.v[i] == o.v[0];
    CHECK(same, "lanes differ: data[0] %.9g data[36] %.9g", (double)ps.data[0],
          (double)ps.data[36]);
    CHECK(ps.data[0] != 0.7f, "parameters moved");
    optim_free(&o);
    params_free(&ps);
}

static void test_clip(void)
{
    printf("gradient clipping\n");
    /* torch.nn.utils.clip_grad_norm_ on [3,4,0,12] with max_norm 10 returns 13 and
     * leaves [2.30769205, 3.07692289, 0, 9.2307682] (printed with %.9g) */
    float g[4] = {3, 4, 0, 12};
    const float want[4] = {2.30769205f, 3.07692289f, 0.0f, 9.2307682f};
    float norm = optim_clip_grad_norm(g, 4, 10.0f);
    CHECK(norm == 13.0f, "pre-clip norm %.9g, want 13", (double)norm);
    CHECK_CLOSE("clipped gradient vs torch", g, want, 4, 2e-7, 0);   /* ~1 ulp */
    float h[4] = {3, 4, 0, 12};
    norm = optim_clip_grad_norm(h, 4, 20.0f);
    CHECK(norm == 13.0f && h[0] == 3 && h[1] == 4 && h[3] == 12,
          "below max_norm: untouched, norm %g", (double)norm);
    norm = optim_clip_grad_norm(h, 4, 0.0f);
    CHECK(norm == 13.0f && h[3] == 12, "max_norm 0 only measures");
    /* a long vector exercises the 8-lane loop and its tail: 1001 ones -> sqrt(1001) */
    static float ones[1001];
    for (int i = 0; i < 1001; i++)
        ones[i] = 1.0f;
    norm = optim_clip_grad_norm(ones, 1001, 1.0f);
    CHECK(fabsf(norm - sqrtf(1001.0f)) < 1e-4f, "norm %g want %g", (double)norm,
          (double)sqrtf(1001.0f));
    double sq = 0;
    for (int i = 0; i < 1001; i++)
        sq += (double)ones[i] * ones[i];
    CHECK(fabs(sqrt(sq) - 1.0) < 1e-5, "clipped norm %g, want 1", sqrt(sq));
}

/* The divergence protocol the trainer follows: measure/clip, step only when finite. */
static int guarded_step(Optimizer *o, ParamSet *ps, float lr, float clip)
{
    float norm = optim_clip_grad_norm(ps->grad, ps->total, clip);
    if (!isfinite(norm))
        return LM_EDIVERGED;
    optim_step(o, ps, lr);
    return LM_OK;
}

static void test_nan(void)
{
    printf("NaN and Inf gradients\n");
    char err[LM_ERR_LEN];
    ParamSet ps;
    make_params(&ps, 1, (const int[]){10}, NULL);
    for (int i = 0; i < 10; i++) {
        ps.data[i] = (float)i;
        ps.grad[i] = 100.0f;
    }
    ps.grad[4] = NAN;
    float before[10];
    memcpy(before, ps.data, sizeof before);
    Optimizer o;
    CHECK(optim_init(&o, OPTIM_ADAM, ps.total, 0.9f, 0.999f, 1e-8f, 0, 0, err) == LM_OK, "%s",
          err);
    float norm = optim_clip_grad_norm(ps.grad, ps.total, 1.0f);
    CHECK(isnan(norm), "NaN gradient: norm %g, want NaN", (double)norm);
    CHECK(ps.grad[0] == 100.0f && ps.grad[9] == 100.0f, "NaN: other gradients untouched");
    CHECK(guarded_step(&o, &ps, 1e-3f, 1.0f) == LM_EDIVERGED, "NaN must be reported");
    CHECK(memcmp(before, ps.data, sizeof before) == 0, "NaN gradient: params unchanged");
    CHECK(o.t == 0 && o.m[0] == 0 && o.v[0] == 0, "NaN gradient: moments unchanged");
    ps.grad[4] = INFINITY;
    norm = optim_clip_grad_norm(ps.grad, ps.total, 1.0f);
    CHECK(isinf(norm) && ps.grad[0] == 100.0f, "Inf gradient: norm %g, untouched", (double)norm);
    ps.grad[4] = 100.0f;
    CHECK(guarded_step(&o, &ps, 1e-3f, 1.0f) == LM_OK, "finite gradient steps");
    CHECK(ps.data[1] < before[1] && o.t == 1, "finite gradient: params move");
    optim_free(&o);
    params_free(&ps);
}

static void test_init_and_parse(void)
{
    printf("init and names\n");
    char err[LM_ERR_LEN];
    Optimizer o;
    CHECK(optim_init(&o, OPTIM_ADAM, 10, 1.0f, 0.9f, 1e-8f, 0, 0, err) == LM_EARG,
          "beta1=1 must be refused");
    CHECK(strstr(err, "beta") != NULL, "message names the betas: %s", err);
    CHECK(optim_init(&o, OPTIM_SGD, 10, 0, 0, 0, -1.0f, 0, err) == LM_EARG,
          "negative weight decay must be refused");
    CHECK(optim_init(&o, OPTIM_SGD, 10, 0, 0, 0, 0, 0, err) == LM_OK && !o.m && !o.v,
          "plain SGD has no state");
    optim_free(&o);
    optim_free(NULL);
    OptimKind k = OPTIM_SGD;
    CHECK(optim_kind_parse("adamw", &k) == LM_OK && k == OPTIM_ADAMW, "parse adamw");
    CHECK(optim_kind_parse("adam", &k) == LM_OK && k == OPTIM_ADAM, "parse adam");
    CHECK(optim_kind_parse("sgd", &k) == LM_OK && k == OPTIM_SGD, "parse sgd");
    CHECK(optim_kind_parse("lion", &k) == LM_EARG && optim_kind_parse(NULL, &k) == LM_EARG,
          "unknown optimizer refused");
    CHECK(strcmp(optim_kind_name(OPTIM_ADAMW), "adamw") == 0, "name of adamw");
    SchedKind s = SCHED_CONSTANT;
    const char *names[] = {"constant", "step", "invsqrt", "cosine", "plateau", "linear"};
    for (int i = 0; i < 6; i++)
        CHECK(schedule_kind_parse(names[i], &s) == LM_OK && (int)s == i &&
                  strcmp(schedule_kind_name(s), names[i]) == 0,
              "schedule %s round trip", names[i]);
    CHECK(schedule_kind_parse("wsd", &s) == LM_EARG, "unknown schedule refused");
}

/* |got - want| <= 1e-6 relative (float32 rounding of a double formula) */
#define CHECK_LR(s, step, want)                                                       \
    do {                                                                              \
        double g_ = schedule_lr((s), (step)), w_ = (want);                            \
        CHECK(fabs(g_ - w_) <= 1e-6 * fabs(w_) + 1e-12, "lr(%ld) = %.9g, want %.9g",  \
              (long)(step), g_, w_);                                                  \
    } while (0)

static void test_schedules(void)
{
    printf("schedules\n");
    Schedule s;
    schedule_init(&s, SCHED_CONSTANT, 0.1f, 0, 4, 0, 0, 0, 0, 0);
    CHECK_LR(&s, 0, 0.025);
    CHECK_LR(&s, 1, 0.05);
    CHECK_LR(&s, 3, 0.1);
    CHECK_LR(&s, 4, 0.1);
    CHECK_LR(&s, 100000, 0.1);

    schedule_init(&s, SCHED_STEP, 0.1f, 0, 0, 10, 0.5f, 0.001f, 0, 0);
    CHECK_LR(&s, 0, 0.1);
    CHECK_LR(&s, 9, 0.1);
    CHECK_LR(&s, 10, 0.05);
    CHECK_LR(&s, 25, 0.025);
    CHECK_LR(&s, 1000, 0.001);   /* 0.1 * 0.5^100 floored at min_lr */

    schedule_init(&s, SCHED_INVSQRT, 1e-3f, 0, 100, 0, 0, 0, 0, 0);
    CHECK_LR(&s, 0, 1e-5);
    CHECK_LR(&s, 49, 5e-4);
    CHECK_LR(&s, 99, 1e-3);
    CHECK_LR(&s, 100, 1e-3);
    CHECK_LR(&s, 400, 5e-4);
    CHECK_LR(&s, 10000, 1e-4);

    schedule_init(&s, SCHED_COSINE, 1e-3f, 110, 10, 0, 0, 1e-5f, 0, 0);
    CHECK_LR(&s, 4, 5e-4);
    CHECK_LR(&s, 10, 1e-3);
    CHECK_LR(&s, 35, 1e-5 + (1e-3 - 1e-5) * 0.5 * (1 + cos(M_PI * 0.25)));
    CHECK_LR(&s, 60, (1e-3 + 1e-5) / 2);
    CHECK_LR(&s, 110, 1e-5);
    CHECK_LR(&s, 500, 1e-5);
    CHECK(schedule_lr(&s, 59) > schedule_lr(&s, 61), "cosine decreases");
    schedule_init(&s, SCHED_COSINE, 1e-3f, 0, 0, 0, 0, 1e-5f, 0, 0);
    CHECK_LR(&s, 50, 1e-3);   /* no horizon: stays at base */

    /* linear: the same ends as cosine, a straight line between them */
    schedule_init(&s, SCHED_LINEAR, 1e-3f, 110, 10, 0, 0, 1e-5f, 0, 0);
    CHECK_LR(&s, 4, 5e-4);
    CHECK_LR(&s, 10, 1e-3);
    CHECK_LR(&s, 35, 1e-5 + (1e-3 - 1e-5) * 0.75);
    CHECK_LR(&s, 60, (1e-3 + 1e-5) / 2);
    CHECK_LR(&s, 85, 1e-5 + (1e-3 - 1e-5) * 0.25);
    CHECK_LR(&s, 110, 1e-5);
    CHECK_LR(&s, 500, 1e-5);
}

static void test_plateau(void)
{
    printf("reduce on plateau\n");
    Schedule s;
    schedule_init(&s, SCHED_PLATEAU, 0.01f, 0, 2, 0, 0, 0.003f, 2, 0.5f);
    CHECK_LR(&s, 0, 0.005);   /* warmup */
    CHECK_LR(&s, 2, 0.01);
    schedule_observe(&s, 1.0);       /* first: improvement over +inf */
    schedule_observe(&s, 0.99995);   /* within 1e-4 relative: bad 1 */
    schedule_observe(&s, 1.1);       /* bad 2 = patience: not yet */
    CHECK_LR(&s, 10, 0.01);
    CHECK(s.bad_evals == 2, "bad evals %d", s.bad_evals);
    schedule_observe(&s, 1.2);       /* bad 3 > patience: halve */
    CHECK_LR(&s, 10, 0.005);
    CHECK(s.bad_evals == 0, "count restarts after a reduction");
    schedule_observe(&s, 0.5);       /* improvement */
    schedule_observe(&s, 0.6);
    schedule_observe(&s, NAN);       /* NaN counts as bad */
    CHECK_LR(&s, 10, 0.005);
    schedule_observe(&s, 0.7);       /* 0.0025 floored at min_lr 0.003 */
    CHECK_LR(&s, 10, 0.003);
    for (int i = 0; i < 6; i++)
        schedule_observe(&s, 0.9);
    CHECK_LR(&s, 10, 0.003);
    CHECK(s.best == 0.5, "best %g", s.best);
    schedule_init(&s, SCHED_COSINE, 0.01f, 100, 0, 0, 0, 0, 1, 0.5f);
    for (int i = 0; i < 5; i++)
        schedule_observe(&s, 1.0);
    CHECK_LR(&s, 0, 0.01);   /* observe is a no-op for other kinds */
}

/* ---- sysinfo (core/sysinfo.c has no test file of its own; its checks live here) ---- */
static void test_sysinfo(void)
{
    printf("sysinfo\n");
    int cores = sysinfo_cores();
    CHECK(cores >= 1 && cores <= 4096, "cores %d", cores);
    double total = sysinfo_mem_total(), avail = sysinfo_mem_available();
    CHECK(total > 64e6 && avail > 0 && avail <= total, "memory total %g available %g", total,
          avail);
    long rss = sysinfo_rss_kb(), peak = sysinfo_peak_rss_kb();
    CHECK(rss > 0 && peak >= rss, "rss %ld kB peak %ld kB", rss, peak);
    /* touching 64 MiB must raise the peak by most of it */
    size_t big = 64u << 20;
    char *mem = malloc(big);
    CHECK(mem != NULL, "malloc");
    if (mem) {
        memset(mem, 1, big);
        long peak2 = sysinfo_peak_rss_kb();
        CHECK(peak2 - peak > 48 * 1024, "peak rss grew by %ld kB, want > 48 MiB",
              peak2 - peak);
        free(mem);
    }
    char buf[256];
    CHECK(strstr(sysinfo_blas(buf, sizeof buf), "OpenBLAS") != NULL, "blas: %s", buf);
    sysinfo_set_threads(1);
    CHECK(strstr(sysinfo_blas(buf, sizeof buf), ", 1 threads") != NULL, "threads: %s", buf);
    sysinfo_set_threads(0);
    sysinfo_describe(buf, sizeof buf);
    printf("  %s\n", buf);
    CHECK(strstr(buf, " cores, ") && strstr(buf, "GiB, OpenBLAS ") &&
              !strstr(buf, "DYNAMIC_ARCH"), "describe: %s", buf);
    char small[12];
    sysinfo_describe(small, sizeof small);
    CHECK(strlen(small) == sizeof small - 1, "describe truncates: '%s'", small);
    double t0 = sysinfo_now();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double dt = sysinfo_now() - t0;
    CHECK(dt >= 0.019 && dt < 1.0, "monotonic clock measured %g s for a 20 ms sleep", dt);
    CHECK(sysinfo_wall() > 1.6e9, "wall clock %f", sysinfo_wall());
}

int main(void)
{
    test_subnormal_moments();
    test_fixture_parity();
    test_sgd_momentum();
    test_adamw_no_decay();
    test_lanes_agree();
    test_clip();
    test_nan();
    test_init_and_parse();
    test_schedules();
    test_plateau();
    test_sysinfo();
    return check_summary();
}
