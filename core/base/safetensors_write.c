/* safetensors_write.c — the safetensors atomic writer (see safetensors.h): tensors and
 * metadata gathered, a header with offsets in sorted name order padded to 8 bytes, and
 * the file written through outfile (atomic for a regular file). Not here: reading
 * (safetensors.c, safetensors_read.c). */
#include "safetensors.h"
#include "private/safetensors_impl.h"

#include "err.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    StTensor t;
    const void *data;
} WEntry;

struct SafeTensorsWriter {
    WEntry *e;
    int n, cap;
    json_t *meta;   /* object of strings */
};

SafeTensorsWriter *safetensors_writer_create(void)
{
    SafeTensorsWriter *w = calloc(1, sizeof *w);
    if (w && !(w->meta = json_object())) {
        free(w);
        return NULL;
    }
    return w;
}

void safetensors_writer_destroy(SafeTensorsWriter *w)
{
    if (!w)
        return;
    free(w->e);
    json_decref(w->meta);
    free(w);
}

int safetensors_writer_add(SafeTensorsWriter *w, const char *name, int dtype, int ndim,
                           const long *shape, const void *data)
{
    if (!name || strlen(name) >= ST_NAME_LEN || strcmp(name, "__metadata__") == 0 ||
        safetensors_dtype_size(dtype) == 0 || ndim < 0 || ndim > ST_MAX_DIM)
        return LM_EARG;
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->e[i].t.name, name) == 0)
            return LM_EARG;
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 32;
        WEntry *e = realloc(w->e, (size_t)cap * sizeof *e);
        if (!e)
            return LM_ENOMEM;
        w->e = e;
        w->cap = cap;
    }
    WEntry *e = &w->e[w->n];
    memset(e, 0, sizeof *e);
    snprintf(e->t.name, sizeof e->t.name, "%s", name);
    e->t.dtype = dtype;
    e->t.ndim = ndim;
    e->t.numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return LM_EARG;
        e->t.shape[i] = shape[i];
        e->t.numel *= (size_t)shape[i];
    }
    e->data = data;
    w->n++;
    return LM_OK;
}

int safetensors_writer_meta(SafeTensorsWriter *w, const char *key, const char *value)
{
    json_t *v = json_string(value);   /* NULL for invalid UTF-8 */
    if (!key || !v)
        return LM_EARG;
    return json_object_set_new(w->meta, key, v) == 0 ? LM_OK : LM_ENOMEM;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const WEntry *)a)->t.name, ((const WEntry *)b)->t.name);
}

/* The JSON header text padded with spaces to a multiple of 8 (malloc'd), offsets
 * assigned in sorted name order. */
static char *build_header(SafeTensorsWriter *w, size_t *hlen, size_t *data_len)
{
    if (w->n > 1)   /* no tensors: w->e may be NULL, which qsort must not get */
        qsort(w->e, (size_t)w->n, sizeof *w->e, cmp_name);
    json_t *root = json_object();
    if (!root)
        return NULL;
    if (json_object_size(w->meta))
        json_object_set(root, "__metadata__", w->meta);
    size_t off = 0;
    for (int i = 0; i < w->n; i++) {
        StTensor *t = &w->e[i].t;
        t->begin = off;
        t->end = off + t->numel * safetensors_dtype_size(t->dtype);
        off = t->end;
        json_t *shape = json_array();
        for (int k = 0; k < t->ndim; k++)
            json_array_append_new(shape, json_integer(t->shape[k]));
        json_t *e = json_pack("{s:s, s:o, s:[I,I]}", "dtype", safetensors_dtype_name(t->dtype), "shape",
                              shape, "data_offsets", (json_int_t)t->begin, (json_int_t)t->end);
        if (!e || json_object_set_new(root, t->name, e) != 0) {
            json_decref(root);
            return NULL;
        }
    }
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return NULL;
    size_t n = strlen(text), padded = (n + 7) & ~(size_t)7;
    char *h = realloc(text, padded + 1);
    if (!h) {
        free(text);
        return NULL;
    }
    memset(h + n, ' ', padded - n);
    h[padded] = 0;
    *hlen = padded;
    *data_len = off;
    return h;
}

static int write_body(SafeTensorsWriter *w, OutFile *o, const char *h, size_t hlen,
                      size_t total)
{
    int e = o->atomic ? posix_fallocate(o->fd, 0, (off_t)total) : 0;
    if (e == ENOSPC || e == EDQUOT || e == EFBIG)
        return e;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    if ((e = outfile_write(o, len8, 8)) || (e = outfile_write(o, h, hlen)))
        return e;
    for (int i = 0; i < w->n; i++)
        if ((e = outfile_write(o, w->e[i].data, w->e[i].t.end - w->e[i].t.begin)))
            return e;
    return 0;
}

/* Written through outfile: a regular file (or a link to one) is replaced atomically at
 * its target, a FIFO or device is streamed, anything else is refused. */
int safetensors_writer_write(SafeTensorsWriter *w, const char *path, char *err)
{
    size_t hlen, data_len;
    char *h = build_header(w, &hlen, &data_len);
    if (!h)
        return err_set(err, LM_ENOMEM, "%s: cannot build the header (out of memory)", path);
    size_t total = 8 + hlen + data_len;
    OutFile o;
    int st = outfile_open(&o, path, err);
    if (st) {
        free(h);
        return st;
    }
    int e = write_body(w, &o, h, hlen, total);
    free(h);
    if (e) {
        outfile_abort(&o);
        if (e == ENOSPC || e == EDQUOT || e == EFBIG)
            return err_set(err, LM_ENOSPC, "%s: disk full: %zu bytes were needed", path, total);
        return err_set(err, LM_EIO, "%s: write failed: %s", path, strerror(e));
    }
    st = outfile_commit(&o, path, err);
    if (st == LM_ENOSPC)
        return err_set(err, LM_ENOSPC, "%s: disk full: %zu bytes were needed", path, total);
    return st;
}
