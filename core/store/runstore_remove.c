/* runstore_remove.c — removing a run without holding the store for long (docs/hostile8.md:
 * one DELETE of a 5 M-row run held the write lock 17-31 s, and a run training in another
 * process could not write meanwhile). A removal is two phases:
 *   mark: one small transaction deletes the run's row from `runs` (so it leaves every
 *         listing at once), clears the references that outlive it (ON DELETE SET NULL:
 *         a fork's parent, a sweep's trial), deletes its small rows (REMOVE_AT_MARK rows
 *         in all, each table whole or not at all: notes, evaluations, ...), and records
 *         'removing/ID' in store_meta. Foreign keys are off on this connection for that
 *         transaction only, so the rows of its big tables do not go with it;
 *   rows: bounded transactions (RUNSTORE_REMOVE_BATCH rows each) delete what is left, a
 *         pause after each so another writer gets the lock; the key goes with the last.
 * Which tables hold a run's rows is read from the schema (every foreign key to runs, and
 * those to such a table: a series' points), never from a list kept here. A killed
 * removal leaves rows nobody can see (no run has that id, and ids are never reused) and
 * its key: the next removal, or the repair at open for up to
 * RUNSTORE_REMOVE_OPEN_SECONDS, carries it on. The file does not shrink: SQLite keeps the
 * freed pages for the next rows (VACUUM returns them to the disk; not done here: it
 * rewrites the whole file under an exclusive lock). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "strbuf.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REMOVE_TABLES 48
#define REMOVE_AT_MARK 2000   /* a table's rows of the run deleted by the mark when so few */
#define REMOVE_KEY "removing/"

/* One table that holds a run's rows: its rows are those WHERE `where` (?1 the run id). */
typedef struct {
    char name[64];
    char qname[140];   /* as an SQL identifier, quoted */
    char cols[200];    /* "rowid", or its primary key's columns "a, b" */
    char key[204];     /* "rowid", or those as a row value "(a, b)" */
    char where[300];
    int parent;        /* a table whose rows these reference (deleted first): its index */
} RemTable;

/* How table t's rows are named in a DELETE: "rowid", or its primary key's columns (a
 * WITHOUT ROWID table): into cols ("a, b") and key ("rowid" or the row value "(a, b)"). */
static int table_key(RunStore *s, const char *t, RemTable *x, char *err)
{
    char sql[200];
    sqlite3_stmt *st;
    sqlite3_snprintf((int)sizeof sql, sql, "SELECT rowid FROM \"%w\" LIMIT 0", t);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_finalize(st);
        snprintf(x->cols, sizeof x->cols, "rowid");
        snprintf(x->key, sizeof x->key, "rowid");
        return LM_OK;
    }
    int status = prep(s, "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk",
                      &st, err);
    if (status) return status;
    bind_str(st, 1, t);
    x->cols[0] = 0;
    for (int k = 0; sqlite3_step(st) == SQLITE_ROW; k++) {
        size_t o = strlen(x->cols);
        sqlite3_snprintf((int)(sizeof x->cols - o), x->cols + o, "%s\"%w\"", k ? ", " : "",
                         col_str(st, 0));
    }
    sqlite3_finalize(st);
    if (!x->cols[0])
        return err_set(err, LM_EFORMAT, "%s: table %s has no key to delete by", s->path, t);
    snprintf(x->key, sizeof x->key, "(%s)", x->cols);
    return LM_OK;
}

/* The tables that hold a run's rows (ON DELETE CASCADE to runs, and to those), children
 * before their parents, into t; with nulls, the statements that clear the references
 * that outlive a run (ON DELETE SET NULL) into *nulls (malloc'd, ';'-joined). */
