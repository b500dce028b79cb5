/* cstream.c — plain, gzip, xz and zstd files as one stream of bytes (see cstream.h).
 * References: zlib's inflate with windowBits 15+32 (gzip members one after another, as
 * gzip -d reads them), liblzma's stream decoder with LZMA_CONCATENATED, zstd's
 * ZSTD_decompressStream over every frame. Not a writer of any of them. */
#include "cstream.h"

#include "err.h"
#include "regfile.h"
#include "tokenizer.h"

#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define CSTREAM_IN (1u << 20)

struct CStream {
    char path[1100];
    int fd;
    CStreamKind kind;
    unsigned char *in;          /* (CSTREAM_IN) raw bytes from disk */
    size_t in_pos, in_len;
    int in_eof, out_eof;
    unsigned long long raw_done, raw_size, hash, chain;
    long long mtime_ns;
    z_stream z;
    lzma_stream x;
    ZSTD_DCtx *zs;
    int z_init, x_init;
};

static const char *cstream_kind_name(CStreamKind k)
{
    static const char *const n[] = { "plain", "gzip", "xz", "zstd" };
    return (unsigned)k < 4 ? n[k] : "?";
}

unsigned long long cstream_raw_done(const CStream *s) { return s->raw_done; }
unsigned long long cstream_raw_size(const CStream *s) { return s->raw_size; }
long long cstream_mtime_ns(const CStream *s) { return s->mtime_ns; }
unsigned long long cstream_raw_hash(const CStream *s) { return s->hash; }
unsigned long long cstream_chain(const CStream *s) { return s->chain; }

void cstream_chain_from(CStream *s, unsigned long long h)
{
    s->chain = tokenizer_fnv1a(s->in, s->in_len, h);   /* the bytes read at open */
}

/* Both hashes of n bytes in one loop (two independent chains). */
static void hash2(CStream *s, const unsigned char *p, size_t n)
{
    unsigned long long a = s->hash, b = s->chain;
    for (size_t i = 0; i < n; i++) {
        a = (a ^ p[i]) * 0x100000001b3ULL;
        b = (b ^ p[i]) * 0x100000001b3ULL;
    }
    s->hash = a;
    s->chain = b;
}

void cstream_close(CStream *s)
{
    if (!s) return;
    if (s->z_init) inflateEnd(&s->z);
    if (s->x_init) lzma_end(&s->x);
    ZSTD_freeDCtx(s->zs);
    if (s->fd >= 0) close(s->fd);
    free(s->in);
    free(s);
}

/* Refills the raw buffer when it is used up; sets in_eof at the end of the file. */
static int fill(CStream *s, char *err)
{
    if (s->in_pos < s->in_len || s->in_eof) return LM_OK;
    ssize_t r;
    do r = read(s->fd, s->in, CSTREAM_IN); while (r < 0 && errno == EINTR);
    if (r < 0) return err_set(err, LM_EIO, "cannot read '%s': %s", s->path, strerror(errno));
    s->in_pos = 0;
    s->in_len = (size_t)r;
    s->in_eof = r == 0;
    s->raw_done += (unsigned long long)r;
    hash2(s, s->in, (size_t)r);
    return LM_OK;
}

static int check_unchanged(CStream *s, char *err)
{
    struct stat st;
    if (fstat(s->fd, &st) || stat(s->path, &st))
        return err_set(err, LM_EIO, "'%s' disappeared while it was read: prepare again when it "
                       "is in place", s->path);
    long long m = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    if ((unsigned long long)st.st_size != s->raw_size || m != s->mtime_ns || s->raw_done != s->raw_size)
        return err_set(err, LM_EIO, "'%s' changed while it was read (size %llu -> %llu bytes, "
                       "%llu read): prepare again when nothing writes it", s->path, s->raw_size,
                       (unsigned long long)st.st_size, s->raw_done);
    return LM_OK;
}

