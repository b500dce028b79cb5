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
    m->epoch = col_real(st, 1);
    m->tokens = sqlite3_column_int64(st, 2);
    m->loss = (float)col_real(st, 3);
    m->lr = (float)col_real(st, 4);
    m->grad_norm = (float)col_real(st, 5);
    m->tokens_per_s = (float)col_real(st, 6);
    m->elapsed = col_real(st, 7);
}

int runstore_last_step(RunStore *s, long run, StepMetric *m, long *n_steps, char *err)
{
    memset(m, 0, sizeof *m);
    *n_steps = 0;
    int status = runstore_check_present(s, err);   /* a followed store that vanished */
    if (!status) status = runstore_check_run(s, run, err);
    if (status) return status;
    sqlite3_stmt *st;
    status = prep(s, "SELECT step, epoch, tokens, loss, lr, grad_norm, tokens_per_s, elapsed,"
                  " (SELECT count(*) FROM metrics WHERE run_id=?1) FROM metrics"
                  " WHERE run_id=?1 ORDER BY step DESC LIMIT 1", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        runstore_step_from_row(st, m);
        *n_steps = sqlite3_column_int64(st, 8);
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