static int remove_tables(RunStore *s, RemTable *t, int *n, char **nulls, char *err)
{
    sqlite3_stmt *st;
    StrBuf b = {0};
    *n = 0;
    int rc, status = prep(s, "SELECT m.name, f.\"from\", f.\"table\", coalesce(f.\"to\", ''),"
                          " f.on_delete FROM sqlite_master m, pragma_foreign_key_list(m.name) f"
                          " WHERE m.type='table' ORDER BY f.\"table\"<>'runs', m.name", &st, err);
    if (status) return status;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < REMOVE_TABLES) {
        const char *name = col_str(st, 0), *from = col_str(st, 1), *to = col_str(st, 2);
        int parent = -1, set_null = !strcmp(col_str(st, 4), "SET NULL");
        for (int i = 0; i < *n && strcmp(to, "runs"); i++)
            if (t[i].parent < 0 && !strcmp(t[i].name, to)) parent = i;
        if (strcmp(to, "runs") && parent < 0) continue;   /* a sweep's, an alert's of none */
        if (set_null && !strcmp(to, "runs")) {
            char *q = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\"=NULL WHERE \"%w\"=?1;", name,
                                      from, from);
            strbuf_printf(&b, "%s", q ? q : "");
            sqlite3_free(q);
            continue;
        }
        if (set_null) continue;
        RemTable *x = &t[(*n)++];
        snprintf(x->name, sizeof x->name, "%s", name);
        sqlite3_snprintf((int)sizeof x->qname, x->qname, "\"%w\"", name);
        x->parent = parent;
        if (parent < 0)
            sqlite3_snprintf((int)sizeof x->where, x->where, "\"%w\"=?1", from);
        else
            sqlite3_snprintf((int)sizeof x->where, x->where, "\"%w\" IN (SELECT \"%w\" FROM"
                             " \"%w\" WHERE %s)", from, col_str(st, 3)[0] ? col_str(st, 3)
                             : "rowid", t[parent].name, t[parent].where);
        if ((status = table_key(s, name, x, err))) break;
    }
    sqlite3_finalize(st);
    if (!status && rc == SQLITE_ROW)   /* stopped at the bound with tables left: never half */
        status = err_set(err, LM_EFORMAT, "%s: more than %d tables hold a run's rows (a newer "
                         "lmlab's store?): this lmlab removes no run from it", s->path,
                         REMOVE_TABLES);
    if (!status && b.oom) status = err_set(err, LM_ENOMEM, "out of memory removing a run");
    if (status || !nulls) free(b.p);
    else *nulls = b.p;
    return status;
}

/* Deletes rows of table x of run, at most *left (decreased by those deleted); with whole,
 * only when all of them fit (counted first). *more = 1 when rows of it may be left. */
static int remove_rows(RunStore *s, const RemTable *x, long run, long *left, int whole,
                       int *more, char *err)
{
    char sql[900];
    sqlite3_stmt *st;
    int status;
    if (whole) {
        snprintf(sql, sizeof sql, "SELECT count(*) FROM (SELECT 1 FROM %s WHERE %s LIMIT ?2)",
                 x->qname, x->where);
        if ((status = prep(s, sql, &st, err))) return status;
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, *left + 1);
        long n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        sqlite3_finalize(st);
        *more = n > *left;
        if (n == 0 || *more) return LM_OK;
    }
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE %s IN (SELECT %s FROM %s WHERE %s LIMIT ?2)",
             x->qname, x->key, x->cols, x->qname, x->where);
    if ((status = prep(s, sql, &st, err))) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, *left);
    int changes = 0;
    status = write_stmt(s, st, "removing a run's rows", &changes, err);
    if (!whole) *more = changes >= *left;
    *left -= changes;
    return status;
}

/* Deletes up to *left rows of run's tables (children first; a parent's rows only once its
 * children's are gone), inside the caller's transaction; *done = 1 when none is left. */
static int remove_some(RunStore *s, const RemTable *t, int n, long run, long *left, int whole,
                       int *done, char *err)
{
    int status = LM_OK, more_of[REMOVE_TABLES] = {0};
    *done = 1;
    for (int pass = 0; pass < 2; pass++)   /* children, then the tables they reference */
        for (int i = 0; i < n && !status; i++) {
            int is_parent = 0, more = 0;
            for (int j = 0; j < n; j++) is_parent |= t[j].parent == i;
            if (is_parent != pass) continue;
            for (int j = 0; j < n && is_parent; j++) more |= t[j].parent == i && more_of[j];
            if (!more) status = remove_rows(s, &t[i], run, left, whole, &more, err);
            more_of[i] = more;
            *done &= !more;
        }
    return status;
}

static int meta_key(RunStore *s, const char *sql, long run, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, sql, &st, err);
    if (status) return status;
    char key[40];
    snprintf(key, sizeof key, REMOVE_KEY "%ld", run);
    bind_str(st, 1, key);
    if (sqlite3_bind_parameter_count(st) > 1) sqlite3_bind_double(st, 2, sysinfo_wall());
    return write_stmt(s, st, "recording a removal", NULL, err);
}

