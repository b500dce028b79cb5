/* check.h — the tests' tiny assertion kit: CHECK counts and reports failures with their
 * location, check_close compares floats with a stated tolerance, check_summary prints
 * "N passed, N failed" and returns the exit code. Header-only on purpose. */
#ifndef LM_CHECK_H
#define LM_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_passed_, check_failed_;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond) {                                                               \
            check_passed_++;                                                      \
        } else {                                                                  \
            check_failed_++;                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
        }                                                                         \
    } while (0)

/* Largest |a-b| / (atol + rtol*|b|) over n values; <= 1 means within tolerance.
 * *max_abs receives the largest absolute difference when not NULL. */
static inline double check_max_err(const float *a, const float *b, long n, double rtol,
                                   double atol, double *max_abs)
{
    double worst = 0, worst_abs = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double r = d / (atol + rtol * fabs((double)b[i]));
        if (!(r <= worst)) worst = r;   /* NaN propagates as failure */
        if (d > worst_abs) worst_abs = d;
    }
    if (max_abs) *max_abs = worst_abs;
    return worst;
}

/* CHECK that two arrays agree within rtol/atol; prints the largest error found. */
#define CHECK_CLOSE(what, a, b, n, rtol, atol)                                     \
    do {                                                                          \
        double mabs_;                                                             \
        double r_ = check_max_err((a), (b), (n), (rtol), (atol), &mabs_);         \
        printf("  %-40s max abs err %.3g (%.2f of tolerance)\n", (what), mabs_, r_); \
        CHECK(r_ <= 1.0, "%s: max abs err %.3g exceeds rtol %g atol %g", (what), mabs_, \
              (double)(rtol), (double)(atol));                                    \
    } while (0)

static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed_, check_failed_);
    return check_failed_ ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
