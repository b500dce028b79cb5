/* runstore.c — the run store on SQLite (see runstore.h): schema and migration, crash
 * repair, batched metric writes, filtered listing, series, comparison, export, sweeps.
 * The only file in lmlab that includes sqlite3.h. Every value reaches SQL as a bound
 * parameter; the SQL text itself is built only from constant fragments. Not a query
 * language, not thread-safe per handle (one RunStore per thread). */
#include "runstore.h"
#include "err.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct { long run; StepMetric m; } PendingStep;
typedef struct { long run; EvalMetric e; } PendingEval;

struct RunStore {
    sqlite3 *db;
    char *path;
    char host[64];
    PendingStep *steps;
    long n_steps, cap_steps;
    PendingEval *evals;
    long n_evals, cap_evals;
    int max_rows;          /* autoflush when this many rows wait */
    long next_rows;        /* ... or this many after a failed flush (back-off) */
    double max_seconds, last_flush;
    long known_run;        /* last run id checked to exist */
    sqlite3_stmt *ins_step, *ins_eval, *upd_run;
};

static const char *RUN_STATUSES[] = {"running", "paused", "finished", "stopped",
                                     "diverged", "interrupted", "failed", NULL};

/* Version 1 tables plus what version 2 added (sweeps, runs.tags, runs.sweep_id). */
static const char SCHEMA_V2[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT, created REAL, started REAL,"
    " ended REAL, status TEXT NOT NULL DEFAULT 'running', reason TEXT, config TEXT,"
    " model TEXT, data_name TEXT, data_hash TEXT, tokenizer TEXT, tokenizer_hash TEXT,"
    " params INTEGER, machine TEXT, git_rev TEXT, notes TEXT, pid INTEGER, host TEXT,"
    " last_step INTEGER, best_val REAL, final_val REAL, checkpoint_dir TEXT,"
    " heartbeat REAL, tags TEXT,"
    " sweep_id INTEGER REFERENCES sweeps(id) ON DELETE SET NULL);"
    "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL, epoch REAL, tokens INTEGER, loss REAL, lr REAL,"
    " grad_norm REAL, tokens_per_s REAL, elapsed REAL,"
    " PRIMARY KEY(run_id, step)) WITHOUT ROWID;"
    "CREATE TABLE evals(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL, split TEXT NOT NULL, loss REAL, ppl REAL, bpc REAL,"
    " tokens INTEGER, elapsed REAL, PRIMARY KEY(run_id, step, split)) WITHOUT ROWID;"
    "CREATE TABLE gates(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL, layer INTEGER NOT NULL, level INTEGER NOT NULL, mean REAL,"
    " std REAL, hist TEXT, PRIMARY KEY(run_id, layer, level, step)) WITHOUT ROWID;"
    "CREATE TABLE samples(id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER,"
    " prompt TEXT, settings TEXT, text TEXT, created REAL);"
    "CREATE TABLE checkpoints(run_id INTEGER NOT NULL REFERENCES runs(id)"
    " ON DELETE CASCADE, step INTEGER NOT NULL, path TEXT, val_loss REAL,"
    " is_best INTEGER, PRIMARY KEY(run_id, step)) WITHOUT ROWID;";

static const char SCHEMA_SWEEPS[] =
    "CREATE TABLE sweeps(id INTEGER PRIMARY KEY, name TEXT, spec TEXT, strategy TEXT,"
    " status TEXT, created REAL, ended REAL);"
    "CREATE TABLE sweep_trials(sweep_id INTEGER NOT NULL REFERENCES sweeps(id)"
    " ON DELETE CASCADE, trial INTEGER NOT NULL,"
    " run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL, params TEXT, status TEXT,"
    " PRIMARY KEY(sweep_id, trial));";

static const char MIGRATE_1_2[] =
    "ALTER TABLE runs ADD COLUMN tags TEXT;"
    "ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps(id)"
    " ON DELETE SET NULL;";

static const char INDEXES[] =
    "CREATE INDEX IF NOT EXISTS runs_created ON runs(created);"
    "CREATE INDEX IF NOT EXISTS runs_status ON runs(status);"
    "CREATE INDEX IF NOT EXISTS runs_model ON runs(model);"
    "CREATE INDEX IF NOT EXISTS runs_best ON runs(best_val IS NULL, best_val);"
    "CREATE INDEX IF NOT EXISTS runs_sweep ON runs(sweep_id);"
    "CREATE INDEX IF NOT EXISTS samples_run ON samples(run_id, step);"
    "CREATE INDEX IF NOT EXISTS trials_run ON sweep_trials(run_id);"
    "PRAGMA user_version = 2;";

/* ---- small helpers ------------------------------------------------------------------ */

static double now_wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int pid_alive(long pid)
{
    if (pid <= 0) return 0;
    if (kill((pid_t)pid, 0) == 0) return 1;
    return errno != ESRCH;   /* EPERM: alive, someone else's */
}

static int status_index(const char *status)
{
    for (int i = 0; status && RUN_STATUSES[i]; i++)
        if (!strcmp(status, RUN_STATUSES[i])) return i;
    return -1;
}

/* Maps an SQLite result to an lmlab status with a message naming the file. */
static int db_fail(const RunStore *s, int rc, const char *what, char *err)
{
    const char *msg = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return err_set(err, LM_EDB, "%s: database is locked by another process (while %s);"
                       " try again when it is done", s->path, what);
    case SQLITE_FULL:
        return err_set(err, LM_ENOSPC, "%s: disk full while %s; free some space and retry",
                       s->path, what);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return err_set(err, LM_EFORMAT, "%s is not an lmlab run store or is damaged (%s);"
                       " move it aside (lmlab then starts a new one) or restore a backup",
                       s->path, msg);
    case SQLITE_CANTOPEN:
        return err_set(err, LM_EIO, "%s: cannot open it or create its -wal/-shm files next"
                       " to it (%s); is the file or its directory read-only?", s->path, msg);
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return err_set(err, LM_EIO, "%s: cannot write while %s (%s); is the file or its"
                       " directory read-only?", s->path, what, msg);
    case SQLITE_IOERR: {
        int e = s->db ? sqlite3_system_errno(s->db) : 0;
        if (e == ENOSPC)
            return err_set(err, LM_ENOSPC, "%s: disk full while %s", s->path, what);
        return err_set(err, LM_EIO, "%s: I/O error while %s (%s%s%s); is the disk full or"
                       " the file too large?", s->path, what, msg, e ? ": " : "",
                       e ? strerror(e) : "");
    }
    case SQLITE_NOMEM:
        return err_set(err, LM_ENOMEM, "out of memory while %s", what);
    default:
        return err_set(err, LM_EDB, "%s: %s failed: %s", s->path, what, msg);
    }
}

static int exec_sql(RunStore *s, const char *sql, const char *what, char *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? LM_OK : db_fail(s, rc, what, err);
}

static void tx_rollback(RunStore *s)
{
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int tx_commit(RunStore *s, const char *what, char *err)
{
    int st = exec_sql(s, "COMMIT", what, err);
    if (st) tx_rollback(s);
    return st;
}

static int prep(RunStore *s, const char *sql, sqlite3_stmt **st, char *err)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    return rc == SQLITE_OK ? LM_OK : db_fail(s, rc, "preparing a query", err);
}

static void bind_str(sqlite3_stmt *st, int i, const char *v)
{
    if (v) sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v)) sqlite3_bind_null(st, i);
    else sqlite3_bind_double(st, i, v);
}

static const char *col_str(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

static void col_copy(sqlite3_stmt *st, int i, char *dst, size_t cap)
{
    const char *t = col_str(st, i);
    size_t n = (size_t)sqlite3_column_bytes(st, i);
    n = n < cap ? n : cap - 1;
    memcpy(dst, t, n);
    dst[n] = 0;
}

static double col_real(sqlite3_stmt *st, int i)   /* NULL -> NAN */
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Steps a write statement to completion, finalizes it; *changes = rows changed. */
static int write_stmt(RunStore *s, sqlite3_stmt *st, const char *what, int *changes,
                      char *err)
{
    int rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? LM_OK : db_fail(s, rc, what, err);
    if (changes) *changes = sqlite3_changes(s->db);
    sqlite3_finalize(st);
    return status;
}

/* ---- open, migrate, repair ------------------------------------------------------------ */

static int read_version(RunStore *s, int *version, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "PRAGMA user_version", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *version = sqlite3_column_int(st, 0);
    else status = db_fail(s, rc, "reading the schema version", err);
    sqlite3_finalize(st);
    return status;
}

static int store_setup(RunStore *s, char *err)
{
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);
    int version = 0, status = read_version(s, &version, err);
    if (status) return status;
    if (version > RUNSTORE_SCHEMA_VERSION)
        return err_set(err, LM_EFORMAT, "%s was created by a newer lmlab (schema version %d;"
                       " this build knows up to %d): use a newer lmlab or another LMLAB_DB",
                       s->path, version, RUNSTORE_SCHEMA_VERSION);
    if (sqlite3_db_readonly(s->db, "main") == 1)
        return err_set(err, LM_EIO, "%s is read-only: lmlab writes to its run store; fix"
                       " its permissions or point LMLAB_DB at another file", s->path);
    status = exec_sql(s, "PRAGMA journal_mode=WAL", "enabling WAL", err);
    if (!status)
        status = exec_sql(s, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
                          "setting pragmas", err);
    return status;
}

