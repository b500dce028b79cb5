/* runstore_write.c — everything that writes runs into the store: creating a run, its
 * status, claiming it for a resume, its checkpoint directory, tags and notes, deleting it
 * (and optionally its checkpoint files), and logging: step metrics and evaluations are
 * buffered in memory and written in one transaction by runstore_flush (autoflush by row
 * count or age, with back-off after a failure); gates, samples and checkpoints are written
 * at once. Not reading (runstore_query.c), not opening or schema (runstore.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "runstore_control.h"
#include "private/runlock.h"
#include "runfiles.h"
#include "textcheck.h"
#include "err.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *RUN_STATUSES[] = {"running", "paused", "finished", "stopped",
                                     "diverged", "interrupted", "failed", NULL};

static int status_index(const char *status)
{
    for (int i = 0; status && RUN_STATUSES[i]; i++)
        if (!strcmp(status, RUN_STATUSES[i])) return i;
    return -1;
}

/* ---- buffered metrics ------------------------------------------------------------------ */

static int flush_steps(RunStore *s, char *err)
{
    sqlite3_stmt *st = s->ins_step;
    for (long i = 0; i < s->n_steps; i++) {
        const PendingStep *p = &s->steps[i];
        sqlite3_bind_int64(st, 1, p->run);
        sqlite3_bind_int64(st, 2, p->m.step);
        for (int k = 0; k < STEP_METRIC_N; k++) {   /* metrics.def's order */
            double v = step_metric_get(&p->m, k);
            if (STEP_METRICS[k].kind == STEP_INT) sqlite3_bind_int64(st, k + 3, (sqlite3_int64)v);
            else bind_real(st, k + 3, v);
        }
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return runstore_db_fail(s, rc, "writing step metrics", err);
    }
    return LM_OK;
}

static int flush_evals(RunStore *s, char *err)
{
    sqlite3_stmt *st = s->ins_eval;
    for (long i = 0; i < s->n_evals; i++) {
        const PendingEval *p = &s->evals[i];
        sqlite3_bind_int64(st, 1, p->run);
        sqlite3_bind_int64(st, 2, p->e.step);
        sqlite3_bind_text(st, 3, p->e.split, -1, SQLITE_TRANSIENT);
        bind_real(st, 4, p->e.loss);
        bind_real(st, 5, p->e.ppl);
        bind_real(st, 6, p->e.bpc);
        sqlite3_bind_int64(st, 7, p->e.tokens);
        bind_real(st, 8, p->e.elapsed);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return runstore_db_fail(s, rc, "writing evaluations", err);
    }
    return LM_OK;
}

static int update_run(RunStore *s, long run, char *err)
{
    sqlite3_bind_int64(s->upd_run, 1, run);
    sqlite3_bind_double(s->upd_run, 2, sysinfo_wall());
    int rc = sqlite3_step(s->upd_run);
    sqlite3_reset(s->upd_run);
    return rc == SQLITE_DONE ? LM_OK : runstore_db_fail(s, rc, "updating the run", err);
}

/* Updates every distinct run that has buffered rows (usually one). */
static int flush_runs(RunStore *s, char *err)
{
    long done[16];
    int n_done = 0, status = LM_OK;
    long n = s->n_steps + s->n_evals;
    for (long i = 0; i < n && !status; i++) {
        long run = i < s->n_steps ? s->steps[i].run : s->evals[i - s->n_steps].run;
        int seen = 0;
        for (int j = 0; j < n_done && !seen; j++) seen = done[j] == run;
        if (seen) continue;
        status = update_run(s, run, err);
        if (n_done < 16) done[n_done++] = run;   /* beyond 16 runs: updates repeat */
    }
    return status;
}

int runstore_flush(RunStore *s, char *err)
{
    if (s->n_steps + s->n_evals + s->journal_rows == 0) {
        s->last_flush = sysinfo_now();
        return LM_OK;
    }
    int status = runstore_check_present(s, err);
    if (!status) status = exec_sql(s, "BEGIN IMMEDIATE", "flushing metrics", err);
    if (status) {   /* rows stay buffered */
        s->failed_at = sysinfo_now();
        return status;
    }
    status = runstore_journal_insert(s, err);   /* older rows first */
    if (!status) status = flush_steps(s, err);
    if (!status) status = flush_evals(s, err);
    if (!status) status = flush_runs(s, err);
    if (!status) status = tx_commit(s, "flushing metrics", err);
    else tx_rollback(s);
    if (status == LM_EFORMAT) s->damaged = 1;   /* SQLITE_CORRUPT: stop writing */
    if (status == LM_ENOSPC || status == LM_EIO) s->full_since = 1;   /* EIO: a size limit */
    s->failed_at = status ? sysinfo_now() : 0;
    if (status) return status;
    runstore_journal_landed(s);
    if (s->full_since) {   /* space returned: fold the WAL the outage grew back into the
                            * store and truncate it, so the freed space stays free */
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        s->full_since = 0;
    }
    s->n_steps = s->n_evals = 0;
    s->next_rows = s->max_rows;
    s->last_flush = sysinfo_now();
    return LM_OK;
}

long runstore_pending(const RunStore *s) { return s->n_steps + s->n_evals; }

int runstore_check_run(RunStore *s, long run, char *err)
{
    if (run == s->known_run && run > 0) return LM_OK;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT 1 FROM runs WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) status = err_set(err, LM_EARG, "no run %ld", run);
    else if (rc != SQLITE_ROW) status = runstore_db_fail(s, rc, "looking up a run", err);
    else s->known_run = run;
    sqlite3_finalize(st);
    return status;
}

