/* runstore_track.c — schema step 7 and the system metrics and console of a run (see
 * runstore_track.h). The migration is one function, so the step can be renumbered when
 * branches merge. Notes and alerts are runstore_notes.c. Not the sampling nor the
 * wording (core/run). */
#include "runstore_track.h"
#include "private/runstore_impl.h"

#include <stdio.h>
#include <stdlib.h>

static const char SCHEMA_TRACK[] =
    "CREATE TABLE IF NOT EXISTS run_sysmetrics(run_id INTEGER NOT NULL REFERENCES runs(id)"
    " ON DELETE CASCADE, rank INTEGER NOT NULL DEFAULT 0, t REAL NOT NULL, step INTEGER,"
    " cpu REAL, rss_mb REAL, threads INTEGER, load1 REAL, mem_avail_mb REAL,"
    " mem_total_mb REAL, tokens_per_s REAL, thread_cpu TEXT,"
    " PRIMARY KEY(run_id, rank, t)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS run_console(run_id INTEGER NOT NULL REFERENCES runs(id)"
    " ON DELETE CASCADE, seq INTEGER NOT NULL, t REAL, kind TEXT, text TEXT,"
    " PRIMARY KEY(run_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY,"
    " run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,"
    " sweep_id INTEGER REFERENCES sweeps(id) ON DELETE CASCADE, t REAL NOT NULL,"
    " text TEXT NOT NULL, CHECK((run_id IS NULL) <> (sweep_id IS NULL)));"
    "CREATE INDEX IF NOT EXISTS notes_run ON notes(run_id);"
    "CREATE INDEX IF NOT EXISTS notes_sweep ON notes(sweep_id);"
    "CREATE TABLE IF NOT EXISTS alerts(id INTEGER PRIMARY KEY,"
    " run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,"
    " sweep_id INTEGER REFERENCES sweeps(id) ON DELETE CASCADE, rule TEXT NOT NULL,"
    " cmd TEXT, created REAL, origin TEXT);"
    "CREATE INDEX IF NOT EXISTS alerts_run ON alerts(run_id);"
    "CREATE TABLE IF NOT EXISTS alert_events(id INTEGER PRIMARY KEY,"
    " alert_id INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, t REAL, rule TEXT,"
    " message TEXT, cmd_status TEXT, UNIQUE(alert_id, run_id));"
    /* the single note each run held before version 7 becomes its first note */
    "INSERT INTO notes(run_id, t, text) SELECT id, coalesce(created, 0), notes FROM runs"
    " WHERE coalesce(notes, '') <> '' AND NOT EXISTS (SELECT 1 FROM notes n"
    " WHERE n.run_id = runs.id);"
    "PRAGMA user_version = 7;";

int runstore_track_migrate(RunStore *s, char *err)
{
    return exec_sql(s, SCHEMA_TRACK, "adding the system metrics, console, notes and alert"
                    " tables", err);
}

/* ---- system metrics ------------------------------------------------------------------- */

int runstore_sys_insert(RunStore *s, long run, const SysSample *x, char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "INSERT OR REPLACE INTO run_sysmetrics(run_id, rank, t,"
                      " step, cpu, rss_mb, threads, load1, mem_avail_mb,"
                      " mem_total_mb, tokens_per_s, thread_cpu)"
                      " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, x->rank);
    sqlite3_bind_double(st, 3, x->t);
    sqlite3_bind_int64(st, 4, x->step);
    bind_real(st, 5, x->cpu);
    bind_real(st, 6, x->rss_mb);
    sqlite3_bind_int(st, 7, x->threads);
    bind_real(st, 8, x->load1);
    bind_real(st, 9, x->mem_avail_mb);
    bind_real(st, 10, x->mem_total_mb);
    bind_real(st, 11, x->tokens_per_s);
    bind_str(st, 12, x->thread_cpu);
    return write_stmt(s, st, "recording system metrics", NULL, err);
}

int runstore_sys_log(RunStore *s, long run, const SysSample *x, char *err)
{
    int status = runstore_check_run(s, run, err);
    if (status) return status;
    status = runstore_journal_first(s, err);   /* older rows first */
    if (!status) status = runstore_sys_insert(s, run, x, err);
    if (status && status != LM_EARG && !s->damaged)   /* disk full, locked: kept for later */
        runstore_journal_sys(s, run, x);
    return status;
}

