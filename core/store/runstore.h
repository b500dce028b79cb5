/* runstore.h — the run store: one SQLite file that keeps every run, its step metrics,
 * evaluations, gate statistics, samples, checkpoints and sweeps, so that days later one
 * can ask which run was best, what was different about it and what it said.
 * Not shared between threads: each thread or process opens its own RunStore on the same
 * file (WAL mode lets one writer and many readers work at once). Not a cache of model
 * weights: checkpoints live in files, the store only records their paths.
 * SQLite is used in the runstore*.c files (behind runstore_impl.h) and nowhere else. */
#ifndef LM_RUNSTORE_H
#define LM_RUNSTORE_H

#include "metrics.h"
#include "series.h"

#include <stdio.h>

#define RUNSTORE_SCHEMA_VERSION 13

typedef struct RunStore RunStore;

/* Opens (creating if needed) the store at path; NULL means env LMLAB_DB, else
 * "lmlab.db". Migrates a version-1 file in place, then repairs crashed runs: a run marked
 * running/paused on this host whose process no longer exists becomes "interrupted"; a
 * live process's run is never touched. Nothing is written to a file lmlab has not
 * recognised: an empty file becomes a new store; anything else must carry lmlab's schema
 * and pass SQLite's quick_check of its run and sweep tables (the whole file is checked
 * once per handle before a run is created or claimed). Run locks are keyed by the file's
 * real path, so every name of one store (a symbolic link, ./x, the absolute path) shares
 * them. *out is owned by the caller (runstore_close).
 * Errors: LM_EIO (cannot open/create, read-only file or directory), LM_EFORMAT (not an
 * lmlab store, damaged, an unknown schema version, or written by a newer lmlab), LM_EARG
 * (the file has several hard links), LM_ESTATE (path is missing but path-wal is there: a
 * store moved or deleted while open left rows in it), LM_EDB (locked, other SQLite
 * failures). On failure *out is NULL. */
int runstore_open(const char *path, RunStore **out, char *err);

/* Flushes buffered rows and closes. Rows that cannot be flushed go to the journal when
 * one is set (runstore_set_journal); without one they are lost (call runstore_flush
 * first to see the failure). NULL is a no-op. */
void runstore_close(RunStore *s);

/* The file path the store was opened with (owned by the store). */
const char *runstore_path(const RunStore *s);

/* The store's identity: a random hex string chosen when the store was created (or
 * upgraded to schema 3), stable for its life. Run folders and checkpoints carry it, so a
 * checkpoint can be matched to its store (owned by the store). */
const char *runstore_store_id(const RunStore *s);

/* SQLite's quick_check over the whole store (every table, so its cost grows with the
 * rows), once per handle: LM_OK, or LM_EFORMAT "DB is damaged (...): recover it with ..."
 * (training refuses such a store; readers say so). */
int runstore_check_whole(RunStore *s, char *err);

/* This machine's name as the store records it in runs.host (owned by s). */
const char *runstore_host(const RunStore *s);

/* Tuning: how long a write waits for another process's lock (default 5000 ms), and
 * when buffered rows are flushed automatically (default 256 rows or 2 seconds). */
void runstore_set_busy_timeout(RunStore *s, int ms);
void runstore_set_autoflush(RunStore *s, int max_rows, double max_seconds);

/* ---- Writing runs ---------------------------------------------------------------- */

typedef struct {
    const char *name, *config /* "key=value\n" lines */, *model, *data_name,
        *data_hash /* hex */, *tokenizer, *tokenizer_hash, *machine, *git_rev,
        *tags /* comma or space separated */, *checkpoint_dir;
    long params;
    long sweep_id;         /* 0 = none */
} RunInfo;

/* Creates a run with status "running", this process's pid and host; *id receives its id.
 * Ids are never reused, not even the id of a deleted newest run (the store keeps the
 * highest id it ever handed out).
 * NULL strings are stored as NULL. LM_EDB/LM_EIO/LM_ENOSPC on write failure. */
