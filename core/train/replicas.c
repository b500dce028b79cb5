/* replicas.c — a step's shards on the machine's cores (see replicas.h). */
#include "replicas.h"

#include "cpu.h"
#include "decoder_loss.h"
#include "err.h"
#include "sysinfo.h"
#include "update.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int model;             /* index into Replicas.m: who computes it */
    const int *x, *y;      /* this job's rows */
    int B, T, rc;
    long row0;             /* global row of x's first (dropout masks) */
    double loss;
    long count;
} Job;

/* PH_STEP: a training shard's forward then its backward (replicas_step) */
enum { PH_FORWARD, PH_BACKWARD, PH_STEP, PH_FOLD, PH_FOR, PH_ITEMS };

struct Replicas {
    ShardPlan plan;
    int lo, hi;            /* the shards this process holds */
    int L;                 /* models: hi - lo (m[0] = the primary) */
    Model *m[SHARDPLAN_MAX];
    int W;                 /* threads, the caller's included */
    struct Worker { struct Replicas *r; int i; } arg[SHARDPLAN_MAX];
    pthread_t th[SHARDPLAN_MAX];
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    long generation;       /* bumps for every phase the workers must run (atomic) */
    long running;          /* workers still in the phase (atomic) */
    int quit, phase;       /* quit: atomic */
    int n_jobs;
    Job job[SHARDPLAN_MAX];
    float scale;           /* the backward's (PH_STEP: 0 = no backward) */
    const float *fold_init;
    int fold_sumsq;        /* PH_FOLD also sums each chunk's squares into sumsq */
    int sumsq_ready;       /* sumsq is the primary's gradient's (replicas_take_sumsq) */
    double sumsq[SHARDPLAN_NORM_CHUNKS][8];
    void (*pf)(void *ctx, int slice, size_t lo, size_t hi);   /* PH_FOR, PH_ITEMS */
    void *pf_ctx;
    size_t pf_n;
};

/* Slice i of [0, n) split n ways, in multiples of 16 elements (64 bytes). */
static void slice_range(size_t n, int ways, int i, size_t *lo, size_t *hi)
{
    size_t per = ((n + (size_t)ways - 1) / (size_t)ways + 15) & ~(size_t)15;
    *lo = per * (size_t)i < n ? per * (size_t)i : n;
    *hi = *lo + per < n ? *lo + per : n;
}

/* The right fold of the held shards' gradients (onto fold_init) over [lo, hi), into the
 * primary's slab: dst = g_0 + (g_1 + (... + (g_{L-1} [+ init]))). The same order for every
 * element, whoever computes which block. One or two shards (the usual one or two
 * threads) fold in one pass, with no copies; more, in blocks that stay in L1. */
CPU_CLONES
static void fold_range(Replicas *r, size_t lo, size_t hi)
{
    float acc[256];
    float *dst = r->m[0]->params.grad;
    const float *init = r->fold_init;
    int L = r->L;
    if (!init && L == 1)
        return;
    if (L <= 2) {
        const float *g1 = L == 2 ? r->m[1]->params.grad : NULL;
        if (L == 1)               /* g_0 + init */
            for (size_t j = lo; j < hi; j++)
                dst[j] = dst[j] + init[j];
        else if (!init)           /* g_0 + g_1 */
            for (size_t j = lo; j < hi; j++)
                dst[j] = dst[j] + g1[j];
        else                      /* g_0 + (g_1 + init) */
            for (size_t j = lo; j < hi; j++)
                dst[j] = dst[j] + (g1[j] + init[j]);
        return;
    }
    for (size_t b = lo; b < hi; b += 256) {
        size_t n = hi - b < 256 ? hi - b : 256;
        int s = L - 1;
        memcpy(acc, init ? init + b : r->m[s--]->params.grad + b, n * sizeof(float));
        for (; s >= 0; s--) {
            const float *g = r->m[s]->params.grad + b;
            for (size_t j = 0; j < n; j++)
                acc[j] = g[j] + acc[j];
        }
        memcpy(dst + b, acc, n * sizeof(float));
    }
}

static void run_job(Replicas *r, Job *j)
{
    Model *m = r->m[j->model];
    if (r->phase == PH_FORWARD || r->phase == PH_STEP) {
        if (m->training) {
            double t0 = model_prof_begin(m);
            params_zero_grad(&m->params);
            model_prof_end(m, PROF_GRAD, t0);
        }
        j->rc = model_forward(m, j->x, j->y, j->B, j->T, &j->loss, &j->count);
    }
    if ((r->phase == PH_BACKWARD || (r->phase == PH_STEP && r->scale > 0)) && m->training &&
        !j->rc)
        model_backward(m, r->scale);
}