int cstream_open(const char *path, CStream **out, char *err)
{
    *out = NULL;
    CStream *s = calloc(1, sizeof *s);
    if (!s || !(s->in = malloc(CSTREAM_IN))) {
        free(s);
        return err_set(err, LM_ENOMEM, "out of memory opening '%s'", path);
    }
    s->fd = -1;
    snprintf(s->path, sizeof s->path, "%s", path);
    size_t size;
    int rc = regfile_open(path, &s->fd, &size, err);
    struct stat st;
    if (!rc && fstat(s->fd, &st)) rc = err_set(err, LM_EIO, "cannot stat '%s': %s", path, strerror(errno));
    if (rc) {
        cstream_close(s);
        return rc;
    }
    s->raw_size = (unsigned long long)st.st_size;
    s->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    s->hash = TOKENIZER_FNV_SEED;
    rc = fill(s, err);
    const unsigned char *m = s->in;
    size_t k = s->in_len;
    if (!rc && k >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
        s->kind = CSTREAM_GZIP;
        if (inflateInit2(&s->z, 15 + 32) != Z_OK) rc = err_set(err, LM_ENOMEM, "zlib: cannot start");
        s->z_init = !rc;
    } else if (!rc && k >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6)) {
        s->kind = CSTREAM_XZ;
        lzma_stream init = LZMA_STREAM_INIT;
        s->x = init;
        if (lzma_stream_decoder(&s->x, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
            rc = err_set(err, LM_ENOMEM, "liblzma: cannot start");
        s->x_init = !rc;
    } else if (!rc && k >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) {
        s->kind = CSTREAM_ZSTD;
        if (!(s->zs = ZSTD_createDCtx())) rc = err_set(err, LM_ENOMEM, "zstd: cannot start");
    }
    if (rc) {
        cstream_close(s);
        return rc;
    }
    *out = s;
    return LM_OK;
}

static int corrupt(CStream *s, const char *what, char *err)
{
    return err_set(err, LM_EFORMAT, "'%s' is not a whole %s file (%s, near byte %llu of %llu): "
                   "download or compress it again", s->path, cstream_kind_name(s->kind), what,
                   s->raw_done - (s->in_len - s->in_pos), s->raw_size);
}

/* One step of the decompressor: output into buf[..cap), *n produced. */
static int step(CStream *s, char *buf, size_t cap, size_t *n, char *err)
{
    size_t avail = s->in_len - s->in_pos;
    if (s->kind == CSTREAM_GZIP) {
        s->z.next_in = s->in + s->in_pos;
        s->z.avail_in = (uInt)avail;
        s->z.next_out = (unsigned char *)buf;
        s->z.avail_out = (uInt)cap;
        int r = inflate(&s->z, Z_NO_FLUSH);
        s->in_pos += avail - s->z.avail_in;
        *n = cap - s->z.avail_out;
        if (r == Z_STREAM_END) {   /* another member may follow */
            if (s->in_pos < s->in_len || !s->in_eof) inflateReset(&s->z);
            else s->out_eof = 1;
        } else if (r == Z_BUF_ERROR && s->in_eof && avail == 0) {
            return corrupt(s, "it ends inside a compressed block", err);
        } else if (r != Z_OK && r != Z_BUF_ERROR) {
            return corrupt(s, s->z.msg ? s->z.msg : "bad data", err);
        }
    } else if (s->kind == CSTREAM_XZ) {
        s->x.next_in = s->in + s->in_pos;
        s->x.avail_in = avail;
        s->x.next_out = (uint8_t *)buf;
        s->x.avail_out = cap;
        lzma_ret r = lzma_code(&s->x, s->in_eof ? LZMA_FINISH : LZMA_RUN);
        s->in_pos += avail - s->x.avail_in;
        *n = cap - s->x.avail_out;
        if (r == LZMA_STREAM_END) s->out_eof = 1;
        else if (r == LZMA_BUF_ERROR && s->in_eof) return corrupt(s, "it ends inside a block", err);
        else if (r != LZMA_OK && r != LZMA_BUF_ERROR) return corrupt(s, "bad data", err);
    } else {
        ZSTD_inBuffer ib = { s->in + s->in_pos, avail, 0 };
        ZSTD_outBuffer ob = { buf, cap, 0 };
        size_t r = ZSTD_decompressStream(s->zs, &ob, &ib);
        s->in_pos += ib.pos;
        *n = ob.pos;
        if (ZSTD_isError(r)) return corrupt(s, ZSTD_getErrorName(r), err);
        if (s->in_eof && s->in_pos == s->in_len && *n == 0) {
            if (r != 0) return corrupt(s, "it ends inside a frame", err);
            s->out_eof = 1;
        }
    }
    return LM_OK;
}

int cstream_read(CStream *s, char *buf, size_t cap, size_t *n, char *err)
{
    *n = 0;
    while (*n == 0 && !s->out_eof) {
        int rc = fill(s, err);
        if (rc) return rc;
        if (s->kind == CSTREAM_PLAIN) {
            if (s->in_eof) {
                s->out_eof = 1;
                break;
            }
            size_t k = s->in_len - s->in_pos < cap ? s->in_len - s->in_pos : cap;
            memcpy(buf, s->in + s->in_pos, k);
            s->in_pos += k;
            *n = k;
            break;
        }
        rc = step(s, buf, cap, n, err);
        if (rc) return rc;
    }
    if (s->out_eof && *n == 0) {
        /* drain the file (trailing bytes after the last stream are still part of it) */
        while (!s->in_eof) {
            s->in_pos = s->in_len;
            int rc = fill(s, err);
            if (rc) return rc;
        }
        return check_unchanged(s, err);
    }
    return LM_OK;
}
