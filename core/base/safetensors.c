/* safetensors.c — the safetensors reader and atomic writer (see safetensors.h).
 * Validation is strict because checkpoints and fixtures come from outside: every offset
 * and shape is checked before any byte of data is touched. Not a general tensor
 * library: conversion is only to float32 and int32, the types the models use. */
#include "safetensors.h"

#include "checked.h"
#include "err.h"
#include "outfile.h"
#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_HEADER (100u * 1024u * 1024u)

struct SafeTensors {
    unsigned char *buf;   /* the whole file */
    size_t size;
    const unsigned char *data;   /* start of the data area */
    size_t data_len;
    StTensor *t;
    int n;
    char **meta;          /* key, value, key, value, ... */
    int n_meta;
    StSource src;         /* src.load != NULL: tensors produced on demand, buf unused */
};

static const char *const dtype_names[] = {"F32", "F16", "BF16", "F64", "I64", "I32", "U8"};
static const size_t dtype_sizes[] = {4, 2, 2, 8, 8, 4, 1};
#define N_DTYPES ((int)(sizeof dtype_sizes / sizeof dtype_sizes[0]))

size_t safetensors_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < N_DTYPES ? dtype_sizes[dtype] : 0;
}

static int dtype_from_name(const char *s)
{
    for (int i = 0; i < N_DTYPES; i++)
        if (strcmp(s, dtype_names[i]) == 0)
            return i;
    return -1;
}

/* ---- reading ---- */

static int parse_metadata(SafeTensors *st, json_t *obj, const char *path, char *err)
{
    if (!json_is_object(obj))
        return err_set(err, LM_EFORMAT, "%s: __metadata__ is not an object", path);
    size_t n = json_object_size(obj);
    st->meta = calloc(2 * n + 1, sizeof *st->meta);
    if (!st->meta)
        return err_set(err, LM_ENOMEM, "%s: out of memory", path);
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        if (!json_is_string(val))
            return err_set(err, LM_EFORMAT, "%s: __metadata__ value of \"%s\" is not a string",
                           path, key);
        st->meta[2 * st->n_meta] = strdup(key);
        st->meta[2 * st->n_meta + 1] = strdup(json_string_value(val));
        st->n_meta++;
        if (!st->meta[2 * st->n_meta - 2] || !st->meta[2 * st->n_meta - 1])
            return err_set(err, LM_ENOMEM, "%s: out of memory", path);
    }
    return LM_OK;
}

/* Offsets as non-negative integers that fit the data area. */
static int json_size(json_t *v, size_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return 0;
    *out = (size_t)json_integer_value(v);
    return 1;
}

static int parse_tensor(StTensor *t, const char *name, json_t *e, size_t data_len,
                        const char *path, char *err)
{
    if (strlen(name) >= ST_NAME_LEN)
        return err_set(err, LM_EFORMAT, "%s: tensor name longer than %d bytes", path,
                       ST_NAME_LEN - 1);
    snprintf(t->name, sizeof t->name, "%s", name);
    if (!json_is_object(e))
        return err_set(err, LM_EFORMAT, "%s: entry \"%s\" is not an object", path, name);
    json_t *dt = json_object_get(e, "dtype"), *sh = json_object_get(e, "shape");
    json_t *off = json_object_get(e, "data_offsets");
    if (!json_is_string(dt) || !json_is_array(sh) || !json_is_array(off))
        return err_set(err, LM_EFORMAT,
                       "%s: tensor \"%s\" lacks a valid dtype, shape or data_offsets", path,
                       name);
    t->dtype = dtype_from_name(json_string_value(dt));
    if (t->dtype < 0)
        return err_set(err, LM_EFORMAT, "%s: tensor \"%s\" has unknown dtype \"%s\"", path,
                       name, json_string_value(dt));
    size_t nd = json_array_size(sh);
    if (nd > ST_MAX_DIM)
        return err_set(err, LM_EFORMAT, "%s: tensor \"%s\" has %zu dimensions (max %d)", path,
                       name, nd, ST_MAX_DIM);
    t->ndim = (int)nd;
    t->numel = 1;
    for (size_t i = 0; i < nd; i++) {
        size_t s;
        if (!json_size(json_array_get(sh, i), &s) || s > (size_t)LONG_MAX)
            return err_set(err, LM_EFORMAT, "%s: tensor \"%s\" has an invalid shape", path,
                           name);
        t->shape[i] = (long)s;
        if (checked_mul(t->numel, s, &t->numel))
            return err_set(err, LM_EFORMAT, "%s: tensor \"%s\" is absurdly large", path, name);
    }
    size_t bytes;
    if (checked_mul(t->numel, dtype_sizes[t->dtype], &bytes))
        return err_set(err, LM_EFORMAT, "%s: tensor \"%s\" is absurdly large", path, name);
    if (json_array_size(off) != 2 || !json_size(json_array_get(off, 0), &t->begin) ||
        !json_size(json_array_get(off, 1), &t->end) || t->end < t->begin)
        return err_set(err, LM_EFORMAT, "%s: tensor \"%s\" has invalid data_offsets", path,
                       name);
    if (t->end - t->begin != bytes)
        return err_set(err, LM_EFORMAT,
                       "%s: tensor \"%s\": data_offsets span %zu bytes but shape and dtype "
                       "need %zu",
                       path, name, t->end - t->begin, bytes);
    if (t->end > data_len)
        return err_set(err, LM_EFORMAT,
                       "%s: tensor \"%s\" ends at byte %zu past the data area (%zu bytes); "
                       "the file may be truncated",
                       path, name, t->end, data_len);
    return LM_OK;
}

