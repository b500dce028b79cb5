/* runstore_group.c — the run store's seed groups and settings (see runstore_group.h):
 * the schema step that adds them (RUNSTORE_GROUP_VERSION), filing runs into groups, reading groups back, and the
 * key/value settings. Not statistics over a group (core/sweep/sweep_analysis.c) and not
 * launching the seeded runs (the commands build a sweep with seeds=N). */
#include "runstore_group.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "textcheck.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A seeded sweep's trial (params holding a `seed=` word) joins the group named after the
 * sweep, plus ":" and its other swept values when it has some, as soon as the runner
 * records its run. A run already in a group keeps it (NOT EXISTS, not OR IGNORE: the
 * runner's INSERT OR REPLACE would override a conflict clause inside the trigger). */
static const char SCHEMA_GROUPS[] =
    "CREATE TABLE IF NOT EXISTS run_groups(run_id INTEGER PRIMARY KEY"
    " REFERENCES runs(id) ON DELETE CASCADE, name TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS run_groups_name ON run_groups(name);"
    "CREATE TABLE IF NOT EXISTS store_settings(key TEXT PRIMARY KEY, value TEXT)"
    " WITHOUT ROWID;"
    "CREATE TRIGGER IF NOT EXISTS sweep_trial_group AFTER INSERT ON sweep_trials"
    " WHEN NEW.run_id > 0 AND (NEW.params LIKE 'seed=%' OR NEW.params LIKE '% seed=%')"
    " BEGIN INSERT INTO run_groups(run_id, name) SELECT NEW.run_id,"
    " coalesce(nullif(sw.name, ''), 'sweep' || sw.id) ||"
    " CASE WHEN NEW.params LIKE 'seed=%' THEN ''"
    " ELSE ':' || substr(NEW.params, 1, instr(NEW.params, ' seed=') - 1) END"
    " FROM sweeps sw WHERE sw.id = NEW.sweep_id"
    " AND NOT EXISTS (SELECT 1 FROM run_groups WHERE run_id = NEW.run_id); END;";

int runstore_group_migrate(RunStore *s, char *err)
{
    char sql[sizeof SCHEMA_GROUPS + 64];
    snprintf(sql, sizeof sql, "%sPRAGMA user_version = %d;", SCHEMA_GROUPS,
             RUNSTORE_GROUP_VERSION);
    return exec_sql(s, sql, "adding the group tables", err);
}

int runstore_group_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n >= 1 && n < RUNSTORE_GROUP_LEN && !strpbrk(name, " \t\n\r,");
}

