/* runstore_impl.h — internals shared by the run store's files (runstore.c, runstore_write.c,
 * runstore_query.c, runstore_filter.c, runstore_export.c, runstore_sweep.c): the struct
 * RunStore with its pending-row buffers, SQLite status mapping and statement helpers, the
 * parsed filter terms and configs. Included only by those files; not a public API (use
 * runstore.h), and the only header besides them that includes sqlite3.h. */
#ifndef LM_RUNSTORE_IMPL_H
#define LM_RUNSTORE_IMPL_H

#include "runstore.h"
#include "err.h"
#include "sysmetrics.h"
#include "sysinfo.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

typedef struct { long run; StepMetric m; } PendingStep;
typedef struct { long run; EvalMetric e; } PendingEval;

struct RunStore {
    sqlite3 *db;
    char *path;            /* as given (messages) */
    char *real_path;       /* canonical (realpath): run locks are keyed by it */
    dev_t dev;             /* the file opened (runstore_check_present) */
    ino_t ino;
    int gone;              /* the file left its path while open: no more writes */
    char saved[1100];      /* deleted while open: where its contents were saved ("" none) */
    int damaged;           /* a check or a write found it damaged: no more writes */
    int checked_whole;     /* the whole file passed quick_check (before the first run) */
    sqlite3_int64 data_version; /* last PRAGMA data_version seen (runstore_changed) */
    char host[64];
    char store_id[40];     /* store_meta 'store_id' */
    PendingStep *steps;
    long n_steps, cap_steps;
    PendingEval *evals;
    long n_evals, cap_evals;
    int max_rows;          /* autoflush when this many rows wait */
    long next_rows;        /* ... or this many after a failed flush (back-off) */
    double max_seconds, last_flush;
    long known_run;        /* last run id checked to exist */
    char journal[1024];    /* spill file for rows past max_pending ("" = none) */
    long max_pending, journal_rows;
    int full_since;        /* a write failed for space: checkpoint the WAL once one lands */
    double failed_at;      /* monotonic seconds of the last failed flush (0: none) */
    sqlite3_stmt *ins_step, *ins_eval, *upd_run;
    long rows_read;        /* rows handed out by series reads (runstore_rows_read) */
};

/* ---- small helpers (tiny, inline) ---------------------------------------------------- */

static inline int pid_alive(long pid)
{
    if (pid <= 0) return 0;
    if (kill((pid_t)pid, 0) == 0) return 1;
    return errno != ESRCH;   /* EPERM: alive, someone else's */
}

/* Whether run id, recorded as trained by pid on this host, still has a live process: the
 * run's kernel lock (runlock.h), so a reused PID or a zombie never counts; this process's
 * own runs are alive; a store written by an older lmlab (no lock file) falls back to the
 * pid. Defined in runstore.c. */
int runstore_run_alive(const RunStore *s, long id, long pid);

static inline void tx_rollback(RunStore *s)
{
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static inline void bind_str(sqlite3_stmt *st, int i, const char *v)
{
    if (v) sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

static inline void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v)) sqlite3_bind_null(st, i);
    else sqlite3_bind_double(st, i, v);
}

