/* test_attention.c — causal multi-head self-attention against PyTorch reference numbers,
 * finite differences (with and without attention dropout, across the fused kernel's
 * query and key tiles), the previous materialising kernel (kept here as a reference) at
 * several T, and its own key/value-cache decoder.
 * The REF_* arrays were produced by nn.MultiheadAttention(8, 2) in PyTorch 1.13 (float32,
 * one thread) with a causal -inf mask, B=2, T=5, the inputs and weights below (sin/cos
 * formulas of the flat row-major index i) and loss = sum(out * G); the script (kept
 * outside the repository, the project never runs Python) was:
 *   x[i] = sin(0.37 i) (B,T,d)   G[i] = cos(0.23 i) (B,T,d)
 *   in_proj_weight[i] = 0.3 sin(0.37 i + 1)   in_proj_bias[i] = 0.1 cos(0.53 i)
 *   out_proj.weight[i] = 0.3 cos(0.29 i + 0.5)   out_proj.bias[i] = 0.05 sin(0.71 i)
 *   y = mha(xt, xt, xt, attn_mask=triu(-inf, 1), need_weights=False)[0], xt = x (T,B,d)
 * and the arrays are (B,T,d) batch-major (transposed back from PyTorch's (T,B,d)).
 * Not a test of a whole MSA model (test_model does that against msa_lm). */