static int set_one(RunStore *s, long id, const char *name, char *err)
{
    int status = runstore_check_run(s, id, err);
    if (status) return err_set(err, LM_EARG, "no run %ld", id);
    sqlite3_stmt *st;
    status = prep(s, name ? "INSERT OR REPLACE INTO run_groups(run_id, name) VALUES(?,?)"
                          : "DELETE FROM run_groups WHERE run_id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    if (name) bind_str(st, 2, name);
    return write_stmt(s, st, "setting a run's group", NULL, err);
}

int runstore_group_set(RunStore *s, const long *ids, int n, const char *name, char *err)
{
    if (name && !*name) name = NULL;
    if (name && !runstore_group_name_ok(name))
        return err_set(err, LM_EARG, "group name '%s': give 1 to %d characters without spaces"
                       " or commas", name, RUNSTORE_GROUP_LEN - 1);
    if (name && textcheck_value("group name", name, 0, err))   /* valid UTF-8, no controls */
        return LM_EARG;
    int status = exec_sql(s, "BEGIN IMMEDIATE", "setting groups", err);
    for (int i = 0; i < n && !status; i++) status = set_one(s, ids[i], name, err);
    if (!status) return tx_commit(s, "setting groups", err);
    tx_rollback(s);
    return status;
}

int runstore_group_of(RunStore *s, long id, char *name, size_t cap, char *err)
{
    char (*one)[RUNSTORE_GROUP_LEN] = malloc(RUNSTORE_GROUP_LEN);
    if (!one) return err_set(err, LM_ENOMEM, "out of memory");
    int status = runstore_groups_of(s, &id, 1, one, err);
    snprintf(name, cap, "%s", status ? "" : one[0]);
    free(one);
    return status;
}

typedef struct { long id; int i; } IdAt;

static int by_id(const void *a, const void *b)
{
    long x = ((const IdAt *)a)->id, y = ((const IdAt *)b)->id;
    return x < y ? -1 : x > y;
}

int runstore_groups_of(RunStore *s, const long *ids, int n, char (*names)[RUNSTORE_GROUP_LEN],
                       char *err)
{
    for (int i = 0; i < n; i++) names[i][0] = 0;
    if (n <= 0) return LM_OK;
    IdAt *at = malloc((size_t)n * sizeof *at);   /* ids sorted, to find each row's run */
    if (!at) return err_set(err, LM_ENOMEM, "out of memory reading groups");
    for (int i = 0; i < n; i++) at[i] = (IdAt){ids[i], i};
    qsort(at, (size_t)n, sizeof *at, by_id);
    sqlite3_stmt *st;
    int rc, status = prep(s, n == 1 ? "SELECT run_id, name FROM run_groups WHERE run_id=?"
                                    : "SELECT run_id, name FROM run_groups", &st, err);
    if (status) return free(at), status;
    if (n == 1) sqlite3_bind_int64(st, 1, ids[0]);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        IdAt key = {sqlite3_column_int64(st, 0), 0};
        const IdAt *hit = bsearch(&key, at, (size_t)n, sizeof *at, by_id);
        for (; hit && hit > at && hit[-1].id == key.id; hit--) {}
        for (; hit && hit < at + n && hit->id == key.id; hit++)
            col_copy(st, 1, names[hit->i], RUNSTORE_GROUP_LEN);
    }
    if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading groups", err);
    sqlite3_finalize(st);
    free(at);
    return status;
}

int runstore_group_members(RunStore *s, const char *name, long **ids, int *n, char *err)
{
    *ids = NULL, *n = 0;
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT run_id FROM run_groups WHERE name=? ORDER BY run_id", &st,
                          err);
    if (status) return status;
    bind_str(st, 1, name);
    long cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long have = *n;
        if (runstore_grow(ids, &cap, have + 1, sizeof **ids)) {
            rc = SQLITE_NOMEM;
            break;
        }
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading a group", err);
    sqlite3_finalize(st);
    if (!status && *n == 0)
        status = err_set(err, LM_EARG, "no group '%s' (`runs group_by=group` lists the groups)",
                         name);
    if (status) free(*ids), *ids = NULL, *n = 0;
    return status;
}

int runstore_groups(RunStore *s, GroupRow **rows, int *n, char *err)
{
    *rows = NULL, *n = 0;
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT name, count(*) FROM run_groups GROUP BY name ORDER BY name",
                          &st, err);
    if (status) return status;
    long cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(rows, &cap, *n + 1, sizeof **rows)) {
            rc = SQLITE_NOMEM;
            break;
        }
        col_copy(st, 0, (*rows)[*n].name, RUNSTORE_GROUP_LEN);
        (*rows)[(*n)++].n_runs = sqlite3_column_int(st, 1);
    }
    if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "listing groups", err);
    sqlite3_finalize(st);
    if (status) free(*rows), *rows = NULL, *n = 0;
    return status;
}

int runstore_setting_get(RunStore *s, const char *key, char *val, size_t cap, int *found,
                         char *err)
{
    *found = 0;
    if (cap) val[0] = 0;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT value FROM store_settings WHERE key=?", &st, err);
    if (status) return status;
    bind_str(st, 1, key);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *found = 1, col_copy(st, 0, val, cap);
    else if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading a setting", err);
    sqlite3_finalize(st);
    return status;
}

int runstore_setting_set(RunStore *s, const char *key, const char *value, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, value ? "INSERT OR REPLACE INTO store_settings(key, value) VALUES(?,?)"
                               : "DELETE FROM store_settings WHERE key=?", &st, err);
    if (status) return status;
    bind_str(st, 1, key);
    if (value) bind_str(st, 2, value);
    return write_stmt(s, st, "saving a setting", NULL, err);
}