static int cmp_begin(const void *a, const void *b)
{
    const StTensor *x = *(const StTensor *const *)a, *y = *(const StTensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int check_overlaps(const SafeTensors *st, const char *path, char *err)
{
    if (st->n < 2)
        return LM_OK;
    const StTensor **order = malloc((size_t)st->n * sizeof *order);
    if (!order)
        return err_set(err, LM_ENOMEM, "%s: out of memory", path);
    for (int i = 0; i < st->n; i++)
        order[i] = &st->t[i];
    qsort(order, (size_t)st->n, sizeof *order, cmp_begin);
    int rc = LM_OK;
    for (int i = 1; i < st->n && rc == LM_OK; i++)
        if (order[i]->begin < order[i - 1]->end)
            rc = err_set(err, LM_EFORMAT, "%s: tensors \"%s\" and \"%s\" overlap", path,
                         order[i - 1]->name, order[i]->name);
    free(order);
    return rc;
}

static int parse_header(SafeTensors *st, json_t *root, const char *path, char *err)
{
    if (!json_is_object(root))
        return err_set(err, LM_EFORMAT, "%s: the header is not a JSON object", path);
    size_t n = json_object_size(root);
    st->t = calloc(n + 1, sizeof *st->t);
    if (!st->t)
        return err_set(err, LM_ENOMEM, "%s: out of memory", path);
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        int rc;
        if (strcmp(key, "__metadata__") == 0)
            rc = parse_metadata(st, val, path, err);
        else
            rc = parse_tensor(&st->t[st->n++], key, val, st->data_len, path, err);
        if (rc != LM_OK)
            return rc;
    }
    return check_overlaps(st, path, err);
}

/* Parses st->buf[0..st->size) (already filled); path only labels messages. */
static int parse_buffer(SafeTensors *st, const char *path, char *err)
{
    int rc = LM_OK;
    uint64_t hlen = 0;
    if (st->size < 8) {
        rc = err_set(err, LM_EFORMAT, "%s: only %zu bytes, too short for a safetensors header",
                     path, st->size);
    } else {
        for (int i = 7; i >= 0; i--)
            hlen = hlen << 8 | st->buf[i];
        if (hlen > ST_MAX_HEADER)
            rc = err_set(err, LM_EFORMAT, "%s: not a safetensors file (its header length %llu is absurd, > 100 MB)", path,
                         (unsigned long long)hlen);
        else if (hlen > st->size - 8)
            rc = err_set(err, LM_EFORMAT,
                         "%s: header length %llu runs past the end of the file (%zu bytes)",
                         path, (unsigned long long)hlen, st->size);
    }
    if (rc == LM_OK) {
        st->data = st->buf + 8 + hlen;
        st->data_len = st->size - 8 - (size_t)hlen;
        json_error_t jerr;
        json_t *root = json_loadb((const char *)st->buf + 8, (size_t)hlen,
                                  JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
            rc = err_set(err, LM_EFORMAT, "%s: invalid JSON header: %s (byte %d)", path,
                         jerr.text, jerr.position);
        else
            rc = parse_header(st, root, path, err);
        json_decref(root);
    }
    return rc;
}

int safetensors_open(const char *path, SafeTensors **out, char *err)
{
    *out = NULL;
    SafeTensors *st = calloc(1, sizeof *st);
    if (!st)
        return err_set(err, LM_ENOMEM, "%s: out of memory", path);
    int rc = regfile_read(path, SIZE_MAX - 1, &st->buf, &st->size, err);
    if (rc == LM_OK)
        rc = parse_buffer(st, path, err);
    if (rc != LM_OK) {
        safetensors_close(st);
        return rc;
    }
    *out = st;
    return LM_OK;
}

/* Names unique and short enough, begin/end packed in order: what the file format
 * guarantees for a parsed file, checked here for tensors handed over by a source. */
static int adopt_tensors(SafeTensors *st, const StTensor *t, int n, const char *label,
                         char *err)
{
    if (!(st->t = calloc((size_t)n + 1, sizeof *st->t)))
        return err_set(err, LM_ENOMEM, "%s: out of memory", label);
    size_t off = 0, bytes;
    for (int i = 0; i < n; i++, st->n++) {
        StTensor *d = &st->t[i];
        *d = t[i];
        d->name[ST_NAME_LEN - 1] = 0;
        if (safetensors_dtype_size(d->dtype) == 0 || d->ndim < 0 || d->ndim > ST_MAX_DIM ||
            checked_mul(d->numel, dtype_sizes[d->dtype], &bytes) ||
            checked_add(off, bytes, &d->end))
            return err_set(err, LM_EFORMAT, "%s: tensor \"%s\" is malformed", label, d->name);
        d->begin = off;
        off = d->end;
        for (int j = 0; j < i; j++)
            if (!strcmp(st->t[j].name, d->name))
                return err_set(err, LM_EFORMAT, "%s: tensor name \"%s\" appears twice", label,
                               d->name);
    }
    return LM_OK;
}

int safetensors_open_source(const StTensor *t, int n, const char *const *meta, int n_meta,
                            const StSource *src, const char *label, SafeTensors **out,
                            char *err)
{
    *out = NULL;
    SafeTensors *st = calloc(1, sizeof *st);
    if (!st) {
        if (src->release)
            src->release(src->ctx);
        return err_set(err, LM_ENOMEM, "%s: out of memory", label);
    }
    st->src = *src;
    int rc = adopt_tensors(st, t, n, label, err);
    if (!rc && !(st->meta = calloc(2 * (size_t)n_meta + 1, sizeof *st->meta)))
        rc = err_set(err, LM_ENOMEM, "%s: out of memory", label);
    for (int i = 0; !rc && i < n_meta; i++, st->n_meta++)
        if (!(st->meta[2 * i] = strdup(meta[2 * i])) ||
            !(st->meta[2 * i + 1] = strdup(meta[2 * i + 1])))
            rc = err_set(err, LM_ENOMEM, "%s: out of memory", label);
    if (rc) {
        safetensors_close(st);
        return rc;
    }
    *out = st;
    return LM_OK;
}

void safetensors_close(SafeTensors *st)
{
    if (!st)
        return;
    if (st->src.release)
        st->src.release(st->src.ctx);
    for (int i = 0; i < 2 * st->n_meta; i++)
        free(st->meta[i]);
    free(st->meta);
    free(st->t);
    free(st->buf);
    free(st);
}

int safetensors_count(const SafeTensors *st)
{
    return st->n;
}

const StTensor *safetensors_at(const SafeTensors *st, int i)
{
    return i >= 0 && i < st->n ? &st->t[i] : NULL;
}

const StTensor *safetensors_find(const SafeTensors *st, const char *name)
{
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->t[i].name, name) == 0)
            return &st->t[i];
    return NULL;
}

