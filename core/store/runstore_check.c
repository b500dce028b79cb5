/* runstore_check.c — what makes a file this run store, checked before lmlab writes to it
 * and while it does: its identity (one file, whatever name it was reached by: the
 * canonical path locks are keyed by, and a refusal of a file with several hard links,
 * whose write-ahead log SQLite would keep under each name), its recognition (an empty file
 * to create, or an lmlab schema; anything else is refused before any pragma changes it),
 * its integrity (SQLite's quick_check at open) and its presence (a store moved, deleted
 * or replaced under an open handle stops taking writes). Not the schema itself
 * (runstore.c) and not the writes (runstore_write.c). */
#include "private/runstore_impl.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int runstore_check_orphan(const char *path, char *err)
{
    char wal[4200];
    struct stat sb;
    if (strlen(path) > 4096 || !stat(path, &sb) || errno != ENOENT)
        return LM_OK;   /* the file exists (or cannot be told): SQLite decides */
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &sb) || sb.st_size == 0)
        return LM_OK;
    return err_set(err, LM_ESTATE, "%s does not exist but %s does: it holds rows a run store "
                   "committed before it was moved or deleted while open, and opening a new "
                   "store here would discard them; move the store back to %s, or, if it was "
                   "deleted on purpose, remove %s and %s-shm", path, wal, path, wal, path);
}

int runstore_identify(RunStore *s, char *err)
{
    char *real = realpath(s->path, NULL);
    struct stat sb;
    if (!real || stat(real, &sb))
        return err_set(err, LM_EIO, "cannot resolve the run store %s: %s", s->path,
                       strerror(errno));
    if (S_ISREG(sb.st_mode) && sb.st_nlink > 1) {
        free(real);
        return err_set(err, LM_EARG, "%s has %lu names (hard links): SQLite keeps its "
                       "write-ahead log under the name a store is opened by, so two names "
                       "would split one store; remove the other links (find / -samefile %s)"
                       " or open a copy", s->path, (unsigned long)sb.st_nlink, s->path);
    }
    s->real_path = real;
    s->dev = sb.st_dev;
    s->ino = sb.st_ino;
    return LM_OK;
}

/* 1 when table `name` exists in the file (0 also when it cannot be read: the caller's
 * next read reports that). */
