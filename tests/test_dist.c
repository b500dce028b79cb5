/* test_dist.c — the process group's one-process behaviour (dist.c without mpirun: rank 0
 * of 1, every collective the identity, nothing in the store's machine field) and the
 * split of replicas_step into forward and backward that trainer_dist.c relies on (same
 * loss, same gradients to the bit, the backward's scale applied), and that a step with
 * dropout gives the same loss and gradients whatever the split of its batch: whole, over
 * replicas, or over "ranks" (shares of the rows with their global offsets), for every
 * model family. Runs in one process;
 * the multi-process behaviour is tests/e2e_mpi.sh (mpirun -np 2). */
#include "check.h"

#include "config.h"
#include "dist.h"
#include "err.h"
#include "model.h"
#include "replicas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_one_process(void)
{
    char err[LM_ERR_LEN] = "";
    int argc = 1;
    char *args[] = {"test_dist", NULL}, **argv = args;
    CHECK(dist_init(&argc, &argv, err) == LM_OK, "dist_init without mpirun: %s", err);
    CHECK(dist_rank() == 0 && dist_size() == 1, "rank %d of %d", dist_rank(), dist_size());
    float f[3] = {1.5f, -2.0f, 3.25f};
    double d[2] = {0.125, 7.0};
    int iv[2] = {4, -1};
    dist_allreduce_sum_f32(f, 3);
    dist_allreduce_sum_f64(d, 2);
    dist_allreduce_min_int(iv, 2);
    CHECK(f[0] == 1.5f && f[1] == -2.0f && f[2] == 3.25f, "f32 sum of one rank changed %g", f[0]);
    CHECK(d[0] == 0.125 && d[1] == 7.0, "f64 sum of one rank changed %g", d[0]);
    CHECK(iv[0] == 4 && iv[1] == -1, "min of one rank changed %d", iv[0]);
    char buf[64] = "x";
    dist_bcast(buf, sizeof buf);
    CHECK(!strcmp(buf, "x"), "bcast of one rank changed the buffer");
    char desc[64] = "junk";
    dist_describe(desc, sizeof desc);
    CHECK(desc[0] == 0, "one process describes itself as '%s'", desc);
    char machine[32] = "2 cores";
    dist_append_machine(machine, sizeof machine);
    CHECK(!strcmp(machine, "2 cores"), "one process changed the machine field: '%s'", machine);
    dist_abort(3);    /* no job of several processes: returns */
    CHECK(1, "dist_abort returned");
    /* a parallel sweep's calls, alone: solo changes nothing, no peer to message */
    dist_solo(1);
    CHECK(dist_rank() == 0 && dist_size() == 1 && dist_world_rank() == 0 &&
          dist_world_size() == 1 && dist_local_size() == 1, "solo alone: rank %d of %d",
          dist_rank(), dist_size());
    dist_solo(0);
    int msg = 5, from = -2;
    CHECK(dist_send(1, 3, &msg, sizeof msg) == LM_EIO, "dist_send with no job succeeded");
    CHECK(dist_recv(-1, 3, &msg, sizeof msg, &from) == LM_EIO && msg == 5 && from == -2,
          "dist_recv with no job returned a message");
    CHECK(dist_probe(-1, 3, &from) == 0 && from == -2, "dist_probe with no job found one");
    dist_finalize();
}

/* An lmlab without MPI refuses a launcher's several ranks with a message that says what
 * to do (with MPI compiled in this would start MPI: e2e_mpi.sh covers that). */
static void test_refuses_without_mpi(void)
{
    if (dist_compiled())
        return;
    char err[LM_ERR_LEN] = "";
    int argc = 1;
    char *args[] = {"test_dist", NULL}, **argv = args;
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    int rc = dist_init(&argc, &argv, err);
    unsetenv("OMPI_COMM_WORLD_SIZE");
    CHECK(rc == LM_EARG, "dist_init under a 2-rank launcher without MPI gave %d", rc);
    CHECK(strstr(err, "built without MPI") && strstr(err, "-Dmpi=enabled"), "message: %s", err);
}