int runstore_run_create(RunStore *s, const RunInfo *info, long *id, char *err);

/* Sets a run's status (running|paused|finished|stopped|diverged|interrupted|failed) and
 * reason (may be NULL). Flushes buffered rows first. Terminal statuses set `ended`.
 * LM_EARG for an unknown status or run. */
int runstore_run_set_status(RunStore *s, long id, const char *status, const char *reason,
                            char *err);

/* Marks a resumed run as running in this process (pid, host, heartbeat; ended cleared).
 * LM_ESTATE when another live process on this host is running it; LM_EARG "no run N". */
int runstore_run_claim(RunStore *s, long id, char *err);

/* Buffers one step's metrics (written at the next flush; INSERT OR REPLACE, so a resumed
 * run rewriting a step never duplicates it). Flushes automatically when the buffer is
 * full or old; if that flush fails its status is returned but every row stays pending.
 * LM_EARG "no run N" for an unknown run. */
int runstore_log_step(RunStore *s, long run, const StepMetric *m, char *err);

/* Buffers one evaluation, like runstore_log_step. At flush the run's best_val (lowest)
 * and final_val (latest) are recomputed from its "valid" evaluations. */
int runstore_log_eval(RunStore *s, long run, const EvalMetric *e, char *err);

/* Writes n gate statistics in one transaction (replacing the same step/layer/level). */
int runstore_log_gates(RunStore *s, long run, const GateStat *g, int n, char *err);

/* Writes one generated sample. settings: free text ("temp=0.8 top_k=40"); may be NULL. */
int runstore_log_sample(RunStore *s, long run, long step, const char *prompt,
                        const char *settings, const char *text, char *err);

/* Records a checkpoint file (runstore_ckpt.c). A step file (step-N.safetensors) replaces
 * the record of the same step; the best file (best.safetensors, told by its name through
 * runfiles.h) replaces the run's one best record, a record of its own that a step file of
 * the same step never touches. A step file's is_best flag says it holds the best weights:
 * set by c->is_best or a best record of its step; the run's other step files lose it. */
int runstore_log_checkpoint(RunStore *s, long run, const CheckpointRecord *c, char *err);

/* Writes every buffered step and evaluation in one transaction and updates each run's
 * last_step (= its largest metrics step), best/final val and heartbeat. On failure the
 * rows stay buffered and are retried by the next flush; the status says why (LM_EDB
 * locked, LM_ENOSPC disk full, LM_EIO, ...). */
int runstore_flush(RunStore *s, char *err);

/* 1 once the store's file was moved, deleted or replaced while this handle had it open
 * (checked at every flush and write: its device and inode against the path's), or was
 * found damaged: from then on the handle writes nothing more (rows go to the journal when
 * one is set; what it committed before reaches the file it opened, wherever that now is,
 * when it closes); the writer depending on it should stop. */
int runstore_gone(RunStore *s);

/* Rows (steps + evaluations) buffered and not yet written. */
long runstore_pending(const RunStore *s);

/* Bounds the buffer: when a flush fails with more than max_pending rows buffered (0 =
 * 100,000), they are appended to the journal file at path (fsync'd) and memory is freed;
 * every later flush inserts the journal's rows first and deletes the file once they are
 * committed. An existing journal at path (a previous process's) lands at the next flush.
 * runstore_close spills what it could not flush. path NULL or "" = no journal. */
int runstore_set_journal(RunStore *s, const char *path, long max_pending);
/* Rows waiting in the journal. */
long runstore_journal_rows(const RunStore *s);

/* Replaces a run's tags (comma or space separated; stored comma separated), adds one tag
 * (no-op if present), or sets its free-text note. A tag is non-empty
 * and contains no comma or whitespace (LM_EARG otherwise). */
