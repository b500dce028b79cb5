/* runstore.c — the run store on SQLite (see runstore.h): opening a store, creating the
 * schema, migrating version 1 to 2, repairing runs of crashed processes, closing, and the
 * SQLite status mapping and statement helpers every runstore_*.c file shares (declared in
 * runstore_impl.h); the repair at open is runstore_repair.c's. The store is split by
 * responsibility: runstore_run.c (runs), runstore_write.c (buffered logging),
 * runstore_query.c (reading), runstore_filter.c (list filters, configs),
 * runstore_export.c (CSV/JSON), runstore_sweep.c (sweeps), runstore_delete.c and
 * runstore_remove.c (removing a run). Only these files include sqlite3.h. Every value
 * reaches SQL as a bound parameter; the SQL text itself is built only from constant
 * fragments. Not a query language, not thread-safe per handle (one RunStore per thread). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "private/runlock.h"
#include "runstore_control.h"
#include "runstore_group.h"
#include "runstore_series.h"
#include "runstore_edits.h"
#include "runstore_changes.h"
#include "runstore_track.h"
#include "err.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Version 1 tables plus what version 2 added (sweeps, runs.tags, runs.sweep_id). */
#define STEP_SQL_REAL "REAL"
#define STEP_SQL_INT "INTEGER"
/* The metrics table's columns come from core/base/metrics.def, in its order. */
static const char SCHEMA_V2[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT, created REAL, started REAL,"
    " ended REAL, status TEXT NOT NULL DEFAULT 'running', reason TEXT, config TEXT,"
    " model TEXT, data_name TEXT, data_hash TEXT, tokenizer TEXT, tokenizer_hash TEXT,"
    " params INTEGER, machine TEXT, git_rev TEXT, notes TEXT, pid INTEGER, host TEXT,"
    " last_step INTEGER, best_val REAL, final_val REAL, checkpoint_dir TEXT,"
    " heartbeat REAL, tags TEXT,"
    " sweep_id INTEGER REFERENCES sweeps(id) ON DELETE SET NULL);"
    "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL,"
#define STEP_METRIC(name, type, kind, ...) " " #name " " STEP_SQL_##kind ","
#include "metrics.def"
#undef STEP_METRIC
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
    "CREATE INDEX IF NOT EXISTS trials_run ON sweep_trials(run_id);";

/* Version 3: the store's identity and the highest run id ever handed out (kept by a
 * trigger, so an id is never handed out twice, even after the newest run is deleted). */
static const char SCHEMA_V3[] =
    "CREATE TABLE store_meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
    "INSERT INTO store_meta(key, value) SELECT 'last_run_id', coalesce(max(id), 0) FROM runs;"
    "CREATE TRIGGER runs_last_id AFTER INSERT ON runs BEGIN"
    " UPDATE store_meta SET value=max(NEW.id, CAST(value AS INTEGER))"
    " WHERE key='last_run_id'; END;"
    "PRAGMA user_version = 3;";

/* ---- SQLite status ------------------------------------------------------------------- */

/* Maps an SQLite result to an lmlab status with a message naming the file. */
int runstore_db_fail(const RunStore *s, int rc, const char *what, char *err)
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
        return err_set(err, LM_EFORMAT, "%s is not an lmlab run store or is damaged (%s):"
                       " recover a damaged store with `sqlite3 %s .recover | sqlite3"
                       " recovered.db`, restore a backup, or move it aside (lmlab then starts"
                       " a new one)", s->path, msg, s->path);
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

/* ---- open, migrate, repair ------------------------------------------------------------ */

static int read_version(RunStore *s, int *version, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "PRAGMA user_version", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *version = sqlite3_column_int(st, 0);
    else status = runstore_db_fail(s, rc, "reading the schema version", err);
    sqlite3_finalize(st);
    return status;
}

/* Identity, recognition and integrity first: nothing here writes, so a file lmlab has
 * not recognised as its own store (or a damaged one) is refused as it was found. */
static int store_check(RunStore *s, char *err)
{
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);
    int version = 0, is_new = 0, status = runstore_identify(s, err);
    if (!status) status = read_version(s, &version, err);
    if (!status) status = runstore_recognise(s, version, &is_new, err);
    if (!status && !is_new) status = runstore_quick_check(s, 0, err);
    if (status) return status;
    if (sqlite3_db_readonly(s->db, "main") == 1)
        return err_set(err, LM_EIO, "%s is read-only: lmlab writes to its run store; fix"
                       " its permissions or point LMLAB_DB at another file", s->path);
    return LM_OK;
}

