/* runstore_write.c — logging a run's rows into the store: step metrics and evaluations
 * are buffered in memory and written in one transaction by runstore_flush (autoflush by
 * row count or age, with back-off after a failure); gates and samples are written at once.
 * Not the runs themselves (creating, status, claiming, tags: runstore_run.c), not deleting
 * one (runstore_delete.c), not reading (runstore_query.c), not opening or schema
 * (runstore.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffered metrics ------------------------------------------------------------------ */

static int flush_steps(RunStore *s, char *err)
{
    sqlite3_stmt *st = s->ins_step;
    for (long i = 0; i < s->n_steps; i++) {
        const PendingStep *p = &s->steps[i];
        sqlite3_bind_int64(st, 1, p->run);
        sqlite3_bind_int64(st, 2, p->m.step);
        for (int k = 0; k < STEP_METRIC_N; k++) {   /* metrics.def's order */
            double v = step_metric_get(&p->m, k);
            if (STEP_METRICS[k].kind == STEP_INT) sqlite3_bind_int64(st, k + 3, (sqlite3_int64)v);
            else bind_real(st, k + 3, v);
        }
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return runstore_db_fail(s, rc, "writing step metrics", err);
    }
    return LM_OK;
}

static int flush_evals(RunStore *s, char *err)
{
    sqlite3_stmt *st = s->ins_eval;
    for (long i = 0; i < s->n_evals; i++) {
        const PendingEval *p = &s->evals[i];
        sqlite3_bind_int64(st, 1, p->run);
        sqlite3_bind_int64(st, 2, p->e.step);
        sqlite3_bind_text(st, 3, p->e.split, -1, SQLITE_TRANSIENT);
        bind_real(st, 4, p->e.loss);
        bind_real(st, 5, p->e.ppl);
        bind_real(st, 6, p->e.bpc);
        sqlite3_bind_int64(st, 7, p->e.tokens);
        bind_real(st, 8, p->e.elapsed);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return runstore_db_fail(s, rc, "writing evaluations", err);
    }
    return LM_OK;
}

static int update_run(RunStore *s, long run, char *err)
{
    sqlite3_bind_int64(s->upd_run, 1, run);
    sqlite3_bind_double(s->upd_run, 2, sysinfo_wall());
    int rc = sqlite3_step(s->upd_run);
    sqlite3_reset(s->upd_run);
    return rc == SQLITE_DONE ? LM_OK : runstore_db_fail(s, rc, "updating the run", err);
}

/* Updates every distinct run that has buffered rows (usually one). */
static int flush_runs(RunStore *s, char *err)
{
    long done[16];
    int n_done = 0, status = LM_OK;
    long n = s->n_steps + s->n_evals;
    for (long i = 0; i < n && !status; i++) {
        long run = i < s->n_steps ? s->steps[i].run : s->evals[i - s->n_steps].run;
        int seen = 0;
        for (int j = 0; j < n_done && !seen; j++) seen = done[j] == run;
        if (seen) continue;
        status = update_run(s, run, err);
        if (n_done < 16) done[n_done++] = run;   /* beyond 16 runs: updates repeat */
    }
    return status;
}

int runstore_flush(RunStore *s, char *err)
{
    if (s->n_steps + s->n_evals + s->journal_rows == 0) {
        s->last_flush = sysinfo_now();
        return LM_OK;
    }
    int status = runstore_check_present(s, err);
    if (!status) status = exec_sql(s, "BEGIN IMMEDIATE", "flushing metrics", err);
    if (status) {   /* rows stay buffered */
        s->failed_at = sysinfo_now();
        return status;
    }
    status = runstore_journal_insert(s, err);   /* older rows first */
    if (!status) status = flush_steps(s, err);
    if (!status) status = flush_evals(s, err);
    if (!status) status = flush_runs(s, err);
    if (!status) status = tx_commit(s, "flushing metrics", err);
    else tx_rollback(s);
    if (status == LM_EFORMAT) s->damaged = 1;   /* SQLITE_CORRUPT: stop writing */
    if (status == LM_ENOSPC || status == LM_EIO) s->full_since = 1;   /* EIO: a size limit */
    s->failed_at = status ? sysinfo_now() : 0;
    if (status) return status;
    runstore_journal_landed(s);
    if (s->full_since) {   /* space returned: fold the WAL the outage grew back into the
                            * store and truncate it, so the freed space stays free */
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        s->full_since = 0;
    }
    s->n_steps = s->n_evals = 0;
    s->next_rows = s->max_rows;
    s->last_flush = sysinfo_now();
    return LM_OK;
}

long runstore_pending(const RunStore *s) { return s->n_steps + s->n_evals; }

int runstore_check_run(RunStore *s, long run, char *err)
{
    if (run == s->known_run && run > 0) return LM_OK;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT 1 FROM runs WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) status = err_set(err, LM_EARG, "no run %ld", run);
    else if (rc != SQLITE_ROW) status = runstore_db_fail(s, rc, "looking up a run", err);
    else s->known_run = run;
    sqlite3_finalize(st);
    return status;
}