int runstore_set_tags(RunStore *s, long id, const char *tags, char *err);
int runstore_add_tag(RunStore *s, long id, const char *tag, char *err);
int runstore_set_note(RunStore *s, long id, const char *note, char *err);
/* Where a run's checkpoints live (named after its id, so set after creation). */
int runstore_set_checkpoint_dir(RunStore *s, long id, const char *dir, char *err);

/* What deleting a run did to its files (runstore_delete_run_report). */
typedef struct {
    int removed;             /* files removed */
    int left;                /* entries of the run folder left in place */
    int dir_removed;         /* the run folder itself was removed (nothing was left in it) */
    char dir[512];           /* the run folder ("" when the run had none) */
    char left_names[512];    /* the entries left, ", "-separated (cut with ", ...") */
    char refused[600];       /* "" or why no file was removed: the run's settings and folder
                                do not carry this user's code (planted, edited, another
                                user's, an older lmlab's) */
} RunFilesReport;

/* Deletes a run and all its rows: removed from every listing in one short transaction, its
 * rows then deleted in transactions of RUNSTORE_REMOVE_BATCH rows (runstore_remove_mark,
 * runstore_remove_step), so that a run training in another process keeps writing. With
 * delete_checkpoints, also removes only the files the
 * run wrote, and only when its settings and folder carry this user's code (else no file
 * is touched and report->refused says why): the checkpoint files it recorded directly in
 * its folder (and their .optim siblings; a recorded path elsewhere is left) and, in its
 * checkpoint_dir when no other run shares it, the regular files named like the trainer's
 * (step-N.safetensors, step-N.optim.safetensors, best.safetensors, those + .tmp.PID, and
 * the journal unrecorded-rows.tsv).
 * Every other entry (a user's file, a sub-folder, a link) is left, and the folder is
 * removed only when nothing is left in it. LM_ESTATE if a live process is running it;
 * LM_EARG "no run N". File removal failures are reported as LM_EIO after the rows are
 * gone. */
int runstore_delete_run(RunStore *s, long id, int delete_checkpoints, char *err);
/* The same, filling *report (may be NULL) with what was removed and what was left. */
int runstore_delete_run_report(RunStore *s, long id, int delete_checkpoints,
                               RunFilesReport *report, char *err);

/* A run's removal in two phases (what runstore_delete_run does; runstore_remove.c):
 * _mark removes the run from `runs` and its small rows in one short transaction (it leaves
 * every listing at once; LM_EARG "no run N") and records what is left to delete; _step
 * deletes at most max_rows (<= 0: RUNSTORE_REMOVE_BATCH) of the rows left by removals in
 * one transaction, *pending = 1 while rows are left. A removal a killed process left is
 * carried on by the next removal and by runstore_open. The store's file keeps its size:
 * the freed pages hold later rows (`sqlite3 FILE VACUUM` returns them to the disk). */
#define RUNSTORE_REMOVE_BATCH 50000
int runstore_remove_mark(RunStore *s, long id, char *err);
int runstore_remove_step(RunStore *s, long max_rows, int *pending, char *err);

/* ---- Reading ---------------------------------------------------------------------- */

typedef struct {
    long id;
    char name[64], status[16], model[32], data_name[128], tags[256];
    double created, started, ended;  /* unix seconds; 0 when not set */
    long params, last_step, sweep_id; /* 0 when not set */
    double best_val, final_val;      /* NAN when no validation yet */
    char *config;                    /* malloc'd "key=value\n" text, never NULL */
    char reason[512];     /* (LM_ERR_LEN): a run's end can name a file and an error */
    char checkpoint_dir[512];
    char *notes;                     /* malloc'd, never NULL ("" when none) */
    char data_hash[72], tokenizer[16], git_rev[48], machine[256], host[64];
    long pid;
    double heartbeat;                /* unix seconds of the last sign of life; 0 = none */
    long parent_run, parent_step;    /* a fork: the run and step it started from; 0 = none */
    int parent_init;                 /* 1: not a fork but started with init_from= from
                                        the weights of parent_run at parent_step
                                        (RUNSTORE_PARENT_INIT, runstore_control.h) */
    long best_step;                  /* the step whose weights the run's best checkpoint
                                        holds (its own record, runstore_best_checkpoint);
                                        -1 = none */
    double best_step_val;            /* the validation loss evaluated at best_step (NAN
                                        when none) */
    char group[64];                  /* its seed group (runstore_group.h); "" = none */
} RunRow;

