/* checked.c — the extent of a strided view, overflow-checked (see checked.h). */
#include "checked.h"

int checked_view_extent(int ndim, const long long *shape, const long long *stride,
                        long long offset, size_t *numel, size_t *end)
{
    *numel = 0;
    *end = 0;
    if (ndim < 0 || ndim > 8 || offset < 0)
        return -1;
    size_t n = 1, last = (size_t)offset, step;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0 || stride[k] < 0 || checked_mul(n, (size_t)shape[k], &n))
            return -1;
        if (shape[k] > 0 && (checked_mul((size_t)shape[k] - 1, (size_t)stride[k], &step) ||
                             checked_add(last, step, &last)))
            return -1;
    }
    *numel = n;
    if (n && checked_add(last, 1, end))
        return -1;
    return 0;
}
