/* replicas.c — data-parallel replicas and their fork-join workers (see replicas.h). */
#include "replicas.h"

#include "err.h"
#include "sysinfo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Model *m;              /* replica (index 0 = the primary) */
    const int *x, *y;      /* this replica's rows */
    int B, T, rc;
    double loss;
    long count;
} Slice;

struct Replicas {
    int n;
    Slice s[REPLICAS_MAX];
    struct Worker { struct Replicas *r; int i; } arg[REPLICAS_MAX];
    pthread_t th[REPLICAS_MAX];
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    long generation;       /* bumps for every phase the workers must run */
    int running, quit, phase; /* 0: forward, 1: backward, 2: gradient sum, 3: parallel for */
    float scale;
    void (*pf)(void *ctx, int slice, size_t lo, size_t hi);   /* phase 3 */
    void *pf_ctx;
    size_t pf_n;
};

static void add_grads(float *restrict acc, const float *restrict g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc[i] += g[i];
}

/* Phase 2: replica i sums its 1/n share of every replica's gradients into the primary's,
 * so the reduction runs on all threads instead of the caller's alone (the others idled). */
static void reduce_slice(Replicas *r, int i)
{
    Model *m = r->s[0].m;
    size_t total = m->params.total, per = (total + (size_t)r->n - 1) / (size_t)r->n;
    size_t off = per * (size_t)i, n = off < total ? (total - off < per ? total - off : per) : 0;
    for (int j = 1; j < r->n; j++)
        if (r->s[j].B > 0)
            add_grads(m->params.grad + off, r->s[j].m->params.grad + off, n);
}

/* Slice i of [0, n) split n ways, in multiples of 16 elements (64 bytes). */
static void slice_range(size_t n, int ways, int i, size_t *lo, size_t *hi)
{
    size_t per = ((n + (size_t)ways - 1) / (size_t)ways + 15) & ~(size_t)15;
    *lo = per * (size_t)i < n ? per * (size_t)i : n;
    *hi = *lo + per < n ? *lo + per : n;
}

static void run_phase(Replicas *r, int i)
{
    Slice *s = &r->s[i];
    if (r->phase == 2) {
        reduce_slice(r, i);
        return;
    }
    if (r->phase == 3) {
        size_t lo, hi;
        slice_range(r->pf_n, r->n, i, &lo, &hi);
        r->pf(r->pf_ctx, i, lo, hi);
        return;
    }
    if (s->B <= 0)
        return;
    if (r->phase == 0) {
        if (s->m->training)
            params_zero_grad(&s->m->params);
        s->rc = model_forward(s->m, s->x, s->y, s->B, s->T, &s->loss, &s->count);
    } else if (r->phase == 1) {
        if (s->m->training && !s->rc)
            model_backward(s->m, r->scale);
    }
}

static void *worker_main(void *arg)
{
    struct Worker *w = arg;
    Replicas *r = w->r;
    long seen = 0;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->quit && r->generation == seen)
            pthread_cond_wait(&r->go, &r->mu);
        if (r->quit)
            break;
        seen = r->generation;
        pthread_mutex_unlock(&r->mu);
        run_phase(r, w->i);
        pthread_mutex_lock(&r->mu);
        if (--r->running == 0)
            pthread_cond_signal(&r->done);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Runs one phase on every replica: the workers on theirs, the caller on the primary. */
