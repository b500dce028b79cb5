/* test_runstore_faults.c — the run store under stress: a concurrent writer and reader
 * (threads and processes) never showing half a batch, crash repair after kill -9 (the run
 * becomes `interrupted`, no torn rows, a live process's run untouched), bad files (not
 * SQLite, truncated, read-only, newer schema), a failed flush keeping its rows, a full
 * disk. Raw SQLite is used only to build and inspect files. */
#include "runstore_util.h"

/* ---- concurrency ------------------------------------------------------------------------- */

typedef struct {
    char path[512];
    long run;
    int batches, bad_writes, reads, torn, done;
} Shared;

/* Writes `batches` transactions of exactly 100 steps each. */
static int write_batches(const char *path, long run, int batches, int sleep_us)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    int bad = 0;
    if (runstore_open(path, &s, err)) return 1000;
    runstore_set_autoflush(s, 1 << 30, 1e9);
    for (int b = 0; b < batches; b++) {
        for (int k = 0; k < 100; k++) {
            StepMetric m = step_of((long)b * 100 + k + 1);
            bad += runstore_log_step(s, run, &m, err) != LM_OK;
        }
        bad += runstore_flush(s, err) != LM_OK;
        if (sleep_us) usleep((useconds_t)sleep_us);
    }
    runstore_close(s);
    return bad;
}

/* Reads the series and last_step until *done; counts reads that are not whole batches. */
static void read_until_done(Shared *sh, int *done)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    if (runstore_open(sh->path, &s, err)) {
        sh->torn = -1;
        return;
    }
    int last = 0;
    while (!last) {
        last = __atomic_load_n(done, __ATOMIC_ACQUIRE);
        SeriesPoint *p;
        int n = 0;
        RunRow r;
        if (runstore_series(s, sh->run, "loss", &p, &n, err) == LM_OK) {
            sh->torn += n % 100 != 0 || (n && p[n - 1].step != n);
            free(p);
        } else {
            sh->torn++;
        }
        if (runstore_get(s, sh->run, &r, err) == LM_OK) {
            sh->torn += r.last_step % 100 != 0;
            runstore_row_free(&r);
        }
        sh->reads++;
    }
    runstore_close(s);
}

static void *writer_main(void *arg)
{
    Shared *sh = arg;
    sh->bad_writes = write_batches(sh->path, sh->run, sh->batches, 1000);
    __atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *reader_main(void *arg)
{
    Shared *sh = arg;
    read_until_done(sh, &sh->done);
    return NULL;
}

static long setup_run(const char *path)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    if (runstore_open(path, &s, err)) return 0;
    long id = new_run(s, "concurrent", "msa", "lr=1\n", NULL);
    runstore_close(s);
    return id;
}

static void test_threads(void)
{
    Shared sh = {.batches = 100};
    db_path(sh.path, sizeof sh.path, "threads.db");
    sh.run = setup_run(sh.path);
    pthread_t w, r;
    pthread_create(&r, NULL, reader_main, &sh);
    pthread_create(&w, NULL, writer_main, &sh);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    printf("  threads: %d reads during 100 batches, %d torn\n", sh.reads, sh.torn);
    CHECK(sh.bad_writes == 0, "writer errors %d", sh.bad_writes);
    CHECK(sh.torn == 0 && sh.reads > 0, "reader saw a half batch %d times", sh.torn);
    CHECK(q_long(sh.path, "SELECT count(*) FROM metrics") == 10000, "all rows written");
}

static void test_processes(void)
{
    Shared sh = {.batches = 60};
    db_path(sh.path, sizeof sh.path, "procs.db");
    sh.run = setup_run(sh.path);
    pid_t pid = fork();
    if (pid == 0) _exit(write_batches(sh.path, sh.run, sh.batches, 2000) ? 1 : 0);
    int done = 0, status = 0;
    /* read in this process while the child writes; stop once it has exited */
    RunStore *s;
    char err[LM_ERR_LEN];
    CHECK(runstore_open(sh.path, &s, err) == LM_OK, "parent open: %s", err);
    while (!done) {
        done = waitpid(pid, &status, WNOHANG) == pid;
        SeriesPoint *p;
        int n = 0;
        if (runstore_series(s, sh.run, "loss", &p, &n, err) == LM_OK) free(p);
        else sh.torn++;
        sh.torn += n % 100 != 0;
        sh.reads++;
    }
    runstore_close(s);
    printf("  processes: %d reads during 60 batches, %d torn\n", sh.reads, sh.torn);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child writer failed");
    CHECK(sh.torn == 0, "parent saw a half batch %d times", sh.torn);
    CHECK(q_long(sh.path, "SELECT count(*) FROM metrics") == 6000, "all rows written");
}

