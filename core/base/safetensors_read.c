/* safetensors_read.c — a tensor's values out of an open safetensors file or source (see
 * safetensors.h): the raw bytes, floats converted to float32 (F16, BF16, F64) and integers
 * to int32 (I64 range-checked), each after its name, dtype and count are checked. Not a
 * general tensor library: conversion is only to float32 and int32, the types the models
 * use. Not here: opening and validating (safetensors.c), writing (safetensors_write.c). */
#include "safetensors.h"
#include "private/safetensors_impl.h"

#include "err.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        snprintf(buf + k, cap - k, ") %s", safetensors_dtype_name(t->dtype));
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
                       safetensors_dtype_name(t->dtype));
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
                       safetensors_dtype_name(t->dtype));
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
