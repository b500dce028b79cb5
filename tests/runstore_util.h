/* runstore_util.h — helpers shared by the run-store tests (test_runstore.c and
 * test_runstore_faults.c): a temporary directory, raw-SQLite queries to build and inspect
 * files, a step record and a run. Header-only, like check.h. */
#ifndef LM_RUNSTORE_UTIL_H
#define LM_RUNSTORE_UTIL_H

#include "check.h"
#include "err.h"
#include "runstore.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[64];

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void db_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

/* First column of the first row of a constant query as an integer (-999 on error). */
static inline long q_long(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    long v = -999;
    if (sqlite3_open(path, &db) != SQLITE_OK) return v;
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

static inline void q_text(const char *path, const char *sql, char *out, size_t cap)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    snprintf(out, cap, "(error)");
    if (sqlite3_open(path, &db) != SQLITE_OK) return;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

static inline int q_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    sqlite3_busy_timeout(db, 5000);   /* a live run's recorder may hold the write lock */
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

static inline StepMetric step_of(long step)
{
    StepMetric m = {.step = step, .epoch = step / 100.0, .tokens = step * 640,
                    .loss = 4.0f / (1.0f + 0.01f * (float)step), .lr = 1e-3f,
                    .grad_norm = 0.5f + (float)(step % 7), .tokens_per_s = 1000.0f + step,
                    .elapsed = step * 0.01};
    return m;
}

static inline long new_run(RunStore *s, const char *name, const char *model, const char *config,
                    const char *tags)
{
    char err[LM_ERR_LEN];
    long id = 0;
    RunInfo info = {.name = name, .config = config, .model = model, .data_name = "tiny",
                    .data_hash = "ab12", .tokenizer = "char", .tags = tags, .params = 1000};
    int st = runstore_run_create(s, &info, &id, err);
    CHECK(st == LM_OK, "run_create: %s", err);
    return id;
}


/* The number of runs `filter` lists (-1 when the listing failed: *status says why). */
static inline int count_list(RunStore *s, const char *filter, int *status)
{
    char err[LM_ERR_LEN];
    RunRow *rows;
    int n = -1;
    *status = runstore_list(s, filter, "recent", 0, &rows, &n, err);
    runstore_rows_free(rows, n);
    return n;
}

/* Creates the temporary directory, runs the tests, removes it, returns the exit code. */
static inline int runstore_test_main(const char *label, void (*run)(void))
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lmlab-runstore-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    printf("%s in %s\n", label, tmpdir);
    run();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}

#endif