/* After the schema: WAL mode (a new store is created in one rollback-journal transaction
 * first, so its file never holds a header without the schema). */
static int store_setup(RunStore *s, char *err)
{
    int status = exec_sql(s, "PRAGMA journal_mode=WAL", "enabling WAL", err);
    if (!status)
        status = exec_sql(s, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
                          "setting pragmas", err);
    return status;
}

int runstore_table_count(RunStore *s, int *n, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "SELECT count(*) FROM sqlite_master WHERE type='table'", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = sqlite3_column_int(st, 0);
    else status = runstore_db_fail(s, rc, "reading the schema", err);
    sqlite3_finalize(st);
    return status;
}

/* A fresh random identity for the store (16 hex digits from /dev/urandom, or from the
 * time and pid when that cannot be read). */
static int store_new_id(RunStore *s, char *err)
{
    unsigned char b[8] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    unsigned long long v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | b[i];
    if (got != sizeof b) v ^= (unsigned long long)(sysinfo_wall() * 1e6) ^ ((unsigned long long)getpid() << 32);
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", v);
    sqlite3_stmt *st;
    int status = prep(s, "INSERT OR REPLACE INTO store_meta(key, value) VALUES('store_id', ?)",
                      &st, err);
    if (status) return status;
    bind_str(st, 1, hex);
    return write_stmt(s, st, "naming the store", NULL, err);
}

static int store_read_id(RunStore *s, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "SELECT value FROM store_meta WHERE key='store_id'", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) col_copy(st, 0, s->store_id, sizeof s->store_id);
    else status = rc == SQLITE_DONE ? err_set(err, LM_EFORMAT, "%s has no store identity;"
                                              " it is damaged", s->path)
                                    : runstore_db_fail(s, rc, "reading the store id", err);
    sqlite3_finalize(st);
    return status;
}

/* 1 when the metrics table lacks a column of core/base/metrics.def (a store made before
 * that metric existed). */
static int step_columns_missing(RunStore *s)
{
    sqlite3_stmt *st;
    if (prep(s, "SELECT count(*) FROM pragma_table_info('metrics')", &st, NULL)) return 0;
    int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return n > 0 && n < STEP_METRIC_N + 2;   /* run_id, step and the metrics */
}

/* Creates the schema in an empty file or upgrades version 1, 2 or 3, and adds the metric
 * columns a store lacks, in one transaction. */
