/* sweep_pool.c — the workers of a parallel sweep: local processes and MPI ranks (see
 * sweep_pool.h). Messages between rank 0 and a worker rank, all a PoolMsg:
 *   rank 0 -> worker (TAG_CTRL): TRAIN {sweep, trial, stop_at, threads, db}, PAUSE,
 *                                RESUME, STOP (of its current trial), QUIT (the service)
 *   worker -> rank 0 (TAG_DONE): DONE {trial, code} once its trial has ended.
 * A PAUSE/RESUME/STOP that reaches a worker after its trial ended is ignored. */
#include "sweep_pool.h"

#include "dist.h"
#include "err.h"
#include "sweep_runner.h"
#include "trainer_dist.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum { TAG_CTRL = 7401, TAG_DONE = 7402 };
enum { MSG_TRAIN = 1, MSG_PAUSE, MSG_RESUME, MSG_STOP, MSG_QUIT, MSG_DONE };

typedef struct {
    int kind, trial, threads, code;
    long sweep_id, stop_at;
    char db[1024];
} PoolMsg;

typedef struct {
    pid_t pid;             /* a local worker: its process, 0 = free */
    int rank;              /* a worker rank (> 0), or 0 for a local slot */
    int busy, trial;
} Worker;

struct SweepPool {
    int n;
    Worker *w;             /* (n): the local slots first, then the ranks */
    int serving;           /* the worker ranks are in their service (trainer_dist) */
    char exe[1024];
};

SweepPool *sweep_pool_create(int local, int ranks, char *err)
{
    SweepPool *p = calloc(1, sizeof *p);
    int n = (local > 0 ? local : 0) + (ranks > 0 ? ranks : 0);
    if (!p || !(p->w = calloc((size_t)(n > 0 ? n : 1), sizeof *p->w))) {
        free(p);
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    p->n = n;
    for (int i = 0; i < n; i++)
        p->w[i].rank = i < local ? 0 : i - local + 1;
    ssize_t len = local > 0 ? readlink("/proc/self/exe", p->exe, sizeof p->exe - 1) : 0;
    if (len < 0) {
        err_set(err, LM_EIO, "parallel sweep: cannot find this program (/proc/self/exe) to "
                "start workers; run the sweep without parallel=");
        free(p->w);
        free(p);
        return NULL;
    }
    p->exe[len] = 0;
    return p;
}

int sweep_pool_running(const SweepPool *p)
{
    int k = 0;
    for (int i = 0; i < p->n; i++)
        k += p->w[i].busy;
    return k;
}

int sweep_pool_free(const SweepPool *p) { return p->n - sweep_pool_running(p); }

/* The child of a local worker forgets the MPI job its parent may be part of (it is one
 * process on its own: dist_init leaves MPI alone without these). */
static void drop_launcher_env(void)
{
    extern char **environ;
    const char *pre[] = {"OMPI_", "PMIX_", "PMI_", "MPI_LOCALNRANKS"};
    for (int found = 1; found;) {
        found = 0;
        for (char **e = environ; e && *e && !found; e++)
            for (size_t k = 0; k < sizeof pre / sizeof *pre && !found; k++)
                if (!strncmp(*e, pre[k], strlen(pre[k])) && strchr(*e, '=')) {
                    char name[256];
                    snprintf(name, sizeof name, "%.*s", (int)(strchr(*e, '=') - *e), *e);
                    unsetenv(name);
                    found = 1;
                }
    }
}

/* In the child: quiet (the parent may be drawing the dashboard), ended with its parent
 * (SIGTERM: the trial keeps its checkpoint and stays pending), then lmlab. SIGTERM stays
 * blocked (pending across exec) until the worker command watches for it
 * (sweep_pool_worker_ready), so a stop that comes while lmlab starts is not lost: before,
 * the session cleared it and the trial trained to its end, recorded done. */
static void exec_worker(const char *exe, const char *db, const char *line)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1)
        _exit(3);
    drop_launcher_env();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    char *argv[] = {(char *)exe, "--db", (char *)db, "-c", (char *)line, NULL};
    execv(exe, argv);
    _exit(127);
}

static int spawn_local(Worker *w, const char *exe, const char *db_path, long sweep_id,
                       int trial, long stop_at, int threads, char *err)
{
    char line[256];
    snprintf(line, sizeof line, "sweep worker=%ld trial=%d stop_at=%ld threads=%d", sweep_id,
             trial, stop_at, threads);
    /* stdout and stderr only: fflush(NULL) also takes stdin's lock, which the REPL's
     * getline holds while it waits for a line, so a `sweep ... parallel=K` typed at a piped
     * prompt started no worker until the next line came (the child execs at once: no
     * other stream's buffer is written twice) */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, LM_EIO, "parallel sweep: cannot start a worker process for trial "
                       "%d (fork failed)", trial);
    if (pid == 0)
        exec_worker(exe, db_path, line);
    w->pid = pid;
    return LM_OK;
}

static int send_msg(int rank, int kind, int trial, int code)
{
    PoolMsg m = {.kind = kind, .trial = trial, .code = code};
    return dist_send(rank, kind == MSG_DONE ? TAG_DONE : TAG_CTRL, &m, sizeof m);
}