static void kill9_child(const char *path, int fd)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive a crashed test */
    if (runstore_open(path, &s, err)) _exit(2);
    runstore_set_autoflush(s, 37, 1e9);
    long id = new_run(s, "doomed", "lstm", "lr=0.1\n", NULL);
    if (write(fd, &id, sizeof id) != sizeof id) _exit(3);
    double t0 = now_s();
    for (long t = 1; now_s() - t0 < 60; t++) {   /* the parent kills it long before */
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
        if (t % 50 == 0) {
            EvalMetric e = {.step = t, .split = "valid", .loss = 10.0 / t, .bpc = NAN};
            runstore_log_eval(s, id, &e, err);
        }
    }
    _exit(4);
}

/* While the child lives its run must stay untouched; after SIGKILL a reopen repairs it. */
static void check_live_untouched(const char *path, long id, pid_t pid)
{
    char err[LM_ERR_LEN];
    RunStore *b;
    RunRow r;
    CHECK(runstore_open(path, &b, err) == LM_OK, "browse open: %s", err);
    if (!b) return;
    CHECK(runstore_get(b, id, &r, err) == LM_OK && !strcmp(r.status, "running") &&
          r.pid == pid, "live run untouched (%s)", r.status);
    runstore_row_free(&r);
    CHECK(runstore_delete_run(b, id, 0, err) == LM_ESTATE, "cannot delete a live run");
    CHECK(runstore_run_claim(b, id, err) == LM_ESTATE, "cannot claim a live run: %s", err);
    runstore_close(b);
}

static void test_kill9(void)
{
    char path[512], err[LM_ERR_LEN], sql[256], integrity[64];
    int fds[2];
    db_path(path, sizeof path, "kill9.db");
    CHECK(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        kill9_child(path, fds[1]);
    }
    close(fds[1]);
    long id = 0;
    CHECK(read(fds[0], &id, sizeof id) == sizeof id, "child sent its run id");
    close(fds[0]);
    double t0 = now_s();
    while (q_long(path, "SELECT coalesce(max(step), 0) FROM metrics") < 3000 && now_s() - t0 < 20)
        usleep(5000);
    check_live_untouched(path, id, pid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    RunStore *s;
    RunRow r;
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen after kill: %s", err);
    if (!s) return;
    CHECK(runstore_get(s, id, &r, err) == LM_OK, "get: %s", err);
    snprintf(sql, sizeof sql, "process %d ended without closing the run at step %ld", (int)pid,
             r.last_step);
    CHECK(!strcmp(r.status, "interrupted") && !strcmp(r.reason, sql) && r.ended > 0,
          "status %s reason '%s'", r.status, r.reason);
    long max_step = q_long(path, "SELECT max(step) FROM metrics");
    long count = q_long(path, "SELECT count(*) FROM metrics");
    long nulls = q_long(path, "SELECT count(*) FROM metrics WHERE loss IS NULL OR lr IS NULL"
                        " OR elapsed IS NULL");
    printf("  kill -9 at step %ld: %ld rows, reason '%s'\n", r.last_step, count, r.reason);
    CHECK(r.last_step >= 3000 && r.last_step == max_step && count == max_step && nulls == 0,
          "last_step %ld max %ld count %ld nulls %ld", r.last_step, max_step, count, nulls);
    double eval_step = round(10.0 / r.final_val);   /* evals every 50 steps, loss 10/step */
    CHECK(fabs(10.0 / eval_step - r.final_val) < 1e-12 && (long)eval_step % 50 == 0 &&
          eval_step <= r.last_step && eval_step > r.last_step - 100,
          "final_val %g is the last flushed eval", r.final_val);
    runstore_row_free(&r);
    runstore_close(s);
    q_text(path, "PRAGMA integrity_check", integrity, sizeof integrity);
    CHECK(!strcmp(integrity, "ok"), "integrity_check: %s", integrity);
}

/* ---- bad files, failed flushes ------------------------------------------------------------ */

static void make_db_with_steps(const char *path, long steps)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    if (runstore_open(path, &s, err)) return;
    long id = new_run(s, "victim", "msa", "lr=1\n", NULL);
    for (long t = 1; t <= steps; t++) {
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
    }
    runstore_close(s);
}