static int count_tables(RunStore *s, int *n, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "SELECT count(*) FROM sqlite_master WHERE type='table'", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = sqlite3_column_int(st, 0);
    else status = db_fail(s, rc, "reading the schema", err);
    sqlite3_finalize(st);
    return status;
}

/* Creates the schema in an empty file or upgrades version 1, in one transaction. */
static int store_migrate(RunStore *s, char *err)
{
    int version = 0, n_tables = 0;
    int status = read_version(s, &version, err);
    if (status || version == RUNSTORE_SCHEMA_VERSION) return status;
    if ((status = exec_sql(s, "BEGIN IMMEDIATE", "creating the schema", err))) return status;
    status = read_version(s, &version, err);   /* another process may have done it */
    if (!status && version == 0) {
        status = count_tables(s, &n_tables, err);
        if (!status && n_tables > 0)
            status = err_set(err, LM_EFORMAT, "%s is an SQLite database but not an lmlab"
                             " run store; choose another file (LMLAB_DB)", s->path);
        if (!status) status = exec_sql(s, SCHEMA_V2, "creating the schema", err);
        if (!status) status = exec_sql(s, SCHEMA_SWEEPS, "creating the schema", err);
    } else if (!status && version == 1) {
        status = exec_sql(s, SCHEMA_SWEEPS, "migrating schema 1 to 2", err);
        if (!status) status = exec_sql(s, MIGRATE_1_2, "migrating schema 1 to 2", err);
    }
    if (!status && version < RUNSTORE_SCHEMA_VERSION)
        status = exec_sql(s, INDEXES, "creating indexes", err);
    if (!status) return tx_commit(s, "creating the schema", err);
    tx_rollback(s);
    return status;
}

typedef struct { long id, pid, last_step; } Orphan;

static int mark_interrupted(RunStore *s, const Orphan *o, char *err)
{
    char reason[256];
    snprintf(reason, sizeof reason, "process %ld ended without closing the run at step %ld",
             o->pid, o->last_step);
    sqlite3_stmt *st;
    int status = prep(s, "UPDATE runs SET status='interrupted', reason=?1,"
                      " ended=coalesce(heartbeat, ?2) WHERE id=?3 AND pid=?4"
                      " AND status IN ('running','paused')", &st, err);
    if (status) return status;
    bind_str(st, 1, reason);
    sqlite3_bind_double(st, 2, now_wall());
    sqlite3_bind_int64(st, 3, o->id);
    sqlite3_bind_int64(st, 4, o->pid);
    return write_stmt(s, st, "repairing an interrupted run", NULL, err);
}

/* Marks runs of dead processes on this host as interrupted. A busy database is not an
 * error here: the repair simply happens at a later open. */
static int store_repair(RunStore *s, char *err)
{
    sqlite3_stmt *st;
    Orphan found[64];
    int n = 0, rc, status = prep(s, "SELECT id, pid, coalesce(last_step, 0), host FROM runs"
                                 " WHERE status IN ('running','paused')", &st, err);
    if (status) return status;
    while (n < 64 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        Orphan o = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                    sqlite3_column_int64(st, 2)};
        if (!strcmp(col_str(st, 3), s->host) && o.pid > 0 && !pid_alive(o.pid))
            found[n++] = o;
    }
    if (n < 64 && rc != SQLITE_DONE) status = db_fail(s, rc, "checking for crashed runs", err);
    sqlite3_finalize(st);
    if (status || n == 0) return status;
    if ((status = exec_sql(s, "BEGIN IMMEDIATE", "repairing interrupted runs", err)))
        return status == LM_EDB ? LM_OK : status;
    for (int i = 0; i < n && !status; i++) status = mark_interrupted(s, &found[i], err);
    if (!status) status = tx_commit(s, "repairing interrupted runs", err);
    else tx_rollback(s);
    return status == LM_EDB ? LM_OK : status;
}

static int store_prepare(RunStore *s, char *err)
{
    int status = prep(s, "INSERT OR REPLACE INTO metrics(run_id, step, epoch, tokens, loss,"
                      " lr, grad_norm, tokens_per_s, elapsed) VALUES(?,?,?,?,?,?,?,?,?)",
                      &s->ins_step, err);
    if (!status)
        status = prep(s, "INSERT OR REPLACE INTO evals(run_id, step, split, loss, ppl, bpc,"
                      " tokens, elapsed) VALUES(?,?,?,?,?,?,?,?)", &s->ins_eval, err);
    if (!status)
        status = prep(s, "UPDATE runs SET heartbeat=?2,"
                      " last_step=(SELECT max(step) FROM metrics WHERE run_id=?1),"
                      " best_val=(SELECT min(loss) FROM evals WHERE run_id=?1"
                      " AND split='valid'),"
                      " final_val=(SELECT loss FROM evals WHERE run_id=?1 AND split='valid'"
                      " ORDER BY step DESC LIMIT 1) WHERE id=?1", &s->upd_run, err);
    return status;
}

static void store_free(RunStore *s)
{
    sqlite3_finalize(s->ins_step);
    sqlite3_finalize(s->ins_eval);
    sqlite3_finalize(s->upd_run);
    if (s->db) sqlite3_close_v2(s->db);
    free(s->steps);
    free(s->evals);
    free(s->path);
    free(s);
}

int runstore_open(const char *path, RunStore **out, char *err)
{
    *out = NULL;
    if (!path || !*path) path = getenv("LMLAB_DB");
    if (!path || !*path) path = "lmlab.db";
    RunStore *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return err_set(err, LM_ENOMEM, "out of memory opening the run store");
    }
    s->max_rows = 256;
    s->next_rows = 256;
    s->max_seconds = 2.0;
    s->last_flush = now_mono();
    if (gethostname(s->host, sizeof s->host - 1)) strcpy(s->host, "localhost");
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                             SQLITE_OPEN_NOMUTEX, NULL);
    int status = LM_OK;
    if (rc != SQLITE_OK)
        status = err_set(err, LM_EIO, "cannot open run store %s: %s (does its directory"
                         " exist and is it writable?)", path,
                         s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
    if (!status) status = store_setup(s, err);
    if (!status) status = store_migrate(s, err);
    if (!status) status = store_repair(s, err);
    if (!status) status = store_prepare(s, err);
    if (status) {
        store_free(s);
        return status;
    }
    *out = s;
    return LM_OK;
}

void runstore_close(RunStore *s)
{
    if (!s) return;
    runstore_flush(s, NULL);
    store_free(s);
}

const char *runstore_path(const RunStore *s) { return s->path; }

void runstore_set_busy_timeout(RunStore *s, int ms) { sqlite3_busy_timeout(s->db, ms); }

void runstore_set_autoflush(RunStore *s, int max_rows, double max_seconds)
{
    s->max_rows = max_rows > 0 ? max_rows : 1;
    s->next_rows = s->max_rows;
    s->max_seconds = max_seconds;
}

/* ---- buffered metrics ------------------------------------------------------------------ */

static int flush_steps(RunStore *s, char *err)
{
    sqlite3_stmt *st = s->ins_step;
    for (long i = 0; i < s->n_steps; i++) {
        const PendingStep *p = &s->steps[i];
        sqlite3_bind_int64(st, 1, p->run);
        sqlite3_bind_int64(st, 2, p->m.step);
        bind_real(st, 3, p->m.epoch);
        sqlite3_bind_int64(st, 4, p->m.tokens);
        bind_real(st, 5, p->m.loss);
        bind_real(st, 6, p->m.lr);
        bind_real(st, 7, p->m.grad_norm);
        bind_real(st, 8, p->m.tokens_per_s);
        bind_real(st, 9, p->m.elapsed);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return db_fail(s, rc, "writing step metrics", err);
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
        if (rc != SQLITE_DONE) return db_fail(s, rc, "writing evaluations", err);
    }
    return LM_OK;
}

static int update_run(RunStore *s, long run, char *err)
{
    sqlite3_bind_int64(s->upd_run, 1, run);
    sqlite3_bind_double(s->upd_run, 2, now_wall());
    int rc = sqlite3_step(s->upd_run);
    sqlite3_reset(s->upd_run);
    return rc == SQLITE_DONE ? LM_OK : db_fail(s, rc, "updating the run", err);
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
    if (s->n_steps + s->n_evals == 0) {
        s->last_flush = now_mono();
        return LM_OK;
    }
    int status = exec_sql(s, "BEGIN IMMEDIATE", "flushing metrics", err);
    if (status) return status;   /* rows stay buffered */
    status = flush_steps(s, err);
    if (!status) status = flush_evals(s, err);
    if (!status) status = flush_runs(s, err);
    if (!status) status = tx_commit(s, "flushing metrics", err);
    else tx_rollback(s);
    if (status) return status;
    s->n_steps = s->n_evals = 0;
    s->next_rows = s->max_rows;
    s->last_flush = now_mono();
    return LM_OK;
}

long runstore_pending(const RunStore *s) { return s->n_steps + s->n_evals; }

static int check_run(RunStore *s, long run, char *err)
{
    if (run == s->known_run && run > 0) return LM_OK;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT 1 FROM runs WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) status = err_set(err, LM_EARG, "no run %ld", run);
    else if (rc != SQLITE_ROW) status = db_fail(s, rc, "looking up a run", err);
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
    if (pending < s->next_rows && now_mono() - s->last_flush < s->max_seconds) return LM_OK;
    int status = runstore_flush(s, err);
    if (status) {
        s->next_rows = pending + (pending > s->max_rows ? pending : s->max_rows);
        s->last_flush = now_mono();
    }
    return status;
}