/* Flushes when enough rows wait or enough time passed. After a failure the next retry
 * waits until the backlog doubles (or max_seconds pass), so a locked store does not stall
 * every step for the busy timeout and a long outage costs linear, not quadratic, work. */
static int maybe_flush(RunStore *s, char *err)
{
    long pending = runstore_pending(s);
    if (pending < s->next_rows && sysinfo_now() - s->last_flush < s->max_seconds) return LM_OK;
    int status = runstore_flush(s, err);
    if (status) {
        s->next_rows = pending + (pending > s->max_rows ? pending : s->max_rows);
        s->last_flush = sysinfo_now();
        if (pending >= s->max_pending && runstore_journal_spill(s, NULL) == LM_OK)
            s->next_rows = s->max_rows;   /* memory freed: retry at the usual pace */
    }
    return status;
}

/* Grows the array whose pointer lives at pp (any element type; the pointer is copied
 * with memcpy to stay clear of aliasing rules) to hold need elements. 0 or -1. */
int runstore_grow(void *pp, long *cap, long need, size_t size)
{
    if (need <= *cap) return 0;
    long c = *cap ? *cap * 2 : 256;
    while (c < need) c *= 2;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, (size_t)c * size);
    if (!q) return -1;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}

int runstore_log_step(RunStore *s, long run, const StepMetric *m, char *err)
{
    int status = runstore_check_run(s, run, err);
    if (status) return status;
    if (runstore_grow(&s->steps, &s->cap_steps, s->n_steps + 1, sizeof *s->steps))
        return err_set(err, LM_ENOMEM, "out of memory buffering step metrics");
    s->steps[s->n_steps].run = run;
    s->steps[s->n_steps++].m = *m;
    return maybe_flush(s, err);
}

int runstore_log_eval(RunStore *s, long run, const EvalMetric *e, char *err)
{
    int status = runstore_check_run(s, run, err);
    if (status) return status;
    if (runstore_grow(&s->evals, &s->cap_evals, s->n_evals + 1, sizeof *s->evals))
        return err_set(err, LM_ENOMEM, "out of memory buffering evaluations");
    s->evals[s->n_evals].run = run;
    s->evals[s->n_evals].e = *e;
    s->evals[s->n_evals++].e.split[sizeof e->split - 1] = 0;
    return maybe_flush(s, err);
}

/* Forgets buffered rows of a deleted run (they could never be written). */
void runstore_drop_pending(RunStore *s, long run)
{
    long j = 0;
    for (long i = 0; i < s->n_steps; i++)
        if (s->steps[i].run != run) s->steps[j++] = s->steps[i];
    s->n_steps = j;
    j = 0;
    for (long i = 0; i < s->n_evals; i++)
        if (s->evals[i].run != run) s->evals[j++] = s->evals[i];
    s->n_evals = j;
    if (s->known_run == run) s->known_run = 0;
}

/* ---- written at once ------------------------------------------------------------------- */

int runstore_log_gates(RunStore *s, long run, const GateStat *g, int n, char *err)
{
    sqlite3_stmt *st;
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_check_run(s, run, err);
    if (status || (status = prep(s, "INSERT OR REPLACE INTO gates(run_id, step, layer, level,"
                                 " mean, std, hist) VALUES(?,?,?,?,?,?,?)", &st, err)))
        return status;
    if ((status = exec_sql(s, "BEGIN IMMEDIATE", "writing gate statistics", err))) {
        sqlite3_finalize(st);
        return status;
    }
    for (int i = 0; i < n && !status; i++) {
        char hist[GATE_HIST_BINS * 12 + 1];
        size_t k = 0;
        for (int b = 0; b < GATE_HIST_BINS; b++)
            k += (size_t)snprintf(hist + k, sizeof hist - k, "%s%d", b ? "," : "", g[i].hist[b]);
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, g[i].step);
        sqlite3_bind_int(st, 3, g[i].layer);
        sqlite3_bind_int(st, 4, g[i].level);
        bind_real(st, 5, g[i].mean);
        bind_real(st, 6, g[i].std);
        bind_str(st, 7, hist);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "writing gate statistics", err);
    }
    sqlite3_finalize(st);
    if (!status) return tx_commit(s, "writing gate statistics", err);
    tx_rollback(s);
    return status;
}

int runstore_log_sample(RunStore *s, long run, long step, const char *prompt,
                        const char *settings, const char *text, char *err)
{
    sqlite3_stmt *st;
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_check_run(s, run, err);
    if (status || (status = prep(s, "INSERT INTO samples(run_id, step, prompt, settings, text,"
                                 " created) VALUES(?,?,?,?,?,?)", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, step);
    bind_str(st, 3, prompt);
    bind_str(st, 4, settings);
    bind_str(st, 5, text);
    sqlite3_bind_double(st, 6, sysinfo_wall());
    return write_stmt(s, st, "writing a sample", NULL, err);
}