#define SYS_COLUMNS "t, rank, step, cpu, rss_mb, threads, load1, mem_avail_mb, mem_total_mb," \
                    " tokens_per_s, thread_cpu"

/* A row of SYS_COLUMNS into x. */
static void sys_read(sqlite3_stmt *st, SysSample *x)
{
    memset(x, 0, sizeof *x);
    x->t = sqlite3_column_double(st, 0);
    x->rank = sqlite3_column_int(st, 1);
    x->step = (long)sqlite3_column_int64(st, 2);
    x->cpu = col_real(st, 3);
    x->rss_mb = col_real(st, 4);
    x->threads = sqlite3_column_int(st, 5);
    x->load1 = col_real(st, 6);
    x->mem_avail_mb = col_real(st, 7);
    x->mem_total_mb = col_real(st, 8);
    x->tokens_per_s = col_real(st, 9);
    col_copy(st, 10, x->thread_cpu, sizeof x->thread_cpu);
}

int runstore_sys_ranks_open(RunStore *s, long run, RunStoreCursor **c, char *err)
{
    return runstore_cursor_new(s, "SELECT " SYS_COLUMNS " FROM run_sysmetrics WHERE run_id=?1"
                               " AND rank > 0 ORDER BY ifnull(step, 0), t, rank", run,
                               "reading system metrics", c, err);
}

int runstore_sys_next(RunStoreCursor *c, SysSample *x, char *err)
{
    int rc = runstore_cursor_step(c, err);
    if (rc == 1) sys_read(c->st, x);
    return rc;
}

int runstore_sys_series(RunStore *s, long run, int rank, SysSample **rows, int *n, char *err)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int status = prep(s, "SELECT " SYS_COLUMNS " FROM run_sysmetrics"
                      " WHERE run_id=?1 AND (?2 < 0 OR rank=?2) ORDER BY t, rank", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, rank);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(rows, &cap, *n + 1, sizeof **rows)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading system metrics");
            break;
        }
        sys_read(st, &(*rows)[(*n)++]);
    }
    if (!status && rc != SQLITE_DONE)
        status = runstore_db_fail(s, rc, "reading system metrics", err);
    sqlite3_finalize(st);
    if (status) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return status;
}

int runstore_sys_summary(RunStore *s, long run, SysSummary *sum, char *err)
{
    memset(sum, 0, sizeof *sum);
    sqlite3_stmt *st;
    int status = prep(s, "SELECT count(*), count(DISTINCT rank), min(t), max(t), avg(cpu),"
                      " max(cpu), avg(rss_mb), max(rss_mb), avg(load1), max(load1),"
                      " min(mem_avail_mb), max(threads) FROM run_sysmetrics WHERE run_id=?",
                      &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        sum->n = sqlite3_column_int(st, 0);
        sum->ranks = sqlite3_column_int(st, 1);
        double *d[] = {&sum->first_t, &sum->last_t, &sum->cpu_mean, &sum->cpu_peak,
                       &sum->rss_mean, &sum->rss_peak, &sum->load_mean, &sum->load_peak,
                       &sum->mem_avail_min};
        for (int i = 0; i < 9; i++) *d[i] = col_real(st, 2 + i);
        sum->threads_peak = sqlite3_column_int(st, 11);
    } else {
        status = runstore_db_fail(s, rc, "summarising system metrics", err);
    }
    sqlite3_finalize(st);
    return status;
}

/* ---- console -------------------------------------------------------------------------- */

/* Length of text cut to at most cap bytes at a UTF-8 character boundary. */
static size_t utf8_cut(const char *text, size_t cap)
{
    size_t n = strlen(text);
    if (n <= cap) return n;
    n = cap;
    while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--;
    return n;
}

int runstore_console_append(RunStore *s, long run, const char *kind, const char *text,
                            char *err)
{
    double t = sysinfo_wall();
    int status = runstore_journal_first(s, err);   /* older lines first */
    if (!status) status = runstore_console_insert(s, run, t, kind, text, err);
    if (status && status != LM_EARG && !s->damaged)   /* disk full, locked: kept for later */
        runstore_journal_console(s, run, t, kind ? kind : "info", text ? text : "");
    return status;
}