/* Grows the array whose pointer lives at pp (any element type; the pointer is copied
 * with memcpy to stay clear of aliasing rules) to hold need elements. 0 or -1. */
static int grow(void *pp, long *cap, long need, size_t size)
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
    int status = check_run(s, run, err);
    if (status) return status;
    if (grow(&s->steps, &s->cap_steps, s->n_steps + 1, sizeof *s->steps))
        return err_set(err, LM_ENOMEM, "out of memory buffering step metrics");
    s->steps[s->n_steps].run = run;
    s->steps[s->n_steps++].m = *m;
    return maybe_flush(s, err);
}

int runstore_log_eval(RunStore *s, long run, const EvalMetric *e, char *err)
{
    int status = check_run(s, run, err);
    if (status) return status;
    if (grow(&s->evals, &s->cap_evals, s->n_evals + 1, sizeof *s->evals))
        return err_set(err, LM_ENOMEM, "out of memory buffering evaluations");
    s->evals[s->n_evals].run = run;
    s->evals[s->n_evals].e = *e;
    s->evals[s->n_evals++].e.split[sizeof e->split - 1] = 0;
    return maybe_flush(s, err);
}

/* Forgets buffered rows of a deleted run (they could never be written). */
static void drop_pending(RunStore *s, long run)
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


/* ---- runs ----------------------------------------------------------------------------- */

/* Splits tags on commas/whitespace, drops empties and duplicates, joins with commas. */
static int tags_normalize(const char *in, const char *add, const char *remove, char *out,
                          size_t cap, char *err)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s,%s", in ? in : "", add ? add : "");
    size_t n = 0;
    out[0] = 0;
    for (char *save = NULL, *t = strtok_r(buf, ", \t\r\n", &save); t;
         t = strtok_r(NULL, ", \t\r\n", &save)) {
        if (remove && !strcmp(t, remove)) continue;
        size_t len = strlen(t);
        char probe[300];
        snprintf(probe, sizeof probe, ",%s,", t);
        char have[sizeof buf + 2];
        snprintf(have, sizeof have, ",%s,", out);
        if (strstr(have, probe)) continue;
        if (n + len + 2 > cap)
            return err_set(err, LM_EARG, "too many tags (at most %zu characters)", cap - 1);
        n += (size_t)sprintf(out + n, "%s%s", n ? "," : "", t);
    }
    return LM_OK;
}

int runstore_run_create(RunStore *s, const RunInfo *in, long *id, char *err)
{
    char tags[256];
    int status = tags_normalize(in->tags, NULL, NULL, tags, sizeof tags, err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "INSERT INTO runs(name, created, started, status, config,"
                    " model, data_name, data_hash, tokenizer, tokenizer_hash, params, machine,"
                    " git_rev, tags, checkpoint_dir, sweep_id, pid, host, heartbeat, last_step)"
                    " VALUES(?1,?2,?2,'running',?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,"
                    "?15,?16,?2,0)", &st, err)))
        return status;
    bind_str(st, 1, in->name);
    sqlite3_bind_double(st, 2, now_wall());
    bind_str(st, 3, in->config);
    bind_str(st, 4, in->model);
    bind_str(st, 5, in->data_name);
    bind_str(st, 6, in->data_hash);
    bind_str(st, 7, in->tokenizer);
    bind_str(st, 8, in->tokenizer_hash);
    sqlite3_bind_int64(st, 9, in->params);
    bind_str(st, 10, in->machine);
    bind_str(st, 11, in->git_rev);
    bind_str(st, 12, tags[0] ? tags : NULL);
    bind_str(st, 13, in->checkpoint_dir);
    if (in->sweep_id > 0) sqlite3_bind_int64(st, 14, in->sweep_id);
    sqlite3_bind_int64(st, 15, (long)getpid());
    bind_str(st, 16, s->host);
    status = write_stmt(s, st, "creating a run", NULL, err);
    if (!status) *id = (long)sqlite3_last_insert_rowid(s->db);
    return status;
}

int runstore_run_set_status(RunStore *s, long id, const char *status_text,
                            const char *reason, char *err)
{
    int k = status_index(status_text);
    if (k < 0)
        return err_set(err, LM_EARG, "unknown run status '%s' (running, paused, finished,"
                       " stopped, diverged, interrupted, failed)", status_text ? status_text : "");
    int status = runstore_flush(s, err), changes = 0;
    sqlite3_stmt *st;
    if (status || (status = prep(s, "UPDATE runs SET status=?1, reason=?2, ended=?3,"
                                 " heartbeat=?4 WHERE id=?5", &st, err)))
        return status;
    double now = now_wall();
    bind_str(st, 1, status_text);
    bind_str(st, 2, reason);
    if (k >= 2) sqlite3_bind_double(st, 3, now);   /* terminal */
    sqlite3_bind_double(st, 4, now);
    sqlite3_bind_int64(st, 5, id);
    status = write_stmt(s, st, "setting the run status", &changes, err);
    if (!status && changes == 0) status = err_set(err, LM_EARG, "no run %ld", id);
    return status;
}

/* Reads a run's status, pid and host; LM_EARG when it does not exist. */
static int run_owner(RunStore *s, long id, char *status, long *pid, char *host, char *err)
{
    sqlite3_stmt *st;
    int rc, st_code = prep(s, "SELECT status, pid, host FROM runs WHERE id=?", &st, err);
    if (st_code) return st_code;
    sqlite3_bind_int64(st, 1, id);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        col_copy(st, 0, status, 16);
        *pid = sqlite3_column_int64(st, 1);
        col_copy(st, 2, host, 64);
    } else {
        st_code = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no run %ld", id)
                                    : db_fail(s, rc, "reading a run", err);
    }
    sqlite3_finalize(st);
    return st_code;
}

/* LM_ESTATE when another live process on this host is training the run. */
static int check_not_live(RunStore *s, long id, const char *action, char *err)
{
    char status[16], host[64];
    long pid = 0;
    int st = run_owner(s, id, status, &pid, host, err);
    if (st) return st;
    if ((!strcmp(status, "running") || !strcmp(status, "paused")) && !strcmp(host, s->host)
        && pid != (long)getpid() && pid_alive(pid))
        return err_set(err, LM_ESTATE, "run %ld is being trained by process %ld; stop it"
                       " before you %s it", id, pid, action);
    return LM_OK;
}