#include "attention.h"
#include "check.h"
#include "err.h"
#include "gemm_bf16.h"
#include "matmul.h"
#include "rng.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const float REF_OUT[80] = {
    -3.08205366e-01f, 2.31977746e-01f, 8.60518366e-02f, -2.06881776e-01f, 3.17760438e-01f, -1.83186829e-01f,
    -1.25405669e-01f, 2.24541396e-01f, 1.63491722e-03f, 1.45599887e-01f, -1.06132105e-01f, 1.41272232e-01f,
    3.57198343e-02f, -1.47169918e-01f, 1.07575893e-01f, -1.28822431e-01f, -2.29811668e-01f, 1.65856495e-01f,
    9.77226645e-02f, -1.56657502e-01f, 2.37678513e-01f, -1.24330550e-01f, -1.25492573e-01f, 1.65803462e-01f,
    -2.35047936e-03f, 1.22361645e-01f, -7.04936236e-02f, 1.15966871e-01f, 3.45500708e-02f, -1.20271236e-01f,
    7.21065998e-02f, -1.07407987e-01f, -1.95473522e-01f, 1.65472940e-01f, 6.39069751e-02f, -1.10213146e-01f,
    2.08231851e-01f, -1.30665272e-01f, -8.74173343e-02f, 1.20275483e-01f, -6.77740872e-02f, 1.89724907e-01f,
    -9.68263000e-02f, 8.44716579e-02f, 1.03782736e-01f, -1.83078676e-01f, 8.84246528e-02f, -6.68276250e-02f,
    -1.92275003e-01f, 1.89301565e-01f, 2.82512121e-02f, -8.54745954e-02f, 2.10190982e-01f, -1.58072352e-01f,
    -5.20449765e-02f, 9.95014310e-02f, 4.06235158e-02f, 6.84056878e-02f, -3.99735905e-02f, 1.28351137e-01f,
    -1.28387120e-02f, -6.81066811e-02f, 4.84414436e-02f, -1.27337962e-01f, -1.81765825e-01f, 1.99895218e-01f,
    3.31227109e-03f, -6.20986558e-02f, 2.03289255e-01f, -1.72047436e-01f, -2.61077061e-02f, 7.81469941e-02f,
    1.75862107e-02f, 5.01534641e-02f, 7.92527571e-03f, 8.13597143e-02f, 3.26994527e-03f, -4.30570878e-02f,
    -1.78759545e-03f, -8.39700103e-02f,
};
static const float REF_DX[80] = {
    -3.75596881e-02f, -4.45200652e-02f, -4.54548523e-02f, -4.02375460e-02f, -2.95742676e-02f, -1.49082690e-02f,
    1.77551061e-03f, 1.82189755e-02f, 9.49789584e-03f, -2.35591084e-03f, -1.38908476e-02f, -2.35457309e-02f,
    -3.00138053e-02f, -3.24196555e-02f, -3.04376557e-02f, -2.43360642e-02f, 4.63220291e-03f, 1.37025286e-02f,
    2.09182762e-02f, 2.53028385e-02f, 2.62627713e-02f, 2.36681700e-02f, 1.78701896e-02f, 9.65356268e-03f,
    -9.97644290e-03f, -1.20150773e-02f, -1.24275265e-02f, -1.11579709e-02f, -8.37823283e-03f, -4.46454249e-03f,
    5.34029678e-05f, 4.56412090e-03f, -3.23753827e-03f, -1.50483036e-02f, -2.48223469e-02f, -3.12368069e-02f,
    -3.34235057e-02f, -3.10864970e-02f, -2.45420709e-02f, -1.46759944e-02f, 3.46767046e-02f, 3.95856947e-02f,
    3.91369313e-02f, 3.33911851e-02f, 2.31260806e-02f, 9.73098353e-03f, -4.98116389e-03f, -1.90191343e-02f,
    -3.82591784e-02f, -2.72777118e-02f, -1.26043390e-02f, 3.77497450e-03f, 1.96433589e-02f, 3.28531079e-02f,
    4.16163504e-02f, 4.47470099e-02f, 2.17730179e-02f, 1.74901076e-02f, 1.08399931e-02f, 2.72273365e-03f,
    -5.76302782e-03f, -1.34687945e-02f, -1.93516258e-02f, -2.26153024e-02f, 1.67406686e-02f, 1.70944184e-02f,
    1.51345115e-02f, 1.11262277e-02f, 5.61205857e-03f, -6.61678612e-04f, -6.84585981e-03f, -1.21034831e-02f,
    -1.11483494e-02f, 3.53395334e-03f, 1.77379493e-02f, 2.95411926e-02f, 3.73461768e-02f, 4.00965363e-02f,
    3.74200158e-02f, 2.96788644e-02f,
};
static const float REF_DW_QKV[192] = {
    3.12487353e-02f, 2.50402875e-02f, 1.54427579e-02f, 3.75512056e-03f, -8.44075531e-03f, -1.94942113e-02f,
    -2.79092211e-02f, -3.25468481e-02f, -3.28923278e-02f, -2.57765036e-02f, -1.51719535e-02f, -2.51394394e-03f,
    1.04843136e-02f, 2.20635682e-02f, 3.06566209e-02f, 3.51004452e-02f, 3.34542468e-02f, 2.56650466e-02f,
    1.44022098e-02f, 1.19009672e-03f, -1.21830925e-02f, -2.39073522e-02f, -3.23958658e-02f, -3.64997499e-02f,
    -3.29160169e-02f, -2.47095954e-02f, -1.31588448e-02f, 1.72888453e-04f, 1.34812249e-02f, 2.49649379e-02f,
    3.30697708e-02f, 3.66987586e-02f, 1.36922374e-02f, 2.39896532e-02f, 3.10401805e-02f, 3.38895656e-02f,
    3.21521536e-02f, 2.60631032e-02f, 1.64465308e-02f, 4.60400013e-03f, -1.41551103e-02f, -2.14456581e-02f,
    -2.58336347e-02f, -2.67251488e-02f, -2.39995420e-02f, -1.80257037e-02f, -9.61218122e-03f, 1.02313745e-04f,
    1.41524952e-02f, 1.81964207e-02f, 1.97775438e-02f, 1.86818708e-02f, 1.50576951e-02f, 9.39552858e-03f,
    2.46172491e-03f, -4.80526453e-03f, -1.36844562e-02f, -1.43487742e-02f, -1.30710537e-02f, -1.00242272e-02f,
    -5.62066911e-03f, -4.56378242e-04f, 4.76967683e-03f, 9.35018342e-03f, -1.04455128e-02f, -4.39541321e-03f,
    2.24958989e-03f, 8.59011896e-03f, 1.37680173e-02f, 1.70824770e-02f, 1.80849060e-02f, 1.66396257e-02f,
    6.01786003e-03f, 8.27659969e-04f, -4.47456120e-03f, -9.17117111e-03f, -1.26265064e-02f, -1.43729020e-02f,
    -1.41739938e-02f, -1.20567018e-02f, 1.29188615e-04f, 3.30804591e-03f, 6.03917474e-03f, 7.95292947e-03f,
    8.79029278e-03f, 8.43792967e-03f, 6.94353506e-03f, 4.50936425e-03f, -5.40989777e-03f, -7.02857925e-03f,
    -7.69597525e-03f, -7.32175726e-03f, -5.95657434e-03f, -3.78519646e-03f, -1.10151002e-03f, 1.73126068e-03f,
    -1.85365286e-02f, 1.49127934e-03f, 2.13172510e-02f, 3.82580273e-02f, 5.00207655e-02f, 5.50134331e-02f,
    5.25602773e-02f, 4.29933444e-02f, 1.87958311e-02f, -6.87009830e-04f, -2.00768691e-02f, -3.67494076e-02f,
    -4.84481007e-02f, -5.35895638e-02f, -5.14779352e-02f, -4.23990041e-02f, -1.29988464e-02f, 7.13418517e-03f,
    2.63016373e-02f, 4.19092886e-02f, 5.18447086e-02f, 5.47632053e-02f, 5.02697416e-02f, 3.89725119e-02f,
    1.29384985e-02f, -5.10171894e-03f, -2.24514455e-02f, -3.67624722e-02f, -4.60978672e-02f, -4.91941385e-02f,
    -4.56322171e-02f, -3.58941816e-02f, 2.26265546e-02f, 2.60319021e-02f, 2.59139631e-02f, 2.22886745e-02f,
    1.56467259e-02f, 6.88707409e-03f, -2.80471984e-03f, -1.21168876e-02f, 3.50567661e-02f, 2.78695635e-02f,
    1.69103574e-02f, 3.66239739e-03f, -1.00812400e-02f, -2.24604290e-02f, -3.17997001e-02f, -3.68350409e-02f,
    4.45593409e-02f, 2.73797605e-02f, 6.49445923e-03f, -1.52698448e-02f, -3.49674448e-02f, -4.99323644e-02f,
    -5.81391715e-02f, -5.84771000e-02f, 5.03406599e-02f, 2.46034414e-02f, -4.46373690e-03f, -3.29267681e-02f,
    -5.69333285e-02f, -7.32342228e-02f, -7.96231925e-02f, -7.52355531e-02f, -3.85087207e-02f, -5.25548048e-02f,
    -5.94878532e-02f, -5.83694726e-02f, -4.93510813e-02f, -3.36532593e-02f, -1.34006012e-02f, 8.66575073e-03f,
    -7.77313933e-02f, -9.12841633e-02f, -9.24820602e-02f, -8.11629072e-02f, -5.88587672e-02f, -2.85883546e-02f,
    5.55134285e-03f, 3.89396958e-02f, -1.10462502e-01f, -1.22390144e-01f, -1.17752835e-01f, -9.71782655e-02f,
    -6.34510517e-02f, -2.11360492e-02f, 2.40396373e-02f, 6.59616590e-02f, -1.33968726e-01f, -1.43275082e-01f,
    -1.33189827e-01f, -1.05077982e-01f, -6.27443120e-02f, -1.19184805e-02f, 4.05204445e-02f, 8.74751508e-02f,
};
static const float REF_DB_QKV[24] = {
    -1.07325595e-02f, 1.06428303e-02f, -1.02031110e-02f, 9.42785479e-03f, 8.93958006e-03f, -1.42104924e-02f,
    1.90141015e-02f, -2.31924094e-02f, -2.32830644e-09f, 0.00000000e+00f, -1.86264515e-09f, 1.62981451e-09f,
    1.86264515e-09f, -7.45058060e-09f, 7.91624188e-09f, -1.39698386e-08f, 2.52727419e-02f, 2.16614529e-02f,
    1.62411705e-02f, 9.46465135e-03f, 1.89760327e-03f, -5.82787395e-03f, -1.30667090e-02f, -1.92142576e-02f,
};
static const float REF_DW_O[64] = {
    4.23073292e-01f, -1.02122247e-01f, -1.83060527e-01f, 5.04691422e-01f, -8.54895711e-01f, 8.82200658e-01f,
    -8.86223674e-01f, 8.34741890e-01f, 5.34019589e-01f, -1.61525488e-01f, -1.58528209e-01f, 5.36053181e-01f,
    -8.65642071e-01f, 9.29237366e-01f, -9.70731199e-01f, 9.41392779e-01f, 6.16840363e-01f, -2.12421656e-01f,
    -1.25646949e-01f, 5.39182544e-01f, -8.30797195e-01f, 9.27333653e-01f, -1.00411308e+00f, 9.98463392e-01f,
    6.67174101e-01f, -2.52130210e-01f, -8.61480236e-02f, 5.13914585e-01f, -7.52196968e-01f, 8.76589894e-01f,
    -9.84611273e-01f, 1.00294781e+00f, 6.82369471e-01f, -2.78559625e-01f, -4.21119928e-02f, 4.61580276e-01f,
    -6.33980393e-01f, 7.79678822e-01f, -9.13252711e-01f, 9.54609573e-01f, 6.61626399e-01f, -2.90318102e-01f,
    4.14213538e-03f, 3.84935677e-01f, -4.82373774e-01f, 6.41703784e-01f, -7.93795645e-01f, 8.55994642e-01f,
    6.06037319e-01f, -2.86786407e-01f, 5.01779616e-02f, 2.88017809e-01f, -3.05361927e-01f, 4.69932318e-01f,
    -6.32531524e-01f, 7.12296903e-01f, 5.18530011e-01f, -2.68150479e-01f, 9.35710222e-02f, 1.75930649e-01f,
    -1.12267546e-01f, 2.73410708e-01f, -4.37953800e-01f, 5.31084538e-01f,
};
static const float REF_DB_O[8] = {
    -1.15772635e-01f, -1.70883775e-01f, -2.16994852e-01f, -2.51677573e-01f, -2.73104995e-01f, -2.80148834e-01f,
    -2.72438049e-01f, -2.50378609e-01f,
};

