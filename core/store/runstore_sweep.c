/* runstore_sweep.c — the sweep tables of the run store: creating a sweep, its status, its
 * trials (which run, which parameters), reading a sweep and its trials with their runs'
 * results. Not the sweep logic (core/sweep.c, core/sweep_runner.c) and not the runs
 * themselves (runstore_run.c). */
#include "runstore.h"
#include "runstore_row.h"
#include "private/runstore_impl.h"
#include "private/runlock.h"
#include "err.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* ---- sweeps ------------------------------------------------------------------------------ */

static const char *SWEEP_STATUSES[] = {"running", "paused", "finished", "stopped", "failed",
                                       "interrupted", NULL};

int runstore_sweep_create(RunStore *s, const char *name, const char *spec,
                          const char *strategy, long *id, char *err)
{
    return runstore_sweep_create_trials(s, name, spec, strategy, NULL, NULL, 0, id, err);
}

int runstore_sweep_create_trials(RunStore *s, const char *name, const char *spec,
                                 const char *strategy, const int *trial,
                                 const char *const *params, int n, long *id, char *err)
{
    sqlite3_stmt *st;
    double created = sysinfo_wall();
    /* the row, its writer's code and its pending trials in one transaction: never a sweep
     * without its code, and no reader sees it with fewer trials than it has */
    int status = exec_sql(s, "BEGIN IMMEDIATE", "creating a sweep", err);
    if (!status) status = prep(s, "INSERT INTO sweeps(name, spec, strategy, status, created)"
                               " VALUES(?,?,?,'running',?)", &st, err);
    if (status) {
        tx_rollback(s);
        return status;
    }
    bind_str(st, 1, name);
    bind_str(st, 2, spec);
    bind_str(st, 3, strategy);
    sqlite3_bind_double(st, 4, created);
    status = write_stmt(s, st, "creating a sweep", NULL, err);
    if (!status) *id = (long)sqlite3_last_insert_rowid(s->db);
    if (!status) status = runstore_sweep_sign(s, *id, spec ? spec : "", created, err);
    for (int i = 0; !status && i < n; i++)
        status = runstore_sweep_trial_set(s, *id, trial[i], 0, params[i], "pending", err);
    if (!status) return tx_commit(s, "creating a sweep", err);
    tx_rollback(s);
    return status;
}

int runstore_sweep_set_status(RunStore *s, long sweep, const char *status_text, char *err)
{
    int k = -1;
    for (int i = 0; status_text && SWEEP_STATUSES[i] && k < 0; i++)
        if (!strcmp(status_text, SWEEP_STATUSES[i])) k = i;
    if (k < 0)
        return err_set(err, LM_EARG, "unknown sweep status '%s' (running, paused, finished,"
                       " stopped, failed, interrupted)", status_text ? status_text : "");
    sqlite3_stmt *st;
    int changes = 0, status = prep(s, "UPDATE sweeps SET status=?, ended=? WHERE id=?", &st,
                                   err);
    if (status) return status;
    bind_str(st, 1, status_text);
    if (k >= 2) sqlite3_bind_double(st, 2, sysinfo_wall());
    sqlite3_bind_int64(st, 3, sweep);
    status = write_stmt(s, st, "setting the sweep status", &changes, err);
    return !status && !changes ? err_set(err, LM_EARG, "no sweep %ld", sweep) : status;
}

int runstore_sweep_trial_set(RunStore *s, long sweep, int trial, long run_id,
                             const char *params, const char *status_text, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "INSERT OR REPLACE INTO sweep_trials(sweep_id, trial, run_id, params,"
                      " status) VALUES(?,?,?,?,?)", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, sweep);
    sqlite3_bind_int(st, 2, trial);
    if (run_id > 0) sqlite3_bind_int64(st, 3, run_id);
    bind_str(st, 4, params);
    bind_str(st, 5, status_text);
    status = write_stmt(s, st, "recording a sweep trial", NULL, err);
    if (status == LM_EDB && strstr(err ? err : "", "FOREIGN KEY"))
        status = err_set(err, LM_EARG, "no sweep %ld or no run %ld", sweep, run_id);
    return status;
}

