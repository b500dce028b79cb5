/* runstore_journal.c — the spill file for metric rows the store cannot take (disk full,
 * locked for long): past max_pending buffered rows, they are appended to a text journal
 * (one row a line, tab separated; fsync'd) and memory is freed; every later flush first
 * inserts the journal's rows in the same transaction as the buffered ones and deletes the
 * journal once that commits, so rows land when space returns and are never lost or
 * doubled (INSERT OR REPLACE). Step metrics and evaluations are buffered first, then
 * journaled; a checkpoint record or a console line that could not be written is journaled
 * at once (C and L lines), so it lands afterwards too (issue 46 item 5), and so is a status
 * change (T line: applied only when no later write touched the run) and a system sample
 * (Y line). Not a general write-ahead log: notes, tags and settings are not journaled. */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "runstore_track.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Lines in the journal (0 when there is none). */
static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;) n += c == '\n';
    fclose(f);
    return n;
}

int runstore_set_journal(RunStore *s, const char *path, long max_pending)
{
    snprintf(s->journal, sizeof s->journal, "%s", path ? path : "");
    s->max_pending = max_pending > 0 ? max_pending : 100000;
    s->journal_rows = s->journal[0] ? count_lines(s->journal) : 0;
    return LM_OK;
}

long runstore_journal_rows(const RunStore *s) { return s->journal_rows; }

int runstore_journal_spill(RunStore *s, char *err)
{
    if (!s->journal[0] || s->n_steps + s->n_evals == 0) return LM_OK;
    FILE *f = fopen(s->journal, "a");
    if (!f) return err_set(err, LM_EIO, "cannot open the journal %s: %s", s->journal,
                           strerror(errno));
    for (long i = 0; i < s->n_steps; i++) {
        const PendingStep *p = &s->steps[i];
        fprintf(f, "S\t%ld\t%ld", p->run, p->m.step);
        for (int k = 0; k < STEP_METRIC_N; k++) {   /* metrics.def's order */
            double v = step_metric_get(&p->m, k);
            if (STEP_METRICS[k].kind == STEP_INT) fprintf(f, "\t%.0f", v);
            else fprintf(f, "\t%.17g", v);
        }
        fputc('\n', f);
    }
    for (long i = 0; i < s->n_evals; i++) {
        const PendingEval *p = &s->evals[i];
        fprintf(f, "E\t%ld\t%ld\t%s\t%.17g\t%.17g\t%.17g\t%ld\t%.17g\n", p->run, p->e.step,
                p->e.split, p->e.loss, p->e.ppl, p->e.bpc, p->e.tokens, p->e.elapsed);
    }
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad)   /* the rows stay in memory; a torn last line is skipped when read */
        return err_set(err, errno == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot write the journal"
                       " %s: %s", s->journal, strerror(errno));
    s->journal_rows += s->n_steps + s->n_evals;
    s->n_steps = s->n_evals = 0;
    return LM_OK;
}

/* Appends one whole line to the journal and syncs it (0, or -1 leaving no torn line
 * counted: a torn last line is skipped when read). */
static int append_line(RunStore *s, const char *line)
{
    if (!s->journal[0]) return -1;
    FILE *f = fopen(s->journal, "a");
    if (!f) return -1;
    int bad = fputs(line, f) < 0;
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (!bad) s->journal_rows++;
    return bad ? -1 : 0;
}

void runstore_journal_checkpoint(RunStore *s, long run, const CheckpointRecord *c)
{
    char line[METRICS_PATH_LEN + 128];
    if (strpbrk(c->path, "\t\n")) return;   /* cannot be a field */
    snprintf(line, sizeof line, "C\t%ld\t%ld\t%.17g\t%d\t%s\n", run, c->step, c->val_loss,
             c->is_best, c->path);
    append_line(s, line);
}

void runstore_journal_console(RunStore *s, long run, double t, const char *kind,
                              const char *text)
{
    size_t n = strlen(text), o;
    if (n > RUNSTORE_CONSOLE_LINE_MAX) n = RUNSTORE_CONSOLE_LINE_MAX;   /* cut when inserted */
    char *line = malloc(2 * n + 128);
    if (!line) return;
    o = (size_t)snprintf(line, 128, "L\t%ld\t%.17g\t%.15s\t", run, t, strpbrk(kind, "\t\n") ? "info" : kind);
    for (size_t i = 0; i < n; i++) o += (size_t)sprintf(line + o, "%02x", (unsigned char)text[i]);
    line[o++] = '\n';
    line[o] = 0;
    append_line(s, line);
    free(line);
}