typedef struct {
    AttentionDims ad;
    int B, T;
    float *x, *G, *wq, *bq, *wo, *bo, *out, *act, *scr;
    float *dx, *dwq, *dbq, *dwo, *dbo;
    float p;          /* attention dropout */
    uint64_t seed;    /* reseeded before every forward: the same dropout mask each time */
} Case;

static void case_alloc(Case *c, int d, int heads, int B, int T)
{
    memset(c, 0, sizeof *c);
    c->ad = (AttentionDims){d, heads};
    c->B = B, c->T = T;
    long nx = (long)B * T * d;
    c->x = malloc(sizeof(float) * nx), c->G = malloc(sizeof(float) * nx);
    c->out = malloc(sizeof(float) * nx), c->dx = calloc(nx, sizeof(float));
    c->wq = malloc(sizeof(float) * 3 * d * d), c->dwq = calloc(3 * d * d, sizeof(float));
    c->bq = malloc(sizeof(float) * 3 * d), c->dbq = calloc(3 * d, sizeof(float));
    c->wo = malloc(sizeof(float) * d * d), c->dwo = calloc(d * d, sizeof(float));
    c->bo = malloc(sizeof(float) * d), c->dbo = calloc(d, sizeof(float));
    c->act = malloc(sizeof(float) * attention_act_floats(&c->ad, B, T));
    c->scr = malloc(sizeof(float) * attention_scratch_floats(&c->ad, B, T));
}

