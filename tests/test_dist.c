/* test_dist.c — the process group's one-process behaviour (dist.c without mpirun: rank 0
 * of 1, every collective the identity, nothing in the store's machine field) and the
 * split of replicas_step into forward, backward and fold that trainer_dist.c relies on
 * (same loss, same gradients to the bit, the backward's scale applied), and that a step
 * with dropout gives the same loss and gradients TO THE BIT whatever computes its shards:
 * one process, or 2 or 3 "ranks" each holding its share of the shards and folding in the
 * plan's order, with 1 or 2 threads, for every model family. Runs in one process;
 * the multi-process behaviour is tests/e2e_mpi.sh (mpirun -np 2). */
#include "check.h"

#include "config.h"
#include "dist.h"
#include "err.h"
#include "model.h"
#include "replicas.h"
#include "rng.h"
#include "shardplan.h"

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

/* replicas_step = replicas_forward + replicas_backward + replicas_fold, to the bit; the
 * backward's scale is the caller's; not training, the backward leaves the gradients alone. */
static void test_forward_backward_split(void)
{
    enum { V = 17, B = 6, T = 8 };
    char err[LM_ERR_LEN] = "";
    Config c;
    Model *m = tiny_model(&c, V, B, T, err);
    CHECK(m != NULL, "model: %s", err);
    if (!m) return;
    ShardPlan plan;
    shardplan_init(&plan, B, 3, err);
    Replicas *r = replicas_create(m, &plan, 0, 3, 2, T, err);
    CHECK(r != NULL, "replicas: %s", err);
    if (!r) { model_destroy(m); return; }
    int x[B * T], y[B * T];
    for (int i = 0; i < B * T; i++) {
        x[i] = (i * 7 + 3) % V;
        y[i] = (i * 5 + 1) % V;
    }
    size_t n = m->params.total;
    float *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2);
    double s1 = 0, s2 = 0, ls[3];
    long c1 = 0, c2 = 0, cs[3];
    Rng st = m->rng;
    CHECK(replicas_step(r, x, y, B, T, &s1, &c1) == LM_OK, "replicas_step");
    memcpy(g1, m->params.grad, n * sizeof *g1);
    m->rng = st;
    CHECK(replicas_forward(r, x, y, T, ls, cs) == LM_OK, "replicas_forward");
    s2 = ls[0] + ls[1] + ls[2];
    c2 = cs[0] + cs[1] + cs[2];
    CHECK(c2 == B * T && c1 == c2, "token counts %ld %ld", c1, c2);
    replicas_backward(r, 1.0f / (float)c2);
    replicas_fold(r, NULL);
    memcpy(g2, m->params.grad, n * sizeof *g2);
    CHECK(s1 == s2, "loss sums %.17g vs %.17g", s1, s2);
    CHECK(!memcmp(g1, g2, n * sizeof *g1), "forward + backward + fold differs from replicas_step");
    double norm = 0;
    for (size_t i = 0; i < n; i++) norm += (double)g1[i] * g1[i];
    CHECK(norm > 0, "the gradient is zero");
    /* the scale is the caller's: twice the scale, twice the gradient (powers of two are exact) */
    m->rng = st;
    CHECK(replicas_forward(r, x, y, T, ls, cs) == LM_OK, "replicas_forward");
    replicas_backward(r, 2.0f / (float)c2);
    replicas_fold(r, NULL);
    int twice = 1;
    for (size_t i = 0; i < n; i++) twice &= m->params.grad[i] == 2.0f * g1[i];
    CHECK(twice, "backward(2/count) is not twice backward(1/count)");
    /* not training: the backward leaves the gradients alone */
    m->training = 0;
    CHECK(replicas_step(r, x, y, B, T, &s2, &c2) == LM_OK && c2 == B * T, "evaluation step");
    memcpy(g2, m->params.grad, n * sizeof *g2);
    replicas_backward(r, 1.0f);
    replicas_fold(r, NULL);
    CHECK(!memcmp(g2, m->params.grad, n * sizeof *g2), "a backward ran while not training");
    free(g1);
    free(g2);
    replicas_destroy(r);
    model_destroy(m);
}