/* Flushes when enough rows wait or enough time passed. After a failure the next retry
 * waits until the backlog doubles (or max_seconds pass), so a locked store does not stall
 * every step for the busy timeout and a long outage costs linear, not quadratic, work. */
static int maybe_flush(RunStore *s, char *err)
{
    long pending = runstore_pending(s);
    if (pending < s->next_rows && sysinfo_now() - s->last_flush < s->max_seconds) return LM_OK;
    int status = runstore_flush(s, err);
    if (status) {
        s->next_rows = pending + (pending > s->max_rows ? pending : s->max_rows);
        s->last_flush = sysinfo_now();
        if (pending >= s->max_pending && runstore_journal_spill(s, NULL) == LM_OK)
            s->next_rows = s->max_rows;   /* memory freed: retry at the usual pace */
    }
    return status;
}

/* Grows the array whose pointer lives at pp (any element type; the pointer is copied
 * with memcpy to stay clear of aliasing rules) to hold need elements. 0 or -1. */
int runstore_grow(void *pp, long *cap, long need, size_t size)
{
    if (need <= *cap) return 0;
    long c = *cap ? *cap * 2 : 256;
    while (c < need) c *= 2;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, (size_t)c * size);
    if (!q) return -1;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}

int runstore_log_step(RunStore *s, long run, const StepMetric *m, char *err)
{
    int status = runstore_check_run(s, run, err);
    if (status) return status;
    if (runstore_grow(&s->steps, &s->cap_steps, s->n_steps + 1, sizeof *s->steps))
        return err_set(err, LM_ENOMEM, "out of memory buffering step metrics");
    s->steps[s->n_steps].run = run;
    s->steps[s->n_steps++].m = *m;
    return maybe_flush(s, err);
}

int runstore_log_eval(RunStore *s, long run, const EvalMetric *e, char *err)
{
    int status = runstore_check_run(s, run, err);
    if (status) return status;
    if (runstore_grow(&s->evals, &s->cap_evals, s->n_evals + 1, sizeof *s->evals))
        return err_set(err, LM_ENOMEM, "out of memory buffering evaluations");
    s->evals[s->n_evals].run = run;
    s->evals[s->n_evals].e = *e;
    s->evals[s->n_evals++].e.split[sizeof e->split - 1] = 0;
    return maybe_flush(s, err);
}

/* Forgets buffered rows of a deleted run (they could never be written). */
static void drop_pending(RunStore *s, long run)
{
    long j = 0;
    for (long i = 0; i < s->n_steps; i++)
        if (s->steps[i].run != run) s->steps[j++] = s->steps[i];
    s->n_steps = j;
    j = 0;
    for (long i = 0; i < s->n_evals; i++)
        if (s->evals[i].run != run) s->evals[j++] = s->evals[i];
    s->n_evals = j;
    if (s->known_run == run) s->known_run = 0;
}

/* ---- runs ----------------------------------------------------------------------------- */

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
static int check_not_live(RunStore *s, long id, const char *action, char *err)
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
    if (!status) status = check_not_live(s, id, "resume", err);
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

int runstore_log_gates(RunStore *s, long run, const GateStat *g, int n, char *err)
{
    sqlite3_stmt *st;
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_check_run(s, run, err);
    if (status || (status = prep(s, "INSERT OR REPLACE INTO gates(run_id, step, layer, level,"
                                 " mean, std, hist) VALUES(?,?,?,?,?,?,?)", &st, err)))
        return status;
    if ((status = exec_sql(s, "BEGIN IMMEDIATE", "writing gate statistics", err))) {
        sqlite3_finalize(st);
        return status;
    }
    for (int i = 0; i < n && !status; i++) {
        char hist[GATE_HIST_BINS * 12 + 1];
        size_t k = 0;
        for (int b = 0; b < GATE_HIST_BINS; b++)
            k += (size_t)snprintf(hist + k, sizeof hist - k, "%s%d", b ? "," : "", g[i].hist[b]);
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, g[i].step);
        sqlite3_bind_int(st, 3, g[i].layer);
        sqlite3_bind_int(st, 4, g[i].level);
        bind_real(st, 5, g[i].mean);
        bind_real(st, 6, g[i].std);
        bind_str(st, 7, hist);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "writing gate statistics", err);
    }
    sqlite3_finalize(st);
    if (!status) return tx_commit(s, "writing gate statistics", err);
    tx_rollback(s);
    return status;
}

int runstore_log_sample(RunStore *s, long run, long step, const char *prompt,
                        const char *settings, const char *text, char *err)
{
    sqlite3_stmt *st;
    int status = runstore_check_present(s, err);
    if (!status) status = runstore_check_run(s, run, err);
    if (status || (status = prep(s, "INSERT INTO samples(run_id, step, prompt, settings, text,"
                                 " created) VALUES(?,?,?,?,?,?)", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, step);
    bind_str(st, 3, prompt);
    bind_str(st, 4, settings);
    bind_str(st, 5, text);
    sqlite3_bind_double(st, 6, sysinfo_wall());
    return write_stmt(s, st, "writing a sample", NULL, err);
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
    int status = check_not_live(s, id, "delete", err);
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
    if (!status) drop_pending(s, id);
    if (!status && delete_checkpoints)
        status = delete_files(s, id, paths, len, dir, rep, err);
    free(paths);
    /* its rows (and any a killed removal left), a batch at a time; what a failure here
     * leaves (busy, disk full) nobody sees, and the next removal or open carries it on */
    char e2[LM_ERR_LEN];
    runstore_remove_pending(s, 0, e2);
    return status;
}