/* A run is considered gone after this long without a heartbeat when it runs on another
 * host (where its lock cannot be seen). */
#define RUNSTORE_STALE_SECONDS 600

/* 1 when r is running/paused on another host and its heartbeat is older than
 * stale_seconds (*age receives the age in seconds, INFINITY without one); 0 otherwise (on
 * this host the run's kernel lock decides, and runstore_open repairs dead runs). */
int runstore_run_stale(const RunStore *s, const RunRow *r, double stale_seconds, double *age);

/* runstore_rows_free frees an array from runstore_list (n rows and the array);
 * runstore_row_free frees the strings of one caller-owned row (runstore_get). */
void runstore_rows_free(RunRow *rows, int n);
void runstore_row_free(RunRow *row);

/* Lists runs. filter: space-separated terms `key OP value` with OP one of
 * = != < <= > >= ~ (contains, case-insensitive). Keys: id name status model data
 * tokenizer machine git params steps best final sweep tag (= has, != lacks) since/until
 * (YYYY-MM-DD[THH:MM] local time, or Nd/Nh ago), and any other key is compared with the
 * run's config (numerically when both sides are numbers). A value may be double-quoted
 * to hold spaces. Values are data, never SQL: quotes or semicolons simply match nothing.
 * NULL/"" = all. sort: best (best_val ascending, runs without one last) | recent
 * (default) | model | name. limit <= 0 = no limit. *rows is malloc'd (runstore_rows_free).
 * LM_EARG naming the bad term or sort key. */
int runstore_list(RunStore *s, const char *filter, const char *sort, int limit,
                  RunRow **rows, int *n, char *err);
/* The store's own filter keys above (id, name, ... until), i from 0; NULL past the last
 * (any other key is a config key: callers check those against the config table). */
const char *runstore_filter_key(int i);

/* One run into a caller-owned row (free its strings with runstore_row_free).
 * LM_EARG "no run N". */
int runstore_get(RunStore *s, long id, RunRow *row, char *err);

typedef struct {
    long step;
    double value;          /* NAN where the stored value was NaN */
} SeriesPoint;

/* One series of a run in step order: any name of the registry (core/base/series.h: the
 * step metrics of metrics.def, val_loss, val_ppl, test_loss, best_val, sys/cpu, gate/L/K
 * (and the older gate:L:K), aliases such as train and val, and the named series a run
 * recorded (runstore_series.h: grad/<tensor>, ...)). Committed rows only: a read
 * never flushes (the handle's own buffered rows land at its writer's next runstore_flush).
 * *pts is malloc'd (free()); may be NULL when *n = 0. LM_EARG for an unknown series (did
 * you mean) or run (runstore_registry.c). */
int runstore_series(RunStore *s, long run, const char *metric, SeriesPoint **pts, int *n,
                    char *err);
/* Its points from step `from` on (a live view's new points; a step may hold several
 * points, sys/ samples); no point is not an error then. LONG_MIN: every point. */
int runstore_series_from(RunStore *s, long run, const char *metric, long from,
                         SeriesPoint **pts, int *n, char *err);

/* A series read in step order a row at a time, in memory that does not grow with it:
 * the exports' way through runs of millions of steps. Close with runstore_cursor_close
 * (NULL is a no-op). */
typedef struct RunStoreCursor RunStoreCursor;
void runstore_cursor_close(RunStoreCursor *c);
/* The points runstore_series would give, as a cursor *c (the same names, the same
 * errors up front: an unknown series or run, a named series the run does not have). */
int runstore_series_open(RunStore *s, long run, const char *metric, RunStoreCursor **c,
                         char *err);