/* A model of `family` with dropout and its copy of m0's weights and RNG stream. */
static Model *family_model(const char *family, const Model *m0, int V, int B, int T, char *err)
{
    Config c;
    config_defaults(&c);
    if (config_set(&c, "model", family, err))
        return NULL;
    c.d = 16; c.nhid = 32; c.layers = 2; c.bptt = T; c.batch = B; c.dropout = 0.4f;
    Model *m = model_create(&c, V, err);
    if (m && model_alloc(m, B, T, err)) {
        model_destroy(m);
        return NULL;
    }
    if (m && m0) {
        memcpy(m->params.data, m0->params.data, m->params.total * sizeof(float));
        m->rng = m0->rng;
    }
    if (m) m->training = 1;
    return m;
}

/* The plan's fold over "ranks" as trainer_dist.c runs it (each rank a Replicas holding
 * its share of the shards, rank N-1 folding first, each rank below folding its own shards
 * onto the partial fold it received) gives one process's loss and gradient TO THE BIT,
 * for 2 and 3 ranks of 3 shards with 1 or 2 threads each, for every model family with
 * dropout; a different step seed changes the masks (the test can fail). */
static void test_dropout_split(const char *family, int has_dropout)
{
    enum { V = 13, B = 6, T = 8, S = 3 };
    char err[LM_ERR_LEN] = "";
    Model *m = family_model(family, NULL, V, B, T, err);
    CHECK(m != NULL, "%s: %s", family, err);
    if (!m) return;
    ShardPlan plan;
    shardplan_init(&plan, B, S, err);
    int x[B * T], y[B * T];
    for (int i = 0; i < B * T; i++) {
        x[i] = (i * 7 + 3) % V;
        y[i] = (i * 5 + 1) % V;
    }
    size_t n = m->params.total;
    Rng st = m->rng;
    Replicas *one = replicas_create(m, &plan, 0, S, 1, T, err);
    double s_one = 0, s_other = 0;
    long cnt = 0;
    CHECK(one && replicas_step(one, x, y, B, T, &s_one, &cnt) == LM_OK, "%s: step", family);
    float *whole = malloc(n * sizeof *whole), *part = malloc(n * sizeof *part);
    memcpy(whole, m->params.grad, n * sizeof *whole);
    for (int N = 2; N <= 3; N++)
        for (int th = 1; th <= 2; th++) {
            double loss[S] = {0};
            long c[S] = {0};
            const float *init = NULL;
            int same = 1;
            for (int r = N - 1; r >= 0; r--) {   /* the chain from rank N-1 down to 0 */
                int lo, hi;
                shardplan_share(S, N, r, &lo, &hi);
                Model *mr = family_model(family, m, V, B, T, err);
                mr->rng = st;
                Replicas *rr = replicas_create(mr, &plan, lo, hi, th, T, err);
                CHECK(rr && replicas_forward(rr, x, y, T, loss, c) == LM_OK, "%s rank %d: %s",
                      family, r, err);
                replicas_backward(rr, 1.0f / (float)(B * T));
                replicas_fold(rr, init);
                memcpy(part, mr->params.grad, n * sizeof *part);
                init = part;
                if (r == 0)
                    same = !memcmp(part, whole, n * sizeof *part);
                replicas_destroy(rr);
                model_destroy(mr);
            }
            double s = loss[0] + loss[1] + loss[2];
            CHECK(s == s_one && same, "%s, %d ranks of %d thread(s): loss %.17g vs %.17g, "
                  "gradient %s", family, N, th, s, s_one, same ? "the same" : "differs");
        }
    /* another step seed: other masks */
    m->rng = st;
    rng_u32(&m->rng);
    CHECK(replicas_step(one, x, y, B, T, &s_other, &cnt) == LM_OK, "%s: step", family);
    printf("  %-13s loss sum %.9f; other seed %.9f\n", family, s_one, s_other);
    if (has_dropout)   /* the linear LM has no dropout */
        CHECK(fabs(s_other - s_one) > 1e-4 * fabs(s_one), "%s: another seed gave the same loss",
              family);
    free(whole);
    free(part);
    replicas_destroy(one);
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
