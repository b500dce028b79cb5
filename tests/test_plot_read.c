/* test_plot_read.c — a series read for a figure, decimated as it is read (plot_read.h):
 * a run of 100,000 logged steps comes back as at most four points a column, with the
 * spike, the dip, the NaN and the +inf that a stride of one point in 50 (the report's old
 * way to 2,000 points) would have dropped, every non-finite point counted, and a short
 * series whole. Rows made with SQL. */
#include "runstore_util.h"
#include "plot_read.h"

#include <math.h>

static int has(const PlotCurve *c, double x, double y)
{
    for (int i = 0; i < c->n; i++)
        if (c->x[i] == x && (isnan(y) ? isnan(c->y[i]) : c->y[i] == y)) return 1;
    return 0;
}

static void test_decimated(void)
{
    char path[128], err[LM_ERR_LEN];
    db_path(path, sizeof path, "p.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long run = new_run(s, "long", "msa", "", NULL), short_run = new_run(s, "short", "msa", "", NULL);
    runstore_close(s);
    char sql[1200];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < 100000)"
             " INSERT INTO metrics SELECT %ld, k, 0, 64*k, CASE k WHEN 33333 THEN 9.0"
             " WHEN 66667 THEN -2.0 WHEN 77777 THEN NULL WHEN 55551 THEN 9e999"
             " ELSE 2.0 + ((k * 7919) %% 1000) / 10000.0 END, 0.001, 1, 1000, k FROM i;"
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < 30)"
             " INSERT INTO metrics SELECT %ld, k, 0, 64*k, 3.0 - k / 100.0, 0.001, 1, 1000, k"
             " FROM i;", run, short_run);
    CHECK(q_exec(path, sql) == SQLITE_OK, "rows made");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open again: %s", err);
    PlotCurve c;
    CHECK(plot_read_series(s, run, "loss", &c, err) == LM_OK, "read: %s", err);
    CHECK(c.n_all == 100000 && c.n > 1000 && c.n <= 4 * PLOT_READ_COLUMNS + 8,
          "100,000 points kept as %d (of %ld)", c.n, c.n_all);
    CHECK(has(&c, 33333, 9.0) && has(&c, 66667, -2.0), "the spike and the dip stay");
    CHECK(has(&c, 77777, NAN) && has(&c, 55551, INFINITY), "the NaN and the +inf stay");
    CHECK(c.nf.nan == 1 && c.nf.pos == 1 && c.nf.neg == 0, "counted: %ld nan, %ld +inf",
          c.nf.nan, c.nf.pos);
    int ordered = 1;
    for (int i = 1; i < c.n; i++) ordered &= c.x[i] > c.x[i - 1];
    CHECK(ordered && c.x[0] == 1 && c.x[c.n - 1] == 100000, "in step order, both ends kept");
    plot_read_free(&c);
    CHECK(plot_read_series(s, short_run, "loss", &c, err) == LM_OK && c.n == 30 &&
          c.n_all == 30 && c.y[29] == 3.0 - 30 / 100.0, "a short series whole: %d", c.n);
    plot_read_free(&c);
    CHECK(plot_read_series(s, short_run, "val_loss", &c, err) == LM_OK && c.n == 0,
          "no evaluations: no point, no error");
    CHECK(plot_read_series(s, short_run, "nope", &c, err) == LM_EARG, "an unknown series: %s",
          err);
    runstore_close(s);
}

int main(void)
{
    return runstore_test_main("test_plot_read", test_decimated);
}