int runstore_run_claim(RunStore *s, long id, char *err)
{
    int status = check_not_live(s, id, "resume", err);
    sqlite3_stmt *st;
    if (status || (status = prep(s, "UPDATE runs SET status='running', reason=NULL,"
                                 " ended=NULL, pid=?1, host=?2, heartbeat=?3 WHERE id=?4",
                                 &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, (long)getpid());
    bind_str(st, 2, s->host);
    sqlite3_bind_double(st, 3, now_wall());
    sqlite3_bind_int64(st, 4, id);
    return write_stmt(s, st, "claiming a run", NULL, err);
}

int runstore_log_gates(RunStore *s, long run, const GateStat *g, int n, char *err)
{
    sqlite3_stmt *st;
    int status = check_run(s, run, err);
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
        if (rc != SQLITE_DONE) status = db_fail(s, rc, "writing gate statistics", err);
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
    int status = check_run(s, run, err);
    if (status || (status = prep(s, "INSERT INTO samples(run_id, step, prompt, settings, text,"
                                 " created) VALUES(?,?,?,?,?,?)", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, step);
    bind_str(st, 3, prompt);
    bind_str(st, 4, settings);
    bind_str(st, 5, text);
    sqlite3_bind_double(st, 6, now_wall());
    return write_stmt(s, st, "writing a sample", NULL, err);
}

int runstore_log_checkpoint(RunStore *s, long run, const CheckpointRecord *c, char *err)
{
    sqlite3_stmt *st;
    int status = check_run(s, run, err);
    if (status || (status = exec_sql(s, "BEGIN IMMEDIATE", "recording a checkpoint", err)))
        return status;
    if (c->is_best && !(status = prep(s, "UPDATE checkpoints SET is_best=0 WHERE run_id=?",
                                      &st, err))) {
        sqlite3_bind_int64(st, 1, run);
        status = write_stmt(s, st, "recording a checkpoint", NULL, err);
    }
    if (!status && !(status = prep(s, "INSERT OR REPLACE INTO checkpoints(run_id, step, path,"
                                   " val_loss, is_best) VALUES(?,?,?,?,?)", &st, err))) {
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, c->step);
        bind_str(st, 3, c->path);
        bind_real(st, 4, c->val_loss);
        sqlite3_bind_int(st, 5, c->is_best ? 1 : 0);
        status = write_stmt(s, st, "recording a checkpoint", NULL, err);
    }
    if (!status) return tx_commit(s, "recording a checkpoint", err);
    tx_rollback(s);
    return status;
}

/* Rewrites a run's tags inside one write transaction (read-modify-write is atomic). */
static int tags_update(RunStore *s, long id, const char *replace, const char *add,
                       const char *remove, char *err)
{
    char tags[256];
    sqlite3_stmt *st;
    int status = exec_sql(s, "BEGIN IMMEDIATE", "updating tags", err), rc, changes = 0;
    if (status) return status;
    if (!(status = prep(s, "SELECT tags FROM runs WHERE id=?", &st, err))) {
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            status = tags_normalize(replace ? replace : col_str(st, 0), add, remove, tags,
                                    sizeof tags, err);
        else
            status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no run %ld", id)
                                       : db_fail(s, rc, "reading tags", err);
        sqlite3_finalize(st);
    }
    if (!status && !(status = prep(s, "UPDATE runs SET tags=? WHERE id=?", &st, err))) {
        bind_str(st, 1, tags[0] ? tags : NULL);
        sqlite3_bind_int64(st, 2, id);
        status = write_stmt(s, st, "updating tags", &changes, err);
    }
    if (!status) return tx_commit(s, "updating tags", err);
    tx_rollback(s);
    return status;
}

static int check_tag(const char *tag, char *err)
{
    if (!tag || !*tag) return err_set(err, LM_EARG, "empty tag");
    for (const char *p = tag; *p; p++)
        if (*p == ',' || isspace((unsigned char)*p))
            return err_set(err, LM_EARG, "tag '%s' contains a comma or space", tag);
    return strlen(tag) > 64 ? err_set(err, LM_EARG, "tag '%s' is too long", tag) : LM_OK;
}

int runstore_set_tags(RunStore *s, long id, const char *tags, char *err)
{
    return tags_update(s, id, tags ? tags : "", NULL, NULL, err);
}

int runstore_add_tag(RunStore *s, long id, const char *tag, char *err)
{
    int status = check_tag(tag, err);
    return status ? status : tags_update(s, id, NULL, tag, NULL, err);
}

int runstore_remove_tag(RunStore *s, long id, const char *tag, char *err)
{
    int status = check_tag(tag, err);
    return status ? status : tags_update(s, id, NULL, NULL, tag, err);
}

int runstore_set_note(RunStore *s, long id, const char *note, char *err)
{
    sqlite3_stmt *st;
    int changes = 0, status = prep(s, "UPDATE runs SET notes=? WHERE id=?", &st, err);
    if (status) return status;
    bind_str(st, 1, note);
    sqlite3_bind_int64(st, 2, id);
    status = write_stmt(s, st, "setting a note", &changes, err);
    return !status && !changes ? err_set(err, LM_EARG, "no run %ld", id) : status;
}

int runstore_set_checkpoint_dir(RunStore *s, long id, const char *dir, char *err)
{
    sqlite3_stmt *st;
    int changes = 0, status = prep(s, "UPDATE runs SET checkpoint_dir=? WHERE id=?", &st, err);
    if (status) return status;
    bind_str(st, 1, dir);
    sqlite3_bind_int64(st, 2, id);
    status = write_stmt(s, st, "setting the checkpoint directory", &changes, err);
    return !status && !changes ? err_set(err, LM_EARG, "no run %ld", id) : status;
}

/* Collects a run's checkpoint paths (malloc'd, NUL-separated list in *paths). */
static int checkpoint_paths(RunStore *s, long id, char **paths, size_t *len, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT path FROM checkpoints WHERE run_id=? AND path IS NOT NULL",
                          &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    *paths = NULL;
    *len = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *p = col_str(st, 0);
        size_t l = strlen(p) + 1;
        char *q = realloc(*paths, *len + l);
        if (!q) { status = err_set(err, LM_ENOMEM, "out of memory"); break; }
        memcpy(q + *len, p, l);
        *paths = q;
        *len += l;
    }
    if (!status && rc != SQLITE_DONE) status = db_fail(s, rc, "listing checkpoints", err);
    sqlite3_finalize(st);
    return status;
}

/* Removes the regular files of dir (non-recursive) and dir itself; 0 or -1. */
static int remove_dir_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    int bad = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char p[1024];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!lstat(p, &sb) && S_ISREG(sb.st_mode) && unlink(p)) bad = 1;
    }
    closedir(d);
    return bad || rmdir(dir) ? -1 : 0;
}

static int count_sharing(RunStore *s, long id, const char *dir, long *n, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT count(*) FROM runs WHERE checkpoint_dir=? AND id<>?",
                          &st, err);
    if (status) return status;
    bind_str(st, 1, dir);
    sqlite3_bind_int64(st, 2, id);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) *n = sqlite3_column_int64(st, 0);
    else status = db_fail(s, rc, "reading runs", err);
    sqlite3_finalize(st);
    return status;
}

static int delete_files(RunStore *s, long id, const char *paths, size_t len,
                        const char *dir, char *err)
{
    int bad = 0;
    for (size_t i = 0; i < len; i += strlen(paths + i) + 1)
        if (unlink(paths + i) && errno != ENOENT) bad = 1;
    long sharing = 1;
    if (dir[0] && strcmp(dir, "/") && strcmp(dir, ".") && !count_sharing(s, id, dir, &sharing,
                                                                          NULL)
        && sharing == 0 && remove_dir_files(dir))
        bad = 1;
    return bad ? err_set(err, LM_EIO, "run %ld deleted, but some checkpoint files could not"
                         " be removed (%s)", id, dir[0] ? dir : "listed paths") : LM_OK;
}

int runstore_delete_run(RunStore *s, long id, int delete_checkpoints, char *err)
{
    char *paths = NULL, dir[512] = "";
    size_t len = 0;
    sqlite3_stmt *st;
    int status = check_not_live(s, id, "delete", err);
    if (!status && delete_checkpoints) status = checkpoint_paths(s, id, &paths, &len, err);
    if (!status && delete_checkpoints &&
        !(status = prep(s, "SELECT coalesce(checkpoint_dir,'') FROM runs WHERE id=?", &st,
                        err))) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) col_copy(st, 0, dir, sizeof dir);
        sqlite3_finalize(st);
    }
    if (!status && !(status = prep(s, "DELETE FROM runs WHERE id=?", &st, err))) {
        sqlite3_bind_int64(st, 1, id);   /* children go by ON DELETE CASCADE */
        status = write_stmt(s, st, "deleting a run", NULL, err);
    }
    if (!status) drop_pending(s, id);
    if (!status && delete_checkpoints) status = delete_files(s, id, paths, len, dir, err);
    free(paths);
    return status;
}

/* ---- reading runs ---------------------------------------------------------------------- */

#define RUN_COLS "id, name, status, model, data_name, tags, created, started, ended, params," \
    " last_step, sweep_id, best_val, final_val, config, reason, checkpoint_dir, notes," \
    " data_hash, tokenizer, git_rev, machine, host, pid"
enum { RC_CONFIG = 14 };

static int row_fill(sqlite3_stmt *st, RunRow *r)
{
    r->id = sqlite3_column_int64(st, 0);
    col_copy(st, 1, r->name, sizeof r->name);
    col_copy(st, 2, r->status, sizeof r->status);
    col_copy(st, 3, r->model, sizeof r->model);
    col_copy(st, 4, r->data_name, sizeof r->data_name);
    col_copy(st, 5, r->tags, sizeof r->tags);
    r->created = sqlite3_column_double(st, 6);
    r->started = sqlite3_column_double(st, 7);
    r->ended = sqlite3_column_double(st, 8);
    r->params = sqlite3_column_int64(st, 9);
    r->last_step = sqlite3_column_int64(st, 10);
    r->sweep_id = sqlite3_column_int64(st, 11);
    r->best_val = col_real(st, 12);
    r->final_val = col_real(st, 13);
    r->config = strdup(col_str(st, 14));
    col_copy(st, 15, r->reason, sizeof r->reason);
    col_copy(st, 16, r->checkpoint_dir, sizeof r->checkpoint_dir);
    r->notes = strdup(col_str(st, 17));
    col_copy(st, 18, r->data_hash, sizeof r->data_hash);
    col_copy(st, 19, r->tokenizer, sizeof r->tokenizer);
    col_copy(st, 20, r->git_rev, sizeof r->git_rev);
    col_copy(st, 21, r->machine, sizeof r->machine);
    col_copy(st, 22, r->host, sizeof r->host);
    r->pid = sqlite3_column_int64(st, 23);
    return r->config && r->notes ? LM_OK : LM_ENOMEM;
}

void runstore_row_free(RunRow *row)
{
    if (!row) return;
    free(row->config);
    free(row->notes);
    row->config = row->notes = NULL;
}

void runstore_rows_free(RunRow *rows, int n)
{
    for (int i = 0; rows && i < n; i++) runstore_row_free(&rows[i]);
    free(rows);
}

int runstore_get(RunStore *s, long id, RunRow *row, char *err)
{
    sqlite3_stmt *st;
    memset(row, 0, sizeof *row);
    int rc, status = prep(s, "SELECT " RUN_COLS " FROM runs WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (row_fill(st, row)) {
            runstore_row_free(row);
            status = err_set(err, LM_ENOMEM, "out of memory reading run %ld", id);
        }
    } else {
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no run %ld", id)
                                   : db_fail(s, rc, "reading a run", err);
    }
    sqlite3_finalize(st);
    return status;
}

