/* runstore_follow.c — what following a run from the store needs: whether a run's
 * process is alive, its newest logged step, and its gate statistics at one step (every
 * layer and level). The dashboard and `status` use them to show a run that another
 * process trains, or a finished one, from the store alone. Not the run list or the
 * series (runstore_query.c). */
#include "private/runstore_impl.h"

int runstore_run_live(const RunStore *s, const RunRow *r)
{
    if (strcmp(r->status, "running") && strcmp(r->status, "paused"))
        return 0;
    if (strcmp(r->host, s->host)) {
        double age;
        return !runstore_run_stale(s, r, RUNSTORE_STALE_SECONDS, &age);
    }
    return r->pid > 0 && runstore_run_alive(s, r->id, r->pid);
}

int runstore_changed(RunStore *s)
{
    sqlite3_stmt *st;
    if (prep(s, "PRAGMA data_version", &st, NULL)) return 0;
    sqlite3_int64 v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0)
                                                     : s->data_version;
    sqlite3_finalize(st);
    int changed = v != s->data_version;
    s->data_version = v;
    return changed;
}

void runstore_step_from_row(sqlite3_stmt *st, StepMetric *m)
{
    m->step = sqlite3_column_int64(st, 0);
    for (int i = 0; i < STEP_METRIC_N; i++)
        step_metric_set(m, i, STEP_METRICS[i].kind == STEP_INT
                                  ? (double)sqlite3_column_int64(st, i + 1)
                                  : col_real(st, i + 1));
}

void runstore_step_columns(char *buf, size_t cap)
{
    int at = snprintf(buf, cap, "step");
    for (int i = 0; i < STEP_METRIC_N && at >= 0 && (size_t)at < cap; i++)
        at += snprintf(buf + at, cap - at, ", %s", STEP_METRICS[i].name);
}

int runstore_step_columns_migrate(RunStore *s, int *added, char *err)
{
    *added = 0;
    int have[STEP_METRIC_N] = {0}, rc;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT name FROM pragma_table_info('metrics')", &st, err);
    if (status) return status;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int i = step_metric_find(col_str(st, 0));
        if (i >= 0) have[i] = 1;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return runstore_db_fail(s, rc, "reading the metrics columns", err);
    for (int i = 0; i < STEP_METRIC_N && !status; i++) {
        if (have[i]) continue;
        char sql[160];
        snprintf(sql, sizeof sql, "ALTER TABLE metrics ADD COLUMN %s %s", STEP_METRICS[i].name,
                 STEP_METRICS[i].kind == STEP_INT ? "INTEGER" : "REAL");
        status = exec_sql(s, sql, "adding a metric column", err);
        *added += !status;
    }
    return status;
}

int runstore_last_step(RunStore *s, long run, StepMetric *m, long *n_steps, char *err)
{
    memset(m, 0, sizeof *m);
    *n_steps = 0;
    int status = runstore_check_present(s, err);   /* a followed store that vanished */
    if (!status) status = runstore_check_run(s, run, err);
    if (status) return status;
    sqlite3_stmt *st;
    char cols[768], sql[1024];
    runstore_step_columns(cols, sizeof cols);
    snprintf(sql, sizeof sql, "SELECT %s, (SELECT count(*) FROM metrics WHERE run_id=?1)"
             " FROM metrics WHERE run_id=?1 ORDER BY step DESC LIMIT 1", cols);
    status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        runstore_step_from_row(st, m);
        *n_steps = sqlite3_column_int64(st, STEP_METRIC_N + 1);
    } else if (rc != SQLITE_DONE) {
        status = runstore_db_fail(s, rc, "reading the last step", err);
    }
    sqlite3_finalize(st);
    return status;
}

int runstore_gates_at(RunStore *s, long run, long step, GateStat **stats, int *n, char *err)
{
    *stats = NULL;
    *n = 0;
    int status = runstore_check_run(s, run, err);
    if (status) return status;
    sqlite3_stmt *st;
    status = prep(s, "SELECT step, layer, level, mean, std, hist FROM gates WHERE run_id=?1"
                  " AND step=(SELECT max(step) FROM gates WHERE run_id=?1 AND (?2 < 0 OR"
                  " step <= ?2)) ORDER BY layer, level", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, step);
    return runstore_read_gates(s, st, stats, n, err);
}
