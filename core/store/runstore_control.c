/* runstore_control.c — control rows and lineage in the run store (see runstore_control.h):
 * the schema step that adds them, requests, the owner's answers, heartbeats of paused
 * runs, and a fork's parent. Every value is a bound parameter; a row with a verb this
 * build does not know is data like any other (the owner answers it as ignored). Not the
 * acting on a request (recorder.c) nor the waiting for its answer (cmd_train.c). */
#include "runstore_control.h"
#include "sysinfo.h"
#include "private/runstore_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const VERBS[RUNCTL_N_VERBS] = {"pause", "resume", "stop", "checkpoint"};

static const char SCHEMA_CONTROL[] =
    "CREATE TABLE IF NOT EXISTS run_control(id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, verb TEXT NOT NULL,"
    " requested_at REAL NOT NULL, requester_pid INTEGER, requester_host TEXT,"
    " acknowledged_at REAL, reply TEXT);"
    "CREATE INDEX IF NOT EXISTS run_control_pending ON run_control(run_id, acknowledged_at);";

/* The verb named by text (pause|resume|stop), or -1. runstore_control_verb_n compares
 * len bytes exactly: "stop" followed by a NUL and more is no verb. */
static int runstore_control_verb_n(const void *bytes, long len)
{
    for (int i = 0; bytes && i < RUNCTL_N_VERBS; i++)
        if ((size_t)len == strlen(VERBS[i]) && !memcmp(bytes, VERBS[i], (size_t)len))
            return i;
    return -1;
}

static int runstore_control_verb(const char *text)
{
    return text ? runstore_control_verb_n(text, (long)strlen(text)) : -1;
}

/* bytes as printable text: \xNN for anything outside printable ASCII, "..." past cap. */
static void shown_bytes(char *dst, size_t cap, const unsigned char *b, long len)
{
    size_t k = 0;
    for (long i = 0; b && i < len; i++) {
        int plain = b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\';
        if (k + (plain ? 1 : 4) + 4 > cap) {
            snprintf(dst + k, cap - k, "...");
            return;
        }
        k += (size_t)snprintf(dst + k, cap - k, plain ? "%c" : "\\x%02x", b[i]);
    }
    dst[k] = 0;
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

int runstore_control_migrate_owner(RunStore *s, char *err)
{
    int status = LM_OK;
    static const struct { const char *table, *col, *sql; } ADD[] = {
        {"runs", "owner_since", "ALTER TABLE runs ADD COLUMN owner_since REAL;"
                                "UPDATE runs SET owner_since=coalesce(started, created, 0);"},
        {"run_control", "owner_pid", "ALTER TABLE run_control ADD COLUMN owner_pid INTEGER;"},
        {"run_control", "owner_host", "ALTER TABLE run_control ADD COLUMN owner_host TEXT;"},
        {"run_control", "owner_since", "ALTER TABLE run_control ADD COLUMN owner_since REAL;"},
    };
    for (size_t i = 0; i < sizeof ADD / sizeof ADD[0] && !status; i++) {
        int have = has_column(s, ADD[i].table, ADD[i].col, &status, err);
        if (have == 0) status = exec_sql(s, ADD[i].sql, "addressing control requests", err);
    }
    /* a request from before is addressed to nobody: visibly expired, never acted on */
    if (!status)
        status = exec_sql(s, "UPDATE run_control SET acknowledged_at=(julianday('now') -"
                          " 2440587.5) * 86400.0, reply='expired: made before requests were"
                          " addressed to one owner (store upgraded); ask again'"
                          " WHERE acknowledged_at IS NULL AND owner_pid IS NULL;"
                          "CREATE INDEX IF NOT EXISTS run_control_owner ON run_control(run_id,"
                          " owner_pid, owner_host, owner_since, id) WHERE acknowledged_at IS NULL;"
                          "PRAGMA user_version = 9;", "addressing control requests", err);
    return status;
}

int runstore_control_request(RunStore *s, long run, const char *verb, long *id, char *err)
{
    if (runstore_control_verb(verb) < 0)
        return err_set(err, LM_EARG, "unknown control '%s' (pause, resume, stop or checkpoint)",
                       verb ? verb : "");
    int status = runstore_check_run(s, run, err);
    sqlite3_stmt *st;
    /* addressed to the run's owner now: the process (pid, host) and when it took the run */
    if (status || (status = prep(s, "INSERT INTO run_control(run_id, verb, requested_at,"
                                 " requester_pid, requester_host, owner_pid, owner_host,"
                                 " owner_since) SELECT ?1, ?2, ?3, ?4, ?5, pid, host,"
                                 " owner_since FROM runs WHERE id=?1", &st, err)))
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

int runstore_run_owner(RunStore *s, long run, RunOwner *out, char *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT coalesce(pid, 0), host, coalesce(owner_since, 0) FROM runs"
                          " WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        out->pid = sqlite3_column_int64(st, 0);
        col_copy(st, 1, out->host, sizeof out->host);
        out->since = sqlite3_column_double(st, 2);
    } else {
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no run %ld", run)
                                   : runstore_db_fail(s, rc, "reading a run's owner", err);
    }
    sqlite3_finalize(st);
    return status;
}

#define CTL_COLS "id, run_id, verb, requested_at, coalesce(acknowledged_at, 0)," \
    " coalesce(requester_pid, 0), requester_host, reply, coalesce(owner_pid, 0), owner_host," \
    " coalesce(owner_since, 0)"

static void control_fill(sqlite3_stmt *st, RunControl *c)
{
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(st, 0);
    c->run_id = sqlite3_column_int64(st, 1);
    /* the verb as stored: text compared by length and bytes (a NUL inside is no end), a
     * blob or a number is no verb */
    int is_text = sqlite3_column_type(st, 2) == SQLITE_TEXT;
    const unsigned char *v = sqlite3_column_text(st, 2);
    long len = sqlite3_column_bytes(st, 2);
    c->verb_id = is_text ? runstore_control_verb_n(v, len) : -1;
    shown_bytes(c->verb, sizeof c->verb, v, len);
    c->requested_at = sqlite3_column_double(st, 3);
    c->acknowledged_at = sqlite3_column_double(st, 4);
    c->requester_pid = sqlite3_column_int64(st, 5);
    col_copy(st, 6, c->requester_host, sizeof c->requester_host);
    col_copy(st, 7, c->reply, sizeof c->reply);
    c->owner.pid = sqlite3_column_int64(st, 8);
    col_copy(st, 9, c->owner.host, sizeof c->owner.host);
    c->owner.since = sqlite3_column_double(st, 10);
}

/* The unanswered rows addressed to owner me of run (bound as ?1..?4 by bind_owner); the
 * partial index run_control_owner holds exactly these columns. */
#define CTL_MINE "run_id=?1 AND owner_pid=?2 AND owner_host=?3 AND owner_since=?4" \
    " AND acknowledged_at IS NULL"

static void bind_owner(sqlite3_stmt *st, long run, const RunOwner *me)
{
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, me->pid);
    bind_str(st, 3, me->host);
    sqlite3_bind_double(st, 4, me->since);
}