/* Opens a damaged file and reads everything; the first failure must be LM_EFORMAT. */
static int open_and_read(const char *path, char *err)
{
    RunStore *s;
    int st = runstore_open(path, &s, err);
    if (st) return st;
    RunRow *rows;
    int n;
    SeriesPoint *p;
    st = runstore_list(s, NULL, "best", 0, &rows, &n, err);
    if (!st) {
        runstore_rows_free(rows, n);
        st = runstore_series(s, 1, "loss", &p, &n, err);
        if (!st) free(p);
    }
    runstore_close(s);
    return st;
}

/* Makes path read-only: chmod 0444 for a normal user, the immutable flag for root (whom
 * permissions do not stop). 0 on success, -1 when neither works here. */
static int make_read_only(const char *path, int on)
{
    struct stat sb;
    if (stat(path, &sb)) return -1;
    if (geteuid() != 0)
        return chmod(path, on ? (S_ISDIR(sb.st_mode) ? 0555 : 0444)
                              : (S_ISDIR(sb.st_mode) ? 0755 : 0644));
    int fd = open(path, O_RDONLY), flags = 0, rc = -1;
    if (fd < 0) return -1;
    if (!ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
        flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
        rc = ioctl(fd, FS_IOC_SETFLAGS, &flags);
    }
    close(fd);
    return rc;
}

static void test_read_only(void)
{
    char path[512], dir[256], err[LM_ERR_LEN];
    RunStore *s = NULL;
    db_path(path, sizeof path, "readonly.db");
    make_db_with_steps(path, 1);
    if (make_read_only(path, 1)) {
        printf("  read-only checks skipped: cannot make a file read-only here (root without"
               " the immutable flag)\n");
        return;
    }
    int st = runstore_open(path, &s, err);
    CHECK(st == LM_EIO && strstr(err, "read-only") && !s, "read-only file: %s", err);
    printf("  read-only file (%s): %s\n", geteuid() ? "chmod 0444" : "immutable flag", err);
    make_read_only(path, 0);
    runstore_close(s);
    db_path(dir, sizeof dir, "rodir");
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/runs.db", dir);
    make_db_with_steps(path, 1);
    make_read_only(dir, 1);
    s = NULL;
    st = runstore_open(path, &s, err);
    printf("  read-only directory: %s: %s\n", err_name(st), st ? err : "");
    CHECK(st == LM_EIO && !s, "read-only directory -> EIO (%d)", st);
    make_read_only(dir, 0);
    runstore_close(s);
}

static void test_bad_files(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "random.db");
    FILE *f = fopen(path, "wb");
    unsigned x = 12345;
    for (int i = 0; i < 8192; i++) fputc((int)((x = x * 1103515245u + 12345u) >> 16) & 255, f);
    fclose(f);
    CHECK(runstore_open(path, &s, err) == LM_EFORMAT && !s && strstr(err, path),
          "random bytes: %s", err);
    printf("  random bytes: %s\n", err);

    for (int k = 0; k < 2; k++) {
        db_path(path, sizeof path, k ? "trunc_small.db" : "trunc_half.db");
        make_db_with_steps(path, 20000);
        struct stat sb;
        stat(path, &sb);
        CHECK(truncate(path, k ? 3000 : sb.st_size / 2) == 0, "truncate");
        int st = open_and_read(path, err);
        printf("  truncated to %s: %s: %s\n", k ? "3000 bytes" : "half", err_name(st), err);
        CHECK(st == LM_EFORMAT && strstr(err, path), "truncated file -> EFORMAT (%d)", st);
    }

    db_path(path, sizeof path, "newer.db");
    make_db_with_steps(path, 1);
    char newer[64];
    snprintf(newer, sizeof newer, "PRAGMA user_version = %d", RUNSTORE_SCHEMA_VERSION + 1);
    q_exec(path, newer);
    CHECK(runstore_open(path, &s, err) == LM_EFORMAT && strstr(err, "newer lmlab"),
          "newer schema: %s", err);

    db_path(path, sizeof path, "foreign.db");
    q_exec(path, "CREATE TABLE photos(x)");
    CHECK(runstore_open(path, &s, err) == LM_EFORMAT && strstr(err, "not an lmlab"),
          "foreign SQLite file: %s", err);

    CHECK(runstore_open("/nonexistent-lmlab-dir/x.db", &s, err) == LM_EIO, "missing dir: %s",
          err);

    test_read_only();
}

