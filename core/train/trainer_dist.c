/* trainer_dist.c — a run over the processes of an MPI job (see trainer_dist.h).
 * Messages, all from rank 0 by broadcast, in this order per run:
 *   job header {kind, Config, TrainerOptions}   (trainer_dist_announce / _serve)
 *   agreement: allreduce-min of "built it"        (trainer_dist_agree)
 *   weights + optimizer moments                   (trainer_dist_agree)
 *   start or not                                  (trainer_dist_start)
 *   per step: control {go, Schedule, training clock}, then allreduce {every shard's loss
 *             sum and tokens, failed}, then the gradient's fold from rank N-1 down to rank 0
 *             (point to point) and rank 0's broadcast of it (trainer_dist_control / _step)
 *   a last control with go = 0                    (trainer_dist_end, if not sent yet)
 * The state below is per process: one distributed run at a time (lmlab trains one run at
 * a time; a sweep's trials run one after another). */
#include "trainer_dist.h"

#include "dist.h"
#include "err.h"
#include "matmul.h"
#include "sysinfo.h"
#include "sysmetrics.h"
#include "private/trainer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

enum { JOB_QUIT = 0, JOB_TRAIN = 1, JOB_SERVICE = 2 };
enum { TAG_FOLD = 7435 };   /* a partial gradient fold, rank r+1 -> r (sweep_pool: 7401-2) */

typedef struct {
    int kind;
    Config cfg;
    TrainerOptions opt;
    char cwd[4096];     /* rank 0's working folder: what its relative paths mean */
} Job;

typedef struct {
    int go;
    Schedule sched;
    double elapsed;     /* rank 0's training clock (schedule_clock=time) */
    int sys;            /* every rank samples its system metrics now (gathered to rank 0) */
} Control;

#define SYS_VALUES 7    /* cpu rss_mb threads load1 mem_avail_mb mem_total_mb t, per rank */
#define SYS_MAX_RANKS 256  /* larger jobs record rank 0's samples only */

static int (*g_service)(void);   /* trainer_dist_set_service: a parallel sweep's worker */
static const Trainer *g_pending; /* the run agreed on but not yet started (or dropped) */
static int g_open;      /* the last control said go: the loop is still open */
static SysMeter g_meter;   /* this process's CPU clock for the gathered samples */
static double g_next_sys;  /* rank 0: monotonic seconds of the next gather */

/* Every rank's system sample, gathered by one allreduce of a (ranks x SYS_VALUES) array in
 * which each rank fills its own row; rank 0 reports the other ranks' as a TEV_SYS event
 * (its own is the recorder's). A collective: every rank calls it on the same control. */
static void gather_sys(Trainer *t)
{
    static double buf[SYS_MAX_RANKS * SYS_VALUES];   /* no allocation that could fail
                                                        on one rank and not the others */
    int N = dist_size(), r = dist_rank();
    if (N > SYS_MAX_RANKS) return;   /* every rank decides alike */
    memset(buf, 0, sizeof buf);
    SysSample x = {0};
    sysmetrics_sample(&g_meter, &x);
    double *row = buf + (size_t)r * SYS_VALUES;
    row[0] = x.cpu, row[1] = x.rss_mb, row[2] = x.threads, row[3] = x.load1;
    row[4] = x.mem_avail_mb, row[5] = x.mem_total_mb, row[6] = x.t;
    for (int k = 0; k < SYS_VALUES; k++)   /* NaN would poison the sum: -1 marks unknown */
        if (row[k] != row[k]) row[k] = -1;
    dist_allreduce_sum_f64(buf, (size_t)N * SYS_VALUES);
    TrainEvent ev = {.kind = TEV_SYS, .n_sys = N - 1};
    if (r == 0 && N > 1 && (ev.sys = calloc((size_t)N - 1, sizeof *ev.sys))) {
        for (int i = 1; i < N; i++) {
            const double *v = buf + (size_t)i * SYS_VALUES;
            SysSample *s = &ev.sys[i - 1];
            s->rank = i;
            s->step = t->ts.step;
            s->cpu = v[0] < 0 ? 0.0 / 0.0 : v[0];
            s->rss_mb = v[1] < 0 ? 0.0 / 0.0 : v[1];
            s->threads = (int)v[2];
            s->load1 = v[3] < 0 ? 0.0 / 0.0 : v[3];
            s->mem_avail_mb = v[4] < 0 ? 0.0 / 0.0 : v[4];
            s->mem_total_mb = v[5] < 0 ? 0.0 / 0.0 : v[5];
            s->t = v[6] > 0 ? v[6] : x.t;
            s->tokens_per_s = 0.0 / 0.0;
        }
        trainer_push(t, &ev);
    }
}