const char *safetensors_meta(const SafeTensors *st, const char *key)
{
    for (int i = 0; i < st->n_meta; i++)
        if (strcmp(st->meta[2 * i], key) == 0)
            return st->meta[2 * i + 1];
    return NULL;
}

const void *safetensors_data(const SafeTensors *st, const StTensor *t)
{
    return st->src.load ? NULL : st->data + t->begin;
}

/* t's raw bytes: in the file's buffer, or produced by the source into out (when it
 * is big enough) or into *tmp (malloc'd, freed by the caller). NULL with a message. */
static const unsigned char *tensor_bytes(const SafeTensors *st, const StTensor *t, void *out,
                                         size_t out_cap, unsigned char **tmp, char *err)
{
    *tmp = NULL;
    if (!st->src.load)
        return st->data + t->begin;
    size_t n = t->end - t->begin;
    unsigned char *dst = out && out_cap >= n ? out : (*tmp = malloc(n ? n : 1));
    if (!dst) {
        err_set(err, LM_ENOMEM, "tensor \"%s\": out of memory for %zu bytes", t->name, n);
        return NULL;
    }
    if (st->src.load(st->src.ctx, (int)(t - st->t), dst, err)) {
        free(*tmp);
        *tmp = NULL;
        return NULL;
    }
    return dst;
}

int safetensors_read_raw(const SafeTensors *st, const StTensor *t, void *out, size_t cap,
                         char *err)
{
    size_t n = t->end - t->begin;
    if (cap < n)
        return err_set(err, LM_EARG, "tensor \"%s\": %zu bytes do not fit %zu", t->name, n,
                       cap);
    unsigned char *tmp;
    const unsigned char *p = tensor_bytes(st, t, out, cap, &tmp, err);
    if (!p)
        return st->src.load ? LM_EFORMAT : LM_ENOMEM;
    if (p != out && n)
        memcpy(out, p, n);
    free(tmp);
    return LM_OK;
}

