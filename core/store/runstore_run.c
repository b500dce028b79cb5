/* runstore_run.c — the runs themselves in the store: creating a run (its row and its lock
 * in one transaction), its status, claiming it for a resume, its checkpoint directory,
 * tags and notes; whether another live process trains it. Not logging a run's rows
 * (runstore_write.c), not deleting a run (runstore_delete.c), not reading
 * (runstore_query.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "runstore_control.h"
#include "private/runlock.h"
#include "textcheck.h"
#include "err.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *RUN_STATUSES[] = {"running", "paused", "finished", "stopped",
                                     "diverged", "interrupted", "failed", NULL};

static int status_index(const char *status)
{
    for (int i = 0; status && RUN_STATUSES[i]; i++)
        if (!strcmp(status, RUN_STATUSES[i])) return i;
    return -1;
}

/* Splits tags on commas/whitespace, drops empties and duplicates, joins with commas. */
static int tags_normalize(const char *in, const char *add, char *out,
                          size_t cap, char *err)
{
    char buf[1024];
    int bad = textcheck_value("tags", in ? in : "", 0, err);
    if (bad || (bad = textcheck_value("tag", add ? add : "", 0, err))) return bad;
    snprintf(buf, sizeof buf, "%s,%s", in ? in : "", add ? add : "");
    size_t n = 0;
    out[0] = 0;
    for (char *save = NULL, *t = strtok_r(buf, ", \t\r\n", &save); t;
         t = strtok_r(NULL, ", \t\r\n", &save)) {
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

/* Steps the run's INSERT st and takes the run's lock (held while it trains) in one
 * transaction: no other process sees the run 'running' before its lock is held (one that
 * opened the store between the two took a live run, frozen there, for a dead one and
 * marked it interrupted). */
static int create_locked(RunStore *s, sqlite3_stmt *st, long *id, char *err)
{
    int status = exec_sql(s, "BEGIN IMMEDIATE", "creating a run", err);
    if (status) {
        sqlite3_finalize(st);
        return status;
    }
    status = write_stmt(s, st, "creating a run", NULL, err);
    if (!status) *id = (long)sqlite3_last_insert_rowid(s->db);
    int locked = !status && !(status = runlock_acquire(s->real_path, *id, err));
    if (!status) status = exec_sql(s, "COMMIT", "creating a run", err);
    if (status) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        if (locked) runlock_release(s->real_path, *id);
    }
    return status;
}

int runstore_run_create(RunStore *s, const RunInfo *in, long *id, char *err)
{
    char tags[256];
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_quick_check(s, 1, err);   /* a stream of rows follows */
    if (!status) status = tags_normalize(in->tags, NULL, tags, sizeof tags, err);
    sqlite3_stmt *st;
    /* the id: one past the highest ever handed out (store_meta), never a deleted run's */
    if (status || (status = prep(s, "INSERT INTO runs(id, name, created, started, status,"
                    " config, model, data_name, data_hash, tokenizer, tokenizer_hash, params,"
                    " machine, git_rev, tags, checkpoint_dir, sweep_id, pid, host, heartbeat,"
                    " last_step, owner_since) VALUES(1 + max(coalesce((SELECT max(id) FROM runs), 0),"
                    " coalesce((SELECT CAST(value AS INTEGER) FROM store_meta"
                    " WHERE key='last_run_id'), 0)),"
                    " ?1,?2,?2,'running',?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,"
                    "?15,?16,?2,0,?2)", &st, err)))
        return status;
    bind_str(st, 1, in->name);
    sqlite3_bind_double(st, 2, sysinfo_wall());
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
    status = create_locked(s, st, id, err);
    char e2[LM_ERR_LEN];   /* unsigned (no key): it trains; a fork must then be given its paths */
    if (!status) runstore_run_config_sign(s, *id, in->config ? in->config : "", e2);
    if (!status)   /* rows written for this id before it existed are nobody's */
        status = runstore_control_expire(s, *id, "written before the run existed", err);
    return status;
}

int runstore_status_write(RunStore *s, long id, const char *status_text, const char *reason,
                          double t, int only_if_newer, char *err)
{
    int k = status_index(status_text), changes = 0, status;
    sqlite3_stmt *st;
    if (k < 0)
        return err_set(err, LM_EARG, "unknown run status '%s' (running, paused, finished,"
                       " stopped, diverged, interrupted, failed)", status_text ? status_text : "");
    if ((status = prep(s, only_if_newer ? "UPDATE runs SET status=?1, reason=?2, ended=?3,"
                       " heartbeat=?4 WHERE id=?5 AND (coalesce(heartbeat, 0) <= ?4"
                       " OR status='interrupted')"
                       : "UPDATE runs SET status=?1, reason=?2, ended=?3,"
                       " heartbeat=?4 WHERE id=?5", &st, err)))
        return status;
    bind_str(st, 1, status_text);
    bind_str(st, 2, reason);
    if (k >= 2) sqlite3_bind_double(st, 3, t);   /* terminal */
    sqlite3_bind_double(st, 4, t);
    sqlite3_bind_int64(st, 5, id);
    status = write_stmt(s, st, "setting the run status", &changes, err);
    if (!status && changes == 0 && !only_if_newer) status = err_set(err, LM_EARG, "no run %ld", id);
    if (!status && changes && k >= 2) runlock_release(s->real_path, id);   /* terminal */
    return status;
}

int runstore_run_set_status(RunStore *s, long id, const char *status_text,
                            const char *reason, char *err)
{
    if (status_index(status_text) < 0)
        return runstore_status_write(s, id, status_text, reason, 0, 0, err);
    double now = sysinfo_wall();
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_flush(s, err);
    if (!status) status = runstore_status_write(s, id, status_text, reason, now, 0, err);
    if (status && status != LM_EARG && !s->damaged)   /* disk full, locked: kept for later */
        runstore_journal_status(s, id, now, status_text, reason);
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
                                    : runstore_db_fail(s, rc, "reading a run", err);
    }
    sqlite3_finalize(st);
    return st_code;
}