/* Finds key in "key=value" lines; copies the trimmed value into out. 1 found, 0 not. */
static int config_value(const char *text, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        while (*line == ' ' || *line == '\t') line++;
        const char *p = line + klen;
        if (!strncmp(line, key, klen)) {
            while (*p == ' ' || *p == '\t') p++;
            if (*p == '=') {
                p++;
                while (*p == ' ' || *p == '\t') p++;
                size_t n = end ? (size_t)(end - p) : strlen(p);
                while (n && isspace((unsigned char)p[n - 1])) n--;
                snprintf(out, cap, "%.*s", (int)n, p);
                return 1;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* ---- list filters --------------------------------------------------------------------- */

enum { K_NUM, K_TEXT, K_TAG, K_SINCE, K_UNTIL, K_CONFIG };
enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_HAS };

static const struct { const char *key, *col; int kind; } FILTER_KEYS[] = {
    {"id", "id", K_NUM}, {"name", "name", K_TEXT}, {"status", "status", K_TEXT},
    {"model", "model", K_TEXT}, {"data", "data_name", K_TEXT},
    {"tokenizer", "tokenizer", K_TEXT}, {"machine", "machine", K_TEXT},
    {"git", "git_rev", K_TEXT}, {"host", "host", K_TEXT}, {"params", "params", K_NUM},
    {"steps", "last_step", K_NUM}, {"best", "best_val", K_NUM},
    {"final", "final_val", K_NUM}, {"sweep", "sweep_id", K_NUM}, {"tag", NULL, K_TAG},
    {"since", NULL, K_SINCE}, {"until", NULL, K_UNTIL},
};
static const char *OP_TEXT[] = {"=", "!=", "<", "<=", ">", ">=", "~"};
static const char *OP_SQL[] = {"=", "IS NOT", "<", "<=", ">", ">="};

typedef struct {
    char key[64], val[256];
    int op, kind, is_num;
    const char *col;
    double num;
} Term;

static int parse_number(const char *v, double *x)
{
    char *end;
    errno = 0;
    *x = strtod(v, &end);
    return *v && !*end && !errno && !isnan(*x);
}

/* YYYY-MM-DD[THH:MM] in local time, or N[dhm] meaning that long ago. */
static int parse_when(const char *v, double *t)
{
    int y, mo, d, h = 0, mi = 0, n = 0;
    char unit;
    if (sscanf(v, "%d%c%n", &y, &unit, &n) == 2 && !v[n] && y > 0 &&
        (unit == 'd' || unit == 'h' || unit == 'm')) {
        *t = now_wall() - y * (unit == 'd' ? 86400.0 : unit == 'h' ? 3600.0 : 60.0);
        return 1;
    }
    n = 0;
    int k = sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &n);
    if (k != 3) return 0;
    if (v[n] && (sscanf(v + n, "T%2d:%2d", &h, &mi) != 2)) return 0;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                    .tm_min = mi, .tm_isdst = -1};
    time_t tt = mktime(&tm);
    *t = (double)tt;
    return tt != (time_t)-1 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

static int bad_term(const char *term, int len, const char *why, char *err)
{
    return err_set(err, LM_EARG, "invalid filter term '%.*s': %s (use key OP value with OP one"
                   " of = != < <= > >= ~; keys: id name status model data tag since until"
                   " params steps best final sweep, or any config key)", len, term, why);
}

/* Parses one term at *p (advancing *p); classifies the key. */
static int parse_term(const char **pp, Term *t, char *err)
{
    const char *start = *pp, *p = start;
    size_t k = 0;
    while (*p && !isspace((unsigned char)*p) && !strchr("=!<>~", *p) && k < sizeof t->key - 1)
        t->key[k++] = *p++;
    t->key[k] = 0;
    int len = (int)strcspn(start, " \t\n");
    static const int try_ops[] = {OP_NE, OP_LE, OP_GE, OP_EQ, OP_LT, OP_GT, OP_HAS};
    int op = -1;
    for (int i = 0; i < 7 && op < 0; i++)
        if (!strncmp(p, OP_TEXT[try_ops[i]], strlen(OP_TEXT[try_ops[i]]))) op = try_ops[i];
    if (op < 0) return bad_term(start, len, "no operator", err);
    p += strlen(OP_TEXT[op]);
    int ok = k > 0 && (isalpha((unsigned char)t->key[0]) || t->key[0] == '_');
    for (size_t i = 0; i < k; i++)
        ok = ok && (isalnum((unsigned char)t->key[i]) || strchr("_.-", t->key[i]));
    if (!ok) return bad_term(start, len, "bad key", err);
    const char *v = p, *vend;
    if (*p == '"') {
        v = ++p;
        if (!(vend = strchr(p, '"'))) return bad_term(start, (int)strlen(start),
                                                      "unclosed quote", err);
        p = vend + 1;
        len = (int)(p - start);
    } else {
        vend = v + strcspn(v, " \t\n");
        p = vend;
        if (vend == v) return bad_term(start, len, "no value", err);
    }
    snprintf(t->val, sizeof t->val, "%.*s", (int)(vend - v), v);
    t->op = op;
    t->is_num = parse_number(t->val, &t->num);
    *pp = p;
    return LM_OK;
}

static int classify_term(Term *t, const char *term, char *err)
{
    int len = (int)strcspn(term, " \t\n");
    t->kind = K_CONFIG;
    t->col = NULL;
    for (size_t i = 0; i < sizeof FILTER_KEYS / sizeof *FILTER_KEYS; i++)
        if (!strcmp(t->key, FILTER_KEYS[i].key)) {
            t->kind = FILTER_KEYS[i].kind;
            t->col = FILTER_KEYS[i].col;
        }
    if (t->kind == K_NUM && t->op == OP_HAS)
        return bad_term(term, len, "~ compares text, not numbers", err);
    if (t->kind == K_TAG && t->op != OP_EQ && t->op != OP_NE)
        return bad_term(term, len, "tag takes = or !=", err);
    if (t->kind == K_SINCE || t->kind == K_UNTIL) {
        if (t->op != OP_EQ) return bad_term(term, len, "since/until take =", err);
        if (!parse_when(t->val, &t->num))
            return bad_term(term, len, "dates are YYYY-MM-DD[THH:MM] or Nd/Nh/Nm", err);
    }
    return LM_OK;
}

/* Appends the SQL fragment of one term (constant text only; the value is bound). */
static void term_sql(const Term *t, char *sql, size_t cap)
{
    size_t n = strlen(sql);
    if (t->kind == K_NUM && !t->is_num)
        snprintf(sql + n, cap - n, " AND 0");   /* not a number: matches nothing */
    else if (t->kind == K_TAG)
        snprintf(sql + n, cap - n, " AND instr(',' || coalesce(tags,'') || ',', ',' || ? ||"
                 " ',') %s 0", t->op == OP_EQ ? ">" : "=");
    else if (t->kind == K_SINCE || t->kind == K_UNTIL)
        snprintf(sql + n, cap - n, " AND created %s ?", t->kind == K_SINCE ? ">=" : "<");
    else if (t->op == OP_HAS)
        snprintf(sql + n, cap - n, " AND instr(lower(%s), lower(?)) > 0", t->col);
    else
        snprintf(sql + n, cap - n, " AND %s %s ?", t->col, OP_SQL[t->op]);
}

static int term_bind(const Term *t, sqlite3_stmt *st, int i)
{
    if (t->kind == K_NUM && !t->is_num) return i;
    if (t->kind == K_SINCE || t->kind == K_UNTIL || t->kind == K_NUM)
        sqlite3_bind_double(st, i, t->num);
    else
        sqlite3_bind_text(st, i, t->val, -1, SQLITE_TRANSIENT);
    return i + 1;
}

/* A config term against a run's config text (missing key: no match). */
static int term_match_config(const Term *t, const char *config)
{
    char v[256];
    double x;
    if (!config_value(config, t->key, v, sizeof v)) return 0;
    if (t->op == OP_HAS) return strcasestr(v, t->val) != NULL;
    int c;
    if (t->is_num && parse_number(v, &x)) c = x < t->num ? -1 : x > t->num;
    else c = strcmp(v, t->val);
    switch (t->op) {
    case OP_EQ: return c == 0;
    case OP_NE: return c != 0;
    case OP_LT: return c < 0;
    case OP_LE: return c <= 0;
    case OP_GT: return c > 0;
    default: return c >= 0;
    }
}

#define MAX_TERMS 24

static int parse_filter(const char *filter, Term *terms, int *nt, char *err)
{
    const char *p = filter ? filter : "";
    *nt = 0;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) return LM_OK;
        if (*nt == MAX_TERMS) return err_set(err, LM_EARG, "too many filter terms (max %d)",
                                             MAX_TERMS);
        const char *start = p;
        Term *t = &terms[*nt];
        memset(t, 0, sizeof *t);
        int status = parse_term(&p, t, err);
        if (!status) status = classify_term(t, start, err);
        if (status) return status;
        (*nt)++;
    }
}

static const char *list_order(const char *sort)
{
    if (!sort || !*sort || !strcmp(sort, "recent")) return " ORDER BY created DESC, id DESC";
    if (!strcmp(sort, "best")) return " ORDER BY best_val IS NULL, best_val, id";
    if (!strcmp(sort, "model")) return " ORDER BY model, created DESC, id DESC";
    if (!strcmp(sort, "name")) return " ORDER BY name, id";
    return NULL;
}

static int config_terms_match(const Term *terms, int nt, const char *config)
{
    for (int i = 0; i < nt; i++)
        if (terms[i].kind == K_CONFIG && !term_match_config(&terms[i], config)) return 0;
    return 1;
}

/* Prepares "SELECT <what> FROM runs WHERE 1 <sql terms><tail>" with the terms bound;
 * *next receives the next free parameter index. */
