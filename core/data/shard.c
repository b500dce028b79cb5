/* shard.c — writing and checking llm.c-layout token shards (see shard.h). The header is
 * written first with a count of 0 and rewritten with the real count when a shard is
 * finished, so a shard cut short by a crash reads as truncated, never as whole.
 * Reference: llm.c dev/data/data_common.py write_datafile. Not a reader for training. */
#include "shard.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHARD_BUF (1u << 20)

struct ShardWriter {
    char dir[1024], prefix[32];
    int width;
    unsigned long long max, *counts, total, bytes;
    int n, cap, fd;
    unsigned char *buf;   /* (SHARD_BUF) tokens not yet written */
    size_t blen;
    char path[1100];
};

int shard_width(int V) { return V <= 65536 ? 2 : 4; }

int shard_writer_count(const ShardWriter *w) { return w->n; }
unsigned long long shard_writer_tokens_of(const ShardWriter *w, int i) { return w->counts[i]; }
unsigned long long shard_writer_tokens(const ShardWriter *w) { return w->total; }
unsigned long long shard_writer_bytes(const ShardWriter *w) { return w->bytes; }

int shard_writer_create(const char *dir, const char *prefix, int width,
                        unsigned long long max_tokens, ShardWriter **out, char *err)
{
    ShardWriter *w = calloc(1, sizeof *w);
    if (!w || !(w->buf = malloc(SHARD_BUF))) {
        free(w);
        return err_set(err, LM_ENOMEM, "out of memory for the shard writer");
    }
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    snprintf(w->prefix, sizeof w->prefix, "%s", prefix);
    w->width = width;
    w->max = max_tokens ? max_tokens : SHARD_MAX_TOKENS;
    w->fd = -1;
    *out = w;
    return LM_OK;
}

void shard_writer_destroy(ShardWriter *w)
{
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    free(w->counts);
    free(w->buf);
    free(w);
}

static int write_all(ShardWriter *w, int fd, const void *p, size_t n, char *err)
{
    const char *b = p;
    while (n) {
        ssize_t r = write(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0)
            return err_set(err, errno == ENOSPC || errno == EDQUOT ? LM_ENOSPC : LM_EIO,
                           "cannot write '%s': %s", w->path, strerror(errno));
        b += r;
        n -= (size_t)r;
        w->bytes += (unsigned long long)r;
    }
    return LM_OK;
}

static void header(int32_t h[256], int width, unsigned long long count)
{
    memset(h, 0, 256 * sizeof *h);
    h[0] = width == 2 ? SHARD_MAGIC_U16 : SHARD_MAGIC_U32;
    h[1] = width == 2 ? SHARD_VERSION_U16 : SHARD_VERSION_U32;
    h[2] = (int32_t)count;   /* lmlab runs on little-endian machines; llm.c's layout is LE */
}

static int flush_buf(ShardWriter *w, char *err)
{
    int rc = w->blen ? write_all(w, w->fd, w->buf, w->blen, err) : LM_OK;
    w->blen = 0;
    return rc;
}

int shard_writer_finish(ShardWriter *w, char *err)
{
    if (w->fd < 0) return LM_OK;
    int rc = flush_buf(w, err);
    int32_t h[256];
    header(h, w->width, w->counts[w->n - 1]);
    if (!rc && pwrite(w->fd, h, sizeof h, 0) != (ssize_t)sizeof h)
        rc = err_set(err, errno == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot write '%s': %s", w->path,
                     strerror(errno));
    if (!rc && fsync(w->fd))
        rc = err_set(err, errno == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot write '%s': %s", w->path,
                     strerror(errno));
    close(w->fd);
    w->fd = -1;
    return rc;
}

static int open_next(ShardWriter *w, char *err)
{
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 8;
        unsigned long long *c = realloc(w->counts, (size_t)cap * sizeof *c);
        if (!c) return err_set(err, LM_ENOMEM, "out of memory for the shard list");
        w->counts = c;
        w->cap = cap;
    }
    snprintf(w->path, sizeof w->path, "%s/%s_%06d.bin", w->dir, w->prefix, w->n);
    w->fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0)
        return err_set(err, errno == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot create '%s': %s", w->path,
                       strerror(errno));
    w->counts[w->n++] = 0;
    int32_t h[256];
    header(h, w->width, 0);
    return write_all(w, w->fd, h, sizeof h, err);
}

