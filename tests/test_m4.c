/* test_m4.c — the one M4 (core/base/m4.h) in both its modes. A known range: a million
 * points keep at most four a column (five with a NaN), in the order they came, each
 * column's first, lowest, highest and last exactly as counted by hand, the spike, the dip
 * and a NaN kept, a flush closing a column before a gap. Doubling: a curve of unknown
 * length keeps every point up to 2 max units, at most M4_KEEP max points after a million,
 * the spike, the dip and the NaN kept, and its columns' points are those of the final
 * width's columns counted by hand (merging is exact). Fixed seeds; no store, no drawing
 * (test_plot draws through it, test_dashboard_history reads a run through it). */
#include "check.h"
#include "err.h"
#include "m4.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double noise(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng % 10000) / 10000.0;
}

/* The hand count of one column: its points' first, lowest, highest (the first of equal
 * values, finite), last, and first NaN, as numbers (-1 none). */
typedef struct {
    long first, lo, hi, last, nan;
} Hand;

static void hand_add(Hand *h, long i, const double *y)
{
    if (h->first < 0) h->first = i;
    h->last = i;
    if (isnan(y[i])) {
        if (h->nan < 0) h->nan = i;
        return;
    }
    if (h->lo < 0 || y[i] < y[h->lo]) h->lo = i;
    if (h->hi < 0 || y[i] > y[h->hi]) h->hi = i;
}

/* The numbers a column of hand h gives, in order, each once, appended to want. */
static void hand_out(const Hand *h, long *want, int *n)
{
    long k[5] = {h->first, h->lo, h->hi, h->last, h->nan};
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && k[j] < k[j - 1]; j--) {
            long t = k[j];
            k[j] = k[j - 1], k[j - 1] = t;
        }
    int from = *n;
    for (int i = 0; i < 5; i++)
        if (k[i] >= 0 && (*n == from || want[*n - 1] != k[i])) want[(*n)++] = k[i];
}

enum { N = 1000000 };

static void test_range(double *y)
{
    /* x = i over [0, N - 1] onto [0, 2048]: 8192 columns of about 122 points */
    M4 m;
    m4_init_range(&m, 0, N - 1, 0, 2048);
    M4Pt out[M4_KEEP];
    long *got = malloc(sizeof *got * 5 * 8200), *want = malloc(sizeof *want * 5 * 8200);
    int ng = 0, nw = 0, most = 0, gaps = 0;
    Hand h = {-1, -1, -1, -1, -1};
    long col = -1;
    for (long i = 0; i < N; i++) {
        long c = (long)floor((0 + (double)i / (N - 1) * 2048) * 4);
        if (c != col && col >= 0) hand_out(&h, want, &nw), h = (Hand){-1, -1, -1, -1, -1};
        col = c;
        hand_add(&h, i, y);
        int k = m4_add(&m, (double)i, y[i], out);
        most = k > most ? k : most;
        for (int j = 0; j < k; j++) got[ng++] = out[j].i;
    }
    hand_out(&h, want, &nw);
    int k = m4_flush(&m, out);
    for (int j = 0; j < k; j++) got[ng++] = out[j].i;
    CHECK(most <= M4_KEEP && ng <= 5 * 8193, "a range: %d points of %d, at most %d a column",
          ng, N, most);
    CHECK(ng == nw && !memcmp(got, want, sizeof *got * (size_t)ng),
          "a range: every column's first, lowest, highest, last and NaN, as counted by hand "
          "(%d and %d points)", ng, nw);
    int spike = 0, dip = 0, nan = 0, order = 1;
    for (int i = 0; i < ng; i++) {
        spike |= got[i] == 500000, dip |= got[i] == 700001, nan |= got[i] == 300007;
        order &= i == 0 || got[i] > got[i - 1];
    }
    CHECK(spike && dip && nan && order && got[0] == 0 && got[ng - 1] == N - 1,
          "a range keeps the spike %d, the dip %d, the NaN %d, both ends, in order %d", spike,
          dip, nan, order);
    /* a flush before a gap closes the column in progress: its points once, then nothing */
    M4 g;
    m4_init_range(&g, 0, 100, 0, 1);   /* four columns of 25 */
    for (int i = 0; i < 10; i++) gaps += m4_add(&g, i, i == 4 ? 50.0 : 1.0, out);
    k = m4_flush(&g, out);
    CHECK(gaps == 0 && k == 3 && out[0].i == 0 && out[1].i == 4 && out[2].i == 9 &&
          m4_flush(&g, out) == 0, "a flush: first, highest, last of the column (%d)", k);
    m4_free(&g);   /* a no-op for a range */
    free(got), free(want);
}