static int list_prepare(RunStore *s, const char *what, const Term *terms, int nt,
                        const char *tail, sqlite3_stmt **st, int *next, char *err)
{
    char sql[8192];
    snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE 1", what);
    for (int i = 0; i < nt; i++)
        if (terms[i].kind != K_CONFIG) term_sql(&terms[i], sql, sizeof sql);
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql), "%s", tail);
    int status = prep(s, sql, st, err);
    if (status) return status;
    *next = 1;
    for (int i = 0; i < nt; i++)
        if (terms[i].kind != K_CONFIG) *next = term_bind(&terms[i], *st, *next);
    return LM_OK;
}

/* Allocates room for cap rows. Untouched pages cost nothing, so an upper bound is fine;
 * when the bound is exact the pages are populated in one call, because faulting in
 * ~15 MB of fresh RunRows one page at a time cost more than the query itself on the
 * test VM (about 140 ms against 10 ms for 10,000 runs). */
static RunRow *rows_alloc(long cap, int exact)
{
    RunRow *rows = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *rows);
#ifdef __linux__
    size_t bytes = (size_t)cap * sizeof *rows, page = 4096;
    uintptr_t a = ((uintptr_t)rows + page - 1) & ~(uintptr_t)(page - 1);
    if (rows && exact && bytes > (1u << 20))
        madvise((void *)a, ((uintptr_t)rows + bytes - a) & ~(uintptr_t)(page - 1),
                23 /* MADV_POPULATE_WRITE, Linux 5.14+; older kernels ignore it */);
#else
    (void)exact;
#endif
    return rows;
}

static int list_count(RunStore *s, const Term *terms, int nt, long *count, char *err)
{
    sqlite3_stmt *st;
    int next, rc, status = list_prepare(s, "count(*)", terms, nt, "", &st, &next, err);
    if (status) return status;
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) *count = sqlite3_column_int64(st, 0);
    else status = db_fail(s, rc, "counting runs", err);
    sqlite3_finalize(st);
    return status;
}

/* Steps the list query into rows (room for cap), keeping rows that pass config terms. */
static int list_collect(RunStore *s, sqlite3_stmt *st, const Term *terms, int nt, long cap,
                        RunRow *rows, int *n, char *err)
{
    int rc = SQLITE_DONE;
    while (*n < cap && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!config_terms_match(terms, nt, col_str(st, RC_CONFIG))) continue;
        if (row_fill(st, &rows[(*n)++]))
            return err_set(err, LM_ENOMEM, "out of memory listing runs");
    }
    return *n >= cap || rc == SQLITE_DONE ? LM_OK : db_fail(s, rc, "listing runs", err);
}

int runstore_list(RunStore *s, const char *filter, const char *sort, int limit,
                  RunRow **rows, int *n, char *err)
{
    Term terms[MAX_TERMS];
    int nt = 0, n_config = 0, next;
    long cap = 0;
    *rows = NULL;
    *n = 0;
    const char *order = list_order(sort);
    if (!order)
        return err_set(err, LM_EARG, "unknown sort '%s' (best, recent, model, name)", sort);
    int status = parse_filter(filter, terms, &nt, err);
    for (int i = 0; i < nt; i++) n_config += terms[i].kind == K_CONFIG;
    if (!status) status = list_count(s, terms, nt, &cap, err);
    if (status || cap == 0) return status;
    if (limit > 0 && cap > limit) cap = limit;
    sqlite3_stmt *st;
    if ((status = list_prepare(s, RUN_COLS, terms, nt, order, &st, &next, err))) return status;
    if (!(*rows = rows_alloc(cap, n_config == 0))) {
        sqlite3_finalize(st);
        return err_set(err, LM_ENOMEM, "out of memory listing %ld runs", cap);
    }
    status = list_collect(s, st, terms, nt, cap, *rows, n, err);
    sqlite3_finalize(st);
    if (status) {
        runstore_rows_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

/* ---- series ----------------------------------------------------------------------------- */

static const struct { const char *name, *sql; } SERIES[] = {
    {"loss", "SELECT step, loss FROM metrics WHERE run_id=? ORDER BY step"},
    {"lr", "SELECT step, lr FROM metrics WHERE run_id=? ORDER BY step"},
    {"grad_norm", "SELECT step, grad_norm FROM metrics WHERE run_id=? ORDER BY step"},
    {"tokens_per_s", "SELECT step, tokens_per_s FROM metrics WHERE run_id=? ORDER BY step"},
    {"elapsed", "SELECT step, elapsed FROM metrics WHERE run_id=? ORDER BY step"},
    {"tokens", "SELECT step, tokens FROM metrics WHERE run_id=? ORDER BY step"},
    {"epoch", "SELECT step, epoch FROM metrics WHERE run_id=? ORDER BY step"},
    {"val_loss", "SELECT step, loss FROM evals WHERE run_id=? AND split='valid' ORDER BY step"},
    {"val_ppl", "SELECT step, ppl FROM evals WHERE run_id=? AND split='valid' ORDER BY step"},
    {"val_bpc", "SELECT step, bpc FROM evals WHERE run_id=? AND split='valid' ORDER BY step"},
    {"test_loss", "SELECT step, loss FROM evals WHERE run_id=? AND split='test' ORDER BY step"},
    {"test_ppl", "SELECT step, ppl FROM evals WHERE run_id=? AND split='test' ORDER BY step"},
    {"test_bpc", "SELECT step, bpc FROM evals WHERE run_id=? AND split='test' ORDER BY step"},
};

static int read_points(RunStore *s, sqlite3_stmt *st, SeriesPoint **pts, int *n, char *err)
{
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow(pts, &cap, *n + 1, sizeof **pts))
            return err_set(err, LM_ENOMEM, "out of memory reading a series");
        (*pts)[*n].step = sqlite3_column_int64(st, 0);
        (*pts)[(*n)++].value = col_real(st, 1);
    }
    return rc == SQLITE_DONE ? LM_OK : db_fail(s, rc, "reading a series", err);
}

int runstore_series(RunStore *s, long run, const char *metric, SeriesPoint **pts, int *n,
                    char *err)
{
    const char *sql = NULL;
    int layer = -1, level = -1, k = 0;
    *pts = NULL;
    *n = 0;
    for (size_t i = 0; metric && i < sizeof SERIES / sizeof *SERIES; i++)
        if (!strcmp(metric, SERIES[i].name)) sql = SERIES[i].sql;
    if (!sql && metric && sscanf(metric, "gate:%d:%d%n", &layer, &level, &k) == 2 &&
        !metric[k] && layer >= 0 && level >= 0)
        sql = "SELECT step, mean FROM gates WHERE run_id=? AND layer=? AND level=?"
              " ORDER BY step";
    if (!sql)
        return err_set(err, LM_EARG, "unknown metric '%s' (loss, lr, grad_norm, tokens_per_s,"
                       " elapsed, tokens, epoch, val_loss, val_ppl, val_bpc, test_loss,"
                       " test_ppl, test_bpc, gate:<layer>:<level>)", metric ? metric : "");
    if (runstore_pending(s)) runstore_flush(s, NULL);   /* failure: rows stay pending */
    sqlite3_stmt *st;
    int status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    if (layer >= 0) {
        sqlite3_bind_int(st, 2, layer);
        sqlite3_bind_int(st, 3, level);
    }
    status = read_points(s, st, pts, n, err);
    sqlite3_finalize(st);
    if (!status && *n == 0) status = check_run(s, run, err);   /* empty, or no such run */
    if (status) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return status;
}

/* ---- parsed configs, text buffers ------------------------------------------------------- */

typedef struct {
    char *buf;
    char **key, **val;
    int n;
} Cfg;

static void cfg_free(Cfg *c)
{
    free(c->buf);
    free(c->key);
    free(c->val);
    memset(c, 0, sizeof *c);
}

static char *trim(char *a)
{
    while (isspace((unsigned char)*a)) a++;
    size_t n = strlen(a);
    while (n && isspace((unsigned char)a[n - 1])) a[--n] = 0;
    return a;
}

/* Splits "key=value" lines (blank lines and '#' comments skipped). 0 or -1 (memory). */
static int cfg_parse(const char *text, Cfg *c)
{
    memset(c, 0, sizeof *c);
    int lines = 1;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    c->buf = strdup(text);
    c->key = malloc(sizeof(char *) * (size_t)lines);
    c->val = malloc(sizeof(char *) * (size_t)lines);
    if (!c->buf || !c->key || !c->val) {
        cfg_free(c);
        return -1;
    }
    for (char *save = NULL, *line = strtok_r(c->buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        line = trim(line);
        if (!eq || line[0] == '#') continue;
        *eq = 0;
        c->key[c->n] = trim(line);
        c->val[c->n++] = trim(eq + 1);
    }
    return 0;
}

static const char *cfg_get(const Cfg *c, const char *key)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->key[i], key)) return c->val[i];
    return NULL;
}

/* The union of the keys of n configs, in first-seen order (pointers into the configs). */
static const char **cfg_union(const Cfg *c, int n, int *n_keys)
{
    int total = 0;
    for (int i = 0; i < n; i++) total += c[i].n;
    const char **keys = malloc(sizeof(char *) * (size_t)(total + 1));
    *n_keys = 0;
    for (int i = 0; keys && i < n; i++)
        for (int j = 0; j < c[i].n; j++) {
            int seen = 0;
            for (int k = 0; k < *n_keys && !seen; k++) seen = !strcmp(keys[k], c[i].key[j]);
            if (!seen) keys[(*n_keys)++] = c[i].key[j];
        }
    return keys;
}

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} StrBuf;

static void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->oom || need < 0) return;
    if (b->n + (size_t)need + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)need;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