static void case_free(Case *c)
{
    free(c->x), free(c->G), free(c->out), free(c->dx), free(c->wq), free(c->dwq);
    free(c->bq), free(c->dbq), free(c->wo), free(c->dwo), free(c->bo), free(c->dbo);
    free(c->act), free(c->scr);
}

static double case_loss(Case *c)
{
    Rng r;
    rng_seed(&r, c->seed);
    attention_forward_dropout(&c->ad, c->out, c->act, c->x, c->wq, c->bq, c->wo, c->bo, c->p,
                              &r, c->B, c->T);
    double s = 0;
    for (long i = 0; i < (long)c->B * c->T * c->ad.d; i++)
        s += (double)c->out[i] * c->G[i];
    return s;
}

static void case_backward(Case *c)
{
    case_loss(c);
    attention_backward(&c->ad, c->dx, c->dwq, c->dbq, c->dwo, c->dbo, c->scr, c->G, c->act,
                       c->x, c->wq, c->wo, c->B, c->T);
}

/* Central differences (eps 1e-3, loss accumulated in double) over every stride-th entry
 * of p against an. Tolerance |fd - an| <= 2e-3 + 1e-2 |an|. */
static void fd_check(const char *what, Case *c, float *p, const float *an, long n, int stride)
{
    const float eps = 1e-3f;
    long m = 0;
    float *fd = malloc(sizeof(float) * n), *a = malloc(sizeof(float) * n);
    for (long i = 0; i < n; i += stride) {
        float keep = p[i];
        p[i] = keep + eps;
        double lp = case_loss(c);
        p[i] = keep - eps;
        double lm = case_loss(c);
        p[i] = keep;
        fd[m] = (float)((lp - lm) / (2.0 * eps));
        a[m++] = an[i];
    }
    CHECK_CLOSE(what, a, fd, m, 1e-2, 2e-3);
    free(fd), free(a);
}

static void fill_formula(Case *c)
{
    int d = c->ad.d;
    long nx = (long)c->B * c->T * d;
    for (long i = 0; i < nx; i++) {
        c->x[i] = sinf(0.37f * i);
        c->G[i] = cosf(0.23f * i);
    }
    for (int i = 0; i < 3 * d * d; i++)
        c->wq[i] = 0.3f * sinf(0.37f * i + 1);
    for (int i = 0; i < 3 * d; i++)
        c->bq[i] = 0.1f * cosf(0.53f * i);
    for (int i = 0; i < d * d; i++)
        c->wo[i] = 0.3f * cosf(0.29f * i + 0.5f);
    for (int i = 0; i < d; i++)
        c->bo[i] = 0.05f * sinf(0.71f * i);
}

