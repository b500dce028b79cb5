/* tokcache_split.c — the end of a prepare of a stream (private/tokcache_impl.h): the cut
 * of the "all" shards into train and valid at train_frac of the tokens (dataset.c's cut:
 * whole shards renamed, the shard holding the cut copied from there and truncated), and
 * the valid split's character count from its decoded tokens. Not the encoding pass. */
#include "private/tokcache_impl.h"

#include "err.h"
#include "shard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the stream's cut into train and valid ---- */

/* count tokens of shard path from token `from` into ids. */
static int read_tokens(const char *path, int width, unsigned long long from, size_t count,
                       int *ids, char *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(err, LM_EIO, "cannot read '%s': %s", path, strerror(errno));
    unsigned char *b = malloc(count * (size_t)width);
    ssize_t want = (ssize_t)(count * (size_t)width);
    ssize_t r = b ? pread(fd, b, (size_t)want, (off_t)(SHARD_HEADER_BYTES + from * (unsigned long long)width)) : -1;
    close(fd);
    if (r != want) {
        free(b);
        return err_set(err, b ? LM_EIO : LM_ENOMEM, "cannot read '%s' back", path);
    }
    for (size_t i = 0; i < count; i++)
        ids[i] = width == 2 ? (int)(b[2 * i] | b[2 * i + 1] << 8)
                            : (int)((uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
                                    (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24);
    free(b);
    return LM_OK;
}

#define PREP_CHUNK ((size_t)1 << 20)

/* Copies tokens [from, from + n) of shard src into a new writer's shards (prefix). */
static int copy_tail(const char *tmp, const char *src, int width, unsigned long long from,
                     unsigned long long n, unsigned long long max, char *err)
{
    ShardWriter *w;
    int *ids = malloc(PREP_CHUNK * sizeof *ids);
    int rc = ids ? shard_writer_create(tmp, "valid", width, max, &w, err)
                 : err_set(err, LM_ENOMEM, "out of memory cutting the splits");
    if (!ids || rc) {
        free(ids);
        return rc ? rc : LM_ENOMEM;
    }
    for (unsigned long long d = 0; !rc && d < n;) {
        size_t k = n - d < PREP_CHUNK ? (size_t)(n - d) : PREP_CHUNK;
        rc = read_tokens(src, width, from + d, k, ids, err);
        if (!rc) rc = shard_writer_put(w, ids, k, err);
        d += k;
    }
    if (!rc) rc = shard_writer_finish(w, err);
    shard_writer_destroy(w);
    free(ids);
    return rc;
}

static int rename_shard(const char *tmp, const char *from, const char *prefix, int i, char *err)
{
    char to[1200];
    snprintf(to, sizeof to, "%s/%s_%06d.bin", tmp, prefix, i);
    if (rename(from, to)) return err_set(err, LM_EIO, "cannot rename '%s': %s", from, strerror(errno));
    return LM_OK;
}

int tokcache_cut_stream(const TokCacheRequest *r, const char *tmp, ShardWriter *a,
                        const unsigned long long *doc_ends, size_t n_doc_ends, int doc_ends_lost,
                        TokCachePrep *pr, char *err)
{
    unsigned long long N = a ? shard_writer_tokens(a) : 0;
    unsigned long long k = (unsigned long long)(size_t)(r->train_frac * (double)N), cum = 0;
    int ns = a ? shard_writer_count(a) : 0, t = 0, v = 0, rc = LM_OK;
    for (int s = 0; s < 2; s++)
        if (!(pr->shard_tokens[s] = calloc((size_t)ns + 1, sizeof **pr->shard_tokens)))
            return err_set(err, LM_ENOMEM, "out of memory cutting the splits");
    for (int i = 0; !rc && i < ns; i++) {
        unsigned long long cnt = shard_writer_tokens_of(a, i);
        char src[1200];
        snprintf(src, sizeof src, "%s/all_%06d.bin", tmp, i);
        if (cum + cnt <= k) {
            rc = rename_shard(tmp, src, "train", t, err);
            pr->shard_tokens[0][t++] = cnt;
        } else if (cum >= k) {
            rc = rename_shard(tmp, src, "valid", v, err);
            pr->shard_tokens[1][v++] = cnt;
        } else {
            unsigned long long head = k - cum;
            rc = copy_tail(tmp, src, pr->width, head, cnt - head, r->shard_tokens, err);
            pr->shard_tokens[1][v++] = cnt - head;
            if (!rc) rc = shard_truncate(src, head, pr->width, err);
            if (!rc) rc = rename_shard(tmp, src, "train", t, err);
            pr->shard_tokens[0][t++] = head;
        }
        cum += cnt;
    }
    pr->n_shards[0] = t;
    pr->n_shards[1] = v;
    pr->tokens[0] = k;
    pr->tokens[1] = N - k;
    pr->has[0] = pr->has[1] = 1;
    unsigned long long docs = pr->docs[0];
    if (!doc_ends_lost) {
        pr->docs[0] = 0;
        for (size_t i = 0; i < n_doc_ends; i++) pr->docs[0] += doc_ends[i] <= k;
        pr->docs[1] = docs - pr->docs[0];
    }
    return rc;
}

int tokcache_count_valid_chars(const char *tmp, TokCachePrep *pr, char *err)
{
    int *ids = malloc(PREP_CHUNK * sizeof *ids);
    if (!ids) return err_set(err, LM_ENOMEM, "out of memory counting characters");
    char carry[8];
    size_t nc = 0;
    int rc = LM_OK;
    for (int i = 0; !rc && i < pr->n_shards[1]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/valid_%06d.bin", tmp, i);
        for (unsigned long long d = 0; !rc && d < pr->shard_tokens[1][i];) {
            size_t k = pr->shard_tokens[1][i] - d < PREP_CHUNK ? (size_t)(pr->shard_tokens[1][i] - d) : PREP_CHUNK;
            rc = read_tokens(path, pr->width, d, k, ids, err);
            char *text = rc ? NULL : tokenizer_decode(pr->tok, ids, k);
            if (!rc && !text) rc = err_set(err, LM_ENOMEM, "out of memory counting characters");
            if (rc) break;
            size_t tl = strlen(text);
            char *all = malloc(nc + tl + 1);
            if (!all) {
                free(text);
                rc = err_set(err, LM_ENOMEM, "out of memory counting characters");
                break;
            }
            memcpy(all, carry, nc);
            memcpy(all + nc, text, tl);
            size_t n = nc + tl, keep = 0;   /* an unfinished UTF-8 sequence waits for more */
            for (size_t b = 1; b <= 3 && b <= n; b++) {
                unsigned char ch = (unsigned char)all[n - b];
                if ((ch & 0xc0) == 0x80) continue;
                size_t need = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
                if (need > b && ch >= 0xC2 && ch <= 0xF4) keep = b;
                break;
            }
            pr->valid_chars += tokenizer_count_chars(all, n - keep);
            memcpy(carry, all + n - keep, keep);
            nc = keep;
            free(all);
            free(text);
            d += k;
        }
    }
    pr->valid_chars += tokenizer_count_chars(carry, nc);
    free(ids);
    return rc;
}