/* ---- compare ---------------------------------------------------------------------------- */

/* Loads n runs and their parsed configs; on failure frees what it loaded. */
static int load_runs(RunStore *s, const long *ids, int n, RunRow *rows, Cfg *cfgs, char *err)
{
    for (int i = 0; i < n; i++) {
        int status = runstore_get(s, ids[i], &rows[i], err);
        if (!status && cfg_parse(rows[i].config, &cfgs[i])) {
            runstore_row_free(&rows[i]);
            status = err_set(err, LM_ENOMEM, "out of memory");
        }
        if (status) {
            for (int j = 0; j < i; j++) {
                runstore_row_free(&rows[j]);
                cfg_free(&cfgs[j]);
            }
            return status;
        }
    }
    return LM_OK;
}

static void free_runs(RunRow *rows, Cfg *cfgs, int n)
{
    for (int i = 0; rows && cfgs && i < n; i++) {
        runstore_row_free(&rows[i]);
        cfg_free(&cfgs[i]);
    }
    free(rows);
    free(cfgs);
}

static double mean_tokens_per_s(RunStore *s, long id)
{
    sqlite3_stmt *st;
    double v = NAN;
    if (prep(s, "SELECT avg(tokens_per_s) FROM metrics WHERE run_id=?", &st, NULL)) return v;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) v = col_real(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void cmp_line(StrBuf *b, const char *label, char (*cells)[64], int n, int w0, int w)
{
    sb_printf(b, "%-*s", w0, label);
    for (int i = 0; i < n; i++) sb_printf(b, "  %-*.*s", w, w, cells[i]);
    sb_printf(b, "\n");
}

/* Config lines of keys whose values differ; returns how many. */
static int cmp_config(StrBuf *b, const Cfg *cfgs, int n, char (*cells)[64], int w0, int w)
{
    int n_keys = 0, shown = 0;
    const char **keys = cfg_union(cfgs, n, &n_keys);
    for (int k = 0; keys && k < n_keys; k++) {
        int differ = 0;
        for (int i = 0; i < n; i++) {
            const char *v = cfg_get(&cfgs[i], keys[k]);
            snprintf(cells[i], 64, "%s", v ? v : "-");
            differ |= strcmp(cells[i], cells[0]) != 0;
        }
        if (differ) {
            cmp_line(b, keys[k], cells, n, w0, w);
            shown++;
        }
    }
    free(keys);
    return shown;
}

static void cmp_results(RunStore *s, StrBuf *b, const RunRow *r, int n, char (*cells)[64],
                        int w0, int w)
{
    static const char *labels[] = {"best val loss", "final val loss", "steps", "params",
                                   "tokens/s"};
    for (int line = 0; line < 5; line++) {
        for (int i = 0; i < n; i++) {
            double v = line == 0 ? r[i].best_val : line == 1 ? r[i].final_val
                     : line == 2 ? (double)r[i].last_step : line == 3 ? (double)r[i].params
                                 : mean_tokens_per_s(s, r[i].id);
            if (isnan(v)) snprintf(cells[i], 64, "-");
            else if (line < 2) snprintf(cells[i], 64, "%.4f", v);
            else snprintf(cells[i], 64, "%.0f", v);
        }
        cmp_line(b, labels[line], cells, n, w0, w);
    }
}

int runstore_compare(RunStore *s, const long *ids, int n, char **text, char *err)
{
    *text = NULL;
    if (n < 1) return err_set(err, LM_EARG, "compare needs at least one run");
    if (runstore_pending(s)) runstore_flush(s, NULL);   /* failure: rows stay pending */
    RunRow *rows = calloc((size_t)n, sizeof *rows);
    Cfg *cfgs = calloc((size_t)n, sizeof *cfgs);
    char (*cells)[64] = calloc((size_t)n, sizeof *cells);
    if (!rows || !cfgs || !cells) {
        free(rows), free(cfgs), free(cells);
        return err_set(err, LM_ENOMEM, "out of memory comparing runs");
    }
    int status = load_runs(s, ids, n, rows, cfgs, err);
    if (status) {
        free(rows), free(cfgs), free(cells);
        return status;
    }
    int w0 = 16, w = 12;
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(rows[i].name);
        w = l > w ? (l > 40 ? 40 : l) : w;
        for (int k = 0; k < cfgs[i].n; k++) {
            int kl = (int)strlen(cfgs[i].key[k]), vl = (int)strlen(cfgs[i].val[k]);
            w0 = kl + 1 > w0 ? kl + 1 : w0;
            w = vl > w ? (vl > 40 ? 40 : vl) : w;
        }
    }
    StrBuf b = {0};
    for (int i = 0; i < n; i++) snprintf(cells[i], 64, "run %ld", rows[i].id);
    cmp_line(&b, "", cells, n, w0, w);
    for (int i = 0; i < n; i++) snprintf(cells[i], 64, "%s", rows[i].name);
    cmp_line(&b, "name", cells, n, w0, w);
    for (int i = 0; i < n; i++) snprintf(cells[i], 64, "%s", rows[i].status);
    cmp_line(&b, "status", cells, n, w0, w);
    if (!cmp_config(&b, cfgs, n, cells, w0, w)) sb_printf(&b, "(no config differences)\n");
    cmp_results(s, &b, rows, n, cells, w0, w);
    free_runs(rows, cfgs, n);
    free(cells);
    if (b.oom || !b.p) {
        free(b.p);
        return err_set(err, LM_ENOMEM, "out of memory comparing runs");
    }
    *text = b.p;
    return LM_OK;
}

/* ---- export ----------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *v)
{
    if (!strpbrk(v, ",\"\n\r")) {
        fputs(v, f);
        return;
    }
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"') fputc('"', f);
        fputc(*v, f);
    }
    fputc('"', f);
}

static const char METRIC_SQL[] = "SELECT step, epoch, tokens, loss, lr, grad_norm,"
                                 " tokens_per_s, elapsed FROM metrics WHERE run_id=? ORDER BY step";
static const char *METRIC_COLS[] = {"step", "epoch", "tokens", "loss", "lr", "grad_norm",
                                    "tokens_per_s", "elapsed"};

static int export_csv_run(RunStore *s, FILE *f, const RunRow *r, const Cfg *cfg,
                          const char **keys, int n_keys, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, METRIC_SQL, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fprintf(f, "%ld,", r->id);
        csv_field(f, r->name);
        for (int k = 0; k < n_keys; k++) {
            const char *v = cfg_get(cfg, keys[k]);
            fputc(',', f);
            csv_field(f, v ? v : "");
        }
        for (int c = 0; c < 8; c++) {
            int type = sqlite3_column_type(st, c);
            if (type == SQLITE_INTEGER) fprintf(f, ",%lld", sqlite3_column_int64(st, c));
            else if (type == SQLITE_FLOAT) fprintf(f, ",%.9g", sqlite3_column_double(st, c));
            else fputc(',', f);
        }
        fputc('\n', f);
    }
    if (rc != SQLITE_DONE) status = db_fail(s, rc, "exporting metrics", err);
    sqlite3_finalize(st);
    return status;
}

static int export_csv(RunStore *s, FILE *f, const RunRow *rows, const Cfg *cfgs, int n,
                      char *err)
{
    int n_keys = 0, status = LM_OK;
    const char **keys = cfg_union(cfgs, n, &n_keys);
    if (!keys) return err_set(err, LM_ENOMEM, "out of memory exporting");
    fputs("run_id,run_name", f);
    for (int k = 0; k < n_keys; k++) {
        char h[128];
        snprintf(h, sizeof h, "config.%s", keys[k]);
        fputc(',', f);
        csv_field(f, h);
    }
    for (int c = 0; c < 8; c++) fprintf(f, ",%s", METRIC_COLS[c]);
    fputc('\n', f);
    for (int i = 0; i < n && !status; i++)
        status = export_csv_run(s, f, &rows[i], &cfgs[i], keys, n_keys, err);
    free(keys);
    return status;
}

static json_t *json_col(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, c));
    case SQLITE_TEXT: return json_string(col_str(st, c));
    default: return json_null();
    }
}

/* An array of objects, one per row of the query (bound to run id). */
static int json_rows(RunStore *s, const char *sql, long id, json_t **out, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    json_t *arr = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int c = 0; c < sqlite3_column_count(st); c++)
            json_object_set_new(o, sqlite3_column_name(st, c), json_col(st, c));
        json_array_append_new(arr, o);
    }
    if (rc != SQLITE_DONE) status = db_fail(s, rc, "exporting", err);
    sqlite3_finalize(st);
    if (status) json_decref(arr);
    else *out = arr;
    return status;
}

static json_t *json_num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

