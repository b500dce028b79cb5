/* m4.h — M4 decimation (Jugel et al., "M4: A Visualization-Oriented Time Series Data
 * Aggregation", VLDB 2014), the one of lmlab: a curve's x range is cut into columns and of
 * each column only its first, lowest, highest and last point are kept, and its first NaN,
 * each once, in the order they came, so that a line through them draws as the line through
 * all of them and a spike, a dip and a NaN stay. A column keeps at most M4_KEEP points, so
 * a curve of millions of points costs a few per column. Two ways to cut the columns:
 *
 *  - a known range (m4_init_range): x in [x0, x1] mapped onto [l, r], a figure's device
 *    units, in columns a quarter of a unit wide. Points come in order; when one opens
 *    another column, the points kept of the column before are given out at once
 *    (m4_add, m4_flush), so a drawing or a reader holds only those (plot/'s curves, the
 *    report's and `plot`'s reads of millions of points: commands/plot_read.c).
 *  - doubling (m4_init_doubling): the range is not known (a curve read once, of any
 *    length): at most max columns, 1 wide from the first point's x; when a point falls
 *    past the last column, each two neighbours merge into one and the width doubles, so
 *    one pass keeps at most max columns; every point when the curve spans at most 2 max
 *    units. The points come out at the end (m4_points) (the history view's curves:
 *    core/store/runstore_lineage.c, which keeps each step once). Merging two columns
 *    keeps what one column of both widths would (a's first, b's last, the lower lowest
 *    and the higher highest, a's on a tie, the first NaN), except in a column of NaN
 *    points alone, whose lowest and highest may then be a later NaN than its first.
 *
 * x is finite; y may be anything: a NaN is kept as its column's first NaN (and may be its
 * first or last point), never as its lowest or highest. Pure: no store, no drawing. */
#ifndef LM_M4_H
#define LM_M4_H

#define M4_KEEP 5   /* points a column gives at most: first, lowest, highest, last, NaN */

typedef struct {
    long i;         /* its number: the order it was added in (m4 counts) */
    double x, y;
} M4Pt;

typedef struct {
    M4Pt first, lo, hi, last, nan;
    int used, has_nan;
} M4Col;

typedef struct {
    double x0, x1, l, r;   /* a range's mapping */
    long col;              /* a range: the column in progress (cur) */
    M4Col cur;
    M4Col *cols;           /* doubling: (max) columns; column k holds x in
                              [origin + k width, origin + (k + 1) width) */
    int max;
    double origin, width;
    long n;                /* points added */
} M4;

/* A known range: x in [x0, x1] (x1 <= x0 is taken as x0 + 1) onto [l, r], columns a
 * quarter of a unit wide. Nothing to free (m4_free is a no-op). */
void m4_init_range(M4 *m, double x0, double x1, double l, double r);
/* Doubling, at most max (>= 1) columns. LM_OK or LM_ENOMEM; free with m4_free. */
int m4_init_doubling(M4 *m, int max);
void m4_free(M4 *m);

/* Adds the next point (x not smaller than the last's: a range's columns, and the doubling
 * ones from the first point's x, are in x order). A range: when it opens another column,
 * the points kept of the one before go to out, in the order they came, each once:
 * returns how many (0 to M4_KEEP). Doubling: keeps it, returns 0 (out may be NULL). */
int m4_add(M4 *m, double x, double y, M4Pt out[M4_KEEP]);
/* A range: closes the column in progress (before a gap, at the end): its kept points into
 * out, as m4_add gives them. Doubling: 0. */
int m4_flush(M4 *m, M4Pt out[M4_KEEP]);
/* Doubling: every column's kept points, columns in x order, each column's in the order
 * they came, each once, into out (room for M4_KEEP * max): returns how many. */
int m4_points(const M4 *m, M4Pt *out);

#endif
