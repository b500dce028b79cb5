/* runstore_edits.c — untag, rename, note edit and delete, each recorded in run_edits with
 * its time (see runstore_edits.h). Every change and its record are one transaction. */
#include "runstore_edits.h"
#include "runstore_notes.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "sysinfo.h"
#include "textcheck.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SCHEMA_EDITS[] =
    "CREATE TABLE IF NOT EXISTS run_edits(id INTEGER PRIMARY KEY,"
    " run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE, sweep_id INTEGER,"
    " t REAL NOT NULL, what TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS run_edits_run ON run_edits(run_id);";

int runstore_edits_migrate(RunStore *s, char *err)
{
    char sql[sizeof SCHEMA_EDITS + 64];
    snprintf(sql, sizeof sql, "%sPRAGMA user_version = %d;", SCHEMA_EDITS,
             RUNSTORE_EDITS_VERSION);
    return exec_sql(s, sql, "adding the edits table", err);
}

int runstore_edit_log(RunStore *s, long run, long sweep, const char *what, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "INSERT INTO run_edits(run_id, sweep_id, t, what) VALUES(?,?,?,?)",
                      &st, err);
    if (status) return status;
    if (run > 0) sqlite3_bind_int64(st, 1, run);
    else sqlite3_bind_null(st, 1);
    if (sweep > 0) sqlite3_bind_int64(st, 2, sweep);
    else sqlite3_bind_null(st, 2);
    sqlite3_bind_double(st, 3, sysinfo_wall());
    bind_str(st, 4, what);
    return write_stmt(s, st, "recording an edit", NULL, err);
}

/* Runs fn inside one write transaction: committed when it returns LM_OK. */
static int in_tx(RunStore *s, const char *what, int (*fn)(RunStore *, void *, char *),
                 void *ctx, char *err)
{
    int status = exec_sql(s, "BEGIN IMMEDIATE", what, err);
    if (status) return status;
    if (!(status = fn(s, ctx, err))) return tx_commit(s, what, err);
    tx_rollback(s);
    return status;
}

/* A text column of run id into out (LM_EARG "no run N"). */
static int run_text(RunStore *s, long id, const char *col, char *out, size_t cap, char *err)
{
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE id=?", col);
    sqlite3_stmt *st;
    int status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) snprintf(out, cap, "%s", col_str(st, 0));
    else status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no run %ld (`runs` lists them)", id)
                                    : runstore_db_fail(s, rc, "reading a run", err);
    sqlite3_finalize(st);
    return status;
}

static int set_run_text(RunStore *s, long id, const char *col, const char *v, char *err)
{
    char sql[64];
    snprintf(sql, sizeof sql, "UPDATE runs SET %s=? WHERE id=?", col);
    sqlite3_stmt *st;
    int status = prep(s, sql, &st, err);
    if (status) return status;
    bind_str(st, 1, v);
    sqlite3_bind_int64(st, 2, id);
    return write_stmt(s, st, "editing a run", NULL, err);
}

typedef struct { long id, sweep, note; const char *text; } Edit;

static int untag_tx(RunStore *s, void *ctx, char *err)
{
    const Edit *e = ctx;
    char tags[256], out[256] = "", what[160];
    int status = run_text(s, e->id, "coalesce(tags, '')", tags, sizeof tags, err), found = 0;
    if (status) return status;
    size_t n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", tags);
    for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        if (!strcmp(t, e->text)) {
            found = 1;
            continue;
        }
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", n ? "," : "", t);
    }
    if (!found)
        return err_set(err, LM_EARG, "run %ld has no tag '%s' (its tags: %s)", e->id, e->text,
                       tags[0] ? tags : "none");
    if ((status = set_run_text(s, e->id, "tags", out[0] ? out : NULL, err))) return status;
    snprintf(what, sizeof what, "untagged '%.64s'", e->text);
    return runstore_edit_log(s, e->id, 0, what, err);
}

int runstore_untag(RunStore *s, long id, const char *tag, char *err)
{
    if (!tag || !*tag) return err_set(err, LM_EARG, "untag needs the tag: `untag %ld TAG`", id);
    Edit e = {.id = id, .text = tag};
    return in_tx(s, "removing a tag", untag_tx, &e, err);
}

static int rename_tx(RunStore *s, void *ctx, char *err)
{
    const Edit *e = ctx;
    char old[64], what[200];
    int status = run_text(s, e->id, "name", old, sizeof old, err);
    if (status) return status;
    if ((status = set_run_text(s, e->id, "name", e->text, err))) return status;
    snprintf(what, sizeof what, "renamed '%s' to '%s'", old, e->text);
    return runstore_edit_log(s, e->id, 0, what, err);
}