/* The mark, inside the caller's transaction (foreign keys off). */
static int mark_tx(RunStore *s, long id, char *err)
{
    RemTable t[REMOVE_TABLES];
    char *nulls = NULL;
    int n = 0, changes = 0, done = 0, status = remove_tables(s, t, &n, &nulls, err);
    sqlite3_stmt *st;
    for (char *q = nulls; !status && q && *q;) {   /* one statement each: ?1 is the run */
        const char *tail = NULL;
        if (sqlite3_prepare_v2(s->db, q, -1, &st, &tail) != SQLITE_OK)
            status = runstore_db_fail(s, sqlite3_errcode(s->db), "removing a run", err);
        if (status || !st) break;
        sqlite3_bind_int64(st, 1, id);
        status = write_stmt(s, st, "removing a run", NULL, err);
        q = (char *)tail;
    }
    free(nulls);
    long left = REMOVE_AT_MARK;   /* the small tables at once, whole */
    if (!status) status = remove_some(s, t, n, id, &left, 1, &done, err);
    if (!status && !done)
        status = meta_key(s, "INSERT OR REPLACE INTO store_meta(key, value) VALUES(?1, ?2)",
                          id, err);
    if (!status) status = prep(s, "DELETE FROM runs WHERE id=?", &st, err);
    if (!status) {
        sqlite3_bind_int64(st, 1, id);
        status = write_stmt(s, st, "removing a run", &changes, err);
    }
    return !status && !changes ? err_set(err, LM_EARG, "no run %ld", id) : status;
}

int runstore_remove_mark(RunStore *s, long id, char *err)
{
    int status = exec_sql(s, "PRAGMA foreign_keys=OFF", "removing a run", err);
    if (!status) status = exec_sql(s, "BEGIN IMMEDIATE", "removing a run", err);
    if (!status) {
        status = mark_tx(s, id, err);
        if (!status) status = tx_commit(s, "removing a run", err);
        else tx_rollback(s);
    }
    exec_sql(s, "PRAGMA foreign_keys=ON", "removing a run", NULL);
    if (s->known_run == id) s->known_run = 0;
    return status;
}

/* The oldest pending removal's run into *run (0: none). */
static int pending_run(RunStore *s, long *run, char *err)
{
    sqlite3_stmt *st;
    *run = 0;
    int status = prep(s, "SELECT key FROM store_meta WHERE key >= '" REMOVE_KEY "' AND"
                      " key < 'removing0' ORDER BY CAST(value AS REAL) LIMIT 1", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *run = atol(col_str(st, 0) + strlen(REMOVE_KEY));
    else if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "reading removals", err);
    sqlite3_finalize(st);
    return status;
}

int runstore_remove_step(RunStore *s, long max_rows, int *pending, char *err)
{
    RemTable t[REMOVE_TABLES];
    long run = 0, left = max_rows > 0 ? max_rows : RUNSTORE_REMOVE_BATCH;
    int n = 0, done = 0;
    *pending = 0;
    int status = pending_run(s, &run, err);
    if (status || !run) return status;
    if ((status = remove_tables(s, t, &n, NULL, err))) return status;
    if ((status = exec_sql(s, "BEGIN IMMEDIATE", "removing a run's rows", err))) return status;
    status = remove_some(s, t, n, run, &left, 0, &done, err);
    if (!status && done)
        status = meta_key(s, "DELETE FROM store_meta WHERE key=?1", run, err);
    if (!status) status = tx_commit(s, "removing a run's rows", err);
    else tx_rollback(s);
    if (!status) status = pending_run(s, &run, err);
    *pending = !status && run;
    return status;
}

int runstore_remove_pending(RunStore *s, double seconds, char *err)
{
    double start = sysinfo_now();
    int pending = 1, status = LM_OK;
    while (!status && pending && (seconds <= 0 || sysinfo_now() - start < seconds)) {
        double t = sysinfo_now();
        status = runstore_remove_step(s, 0, &pending, err);
        if (!status && pending) {   /* another writer's turn: a quarter of the batch's time */
            double pause = (sysinfo_now() - t) / 4;
            usleep((useconds_t)((pause > 0.005 ? pause : 0.005) * 1e6));
        }
    }
    return status;
}