static int store_migrate(RunStore *s, char *err)
{
    int version = 0, n_tables = 0, added = 0;
    int status = read_version(s, &version, err);
    if (status || (version == RUNSTORE_SCHEMA_VERSION && !step_columns_missing(s) &&
                   !runstore_rowsig_missing(s) && !runstore_lineage_missing(s)))
        return status;
    if ((status = exec_sql(s, "BEGIN IMMEDIATE", "creating the schema", err))) return status;
    status = read_version(s, &version, err);   /* another process may have done it */
    if (!status && version == 0) {
        status = runstore_table_count(s, &n_tables, err);
        if (!status && n_tables > 0)
            status = err_set(err, LM_EFORMAT, "%s is an SQLite database but not an lmlab"
                             " run store; choose another file (LMLAB_DB)", s->path);
        if (!status) status = exec_sql(s, SCHEMA_V2, "creating the schema", err);
        if (!status) status = exec_sql(s, SCHEMA_SWEEPS, "creating the schema", err);
    } else if (!status && version == 1) {
        status = exec_sql(s, SCHEMA_SWEEPS, "migrating schema 1 to 2", err);
        if (!status) status = exec_sql(s, MIGRATE_1_2, "migrating schema 1 to 2", err);
    }
    if (!status && version < 2)
        status = exec_sql(s, INDEXES, "creating indexes", err);
    if (!status && version < 3)
        status = exec_sql(s, SCHEMA_V3, "migrating schema 2 to 3", err);
    if (!status && version < 3)
        status = store_new_id(s, err);
    if (!status && version < 4)   /* control requests and run lineage */
        status = runstore_control_migrate(s, err);
    if (!status && version < RUNSTORE_TRACK_VERSION)   /* metrics, console, notes, alerts */
        status = runstore_track_migrate(s, err);
    if (!status && version < RUNSTORE_CKPT_VERSION)   /* the best checkpoint, its own record */
        status = runstore_ckpt_migrate(s, err);
    if (!status)   /* a metric metrics.def gained since this store was made */
        status = runstore_step_columns_migrate(s, &added, err);
    if (!status && version < RUNSTORE_OWNER_VERSION)   /* requests addressed to one owner */
        status = runstore_control_migrate_owner(s, err);
    if (!status && version < RUNSTORE_GROUP_VERSION)   /* seed groups, store settings */
        status = runstore_group_migrate(s, err);
    if (!status)   /* who wrote each alert's command, sweep's spec, run's settings */
        status = runstore_rowsig_migrate(s, err);
    if (!status && version < RUNSTORE_SERIES_VERSION)   /* named scalars and histograms */
        status = runstore_series_migrate(s, err);
    if (!status && version < RUNSTORE_EDITS_VERSION)   /* untag, rename, note edits */
        status = runstore_edits_migrate(s, err);
    if (!status && version < RUNSTORE_CHANGES_VERSION)   /* a resume's setting changes */
        status = runstore_changes_migrate(s, err);
    if (!status)   /* whether a run's parent is a fork's or init_from's */
        status = runstore_lineage_migrate(s, err);
    if (!status) return tx_commit(s, "creating the schema", err);
    tx_rollback(s);
    return status;
}

static int store_prepare(RunStore *s, char *err)
{
    char sql[1536], cols[768], marks[256];
    runstore_step_columns(cols, sizeof cols);
    int at = 0;
    for (int i = 0; i < STEP_METRIC_N && at < (int)sizeof marks - 3; i++)
        at += snprintf(marks + at, sizeof marks - at, ",?");
    snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO metrics(run_id, %s) VALUES(?,?%s)",
             cols, marks);
    int status = prep(s, sql, &s->ins_step, err);
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
    free(s->real_path);
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
    s->max_pending = 100000;
    s->last_flush = sysinfo_now();
    if (gethostname(s->host, sizeof s->host - 1)) strcpy(s->host, "localhost");
    int status = runstore_check_orphan(path, err);
    if (status) {
        store_free(s);
        return status;
    }
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                             SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK)
        status = err_set(err, LM_EIO, "cannot open run store %s: %s (does its directory"
                         " exist and is it writable?)", path,
                         s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
    if (!status) status = store_check(s, err);
    if (!status) status = store_migrate(s, err);
    if (!status) status = store_setup(s, err);
    if (!status) status = store_read_id(s, err);
    if (!status) status = store_prepare(s, err);   /* before the repair: it lands journals */
    if (!status) status = runstore_repair_open(s, err);
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
    if (runstore_flush(s, NULL)) runstore_journal_spill(s, NULL);   /* nothing dropped */
    store_free(s);
}

const char *runstore_path(const RunStore *s) { return s->path; }

const char *runstore_store_id(const RunStore *s) { return s->store_id; }

const char *runstore_host(const RunStore *s) { return s->host; }

void runstore_set_busy_timeout(RunStore *s, int ms) { sqlite3_busy_timeout(s->db, ms); }

void runstore_set_autoflush(RunStore *s, int max_rows, double max_seconds)
{
    s->max_rows = max_rows > 0 ? max_rows : 1;
    s->next_rows = s->max_rows;
    s->max_seconds = max_seconds;
}
