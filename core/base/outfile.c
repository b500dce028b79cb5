/* outfile.c — writing a user-named file without replacing what the path is (see
 * outfile.h): atomic temporary + rename for regular files at a link's resolved target,
 * streams for "-", FIFOs and character devices, a clear refusal for everything else. */
#include "outfile.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *outfile_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISSOCK(m) ? "a socket" : S_ISBLK(m) ? "a block device"
         : "not a regular file";
}

static int outfile_errno(int e)
{
    return e == ENOSPC || e == EDQUOT || e == EFBIG ? LM_ENOSPC : LM_EIO;
}

/* A FIFO or character device, written in place. A FIFO without a reader would block the
 * open forever: O_NONBLOCK makes that an error (ENXIO). A reader started together with
 * lmlab (`cat pipe & lmlab export ...`) may not have opened it yet, so the open is
 * retried every 20 ms for OUTFILE_FIFO_WAIT_MS, and only then refused, saying so. */
static int outfile_open_stream(OutFile *o, const char *path, char *err)
{
    int fd, e = 0;
    for (int waited = 0;; waited += 20) {
        fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        e = fd < 0 ? errno : 0;
        if (fd >= 0 || e != ENXIO || waited >= OUTFILE_FIFO_WAIT_MS) break;
        usleep(20000);
    }
    if (fd < 0) {
        if (e == ENXIO)
            return err_set(err, LM_EIO, "%s is a FIFO with no reader (waited %.1f s for one):"
                           " start the reader first", path, OUTFILE_FIFO_WAIT_MS / 1000.0);
        return err_set(err, outfile_errno(e), "cannot write %s: %s", path, strerror(e));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    o->fd = fd;
    snprintf(o->target, sizeof o->target, "%s", path);
    return LM_OK;
}

/* A new or regular file at target: a temporary file in the same directory. */
static int outfile_open_atomic(OutFile *o, const char *target, mode_t mode, char *err)
{
    if (strlen(target) >= sizeof o->target)
        return err_set(err, LM_EARG, "path too long (%zu bytes): %.80s...", strlen(target), target);
    snprintf(o->target, sizeof o->target, "%s", target);
    /* PATH.tmp.PID: the name crash clean-up and checkpoint_find already know as torn */
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", target, (long)getpid());
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        o->tmp[0] = 0;
        return err_set(err, outfile_errno(e), "cannot create a file next to %s: %s", target,
                       strerror(e));
    }
    fchmod(fd, mode);
    o->fd = fd;
    o->atomic = 1;
    return LM_OK;
}

int outfile_open(OutFile *o, const char *path, char *err)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!path || !*path)
        return err_set(err, LM_EARG, "an empty path: name a file, or - for standard output");
    if (!strcmp(path, "-")) {
        o->fd = dup(STDOUT_FILENO);
        if (o->fd < 0) return err_set(err, LM_EIO, "standard output: %s", strerror(errno));
        o->is_stdout = 1;
        snprintf(o->target, sizeof o->target, "(standard output)");
        return LM_OK;
    }
    struct stat sb, lsb;
    if (stat(path, &sb) != 0) {
        int e = errno;
        if (e == ENOENT && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
            return err_set(err, LM_EARG, "%s is a symbolic link to a missing file: point it at"
                           " a file or remove it", path);
        if (e != ENOENT)
            return err_set(err, LM_EIO, "cannot write %s: %s", path, strerror(e));
        return outfile_open_atomic(o, path, 0644, err);
    }
    if (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)) return outfile_open_stream(o, path, err);
    if (!S_ISREG(sb.st_mode))
        return err_set(err, LM_EARG, "%s is %s: give the path of a file to write", path,
                       outfile_kind(sb.st_mode));
    char *real = realpath(path, NULL);
    if (!real) return err_set(err, LM_EIO, "cannot resolve %s: %s", path, strerror(errno));
    int st = outfile_open_atomic(o, real, sb.st_mode & 07777, err);
    free(real);
    return st;
}

int outfile_write(OutFile *o, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(o->fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static void outfile_sync_dir(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int outfile_commit(OutFile *o, const char *shown, char *err)
{
    int e = 0;
    /* streams: fsync fails with EINVAL on pipes and most devices; only a file's own
     * failures count */
    if (o->atomic && fsync(o->fd) != 0) e = errno;
    if (close(o->fd) != 0 && !e && o->atomic) e = errno;
    o->fd = -1;
    if (!e && o->atomic && rename(o->tmp, o->target) != 0) e = errno;
    if (e) {
        outfile_abort(o);
        return err_set(err, outfile_errno(e), "%s: %s%s", shown ? shown : o->target,
                       e == ENOSPC ? "disk full: " : "write failed: ", strerror(e));
    }
    if (o->atomic) outfile_sync_dir(o->target);
    o->atomic = 0;
    o->tmp[0] = 0;
    return LM_OK;
}

void outfile_abort(OutFile *o)
{
    if (o->fd >= 0) close(o->fd);
    o->fd = -1;
    if (o->atomic && o->tmp[0]) unlink(o->tmp);
    o->atomic = 0;
    o->tmp[0] = 0;
}