int sweep_pool_spawn(SweepPool *p, const char *db_path, long sweep_id, int trial,
                     long stop_at, int threads, char *err)
{
    Worker *w = NULL;
    for (int i = 0; i < p->n && !w; i++)
        if (!p->w[i].busy)
            w = &p->w[i];
    if (!w)
        return err_set(err, LM_ESTATE, "every worker is busy");
    if (!w->rank && spawn_local(w, p->exe, db_path, sweep_id, trial, stop_at, threads, err))
        return LM_EIO;
    if (w->rank) {
        if (!p->serving)
            trainer_dist_call_service();
        p->serving = 1;
        PoolMsg m = {.kind = MSG_TRAIN, .trial = trial, .threads = threads,
                     .sweep_id = sweep_id, .stop_at = stop_at};
        snprintf(m.db, sizeof m.db, "%s", db_path);
        if (dist_send(w->rank, TAG_CTRL, &m, sizeof m))
            return err_set(err, LM_EIO, "parallel sweep: cannot send trial %d to rank %d",
                           trial, w->rank);
    }
    w->busy = 1;
    w->trial = trial;
    return LM_OK;
}

int sweep_pool_reap(SweepPool *p, int *trial, int *code)
{
    int from = -1;
    if (p->serving && dist_probe(-1, TAG_DONE, &from)) {
        PoolMsg m;
        if (dist_recv(from, TAG_DONE, &m, sizeof m, NULL) == LM_OK)
            for (int i = 0; i < p->n; i++)
                if (p->w[i].rank == from && p->w[i].busy) {
                    p->w[i].busy = 0;
                    *trial = m.trial;
                    *code = m.code;
                    return 1;
                }
    }
    for (int i = 0; i < p->n; i++) {
        int st = 0;
        if (!p->w[i].busy || p->w[i].rank || waitpid(p->w[i].pid, &st, WNOHANG) != p->w[i].pid)
            continue;
        *trial = p->w[i].trial;
        *code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
        p->w[i].busy = 0;
        p->w[i].pid = 0;
        return 1;
    }
    return 0;
}

void sweep_pool_signal(SweepPool *p, int sig)
{
    int kind = sig == SIGSTOP ? MSG_PAUSE : sig == SIGCONT ? MSG_RESUME : MSG_STOP;
    for (int i = 0; i < p->n; i++) {
        if (!p->w[i].busy)
            continue;
        if (p->w[i].rank)
            send_msg(p->w[i].rank, kind, p->w[i].trial, 0);
        else
            kill(p->w[i].pid, sig);
    }
}

void sweep_pool_destroy(SweepPool *p)
{
    if (!p)
        return;
    sweep_pool_signal(p, SIGCONT);
    sweep_pool_signal(p, SIGTERM);
    for (int i = 0; i < p->n; i++) {
        if (p->w[i].busy && !p->w[i].rank)
            waitpid(p->w[i].pid, NULL, 0);
        PoolMsg m;
        if (p->w[i].busy && p->w[i].rank)
            dist_recv(p->w[i].rank, TAG_DONE, &m, sizeof m, NULL);
    }
    for (int i = 0; p->serving && i < p->n; i++)
        if (p->w[i].rank)
            send_msg(p->w[i].rank, MSG_QUIT, 0, 0);
    free(p->w);
    free(p);
}

void sweep_pool_worker_ready(void)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &term, NULL);
}

/* ---- a worker rank ------------------------------------------------------------------- */

/* Trains the trial m names alone (dist_solo), relaying rank 0's pause, resume and stop.
 * 0 when the trial ended on its own or was stopped, 1 when it could not be trained. */
static int train_trial(const PoolMsg *m)
{
    char err[LM_ERR_LEN] = "";
    dist_solo(1);
    SweepWorkerJob job = {.trial = m->trial, .stop_at = m->stop_at, .threads = m->threads};
    SweepRunner *r = sweep_runner_open(m->sweep_id, m->db, &job, err);
    int rc = r ? sweep_runner_start(r, err) : LM_EARG;
    while (!rc && !sweep_runner_done(r)) {
        PoolMsg c;
        if (dist_probe(0, TAG_CTRL, NULL) && dist_recv(0, TAG_CTRL, &c, sizeof c, NULL) == LM_OK) {
            if (c.kind == MSG_PAUSE) sweep_runner_pause(r);
            else if (c.kind == MSG_RESUME) sweep_runner_resume(r);
            else if (c.kind == MSG_STOP) sweep_runner_stop(r);
        }
        usleep(50000);
    }
    if (r) {
        sweep_runner_join(r);
        SweepProgress pr;
        sweep_runner_progress(r, &pr);
        if (!rc && (rc = sweep_runner_result(r)) && rc != LM_ECANCEL)
            snprintf(err, sizeof err, "%s", pr.message);
        sweep_runner_destroy(r);
    }
    dist_solo(0);
    if (rc && rc != LM_ECANCEL)
        fprintf(stderr, "lmlab rank %d: sweep %ld trial %d: %s\n", dist_world_rank(),
                m->sweep_id, m->trial, err);
    return rc && rc != LM_ECANCEL;
}

int sweep_pool_serve_rank(void)
{
    for (;;) {
        PoolMsg m;
        while (!dist_probe(0, TAG_CTRL, NULL))
            usleep(20000);     /* idle without spinning while the others train */
        if (dist_recv(0, TAG_CTRL, &m, sizeof m, NULL))
            return LM_EIO;
        if (m.kind == MSG_QUIT)
            return LM_OK;
        if (m.kind == MSG_TRAIN && send_msg(0, MSG_DONE, m.trial, train_trial(&m)))
            return LM_EIO;
    }
}
