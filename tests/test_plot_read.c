/* test_plot_read.c — a series read for a figure, decimated as it is read (plot_read.h):
 * a run of 100,000 logged steps comes back as at most four points a column, with the
 * spike, the dip, the NaN and the +inf that a stride of one point in 50 (the report's old
 * way to 2,000 points) would have dropped, every non-finite point counted, and a short
 * series whole. Several series of a run read together are each what it reads alone, and
 * a run's rows are read once by the grid (`plot ID series=`) and by `report` for all the
 * series they draw (each read them once a series: 8 passes over a run's rows). Rows made
 * with SQL. */
#include "runstore_util.h"
#include "cmd_plot.h"
#include "commands.h"
#include "plot_read.h"
#include "session.h"

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


static int same_curve(const PlotCurve *a, const PlotCurve *b)
{
    if (a->n != b->n || a->n_all != b->n_all || a->nf.nan != b->nf.nan || a->nf.pos != b->nf.pos
        || a->nf.neg != b->nf.neg)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->x[i] != b->x[i] || (a->y[i] != b->y[i] && !(isnan(a->y[i]) && isnan(b->y[i]))))
            return 0;
    return 1;
}

static void quiet(void *ud, int kind, const char *text)
{
    (void)ud;
    if (kind == SESSION_OUT_ERROR) fprintf(stderr, "%s\n", text);
}

/* N logged steps (seven step metrics a row), an evaluation every 100 steps (valid: loss,
 * ppl, bpc and the best) and a named series of 1,000 points: the grid of every series and
 * a report read each row once, and the series read together are those read alone. */
static void test_one_pass(void)
{
    enum { N = 40000 };
    char path[128], err[LM_ERR_LEN], sql[2000], out[200];
    db_path(path, sizeof path, "one.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long run = new_run(s, "one", "msa", "", NULL);
    runstore_close(s);
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < %d)"
             " INSERT INTO metrics SELECT %ld, k, k / 1000.0, 64*k, CASE k WHEN 777 THEN NULL"
             " WHEN 20000 THEN 9.0 ELSE 3.0 + ((k * 7919) %% 1000) / 10000.0 END,"
             " 0.001 * (1 + k %% 3), CASE k WHEN 333 THEN 9e999 ELSE 0.5 + (k %% 7) END,"
             " 1000 + k %% 11, k * 0.01 FROM i;"
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < %d)"
             " INSERT INTO evals SELECT %ld, 100*k, 'valid', 3.0/(1+0.01*k) + (k %% 5) / 50.0,"
             " 20.0, 4.2, 640*k, k FROM i;"
             "INSERT INTO series_names(run_id, name, kind) VALUES (%ld, 'grad/w', 0);"
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < 1000)"
             " INSERT INTO series_points SELECT (SELECT id FROM series_names WHERE run_id=%ld"
             " AND name='grad/w'), 40*k, 0.1*k FROM i;"
             "UPDATE runs SET last_step=%d, status='finished', best_val=2.0 WHERE id=%ld;",
             N, run, N / 100, run, run, run, N, run);
    CHECK(q_exec(path, sql) == SQLITE_OK, "rows made");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open again: %s", err);
    char (*names)[SERIES_NAME_LEN] = NULL;
    int n = 0;
    CHECK(runstore_series_list(s, run, NULL, &names, &n, err) == LM_OK && n >= 12,
          "its series: %d", n);
    const char *ptr[64];
    PlotCurve all[64];
    for (int k = 0; k < n && k < 64; k++) ptr[k] = names[k];
    long r0 = runstore_rows_read(s);
    CHECK(plot_read_many(s, run, ptr, n, all, err) == LM_OK, "read together: %s", err);
    long together = runstore_rows_read(s) - r0;
    CHECK(together <= N + N / 100 + 1000 + 16, "%d series read together: %ld rows (%d steps)",
          n, together, N);
    for (int k = 0; k < n && k < 64; k++) {
        PlotCurve one;
        CHECK(plot_read_series(s, run, names[k], &one, err) == LM_OK && same_curve(&one, &all[k]),
              "%s: read together as alone (%d of %ld points, alone %d of %ld)", names[k],
              all[k].n, all[k].n_all, one.n, one.n_all);
        plot_read_free(&one);
        plot_read_free(&all[k]);
    }
    CHECK(plot_read_many(s, run, (const char *[]){"loss", "nope"}, 2, all, err) == LM_EARG &&
          !all[0].x, "an unknown series: refused, nothing kept: %s", err);
    CHECK(plot_read_many(s, run, (const char *[]){"grad/nope", "loss"}, 2, all, err) == LM_OK &&
          all[0].n == 0 && all[1].n_all == N, "a named series the run has not: empty, as alone");
    plot_read_free(&all[0]), plot_read_free(&all[1]);
    /* the grid of every series (`plot ID series=*`) */
    snprintf(out, sizeof out, "%s/grid.svg", tmpdir);
    int ns = 0;
    r0 = runstore_rows_read(s);
    CHECK(cmd_plot_grid_file(s, run, "*", out, "grid", &ns, NULL, err) == LM_OK && ns == n,
          "the grid: %s", err);
    long grid = runstore_rows_read(s) - r0;
    CHECK(grid <= N + N / 100 + 1000 + 16, "the grid of %d series read %ld rows of a run of "
          "%d steps: each row once", n, grid, N);
    runstore_close(s);
    free(names);
    /* `report`: the loss and val_loss curves and the grid, each row once */
    Session ses;
    session_init(&ses, path);
    session_set_writer(&ses, quiet, NULL);
    snprintf(sql, sizeof sql, "report runs=%ld file=%s/r.html", run, tmpdir);
    r0 = session_store(&ses) ? runstore_rows_read(session_store(&ses)) : 0;
    CHECK(session_run_line(&ses, sql) == LM_OK, "%s", sql);
    long report = runstore_rows_read(session_store(&ses)) - r0;
    CHECK(report <= N + N / 100 + 1000 + 16, "the report read %ld rows of a run of %d steps: "
          "each row once", report, N);
    printf("rows read: together %ld, grid %ld, report %ld (%d steps)\n", together, grid, report, N);
    session_free(&ses);
}

static void test_all(void)
{
    test_decimated();
    test_one_pass();
}

int main(void)
{
    return runstore_test_main("test_plot_read", test_all);
}
