/* runstore_delete.c — deleting a run from the store: its rows marked removed (carried on
 * a batch at a time by runstore_remove.c), its buffered rows dropped, and optionally its
 * checkpoint files: the recorded ones in its own folder and, when no other run records
 * the folder, the files there named as the trainer names them (runfiles.def); anything
 * else is left and reported. Not the runs' other writes (runstore_run.c) and not the
 * removal of rows itself (runstore_remove.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "runfiles.h"
#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Collects a run's checkpoint paths (malloc'd, NUL-separated list in *paths). */
static int checkpoint_paths(RunStore *s, long id, char **paths, size_t *len, char *err)
{
    sqlite3_stmt *st;
    int rc, status = prep(s, "SELECT path FROM checkpoints WHERE run_id=?1 AND path IS NOT NULL"
                          " UNION SELECT path FROM best_checkpoints WHERE run_id=?1"
                          " AND path IS NOT NULL", &st, err);
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
    if (!status && rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "listing checkpoints", err);
    sqlite3_finalize(st);
    return status;
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
    else status = runstore_db_fail(s, rc, "reading runs", err);
    sqlite3_finalize(st);
    return status;
}

/* 1 when name is one lmlab's trainer or recorder writes in a run folder (runfiles.def),
 * a write's torn ".tmp.PID" included. Anything else in the folder is someone else's. */
static int is_run_file_name(const char *name)
{
    return runfiles_parse(name, NULL, NULL) != RUNFILE_NONE;
}

/* Unlinks path when it is a regular file: 1 removed, 0 absent or not a regular file (left
 * alone), -1 failure. */
static int remove_regular(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb)) return errno == ENOENT ? 0 : -1;
    if (!S_ISREG(sb.st_mode)) return 0;
    return unlink(path) ? -1 : 1;
}

static void note_left(RunFilesReport *rep, const char *name)
{
    size_t n = strlen(rep->left_names);
    rep->left++;
    if (n + strlen(name) + 8 < sizeof rep->left_names)
        snprintf(rep->left_names + n, sizeof rep->left_names - n, "%s%s", n ? ", " : "", name);
    else if (n + 5 < sizeof rep->left_names && !strstr(rep->left_names, "..."))
        snprintf(rep->left_names + n, sizeof rep->left_names - n, ", ...");
}

/* In dir (the run's own folder): removes the files named like the trainer's, keeps every
 * other entry (noted in rep), and removes dir only when nothing is left. 0 or -1. */
static int clean_run_dir(const char *dir, RunFilesReport *rep)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    int bad = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[1100];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        int r = is_run_file_name(e->d_name) ? remove_regular(p) : 0;
        if (r > 0) rep->removed++;
        else note_left(rep, e->d_name);
        if (r < 0) bad = 1;
    }
    closedir(d);
    if (!rep->left && !bad) {
        if (rmdir(dir)) return -1;
        rep->dir_removed = 1;
    }
    return bad ? -1 : 0;
}

/* 1 when path is a file directly in folder dir, the run's own (signed with its settings):
 * a recorded path elsewhere (a row another writer of the store added) is never removed. */
static int in_run_dir(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return n && !strncmp(path, dir, n) && path[n] == '/' && path[n + 1] &&
           !strchr(path + n + 1, '/');
}

static int delete_files(RunStore *s, long id, const char *paths, size_t len,
                        const char *dir, RunFilesReport *rep, char *err)
{
    int bad = 0;
    for (size_t i = 0; i < len; i += strlen(paths + i) + 1) {
        char optim[1100];
        if (!in_run_dir(paths + i, dir)) continue;
        size_t n = strlen(paths + i), e = strlen(".safetensors");
        if (n > e && !strcmp(paths + i + n - e, ".safetensors"))
            snprintf(optim, sizeof optim, "%.*s.optim.safetensors", (int)(n - e), paths + i);
        else
            snprintf(optim, sizeof optim, "%s.optim", paths + i);
        int r = remove_regular(paths + i), q = remove_regular(optim);
        rep->removed += (r > 0) + (q > 0);
        if (r < 0 || q < 0) bad = 1;
    }
    snprintf(rep->dir, sizeof rep->dir, "%s", dir);
    long sharing = 1;
    if (dir[0] && strcmp(dir, "/") && strcmp(dir, ".") && !count_sharing(s, id, dir, &sharing,
                                                                          NULL)
        && sharing == 0 && clean_run_dir(dir, rep))
        bad = 1;
    return bad ? err_set(err, LM_EIO, "run %ld deleted, but some of its checkpoint files could "
                         "not be removed (%s)", id, dir[0] ? dir : "listed paths") : LM_OK;
}

int runstore_delete_run(RunStore *s, long id, int delete_checkpoints, char *err)
{
    return runstore_delete_run_report(s, id, delete_checkpoints, NULL, err);
}

int runstore_delete_run_report(RunStore *s, long id, int delete_checkpoints,
                               RunFilesReport *report, char *err)
{
    RunFilesReport scratch;
    RunFilesReport *rep = report ? report : &scratch;
    memset(rep, 0, sizeof *rep);
    char *paths = NULL, dir[512] = "";
    size_t len = 0;
    sqlite3_stmt *st;
    int status = runstore_check_not_live(s, id, "delete", err);
    if (!status && delete_checkpoints) status = checkpoint_paths(s, id, &paths, &len, err);
    char *config = NULL;   /* files are removed only for a run this user wrote */
    if (!status && delete_checkpoints &&
        runstore_run_signed_config(s, id, &config, rep->refused, sizeof rep->refused))
        delete_checkpoints = 0;
    else
        rep->refused[0] = 0;
    free(config);
    if (!status && delete_checkpoints &&
        !(status = prep(s, "SELECT coalesce(checkpoint_dir,'') FROM runs WHERE id=?", &st,
                        err))) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) col_copy(st, 0, dir, sizeof dir);
        sqlite3_finalize(st);
    }
    if (!status) status = runstore_remove_mark(s, id, err);   /* gone from every listing */
    if (!status) runstore_drop_pending(s, id);
    if (!status && delete_checkpoints)
        status = delete_files(s, id, paths, len, dir, rep, err);
    free(paths);
    /* its rows (and any a killed removal left), a batch at a time; what a failure here
     * leaves (busy, disk full) nobody sees, and the next removal or open carries it on */
    char e2[LM_ERR_LEN];
    runstore_remove_pending(s, 0, e2);
    return status;
}
