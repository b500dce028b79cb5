/* m4.c — M4 decimation over a known range or over columns that double (see m4.h): one
 * column's rule (m4_col_add, the merge of two columns) and one way out (a column's points
 * in the order they came, each once) for both. The range's column of x is plot/'s formula,
 * floor((l + (x - x0) / (x1 - x0) (r - l)) 4), so a figure's curve is cut as it was; the
 * doubling columns are the history view's step ranges. Not drawing (plot/), not reading
 * (core/store). test_m4 checks both modes. */
#include "m4.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void m4_init_range(M4 *m, double x0, double x1, double l, double r)
{
    *m = (M4){.x0 = x0, .x1 = x1 > x0 ? x1 : x0 + 1, .l = l, .r = r};
}

int m4_init_doubling(M4 *m, int max)
{
    *m = (M4){.max = max > 0 ? max : 1};
    m->cols = calloc((size_t)m->max, sizeof *m->cols);
    return m->cols ? LM_OK : LM_ENOMEM;
}

void m4_free(M4 *m)
{
    free(m->cols);
    m->cols = NULL;
}

/* A point into column c: the first opens it; the last is the latest; a NaN is the first
 * NaN at most; the lowest and highest are finite where the column has a finite point
 * (the first of equal values). */
static inline void m4_col_add(M4Col *c, M4Pt p)
{
    if (!c->used) {
        c->first = c->lo = c->hi = c->last = c->nan = p;
        c->used = 1, c->has_nan = isnan(p.y);
        return;
    }
    c->last = p;
    if (isnan(p.y)) {
        if (!c->has_nan) c->nan = p, c->has_nan = 1;
        return;
    }
    if (p.y < c->lo.y || isnan(c->lo.y)) c->lo = p;
    if (p.y > c->hi.y || isnan(c->hi.y)) c->hi = p;
}

/* Column c's kept points in the order they came, each once, appended to out at *n. */
static void m4_col_out(const M4Col *c, M4Pt *out, int *n)
{
    if (!c->used) return;
    M4Pt k[M4_KEEP] = {c->first, c->lo, c->hi, c->last, c->nan};
    int nk = c->has_nan ? 5 : 4, from = *n;
    for (int i = 1; i < nk; i++)   /* insertion sort by number */
        for (int j = i; j > 0 && k[j].i < k[j - 1].i; j--) {
            M4Pt t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
        }
    for (int i = 0; i < nk; i++)
        if (*n == from || k[i].i != out[*n - 1].i) out[(*n)++] = k[i];
}

int m4_flush(M4 *m, M4Pt out[M4_KEEP])
{
    int n = 0;
    if (m->cols) return 0;
    m4_col_out(&m->cur, out, &n);
    m->cur.used = 0;
    return n;
}

/* Columns 2k and 2k + 1 into k, the width doubled: a's points, then b's last, the first
 * NaN of the two, the lower lowest and higher highest (a's on a tie, b's where a has no
 * finite point). */
static void m4_halve(M4 *m)
{
    for (int k = 0; k < m->max; k++) {
        M4Col a = 2 * k < m->max ? m->cols[2 * k] : (M4Col){0};
        M4Col b = 2 * k + 1 < m->max ? m->cols[2 * k + 1] : (M4Col){0};
        if (a.used && b.used) {
            a.last = b.last;
            if (!a.has_nan) a.nan = b.nan, a.has_nan = b.has_nan;
            if (isnan(a.lo.y) || (!isnan(b.lo.y) && b.lo.y < a.lo.y)) a.lo = b.lo;
            if (isnan(a.hi.y) || (!isnan(b.hi.y) && b.hi.y > a.hi.y)) a.hi = b.hi;
        } else if (b.used) {
            a = b;
        }
        m->cols[k] = a;
    }
    m->width *= 2;
}

int m4_add(M4 *m, double x, double y, M4Pt out[M4_KEEP])
{
    M4Pt p = {m->n++, x, y};
    if (!m->cols) {   /* a range */
        long col = (long)floor((m->l + (x - m->x0) / (m->x1 - m->x0) * (m->r - m->l)) * 4);
        int n = 0;
        if (m->cur.used && col != m->col) {
            m4_col_out(&m->cur, out, &n);
            m->cur.used = 0;
        }
        m->col = col;
        m4_col_add(&m->cur, p);
        return n;
    }
    if (m->width == 0) m->origin = x, m->width = 1;
    double k = floor((x - m->origin) / m->width);
    while (k >= m->max) {
        m4_halve(m);
        k = floor((x - m->origin) / m->width);
    }
    m4_col_add(&m->cols[k < 0 ? 0 : (long)k], p);
    return 0;
}

int m4_points(const M4 *m, M4Pt *out)
{
    int n = 0;
    for (int k = 0; m->cols && k < m->max; k++) m4_col_out(&m->cols[k], out, &n);
    return n;
}
