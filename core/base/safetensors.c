/* safetensors.c — the safetensors reader (see safetensors.h): opening a file or a source,
 * the header's strict validation, closing, the accessors and the dtype table.
 * Validation is strict because checkpoints and fixtures come from outside: every offset
 * and shape is checked before any byte of data is touched. Not here: reading a tensor's
 * values (safetensors_read.c), the atomic writer (safetensors_write.c). Not a general
 * tensor library. */
#include "safetensors.h"
#include "private/safetensors_impl.h"

#include "checked.h"
#include "err.h"
#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_HEADER (100u * 1024u * 1024u)

static const char *const dtype_names[] = {"F32", "F16", "BF16", "F64", "I64", "I32", "U8"};
static const size_t dtype_sizes[] = {4, 2, 2, 8, 8, 4, 1};
#define N_DTYPES ((int)(sizeof dtype_sizes / sizeof dtype_sizes[0]))

size_t safetensors_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < N_DTYPES ? dtype_sizes[dtype] : 0;
}

const char *safetensors_dtype_name(int dtype)
{
    return dtype_names[dtype];
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

