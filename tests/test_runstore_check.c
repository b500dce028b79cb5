/* test_runstore_check.c — issue 25 items 3-5 in the run store (runstore_check.c): one
 * store reached through two names is one store (a symbolic link, ./ and absolute paths
 * share its run locks; a hard-linked file is refused); a store moved or deleted under an
 * open handle takes no more writes and its rows go to the journal; a damaged store, a
 * foreign SQLite file or an unknown schema version is refused with the file left as it
 * was. And issue 26: reads never write (a query flushes nothing). */
#include "runstore_util.h"

/* The bytes of a file as an FNV-1a hash (0 when it cannot be read). */
static unsigned long long file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned long long h = 1469598103934665603ull;
    for (int c; (c = fgetc(f)) != EOF;) h = (h ^ (unsigned)c) * 1099511628211ull;
    fclose(f);
    return h;
}

/* A child creates a run through path and holds it until the pipe closes. */
static pid_t child_holding_run(const char *path, long *id, int *keep_fd)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        char err[LM_ERR_LEN], c;
        RunStore *s;
        long rid = 0;
        RunInfo info = {.name = "child", .model = "msa"};
        if (runstore_open(path, &s, err) || runstore_run_create(s, &info, &rid, err)) _exit(3);
        if (write(up[1], &rid, sizeof rid) != sizeof rid) _exit(4);
        if (read(down[0], &c, 1) < 0) _exit(5);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    if (read(up[0], id, sizeof *id) != sizeof *id) *id = -1;
    close(up[0]);
    *keep_fd = down[1];
    return pid;
}

/* The stored status of run id, opened through path (the open repairs dead runs). */
static void status_via(const char *path, long id, char *out, size_t cap)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    RunRow r;
    snprintf(out, cap, "(no run %ld)", id);
    if (runstore_open(path, &s, err)) {
        snprintf(out, cap, "(open failed: %.100s)", err);
        return;
    }
    if (!runstore_get(s, id, &r, err)) {
        snprintf(out, cap, "%s", r.status);
        runstore_row_free(&r);
    }
    runstore_close(s);
}

/* Item 3: B.db -> A.db; ./A.db, A.db and the absolute path; a hard link. */
static void one_store_two_names(void)
{
    char cwd[512], abs_a[600], st[160], err[LM_ERR_LEN];
    if (!getcwd(cwd, sizeof cwd) || chdir(tmpdir)) return;
    CHECK(symlink("A.db", "B.db") == 0, "symlink");
    RunStore *s;
    long id = 0;
    int fd = -1;
    /* a finished run through B.db first (an older lmlab then made B.db-runlocks) */
    CHECK(runstore_open("B.db", &s, err) == LM_OK, "open B: %s", err);
    if (s) {
        long b = new_run(s, "via-b", "msa", "", NULL);
        runstore_run_set_status(s, b, "finished", NULL, err);
        runstore_close(s);
    }
    pid_t holder = child_holding_run("A.db", &id, &fd);
    CHECK(holder > 0 && id > 0, "child run");
    const char *names[] = {"B.db", "./A.db", "A.db", abs_a};
    snprintf(abs_a, sizeof abs_a, "%s/A.db", tmpdir);
    for (int i = 0; i < 4; i++) {
        status_via(names[i], id, st, sizeof st);
        CHECK(!strcmp(st, "running"), "the live run of A.db, read through %s: %s", names[i], st);
    }
    CHECK(runstore_open("B.db", &s, err) == LM_OK, "open B: %s", err);
    if (s) {
        int rc = runstore_run_claim(s, id, err);
        CHECK(rc == LM_ESTATE, "resume of A's live run through B.db: %d %s", rc, err);
        runstore_close(s);
    }
    close(fd);
    waitpid(holder, NULL, 0);
    status_via("B.db", id, st, sizeof st);
    CHECK(!strcmp(st, "interrupted"), "after the holder died, through B.db: %s", st);

    CHECK(link("A.db", "C.db") == 0, "hard link");
    unsigned long long before = file_hash("A.db");
    s = NULL;
    int rc = runstore_open("C.db", &s, err);
    CHECK(rc == LM_EARG && !s && strstr(err, "hard links"), "hard link C.db opened: %d %s",
          rc, err);
    printf("  hard link: %s\n", err);
    rc = runstore_open("A.db", &s, err);
    CHECK(rc == LM_EARG && !s, "A.db with a second name opened: %d", rc);
    CHECK(file_hash("A.db") == before && access("C.db-wal", F_OK) != 0,
          "the refused store was changed");
    unlink("C.db");
    CHECK(runstore_open("A.db", &s, err) == LM_OK, "A.db alone again: %s", err);
    runstore_close(s);
    if (chdir(cwd)) return;
}