static void run_phase(Replicas *r, int i)
{
    size_t lo, hi;
    if (r->phase == PH_FOLD) {   /* by the norm's fixed chunks, each folded, then squared */
        double t0 = i == 0 ? model_prof_begin(r->m[0]) : 0;
        int c0, c1;
        size_t total = r->m[0]->params.total;
        shardplan_share(SHARDPLAN_NORM_CHUNKS, r->W, i, &c0, &c1);
        for (int c = c0; c < c1; c++) {
            shardplan_chunk(total, c, &lo, &hi);
            fold_range(r, lo, hi);
            if (r->fold_sumsq)
                update_sumsq_chunks(r->m[0]->params.grad, total, c, c + 1, r->sumsq);
        }
        if (i == 0)
            model_prof_end(r->m[0], PROF_GRAD, t0);
    } else if (r->phase == PH_FOR) {
        slice_range(r->pf_n, r->W, i, &lo, &hi);
        r->pf(r->pf_ctx, i, lo, hi);
    } else if (r->phase == PH_ITEMS) {
        int a, b;
        shardplan_share((int)r->pf_n, r->W, i, &a, &b);
        r->pf(r->pf_ctx, i, (size_t)a, (size_t)b);
    } else {   /* this thread's models, their jobs in order */
        int mlo, mhi;
        replicas_thread_models(r, i, &mlo, &mhi);
        for (int k = 0; k < r->n_jobs; k++)
            if (r->job[k].model >= mlo && r->job[k].model < mhi && r->job[k].B > 0)
                run_job(r, &r->job[k]);
    }
}

/* Waits up to SPIN_S for *v to differ from `from` (generation) or to reach `to` (running),
 * without sleeping: phases follow each other within microseconds (forward, backward,
 * fold, the optimizer's slices), and a thread that sleeps in the kernel between them
 * leaves its CPU halted, which a VM wakes only through the hypervisor (tens of
 * microseconds per wake, several wakes a step). 1 when the state came, else 0 (then the
 * caller sleeps on the condition variable as before). Only the waiting changes: who
 * computes what, and so every bit, does not. */
#define SPIN_S 50e-6

static int spin_until(const long *v, long from, long to, const int *quit)
{
    double t0 = 0;
    for (int i = 0;; i++) {
        long x = __atomic_load_n(v, __ATOMIC_ACQUIRE);
        if ((from >= 0 && x != from) || (to >= 0 && x == to) ||
            (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE)))
            return 1;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if ((i & 63) == 63) {
            double now = sysinfo_now();
            if (t0 == 0)
                t0 = now;
            else if (now - t0 > SPIN_S)
                return 0;
        }
    }
}

static void *worker_main(void *arg)
{
    struct Worker *w = arg;
    Replicas *r = w->r;
    long seen = 0;
    for (;;) {
        spin_until(&r->generation, seen, -1, &r->quit);
        pthread_mutex_lock(&r->mu);
        while (!__atomic_load_n(&r->quit, __ATOMIC_ACQUIRE) &&
               __atomic_load_n(&r->generation, __ATOMIC_ACQUIRE) == seen)
            pthread_cond_wait(&r->go, &r->mu);
        if (__atomic_load_n(&r->quit, __ATOMIC_ACQUIRE)) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        seen = __atomic_load_n(&r->generation, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&r->mu);
        run_phase(r, w->i);
        pthread_mutex_lock(&r->mu);
        if (__atomic_sub_fetch(&r->running, 1, __ATOMIC_ACQ_REL) == 0)
            pthread_cond_signal(&r->done);
        pthread_mutex_unlock(&r->mu);
    }
    return NULL;
}

/* Runs one phase on every thread: the workers on theirs, the caller on slice 0; the
 * caller's wait for the workers is the primary's PROF_WAIT while it is profiled. */
