/* runstore_changes.c — the settings a resume changed, as rows (see runstore_changes.h); the
 * migration's one-time reading of the old resume notes. */
#include "runstore_changes.h"
#include "runstore_notes.h"
#include "private/runstore_impl.h"
#include "err.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SCHEMA_CHANGES[] =
    "CREATE TABLE IF NOT EXISTS run_setting_changes(id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER NOT NULL,"
    " key TEXT NOT NULL, old TEXT, new TEXT);"
    "CREATE INDEX IF NOT EXISTS run_setting_changes_run ON run_setting_changes(run_id, id);";

static int insert_change(RunStore *s, long run, long step, const char *key, const char *old,
                         const char *new_value, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "INSERT INTO run_setting_changes(run_id, step, key, old, new)"
                      " VALUES(?,?,?,?,?)", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, step);
    bind_str(st, 3, key);
    bind_str(st, 4, old);
    bind_str(st, 5, new_value);
    return write_stmt(s, st, "recording a setting change", NULL, err);
}

/* ---- the migration: the old notes, read once --------------------------------------------- */

/* The changes of one note "resumed at step S with k=v (was w), ..." as rows (a note of
 * another shape holds none). The wording is the old binaries'; a value holding " (was "
 * or "), " was misread by it then, and is read the same way here, once. */
static int migrate_note(RunStore *s, long run, const char *text, char *err)
{
    long step;
    int used = 0, status = LM_OK;
    if (sscanf(text, "resumed at step %ld with %n", &step, &used) != 1 || used == 0)
        return LM_OK;
    for (const char *p = text + used; *p && !status;) {
        const char *eq = strchr(p, '='), *was = eq ? strstr(eq, " (was ") : NULL;
        const char *close = was ? strchr(was + 6, ')') : NULL;
        if (!close) break;
        char *key = strndup(p, (size_t)(eq - p)), *to = strndup(eq + 1, (size_t)(was - eq - 1));
        char *from = strndup(was + 6, (size_t)(close - was - 6));
        status = key && to && from ? insert_change(s, run, step, key, from, to, err)
                                   : err_set(err, LM_ENOMEM, "out of memory migrating notes");
        free(key);
        free(to);
        free(from);
        p = close + 1;
        if (!strncmp(p, ", ", 2)) p += 2;
        else break;
    }
    return status;
}

int runstore_changes_migrate(RunStore *s, char *err)
{
    int status = exec_sql(s, SCHEMA_CHANGES, "adding the setting changes table", err);
    sqlite3_stmt *st;
    if (!status)
        status = prep(s, "SELECT run_id, text FROM notes WHERE run_id IS NOT NULL AND"
                      " text LIKE 'resumed at step % with %' AND run_id IN (SELECT id FROM runs)"
                      " AND NOT EXISTS (SELECT 1 FROM run_setting_changes)"
                      " ORDER BY t, id", &st, err);
    if (status) return status;
    int rc;
    while (!status && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        char *text = col_dup(st, 1);
        status = text ? migrate_note(s, sqlite3_column_int64(st, 0), text, err)
                      : err_set(err, LM_ENOMEM, "out of memory migrating notes");
        free(text);
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading notes", err);
    sqlite3_finalize(st);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d;", RUNSTORE_CHANGES_VERSION);
    return status ? status : exec_sql(s, sql, "adding the setting changes table", err);
}

/* ---- writing and reading ----------------------------------------------------------------- */

int runstore_run_set_config(RunStore *s, long id, const char *config, long step,
                            const RunSettingChange *changes, int n, const char *note,
                            char *err)
{
    int status = exec_sql(s, "BEGIN IMMEDIATE", "recording a resumed run's settings", err);
    if (status) return status;
    sqlite3_stmt *st;
    int changed = 0;
    if (!(status = prep(s, "UPDATE runs SET config=? WHERE id=?", &st, err))) {
        bind_str(st, 1, config);
        sqlite3_bind_int64(st, 2, id);
        status = write_stmt(s, st, "recording a resumed run's settings", &changed, err);
    }
    if (!status && !changed) status = err_set(err, LM_EARG, "no run %ld", id);
    char e2[LM_ERR_LEN];   /* its writer's code follows it (unsigned: the old code fails) */
    if (!status) runstore_run_config_sign(s, id, config ? config : "", e2);
    for (int i = 0; i < n && !status; i++)
        status = insert_change(s, id, step, changes[i].key, changes[i].from, changes[i].to, err);
    if (!status && note) status = runstore_note_add(s, id, 0, note, NULL, err);
    if (!status) return tx_commit(s, "recording a resumed run's settings", err);
    tx_rollback(s);
    return status;
}

int runstore_setting_changes(RunStore *s, long run, RunSettingChange **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    long cap = 0;
    int rc, status = prep(s, "SELECT step, key, coalesce(old, 'unset'), coalesce(new, '')"
                          " FROM run_setting_changes WHERE run_id=? ORDER BY id", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(out, &cap, *n + 1, sizeof **out)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading run %ld's settings", run);
            break;
        }
        RunSettingChange *c = &(*out)[(*n)++];
        c->step = sqlite3_column_int64(st, 0);
        col_copy(st, 1, c->key, sizeof c->key);
        col_copy(st, 2, c->from, sizeof c->from);
        col_copy(st, 3, c->to, sizeof c->to);
    }
    if (!status && rc != SQLITE_DONE)
        status = runstore_db_fail(s, rc, "reading a run's setting changes", err);
    sqlite3_finalize(st);
    if (status) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return status;
}