void runstore_journal_status(RunStore *s, long run, double t, const char *status,
                             const char *reason)
{
    size_t n = reason ? strlen(reason) : 0, o;
    if (strpbrk(status, "\t\n") || n > 65536) return;
    char *line = malloc(2 * n + 128);
    if (!line) return;
    o = (size_t)snprintf(line, 128, "T\t%ld\t%.17g\t%.15s\t%s", run, t, status,
                         reason ? "+" : "-");   /* + : a reason follows, in hex */
    for (size_t i = 0; i < n; i++) o += (size_t)sprintf(line + o, "%02x", (unsigned char)reason[i]);
    line[o++] = '\n';
    line[o] = 0;
    append_line(s, line);
    free(line);
}

void runstore_journal_sys(RunStore *s, long run, const SysSample *x)
{
    char line[1024];
    int o = snprintf(line, sizeof line, "Y\t%ld\t%d\t%.17g\t%ld\t%.17g\t%.17g\t%d\t%.17g"
                     "\t%.17g\t%.17g\t%.17g\t+", run, x->rank, x->t, x->step, x->cpu,
                     x->rss_mb, x->threads, x->load1, x->mem_avail_mb, x->mem_total_mb,
                     x->tokens_per_s);   /* + then thread_cpu in hex */
    for (size_t i = 0; x->thread_cpu[i] && i < sizeof x->thread_cpu && o < (int)sizeof line - 4; i++)
        o += snprintf(line + o, sizeof line - o, "%02x", (unsigned char)x->thread_cpu[i]);
    snprintf(line + o, sizeof line - o, "\n");
    append_line(s, line);
}

/* Hex text back to bytes (malloc'd; NULL when out of memory). */
static char *unhex(const char *h)
{
    size_t k = strlen(h) / 2;
    char *text = malloc(k + 1);
    if (!text) return NULL;
    for (size_t i = 0; i < k; i++) {
        unsigned v = 0;
        sscanf(h + 2 * i, "%2x", &v);
        text[i] = (char)v;
    }
    text[k] = 0;
    return text;
}

/* One journal line: "S run step <metrics.def's metrics>" or "E run step split loss ppl bpc
 * tokens elapsed". A line without its newline (torn by a crash during a spill) or of
 * another shape is skipped. A step line from an lmlab with fewer metrics (an older one)
 * lands with the metrics it lacks left empty (NULL). */