/* Random inputs; weights U(-w, w) with w = 0.5, or 1/sqrt(d) when `init` (as a model's
 * initialisation: scores of order 1, softmax neither flat nor one-hot). */
static void fill_random_w(Case *c, uint64_t seed, int init)
{
    Rng r;
    int d = c->ad.d;
    float w = init ? 1.0f / sqrtf((float)d) : 0.5f;
    rng_seed(&r, seed);
    rng_fill_normal(&r, c->x, (long)c->B * c->T * d, 0, 1);
    rng_fill_normal(&r, c->G, (long)c->B * c->T * d, 0, 1);
    rng_fill_uniform(&r, c->wq, 3L * d * d, -w, w);
    rng_fill_uniform(&r, c->bq, 3L * d, -0.2f, 0.2f);
    rng_fill_uniform(&r, c->wo, (long)d * d, -w, w);
    rng_fill_uniform(&r, c->bo, d, -0.2f, 0.2f);
}

static void fill_random(Case *c, uint64_t seed)
{
    fill_random_w(c, seed, 0);
}

/* PyTorch parity: rtol 1e-5, atol 1e-5 (float32 rounding; PyTorch scales q before the
 * product, we scale the product). */
static void test_pytorch(void)
{
    Case c;
    case_alloc(&c, 8, 2, 2, 5);
    fill_formula(&c);
    case_backward(&c);
    printf(" parity with nn.MultiheadAttention (d=8 heads=2 B=2 T=5)\n");
    CHECK_CLOSE("output", c.out, REF_OUT, 80, 1e-5, 1e-5);
    CHECK_CLOSE("grad_input", c.dx, REF_DX, 80, 1e-5, 1e-5);
    CHECK_CLOSE("grad.in_proj_weight", c.dwq, REF_DW_QKV, 192, 1e-5, 1e-5);
    CHECK_CLOSE("grad.in_proj_bias", c.dbq, REF_DB_QKV, 24, 1e-5, 1e-5);
    CHECK_CLOSE("grad.out_proj.weight", c.dwo, REF_DW_O, 64, 1e-5, 1e-5);
    CHECK_CLOSE("grad.out_proj.bias", c.dbo, REF_DB_O, 8, 1e-5, 1e-5);
    case_free(&c);
}

/* ---- the previous kernel, kept here as the reference the fused one must equal ----
 * (lmlab's attention.c before the fused kernel, without dropout): per (batch, head) the
 * (T,T) weights P = softmax(alpha q k^T + mask) materialised with sgemm, o = P v; the
 * backward dS = P o (dP - rowsum(dP o P)). All in double-free float, as it was. */
static void ref_head_forward(float *P, float *o, const float *q, const float *k,
                             const float *v, int T, int hd, int ldq, int ldo, float alpha)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, alpha, q, ldq, k, ldq,
                0.0f, P, T);
    for (int i = 0; i < T; i++) {
        float *row = P + (size_t)i * T, m = row[0], sum = 0;
        for (int j = 1; j <= i; j++)
            m = row[j] > m ? row[j] : m;
        for (int j = 0; j <= i; j++)
            sum += row[j] = expf(row[j] - m);
        for (int j = 0; j < T; j++)
            row[j] = j <= i ? row[j] / sum : 0.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, P, T, v, ldq, 0.0f,
                o, ldo);
}

/* out and the (batch, head) weights P (B*H,T,T) and head outputs O (B,T,d) */
static void ref_forward(const Case *c, float *out, float *qkv, float *P, float *O)
{
    int d = c->ad.d, H = c->ad.heads, hd = d / H, T = c->T, M = c->B * T;
    for (int r = 0; r < M; r++)
        memcpy(qkv + (size_t)r * 3 * d, c->bq, sizeof(float) * 3 * d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, 3 * d, d, 1.0f, c->x, d, c->wq, d,
                1.0f, qkv, 3 * d);
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < H; h++) {
            const float *q = qkv + (size_t)b * T * 3 * d + (size_t)h * hd;
            ref_head_forward(P + ((size_t)b * H + h) * T * T, O + (size_t)b * T * d + h * hd, q,
                             q + d, q + 2 * d, T, hd, 3 * d, d, 1.0f / sqrtf((float)hd));
        }
    for (int r = 0; r < M; r++)
        memcpy(out + (size_t)r * d, c->bo, sizeof(float) * d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, d, d, 1.0f, O, d, c->wo, d, 1.0f,
                out, d);
}