static inline const char *col_str(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* A text column's bytes into dst (cap bytes, cut), every NUL byte written into the store
 * shown as U+2400 (SYMBOL FOR NULL), so nothing after it is dropped silently by a reader
 * that stops at NUL (issue 46: any bytes in any field). */
static inline void col_copy(sqlite3_stmt *st, int i, char *dst, size_t cap)
{
    const char *t = col_str(st, i);
    size_t n = (size_t)sqlite3_column_bytes(st, i), o = 0;
    for (size_t k = 0; k < n && o + 1 < cap; k++) {
        if (t[k]) dst[o++] = t[k];
        else if (o + 4 <= cap) memcpy(dst + o, "\xe2\x90\x80", 3), o += 3;
        else break;
    }
    dst[o] = 0;
}

/* The same, malloc'd whole (NULL when out of memory). */
static inline char *col_dup(sqlite3_stmt *st, int i)
{
    size_t n = (size_t)sqlite3_column_bytes(st, i), nul = 0;
    const char *t = col_str(st, i);
    for (size_t k = 0; k < n; k++) nul += !t[k];
    char *d = malloc(n + 2 * nul + 1);
    if (d) col_copy(st, i, d, n + 2 * nul + 1);
    return d;
}

static inline double col_real(sqlite3_stmt *st, int i)   /* NULL -> NAN */
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* The StepMetric of a row whose first columns are runstore_step_columns' (step, then
 * metrics.def's metrics in order; runstore_follow.c). */
void runstore_step_from_row(sqlite3_stmt *st, StepMetric *m);
/* "step, epoch, tokens, ...": the metrics table's step and the columns of
 * core/base/metrics.def in order (the order runstore_step_from_row reads), into buf. */
void runstore_step_columns(char *buf, size_t cap);
/* Adds to the metrics table the columns of metrics.def it lacks (a store made before a
 * metric existed), inside the caller's transaction; *added counts them. */
int runstore_step_columns_migrate(RunStore *s, int *added, char *err);

/* ---- SQLite status and statements ---------------------------------------------------- */

/* Maps an SQLite result to an lmlab status with a message naming the file (runstore.c). */
int runstore_db_fail(const RunStore *s, int rc, const char *what, char *err);

static inline int exec_sql(RunStore *s, const char *sql, const char *what, char *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? LM_OK : runstore_db_fail(s, rc, what, err);
}

static inline int tx_commit(RunStore *s, const char *what, char *err)
{
    int st = exec_sql(s, "COMMIT", what, err);
    if (st) tx_rollback(s);
    return st;
}

static inline int prep(RunStore *s, const char *sql, sqlite3_stmt **st, char *err)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    return rc == SQLITE_OK ? LM_OK : runstore_db_fail(s, rc, "preparing a query", err);
}

/* Steps a write statement to completion, finalizes it; *changes = rows changed. */
static inline int write_stmt(RunStore *s, sqlite3_stmt *st, const char *what, int *changes,
                             char *err)
{
    int rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? LM_OK : runstore_db_fail(s, rc, what, err);
    if (changes) *changes = sqlite3_changes(s->db);
    sqlite3_finalize(st);
    return status;
}

/* ---- runstore_json.c ----------------------------------------------------------------- */

/* The JSON export of the n runs (runstore_export_stream's json), written as it is read.
 * LM_OK, LM_EIO (a write failed), the store's errors. */
int runstore_export_json(RunStore *s, FILE *f, const RunRow *rows, int n, char *err);

/* ---- runstore_cursor.c --------------------------------------------------------------- */

/* A query read a row at a time (runstore.h). what names the reading in messages. */
struct RunStoreCursor {
    RunStore *s;
    sqlite3_stmt *st;
    const char *what;
    int running_min;   /* a series cursor of the best so far: the minimum of its column */
    double best;       /* ... so far (NaN before any value) */
};
/* A new cursor over sql, its ?1 bound to run. LM_OK, or the store's error. */
int runstore_cursor_new(RunStore *s, const char *sql, long run, const char *what,
                        RunStoreCursor **c, char *err);
/* The next row: 1, 0 at the end, -1 when the read failed (err says). */
int runstore_cursor_step(RunStoreCursor *c, char *err);

/* ---- runstore_registry.c ------------------------------------------------------------- */

/* "TABLE WHERE run_id=RUN AND ..." of ref's source into from, its value column into col
 * (run: the SQL that names the run, "?1" or "runs.id"). */
void runstore_series_source(const SeriesRef *r, const char *run, char *from,
                            size_t cap, char *col, size_t ccap);
/* 1 when run recorded a named series called name. */
int runstore_series_named(RunStore *s, long run, const char *name);

/* ---- runstore_write.c ---------------------------------------------------------------- */

/* LM_OK when run exists (cached in s->known_run), LM_EARG when not. */
int runstore_check_run(RunStore *s, long run, char *err);
/* Grows the array whose pointer lives at pp to hold need elements. 0 or -1. */
int runstore_grow(void *pp, long *cap, long need, size_t size);
/* Forgets the buffered rows of a deleted run (they could never be written). */
void runstore_drop_pending(RunStore *s, long run);

/* ---- runstore_run.c, runstore_delete.c ----------------------------------------------- */

/* LM_ESTATE when another live process on this host is training run id (action names what
 * the caller was about to do, for the message); LM_EARG when there is no such run. */
int runstore_check_not_live(RunStore *s, long id, const char *action, char *err);