static void fork_join(Replicas *r, int phase)
{
    r->phase = phase;
    pthread_mutex_lock(&r->mu);
    r->running = r->n - 1;
    r->generation++;
    pthread_cond_broadcast(&r->go);
    pthread_mutex_unlock(&r->mu);
    run_phase(r, 0);
    pthread_mutex_lock(&r->mu);
    while (r->running > 0)
        pthread_cond_wait(&r->done, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

static void destroy_replica(Model *m)
{
    m->params.data = NULL; /* the primary owns the shared weights */
    model_destroy(m);
}

Replicas *replicas_create(Model *m, int n, int B, int T, char *err)
{
    if (n < 1) n = 1;
    if (n > REPLICAS_MAX) n = REPLICAS_MAX;
    if (n > B) n = B;                 /* every replica needs at least one row */
    Replicas *r = calloc(1, sizeof *r);
    if (!r) {
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->go, NULL);
    pthread_cond_init(&r->done, NULL);
    r->s[0].m = m;
    r->n = 1;
    int rows = (B + n - 1) / n;
    for (int i = 1; i < n; i++) {
        Model *c = model_create(&m->cfg, m->vocab, err);
        if (!c || model_alloc(c, rows, T, err)) {
            if (c) destroy_replica(c);
            replicas_destroy(r);
            return NULL;
        }
        free(c->params.data);        /* share the primary's weights */
        c->params.data = m->params.data;
        r->s[i].m = c;
        r->arg[i] = (struct Worker){r, i};
        if (pthread_create(&r->th[i], NULL, worker_main, &r->arg[i])) {
            destroy_replica(c);
            r->s[i].m = NULL;
            replicas_destroy(r);
            err_set(err, LM_ENOMEM, "cannot start a worker thread");
            return NULL;
        }
        r->n = i + 1;
    }
    if (n > 1)
        sysinfo_set_threads(1);     /* parallelism is ours: single-threaded BLAS */
    return r;
}

void replicas_destroy(Replicas *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->quit = 1;
    pthread_cond_broadcast(&r->go);
    pthread_mutex_unlock(&r->mu);
    for (int i = 1; i < r->n; i++) {
        pthread_join(r->th[i], NULL);
        destroy_replica(r->s[i].m);
    }
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->go);
    pthread_cond_destroy(&r->done);
    free(r);
}

int replicas_count(const Replicas *r)
{
    return r->n;
}

void replicas_reset_state(Replicas *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->s[i].m->ops->reset_state)
            r->s[i].m->ops->reset_state(r->s[i].m);
}

int replicas_forward(Replicas *r, const int *x, const int *y, int B, int T, long row0,
                     double *loss_sum, long *count)
{
    Model *m = r->s[0].m;
    int n = r->n < B ? r->n : B, per = (B + n - 1) / n, row = 0;
    uint64_t seed = m->training ? model_drop_seed(m) : 0;   /* one per step, every slice */
    for (int i = 0; i < r->n; i++) {
        Slice *s = &r->s[i];
        s->B = i < n ? (B - row < per ? B - row : per) : 0;
        s->T = T;
        s->x = x + (size_t)row * T;
        s->y = y ? y + (size_t)row * T : NULL;
        s->rc = LM_OK;
        s->loss = 0;
        s->count = 0;
        if (i > 0) {
            s->m->training = m->training;
            s->m->carry_state = m->carry_state;
        }
        if (m->training)
            model_drop_key(s->m, seed, row0 + row);
        row += s->B;
    }
    fork_join(r, 0);
    double sum = 0;
    long cnt = 0;
    for (int i = 0; i < r->n; i++) {
        if (r->s[i].rc)
            return r->s[i].rc;
        sum += r->s[i].loss;
        cnt += r->s[i].count;
    }
    *loss_sum = sum;
    *count = cnt;
    return LM_OK;
}

void replicas_backward(Replicas *r, float scale)
{
    Model *m = r->s[0].m;
    if (!m->training)
        return;
    r->scale = scale;
    fork_join(r, 1);
    if (r->n > 1)
        fork_join(r, 2);   /* the gradient sum, spread over every replica's thread */
}

void replicas_parallel_for(Replicas *r, void (*fn)(void *ctx, int slice, size_t lo, size_t hi),
                           void *ctx, size_t n)
{
    if (!r || r->n == 1) {
        fn(ctx, 0, 0, n);
        return;
    }
    r->pf = fn;
    r->pf_ctx = ctx;
    r->pf_n = n;
    fork_join(r, 3);
}

int replicas_step(Replicas *r, const int *x, const int *y, int B, int T, double *loss_sum,
                  long *count)
{
    int rc = replicas_forward(r, x, y, B, T, 0, loss_sum, count);
    if (!rc && *count > 0)
        replicas_backward(r, 1.0f / (float)*count);
    return rc;
}
