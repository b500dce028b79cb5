/* runstore_notes.c — notes on runs and sweeps, alert rules and fired alerts (see
 * runstore_notes.h; the tables are schema step 7, runstore_track.c). Every value is a
 * bound parameter. Not the rule language (core/run/alerts.c). */
#include "runstore_notes.h"
#include "private/runstore_impl.h"
#include "textcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* LM_OK when sweep exists, LM_EARG when not. */
static int check_sweep(RunStore *s, long sweep, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "SELECT 1 FROM sweeps WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, sweep);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) status = err_set(err, LM_EARG, "no sweep %ld (`sweep list` lists"
                                            " them)", sweep);
    else if (rc != SQLITE_ROW) status = runstore_db_fail(s, rc, "looking up a sweep", err);
    sqlite3_finalize(st);
    return status;
}

static int check_target(RunStore *s, long run, long sweep, char *err)
{
    if ((run > 0) == (sweep > 0))
        return err_set(err, LM_EARG, "a note or alert belongs to one run or one sweep");
    return run > 0 ? runstore_check_run(s, run, err) : check_sweep(s, sweep, err);
}

int runstore_note_add(RunStore *s, long run, long sweep, const char *text, long *id,
                      char *err)
{
    size_t len = text ? strlen(text) : 0;
    if (len == 0)
        return err_set(err, LM_EARG, "a note needs text: `note ID \"text\"`");
    if (len > RUNSTORE_NOTE_MAX)
        return err_set(err, LM_EARG, "the note is %zu bytes; a note holds at most %d bytes"
                       " (split it into several notes)", len, RUNSTORE_NOTE_MAX);
    int status = textcheck_value("note", text, TEXTCHECK_ALLOW_NEWLINE, err);
    if (!status) status = check_target(s, run, sweep, err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "INSERT INTO notes(run_id, sweep_id, t, text)"
                                 " VALUES(?,?,?,?)", &st, err)))
        return status;
    if (run > 0) sqlite3_bind_int64(st, 1, run);
    else sqlite3_bind_null(st, 1);
    if (sweep > 0) sqlite3_bind_int64(st, 2, sweep);
    else sqlite3_bind_null(st, 2);
    sqlite3_bind_double(st, 3, sysinfo_wall());
    bind_str(st, 4, text);
    status = write_stmt(s, st, "adding a note", NULL, err);
    if (!status && id) *id = (long)sqlite3_last_insert_rowid(s->db);
    if (status || run <= 0) return status;
    /* runs.notes mirrors the newest note: the export schema's "notes" and older builds */
    if ((status = prep(s, "UPDATE runs SET notes=? WHERE id=?", &st, err))) return status;
    bind_str(st, 1, text);
    sqlite3_bind_int64(st, 2, run);
    return write_stmt(s, st, "adding a note", NULL, err);
}