static void shape_text(const StTensor *t, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < t->ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? ",%ld" : "%ld", t->shape[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, ") %s", dtype_names[t->dtype]);
}

static int lookup(const SafeTensors *st, const char *name, size_t n, const StTensor **out,
                  char *err)
{
    const StTensor *t = safetensors_find(st, name);
    *out = t;
    if (!t)
        return err_set(err, LM_EFORMAT, "tensor \"%s\" is missing (expected %zu values)", name,
                       n);
    if (t->numel != n) {
        char sh[128];
        shape_text(t, sh, sizeof sh);
        return err_set(err, LM_EFORMAT, "tensor \"%s\": expected %zu values, found shape %s",
                       name, n, sh);
    }
    return LM_OK;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
    float f;
    if (exp == 0) {
        f = ldexpf((float)man, -24);   /* zero or subnormal */
        return sign ? -f : f;
    }
    uint32_t bits = exp == 31 ? sign | 0x7f800000u | man << 13
                              : sign | (exp + 112) << 23 | man << 13;
    memcpy(&f, &bits, 4);
    return f;
}

/* The floats of t (n values at p, its dtype) into out. */
static void convert_f32(const StTensor *t, const unsigned char *p, float *out, size_t n)
{
    switch (t->dtype) {
    case ST_F32:
        if ((const void *)p != (const void *)out)
            memcpy(out, p, n * 4);
        return;
    case ST_F64:
        for (size_t i = 0; i < n; i++) {
            double d;
            memcpy(&d, p + 8 * i, 8);
            out[i] = (float)d;
        }
        return;
    case ST_F16:
    case ST_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            if (t->dtype == ST_F16) {
                out[i] = half_to_float(h);
            } else {
                uint32_t bits = (uint32_t)h << 16;
                memcpy(&out[i], &bits, 4);
            }
        }
        return;
    default:   /* the caller checked the dtype */
        return;
    }
}

int safetensors_read_f32(const SafeTensors *st, const char *name, float *out, size_t n,
                         char *err)
{
    const StTensor *t;
    int rc = lookup(st, name, n, &t, err);
    if (rc != LM_OK)
        return rc;
    if (t->dtype != ST_F32 && t->dtype != ST_F64 && t->dtype != ST_F16 && t->dtype != ST_BF16)
        return err_set(err, LM_EFORMAT, "tensor \"%s\" has dtype %s, not a float type", name,
                       dtype_names[t->dtype]);
    unsigned char *tmp;   /* a source's bytes, when they are not floats already */
    const unsigned char *p = tensor_bytes(st, t, t->dtype == ST_F32 ? out : NULL, n * 4,
                                          &tmp, err);
    if (!p)
        return LM_EFORMAT;
    convert_f32(t, p, out, n);
    free(tmp);
    return LM_OK;
}

int safetensors_read_i32(const SafeTensors *st, const char *name, int *out, size_t n,
                         char *err)
{
    const StTensor *t;
    int rc = lookup(st, name, n, &t, err);
    if (rc != LM_OK)
        return rc;
    if (t->dtype != ST_I64 && t->dtype != ST_I32)
        return err_set(err, LM_EFORMAT, "tensor \"%s\" has dtype %s, not I64 or I32", name,
                       dtype_names[t->dtype]);
    unsigned char *tmp;
    const unsigned char *p = tensor_bytes(st, t, t->dtype == ST_I32 ? out : NULL, n * 4,
                                          &tmp, err);
    if (!p)
        return LM_EFORMAT;
    if (t->dtype == ST_I32 && (const void *)p != (const void *)out)
        memcpy(out, p, n * 4);
    for (size_t i = 0; t->dtype == ST_I64 && i < n; i++) {
        int64_t v;
        memcpy(&v, p + 8 * i, 8);
        if (v < INT_MIN || v > INT_MAX) {
            free(tmp);
            return err_set(err, LM_EFORMAT, "tensor \"%s\": value %lld at %zu exceeds int32",
                           name, (long long)v, i);
        }
        out[i] = (int)v;
    }
    free(tmp);
    return LM_OK;
}

/* ---- writing ---- */

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
        t->end = off + t->numel * dtype_sizes[t->dtype];
        off = t->end;
        json_t *shape = json_array();
        for (int k = 0; k < t->ndim; k++)
            json_array_append_new(shape, json_integer(t->shape[k]));
        json_t *e = json_pack("{s:s, s:o, s:[I,I]}", "dtype", dtype_names[t->dtype], "shape",
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
