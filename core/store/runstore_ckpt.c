/* runstore_ckpt.c — the run store's checkpoint records: one row per step file
 * (checkpoints, keyed on run and step) and the run's best as its own record
 * (best_checkpoints, one row per run: best.safetensors and the step whose weights it
 * holds), so a step file written at the best step never replaces the best's record. Also
 * the schema step (version 6) that adds the best table and moves old stores' best rows
 * into it. Not the meaning of the records for a screen (core/run/runrecord.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "runfiles.h"
#include "err.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Version RUNSTORE_CKPT_VERSION (8: after runstore_track's 7). Before it the best file's record shared the checkpoints table's (run, step)
 * key, and the step file of the same step replaced it (issue 33): the flagged row
 * (is_best=1) still names the best step, so a run's best record takes that step (else
 * its newest best row's) and the path of its best rows. Matching the path's last
 * component in SQL is the one place a name is read outside runfiles.c: old rows only. */
static const char SCHEMA_BEST[] =
    "CREATE TABLE IF NOT EXISTS best_checkpoints(run_id INTEGER PRIMARY KEY"
    " REFERENCES runs(id) ON DELETE CASCADE, step INTEGER NOT NULL, path TEXT,"
    " val_loss REAL);"
    "INSERT OR REPLACE INTO best_checkpoints(run_id, step, path, val_loss)"
    " SELECT b.run_id,"
    " coalesce((SELECT f.step FROM checkpoints f WHERE f.run_id=b.run_id AND f.is_best=1"
    " ORDER BY f.step DESC LIMIT 1), max(b.step)), b.path,"
    " coalesce((SELECT f.val_loss FROM checkpoints f WHERE f.run_id=b.run_id AND f.is_best=1"
    " ORDER BY f.step DESC LIMIT 1), b.val_loss)"
    " FROM checkpoints b WHERE b.path LIKE '%/best.safetensors' OR b.path='best.safetensors'"
    " GROUP BY b.run_id;"
    "DELETE FROM checkpoints WHERE path LIKE '%/best.safetensors' OR path='best.safetensors';";

int runstore_ckpt_migrate(RunStore *s, char *err)
{
    char version[64];
    snprintf(version, sizeof version, "PRAGMA user_version = %d;", RUNSTORE_CKPT_VERSION);
    int status = exec_sql(s, SCHEMA_BEST, "adding the best-checkpoint records", err);
    return status ? status : exec_sql(s, version, "adding the best-checkpoint records", err);
}

/* The statements of one checkpoint record, in the caller's transaction. */
int runstore_ckpt_log_one(RunStore *s, long run, const CheckpointRecord *c, char *err)
{
    sqlite3_stmt *st;
    int tmp = 0, best = runfiles_parse(c->path, NULL, &tmp) == RUNFILE_BEST && !tmp;
    int status = LM_OK;
    if ((best || c->is_best) &&
        !(status = prep(s, "UPDATE checkpoints SET is_best=(step=?2) WHERE run_id=?1", &st,
                        err))) {
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, c->step);
        status = write_stmt(s, st, "recording a checkpoint", NULL, err);
    }
    if (status)
        return status;
    status = prep(s, best ? "INSERT OR REPLACE INTO best_checkpoints(run_id, step, path,"
                            " val_loss) VALUES(?,?,?,?)"
                          : "INSERT OR REPLACE INTO checkpoints(run_id, step, path, val_loss,"
                            " is_best) VALUES(?,?,?,?,"
                            " ?5 OR EXISTS(SELECT 1 FROM best_checkpoints b"
                            " WHERE b.run_id=?1 AND b.step=?2))", &st, err);
    if (status)
        return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, c->step);
    bind_str(st, 3, c->path);
    bind_real(st, 4, c->val_loss);
    if (!best)
        sqlite3_bind_int(st, 5, c->is_best ? 1 : 0);
    return write_stmt(s, st, "recording a checkpoint", NULL, err);
}

int runstore_log_checkpoint(RunStore *s, long run, const CheckpointRecord *c, char *err)
{
    /* records written during a fault wait in the journal, in order: while it holds any,
     * a new record lands after them (a later best never precedes an older one) */
    int status = runstore_journal_first(s, err);
    /* the buffered rows up to the checkpoint's step first: a store that lists a step-N
     * checkpoint holds the run's steps up to N (after a kill -9 a run read "last step 0"
     * beside its step-350 checkpoint, and a resume from it left those rows out for good);
     * a flush that fails keeps them buffered, as it always does */
    char ferr[LM_ERR_LEN];
    if (!status && runstore_pending(s)) runstore_flush(s, ferr);
    if (!status) status = runstore_check_present(s, err);
    if (!status) status = runstore_check_run(s, run, err);
    if (!status && !(status = exec_sql(s, "BEGIN IMMEDIATE", "recording a checkpoint", err))) {
        status = runstore_ckpt_log_one(s, run, c, err);
        if (!status) return tx_commit(s, "recording a checkpoint", err);
        tx_rollback(s);
    }
    if (status != LM_EARG && !s->damaged)   /* disk full, locked: kept for later */
        runstore_journal_checkpoint(s, run, c);
    return status;
}

int runstore_checkpoints(RunStore *s, long run, CheckpointRecord **recs, int *n, char *err)
{
    sqlite3_stmt *st;
    long cap = 0;
    *recs = NULL;
    *n = 0;
    int rc, status = prep(s, "SELECT step, path, val_loss, is_best FROM checkpoints"
                          " WHERE run_id=? ORDER BY step", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(recs, &cap, *n + 1, sizeof **recs)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading checkpoints");
            break;
        }
        CheckpointRecord *c = &(*recs)[(*n)++];
        c->step = sqlite3_column_int64(st, 0);
        col_copy(st, 1, c->path, sizeof c->path);
        c->val_loss = col_real(st, 2);
        c->is_best = sqlite3_column_int(st, 3);
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading checkpoints", err);
    sqlite3_finalize(st);
    if (status) {
        free(*recs);
        *recs = NULL;
        *n = 0;
    }
    return status;
}

int runstore_best_checkpoint(RunStore *s, long run, CheckpointRecord *best, int *found,
                             char *err)
{
    sqlite3_stmt *st;
    memset(best, 0, sizeof *best);
    best->step = -1;
    *found = 0;
    int rc, status = prep(s, "SELECT step, path, val_loss FROM best_checkpoints WHERE run_id=?",
                          &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        best->step = sqlite3_column_int64(st, 0);
        col_copy(st, 1, best->path, sizeof best->path);
        best->val_loss = col_real(st, 2);
        best->is_best = 1;
        *found = 1;
    } else if (rc != SQLITE_DONE) {
        status = runstore_db_fail(s, rc, "reading the best checkpoint", err);
    }
    sqlite3_finalize(st);
    return status;
}