/* The first and last step of a series, *any 1 when it has a point (0, 0, 0 when empty),
 * without reading it (the ends of the index where there is one): what a figure needs
 * before it reads a series as it draws. */
int runstore_series_span(RunStore *s, long run, const char *metric, long *first, long *last,
                         int *any, char *err);
/* The next point of a series cursor into *p: 1, 0 at the end, -1 on a failure. */
int runstore_series_next(RunStoreCursor *c, SeriesPoint *p, char *err);
/* One point of a series of run (a name as runstore_series takes): its first
 * (RUNSTORE_STEP_FIRST), its last (RUNSTORE_STEP_LAST) or the one at step (>= 0), into *p,
 * *found = 1; *found = 0 (p->step -1, p->value NAN) when there is none. One indexed row
 * read, whatever the series' length (best_val: the valid loss at that step, not the
 * running best the cursor gives). LM_OK, LM_EARG (unknown series) or the store's error. */
#define RUNSTORE_STEP_FIRST (-1L)
#define RUNSTORE_STEP_LAST (-2L)
int runstore_series_point(RunStore *s, long run, const char *name, long step, SeriesPoint *p,
                          int *found, char *err);

/* Rows handed out by this handle's series reads since it was opened: a point of one series
 * (runstore_series, runstore_series_next, runstore_series_point), or one row of all the
 * series runstore_series_read_many reads together: what a test counts to see that a
 * command reads what it needs. */
long runstore_rows_read(const RunStore *s);

/* name, optionally with ".last", ".min", ".max" or ".mean" (loss.min), into *ref and the
 * aggregation asked (the registry's when none). LM_OK or LM_EARG (did you mean). */
int runstore_series_ref(const char *name, SeriesRef *ref, SeriesRegAgg *agg, char *err);
/* The SQL expression of ref's agg over the run runs.id (a filter's column): text from
 * the registry and numbers only. */
void runstore_series_value_sql(const SeriesRef *ref, SeriesRegAgg agg, char *sql, size_t cap);
/* A run's series as one number (its registry aggregation, or name.AGG), NaN when it has
 * none. LM_OK, LM_EARG (unknown series or run). */
int runstore_series_summary(RunStore *s, long run, const char *name, double *v, char *err);
/* The series run has (registry order, families' members in order), those matching
 * pattern (series.h's series_match) when not NULL, into *names (malloc'd, free()).
 * LM_EARG "no series of run 3 matches 'grd/x' (it has: ...)" when a pattern matches none,
 * or for a bad pattern or an unknown run. */
int runstore_series_list(RunStore *s, long run, const char *pattern,
                          char (**names)[SERIES_NAME_LEN], int *n, char *err);

/* What runstore_series_each gives one series: its name and a chunk of its points in step
 * order (the walk's, valid during the call: a series of more than RUNSTORE_SERIES_CHUNK
 * points is given in several calls with the same name, an empty one in one call with
 * n = 0), or status non-zero and pts NULL when it could not be read (err then says why).
 * A non-zero return stops the walk and is its result. */
#define RUNSTORE_SERIES_CHUNK 4096
typedef int (*RunStoreSeriesVisit)(void *ctx, const char *name, const SeriesPoint *pts,
                                   int n, int status);
/* Walks every series of the registry run has (runstore_series_list's order) whose source
 * is not in skip (a mask of 1 << SeriesRegSource), reading each one's points through a
 * cursor (runstore_series_open) for visit, chunk by chunk: the one loop of the CSV
 * export, in memory that does not grow with the run. LM_OK, the list's failure, or the
 * first non-zero return of visit. */
int runstore_series_each(RunStore *s, long run, unsigned skip, RunStoreSeriesVisit visit,
                         void *ctx, char *err);

/* What runstore_series_read_many gives: point p of series k (names[k]). A non-zero return
 * stops the read and is its result. */
