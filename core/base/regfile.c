/* regfile.c — a regular file opened for reading without blocking (see regfile.h). */
#include "regfile.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a plain file";
}

int regfile_open(const char *path, int *fd, size_t *size, char *err)
{
    *fd = -1;
    *size = 0;
    int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0)
        return err_set(err, LM_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(f, &sb) != 0) {
        int e = errno;
        close(f);
        return err_set(err, LM_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(f);
        return err_set(err, LM_EARG, "%s: not a regular file (%s): give a file", path,
                       kind_of(sb.st_mode));
    }
    int fl = fcntl(f, F_GETFL);
    if (fl >= 0)
        fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    *fd = f;
    *size = (size_t)sb.st_size;
    return LM_OK;
}

FILE *regfile_fopen(const char *path, char *err)
{
    int fd;
    size_t size;
    if (regfile_open(path, &fd, &size, err))
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        err_set(err, LM_ENOMEM, "%s: cannot open a stream: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int regfile_read(const char *path, size_t max, unsigned char **buf, size_t *size, char *err)
{
    *buf = NULL;
    *size = 0;
    int fd;
    size_t n;
    int rc = regfile_open(path, &fd, &n, err);
    if (rc)
        return rc;
    if (n > max) {
        close(fd);
        return err_set(err, LM_EFORMAT, "%s: %zu bytes, more than the %zu lmlab reads from "
                       "such a file", path, n, max);
    }
    unsigned char *b = malloc(n + 1);
    if (!b) {
        close(fd);
        return err_set(err, LM_ENOMEM, "%s: cannot allocate %zu bytes", path, n + 1);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            free(b);
            close(fd);
            return err_set(err, LM_EIO, "%s: read failed: %s", path,
                           e ? strerror(e) : "the file shrank while reading");
        }
        got += (size_t)r;
    }
    close(fd);
    b[n] = 0;
    *buf = b;
    *size = n;
    return LM_OK;
}