int runstore_sweep_trial_started(RunStore *s, long sweep, int trial, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "UPDATE sweep_trials SET status='running' WHERE sweep_id=? AND"
                      " trial=? AND status='pending'", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, sweep);
    sqlite3_bind_int(st, 2, trial);
    return write_stmt(s, st, "recording a sweep trial", NULL, err);
}

int runstore_sweep_get(RunStore *s, long sweep, SweepRow *row, char *err)
{
    sqlite3_stmt *st;
    memset(row, 0, sizeof *row);
    int rc, status = prep(s, "SELECT id, name, strategy, status, created, ended, spec, mac"
                          " FROM sweeps WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, sweep);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        row->id = sqlite3_column_int64(st, 0);
        col_copy(st, 1, row->name, sizeof row->name);
        col_copy(st, 2, row->strategy, sizeof row->strategy);
        col_copy(st, 3, row->status, sizeof row->status);
        row->created = sqlite3_column_double(st, 4);
        row->ended = sqlite3_column_double(st, 5);
        col_copy(st, 7, row->mac, sizeof row->mac);
        if (!(row->spec = col_dup(st, 6)))
            status = err_set(err, LM_ENOMEM, "out of memory");
    } else {
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no sweep %ld", sweep)
                                   : runstore_db_fail(s, rc, "reading a sweep", err);
    }
    sqlite3_finalize(st);
    return status;
}

int runstore_sweep_trials(RunStore *s, long sweep, SweepTrialRow **rows, int *n, char *err)
{
    sqlite3_stmt *st;
    long cap = 0;
    *rows = NULL;
    *n = 0;
    int rc, status = prep(s, "SELECT t.trial, t.run_id, t.params, t.status, r.status,"
                          " r.best_val, r.final_val, r.last_step,"
                          " coalesce(r.reason, '') LIKE 'stopped early%',"
                          " coalesce(r.reason, ''), coalesce(r.config, '') FROM sweep_trials t"
                          " LEFT JOIN runs r ON r.id = t.run_id WHERE t.sweep_id=?"
                          " ORDER BY t.trial", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, sweep);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(rows, &cap, *n + 1, sizeof **rows)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading sweep trials");
            break;
        }
        SweepTrialRow *t = &(*rows)[(*n)++];
        t->trial = sqlite3_column_int(st, 0);
        t->run_id = sqlite3_column_int64(st, 1);
        col_copy(st, 2, t->params, sizeof t->params);
        col_copy(st, 3, t->status, sizeof t->status);
        col_copy(st, 4, t->run_status, sizeof t->run_status);
        t->best_val = col_real(st, 5);
        t->final_val = col_real(st, 6);
        t->last_step = sqlite3_column_int64(st, 7);
        t->stopped_early = sqlite3_column_int(st, 8);
        RunRow r = {.best_val = t->best_val, .final_val = t->final_val,   /* what it reads */
                    .last_step = t->last_step,
                    .config = (char *)sqlite3_column_text(st, 10)};
        snprintf(r.status, sizeof r.status, "%s", t->run_status);
        col_copy(st, 9, r.reason, sizeof r.reason);
        t->best_estimated = t->run_id > 0 && r.config && runstore_best_estimated(&r);
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading sweep trials", err);
    sqlite3_finalize(st);
    if (status) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

int runstore_sweep_lock(RunStore *s, long sweep, char *err)
{
    char e2[LM_ERR_LEN];
    if (runlock_acquire(s->real_path, RUNLOCK_SWEEP_BASE + sweep, e2) == LM_OK)
        return LM_OK;
    long pid = 0;
    if (runlock_held(s->real_path, RUNLOCK_SWEEP_BASE + sweep, &pid) != 1)
        return err_set(err, LM_EIO, "%s", e2);
    return err_set(err, LM_ESTATE, "sweep %ld is being run by process %ld (it holds the "
                   "sweep's lock): a second runner would fail its trials and the sweep under "
                   "it; `sweep status %ld` follows it; nothing was changed", sweep, pid, sweep);
}

void runstore_sweep_unlock(RunStore *s, long sweep)
{
    runlock_release(s->real_path, RUNLOCK_SWEEP_BASE + sweep);
}
