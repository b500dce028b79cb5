/* numtext.c — the shortest "%.*g" that reads back (numtext.h), for the exports. The CSV
 * export of a 5 M-step run spent nine tenths of its time in glibc's printf and strtod
 * (multi-precision digits, printf_positional for "%.*g"), four or five of each per value.
 * Here a value's first 17 digits are found once with 128-bit integers (v = m 2^k times a
 * power of ten, divided exactly), every shorter precision is rounded from them (half to
 * even on an exact tie, as glibc's printf rounds), and a candidate is read back with
 * Clinger's fast path (an integer below 2^53 times or over an exact power of ten is one
 * correctly rounded operation: what strtod returns). What does not fit (tiny, huge, zero,
 * 16-17 digit candidates) takes the slow way, so the bytes are always the slow way's.
 * Reference: W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990.
 * Not a general printf. */
#include "numtext.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

static const uint64_t P10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull};
static const double P10D[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
                                1e22};

void numtext_shortest_slow(char *buf, double v, int f32)
{
    static const char *const FMT[18] = {"%.0g", "%.1g", "%.2g", "%.3g", "%.4g", "%.5g",
                                        "%.6g", "%.7g", "%.8g", "%.9g", "%.10g", "%.11g",
                                        "%.12g", "%.13g", "%.14g", "%.15g", "%.16g", "%.17g"};
    int lo = 1, hi = f32 ? 9 : 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, NUMTEXT_LEN, FMT[mid], v);
        double back = strtod(buf, NULL);
        if (f32 ? (float)back == (float)v : back == v) hi = mid;
        else lo = mid + 1;
    }
    snprintf(buf, NUMTEXT_LEN, FMT[lo], v);
}

/* x * 10^n, 0 when it would reach 2^127. */
static int mul_pow10(u128 *x, int n)
{
    for (; n > 0; n -= 19) {
        uint64_t p = P10[n > 19 ? 19 : n];
        if (*x > ((u128)1 << 127) / p) return 0;
        *x *= p;
    }
    return 1;
}

/* x * 2^n, 0 when it would reach 2^127. */
static int shift_left(u128 *x, int n)
{
    if (n >= 127 || (n > 0 && (*x >> (127 - n)))) return 0;
    *x <<= n;
    return 1;
}

/* The first 17 digits of v > 0: T = floor(v 10^(16 - E)), 10^16 <= T < 10^17, E the
 * decimal exponent of v's leading digit; *frac the rest compared with one half (-1 below,
 * 0 exactly half, 1 above; *exact when it is 0). 0, or -1 when it does not fit. */
static int digits17(double v, uint64_t *T, int *E, int *frac, int *exact)
{
    int k;
    uint64_t m = (uint64_t)ldexp(frexp(v, &k), 53);
    k -= 53;   /* v = m 2^k exactly */
    while (!(m & 1)) m >>= 1, k++;
    int e = (int)floor(log10(v));
    for (int tries = 0; tries < 3; tries++) {
        int s = 16 - e;
        u128 num = m, den = 1;
        if (!mul_pow10(&num, s > 0 ? s : 0) || !shift_left(&num, k > 0 ? k : 0) ||
            !mul_pow10(&den, s < 0 ? -s : 0) || !shift_left(&den, k < 0 ? -k : 0))
            return -1;
        u128 t = num / den, r = num % den;
        if (t >= P10[17]) { e++; continue; }   /* log10's floor was off by one */
        if (t < P10[16]) { e--; continue; }
        *T = (uint64_t)t;
        *E = e;
        *exact = r == 0;
        *frac = 2 * r < den ? -1 : 2 * r > den ? 1 : 0;
        return 0;
    }
    return -1;
}

/* v's digits rounded to p (1..17) significant digits, as printf rounds: q with
 * 10^(p-1) <= q < 10^p, *Ep its decimal exponent (a carry to 10^p moves it up). */
static uint64_t round_to(uint64_t T, int E, int frac, int exact, int p, int *Ep)
{
    uint64_t div = P10[17 - p], q = T / div, tail = T % div, half = div / 2;
    int up;
    if (p == 17) up = frac > 0 || (frac == 0 && (q & 1));
    else if (tail != half) up = tail > half;
    else up = !exact || (q & 1);   /* above half, or an exact tie: to even */
    q += (uint64_t)up;
    *Ep = E;
    if (q == P10[p]) q = P10[p - 1], (*Ep)++;
    return q;
}

/* "%.*g" of q 10^(Ep - p + 1) (q with p digits) into buf, minus when neg. */
static void format_g(char *buf, int neg, uint64_t q, int p, int Ep)
{
    char d[20];
    for (int i = p - 1; i >= 0; i--) d[i] = (char)('0' + q % 10), q /= 10;
    int nd = p;
    while (nd > 1 && d[nd - 1] == '0') nd--;   /* %g strips trailing zeros */
    char *o = buf;
    if (neg) *o++ = '-';
    if (Ep < -4 || Ep >= p) {
        *o++ = d[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, d + 1, (size_t)nd - 1), o += nd - 1;
        }
        int x = Ep < 0 ? -Ep : Ep;
        *o++ = 'e', *o++ = Ep < 0 ? '-' : '+';
        if (x >= 100) *o++ = (char)('0' + x / 100);
        *o++ = (char)('0' + x / 10 % 10), *o++ = (char)('0' + x % 10);
    } else if (Ep >= 0) {
        memcpy(o, d, (size_t)Ep + 1), o += Ep + 1;
        if (nd > Ep + 1) {
            *o++ = '.';
            memcpy(o, d + Ep + 1, (size_t)(nd - Ep - 1)), o += nd - Ep - 1;
        }
    } else {
        *o++ = '0', *o++ = '.';
        for (int i = 0; i < -Ep - 1; i++) *o++ = '0';
        memcpy(o, d, (size_t)nd), o += nd;
    }
    *o = 0;
}

/* Whether q 10^e10 reads back as a (> 0): 1 yes, 0 no, -1 cannot tell here. */
static int reads_back(uint64_t q, int e10, double a, int f32)
{
    if (q >= (1ull << 53) || e10 < -22 || e10 > 22) return -1;
    double c = e10 >= 0 ? (double)q * P10D[e10] : (double)q / P10D[-e10];
    return f32 ? (float)c == (float)a : c == a;
}

void numtext_shortest(char *buf, double v, int f32)
{
    double a = fabs(v);
    uint64_t T;
    int E, frac, exact;
    if (!isfinite(v) || a == 0 || digits17(a, &T, &E, &frac, &exact)) {
        numtext_shortest_slow(buf, v, f32);
        return;
    }
    int lo = 1, hi = f32 ? 9 : 17, Ep;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        uint64_t q = round_to(T, E, frac, exact, mid, &Ep);
        int ok = reads_back(q, Ep - mid + 1, a, f32);
        if (ok < 0) {
            numtext_shortest_slow(buf, v, f32);
            return;
        }
        if (ok) hi = mid;
        else lo = mid + 1;
    }
    uint64_t q = round_to(T, E, frac, exact, lo, &Ep);
    format_g(buf, v < 0, q, lo, Ep);
}

int numtext_long(char *buf, long long v)
{
    char t[24];
    int n = 0, k = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do t[n++] = (char)('0' + u % 10); while ((u /= 10));
    if (v < 0) buf[k++] = '-';
    while (n) buf[k++] = t[--n];
    buf[k] = 0;
    return k;
}