/* ---- runstore_check.c ---------------------------------------------------------------- */

/* Before SQLite creates a missing store file: LM_ESTATE when PATH-wal is left there (a
 * store moved or deleted while open committed rows into it; a new store would discard
 * it). */
int runstore_check_orphan(const char *path, char *err);
/* Resolves s->path to the canonical path and the file's device and inode (after SQLite
 * opened or created it); LM_EARG for a file with several hard links. */
int runstore_identify(RunStore *s, char *err);
/* Decides from the schema version and the tables whether the file is an lmlab store
 * (*is_new: an empty file, to be given the schema), before anything is written to it.
 * LM_EFORMAT naming what it is otherwise. */
int runstore_recognise(RunStore *s, int version, int *is_new, char *err);
/* Tables in the file (runstore.c). */
int runstore_table_count(RunStore *s, int *n, char *err);
/* Schema step RUNSTORE_CKPT_VERSION (runstore_ckpt.c): the best checkpoint as its own
 * record, in the caller's transaction; it sets user_version to that number. One number
 * to change when steps are renumbered on merging (with RUNSTORE_SCHEMA_VERSION). */
#define RUNSTORE_CKPT_VERSION 8
int runstore_ckpt_migrate(RunStore *s, char *err);
/* The `mac` column of the tables whose rows carry their writer's code (alerts, sweeps,
 * runs; runstore_rowsig.c): added when missing, inside the caller's transaction, with no
 * schema step (older binaries keep working); _missing says 1 when a store lacks one. */
int runstore_rowsig_migrate(RunStore *s, char *err);
int runstore_rowsig_missing(RunStore *s);
/* Run id's stored settings (*config malloc'd, free it) and whether they and its folder
 * carry this user's code: LM_OK, or LM_EARG with why (runstore_rowsig.c). */
int runstore_run_signed_config(RunStore *s, long id, char **config, char *why, size_t cap);
/* SQLite's quick_check of the whole file (whole), or of the tables every command reads
 * (runs, sweeps: bounded by the number of runs, not by the rows logged); LM_EFORMAT with
 * what to do when it fails (and the store marked damaged). */
int runstore_quick_check(RunStore *s, int whole, char *err);
/* LM_OK while the opened file is still at its path and not found damaged; LM_EIO (sticky)
 * once it was moved, deleted or replaced, LM_EFORMAT once damaged. */
int runstore_check_present(RunStore *s, char *err);

/* ---- runstore_repair.c, runstore_remove.c --------------------------------------------- */

/* The repair at open: every dead run of this host marked interrupted (as the dashboard's
 * reaping, runstore_reap_dead), then pending removals carried on for
 * RUNSTORE_REMOVE_OPEN_SECONDS. A busy store or a full disk is LM_OK (a later open
 * repairs). */
int runstore_repair_open(RunStore *s, char *err);
#define RUNSTORE_REMOVE_OPEN_SECONDS 1.0
/* Carries on pending removals (runstore_remove_step) until none is left or `seconds` have
 * passed (<= 0: until none), pausing after each batch so that other writers get the lock. */
int runstore_remove_pending(RunStore *s, double seconds, char *err);

/* ---- runstore_journal.c --------------------------------------------------------------- */

/* Appends every buffered row to the journal and empties the buffers (LM_OK when no
 * journal is set: rows stay in memory). */
int runstore_journal_spill(RunStore *s, char *err);
/* Inserts the journal's rows (inside the caller's transaction). */
int runstore_journal_insert(RunStore *s, char *err);
/* A checkpoint record or a console line the store could not take, appended to the
 * journal (issue 46 item 5: every record written during a fault lands afterwards);
 * silently nothing when no journal is set or it cannot be written. */
void runstore_journal_checkpoint(RunStore *s, long run, const CheckpointRecord *c);
void runstore_journal_console(RunStore *s, long run, double t, const char *kind,
                              const char *text);
/* A status change (T line; reason may be NULL) at wall time t. */
void runstore_journal_status(RunStore *s, long run, double t, const char *status,
                             const char *reason);