int runstore_console_insert(RunStore *s, long run, double t, const char *kind,
                            const char *text, char *err)
{
    char line[RUNSTORE_CONSOLE_LINE_MAX + 8];
    text = text ? text : "";
    size_t n = utf8_cut(text, RUNSTORE_CONSOLE_LINE_MAX - 3);
    memcpy(line, text, n);
    if (n < strlen(text)) memcpy(line + n, "\xe2\x80\xa6", 3), n += 3;   /* … */
    line[n] = 0;
    sqlite3_stmt *st;
    int status = runstore_check_run(s, run, err), changes = 0;
    if (status || (status = prep(s, "INSERT INTO run_console(run_id, seq, t, kind, text)"
                                 " SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4"
                                 " FROM run_console WHERE run_id=?1", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_double(st, 2, t);
    bind_str(st, 3, kind ? kind : "info");
    sqlite3_bind_text(st, 4, line, (int)n, SQLITE_TRANSIENT);
    if ((status = write_stmt(s, st, "recording the console", &changes, err))) return status;
    /* the cap: every 64 lines, delete what is older than the newest MAX lines (counted,
     * so a line numbered out of order in the store cannot make it delete the others) */
    if ((status = prep(s, "DELETE FROM run_console WHERE run_id=?1 AND seq < (SELECT min(seq)"
                       " FROM (SELECT seq FROM run_console WHERE run_id=?1 ORDER BY seq DESC"
                       " LIMIT ?2)) AND (SELECT max(seq) FROM run_console WHERE run_id=?1)"
                       " % 64 = 0", &st, err)))
        return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, RUNSTORE_CONSOLE_MAX_LINES);
    return write_stmt(s, st, "capping the console", NULL, err);
}

int runstore_console_read(RunStore *s, long run, long after, int tail, ConsoleLine **lines,
                          int *n, long *cut, char *err)
{
    *lines = NULL;
    *n = 0;
    *cut = 0;
    sqlite3_stmt *st;
    /* the newest MAX lines by their order, not by arithmetic on their numbers: a number
     * written out of order into the store hides nothing (issue 46 item 12) */
    int status = prep(s, "SELECT seq, t, kind, text FROM (SELECT seq, t, kind, text FROM"
                      " run_console WHERE run_id=?1 AND seq > ?2 AND seq >= (SELECT"
                      " coalesce(min(seq), 0) FROM (SELECT seq FROM run_console WHERE"
                      " run_id=?1 ORDER BY seq DESC LIMIT ?4)) ORDER BY seq DESC LIMIT ?3)"
                      " ORDER BY seq", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int(st, 3, tail > 0 ? tail : -1);
    sqlite3_bind_int(st, 4, RUNSTORE_CONSOLE_MAX_LINES);
    long cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (runstore_grow(lines, &cap, *n + 1, sizeof **lines)) {
            status = err_set(err, LM_ENOMEM, "out of memory reading the console");
            break;
        }
        ConsoleLine *l = &(*lines)[(*n)++];
        l->seq = (long)sqlite3_column_int64(st, 0);
        l->t = sqlite3_column_double(st, 1);
        col_copy(st, 2, l->kind, sizeof l->kind);
        l->text = col_dup(st, 3);
        if (!l->text) status = err_set(err, LM_ENOMEM, "out of memory reading the console");
    }
    if (!status && rc != SQLITE_DONE && rc != SQLITE_ROW)
        status = runstore_db_fail(s, rc, "reading the console", err);
    sqlite3_finalize(st);
    /* the lines before the first kept one were cut when the kept lines are numbered
     * without a gap; with a gap, nobody knows: -1 */
    if (!status && (status = prep(s, "SELECT count(*), coalesce(min(seq), 1), coalesce(max(seq),"
                                  " 0) FROM (SELECT seq FROM run_console WHERE run_id=?1"
                                  " ORDER BY seq DESC LIMIT ?2)", &st, err)) == 0) {
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int(st, 2, RUNSTORE_CONSOLE_MAX_LINES);
        if (sqlite3_step(st) == SQLITE_ROW) {
            long k = sqlite3_column_int64(st, 0), lo = sqlite3_column_int64(st, 1),
                 hi = sqlite3_column_int64(st, 2);
            *cut = !k || hi - lo + 1 == k ? lo - 1 : -1;
        }
        sqlite3_finalize(st);
    }
    if (status) {
        runstore_console_free(*lines, *n);
        *lines = NULL;
        *n = 0;
    }
    return status;
}

void runstore_console_free(ConsoleLine *lines, int n)
{
    for (int i = 0; lines && i < n; i++) free(lines[i].text);
    free(lines);
}