int runstore_notes(RunStore *s, long run, long sweep, NoteRow **rows, int *n, char *err)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT id, coalesce(run_id, 0), coalesce(sweep_id, 0), t, text"
                      " FROM notes WHERE (?1 = 0 AND ?2 = 0) OR (?1 > 0 AND run_id = ?1)"
                      " OR (?1 > 0 AND sweep_id = (SELECT sweep_id FROM runs WHERE id = ?1))"
                      " OR (?2 > 0 AND sweep_id = ?2) ORDER BY t, id", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, sweep);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(rows, &cap, *n + 1, sizeof **rows)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading notes");
            break;
        }
        NoteRow *r = &(*rows)[(*n)++];
        r->id = (long)sqlite3_column_int64(st, 0);
        r->run_id = (long)sqlite3_column_int64(st, 1);
        r->sweep_id = (long)sqlite3_column_int64(st, 2);
        r->t = sqlite3_column_double(st, 3);
        if (!(r->text = col_dup(st, 4)))
            status = err_set(err, LM_ENOMEM, "out of memory reading notes");
    }
    if (!status && rc != SQLITE_DONE && rc != SQLITE_ROW)
        status = runstore_db_fail(s, rc, "reading notes", err);
    sqlite3_finalize(st);
    if (status) {
        runstore_notes_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

void runstore_notes_free(NoteRow *rows, int n)
{
    for (int i = 0; rows && i < n; i++) free(rows[i].text);
    free(rows);
}

/* ---- alerts --------------------------------------------------------------------------- */

/* The id the next alert row will take. */
static int next_alert_id(RunStore *s, long *id, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "SELECT coalesce(max(id), 0) + 1 FROM alerts", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *id = (long)sqlite3_column_int64(st, 0);
    else status = runstore_db_fail(s, rc, "numbering an alert", err);
    sqlite3_finalize(st);
    return status;
}

int runstore_alert_add(RunStore *s, long run, long sweep, const char *rule, const char *cmd,
                       const char *origin, long *id, char *err)
{
    cmd = cmd ? cmd : "";
    if (!rule || !*rule || strlen(rule) >= RUNSTORE_ALERT_RULE_LEN)
        return err_set(err, LM_EARG, "an alert rule is 1 to %d bytes", RUNSTORE_ALERT_RULE_LEN - 1);
    if (strlen(cmd) >= RUNSTORE_ALERT_CMD_LEN)
        return err_set(err, LM_EARG, "the alert's command is %zu bytes; at most %d",
                       strlen(cmd), RUNSTORE_ALERT_CMD_LEN - 1);
    int status = textcheck_value("alert command", cmd, 0, err);
    if (!status) status = textcheck_value("alert rule", rule, 0, err);
    if (!status) status = check_target(s, run, sweep, err);
    AlertRow a = {.run_id = run > 0 ? run : 0, .sweep_id = sweep > 0 ? sweep : 0,
                  .created = sysinfo_wall()};
    snprintf(a.rule, sizeof a.rule, "%s", rule);
    snprintf(a.cmd, sizeof a.cmd, "%s", cmd);
    snprintf(a.origin, sizeof a.origin, "%s", origin ? origin : "live");
    /* the row's id is signed too, so it is chosen here; a writer that takes it first
     * makes the insert fail, and the next id is tried */
    for (int attempt = 0; !status && attempt < 5; attempt++) {
        sqlite3_stmt *st;
        if ((status = next_alert_id(s, &a.id, err))) break;
        if (cmd[0] && (status = runstore_alert_sign(s, &a, err))) break;
        if ((status = prep(s, "INSERT OR IGNORE INTO alerts(id, run_id, sweep_id, rule, cmd,"
                           " created, origin, mac) VALUES(?,?,?,?,?,?,?,?)", &st, err)))
            break;
        sqlite3_bind_int64(st, 1, a.id);
        if (run > 0) sqlite3_bind_int64(st, 2, run);
        else sqlite3_bind_null(st, 2);
        if (sweep > 0) sqlite3_bind_int64(st, 3, sweep);
        else sqlite3_bind_null(st, 3);
        bind_str(st, 4, a.rule);
        bind_str(st, 5, a.cmd);
        sqlite3_bind_double(st, 6, a.created);
        bind_str(st, 7, a.origin);
        if (a.mac[0]) bind_str(st, 8, a.mac);
        else sqlite3_bind_null(st, 8);
        int changes = 0;
        status = write_stmt(s, st, "adding an alert", &changes, err);
        if (!status && changes) {
            if (id) *id = a.id;
            return LM_OK;
        }
    }
    return status ? status : err_set(err, LM_EDB, "could not number a new alert: other"
                                     " processes keep adding alerts; try again");
}

int runstore_alerts(RunStore *s, long run, AlertRow **rows, int *n, char *err)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT id, coalesce(run_id, 0), coalesce(sweep_id, 0), rule,"
                      " coalesce(cmd, ''), created, coalesce(origin, ''), coalesce(mac, '')"
                      " FROM alerts"
                      " WHERE ?1 = 0 OR run_id = ?1 OR sweep_id = (SELECT sweep_id FROM runs"
                      " WHERE id = ?1) ORDER BY id", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(rows, &cap, *n + 1, sizeof **rows)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading alerts");
            break;
        }
        AlertRow *a = &(*rows)[(*n)++];
        a->id = (long)sqlite3_column_int64(st, 0);
        a->run_id = (long)sqlite3_column_int64(st, 1);
        a->sweep_id = (long)sqlite3_column_int64(st, 2);
        col_copy(st, 3, a->rule, sizeof a->rule);
        col_copy(st, 4, a->cmd, sizeof a->cmd);
        a->created = sqlite3_column_double(st, 5);
        col_copy(st, 6, a->origin, sizeof a->origin);
        col_copy(st, 7, a->mac, sizeof a->mac);
        a->cmd_bytes = sqlite3_column_bytes(st, 4);
    }
    if (!status && rc != SQLITE_DONE && rc != SQLITE_ROW)
        status = runstore_db_fail(s, rc, "reading alerts", err);
    sqlite3_finalize(st);
    if (status) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