/* The reference's gradients of sum(out * G), into g (dx, dwq, dbq, dwo, dbo of a Case). */
static void ref_backward(const Case *c, Case *g, const float *qkv, float *P, const float *O)
{
    int d = c->ad.d, H = c->ad.heads, hd = d / H, T = c->T, M = c->B * T;
    float alpha = 1.0f / sqrtf((float)hd);
    float *dO = calloc((size_t)M * d, sizeof(float)), *dqkv = calloc((size_t)M * 3 * d, 4);
    float *dp = malloc(sizeof(float) * (size_t)T * T);
    for (int r = 0; r < M; r++)
        for (int j = 0; j < d; j++)
            g->dbo[j] += c->G[(size_t)r * d + j];
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, M, 1.0f, c->G, d, O, d, 1.0f,
                g->dwo, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, d, d, 1.0f, c->G, d, c->wo, d,
                0.0f, dO, d);
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < H; h++) {
            size_t off = (size_t)b * T * 3 * d + (size_t)h * hd, oo = (size_t)b * T * d + h * hd;
            const float *Pb = P + ((size_t)b * H + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, 1.0f, dO + oo, d,
                        qkv + off + 2 * d, 3 * d, 0.0f, dp, T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, Pb, T, dO + oo,
                        d, 1.0f, dqkv + off + 2 * d, 3 * d);
            for (int i = 0; i < T; i++) {
                float dot = 0;
                for (int j = 0; j <= i; j++)
                    dot += dp[(size_t)i * T + j] * Pb[(size_t)i * T + j];
                for (int j = 0; j < T; j++)
                    dp[(size_t)i * T + j] = j <= i ? Pb[(size_t)i * T + j] *
                                                     (dp[(size_t)i * T + j] - dot) : 0.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, alpha, dp, T,
                        qkv + off + d, 3 * d, 1.0f, dqkv + off, 3 * d);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, alpha, dp, T,
                        qkv + off, 3 * d, 1.0f, dqkv + off + d, 3 * d);
        }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 3 * d, d, M, 1.0f, dqkv, 3 * d, c->x,
                d, 1.0f, g->dwq, d);
    for (int r = 0; r < M; r++)
        for (int j = 0; j < 3 * d; j++)
            g->dbq[j] += dqkv[(size_t)r * 3 * d + j];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, d, 3 * d, 1.0f, dqkv, 3 * d,
                c->wq, d, 1.0f, g->dx, d);
    free(dO), free(dqkv), free(dp);
}