int shard_writer_put(ShardWriter *w, const int *ids, size_t n, char *err)
{
    unsigned long long lim = w->width == 2 ? 65536ULL : 4294967296ULL;
    for (size_t i = 0; i < n;) {
        if (w->fd < 0 || w->counts[w->n - 1] == w->max) {
            int rc = w->fd >= 0 ? shard_writer_finish(w, err) : LM_OK;
            if (!rc) rc = open_next(w, err);
            if (rc) return rc;
        }
        size_t room = (SHARD_BUF - w->blen) / (size_t)w->width;
        if (room == 0) {
            int rc = flush_buf(w, err);
            if (rc) return rc;
            continue;
        }
        unsigned long long left = w->max - w->counts[w->n - 1];
        size_t k = n - i < room ? n - i : room;
        if (k > left) k = (size_t)left;
        unsigned char *p = w->buf + w->blen;
        for (size_t j = 0; j < k; j++) {
            int id = ids[i + j];
            if (id < 0 || (unsigned long long)id >= lim)
                return err_set(err, LM_EARG, "token id %d does not fit a %d-byte shard", id, w->width);
            uint32_t v = (uint32_t)id;
            *p++ = (unsigned char)v;
            *p++ = (unsigned char)(v >> 8);
            if (w->width == 4) {
                *p++ = (unsigned char)(v >> 16);
                *p++ = (unsigned char)(v >> 24);
            }
        }
        w->blen += k * (size_t)w->width;
        w->counts[w->n - 1] += k;
        w->total += k;
        i += k;
    }
    return LM_OK;
}

int shard_check(const char *path, unsigned long long *count, int *width, char *err)
{
    struct stat st;
    if (!stat(path, &st) && !S_ISREG(st.st_mode))   /* before open: a pipe would block */
        return err_set(err, LM_EFORMAT, "shard '%s' is not a regular file (%s): prepare the "
                       "corpus again", path, S_ISDIR(st.st_mode) ? "a directory" : "a device "
                       "or pipe");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(err, LM_EIO, "cannot open shard '%s': %s", path, strerror(errno));
    unsigned char h[SHARD_HEADER_BYTES];
    ssize_t r = pread(fd, h, sizeof h, 0);
    int ok = !fstat(fd, &st);
    close(fd);
    if (!ok || r != (ssize_t)sizeof h)
        return err_set(err, LM_EFORMAT, "shard '%s' is shorter than its 1024-byte header (%lld "
                       "bytes): prepare the corpus again", path, ok ? (long long)st.st_size : -1LL);
    int32_t v[3];
    for (int i = 0; i < 3; i++)
        v[i] = (int32_t)((uint32_t)h[4 * i] | (uint32_t)h[4 * i + 1] << 8 |
                         (uint32_t)h[4 * i + 2] << 16 | (uint32_t)h[4 * i + 3] << 24);
    if (v[0] == SHARD_MAGIC_U16 && v[1] == SHARD_VERSION_U16) *width = 2;
    else if (v[0] == SHARD_MAGIC_U32 && v[1] == SHARD_VERSION_U32) *width = 4;
    else return err_set(err, LM_EFORMAT, "'%s' is not a token shard (magic %d version %d; llm.c's "
                        "are %d/%d and %d/%d)", path, v[0], v[1], SHARD_MAGIC_U16,
                        SHARD_VERSION_U16, SHARD_MAGIC_U32, SHARD_VERSION_U32);
    if (v[2] < 0) return err_set(err, LM_EFORMAT, "shard '%s': negative token count %d", path, v[2]);
    *count = (unsigned long long)v[2];
    unsigned long long want = SHARD_HEADER_BYTES + *count * (unsigned long long)*width;
    if ((unsigned long long)st.st_size != want)
        return err_set(err, LM_EFORMAT, "shard '%s' is truncated or damaged: its header says %llu "
                       "tokens (%llu bytes) but the file has %lld bytes: prepare the corpus again",
                       path, *count, want, (long long)st.st_size);
    return LM_OK;
}

int shard_truncate(const char *path, unsigned long long count, int width, char *err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    int32_t h[256];
    header(h, width, count);
    int rc = fd < 0 || pwrite(fd, h, sizeof h, 0) != (ssize_t)sizeof h ||
             ftruncate(fd, (off_t)(SHARD_HEADER_BYTES + count * (unsigned long long)width)) || fsync(fd);
    int e = errno;
    if (fd >= 0) close(fd);
    return rc ? err_set(err, LM_EIO, "cannot cut shard '%s': %s", path, strerror(e)) : LM_OK;
}
