/* runstore_repair.c — the repair at every open (runstore_open) and at the dashboard's
 * explicit reaping step (runstore_reap_dead): runs left 'running' or 'paused' on this host
 * by a process that is gone become 'interrupted' (their journal of unrecorded rows landed
 * first), every one of them at one open, 64 to a transaction so that no write waits long
 * for the store; and, at open only, a removal that a killed `rm` left half done is carried
 * on for a second (runstore_remove.c). Not deciding liveness on another host
 * (runstore_run_stale). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "private/runlock.h"
#include "runstore_control.h"
#include "err.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Dead runs marked in one transaction, and how long one open goes on marking them (the
 * rest: at the next open). */
#define REPAIR_BATCH 64
#define REPAIR_SECONDS 10.0

int runstore_run_alive(const RunStore *s, long id, long pid)
{
    if (pid == (long)getpid())
        return 1;
    int held = runlock_held(s->real_path, id, NULL);
    return held >= 0 ? held : pid_alive(pid);
}

typedef struct { long id, pid, last_step; char journal[1100]; } Orphan;

/* The sweep of an interrupted trial: the trial too, and the sweep once none of its trials
 * trains (its process is gone: a sweep trains its trials in its own process or its
 * workers'); `sweep resume ID` continues it. */
static int mark_sweep(RunStore *s, long run, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "UPDATE sweep_trials SET status='interrupted' WHERE run_id=?1"
                      " AND status='running'", &st, err);
    if (!status) {
        sqlite3_bind_int64(st, 1, run);
        status = write_stmt(s, st, "repairing an interrupted sweep trial", NULL, err);
    }
    if (!status)
        status = prep(s, "UPDATE sweeps SET status='interrupted', ended=?2 WHERE"
                      " id=(SELECT sweep_id FROM runs WHERE id=?1) AND status IN"
                      " ('running','paused') AND NOT EXISTS (SELECT 1 FROM runs r2 WHERE"
                      " r2.sweep_id=sweeps.id AND r2.status IN ('running','paused'))", &st, err);
    if (!status) {
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_double(st, 2, sysinfo_wall());
        status = write_stmt(s, st, "repairing an interrupted sweep", NULL, err);
    }
    return status;
}

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
    sqlite3_bind_double(st, 2, sysinfo_wall());
    sqlite3_bind_int64(st, 3, o->id);
    sqlite3_bind_int64(st, 4, o->pid);
    int changes = 0;
    status = write_stmt(s, st, "repairing an interrupted run", &changes, err);
    if (!status && changes) {   /* its unanswered requests die with it, visibly */
        char why[160];
        snprintf(why, sizeof why, "the run's owner (process %ld) ended before answering",
                 o->pid);
        status = runstore_control_expire(s, o->id, why, err);
    }
    return !status && changes ? mark_sweep(s, o->id, err) : status;
}

/* The runs of this host marked running or paused whose process is gone, all of them, into
 * *out (malloc'd; NULL when none). */
static int find_orphans(RunStore *s, Orphan **out, long *n, char *err)
{
    sqlite3_stmt *st;
    long cap = 0;
    *out = NULL;
    *n = 0;
    /* its step: the furthest of its logged steps and checkpoints (a killed process may not
     * have flushed last_step) */
    int rc, status = prep(s, "SELECT id, pid, max(coalesce(last_step, 0),"
                          " coalesce((SELECT max(step) FROM metrics m WHERE"
                          " m.run_id=runs.id), 0), coalesce((SELECT max(step) FROM"
                          " checkpoints c WHERE c.run_id=runs.id), 0)), host,"
                          " coalesce(checkpoint_dir, '') FROM runs"
                          " WHERE status IN ('running','paused')", &st, err);
    if (status) return status;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        Orphan o = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                    sqlite3_column_int64(st, 2), ""};
        if (strcmp(col_str(st, 3), s->host) || o.pid <= 0 || runstore_run_alive(s, o.id, o.pid))
            continue;
        if (col_str(st, 4)[0])   /* what its owner could not record (runfiles.def) */
            snprintf(o.journal, sizeof o.journal, "%.1000s/unrecorded-rows.tsv", col_str(st, 4));
        if (runstore_grow(out, &cap, *n + 1, sizeof **out)) {
            status = err_set(err, LM_ENOMEM, "out of memory checking for crashed runs");
            break;
        }
        (*out)[(*n)++] = o;
    }
    if (!status && rc != SQLITE_DONE)
        status = runstore_db_fail(s, rc, "checking for crashed runs", err);
    sqlite3_finalize(st);
    return status;
}

/* Marks the n runs of o interrupted in one transaction, each one's journal first: the
 * statuses, checkpoints and rows its owner could not record (a SIGTERM'd run's 'stopped'
 * on a full disk) land instead of the guess 'interrupted'; the journals that landed are
 * removed after the commit. */
static int repair_batch(RunStore *s, const Orphan *o, int n, char *err)
{
    int status = exec_sql(s, "BEGIN IMMEDIATE", "repairing interrupted runs", err);
    if (status) return status;
    char keep[sizeof s->journal];
    long keep_pending = s->max_pending, keep_rows = s->journal_rows;
    int landed[REPAIR_BATCH] = {0};
    snprintf(keep, sizeof keep, "%s", s->journal);
    for (int i = 0; i < n && !status; i++) {
        if (!o[i].journal[0] || access(o[i].journal, R_OK)) continue;
        runstore_set_journal(s, o[i].journal, keep_pending);
        status = runstore_journal_insert(s, err);
        landed[i] = !status;
    }
    snprintf(s->journal, sizeof s->journal, "%s", keep);
    s->max_pending = keep_pending;
    s->journal_rows = keep_rows;
    for (int i = 0; i < n && !status; i++) status = mark_interrupted(s, &o[i], err);
    if (!status) status = tx_commit(s, "repairing interrupted runs", err);
    else tx_rollback(s);
    for (int i = 0; i < n && !status; i++)
        if (landed[i]) unlink(o[i].journal);
    return status;
}

/* Marks runs of dead processes on this host as interrupted, all of them (REPAIR_BATCH to a
 * transaction, for at most REPAIR_SECONDS; what is left waits for the next open). A busy
 * database or a full disk is not an error here: the repair happens at a later open, and
 * this one goes on to read (issue 46 item 6: "disk full while repairing interrupted runs"
 * refused every command, even the ones that would free space). */
static int repair_dead(RunStore *s, char *err)
{
    Orphan *o = NULL;
    long n = 0;
    double start = sysinfo_now();
    int status = find_orphans(s, &o, &n, err);
    for (long at = 0; !status && at < n && sysinfo_now() - start < REPAIR_SECONDS;
         at += REPAIR_BATCH)
        status = repair_batch(s, o + at, n - at < REPAIR_BATCH ? (int)(n - at) : REPAIR_BATCH,
                              err);
    free(o);
    return status == LM_EDB || status == LM_ENOSPC ? LM_OK : status;
}

int runstore_repair_open(RunStore *s, char *err)
{
    int status = repair_dead(s, err);
    if (!status) status = runstore_remove_pending(s, RUNSTORE_REMOVE_OPEN_SECONDS, err);
    return status == LM_EDB || status == LM_ENOSPC ? LM_OK : status;
}

/* The dashboard's reaping each few seconds: dead runs only (a removal's rows are the
 * opens' and rm's to carry on, so that a view never waits for them). */
int runstore_reap_dead(RunStore *s, char *err)
{
    int status = runstore_check_present(s, err);
    return status ? status : repair_dead(s, err);
}