static void fork_join(Replicas *r, int phase)
{
    r->phase = phase;
    if (r->W == 1) {
        run_phase(r, 0);
        return;
    }
    pthread_mutex_lock(&r->mu);
    __atomic_store_n(&r->running, (long)(r->W - 1), __ATOMIC_RELEASE);
    __atomic_add_fetch(&r->generation, 1, __ATOMIC_ACQ_REL);
    pthread_cond_broadcast(&r->go);
    pthread_mutex_unlock(&r->mu);
    run_phase(r, 0);
    double t0 = model_prof_begin(r->m[0]);
    if (!spin_until(&r->running, -1, 0, NULL)) {
        pthread_mutex_lock(&r->mu);
        while (__atomic_load_n(&r->running, __ATOMIC_ACQUIRE) > 0)
            pthread_cond_wait(&r->done, &r->mu);
        pthread_mutex_unlock(&r->mu);
    }
    model_prof_end(r->m[0], PROF_WAIT, t0);
}

static void destroy_replica(Model *m)
{
    if (!m)
        return;
    m->params.data = NULL; /* the primary owns the shared weights */
    model_destroy(m);
}

Replicas *replicas_create(Model *m, const ShardPlan *plan, int lo, int hi, int threads, int T,
                          char *err)
{
    assert(0 <= lo && lo < hi && hi <= plan->S && plan->S <= SHARDPLAN_MAX);
    Replicas *r = calloc(1, sizeof *r);
    if (!r) {
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->go, NULL);
    pthread_cond_init(&r->done, NULL);
    r->plan = *plan;
    r->lo = lo;
    r->hi = hi;
    r->m[0] = m;
    r->L = 1;
    r->W = 1;
    int rows = (plan->B + plan->S - 1) / plan->S;
    for (int i = 1; i < hi - lo; i++) {
        Model *c = model_create(&m->cfg, m->vocab, err);
        if (!c || model_alloc(c, rows, T, err)) {
            destroy_replica(c);
            replicas_destroy(r);
            return NULL;
        }
        free(c->params.data);        /* share the primary's weights */
        c->params.data = m->params.data;
        r->m[i] = c;
        r->L = i + 1;
    }
    int W = threads < 1 ? 1 : threads < r->L ? threads : r->L;
    for (int i = 1; i < W; i++) {
        r->arg[i] = (struct Worker){r, i};
        if (pthread_create(&r->th[i], NULL, worker_main, &r->arg[i])) {
            replicas_destroy(r);
            err_set(err, LM_ENOMEM, "cannot start a worker thread");
            return NULL;
        }
        r->W = i + 1;
    }
    /* every shard's products on one thread: the same bits whoever computes it */
    sysinfo_set_threads(1);
    return r;
}

void replicas_destroy(Replicas *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    __atomic_store_n(&r->quit, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&r->go);
    pthread_mutex_unlock(&r->mu);
    for (int i = 1; i < r->W; i++)
        pthread_join(r->th[i], NULL);
    for (int i = 1; i < r->L; i++)
        destroy_replica(r->m[i]);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->go);
    pthread_cond_destroy(&r->done);
    free(r);
}

int replicas_count(const Replicas *r) { return r->W; }

void replicas_thread_models(const Replicas *r, int i, int *lo, int *hi)
{
    shardplan_share(r->L, r->W, i, lo, hi);
}
const ShardPlan *replicas_plan(const Replicas *r) { return &r->plan; }

void replicas_reset_state(Replicas *r)
{
    for (int i = 0; i < r->L; i++)
        if (r->m[i]->ops->reset_state)
            r->m[i]->ops->reset_state(r->m[i]);
}

static void set_job(Replicas *r, int k, int model, const int *x, const int *y, int r0, int r1,
                    int T)
{
    Job *j = &r->job[k];
    *j = (Job){.model = model, .x = x + (size_t)r0 * T, .y = y ? y + (size_t)r0 * T : NULL,
               .B = r1 - r0, .T = T, .row0 = r0};
    if (model > 0) {
        r->m[model]->training = r->m[0]->training;
        r->m[model]->carry_state = r->m[0]->carry_state;
        r->m[model]->profiling = r->m[0]->profiling;   /* bench: each thread's own stages */
    }
}

/* The jobs of the training batch x, y: shard k of this process on model k. */
static void set_train_jobs(Replicas *r, const int *x, const int *y, int T)
{
    Model *m = r->m[0];
    uint64_t seed = m->training ? model_drop_seed(m) : 0;   /* one per step, every shard */
    r->n_jobs = r->L;
    for (int k = 0; k < r->L; k++) {
        int r0, r1;
        shardplan_rows(r->plan.B, r->plan.S, r->lo + k, &r0, &r1);
        set_job(r, k, k, x, y, r0, r1, T);
        if (m->training)
            model_drop_key(r->m[k], seed, r0);
    }
}

