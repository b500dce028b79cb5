/* tokseq.c — token sequences in memory or over shard files read with pread (see
 * tokseq.h). References: llm.c dev/data/data_common.py write_datafile (the header) and
 * llmc/dataloader.h (its reader: fseek + fread of each window, never a mapping);
 * nanoGPT train.py get_batch (np.memmap recreated per batch "to avoid a memory leak").
 * Not a mapper: a mapping of a 40 GB corpus would keep its pages charged to the process
 * (RSS, cgroup) for as long as it lives; pread leaves them to the page cache. */
#include "tokseq.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tokseq_init_memory(TokSeq *s, int *ids, uint64_t n)
{
    memset(s, 0, sizeof *s);
    s->mem = ids;
    s->n = n;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The header of an llm.c shard: width and count, or an error naming the file. */
static int read_header(int fd, const char *path, uint64_t size, int *width, uint64_t *count,
                       char *err)
{
    unsigned char h[TOKSEQ_HEADER];
    if (size < TOKSEQ_HEADER)
        return err_set(err, LM_EFORMAT, "'%s' is %llu bytes, shorter than llm.c's 1024-byte "
                       "header: not a token shard (nanoGPT's headerless files are named "
                       "train.bin / val.bin)", path, (unsigned long long)size);
    ssize_t got = pread(fd, h, sizeof h, 0);
    if (got != (ssize_t)sizeof h)
        return err_set(err, LM_EIO, "cannot read the header of '%s': %s", path,
                       got < 0 ? strerror(errno) : "short read");
    uint32_t magic = le32(h), version = le32(h + 4);
    if (magic == TOKSEQ_MAGIC16 && version == 1)
        *width = 2;
    else if (magic == TOKSEQ_MAGIC32 && version == 7)
        *width = 4;
    else
        return err_set(err, LM_EFORMAT, "'%s' is not an llm.c token shard: magic %u version "
                       "%u (expected %d version 1 for uint16 tokens or %d version 7 for "
                       "uint32)", path, magic, version, TOKSEQ_MAGIC16, TOKSEQ_MAGIC32);
    *count = le32(h + 8);
    if (*count > INT32_MAX)
        return err_set(err, LM_EFORMAT, "'%s': its header's token count %llu is negative as "
                       "llm.c's int32: a damaged header", path, (unsigned long long)*count);
    return LM_OK;
}

int tokseq_add_file(TokSeq *s, const char *path, int headerless, uint64_t expect, char *err)
{
    if (strlen(path) >= sizeof s->shard->path)
        return err_set(err, LM_EARG, "token file path too long (%zu bytes)", strlen(path));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return err_set(err, LM_EIO, "cannot open token file '%s': %s", path, strerror(errno));
    struct stat st;
    int rc = LM_OK, width = 2;
    uint64_t count = 0, offset = headerless ? 0 : TOKSEQ_HEADER;
    if (fstat(fd, &st))
        rc = err_set(err, LM_EIO, "cannot stat '%s': %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = err_set(err, LM_EARG, "'%s' is not a regular file: give a token file", path);
    uint64_t size = (uint64_t)st.st_size;
    if (!rc && headerless) {
        if (size % 2)
            rc = err_set(err, LM_EFORMAT, "'%s' has an odd size (%llu bytes): nanoGPT's "
                         "headerless files hold uint16 tokens, 2 bytes each (truncated?)", path,
                         (unsigned long long)size);
        count = size / 2;
    } else if (!rc) {
        rc = read_header(fd, path, size, &width, &count, err);
        if (!rc && size != TOKSEQ_HEADER + count * (uint64_t)width)
            rc = err_set(err, LM_EFORMAT, "'%s' is truncated or damaged: its header says %llu "
                         "tokens (%llu bytes with the header) but the file has %llu bytes: "
                         "prepare it again", path, (unsigned long long)count,
                         (unsigned long long)(TOKSEQ_HEADER + count * (uint64_t)width),
                         (unsigned long long)size);
    }
    if (!rc && expect && count != expect)
        rc = err_set(err, LM_EFORMAT, "'%s' holds %llu tokens but its listing says %llu: the "
                     "folder was changed after it was prepared; prepare it again", path,
                     (unsigned long long)count, (unsigned long long)expect);
    TokShard *grown = rc ? NULL : realloc(s->shard, sizeof *grown * (size_t)(s->n_shards + 1));
    if (!rc && !grown)
        rc = err_set(err, LM_ENOMEM, "out of memory listing token files");
    if (rc) {
        close(fd);
        return rc;
    }
    s->shard = grown;
    flock(fd, LOCK_SH | LOCK_NB);   /* a reader's mark: `data rm` tells tokens still read */
    TokShard *sh = &s->shard[s->n_shards++];
    memset(sh, 0, sizeof *sh);
    sh->fd = fd;
    sh->width = width;
    sh->offset = offset;
    sh->start = s->n;
    sh->n = count;
    sh->size = (int64_t)st.st_size;
    sh->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    snprintf(sh->path, sizeof sh->path, "%s", path);
    s->n += count;
    return LM_OK;
}

/* The shard holding position pos (pos < s->n). */
static int find_shard(const TokSeq *s, uint64_t pos)
{
    int lo = 0, hi = s->n_shards - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (s->shard[mid].start <= pos) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* The cache key of a prepared shard: its folder's name (tokcache.h), or "KEY". */
static const char *cache_key(const TokShard *sh, char *buf, size_t cap)
{
    const char *end = strrchr(sh->path, '/'), *key = end;
    while (key && key > sh->path && key[-1] != '/')
        key--;
    snprintf(buf, cap, "%.*s", key ? (int)(end - key) : 3, key ? key : "KEY");
    return buf;
}

/* LM_OK while the shard's file has the size and modification time it had when opened;
 * else LM_EIO naming what changed. A file written in place, truncated or copied over
 * (cp, : >, truncate -s) while a run reads it would give other tokens with no error: the
 * descriptor reads the new bytes. A file replaced by rename or deleted (data rm) keeps
 * its old inode open here, still the same tokens, and is not a change. Called after each
 * read, so a write that began before the read ended is seen. */
static int shard_unchanged(const TokSeq *s, const TokShard *sh, char *err)
{
    struct stat st;
    if (fstat(sh->fd, &st))
        return err_set(err, LM_EIO, "cannot stat '%s': %s", sh->path, strerror(errno));
    int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    if (st.st_size == sh->size && mt == sh->mtime_ns)
        return LM_OK;
    char what[160], when[32] = "?";
    struct tm tm;
    time_t sec = st.st_mtim.tv_sec;
    if (localtime_r(&sec, &tm))
        strftime(when, sizeof when, "%H:%M:%S", &tm);
    if (st.st_size != sh->size)
        snprintf(what, sizeof what, "its size went from %lld to %lld bytes at %s",
                 (long long)sh->size, (long long)st.st_size, when);
    else
        snprintf(what, sizeof what, "modified at %s, still %lld bytes: written in place or "
                 "touched", when, (long long)st.st_size);
    char todo[200], key[64];
    if (s->cache)   /* a same-size rewrite would look fresh: deleting them is the way */
        snprintf(todo, sizeof todo, "lmlab never rewrites prepared tokens: delete them "
                 "(`lmlab data rm %s yes`) and the next start prepares the corpus again",
                 cache_key(sh, key, sizeof key));
    else
        snprintf(todo, sizeof todo, "put the file back as it was to go on (a run resumes "
                 "only on the data it started on)");
    return err_set(err, LM_EIO, "'%s' was changed while this run read it (%s): its tokens may "
                   "no longer be the ones the run started on, so the run stops rather than "
                   "train on them; %s", sh->path, what, todo);
}

/* Reads n ids of one shard from its token k into out, widened in place. */
static int read_shard(const TokSeq *s, const TokShard *sh, uint64_t k, size_t n, int *out,
                      char *err)
{
    int vocab = s->vocab;
    unsigned char *b = (unsigned char *)out;
    size_t want = n * (size_t)sh->width, done = 0;
    while (done < want) {
        ssize_t got = pread(sh->fd, b + done, want - done,
                            (off_t)(sh->offset + k * (uint64_t)sh->width + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            int rc = shard_unchanged(s, sh, err);   /* truncated: say so, and by how much */
            return rc ? rc : err_set(err, LM_EIO, "cannot read '%s' at token %llu: %s",
                                     sh->path, (unsigned long long)k,
                                     got < 0 ? strerror(errno) : "the file ends early");
        }
        done += (size_t)got;
    }
    int rc = shard_unchanged(s, sh, err);
    if (rc)
        return rc;
    if (sh->width == 2)   /* backwards: token i's 2 bytes lie at or before its 4 */
        for (size_t i = n; i-- > 0;)
            out[i] = (int)((unsigned)b[2 * i] | (unsigned)b[2 * i + 1] << 8);
    else
        for (size_t i = 0; i < n; i++)
            out[i] = (int)le32(b + 4 * i);
    size_t i = 0;
    while (vocab > 0 && i < n && out[i] >= 0 && out[i] < vocab)
        i++;
    if (vocab <= 0 || i == n)
        return LM_OK;
    char why[300];
    if (s->cache) {
        char key[64];
        snprintf(why, sizeof why, "these prepared tokens are damaged (lmlab made them with "
                 "this very tokenizer): delete them (`lmlab data rm %s yes`) and the next "
                 "run prepares them again", cache_key(sh, key, sizeof key));
    } else {
        snprintf(why, sizeof why, "the file was made with another tokenizer than this "
                 "run's, or is damaged (give tokenizer= the one it was made with)");
    }
    return err_set(err, LM_EFORMAT, "'%s': token %llu (byte %llu) is id %lld, beyond the "
                   "tokenizer's vocabulary of %d: %s", sh->path, (unsigned long long)(k + i),
                   (unsigned long long)(sh->offset + (k + i) * sh->width),
                   (long long)(sh->width == 4 ? (long long)(uint32_t)out[i]
                                              : (long long)out[i]), vocab, why);
}

int tokseq_read(const TokSeq *s, uint64_t pos, size_t n, int *out, char *err)
{
    if (pos > s->n || n > s->n - pos)
        return err_set(err, LM_EARG, "reading tokens %llu..%llu of a sequence of %llu",
                       (unsigned long long)pos, (unsigned long long)(pos + n),
                       (unsigned long long)s->n);
    if (s->mem) {
        memcpy(out, s->mem + pos, n * sizeof *out);
        return LM_OK;
    }
    for (int i = n ? find_shard(s, pos) : 0; n > 0; i++) {
        const TokShard *sh = &s->shard[i];
        uint64_t k = pos - sh->start, left = sh->n - k;
        size_t take = left < n ? (size_t)left : n;
        int rc = read_shard(s, sh, k, take, out, err);
        if (rc)
            return rc;
        out += take;
        pos += take;
        n -= take;
    }
    return LM_OK;
}

int tokseq_check(const TokSeq *s, uint64_t pos, uint64_t n, int *scratch, size_t cap,
                 char *err)
{
    while (n > 0) {
        size_t take = n < cap ? (size_t)n : cap;
        int rc = tokseq_read(s, pos, take, scratch, err);
        if (rc)
            return rc;
        pos += take;
        n -= take;
    }
    return LM_OK;
}

uint64_t tokseq_resident_bytes(const TokSeq *s)
{
    return s->mem ? s->n * sizeof(int) : (uint64_t)s->n_shards * sizeof(TokShard);
}

uint64_t tokseq_file_bytes(const TokSeq *s)
{
    uint64_t b = 0;
    for (int i = 0; i < s->n_shards; i++)
        b += s->shard[i].offset + s->shard[i].n * (uint64_t)s->shard[i].width;
    return b;
}

void tokseq_free(TokSeq *s)
{
    for (int i = 0; i < s->n_shards; i++)
        close(s->shard[i].fd);
    free(s->shard);
    free(s->mem);
    memset(s, 0, sizeof *s);
}