static int export_json_run(RunStore *s, const RunRow *r, const Cfg *cfg, json_t *arr,
                           char *err)
{
    json_t *o = json_object(), *config = json_object(), *metrics = NULL, *evals = NULL;
    json_object_set_new(o, "id", json_integer(r->id));
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "status", json_string(r->status));
    json_object_set_new(o, "model", json_string(r->model));
    json_object_set_new(o, "data", json_string(r->data_name));
    json_object_set_new(o, "tags", json_string(r->tags));
    json_object_set_new(o, "notes", json_string(r->notes));
    json_object_set_new(o, "created", json_real(r->created));
    json_object_set_new(o, "params", json_integer(r->params));
    json_object_set_new(o, "last_step", json_integer(r->last_step));
    json_object_set_new(o, "best_val", json_num_or_null(r->best_val));
    json_object_set_new(o, "final_val", json_num_or_null(r->final_val));
    for (int k = 0; k < cfg->n; k++) {
        double x;
        json_object_set_new(config, cfg->key[k], parse_number(cfg->val[k], &x)
                                                 ? json_real(x) : json_string(cfg->val[k]));
    }
    json_object_set_new(o, "config", config);
    json_array_append_new(arr, o);
    int status = json_rows(s, METRIC_SQL, r->id, &metrics, err);
    if (!status)
        status = json_rows(s, "SELECT step, split, loss, ppl, bpc, tokens, elapsed FROM evals"
                           " WHERE run_id=? ORDER BY step, split", r->id, &evals, err);
    if (!status) {
        json_object_set_new(o, "metrics", metrics);
        json_object_set_new(o, "evals", evals);
    } else {
        json_decref(metrics);
    }
    return status;
}

static int export_json(RunStore *s, FILE *f, const RunRow *rows, const Cfg *cfgs, int n,
                       char *err)
{
    json_t *arr = json_array();
    int status = LM_OK;
    for (int i = 0; i < n && !status; i++)
        status = export_json_run(s, &rows[i], &cfgs[i], arr, err);
    if (!status && json_dumpf(arr, f, JSON_INDENT(1) | JSON_REAL_PRECISION(9)))
        status = err_set(err, LM_EIO, "writing JSON failed");
    json_decref(arr);
    return status;
}

/* Writes through a temporary file in the same directory, then renames it over path. */
static int export_write(RunStore *s, const char *path, int json, const RunRow *rows,
                        const Cfg *cfgs, int n, char *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd), unlink(tmp);
        return err_set(err, e == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot write %s: %s", path,
                       strerror(e));
    }
    fchmod(fd, 0644);
    int status = json ? export_json(s, f, rows, cfgs, n, err)
                      : export_csv(s, f, rows, cfgs, n, err);
    int bad = ferror(f) || fflush(f) || fsync(fd);
    int e = errno;
    bad |= fclose(f) != 0;
    if (!status && bad)
        status = err_set(err, e == ENOSPC ? LM_ENOSPC : LM_EIO, "writing %s failed: %s", path,
                         strerror(e));
    if (!status && rename(tmp, path))
        status = err_set(err, LM_EIO, "cannot rename into %s: %s", path, strerror(errno));
    if (status) unlink(tmp);
    return status;
}

int runstore_export(RunStore *s, const long *ids, int n, const char *format,
                    const char *path, char *err)
{
    int json = format && !strcmp(format, "json");
    if (!json && !(format && !strcmp(format, "csv")))
        return err_set(err, LM_EARG, "unknown export format '%s' (csv, json)",
                       format ? format : "");
    if (n < 1) return err_set(err, LM_EARG, "export needs at least one run");
    if (runstore_pending(s)) runstore_flush(s, NULL);
    RunRow *rows = calloc((size_t)n, sizeof *rows);
    Cfg *cfgs = calloc((size_t)n, sizeof *cfgs);
    if (!rows || !cfgs) {
        free(rows), free(cfgs);
        return err_set(err, LM_ENOMEM, "out of memory exporting");
    }
    int status = load_runs(s, ids, n, rows, cfgs, err);
    if (status) {
        free(rows), free(cfgs);
        return status;
    }
    status = export_write(s, path, json, rows, cfgs, n, err);
    free_runs(rows, cfgs, n);
    return status;
}

/* ---- samples, gates, checkpoints --------------------------------------------------------- */

void runstore_samples_free(SampleRow *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].prompt);
        free(rows[i].settings);
        free(rows[i].text);
    }
    free(rows);
}

int runstore_samples(RunStore *s, long run, SampleRow **rows, int *n, char *err)
{
    sqlite3_stmt *st;
    long cap = 0;
    *rows = NULL;
    *n = 0;
    int rc, status = prep(s, "SELECT id, step, created, prompt, settings, text FROM samples"
                          " WHERE run_id=? ORDER BY step, id", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow(rows, &cap, *n + 1, sizeof **rows)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading samples");
            break;
        }
        SampleRow *r = &(*rows)[(*n)++];
        r->id = sqlite3_column_int64(st, 0);
        r->step = sqlite3_column_int64(st, 1);
        r->created = sqlite3_column_double(st, 2);
        r->prompt = strdup(col_str(st, 3));
        r->settings = strdup(col_str(st, 4));
        r->text = strdup(col_str(st, 5));
        if (!r->prompt || !r->settings || !r->text) {
            status = err_set(err, LM_ENOMEM, "out of memory reading samples");
            break;
        }
    }
    if (!status && rc != SQLITE_DONE) status = db_fail(s, rc, "reading samples", err);
    sqlite3_finalize(st);
    if (status) {
        runstore_samples_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

static void parse_hist(const char *text, int *hist)
{
    memset(hist, 0, sizeof(int) * GATE_HIST_BINS);
    for (int b = 0; b < GATE_HIST_BINS && *text; b++) {
        char *end;
        hist[b] = (int)strtol(text, &end, 10);
        text = *end == ',' ? end + 1 : end;
    }
}

int runstore_gate_history(RunStore *s, long run, int layer, int level, GateStat **stats,
                          int *n, char *err)
{
    sqlite3_stmt *st;
    long cap = 0;
    *stats = NULL;
    *n = 0;
    int rc, status = prep(s, "SELECT step, mean, std, hist FROM gates WHERE run_id=? AND"
                          " layer=? AND level=? ORDER BY step", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, layer);
    sqlite3_bind_int(st, 3, level);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow(stats, &cap, *n + 1, sizeof **stats)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading gate statistics");
            break;
        }
        GateStat *g = &(*stats)[(*n)++];
        g->step = sqlite3_column_int64(st, 0);
        g->layer = layer;
        g->level = level;
        g->mean = (float)col_real(st, 1);
        g->std = (float)col_real(st, 2);
        parse_hist(col_str(st, 3), g->hist);
    }
    if (!status && rc != SQLITE_DONE) status = db_fail(s, rc, "reading gate statistics", err);
    sqlite3_finalize(st);
    if (status) {
        free(*stats);
        *stats = NULL;
        *n = 0;
    }
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
        if (grow(recs, &cap, *n + 1, sizeof **recs)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading checkpoints");
            break;
        }
        CheckpointRecord *c = &(*recs)[(*n)++];
        c->step = sqlite3_column_int64(st, 0);
        col_copy(st, 1, c->path, sizeof c->path);
        c->val_loss = col_real(st, 2);
        c->is_best = sqlite3_column_int(st, 3);
    }
    if (!status && rc != SQLITE_DONE) status = db_fail(s, rc, "reading checkpoints", err);
    sqlite3_finalize(st);
    if (status) {
        free(*recs);
        *recs = NULL;
        *n = 0;
    }
    return status;
}

/* ---- sweeps ------------------------------------------------------------------------------ */

static const char *SWEEP_STATUSES[] = {"running", "paused", "finished", "stopped", "failed",
                                       NULL};

int runstore_sweep_create(RunStore *s, const char *name, const char *spec,
                          const char *strategy, long *id, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "INSERT INTO sweeps(name, spec, strategy, status, created)"
                      " VALUES(?,?,?,'running',?)", &st, err);
    if (status) return status;
    bind_str(st, 1, name);
    bind_str(st, 2, spec);
    bind_str(st, 3, strategy);
    sqlite3_bind_double(st, 4, now_wall());
    status = write_stmt(s, st, "creating a sweep", NULL, err);
    if (!status) *id = (long)sqlite3_last_insert_rowid(s->db);
    return status;
}

int runstore_sweep_set_status(RunStore *s, long sweep, const char *status_text, char *err)
{
    int k = -1;
    for (int i = 0; status_text && SWEEP_STATUSES[i] && k < 0; i++)
        if (!strcmp(status_text, SWEEP_STATUSES[i])) k = i;
    if (k < 0)
        return err_set(err, LM_EARG, "unknown sweep status '%s' (running, paused, finished,"
                       " stopped, failed)", status_text ? status_text : "");
    sqlite3_stmt *st;
    int changes = 0, status = prep(s, "UPDATE sweeps SET status=?, ended=? WHERE id=?", &st,
                                   err);
    if (status) return status;
    bind_str(st, 1, status_text);
    if (k >= 2) sqlite3_bind_double(st, 2, now_wall());
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

int runstore_sweep_get(RunStore *s, long sweep, SweepRow *row, char *err)
{
    sqlite3_stmt *st;
    memset(row, 0, sizeof *row);
    int rc, status = prep(s, "SELECT id, name, strategy, status, created, ended, spec"
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
        if (!(row->spec = strdup(col_str(st, 6))))
            status = err_set(err, LM_ENOMEM, "out of memory");
    } else {
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no sweep %ld", sweep)
                                   : db_fail(s, rc, "reading a sweep", err);
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
                          " r.best_val, r.final_val, r.last_step FROM sweep_trials t"
                          " LEFT JOIN runs r ON r.id = t.run_id WHERE t.sweep_id=?"
                          " ORDER BY t.trial", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, sweep);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow(rows, &cap, *n + 1, sizeof **rows)) {
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
    }
    if (!status && rc != SQLITE_DONE) status = db_fail(s, rc, "reading sweep trials", err);
    sqlite3_finalize(st);
    if (status) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return status;
}
