/* runstore_control.c — control rows and lineage in the run store (see runstore_control.h):
 * the schema step that adds them, requests, the owner's answers, heartbeats of paused
 * runs, and a fork's parent. Every value is a bound parameter; a row with a verb this
 * build does not know is data like any other (the owner answers it as ignored). Not the
 * acting on a request (recorder.c) nor the waiting for its answer (cmd_train.c). */
#include "runstore_control.h"
#include "private/runstore_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const VERBS[RUNCTL_N_VERBS] = {"pause", "resume", "stop"};

static const char SCHEMA_CONTROL[] =
    "CREATE TABLE IF NOT EXISTS run_control(id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, verb TEXT NOT NULL,"
    " requested_at REAL NOT NULL, requester_pid INTEGER, requester_host TEXT,"
    " acknowledged_at REAL, reply TEXT);"
    "CREATE INDEX IF NOT EXISTS run_control_pending ON run_control(run_id, acknowledged_at);";

int runstore_control_verb(const char *text)
{
    for (int i = 0; text && i < RUNCTL_N_VERBS; i++)
        if (!strcmp(text, VERBS[i]))
            return i;
    return -1;
}

/* 1 when table has column col, 0 when not; -1 on failure (status in *status). */
static int has_column(RunStore *s, const char *table, const char *col, int *status, char *err)
{
    sqlite3_stmt *st;
    if ((*status = prep(s, "SELECT 1 FROM pragma_table_info(?1) WHERE name=?2", &st, err)))
        return -1;
    bind_str(st, 1, table);
    bind_str(st, 2, col);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        *status = runstore_db_fail(s, rc, "reading the schema", err);
    sqlite3_finalize(st);
    return *status ? -1 : found;
}

int runstore_control_migrate(RunStore *s, char *err)
{
    int status = exec_sql(s, SCHEMA_CONTROL, "adding the control table", err);
    if (status) return status;
    int have = has_column(s, "runs", "parent_run", &status, err);
    if (have == 0)
        status = exec_sql(s, "ALTER TABLE runs ADD COLUMN parent_run INTEGER"
                          " REFERENCES runs(id) ON DELETE SET NULL;"
                          "ALTER TABLE runs ADD COLUMN parent_step INTEGER;",
                          "adding run lineage", err);
    if (!status)
        status = exec_sql(s, "CREATE INDEX IF NOT EXISTS runs_parent ON runs(parent_run);"
                          "PRAGMA user_version = 4;", "adding run lineage", err);
    return status;
}

int runstore_control_request(RunStore *s, long run, const char *verb, long *id, char *err)
{
    if (runstore_control_verb(verb) < 0)
        return err_set(err, LM_EARG, "unknown control '%s' (pause, resume or stop)",
                       verb ? verb : "");
    int status = runstore_check_run(s, run, err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "INSERT INTO run_control(run_id, verb, requested_at,"
                                 " requester_pid, requester_host) VALUES(?,?,?,?,?)", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    bind_str(st, 2, verb);
    sqlite3_bind_double(st, 3, sysinfo_wall());
    sqlite3_bind_int64(st, 4, (long)getpid());
    bind_str(st, 5, s->host);
    status = write_stmt(s, st, "requesting a control", NULL, err);
    if (!status) *id = (long)sqlite3_last_insert_rowid(s->db);
    return status;
}

#define CTL_COLS "id, run_id, verb, requested_at, coalesce(acknowledged_at, 0)," \
    " coalesce(requester_pid, 0), requester_host, reply"

static void control_fill(sqlite3_stmt *st, RunControl *c)
{
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(st, 0);
    c->run_id = sqlite3_column_int64(st, 1);
    col_copy(st, 2, c->verb, sizeof c->verb);
    c->requested_at = sqlite3_column_double(st, 3);
    c->acknowledged_at = sqlite3_column_double(st, 4);
    c->requester_pid = sqlite3_column_int64(st, 5);
    col_copy(st, 6, c->requester_host, sizeof c->requester_host);
    col_copy(st, 7, c->reply, sizeof c->reply);
}

int runstore_control_pending(RunStore *s, long run, RunControl *out, int max, int *n,
                             char *err)
{
    *n = 0;
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT " CTL_COLS " FROM run_control WHERE run_id=?1 AND"
                          " acknowledged_at IS NULL ORDER BY id LIMIT ?2", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, max);
    while (*n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
        control_fill(st, &out[(*n)++]);
    if (*n < max && rc != SQLITE_DONE)
        status = runstore_db_fail(s, rc, "reading control requests", err);
    sqlite3_finalize(st);
    return status;
}

int runstore_control_answer(RunStore *s, long id, const char *reply, char *err)
{
    RunControl c;
    int status = runstore_control_get(s, id, &c, err);
    sqlite3_stmt *st;
    if (status || c.acknowledged_at > 0) return status;
    if ((status = prep(s, "UPDATE run_control SET acknowledged_at=?1, reply=substr(?2, 1, 255)"
                       " WHERE id=?3 AND acknowledged_at IS NULL", &st, err)))
        return status;
    sqlite3_bind_double(st, 1, sysinfo_wall());
    bind_str(st, 2, reply ? reply : "");
    sqlite3_bind_int64(st, 3, id);
    return write_stmt(s, st, "answering a control request", NULL, err);
}

int runstore_control_get(RunStore *s, long id, RunControl *out, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT " CTL_COLS " FROM run_control WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW)
        control_fill(st, out);
    else
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no control request %ld", id)
                                   : runstore_db_fail(s, rc, "reading a control request", err);
    sqlite3_finalize(st);
    return status;
}