int runstore_alert_remove(RunStore *s, long id, char *err)
{
    sqlite3_stmt *st;
    int changes = 0, status = prep(s, "DELETE FROM alerts WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    status = write_stmt(s, st, "removing an alert", &changes, err);
    return !status && !changes ? err_set(err, LM_EARG, "no alert %ld (`alert list` lists"
                                         " them)", id) : status;
}

int runstore_alert_fire(RunStore *s, long alert_id, long run, const char *rule,
                        const char *message, int *fired, long *event_id, char *err)
{
    sqlite3_stmt *st;
    int changes = 0, status = prep(s, "INSERT OR IGNORE INTO alert_events(alert_id, run_id,"
                                   " t, rule, message) VALUES(?,?,?,?,?)", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, alert_id);
    sqlite3_bind_int64(st, 2, run);
    sqlite3_bind_double(st, 3, sysinfo_wall());
    bind_str(st, 4, rule);
    bind_str(st, 5, message);
    status = write_stmt(s, st, "recording an alert", &changes, err);
    *fired = !status && changes > 0;
    if (*fired && event_id) *event_id = (long)sqlite3_last_insert_rowid(s->db);
    return status;
}

int runstore_alert_cmd_status(RunStore *s, long event_id, const char *text, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "UPDATE alert_events SET cmd_status=? WHERE id=?", &st, err);
    if (status) return status;
    bind_str(st, 1, text);
    sqlite3_bind_int64(st, 2, event_id);
    return write_stmt(s, st, "recording an alert's command", NULL, err);
}

int runstore_alert_events(RunStore *s, long run, long after, int max, AlertEvent **rows,
                          int *n, char *err)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT id, alert_id, run_id, t, coalesce(rule, ''),"
                      " coalesce(message, ''), coalesce(cmd_status, '') FROM alert_events"
                      " WHERE id > ?2 AND (?1 = 0 OR run_id = ?1) ORDER BY id LIMIT ?3",
                      &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int(st, 3, max > 0 ? max : -1);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(rows, &cap, *n + 1, sizeof **rows)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading alerts");
            break;
        }
        AlertEvent *e = &(*rows)[(*n)++];
        e->id = (long)sqlite3_column_int64(st, 0);
        e->alert_id = (long)sqlite3_column_int64(st, 1);
        e->run_id = (long)sqlite3_column_int64(st, 2);
        e->t = sqlite3_column_double(st, 3);
        col_copy(st, 4, e->rule, sizeof e->rule);
        col_copy(st, 5, e->message, sizeof e->message);
        col_copy(st, 6, e->cmd_status, sizeof e->cmd_status);
    }
    if (!status && rc != SQLITE_DONE && rc != SQLITE_ROW)
        status = runstore_db_fail(s, rc, "reading fired alerts", err);
    sqlite3_finalize(st);
    if (status) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return status;
}