static Model *tiny_model(Config *c, int V, int B, int T, char *err)
{
    config_defaults(c);
    c->d = 16; c->nhid = 32; c->layers = 2; c->bptt = T; c->batch = B;
    Model *m = model_create(c, V, err);
    if (m && model_alloc(m, B, T, err)) {
        model_destroy(m);
        return NULL;
    }
    if (m) m->training = 1;
    return m;
}

static void test_forward_backward_split(void)
{
    enum { V = 17, B = 6, T = 8 };
    char err[LM_ERR_LEN] = "";
    Config c;
    Model *m = tiny_model(&c, V, B, T, err);
    CHECK(m != NULL, "model: %s", err);
    if (!m) return;
    Replicas *r = replicas_create(m, 3, B, T, err);
    CHECK(r != NULL, "replicas: %s", err);
    if (!r) { model_destroy(m); return; }
    int x[B * T], y[B * T];
    for (int i = 0; i < B * T; i++) {
        x[i] = (i * 7 + 3) % V;
        y[i] = (i * 5 + 1) % V;
    }
    size_t n = m->params.total;
    float *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2);
    double s1 = 0, s2 = 0;
    long c1 = 0, c2 = 0;
    CHECK(replicas_step(r, x, y, B, T, &s1, &c1) == LM_OK, "replicas_step");
    memcpy(g1, m->params.grad, n * sizeof *g1);
    CHECK(replicas_forward(r, x, y, B, T, 0, &s2, &c2) == LM_OK, "replicas_forward");
    CHECK(c2 == B * T && c1 == c2, "token counts %ld %ld", c1, c2);
    replicas_backward(r, 1.0f / (float)c2);
    memcpy(g2, m->params.grad, n * sizeof *g2);
    CHECK(s1 == s2, "loss sums %.17g vs %.17g", s1, s2);
    CHECK(!memcmp(g1, g2, n * sizeof *g1), "forward + backward differs from replicas_step");
    double norm = 0;
    for (size_t i = 0; i < n; i++) norm += (double)g1[i] * g1[i];
    CHECK(norm > 0, "the gradient is zero");
    /* the scale is the caller's: twice the scale, twice the gradient (powers of two are exact) */
    CHECK(replicas_forward(r, x, y, B, T, 0, &s2, &c2) == LM_OK, "replicas_forward");
    replicas_backward(r, 2.0f / (float)c2);
    int twice = 1;
    for (size_t i = 0; i < n; i++) twice &= m->params.grad[i] == 2.0f * g1[i];
    CHECK(twice, "backward(2/count) is not twice backward(1/count)");
    /* not training: the backward leaves the gradients alone */
    m->training = 0;
    CHECK(replicas_forward(r, x, y, B, T, 0, &s2, &c2) == LM_OK, "replicas_forward (eval)");
    memcpy(g2, m->params.grad, n * sizeof *g2);
    replicas_backward(r, 1.0f);
    CHECK(!memcmp(g2, m->params.grad, n * sizeof *g2), "a backward ran while not training");
    free(g1);
    free(g2);
    replicas_destroy(r);
    model_destroy(m);
}

/* One step of rows [r0, r1) of x, y (B,T) with row offset r0 from the stream state st:
 * loss sum into *s, gradients (scale 1/count_total) added into acc. */
static void share_step(Replicas *r, Model *m, const Rng *st, const int *x, const int *y,
                       int r0, int r1, int T, long total, double *s, float *acc)
{
    double ls = 0;
    long cnt = 0;
    m->rng = *st;
    CHECK(replicas_forward(r, x + r0 * T, y + r0 * T, r1 - r0, T, r0, &ls, &cnt) == LM_OK,
          "forward of rows %d..%d", r0, r1);
    replicas_backward(r, 1.0f / (float)total);
    *s += ls;
    for (size_t i = 0; i < m->params.total; i++)
        acc[i] += m->params.grad[i];
}