int runstore_rename(RunStore *s, long id, const char *name, char *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 63)
        return err_set(err, LM_EARG, "a run's name is 1 to 63 bytes (got %zu): `rename %ld "
                       "NAME`", n, id);
    int status = textcheck_value("name", name, 0, err);
    if (status) return status;
    Edit e = {.id = id, .text = name};
    return in_tx(s, "renaming a run", rename_tx, &e, err);
}

/* Note e->note's text into *old (malloc'd) when it belongs to e's run or sweep. */
static int note_of(RunStore *s, const Edit *e, char **old, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "SELECT text FROM notes WHERE id=?1 AND ((?2 > 0 AND run_id=?2) OR"
                      " (?3 > 0 AND sweep_id=?3))", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, e->note);
    sqlite3_bind_int64(st, 2, e->id);
    sqlite3_bind_int64(st, 3, e->sweep);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (!(*old = strdup(col_str(st, 0))))
            status = err_set(err, LM_ENOMEM, "out of memory");
    } else {
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "%s %ld has no note %ld (`run ID` "
                                             "lists its notes with their numbers)",
                                             e->id ? "run" : "sweep", e->id ? e->id : e->sweep,
                                             e->note)
                                   : runstore_db_fail(s, rc, "reading a note", err);
    }
    sqlite3_finalize(st);
    return status;
}

/* runs.notes mirrors the run's newest note (what older builds and exports read). */
static int mirror_newest(RunStore *s, long run, char *err)
{
    if (run <= 0) return LM_OK;
    sqlite3_stmt *st;
    int status = prep(s, "UPDATE runs SET notes=(SELECT text FROM notes WHERE run_id=?1"
                      " ORDER BY t DESC, id DESC LIMIT 1) WHERE id=?1", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    return write_stmt(s, st, "editing a note", NULL, err);
}

static int note_tx(RunStore *s, void *ctx, char *err)
{
    const Edit *e = ctx;
    char *old = NULL, what[640];
    int status = note_of(s, e, &old, err);
    if (status) return status;
    sqlite3_stmt *st;
    status = prep(s, e->text ? "UPDATE notes SET text=?2 WHERE id=?1" : "DELETE FROM notes "
                  "WHERE id=?1", &st, err);
    if (!status) {
        sqlite3_bind_int64(st, 1, e->note);
        if (e->text) bind_str(st, 2, e->text);
        status = write_stmt(s, st, "editing a note", NULL, err);
    }
    snprintf(what, sizeof what, "note %ld %s (was: %.560s)", e->note,
             e->text ? "edited" : "deleted", old);
    free(old);
    if (!status) status = mirror_newest(s, e->id, err);
    return status ? status : runstore_edit_log(s, e->id, e->sweep, what, err);
}

int runstore_note_edit(RunStore *s, long run, long sweep, long note_id, const char *text,
                       char *err)
{
    size_t len = text ? strlen(text) : 0;
    if (len == 0)
        return err_set(err, LM_EARG, "an edited note needs text (`note ID delete=N` deletes "
                       "one)");
    if (len > RUNSTORE_NOTE_MAX)
        return err_set(err, LM_EARG, "the note is %zu bytes; a note holds at most %d bytes",
                       len, RUNSTORE_NOTE_MAX);
    int status = textcheck_value("note", text, TEXTCHECK_ALLOW_NEWLINE, err);
    if (status) return status;
    Edit e = {.id = run, .sweep = sweep, .note = note_id, .text = text};
    return in_tx(s, "editing a note", note_tx, &e, err);
}

int runstore_note_delete(RunStore *s, long run, long sweep, long note_id, char *err)
{
    Edit e = {.id = run, .sweep = sweep, .note = note_id};
    return in_tx(s, "deleting a note", note_tx, &e, err);
}

int runstore_edits(RunStore *s, long run, long sweep, EditRow **rows, int *n, char *err)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT id, coalesce(run_id, 0), coalesce(sweep_id, 0), t, what"
                      " FROM run_edits WHERE (?1 > 0 AND run_id = ?1)"
                      " OR (?1 > 0 AND sweep_id = (SELECT sweep_id FROM runs WHERE id = ?1))"
                      " OR (?2 > 0 AND sweep_id = ?2) ORDER BY t, id", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, sweep);
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            EditRow *g = realloc(*rows, (size_t)cap * sizeof *g);
            if (!g) {
                status = err_set(err, LM_ENOMEM, "out of memory");
                break;
            }
            *rows = g;
        }
        EditRow *r = &(*rows)[(*n)++];
        r->id = sqlite3_column_int64(st, 0);
        r->run_id = sqlite3_column_int64(st, 1);
        r->sweep_id = sqlite3_column_int64(st, 2);
        r->t = sqlite3_column_double(st, 3);
        snprintf(r->what, sizeof r->what, "%s", col_str(st, 4));
    }
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading edits", err);
    sqlite3_finalize(st);
    if (status) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return status;
}