static int has_table(RunStore *s, const char *name)
{
    sqlite3_stmt *st;
    if (prep(s, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", &st, NULL))
        return 0;
    bind_str(st, 1, name);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

/* Pages in the file: 0 for an empty (new) file. */
static int page_count(RunStore *s, long *n, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "PRAGMA page_count", &st, err);
    if (status) return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = (long)sqlite3_column_int64(st, 0);
    else status = runstore_db_fail(s, rc, "reading the file size", err);
    sqlite3_finalize(st);
    return status;
}

int runstore_recognise(RunStore *s, int version, int *is_new, char *err)
{
    int n_tables = 0, status = runstore_table_count(s, &n_tables, err);
    long pages = 0;
    *is_new = 0;
    if (!status) status = page_count(s, &pages, err);
    if (status) return status;
    if (version > RUNSTORE_SCHEMA_VERSION)
        return err_set(err, LM_EFORMAT, "%s was created by a newer lmlab (schema version %d;"
                       " this build knows up to %d): use a newer lmlab or another LMLAB_DB",
                       s->path, version, RUNSTORE_SCHEMA_VERSION);
    if (version < 0)
        return err_set(err, LM_EFORMAT, "%s has schema version %d, which no lmlab writes: it"
                       " is not an lmlab run store (or its header was damaged); it was left"
                       " as it is: choose another file (--db or LMLAB_DB)", s->path, version);
    if (pages == 0) {   /* an empty file: lmlab creates its schema in one transaction */
        *is_new = 1;
        return LM_OK;
    }
    if (version == 0 && n_tables == 0)   /* never written so by lmlab (see runstore.c) */
        return err_set(err, LM_EFORMAT, "%s is an SQLite database without tables; it was "
                       "left as it is. If it is a run store that was moved while lmlab wrote "
                       "to it, its rows are in the -wal file left at its old name: move it "
                       "back there; else choose another file (--db or LMLAB_DB)", s->path);
    if (version == 0 || !has_table(s, "runs") || (version >= 3 && !has_table(s, "store_meta")))
        return err_set(err, LM_EFORMAT, "%s is an SQLite database but not an lmlab run store"
                       " (%d tables, none of them lmlab's schema %d); it was left as it is:"
                       " choose another file (--db or LMLAB_DB)", s->path, n_tables,
                       version ? version : RUNSTORE_SCHEMA_VERSION);
    return LM_OK;
}

/* quick_check of one table (its b-tree and indexes), or of the whole file (NULL). */
static int quick_check(RunStore *s, const char *table, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, table ? "SELECT * FROM pragma_quick_check(?)"
                               : "PRAGMA quick_check(1)", &st, err);
    if (status) return status;
    if (table) bind_str(st, 1, table);
    int rc = sqlite3_step(st);
    char first[200] = "";
    if (rc == SQLITE_ROW) col_copy(st, 0, first, sizeof first);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW && !strcmp(first, "ok"))
        return LM_OK;
    const char *what = first;   /* "*** in database main ***\nPage 7: ..." -> "Page 7: ..." */
    if (!strncmp(what, "***", 3) && strchr(what, '\n')) what = strchr(what, '\n') + 1;
    for (char *p = first; *p; p++)
        if (*p == '\n') *p = ' ';
    if (rc != SQLITE_ROW && (rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB)
        return runstore_db_fail(s, rc, "checking the store", err);
    s->damaged = 1;
    return err_set(err, LM_EFORMAT, "%s is damaged (SQLite's quick_check: %s); lmlab will "
                   "not use it: recover what it holds with `sqlite3 %s .recover |"
                   " sqlite3 recovered.db` and use recovered.db, or restore a backup",
                   s->path, what[0] ? what : sqlite3_errmsg(s->db), s->path);
}

/* The tables every command reads (their size grows with the runs, not with the rows
 * logged): checked at every open. */
static const char *const CATALOGUE[] = {"runs", "sweeps", "sweep_trials", "store_meta"};

/* A store over this size is checked whole at most once a day (it reads every page: about
 * 1.5 s a GB, at every `runs` and every run's start); smaller ones every time. A damaged
 * page is still found when a command reads it (SQLITE_CORRUPT is said as damage). */
#define WHOLE_CHECK_DAILY_BYTES ((long long)256 << 20)
#define WHOLE_CHECK_EVERY_S 86400
#define WHOLE_CHECK_TEST_ENV "LMLAB_TEST_WHOLE_CHECK_BYTES"   /* tests: another size */

/* The time of the store's last clean whole check (store_meta), 0 for none. */
static long long last_whole_check(RunStore *s)
{
    sqlite3_stmt *st;
    long long t = 0;
    char e[LM_ERR_LEN];
    if (prep(s, "SELECT value FROM store_meta WHERE key='whole_checked'", &st, e)) return 0;
    if (sqlite3_step(st) == SQLITE_ROW) t = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return t;
}

int runstore_quick_check(RunStore *s, int whole, char *err)
{
    if (whole && s->checked_whole) return LM_OK;   /* once per handle */
    if (whole) {
        struct stat sb;
        long long now = (long long)time(NULL);
        const char *t = getenv(WHOLE_CHECK_TEST_ENV);
        long long daily = t ? atoll(t) : WHOLE_CHECK_DAILY_BYTES;
        int big = !stat(s->real_path, &sb) && sb.st_size > daily && has_table(s, "store_meta");
        if (big && now - last_whole_check(s) < WHOLE_CHECK_EVERY_S) {
            s->checked_whole = 1;
            return LM_OK;
        }
        int status = quick_check(s, NULL, err);
        s->checked_whole = !status;
        sqlite3_stmt *st;   /* remembered for a day; a busy store just checks again */
        char e[LM_ERR_LEN];
        if (!status && big &&
            !prep(s, "INSERT OR REPLACE INTO store_meta(key, value) VALUES('whole_checked', ?)",
                  &st, e)) {
            sqlite3_bind_int64(st, 1, now);
            sqlite3_step(st);
            sqlite3_finalize(st);
        }
        return status;
    }
    int status = LM_OK;
    for (size_t i = 0; !status && i < sizeof CATALOGUE / sizeof *CATALOGUE; i++)
        if (has_table(s, CATALOGUE[i])) status = quick_check(s, CATALOGUE[i], err);
    return status;
}

int runstore_check_whole(RunStore *s, char *err)
{
    return runstore_quick_check(s, 1, err);
}

/* 1 when this process holds the store's file open and that file has no name left (it was
 * deleted, not moved): a descriptor of /proc/self/fd reads "REAL (deleted)". */
static int deleted_while_open(const RunStore *s)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char want[1200], p[64], link[1200];
    snprintf(want, sizeof want, "%s (deleted)", s->real_path);
    int found = 0;
    while (!found && d && (e = readdir(d))) {
        snprintf(p, sizeof p, "/proc/self/fd/%.20s", e->d_name);
        ssize_t n = readlink(p, link, sizeof link - 1);
        if (n <= 0) continue;
        link[n] = 0;
        struct stat sb;
        found = !strcmp(link, want) && !stat(p, &sb) && sb.st_dev == s->dev &&
                sb.st_ino == s->ino;
    }
    if (d) closedir(d);
    return found;
}