/* Item 4: the store moved (mv) or deleted (rm) under an open handle. */
static void store_vanishes(int remove)
{
    char path[512], moved[512], journal[512], err[LM_ERR_LEN];
    db_path(path, sizeof path, remove ? "gone.db" : "moving.db");
    db_path(moved, sizeof moved, "moved.db");
    db_path(journal, sizeof journal, remove ? "gone.tsv" : "moving.tsv");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    runstore_set_journal(s, journal, 0);
    long id = new_run(s, "victim", "msa", "", NULL);
    for (long t = 1; t <= 10; t++) {
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
    }
    CHECK(runstore_flush(s, err) == LM_OK && !runstore_gone(s), "flush: %s", err);
    CHECK((remove ? unlink(path) : rename(path, moved)) == 0, "mv/rm");
    for (long t = 11; t <= 20; t++) {
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
    }
    int rc = runstore_flush(s, err);
    CHECK(rc == LM_EIO && strstr(err, remove ? "was deleted while lmlab had it open" :
                                              "was moved, deleted or replaced") &&
          runstore_gone(s), "%s store: flush %d %s", remove ? "deleted" : "moved", rc, err);
    char saved[600];   /* deleted: what it held is copied from the open file (backup) */
    snprintf(saved, sizeof saved, "%s.saved-%ld", path, (long)getpid());
    CHECK(!remove || (strstr(err, saved) && access(saved, F_OK) == 0),
          "the deleted store was not saved as %s: %s", saved, err);
    printf("  %s: %s\n", remove ? "rm" : "mv", err);
    CheckpointRecord c = {.step = 20, .path = "x", .val_loss = 1};
    CHECK(runstore_log_checkpoint(s, id, &c, err) == LM_EIO, "checkpoint written to it");
    CHECK(runstore_run_set_status(s, id, "finished", NULL, err) == LM_EIO, "status written");
    runstore_close(s);   /* the rows go to the journal */
    FILE *f = fopen(journal, "r");
    int lines = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;) lines += ch == '\n';
    if (f) fclose(f);
    /* the 10 step rows, the checkpoint record and the status (issue 46 item 5: every record
       written during the fault lands later) */
    CHECK(lines == 12, "journal holds %d rows, expected the 10 after the %s, the checkpoint"
          " record and the status", lines, remove ? "rm" : "mv");
    CHECK(access(path, F_OK) != 0, "a file was made again at the old path");
    /* a new store at the old path would discard the -wal left there: refused */
    s = NULL;
    rc = runstore_open(path, &s, err);
    CHECK(rc == LM_ESTATE && !s && strstr(err, "-wal") && access(path, F_OK) != 0,
          "a new store opened over the -wal left at the old path: %d %s", rc, err);
    /* SQLite never folds a -wal into a moved file: the rows committed before the mv wait
     * in moving.db-wal; moved back, the store is whole, and the journal lands the rest. A
     * deleted one: its saved copy moved to its name, the -wal and -shm deleted (as the
     * message says), the same */
    char wal[600], shm[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    CHECK(access(wal, F_OK) == 0, "the -wal at the old name was removed");
    if (remove)
        CHECK(!unlink(wal) && !unlink(shm) && rename(saved, path) == 0, "the saved copy back");
    else
        CHECK(rename(moved, path) == 0, "mv back");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open moved back: %s", err);
    if (!s) return;
    RunRow r;
    CHECK(runstore_get(s, id, &r, err) == LM_OK && r.last_step == 10, "moved back: step %ld",
          r.last_step);
    runstore_row_free(&r);
    runstore_set_journal(s, journal, 0);
    CHECK(runstore_flush(s, err) == LM_OK && runstore_get(s, id, &r, err) == LM_OK &&
          r.last_step == 20 && access(journal, F_OK) != 0, "journal landed: step %ld %s",
          r.last_step, err);
    runstore_row_free(&r);
    runstore_close(s);
}

/* Writes 512 bytes of a fixed pattern at the start of page pg (1-based, 4096 bytes). */
static void damage_page(const char *path, long pg)
{
    int fd = open(path, O_WRONLY);
    char junk[512];
    for (int i = 0; i < 512; i++) junk[i] = (char)(i * 37 + 11);
    CHECK(fd >= 0 && pwrite(fd, junk, sizeof junk, (pg - 1) * 4096) == 512, "damage");
    if (fd >= 0) close(fd);
}

/* Item 5: damage in the run list is refused at open; damage in the logged rows before a
 * run writes; the message says what to do; the file is left as it was. */
static void damaged_store(void)
{
    char path[512], err[LM_ERR_LEN];
    for (int bulk = 0; bulk < 2; bulk++) {
        db_path(path, sizeof path, bulk ? "damaged_rows.db" : "damaged_runs.db");
        RunStore *s;
        CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
        if (!s) return;
        long id = new_run(s, "a", "msa", "lr=1\n", NULL);
        for (long t = 1; t <= 3000; t++) {
            StepMetric m = step_of(t);
            runstore_log_step(s, id, &m, err);
        }
        runstore_run_set_status(s, id, "finished", NULL, err);
        runstore_close(s);
        q_exec(path, "PRAGMA wal_checkpoint(TRUNCATE)");
        long pg = q_long(path, bulk ? "SELECT rootpage FROM sqlite_master WHERE name='metrics'"
                                    : "SELECT rootpage FROM sqlite_master WHERE name='runs'");
        damage_page(path, pg);
        unsigned long long before = file_hash(path);
        s = NULL;
        int rc = runstore_open(path, &s, err);
        if (!bulk) {
            CHECK(rc == LM_EFORMAT && !s && strstr(err, "damaged") && strstr(err, ".recover"),
                  "damaged run list: %d %s", rc, err);
            printf("  damaged runs page: %s\n", err);
        } else {
            CHECK(rc == LM_OK, "damaged metrics pages refused at open (bounded check): %s", err);
            long nid = 0;
            RunInfo info = {.name = "b", .model = "msa"};
            rc = s ? runstore_run_create(s, &info, &nid, err) : -1;
            CHECK(rc == LM_EFORMAT && nid == 0 && strstr(err, ".recover"),
                  "a run started in a damaged store: %d %s", rc, err);
            printf("  damaged rows page, train: %s\n", err);
            runstore_close(s);
        }
        CHECK(file_hash(path) == before, "the damaged file was changed");
    }
}

