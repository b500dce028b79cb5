/* test_numtext.c — the exports' number text (numtext.h): the fast shortest "%.*g" gives
 * the same bytes as the reference bisection over snprintf and strtod for doubles and for
 * 32-bit values across the exponents the exports see and beyond (fixed seed), for exact
 * ties (printf rounds them to even), carries (9.9999 -> 10), powers of ten, negatives and
 * the values the fast path hands to the slow one (zero, tiny, huge); and a long's digits. */
#include "check.h"
#include "numtext.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next64(void)   /* xorshift64* */
{
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    return state * 2685821657736338717ull;
}

/* 1 when the fast and the slow text of v agree; the first disagreement is shown. */
static int same(double v, int f32, long *bad)
{
    char fast[NUMTEXT_LEN], slow[NUMTEXT_LEN];
    numtext_shortest(fast, v, f32);
    numtext_shortest_slow(slow, v, f32);
    if (strcmp(fast, slow) && (*bad)++ == 0)
        fprintf(stderr, "  %.17g (f32 %d): fast '%s', slow '%s'\n", v, f32, fast, slow);
    return !strcmp(fast, slow);
}

int main(void)
{
    long bad = 0, n = 0;
    for (int i = 0; i < 200000; i++, n += 2) {   /* random bits: every exponent */
        uint64_t u = next64();
        double d;
        memcpy(&d, &u, sizeof d);
        if (!isfinite(d)) continue;
        same(d, 0, &bad);
        same((double)(float)d, 1, &bad);
    }
    for (int i = 0; i < 200000; i++, n += 3) {   /* the exports' range: 1e-12 .. 1e12 */
        double x = ldexp((double)(next64() >> 11), -53) * pow(10, (int)(next64() % 25) - 12);
        same(x, 0, &bad);
        same((double)(float)x, 1, &bad);
        same(-(double)(float)x, 1, &bad);
    }
    for (int i = 0; i < 100000; i++, n += 2) {   /* short decimals: 0.003, 2.5, 1.25e-5 */
        double x = (double)(next64() % 100000) * pow(10, (int)(next64() % 16) - 10);
        same(x, 0, &bad);
        same((double)(float)x, 1, &bad);
    }
    static const double EDGE[] = {0.5, 1.5, 2.5, 0.125, 0.375, 1e-5, 9.5, 99.5, 0.25, 1.0,
                                  10.0, 1e15, 1e16, 1e17, 1e22, 1e23, 9.9999999999999999,
                                  99999999.5, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 123456789.0,
                                  0.0, -0.0, DBL_MIN, DBL_MAX, 5e-324, 1e-300, 1e300,
                                  FLT_MIN, FLT_MAX, 0.003, 3e-3f, 2.5e-4f, 65504.0,
                                  4294967296.0, 9007199254740993.0, 1e-7, 1e-4, 1e-3};
    for (size_t i = 0; i < sizeof EDGE / sizeof *EDGE; i++, n += 4) {
        same(EDGE[i], 0, &bad), same(-EDGE[i], 0, &bad);
        same((double)(float)EDGE[i], 1, &bad), same(-(double)(float)EDGE[i], 1, &bad);
    }
    CHECK(bad == 0, "fast and slow texts agree on %ld values (%ld differ)", n, bad);

    char b[NUMTEXT_LEN];
    numtext_shortest(b, 0.003, 0);
    CHECK(!strcmp(b, "0.003"), "0.003 reads back as itself: '%s'", b);
    numtext_shortest(b, (double)0.003f, 1);
    CHECK(!strcmp(b, "0.003"), "a float 0.003 is 0.003, not 0.00300000003: '%s'", b);
    numtext_shortest(b, 1e-7, 0);
    CHECK(!strcmp(b, "1e-07"), "printf's exponent form: '%s'", b);
    numtext_shortest(b, 1234567.0, 0);
    CHECK(!strcmp(b, "1234567"), "an integral value without a point: '%s'", b);

    char d[24];
    CHECK(numtext_long(d, 0) == 1 && !strcmp(d, "0"), "0");
    CHECK(numtext_long(d, -42) == 3 && !strcmp(d, "-42"), "-42");
    CHECK(numtext_long(d, LLONG_MIN) == 20 && !strcmp(d, "-9223372036854775808"), "%s", d);
    CHECK(numtext_long(d, LLONG_MAX) == 19 && !strcmp(d, "9223372036854775807"), "%s", d);
    return check_summary();
}