/* A store deleted while open: its contents, read through this connection (the file is
 * still open here, its committed WAL frames too), copied with SQLite's backup to
 * REAL.saved-PID beside it, so that what it held is not lost when the process ends. */
static void save_deleted(RunStore *s)
{
    if (!deleted_while_open(s)) return;
    char to[1100];
    snprintf(to, sizeof to, "%.1000s.saved-%ld", s->real_path, (long)getpid());
    sqlite3 *dst = NULL;
    int rc = sqlite3_open_v2(to, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(dst, "main", s->db, "main") : NULL;
    if (b) {
        sqlite3_backup_step(b, -1);
        rc = sqlite3_backup_finish(b);
    }
    sqlite3_close(dst);
    if (b && rc == SQLITE_OK)
        snprintf(s->saved, sizeof s->saved, "%s", to);
    else
        unlink(to);
}

int runstore_check_present(RunStore *s, char *err)
{
    int moved = 0, was = s->gone;
    if (!s->gone && sqlite3_file_control(s->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) ==
        SQLITE_OK && moved)
        s->gone = 1;
    if (!s->gone) {   /* SQLite compares inodes only; a same-inode file elsewhere too */
        struct stat sb;
        if (stat(s->real_path, &sb) || sb.st_dev != s->dev || sb.st_ino != s->ino)
            s->gone = 1;
    }
    if (s->gone && !was)
        save_deleted(s);
    if (s->saved[0])
        return err_set(err, LM_EIO, "the run store %s was deleted while lmlab had it open: "
                       "nothing more is written to it; what it held is saved in %s: to keep "
                       "it, move that file to %s and delete %s-wal and %s-shm", s->path,
                       s->saved, s->real_path, s->real_path, s->real_path);
    if (s->damaged)
        return err_set(err, LM_EFORMAT, "the run store %s is damaged: nothing more is written"
                       " to it; recover it with `sqlite3 %s .recover | sqlite3 recovered.db`",
                       s->path, s->path);
    if (!s->gone)
        return LM_OK;
    return err_set(err, LM_EIO, "the run store %s was moved, deleted or replaced while lmlab"
                   " had it open: nothing more is written to it; what was committed before "
                   "waits in %s-wal: move the store back there to keep it", s->path,
                   s->real_path);
}


int runstore_gone(RunStore *s)
{
    return runstore_check_present(s, NULL) != LM_OK;
}