/* Item 5: files lmlab did not make are refused before anything changes them. */
static void foreign_files_untouched(void)
{
    char path[512], mode[32], err[LM_ERR_LEN];
    RunStore *s = NULL;
    db_path(path, sizeof path, "plain.db");
    q_exec(path, "CREATE TABLE photos(x); INSERT INTO photos VALUES(1)");
    unsigned long long before = file_hash(path);
    int rc = runstore_open(path, &s, err);
    q_text(path, "PRAGMA journal_mode", mode, sizeof mode);
    CHECK(rc == LM_EFORMAT && strstr(err, "not an lmlab run store") && !strcmp(mode, "delete")
          && file_hash(path) == before, "plain SQLite file: %d %s, journal mode %s", rc, err,
          mode);

    db_path(path, sizeof path, "minus.db");
    runstore_open(path, &s, err);
    runstore_close(s);
    q_exec(path, "PRAGMA user_version = -1");
    before = file_hash(path);
    rc = runstore_open(path, &s, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "schema version -1") && !strstr(err, "migrating") &&
          file_hash(path) == before, "user_version -1: %d %s", rc, err);
    printf("  user_version -1: %s\n", err);

    /* a header without tables: never an lmlab store (a moved store's content is in its
     * -wal at the old name), so it is not given a fresh schema */
    db_path(path, sizeof path, "header.db");
    q_exec(path, "PRAGMA journal_mode=WAL");
    before = file_hash(path);
    rc = runstore_open(path, &s, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "without tables") && file_hash(path) == before &&
          q_long(path, "SELECT count(*) FROM sqlite_master") == 0,
          "header-only file given a schema: %d %s", rc, err);
}

/* Issue 26: a query never flushes the handle's buffered rows (nor a journal). */
static void reads_do_not_write(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "reads.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    runstore_set_autoflush(s, 1000, 1e9);
    long id = new_run(s, "r", "msa", "d=1\n", NULL);
    for (long t = 1; t <= 5; t++) {
        StepMetric m = step_of(t);
        runstore_log_step(s, id, &m, err);
    }
    SeriesPoint *p = NULL;
    int n = 0;
    StepMetric last;
    long n_steps;
    char *text = NULL;
    runstore_series(s, id, "loss", &p, &n, err);
    free(p);
    runstore_last_step(s, id, &last, &n_steps, err);
    runstore_compare(s, &id, 1, &text, err);
    free(text);
    FILE *f = tmpfile();
    if (f) runstore_export_stream(s, &id, 1, "csv", f, err);
    if (f) fclose(f);
    CHECK(runstore_pending(s) == 5 && q_long(path, "SELECT count(*) FROM metrics") == 0,
          "reads wrote: %ld pending, %ld rows stored", runstore_pending(s),
          q_long(path, "SELECT count(*) FROM metrics"));
    CHECK(runstore_flush(s, err) == LM_OK && q_long(path, "SELECT count(*) FROM metrics") == 5,
          "the writer's flush: %s", err);
    runstore_close(s);
}

/* Issue 25 item 7: a view can tell cheaply that another process changed the store. */
static void changes_seen(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *a = NULL, *b = NULL;
    db_path(path, sizeof path, "changes.db");
    CHECK(runstore_open(path, &a, err) == LM_OK && runstore_open(path, &b, err) == LM_OK,
          "open: %s", err);
    if (!a || !b) return;
    runstore_changed(a);
    CHECK(!runstore_changed(a), "a change seen where none was made");
    long id = new_run(b, "elsewhere", "msa", "", NULL);
    CHECK(runstore_changed(a), "a run added by another connection not seen");
    CHECK(!runstore_changed(a), "the same change seen twice");
    runstore_run_set_status(b, id, "finished", NULL, err);
    CHECK(runstore_delete_run(b, id, 0, err) == LM_OK, "delete: %s", err);
    CHECK(runstore_changed(a), "a run removed by another connection not seen");
    runstore_close(a);
    runstore_close(b);
}

static void run_all(void)
{
    changes_seen();
    one_store_two_names();
    store_vanishes(0);
    store_vanishes(1);
    damaged_store();
    foreign_files_untouched();
    reads_do_not_write();
}

int main(void)
{
    return runstore_test_main("run store identity and integrity tests", run_all);
}
