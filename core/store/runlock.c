/* runlock.c — per-run kernel locks (see private/runlock.h). fcntl(F_SETLK) byte-range
 * locks, one byte per run id, on one file per store; a small process-wide table keeps one
 * descriptor per lock file open (guarded by a mutex: the recorder thread and the command
 * thread both use it). Not a lock between threads of one process (POSIX record locks never
 * conflict within a process): the store treats its own pid as alive. */
#include "private/runlock.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RUNLOCK_FILES 16

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { char path[1040]; int fd; } table[RUNLOCK_FILES];
static int n_table;

/* The descriptor of db_path's lock file (opened, and created when create, on first use);
 * -1 when it cannot be opened. */
static int lock_fd(const char *db_path, int create)
{
    char path[1040];
    snprintf(path, sizeof path, "%.1000s-runlocks", db_path);
    pthread_mutex_lock(&table_mu);
    int fd = -1;
    for (int i = 0; i < n_table && fd < 0; i++)
        if (!strcmp(table[i].path, path)) fd = table[i].fd;
    if (fd < 0) {
        fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0666);
        if (fd >= 0 && n_table < RUNLOCK_FILES) {
            snprintf(table[n_table].path, sizeof table[n_table].path, "%s", path);
            table[n_table++].fd = fd;
        }
        /* a full table: the descriptor stays open (closing it would drop locks) */
    }
    pthread_mutex_unlock(&table_mu);
    return fd;
}

static struct flock byte_of(short type, long id)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = id;
    fl.l_len = 1;
    return fl;
}

int runlock_acquire(const char *db_path, long id, char *err)
{
    int fd = lock_fd(db_path, 1);
    if (fd < 0)
        return err_set(err, LM_EIO, "cannot open %s-runlocks next to the store: %s", db_path,
                       strerror(errno));
    struct flock fl = byte_of(F_WRLCK, id);
    if (fcntl(fd, F_SETLK, &fl) == 0)
        return LM_OK;
    long pid = 0;
    runlock_held(db_path, id, &pid);
    return err_set(err, LM_ESTATE, "run %ld is being trained by process %ld (it holds the "
                   "run's lock)", id, pid);
}

void runlock_release(const char *db_path, long id)
{
    int fd = lock_fd(db_path, 0);
    if (fd < 0)
        return;
    struct flock fl = byte_of(F_UNLCK, id);
    fcntl(fd, F_SETLK, &fl);
}

int runlock_held(const char *db_path, long id, long *pid)
{
    int fd = lock_fd(db_path, 0);
    if (fd < 0)
        return -1;
    struct flock fl = byte_of(F_WRLCK, id);
    if (fcntl(fd, F_GETLK, &fl))
        return -1;
    if (fl.l_type == F_UNLCK)
        return 0;
    if (pid) *pid = fl.l_pid;
    return 1;
}