void trainer_dist_announce(const Config *cfg, const TrainerOptions *opt)
{
    if (dist_size() < 2 || dist_rank() != 0)
        return;
    static Job job;     /* large (paths): not on the stack */
    memset(&job, 0, sizeof job);
    job.kind = JOB_TRAIN;
    job.cfg = *cfg;
    if (opt)
        job.opt = *opt;
    job.opt.clock = NULL;   /* an address in this process only */
    if (!getcwd(job.cwd, sizeof job.cwd))
        job.cwd[0] = 0;
    dist_bcast_idle(&job, sizeof job);
}

/* A rank works in rank 0's folder, so that a relative path of rank 0's settings (data=,
 * tokens_dir=, the prepared tokens beside a relative store) names the same file here:
 * a rank started elsewhere (`mpirun -wdir`, a host's other home) failed with "no dataset
 * './lmlab-tokens/KEY'". Where that folder does not exist, it says so and stays. */
static void follow_cwd(const char *cwd)
{
    char here[sizeof ((Job *)0)->cwd];
    if (!cwd[0] || (getcwd(here, sizeof here) && !strcmp(here, cwd)) || !chdir(cwd))
        return;
    fprintf(stderr, "lmlab rank %d: cannot work in rank 0's folder %s (%s): its relative "
            "paths (data=, tokens_dir=, the tokens beside the store) may name other files "
            "here; start every rank where that folder exists, or give absolute paths\n",
            dist_rank(), cwd, strerror(errno));
}

void trainer_dist_release(void)
{
    if (dist_size() < 2 || dist_rank() != 0)
        return;
    static Job job;
    memset(&job, 0, sizeof job);
    job.kind = JOB_QUIT;
    dist_bcast_idle(&job, sizeof job);
}

void trainer_dist_set_service(int (*fn)(void)) { g_service = fn; }

void trainer_dist_call_service(void)
{
    if (dist_size() < 2 || dist_rank() != 0)
        return;
    static Job job;
    memset(&job, 0, sizeof job);
    job.kind = JOB_SERVICE;
    dist_bcast_idle(&job, sizeof job);
}

Trainer *trainer_dist_agree(Trainer *t, char *err)
{
    if (dist_size() < 2)
        return t;
    int ok = t != NULL;
    if (ok && t->cfg.batch < dist_size()) {
        err_set(err, LM_EARG, "batch=%d is smaller than the %d processes: every process "
                "needs at least one row of the batch (raise batch or lower -np)",
                t->cfg.batch, dist_size());
        ok = 0;
    }
    int all[2] = {ok, dist_rank() == 0 ? ok : 1};   /* every rank's, rank 0's */
    dist_allreduce_min_int(all, 2);
    if (!all[0]) {
        if (ok)
            err_set(err, LM_EARG, "another process of the MPI job could not build the run "
                    "(its message is on its standard error)");
        else if (dist_rank() > 0 && all[1])   /* rank 0 failed too: it has said why */
            fprintf(stderr, "lmlab rank %d: %s\n", dist_rank(), err);
        trainer_destroy(t);
        return NULL;
    }
    dist_bcast(t->m->params.data, t->m->params.total * sizeof(float));
    matmul_weights_changed(t->m->params.data);   /* rank 0's weights: bf16 packs stale */
    if (t->optim.m)
        dist_bcast(t->optim.m, t->optim.n * sizeof(float));
    if (t->optim.v)
        dist_bcast(t->optim.v, t->optim.n * sizeof(float));
    g_pending = t;
    return t;
}

void trainer_dist_start(const Trainer *t, int started)
{
    if (dist_size() < 2 || !t || g_pending != t)
        return;
    g_pending = NULL;
    dist_bcast_idle(&started, sizeof started);
}

int trainer_dist_control(Trainer *t, int go)
{
    if (dist_size() < 2)
        return go;
    Control c = {.go = go, .sched = t->sched, .elapsed = t->ts.elapsed};
    if (dist_rank() == 0 && go && sysinfo_now() >= g_next_sys) {
        if (g_next_sys == 0) sysmetrics_init(&g_meter);
        c.sys = g_next_sys > 0;   /* the first time only starts the CPU clocks */
        g_next_sys = sysinfo_now() + sysmetrics_every();
    }
    dist_bcast_idle(&c, sizeof c);
    t->sched = c.sched;
    t->ts.elapsed = c.elapsed;
    g_open = c.go;
    if (c.sys && c.go)
        gather_sys(t);
    return c.go;
}