static void test_doubling(double *y)
{
    M4 m;
    M4Pt *out = malloc(sizeof *out * M4_KEEP * 4096);
    /* 8,192 points over 4,096 columns: every one kept */
    CHECK(m4_init_doubling(&m, 4096) == LM_OK, "doubling: 4096 columns");
    for (long i = 0; i < 8192; i++) m4_add(&m, 100 + (double)i, y[i], NULL);
    int n = m4_points(&m, out), whole = n == 8192;
    for (int i = 0; whole && i < n; i++)
        whole = out[i].i == i && out[i].x == 100 + i && (out[i].y == y[i] ||
                                                          (isnan(y[i]) && isnan(out[i].y)));
    CHECK(whole, "doubling: 8,192 points over 4,096 columns kept whole (%d)", n);
    m4_free(&m);
    /* a million: at most M4_KEEP max, the final width's columns as counted by hand */
    CHECK(m4_init_doubling(&m, 4096) == LM_OK, "doubling again");
    for (long i = 0; i < N; i++) m4_add(&m, 7 + (double)i, y[i], NULL);
    n = m4_points(&m, out);
    double w = m.width;
    long *want = malloc(sizeof *want * M4_KEEP * 4096);
    int nw = 0;
    Hand h = {-1, -1, -1, -1, -1};
    for (long i = 0, col = 0; i < N; i++) {
        long c = (long)floor((double)i / w);
        if (c != col) hand_out(&h, want, &nw), h = (Hand){-1, -1, -1, -1, -1};
        col = c;
        hand_add(&h, i, y);
    }
    hand_out(&h, want, &nw);
    int same = n == nw, spike = 0, dip = 0, nan = 0;
    for (int i = 0; i < n; i++) {
        same &= i < nw && out[i].i == want[i] && out[i].x == 7 + (double)out[i].i;
        spike |= out[i].i == 500000, dip |= out[i].i == 700001, nan |= out[i].i == 300007;
    }
    CHECK(n <= M4_KEEP * 4096 && w == 256 && same, "doubling: %d points of %d (width %g), "
          "those of the final columns counted by hand (%d)", n, N, w, nw);
    CHECK(spike && dip && nan && out[0].i == 0 && out[n - 1].i == N - 1,
          "doubling keeps the spike %d, the dip %d, the NaN %d and both ends", spike, dip, nan);
    CHECK(m4_add(&m, 1e7, 1, NULL) == 0 && m4_flush(&m, NULL) == 0, "doubling gives out at "
          "the end only");
    m4_free(&m);
    m4_free(&m);   /* twice: a no-op */
    /* a column of one: max 1 keeps the curve's first, lowest, highest, last */
    CHECK(m4_init_doubling(&m, 1) == LM_OK, "one column");
    for (long i = 0; i < 1000; i++) m4_add(&m, (double)i, i == 10 ? -5.0 : i == 20 ? 5.0 : 0.0, NULL);
    n = m4_points(&m, out);
    CHECK(n == 4 && out[0].i == 0 && out[1].i == 10 && out[2].i == 20 && out[3].i == 999,
          "one column: %d points", n);
    m4_free(&m);
    free(out), free(want);
}

int main(void)
{
    double *y = malloc(sizeof *y * N);
    for (long i = 0; i < N; i++) y[i] = 3.0 - (double)i / N + 0.05 * noise();
    y[500000] = 9.0;        /* a spike */
    y[700001] = -2.0;       /* a dip */
    y[300007] = NAN;        /* a NaN */
    y[5000] = NAN;
    test_range(y);
    test_doubling(y);
    free(y);
    return check_summary();
}