int runstore_control_take(RunStore *s, long run, const RunOwner *me, RunControl *out,
                          int *found, char *err)
{
    *found = 0;
    if (me->pid <= 0) return LM_OK;   /* no owner: nothing is addressed to it */
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT " CTL_COLS " FROM run_control WHERE " CTL_MINE
                          " ORDER BY id DESC LIMIT 1", &st, err);
    if (status) return status;
    bind_owner(st, run, me);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        control_fill(st, out);
        *found = 1;
    } else if (rc != SQLITE_DONE) {
        status = runstore_db_fail(s, rc, "reading control requests", err);
    }
    sqlite3_finalize(st);
    if (status || !*found) return status;
    /* older requests to the same owner: the newest one decides */
    if ((status = prep(s, "UPDATE run_control SET acknowledged_at=?5, reply='superseded by"
                       " request #' || ?6 WHERE " CTL_MINE " AND id < ?6", &st, err)))
        return status;
    bind_owner(st, run, me);
    sqlite3_bind_double(st, 5, sysinfo_wall());
    sqlite3_bind_int64(st, 6, out->id);
    return write_stmt(s, st, "answering older control requests", NULL, err);
}

int runstore_control_expire(RunStore *s, long run, const char *why, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "UPDATE run_control SET acknowledged_at=?1, reply=substr('expired: '"
                      " || ?2, 1, 255) WHERE run_id=?3 AND acknowledged_at IS NULL", &st, err);
    if (status) return status;
    sqlite3_bind_double(st, 1, sysinfo_wall());
    bind_str(st, 2, why);
    sqlite3_bind_int64(st, 3, run);
    return write_stmt(s, st, "expiring control requests", NULL, err);
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

int runstore_set_parent(RunStore *s, long run, long parent, long parent_step,
                        RunParentKind kind, char *err)
{
    int status = runstore_check_run(s, parent, err);
    if (!status) status = runstore_check_run(s, run, err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "UPDATE runs SET parent_run=?1, parent_step=?2,"
                                 " parent_kind=?3 WHERE id=?4", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, parent);
    sqlite3_bind_int64(st, 2, parent_step);
    bind_str(st, 3, kind == RUNSTORE_PARENT_INIT ? "init" : "fork");
    sqlite3_bind_int64(st, 4, run);
    return write_stmt(s, st, "recording a run's parent", NULL, err);
}

int runstore_lineage_migrate(RunStore *s, char *err)
{
    int status = LM_OK, have = has_column(s, "runs", "parent_kind", &status, err);
    if (have == 0)
        status = exec_sql(s, "ALTER TABLE runs ADD COLUMN parent_kind TEXT;"
                          "UPDATE runs SET parent_kind = CASE WHEN (SELECT min(m.step) FROM"
                          " metrics m WHERE m.run_id=runs.id) <= parent_step THEN 'init'"
                          " ELSE 'fork' END WHERE parent_run IS NOT NULL OR parent_step > 0;",
                          "recording how runs descend from their parents", err);
    return status;
}

int runstore_lineage_missing(RunStore *s)
{
    int status = LM_OK;
    char err[LM_ERR_LEN];
    return has_column(s, "runs", "parent_kind", &status, err) == 0;
}
