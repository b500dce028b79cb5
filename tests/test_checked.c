/* test_checked.c — the overflow-checked size arithmetic (checked.h): products and sums
 * at the edge of size_t, and the extent of strided views, including the two issue 25
 * crafted (a storage of 2^62+2 floats whose byte count wraps; shape 2^24+1 with stride
 * 2^40, whose extent wraps to 0), which must be refused, not computed modulo 2^64. */
#include "check.h"
#include "checked.h"

#include <stdint.h>

static void test_mul_add(void)
{
    size_t r;
    CHECK(checked_mul(3, 5, &r) == 0 && r == 15, "3*5");
    CHECK(checked_mul(SIZE_MAX, 1, &r) == 0 && r == SIZE_MAX, "max*1");
    CHECK(checked_mul(((size_t)1 << 62) + 2, 4, &r) == -1, "(2^62+2)*4 wraps");
    CHECK(checked_mul((size_t)1 << 32, (size_t)1 << 32, &r) == -1, "2^32*2^32");
    CHECK(checked_add(SIZE_MAX - 1, 1, &r) == 0 && r == SIZE_MAX, "max-1+1");
    CHECK(checked_add(SIZE_MAX, 1, &r) == -1, "max+1");
}

static void test_extent(void)
{
    size_t numel, end;
    long long shape[3] = {2, 3}, stride[3] = {1, 2};   /* a transposed 3x2 */
    CHECK(checked_view_extent(2, shape, stride, 0, &numel, &end) == 0 && numel == 6 &&
              end == 6, "transposed: %zu %zu", numel, end);
    CHECK(checked_view_extent(2, shape, stride, 4, &numel, &end) == 0 && end == 10,
          "at offset 4: %zu", end);
    long long s0[2] = {16384, 16384}, z0[2] = {0, 0};   /* stride 0: one element */
    CHECK(checked_view_extent(2, s0, z0, 0, &numel, &end) == 0 && numel == 16384 * 16384 &&
              end == 1, "stride 0: %zu %zu", numel, end);
    long long e[1] = {0}, one[1] = {1};
    CHECK(checked_view_extent(1, e, one, 99, &numel, &end) == 0 && numel == 0 && end == 0,
          "empty view addresses nothing");
    CHECK(checked_view_extent(0, e, one, 7, &numel, &end) == 0 && numel == 1 && end == 8,
          "a scalar at offset 7");
    long long big[1] = {(1LL << 24) + 1}, bs[1] = {1LL << 40};
    CHECK(checked_view_extent(1, big, bs, 0, &numel, &end) == -1, "2^24 * 2^40 wraps");
    long long neg[1] = {-1};
    CHECK(checked_view_extent(1, neg, one, 0, &numel, &end) == -1, "negative shape");
    CHECK(checked_view_extent(1, one, neg, 0, &numel, &end) == -1, "negative stride");
    CHECK(checked_view_extent(1, one, one, -1, &numel, &end) == -1, "negative offset");
    CHECK(checked_view_extent(9, shape, stride, 0, &numel, &end) == -1, "9 dimensions");
    long long huge[3] = {1LL << 40, 1LL << 40, 1LL << 40}, ones[3] = {0, 0, 0};
    CHECK(checked_view_extent(3, huge, ones, 0, &numel, &end) == -1, "numel 2^120");
    long long last[1] = {3}, ls[1] = {INT64_MAX};
    CHECK(checked_view_extent(1, last, ls, (long long)(SIZE_MAX / 2), &numel, &end) == -1,
          "offset + (3-1) * (2^63-1) past SIZE_MAX");
}

int main(void)
{
    test_mul_add();
    test_extent();
    return check_summary();
}