int replicas_forward(Replicas *r, const int *x, const int *y, int T, double *loss, long *count)
{
    r->sumsq_ready = 0;
    set_train_jobs(r, x, y, T);
    fork_join(r, PH_FORWARD);
    for (int k = 0; k < r->L; k++) {
        if (r->job[k].rc)
            return r->job[k].rc;
        loss[r->lo + k] = r->job[k].loss;
        count[r->lo + k] = r->job[k].count;
    }
    return LM_OK;
}

void replicas_backward(Replicas *r, float scale)
{
    if (!r->m[0]->training)
        return;
    r->sumsq_ready = 0;
    r->scale = scale;
    fork_join(r, PH_BACKWARD);
}

void replicas_fold(Replicas *r, const float *init)
{
    r->sumsq_ready = 0;
    if (!r->m[0]->training || (!init && r->L == 1))
        return;
    r->fold_init = init;
    fork_join(r, PH_FOLD);
    r->fold_init = NULL;
}

/* Evaluation: the rows of x cut into shards_for(B) shards, shard k on model k mod L. */
static int forward_eval(Replicas *r, const int *x, const int *y, int B, int T,
                        double *loss_sum, long *count)
{
    int E = shardplan_shards_for(&r->plan, B);
    r->n_jobs = E;
    for (int k = 0; k < E; k++) {
        int r0, r1;
        shardplan_rows(B, E, k, &r0, &r1);
        set_job(r, k, k % r->L, x, y, r0, r1, T);
    }
    fork_join(r, PH_FORWARD);
    double sum = 0;
    long cnt = 0;
    for (int k = 0; k < E; k++) {
        if (r->job[k].rc)
            return r->job[k].rc;
        sum += r->job[k].loss;
        cnt += r->job[k].count;
    }
    *loss_sum = sum;
    *count = cnt;
    return LM_OK;
}

int replicas_step(Replicas *r, const int *x, const int *y, int B, int T, double *loss_sum,
                  long *count)
{
    r->sumsq_ready = 0;
    if (!r->m[0]->training)
        return forward_eval(r, x, y, B, T, loss_sum, count);
    assert(B == r->plan.B && r->lo == 0 && r->hi == r->plan.S);
    long n = decoder_loss_count(y, (size_t)B * T);   /* what the shards' counts add to */
    set_train_jobs(r, x, y, T);
    r->scale = n > 0 ? 1.0f / (float)n : 0.0f;
    fork_join(r, PH_STEP);
    double sum = 0;
    long got = 0;
    for (int k = 0; k < r->L; k++) {
        if (r->job[k].rc)
            return r->job[k].rc;
        sum += r->job[k].loss;
        got += r->job[k].count;
    }
    assert(got == n && "every model's forward counts the targets decoder_loss_count does");
    if (n > 0) {
        r->fold_sumsq = 1;
        fork_join(r, PH_FOLD);
        r->fold_sumsq = 0;
        r->sumsq_ready = 1;
    }
    *loss_sum = sum;
    *count = n;
    return LM_OK;
}

int replicas_take_sumsq(Replicas *r, const ParamSet *ps, double lanes[][8])
{
    if (!r->sumsq_ready || ps->grad != r->m[0]->params.grad)
        return 0;
    r->sumsq_ready = 0;
    memcpy(lanes, r->sumsq, sizeof r->sumsq);
    return 1;
}

/* fn over [0, n) on the threads, split as phase says (PH_FOR or PH_ITEMS); on the caller's
 * thread alone when there is one. */
static void parallel(Replicas *r, int phase,
                     void (*fn)(void *ctx, int slice, size_t lo, size_t hi), void *ctx, size_t n)
{
    if (!r || r->W == 1) {
        fn(ctx, 0, 0, n);
        return;
    }
    r->pf = fn;
    r->pf_ctx = ctx;
    r->pf_n = n;
    fork_join(r, phase);
}

void replicas_parallel_for(Replicas *r, void (*fn)(void *ctx, int slice, size_t lo, size_t hi),
                           void *ctx, size_t n)
{
    parallel(r, PH_FOR, fn, ctx, n);
}

void replicas_parallel_items(Replicas *r, void (*fn)(void *ctx, int slice, size_t lo, size_t hi),
                             void *ctx, size_t n)
{
    parallel(r, PH_ITEMS, fn, ctx, n);
}

Model *replicas_shard_model(Replicas *r, int shard)
{
    return shard >= r->lo && shard < r->hi ? r->m[shard - r->lo] : NULL;
}