typedef int (*RunStoreManyVisit)(void *ctx, int k, const SeriesPoint *p);
/* The n series names of run, each visited with the points runstore_series_open gives it,
 * in step order, those that share their rows (the step metrics, the columns of an
 * evaluation split, rank 0's system samples, ...) read by one query, so a run's rows are
 * read once for all of them, not once a series (runstore_many.c); the series of one
 * query are visited row by row. Errors up front as runstore_series_open's (of the first
 * name that has one: nothing is visited then), LM_EDB when a read fails, LM_ENOMEM, or
 * visit's non-zero return. */
int runstore_series_read_many(RunStore *s, long run, const char *const *names, int n,
                              RunStoreManyVisit visit, void *ctx, char *err);

/* The series (not families' members) that at least one of n_ids runs has, in registry
 * order, into *names (malloc'd, free()): the rows of compare and the report. */
int runstore_series_union(RunStore *s, const long *ids, int n_ids,
                          char (**names)[SERIES_NAME_LEN], int *n, char *err);
/* The rows of compare: runstore_series_union of the n_runs runs into *names (*n of them)
 * and each run's runstore_series_summary into *values (row k: names[k] of run 0 .. n_runs
 * - 1; NaN where a run has none), both malloc'd (free()). LM_OK or LM_ENOMEM. */
int runstore_series_table(RunStore *s, const RunRow *runs, int n_runs,
                          char (**names)[SERIES_NAME_LEN], int *n, double **values, char *err);

/* A readable side-by-side table of n runs: the config keys whose values differ (only
 * those), then best/final val loss, steps, params and a line per series of the registry
 * any of them has (its aggregate: "tokens_per_s (mean)"). *text is malloc'd.
 * LM_EARG for n < 1 or an unknown run. */
int runstore_compare(RunStore *s, const long *ids, int n, char **text, char *err);

/* The one JSON schema of a run, shared by `export format=json` and `--json runs`:
 * {id, name, model, status, steps, best_val, best_ppl, best_estimated (true when best_val
 * is an estimate over eval_batches batches: runstore_best_estimated, runstore_row.h),
 * best_step, best_step_val, final_val (null before any validation), params, created (ISO 8601 UTC, "2026-11-24T07:45:42Z"), created_unix
 * (seconds; written with 16 significant digits, i.e. to the microsecond), tags [strings],
 * reason, data, tokenizer, notes, sweep (id or null), parent and parent_step (a fork's
 * parent run and step, or null), config {key: integer | number | string}}. Integers are JSON integers. Caller owns the result (json_decref); NULL only
 * when out of memory. */
struct json_t *runstore_run_json(const RunRow *r);
/* The double nearest the shortest decimal that reads back as the same float as v: a
 * 32-bit training value (lr, loss, temp) as it was set, 0.003 and not 0.0030000000260. */
double runstore_f32_decimal(double v);
/* A setting's raw value typed as the config table types it: bool keys JSON booleans,
 * int and float keys numbers, string and enum keys strings (unknown keys: by its text). */
struct json_t *runstore_json_setting(const char *key, const char *value);
/* A time in that schema, for callers that add fields to a run's object: ISO 8601 UTC to
 * the second, null when unset (0). (Numbers and strings: core/base/jsonval.h.) */
struct json_t *runstore_json_time(double t);
/* Writes the metrics of n runs to path, or to stdout's replacement `f` with
 * runstore_export_stream. csv, long form: one header "run,step,metric,value", then one
 * row per (run, step, metric) with the step metrics (core/base/metrics.def: epoch tokens
 * loss lr grad_norm tokens_per_s elapsed, ...) and every evaluation (val_loss val_ppl
 * val_bpc, test_loss ...;
 * NaN values left out), integers as integers. json: an array of runstore_run_json
 * objects, each with metrics:[{step, ...}] and evals:[{step, split, ...}]. runstore_export
 * writes a temporary file then renames it, so path is either the old file or the complete
 * new one. LM_EARG for an unknown format or run, LM_EIO on write failure. */