void trainer_dist_end(Trainer *t)
{
    if (dist_size() > 1 && g_open)
        trainer_dist_control(t, 0);
    g_open = 0;
}

int trainer_dist_flag(int v)
{
    if (dist_size() > 1)
        dist_bcast_idle(&v, sizeof v);
    return v;
}

void trainer_dist_mirror_tasks(Trainer *t, int evaluated, int other)
{
    if (evaluated && t->m->ops->reset_state)
        t->m->ops->reset_state(t->m);
    if (other)
        trainer_reset_states(t);
}

/* The gradient's fold over the ranks (shardplan.h): rank N-1 folds its shards, each rank
 * below folds its own onto what the rank above sent, and rank 0's total reaches everyone. */
static int fold_over_ranks(Trainer *t)
{
    int N = dist_size(), r = dist_rank();
    ParamSet *ps = &t->m->params;
    size_t bytes = ps->total * sizeof(float);
    const float *init = NULL;
    if (r < N - 1) {
        if (!t->fold_buf && !(t->fold_buf = malloc(bytes)))
            return LM_ENOMEM;
        if (dist_recv(r + 1, TAG_FOLD, t->fold_buf, bytes, NULL))
            return LM_EIO;
        init = t->fold_buf;
    }
    replicas_fold(t->reps, init);
    if (r > 0 && dist_send(r - 1, TAG_FOLD, ps->grad, bytes))
        return LM_EIO;
    dist_bcast(ps->grad, bytes);
    return LM_OK;
}

int trainer_dist_step(Trainer *t, int T, double *loss_sum, long *count)
{
    int N = dist_size(), r = dist_rank();
    if (N < 2)
        return replicas_step(t->reps, t->x, t->y, t->cfg.batch, T, loss_sum, count);
    Model *m = t->m;
    /* Every rank computes its shards of the global batch; dropout masks follow the global
     * row and the step's seed, which every rank draws alike from its copy of the stream.
     * Each shard's loss and tokens have one rank's value and the others' 0: the sum is
     * exact, and the shards are added in order as on one process. */
    int S = replicas_plan(t->reps)->S, lo, hi;
    shardplan_share(S, N, r, &lo, &hi);
    double loss[SHARDPLAN_MAX], red[2 * SHARDPLAN_MAX + 1] = {0};
    long cnt[SHARDPLAN_MAX];
    int rc = replicas_forward(t->reps, t->x, t->y, T, loss, cnt);
    for (int s = lo; s < hi && !rc; s++) {
        red[s] = loss[s];
        red[S + s] = (double)cnt[s];
    }
    red[2 * S] = rc ? 1 : 0;
    dist_allreduce_sum_f64(red, 2 * (size_t)S + 1);
    if (red[2 * S] != 0)
        return rc ? rc : LM_EIO;   /* some rank failed: every rank stops at this step */
    double sum = 0;
    long total = 0;
    for (int s = 0; s < S; s++) {
        sum += red[s];
        total += (long)red[S + s];
    }
    if (m->training && total > 0) {
        replicas_backward(t->reps, 1.0f / (float)total);
        if ((rc = fold_over_ranks(t))) {
            fprintf(stderr, "lmlab rank %d: the gradient exchange failed (%s)\n", r,
                    err_name(rc));
            dist_abort(1);   /* the other ranks wait for this one's gradient */
            return rc;
        }
    }
    *loss_sum = sum;
    *count = total;
    return LM_OK;
}

int trainer_dist_serve(void)
{
    if (dist_size() < 2 || dist_rank() == 0)
        return LM_OK;
    static Job job;
    for (;;) {
        dist_bcast_idle(&job, sizeof job);
        if (job.kind == JOB_SERVICE) {
            if (g_service)
                g_service();
            else           /* rank 0 would wait for it forever */
                dist_abort(1);
            continue;
        }
        if (job.kind != JOB_TRAIN)
            return LM_OK;
        char err[LM_ERR_LEN] = "";
        follow_cwd(job.cwd);
        Trainer *t = trainer_create(&job.cfg, &job.opt, err);
        if (!t)
            continue;
        int started = 0;
        dist_bcast_idle(&started, sizeof started);
        g_pending = NULL;
        if (started && trainer_start(t, err) == LM_OK) {
            trainer_join(t);
        } else if (started) {  /* rank 0 is already waiting for this rank's steps */
            fprintf(stderr, "lmlab rank %d: %s\n", dist_rank(), err);
            dist_abort(1);
        }
        TrainEvent ev;
        while (trainer_poll(t, &ev, 0))
            trainer_event_free(&ev);
        trainer_destroy(t);
    }
}