/* A system sample (Y line). */
void runstore_journal_sys(RunStore *s, long run, const SysSample *x);
/* The system sample's INSERT, inside or outside a transaction (runstore_track.c). */
int runstore_sys_insert(RunStore *s, long run, const SysSample *x, char *err);
/* The status UPDATE at wall time t, inside or outside a transaction (runstore_run.c);
 * only_if_newer: applied only when the run's heartbeat is not past t (a journaled status
 * must not undo what a later writer, such as a resume, recorded; it does replace the
 * repair's guess 'interrupted': the owner's own status is the truer one). */
int runstore_status_write(RunStore *s, long id, const char *status, const char *reason,
                          double t, int only_if_newer, char *err);
/* The checkpoint record's statements, inside the caller's transaction (runstore_ckpt.c). */
int runstore_ckpt_log_one(RunStore *s, long run, const CheckpointRecord *c, char *err);
/* One console line at time t, inside or outside a transaction (runstore_track.c). */
int runstore_console_insert(RunStore *s, long run, double t, const char *kind,
                            const char *text, char *err);
/* Before a record that must land after the journal's (a checkpoint, a console line): LM_OK
 * when the journal is empty or lands now; an error (the record is journaled too) while it
 * cannot, trying at most every 5 s so an outage does not reread the journal per record. */
static inline int runstore_journal_first(RunStore *s, char *err)
{
    if (!s->journal_rows) return LM_OK;
    if (s->failed_at > 0 && sysinfo_now() - s->failed_at < 5.0)
        return err_set(err, LM_EDB, "the run store could not take rows %.0f s ago; kept in"
                       " the journal %s", sysinfo_now() - s->failed_at, s->journal);
    return runstore_flush(s, err);
}
/* After a commit that included the journal: deletes it. */
void runstore_journal_landed(RunStore *s);

/* ---- list filters and configs (runstore_filter.c) ------------------------------------ */

enum { K_NUM, K_TEXT, K_TAG, K_SINCE, K_UNTIL, K_CONFIG, K_NOTE };

typedef struct {
    char key[64], val[256];
    int op, kind, is_num;
    const char *col;
    double num;
    char series_sql[320];  /* a series' aggregate (runstore_series_value_sql); col points here */
} Term;

#define MAX_TERMS 24

/* A whole string as a finite number: 1 and *x set, else 0. */
int runstore_parse_number(const char *v, double *x);
/* Parses a filter ("key OP value" terms) into terms (room for MAX_TERMS); LM_EARG. */
int runstore_parse_filter(const char *filter, Term *terms, int *nt, char *err);
/* 1 when every config term matches the run's config text. */
int runstore_config_terms_match(const Term *terms, int nt, const char *config);
/* Prepares "SELECT <what> FROM runs WHERE 1 <sql terms><tail>" with the terms bound;
 * *next receives the next free parameter index. */
int runstore_list_prepare(RunStore *s, const char *what, const Term *terms, int nt,
                          const char *tail, sqlite3_stmt **st, int *next, char *err);

/* A parsed "key=value" config text: key[i], val[i] point into buf. */
typedef struct {
    char *buf;
    char **key, **val;
    int n;
} Cfg;

void runstore_cfg_free(Cfg *c);
/* Splits "key=value" lines (blank lines and '#' comments skipped). 0 or -1 (memory). */
int runstore_cfg_parse(const char *text, Cfg *c);
/* The value of key, or NULL. */
const char *runstore_cfg_get(const Cfg *c, const char *key);
/* The union of the keys of n configs, in first-seen order (pointers into the configs;
 * free the array only). NULL when out of memory. */
const char **runstore_cfg_union(const Cfg *c, int n, int *n_keys);

/* ---- runstore_query.c ---------------------------------------------------------------- */

/* Loads n runs and their parsed configs; on failure frees what it loaded. */
int runstore_load_runs(RunStore *s, const long *ids, int n, RunRow *rows, Cfg *cfgs,
                       char *err);
/* Frees n loaded runs and configs and both arrays. */
void runstore_free_runs(RunRow *rows, Cfg *cfgs, int n);
/* Steps st, a prepared and bound "SELECT step, layer, level, mean, std, hist FROM gates
 * ..." (runstore_gates_at, runstore_gate_history), to its end into *stats (the caller
 * frees it) and *n, and finalizes st. On failure *stats is NULL and *n is 0. */
int runstore_read_gates(RunStore *s, sqlite3_stmt *st, GateStat **stats, int *n, char *err);

#endif
