/* checked.h — overflow-checked size arithmetic for everything a file claims: sizes,
 * offsets, strides and the extent of a strided view. One helper, used by the readers
 * of .pt (pickle_apply.c, torchfile.c) and safetensors files and by the fuzz targets'
 * oracles, so a claim that wraps around is refused instead of passing a bounds check.
 * Not a big-number library: results are size_t, and anything that does not fit is an
 * error the caller turns into a message. */
#ifndef LM_CHECKED_H
#define LM_CHECKED_H

#include <stddef.h>

/* *out = a * b (a + b); 0 on success, -1 when the result does not fit a size_t
 * (*out is then unspecified). */
static inline int checked_mul(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

static inline int checked_add(size_t a, size_t b, size_t *out)
{
    return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

/* The elements a strided view of a flat storage addresses (PyTorch's as_strided:
 * element (i0..in-1) lives at offset + sum i_k * stride[k]): *numel = the product of
 * the shape, *end = one past the highest element addressed (offset + sum (shape[k]-1)
 * * stride[k] + 1), or 0 when numel is 0. The view fits a storage of S elements
 * exactly when end <= S. 0 on success; -1 when ndim is outside 0..8, a shape, stride
 * or offset is negative, or any product or sum does not fit a size_t. */
int checked_view_extent(int ndim, const long long *shape, const long long *stride,
                        long long offset, size_t *numel, size_t *end);

#endif