static double max_abs(const float *x, long n)
{
    double m = 0;
    for (long i = 0; i < n; i++)
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

/* The fused kernel equals the materialising reference within float rounding (each
 * element within 1e-4 relative plus 1e-5 of its array's largest magnitude), at T below,
 * at and across the 32-row and 64-key tiles, and for head widths that are not a multiple
 * of 8; weights as a model initialises them. */
static void test_vs_reference(int d, int heads, int B, int T)
{
    Case c, g;
    case_alloc(&c, d, heads, B, T);
    case_alloc(&g, d, heads, B, T);
    fill_random_w(&c, 7 + T + d, 1);
    case_backward(&c);
    long M = (long)B * T;
    float *out = malloc(sizeof(float) * M * d), *qkv = malloc(sizeof(float) * M * 3 * d);
    float *P = malloc(sizeof(float) * (size_t)B * heads * T * T), *O = malloc(sizeof(float) * M * d);
    ref_forward(&c, out, qkv, P, O);
    ref_backward(&c, &g, qkv, P, O);
    printf(" fused == reference d=%d heads=%d B=%d T=%d\n", d, heads, B, T);
    CHECK_CLOSE("output", c.out, out, M * d, 1e-4, 1e-5 * max_abs(out, M * d));
    CHECK_CLOSE("d input", c.dx, g.dx, M * d, 1e-4, 1e-5 * max_abs(g.dx, M * d));
    CHECK_CLOSE("d in_proj_weight", c.dwq, g.dwq, 3L * d * d, 1e-4,
                1e-5 * max_abs(g.dwq, 3L * d * d));
    CHECK_CLOSE("d in_proj_bias", c.dbq, g.dbq, 3L * d, 1e-4, 1e-5 * max_abs(g.dbq, 3L * d));
    CHECK_CLOSE("d out_proj.weight", c.dwo, g.dwo, (long)d * d, 1e-4,
                1e-5 * max_abs(g.dwo, (long)d * d));
    CHECK_CLOSE("d out_proj.bias", c.dbo, g.dbo, d, 1e-4, 1e-5 * max_abs(g.dbo, d));
    free(out), free(qkv), free(P), free(O);
    case_free(&c), case_free(&g);
}

/* What the forward keeps is O(T): no (T,T) matrix, at any T. */
static void test_memory_linear(void)
{
    AttentionDims ad = {128, 4};
    size_t a1 = attention_act_floats(&ad, 1, 1024), a4 = attention_act_floats(&ad, 1, 4096);
    size_t s4 = attention_scratch_floats(&ad, 1, 4096);
    printf(" memory: act %zu floats at T=1024, %zu at T=4096; scratch %zu at T=4096\n", a1, a4,
           s4);
    CHECK(a4 <= 4 * a1 + 64, "act grows faster than T: %zu at 4096 vs %zu at 1024", a4, a1);
    CHECK(a4 < (size_t)4096 * 4096 && s4 < (size_t)4096 * 4096,
          "act %zu / scratch %zu floats hold a (T,T) matrix", a4, s4);
}

static void test_fd(int d, int heads, int B, int T, float p, int xstride, int init)
{
    Case c;
    case_alloc(&c, d, heads, B, T);
    fill_random_w(&c, 99 + T + heads, init);
    c.p = p;
    c.seed = 4242;
    case_backward(&c);
    printf(" FD d=%d heads=%d B=%d T=%d dropout=%g\n", d, heads, B, T, p);
    fd_check("d input", &c, c.x, c.dx, (long)B * T * d, xstride);
    fd_check("d in_proj_weight", &c, c.wq, c.dwq, 3L * d * d, 1);
    fd_check("d in_proj_bias", &c, c.bq, c.dbq, 3L * d, 1);
    fd_check("d out_proj.weight", &c, c.wo, c.dwo, (long)d * d, 1);
    fd_check("d out_proj.bias", &c, c.bo, c.dbo, d, 1);
    case_free(&c);
}

/* Dropout: about p of the causal weights are dropped, and p = 0 gives attention_forward. */
static void test_dropout_stats(void)
{
    Case c;
    int T = 100;
    case_alloc(&c, 8, 2, 1, T);
    fill_random(&c, 5);
    c.p = 0.25f;
    c.seed = 11;
    case_loss(&c);
    long dropped = 0, total = 0;
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++, total++)
                dropped += !attention_weight_kept(&c.ad, c.act, 1, T, 0, h, i, j);
    double frac = (double)dropped / total;
    printf(" dropout p=0.25: dropped fraction %.4f of %ld\n", frac, total);
    CHECK(fabs(frac - 0.25) < 0.02, "dropped fraction %.4f, expected 0.25 +- 0.02", frac);
    float *ref = malloc(sizeof(float) * T * 8);
    attention_forward(&c.ad, ref, c.act, c.x, c.wq, c.bq, c.wo, c.bo, 1, T);
    c.p = 0;
    case_loss(&c);
    CHECK_CLOSE("p=0 equals attention_forward", c.out, ref, (long)T * 8, 0, 1e-9);
    free(ref);
    case_free(&c);
}

/* Decoding with the cache equals the full forward, tol 1e-4 (T spans several row blocks). */
static void test_step(int d, int heads, int T)
{
    Case c;
    case_alloc(&c, d, heads, 1, T);
    fill_random(&c, 31 + T);
    attention_forward(&c.ad, c.out, c.act, c.x, c.wq, c.bq, c.wo, c.bo, 1, T);
    AttentionCache *cache = attention_cache_create(&c.ad, T);
    CHECK(cache != NULL, "cache_create");
    if (!cache)
        return;
    float *so = malloc(sizeof(float) * T * d);
    int rc = LM_OK;
    for (int pass = 0; pass < 2; pass++) {   /* the second pass checks reset */
        attention_cache_reset(cache);
        for (int t = 0; t < T && rc == LM_OK; t++)
            rc = attention_step(&c.ad, cache, so + (long)t * d, c.x + (long)t * d, c.wq, c.bq,
                                c.wo, c.bo, t);
    }
    CHECK(rc == LM_OK, "attention_step failed");
    printf(" step d=%d heads=%d T=%d\n", d, heads, T);
    CHECK_CLOSE("step output == forward", so, c.out, (long)T * d, 1e-4, 1e-4);
    float junk[64];
    CHECK(attention_step(&c.ad, cache, junk, c.x, c.wq, c.bq, c.wo, c.bo, T) == LM_EARG,
          "t >= max_T is LM_EARG");
    /* going back: re-feeding position 3 gives the same row */
    rc = attention_step(&c.ad, cache, junk, c.x + 3L * d, c.wq, c.bq, c.wo, c.bo, 3);
    CHECK(rc == LM_OK, "step back to t=3");
    CHECK_CLOSE("rewound step t=3", junk, so + 3L * d, d, 1e-6, 1e-6);
    CHECK(attention_step(&c.ad, cache, junk, c.x, c.wq, c.bq, c.wo, c.bo, 5) == LM_EARG,
          "skipping ahead is LM_EARG");
    attention_cache_destroy(cache);
    attention_cache_destroy(NULL);
    free(so);
    case_free(&c);
}