int runstore_export_stream(RunStore *s, const long *ids, int n, const char *format, FILE *f,
                           char *err);
int runstore_export(RunStore *s, const long *ids, int n, const char *format,
                    const char *path, char *err);

typedef struct {
    long id, step;
    double created;
    char *prompt, *settings, *text;   /* malloc'd, never NULL */
} SampleRow;

/* The samples of a run, oldest first. *rows malloc'd (runstore_samples_free). */
int runstore_samples(RunStore *s, long run, SampleRow **rows, int *n, char *err);
void runstore_samples_free(SampleRow *rows, int n);

/* The gate statistics of a run for one (layer, level), in step order. *stats is
 * malloc'd (free()). */
int runstore_gate_history(RunStore *s, long run, int layer, int level, GateStat **stats,
                          int *n, char *err);
/* The same as a cursor (RunStoreCursor), read with runstore_gate_next (1, 0 at the end,
 * -1 on a failure). */
int runstore_gates_open(RunStore *s, long run, int layer, int level, RunStoreCursor **c,
                        char *err);
int runstore_gate_next(RunStoreCursor *c, GateStat *g, char *err);

/* ---- Following a run (another process's, or a finished one replayed) ---- */

/* Marks this host's running or paused runs whose process is gone as interrupted (what
 * runstore_open does at every open): the explicit reaping step of a long-lived handle
 * (the dashboard's), since a query never changes state. A busy store is skipped (LM_OK:
 * the next call retries); other failures as runstore_flush. */
int runstore_reap_dead(RunStore *s, char *err);

/* 1 when run r is running or paused and its process is alive: on this host its run lock
 * is held (a store of an older lmlab: its pid exists); on another host its heartbeat is
 * younger than RUNSTORE_STALE_SECONDS. 0 otherwise (ended, or its process is gone). */
int runstore_run_live(const RunStore *s, const RunRow *r);

/* 1 when another connection (another process, or another handle of this one) committed
 * to the store since this handle's previous call (the first call: 1), 0 otherwise: SQLite's
 * data_version, one cheap statement, so a view can poll it on every tick and reload only
 * when runs were added, removed or updated elsewhere. Never writes. */
int runstore_changed(RunStore *s);

/* The newest logged step of a run into *m, and how many steps are logged (*n_steps; 0
 * with *m zeroed when none), from committed rows. LM_EARG "no run N"; LM_EIO when the
 * store's file left its path (runstore_gone), so a follower says so. */
int runstore_last_step(RunStore *s, long run, StepMetric *m, long *n_steps, char *err);

/* The gate statistics of every (layer, level) at a run's last recorded step <= step
 * (step < 0: its last), ordered by layer then level. *stats is malloc'd (free()); NULL
 * when *n = 0 (no gates: not a Dispatcher run, or no evaluation yet). LM_EARG "no run N". */
int runstore_gates_at(RunStore *s, long run, long step, GateStat **stats, int *n, char *err);

/* The step-file checkpoints of a run in step order (val_loss NAN when unknown; the best
 * file is not among them: runstore_best_checkpoint). malloc'd. */
int runstore_checkpoints(RunStore *s, long run, CheckpointRecord **recs, int *n,
                         char *err);

/* The run's best record: best.safetensors and the step (and val_loss) of the weights it
 * holds; *found = 0 (best->step -1) when the run recorded none. LM_OK or the store's error. */
int runstore_best_checkpoint(RunStore *s, long run, CheckpointRecord *best, int *found,
                             char *err);

/* ---- Sweeps ----------------------------------------------------------------------- */

/* Creates a sweep (status "running") with its writer's code over the spec (see
 * runstore_sweep_sign; a spec that cannot be signed, e.g. no key, is not stored); *id
 * receives its id. */
int runstore_sweep_create(RunStore *s, const char *name, const char *spec,
                          const char *strategy, long *id, char *err);
/* runstore_sweep_create with its n trials (numbers trial[i], parameter text params[i])
 * recorded "pending" in the same transaction: a reader never sees the sweep without
 * them, and a failure leaves neither. */