/* LM_ESTATE when another live process on this host is training the run. */
int runstore_check_not_live(RunStore *s, long id, const char *action, char *err)
{
    char status[16], host[64];
    long pid = 0;
    int st = run_owner(s, id, status, &pid, host, err);
    if (st) return st;
    if ((!strcmp(status, "running") || !strcmp(status, "paused")) && !strcmp(host, s->host)
        && !runstore_run_alive(s, id, pid))
        return LM_OK;
    if ((!strcmp(status, "running") || !strcmp(status, "paused")) && !strcmp(host, s->host)
        && pid != (long)getpid())
        return err_set(err, LM_ESTATE, "run %ld is being trained by process %ld; stop it"
                       " before you %s it", id, pid, action);
    return LM_OK;
}

int runstore_run_claim(RunStore *s, long id, char *err)
{
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_quick_check(s, 1, err);
    if (!status) status = runstore_check_not_live(s, id, "resume", err);
    if (!status) status = runlock_acquire(s->real_path, id, err);
    sqlite3_stmt *st;
    /* requests to the owners before this one die with them, visibly */
    if (!status)
        status = runstore_control_expire(s, id, "addressed to an earlier owner of the run,"
                                         " which ended before answering", err);
    if (status || (status = prep(s, "UPDATE runs SET status='running', reason=NULL,"
                                 " ended=NULL, pid=?1, host=?2, heartbeat=?3, owner_since=?3"
                                 " WHERE id=?4", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, (long)getpid());
    bind_str(st, 2, s->host);
    sqlite3_bind_double(st, 3, sysinfo_wall());
    sqlite3_bind_int64(st, 4, id);
    return write_stmt(s, st, "claiming a run", NULL, err);
}

/* Rewrites a run's tags inside one write transaction (read-modify-write is atomic). */
static int tags_update(RunStore *s, long id, const char *replace, const char *add,
                       char *err)
{
    char tags[256];
    sqlite3_stmt *st;
    int status = exec_sql(s, "BEGIN IMMEDIATE", "updating tags", err), rc, changes = 0;
    if (status) return status;
    if (!(status = prep(s, "SELECT tags FROM runs WHERE id=?", &st, err))) {
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            status = tags_normalize(replace ? replace : col_str(st, 0), add, tags,
                                    sizeof tags, err);
        else
            status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "no run %ld", id)
                                       : runstore_db_fail(s, rc, "reading tags", err);
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
    return tags_update(s, id, tags ? tags : "", NULL, err);
}

int runstore_add_tag(RunStore *s, long id, const char *tag, char *err)
{
    int status = check_tag(tag, err);
    return status ? status : tags_update(s, id, NULL, tag, err);
}

int runstore_set_note(RunStore *s, long id, const char *note, char *err)
{
    sqlite3_stmt *st;
    int changes = 0, status = textcheck_value("note", note ? note : "",
                                              TEXTCHECK_ALLOW_NEWLINE, err);
    if (!status) status = prep(s, "UPDATE runs SET notes=? WHERE id=?", &st, err);
    if (status) return status;
    bind_str(st, 1, note);
    sqlite3_bind_int64(st, 2, id);
    status = write_stmt(s, st, "setting a note", &changes, err);
    return !status && !changes ? err_set(err, LM_EARG, "no run %ld", id) : status;
}

int runstore_set_checkpoint_dir(RunStore *s, long id, const char *dir, char *err)
{
    sqlite3_stmt *st;
    char *config = NULL, e2[LM_ERR_LEN];   /* its code holds: it follows the new folder */
    int signed_before = runstore_run_signed_config(s, id, &config, NULL, 0) == LM_OK;
    int changes = 0, status = prep(s, "UPDATE runs SET checkpoint_dir=? WHERE id=?", &st, err);
    if (!status) {
        bind_str(st, 1, dir);
        sqlite3_bind_int64(st, 2, id);
        status = write_stmt(s, st, "setting the checkpoint directory", &changes, err);
    }
    if (!status && changes && signed_before) runstore_run_config_sign(s, id, config, e2);
    free(config);
    return !status && !changes ? err_set(err, LM_EARG, "no run %ld", id) : status;
}