static double max_rel(const float *a, const float *b, size_t n)
{
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(a[i]));
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)a[i] - b[i]) / scale);
    return worst;
}

/* Data order and dropout (elements and Dispatcher levels) are defined by the step and the
 * global row: the same step split 1, 3 ways over replicas, or 2 ways over ranks with a
 * replica each, gives the same loss and gradients (to summation order). */
static void test_dropout_split(const char *family, int has_dropout)
{
    enum { V = 13, B = 6, T = 8 };
    char err[LM_ERR_LEN] = "";
    Config c;
    config_defaults(&c);
    CHECK(config_set(&c, "model", family, err) == LM_OK, "model=%s: %s", family, err);
    c.d = 16; c.nhid = 32; c.layers = 2; c.bptt = T; c.batch = B; c.dropout = 0.4f;
    Model *m = model_create(&c, V, err);
    CHECK(m && !model_alloc(m, B, T, err), "%s: %s", family, err);
    if (!m) return;
    m->training = 1;
    Replicas *one = replicas_create(m, 1, B, T, err), *three = replicas_create(m, 3, B, T, err);
    CHECK(one && three, "replicas: %s", err);
    int x[B * T], y[B * T];
    for (int i = 0; i < B * T; i++) {
        x[i] = (i * 7 + 3) % V;
        y[i] = (i * 5 + 1) % V;
    }
    size_t n = m->params.total;
    float *whole = calloc(n, sizeof *whole), *split = calloc(n, sizeof *split);
    float *ranks = calloc(n, sizeof *ranks), *other = calloc(n, sizeof *other);
    Rng st = m->rng;
    double s_whole = 0, s_split = 0, s_ranks = 0, s_other = 0;
    share_step(one, m, &st, x, y, 0, B, T, B * T, &s_whole, whole);
    share_step(three, m, &st, x, y, 0, B, T, B * T, &s_split, split);
    share_step(one, m, &st, x, y, 0, 2, T, B * T, &s_ranks, ranks);   /* "rank 0" */
    share_step(three, m, &st, x, y, 2, B, T, B * T, &s_ranks, ranks); /* "rank 1" */
    /* a different step seed must change the masks (the test can fail) */
    Rng next = st;
    rng_u32(&next);
    share_step(one, m, &next, x, y, 0, B, T, B * T, &s_other, other);
    printf("  %-13s loss sums whole %.9f, 3 replicas %.9f, 2 ranks %.9f; other seed %.9f\n",
           family, s_whole, s_split, s_ranks, s_other);
    CHECK(fabs(s_split - s_whole) <= 1e-6 * fabs(s_whole), "%s: 3 replicas' loss differs",
          family);
    CHECK(fabs(s_ranks - s_whole) <= 1e-6 * fabs(s_whole), "%s: 2 ranks' loss differs", family);
    double e1 = max_rel(whole, split, n), e2 = max_rel(whole, ranks, n);
    CHECK(e1 <= 1e-5 && e2 <= 1e-5, "%s: gradients differ by %.3g (replicas), %.3g (ranks)",
          family, e1, e2);
    if (has_dropout)   /* the linear LM has no dropout */
        CHECK(fabs(s_other - s_whole) > 1e-4 * fabs(s_whole),
              "%s: another seed gave the same loss", family);
    free(whole), free(split), free(ranks), free(other);
    replicas_destroy(one);
    replicas_destroy(three);
    model_destroy(m);
}

int main(void)
{
    test_one_process();
    test_refuses_without_mpi();
    test_forward_backward_split();
    const char *families[] = {"dispatcher", "dispatcher-mh", "msa", "linear", "lstm", "gru", "rnn"};
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        test_dropout_split(families[i], strcmp(families[i], "linear") != 0);
    return check_summary();
}