int runstore_control_heartbeat(RunStore *s, long run, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "UPDATE runs SET heartbeat=?1 WHERE id=?2", &st, err);
    if (status) return status;
    sqlite3_bind_double(st, 1, sysinfo_wall());
    sqlite3_bind_int64(st, 2, run);
    return write_stmt(s, st, "refreshing a heartbeat", NULL, err);
}

int runstore_set_parent(RunStore *s, long run, long parent, long parent_step, char *err)
{
    int status = runstore_check_run(s, parent, err);
    if (!status) status = runstore_check_run(s, run, err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "UPDATE runs SET parent_run=?1, parent_step=?2 WHERE id=?3",
                                 &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, parent);
    sqlite3_bind_int64(st, 2, parent_step);
    sqlite3_bind_int64(st, 3, run);
    return write_stmt(s, st, "recording a fork's parent", NULL, err);
}

/* ---- lineage ---------------------------------------------------------------------------- */

int runstore_series_lineage(RunStore *s, long run, const char *metric, SeriesPoint **pts,
                            int *n, char *err)
{
    long chain[RUNSTORE_LINEAGE_MAX], cut[RUNSTORE_LINEAGE_MAX];  /* run k: steps <= cut[k] */
    int depth = 0, status = LM_OK;
    *pts = NULL;
    *n = 0;
    for (long id = run, upto = -1; id > 0 && depth < RUNSTORE_LINEAGE_MAX && !status;) {
        RunRow r;
        if ((status = runstore_get(s, id, &r, err))) {
            if (depth > 0) status = LM_OK;   /* a deleted ancestor: the lineage ends there */
            break;
        }
        chain[depth] = id;
        cut[depth++] = upto;
        upto = r.parent_step;
        id = r.parent_run;
        for (int k = 0; k < depth; k++)
            if (chain[k] == id) id = 0;        /* a cycle (hand-edited store): stop */
        runstore_row_free(&r);
    }
    long from = -1;   /* the oldest first: each part takes its steps after the last cut */
    for (int k = depth - 1; k >= 0 && !status; k--) {
        SeriesPoint *p = NULL;
        int m = 0;
        if ((status = runstore_series(s, chain[k], metric, &p, &m, err))) break;
        SeriesPoint *grown = realloc(*pts, (size_t)(*n + m + 1) * sizeof *grown);
        if (!grown) {
            free(p);
            status = err_set(err, LM_ENOMEM, "out of memory reading a lineage");
            break;
        }
        *pts = grown;
        for (int i = 0; i < m; i++)
            if (p[i].step > from && (cut[k] < 0 || p[i].step <= cut[k]))
                (*pts)[(*n)++] = p[i];
        from = cut[k];
        free(p);
    }
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}