/* In a bf16 scope the projections run bf16 (matmul.h): the output and every gradient stay
 * within bf16 rounding of fp32 (2% of the array's largest magnitude, 5% relative) and are
 * not the fp32 bits (the products really were bf16). The emulated kernel where the CPU
 * has no AVX512-BF16. */
static void test_bf16(int d, int heads, int B, int T)
{
    Case c, h;
    case_alloc(&c, d, heads, B, T);
    case_alloc(&h, d, heads, B, T);
    fill_random_w(&c, 5 + T, 1);
    fill_random_w(&h, 5 + T, 1);
    case_backward(&c);
    char err[LM_ERR_LEN] = "";
    int rc = matmul_bf16_attach(h.wq, (size_t)3 * d * d, err);
    CHECK(rc == LM_OK, "attach: %s", err);
    const void *prev = matmul_scope_enter(h.wq);
    case_backward(&h);
    matmul_scope_exit(prev);
    matmul_bf16_detach(h.wq);
    long M = (long)B * T;
    printf(" bf16 projections d=%d heads=%d B=%d T=%d (%s kernel)\n", d, heads, B, T,
           gemm_bf16_kernel_name(gemm_bf16_select_kernel()));
    CHECK(memcmp(c.out, h.out, sizeof(float) * M * d) != 0, "bf16 scope: output is fp32's bits");
    CHECK(memcmp(c.dwq, h.dwq, sizeof(float) * 3 * d * d) != 0, "bf16 scope: d in_proj is fp32's");
    CHECK_CLOSE("bf16 output", h.out, c.out, M * d, 5e-2, 2e-2 * max_abs(c.out, M * d));
    CHECK_CLOSE("bf16 d input", h.dx, c.dx, M * d, 5e-2, 2e-2 * max_abs(c.dx, M * d));
    CHECK_CLOSE("bf16 d in_proj_weight", h.dwq, c.dwq, 3L * d * d, 5e-2,
                2e-2 * max_abs(c.dwq, 3L * d * d));
    CHECK_CLOSE("bf16 d out_proj.weight", h.dwo, c.dwo, (long)d * d, 5e-2,
                2e-2 * max_abs(c.dwo, (long)d * d));
    case_free(&c), case_free(&h);
}

int main(void)
{
    setenv(GEMM_BF16_EMULATE_ENV, "1", 0);   /* bf16 checks run on any CPU */
    test_pytorch();
    test_fd(8, 2, 2, 6, 0.0f, 1, 0);
    test_fd(8, 1, 1, 5, 0.0f, 1, 0);
    test_fd(8, 2, 1, 70, 0.0f, 3, 0);    /* two row blocks of ATTN_BLK = 64 */
    test_fd(8, 2, 2, 6, 0.3f, 1, 0);     /* same dropout mask on every forward (reseeded) */
    test_fd(8, 4, 1, 70, 0.2f, 5, 0);
    test_fd(20, 2, 1, 100, 0.0f, 7, 1);  /* hd = 10 (padded to 16), four query tiles */
    test_fd(16, 2, 1, 130, 0.1f, 11, 1); /* three key tiles, dropout */
    int Ts[] = {1, 5, 31, 32, 33, 64, 65, 100, 129, 300};
    for (int i = 0; i < (int)(sizeof Ts / sizeof Ts[0]); i++)
        test_vs_reference(32, 4, 2, Ts[i]);
    test_vs_reference(20, 2, 1, 77);   /* hd = 10 */
    test_vs_reference(48, 3, 1, 150);  /* hd = 16 */
    test_vs_reference(128, 2, 1, 200); /* hd = 64 */
    test_memory_linear();
    test_dropout_stats();
    test_step(8, 2, 7);
    test_step(16, 4, 150);
    test_bf16(32, 4, 2, 70);
    return check_summary();
}