static int insert_line(RunStore *s, char *line, long *run, char *err)
{
    enum { MAX_FIELDS = STEP_METRIC_N + 3 > 13 ? STEP_METRIC_N + 3 : 13 };
    char *f[MAX_FIELDS + 1];
    int n = 0;
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n')
        return LM_OK;
    for (char *p = strtok(line, "\t\n"); p && n <= MAX_FIELDS; p = strtok(NULL, "\t\n"))
        f[n++] = p;
    sqlite3_stmt *st;
    if (n >= 3 && n <= STEP_METRIC_N + 3 && !strcmp(f[0], "S")) {
        st = s->ins_step;
        sqlite3_bind_int64(st, 1, strtol(f[1], NULL, 10));
        sqlite3_bind_int64(st, 2, strtol(f[2], NULL, 10));
        for (int k = 0; k < STEP_METRIC_N; k++) {
            if (k + 3 >= n) sqlite3_bind_null(st, k + 3);
            else if (STEP_METRICS[k].kind == STEP_INT)
                sqlite3_bind_int64(st, k + 3, strtoll(f[k + 3], NULL, 10));
            else bind_real(st, k + 3, strtod(f[k + 3], NULL));
        }
    } else if (n == 9 && !strcmp(f[0], "E")) {
        st = s->ins_eval;
        sqlite3_bind_int64(st, 1, strtol(f[1], NULL, 10));
        sqlite3_bind_int64(st, 2, strtol(f[2], NULL, 10));
        sqlite3_bind_text(st, 3, f[3], -1, SQLITE_TRANSIENT);
        for (int i = 4; i <= 8; i++) {
            if (i == 7) sqlite3_bind_int64(st, i, strtol(f[i], NULL, 10));
            else bind_real(st, i, strtod(f[i], NULL));
        }
    } else if (n == 6 && !strcmp(f[0], "C")) {   /* a checkpoint record */
        CheckpointRecord c = {.step = strtol(f[2], NULL, 10), .val_loss = strtod(f[3], NULL),
                              .is_best = atoi(f[4])};
        snprintf(c.path, sizeof c.path, "%s", f[5]);
        *run = strtol(f[1], NULL, 10);
        return runstore_ckpt_log_one(s, *run, &c, err);
    } else if ((n == 5 || n == 4) && !strcmp(f[0], "L")) {   /* a console line, hex text */
        char *text = unhex(n == 5 ? f[4] : "");
        if (!text) return err_set(err, LM_ENOMEM, "out of memory landing the journal");
        *run = strtol(f[1], NULL, 10);
        int status = runstore_console_insert(s, *run, strtod(f[2], NULL), f[3], text, err);
        free(text);
        return status;
    } else if (n == 13 && !strcmp(f[0], "Y") && f[12][0] == '+') {   /* a system sample */
        SysSample x = {.rank = atoi(f[2]), .t = strtod(f[3], NULL),
                       .step = strtol(f[4], NULL, 10), .cpu = strtod(f[5], NULL),
                       .rss_mb = strtod(f[6], NULL), .threads = atoi(f[7]),
                       .load1 = strtod(f[8], NULL), .mem_avail_mb = strtod(f[9], NULL),
                       .mem_total_mb = strtod(f[10], NULL), .tokens_per_s = strtod(f[11], NULL)};
        char *tc = unhex(f[12] + 1);
        if (!tc) return err_set(err, LM_ENOMEM, "out of memory landing the journal");
        snprintf(x.thread_cpu, sizeof x.thread_cpu, "%s", tc);
        free(tc);
        *run = strtol(f[1], NULL, 10);
        return runstore_sys_insert(s, *run, &x, err);
    } else if (n == 5 && !strcmp(f[0], "T") && (f[4][0] == '+' || f[4][0] == '-')) {
        char *why = f[4][0] == '+' ? unhex(f[4] + 1) : NULL;   /* a status change */
        if (f[4][0] == '+' && !why) return err_set(err, LM_ENOMEM, "out of memory landing"
                                                   " the journal");
        *run = strtol(f[1], NULL, 10);
        int status = runstore_status_write(s, *run, f[3], why, strtod(f[2], NULL), 1, err);
        free(why);
        return status == LM_EARG ? LM_OK : status;   /* an unknown status: skipped */
    } else {
        return LM_OK;   /* another shape: skipped */
    }
    *run = strtol(f[1], NULL, 10);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? LM_OK : runstore_db_fail(s, rc, "writing journaled rows", err);
}

int runstore_journal_insert(RunStore *s, char *err)
{
    if (!s->journal[0] || s->journal_rows == 0) return LM_OK;
    FILE *f = fopen(s->journal, "r");
    if (!f) return LM_OK;
    enum { LINE_MAX_BYTES = 2 * RUNSTORE_CONSOLE_LINE_MAX + METRICS_PATH_LEN + 256 };
    char *line = malloc(LINE_MAX_BYTES);
    if (!line) {
        fclose(f);
        return err_set(err, LM_ENOMEM, "out of memory landing the journal");
    }
    long runs[16];
    int n_runs = 0, status = LM_OK;
    while (!status && fgets(line, LINE_MAX_BYTES, f)) {
        long run = 0;
        status = insert_line(s, line, &run, err);
        int seen = run <= 0;
        for (int j = 0; j < n_runs && !seen; j++) seen = runs[j] == run;
        if (!seen && n_runs < 16) runs[n_runs++] = run;
    }
    fclose(f);
    free(line);
    for (int j = 0; j < n_runs && !status; j++) {   /* last_step, best/final val */
        sqlite3_bind_int64(s->upd_run, 1, runs[j]);
        sqlite3_bind_double(s->upd_run, 2, sysinfo_wall());
        int rc = sqlite3_step(s->upd_run);
        sqlite3_reset(s->upd_run);
        if (rc != SQLITE_DONE) status = runstore_db_fail(s, rc, "updating the run", err);
    }
    return status;
}

void runstore_journal_landed(RunStore *s)
{
    if (s->journal[0] && s->journal_rows) {
        unlink(s->journal);
        s->journal_rows = 0;
    }
}
