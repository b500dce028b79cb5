/* sweep_pool.c — worker processes for parallel sweeps (see sweep_pool.h). */
#include "sweep_pool.h"

#include "err.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    pid_t pid;             /* 0 = free */
    int trial;
} Worker;

struct SweepPool {
    int n;
    Worker *w;             /* (n) */
    char exe[1024];
};

SweepPool *sweep_pool_create(int workers, char *err)
{
    SweepPool *p = calloc(1, sizeof *p);
    if (!p || !(p->w = calloc((size_t)(workers > 0 ? workers : 1), sizeof *p->w))) {
        free(p);
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    p->n = workers > 0 ? workers : 1;
    ssize_t len = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
    if (len <= 0) {
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
        k += p->w[i].pid != 0;
    return k;
}

int sweep_pool_free(const SweepPool *p) { return p->n - sweep_pool_running(p); }

/* In the child: quiet (the parent may be drawing the dashboard), ended with its parent
 * (SIGTERM: the trial keeps its checkpoint and stays pending), then lmlab. */
static void exec_worker(const char *exe, const char *db, const char *line)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1)
        _exit(3);
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

int sweep_pool_spawn(SweepPool *p, const char *db_path, long sweep_id, int trial,
                     long stop_at, int threads, char *err)
{
    int slot = -1;
    for (int i = 0; i < p->n && slot < 0; i++)
        if (!p->w[i].pid)
            slot = i;
    if (slot < 0)
        return err_set(err, LM_ESTATE, "every worker is busy");
    char line[256];
    snprintf(line, sizeof line, "sweep worker=%ld trial=%d stop_at=%ld threads=%d",
             sweep_id, trial, stop_at, threads);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, LM_EIO, "parallel sweep: cannot start a worker process for trial "
                       "%d (fork failed)", trial);
    if (pid == 0)
        exec_worker(p->exe, db_path, line);
    p->w[slot].pid = pid;
    p->w[slot].trial = trial;
    return LM_OK;
}

int sweep_pool_reap(SweepPool *p, int *trial, int *code)
{
    for (int i = 0; i < p->n; i++) {
        int st = 0;
        if (!p->w[i].pid || waitpid(p->w[i].pid, &st, WNOHANG) != p->w[i].pid)
            continue;
        *trial = p->w[i].trial;
        *code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
        p->w[i].pid = 0;
        return 1;
    }
    return 0;
}

void sweep_pool_signal(SweepPool *p, int sig)
{
    for (int i = 0; i < p->n; i++)
        if (p->w[i].pid)
            kill(p->w[i].pid, sig);
}

void sweep_pool_destroy(SweepPool *p)
{
    if (!p)
        return;
    sweep_pool_signal(p, SIGCONT);
    sweep_pool_signal(p, SIGTERM);
    for (int i = 0; i < p->n; i++)
        if (p->w[i].pid)
            waitpid(p->w[i].pid, NULL, 0);
    free(p->w);
    free(p);
}