static void test_failed_flush(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    sqlite3 *other;
    db_path(path, sizeof path, "locked.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long id = new_run(s, "locked", "msa", "lr=1\n", NULL);
    runstore_set_busy_timeout(s, 50);
    runstore_set_autoflush(s, 10, 1e9);
    sqlite3_open(path, &other);
    CHECK(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK, "lock");
    int st = LM_OK;
    for (long t = 1; t <= 9; t++) {
        StepMetric m = step_of(t);
        st |= runstore_log_step(s, id, &m, err);
    }
    CHECK(st == LM_OK && runstore_pending(s) == 9, "buffered below the threshold");
    StepMetric m = step_of(10);
    st = runstore_log_step(s, id, &m, err);
    CHECK(st == LM_EDB && strstr(err, "locked by another process"), "autoflush locked: %s", err);
    CHECK(runstore_pending(s) == 10, "rows kept after failed autoflush");
    m = step_of(11);
    st = runstore_log_step(s, id, &m, err);   /* a retry would fail again with LM_EDB */
    CHECK(st == LM_OK, "back-off: the next step does not retry at once");
    CHECK(runstore_flush(s, err) == LM_EDB && runstore_pending(s) == 11, "flush fails, kept");
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    CHECK(runstore_flush(s, err) == LM_OK && runstore_pending(s) == 0, "retry: %s", err);
    SeriesPoint *p;
    int n = 0;
    runstore_series(s, id, "loss", &p, &n, err);
    CHECK(n == 11, "all 11 rows arrived once (n=%d)", n);
    free(p);
    runstore_close(s);
}

/* In a child (the file size limit is per process): a flush that hits the limit fails
 * with LM_ENOSPC or LM_EIO, keeps its rows, and succeeds once space is back, leaving the
 * WAL truncated (issue 46 item 6). */
static int disk_full_child(const char *path)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    signal(SIGXFSZ, SIG_IGN);
    if (runstore_open(path, &s, err)) return 1;
    long id = new_run(s, "full", "msa", "lr=1\n", NULL);
    runstore_set_autoflush(s, 1 << 30, 1e9);
    struct rlimit lim;
    getrlimit(RLIMIT_FSIZE, &lim);
    struct rlimit small = {256 << 10, lim.rlim_max};
    setrlimit(RLIMIT_FSIZE, &small);
    for (long t = 1; t <= 20000; t++) {
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
    }
    int st = runstore_flush(s, err), bad = 0;
    printf("  disk full (file size limit 256 KiB): %s: %s\n", err_name(st), err);
    fflush(stdout);   /* the child leaves with _exit */
    bad |= (st != LM_ENOSPC && st != LM_EIO) << 1;
    bad |= (runstore_pending(s) != 20000) << 2;
    setrlimit(RLIMIT_FSIZE, &lim);
    bad |= (runstore_flush(s, err) != LM_OK || runstore_pending(s) != 0) << 3;
    /* issue 46 item 6: once rows land after the outage the WAL it grew is folded back
     * and truncated, so the freed space stays free */
    char wal[600];
    struct stat sb;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &sb) == 0) printf("  WAL after space returned: %lld bytes\n", (long long)sb.st_size);
    fflush(stdout);
    bad |= (stat(wal, &sb) != 0 || sb.st_size != 0) << 5;
    SeriesPoint *p;
    int n = 0;
    if (runstore_series(s, id, "loss", &p, &n, err) == LM_OK) free(p);
    bad |= (n != 20000) << 4;
    runstore_close(s);
    return bad;
}

static void test_disk_full(void)
{
    char path[512];
    int status = 0;
    db_path(path, sizeof path, "full.db");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(disk_full_child(path));
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "disk-full child: failure bits 0x%x",
          WIFEXITED(status) ? WEXITSTATUS(status) : 255);
    q_exec(path, "PRAGMA wal_checkpoint");
    char integrity[64];
    q_text(path, "PRAGMA integrity_check", integrity, sizeof integrity);
    CHECK(!strcmp(integrity, "ok"), "integrity after disk full: %s", integrity);
}

static void run_all(void)
{
    test_threads();
    test_processes();
    test_kill9();
    test_bad_files();
    test_failed_flush();
    test_disk_full();
}

int main(void)
{
    return runstore_test_main("runstore fault tests", run_all);
}