int runstore_sweep_create_trials(RunStore *s, const char *name, const char *spec,
                                 const char *strategy, const int *trial,
                                 const char *const *params, int n, long *id, char *err);

/* Takes sweep's kernel lock for this process (the one that runs its trials, held until
 * runstore_sweep_unlock or the process ends: the kernel drops it on a crash). LM_OK;
 * LM_ESTATE when another live process runs the sweep (err names it: a second runner would
 * fail its trials and mark it failed under that one); LM_EIO when the lock file cannot be
 * opened. Within one process it never conflicts (POSIX record locks). */
int runstore_sweep_lock(RunStore *s, long sweep, char *err);
void runstore_sweep_unlock(RunStore *s, long sweep);

/* Sets a sweep's status (running|paused|finished|stopped|failed|interrupted: ended with
 * a trial whose worker was killed, resumable); terminal statuses set `ended`. LM_EARG for an unknown sweep or status. */
int runstore_sweep_set_status(RunStore *s, long sweep, const char *status, char *err);

/* Marks a pending trial running (a parallel sweep's worker was just started for it):
 * nothing else of its row changes, and a trial its worker already recorded stays as it
 * is. LM_OK or the store's error. */
int runstore_sweep_trial_started(RunStore *s, long sweep, int trial, char *err);

/* Inserts or replaces trial `trial` of a sweep. run_id 0 = no run yet. */
int runstore_sweep_trial_set(RunStore *s, long sweep, int trial, long run_id,
                             const char *params, const char *status, char *err);

typedef struct {
    long id;
    char name[64], strategy[16], status[16];
    double created, ended;
    char *spec;            /* malloc'd, never NULL */
    char mac[65];          /* its writer's code over the spec ("" = none; runstore_rowsig.c) */
} SweepRow;

/* One sweep into a caller-owned row (free row->spec). LM_EARG "no sweep N". */
int runstore_sweep_get(RunStore *s, long sweep, SweepRow *row, char *err);

/* Who wrote a sweep's spec and a run's settings (issue 46: a shared store is data): a code
 * under the user's key (usersig.h) over (store id, sweep id, spec, creation time) or (store
 * id, run id, settings, checkpoint folder; runstore_set_checkpoint_dir re-signs a run whose
 * code held). runstore_sweep_create, runstore_run_create and
 * runstore_run_set_config (runstore_changes.h) sign;
 * _sign re-signs a sweep (`sweep trust N`, after the user has read it). _trusted: LM_OK when
 * this user wrote it, else LM_EARG with why (no code, another key, changed, moved).
 * runstore_sweep_refusal: LM_OK, or LM_EARG with the whole line to show ("sweep N's spec
 * was not written by you: refused (why) ..." and what to do). */
int runstore_sweep_sign(RunStore *s, long id, const char *spec, double created, char *err);
int runstore_sweep_trusted(const RunStore *s, const SweepRow *row, char *why, size_t cap);
int runstore_sweep_refusal(const RunStore *s, const SweepRow *row, char *msg, size_t cap);
int runstore_run_config_sign(RunStore *s, long id, const char *config, char *err);
int runstore_run_config_trusted(RunStore *s, long id, const char *config, char *why,
                                size_t cap);

typedef struct {
    int trial;
    long run_id;           /* 0 = none */
    char params[512], status[16], run_status[16];
    double best_val, final_val; /* the run's, NAN when none */
    long last_step;
    int stopped_early;     /* its run was stopped by the sweep's halving (not by `stop`) */
    int best_estimated;    /* best_val is an estimate over eval_batches batches
                              (runstore_best_estimated): a trial stopped before its final
                              whole-split evaluation */
} SweepTrialRow;

/* The trials of a sweep in trial order with their runs' results. *rows malloc'd. */
int runstore_sweep_trials(RunStore *s, long sweep, SweepTrialRow **rows, int *n,
                          char *err);

#endif
