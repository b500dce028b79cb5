/* runstore_journal.c — the spill file for metric rows the store cannot take (disk full,
 * locked for long): past max_pending buffered rows, they are appended to a text journal
 * (one row a line, tab separated; fsync'd) and memory is freed; every later flush first
 * inserts the journal's rows in the same transaction as the buffered ones and deletes the
 * journal once that commits, so rows land when space returns and are never lost or
 * doubled (INSERT OR REPLACE). Not a general write-ahead log: only step metrics and
 * evaluations are buffered, so only they are journaled. */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"

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
        fprintf(f, "S\t%ld\t%ld\t%.17g\t%ld\t%.9g\t%.9g\t%.9g\t%.9g\t%.17g\n", p->run,
                p->m.step, p->m.epoch, p->m.tokens, p->m.loss, p->m.lr, p->m.grad_norm,
                p->m.tokens_per_s, p->m.elapsed);
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

static int insert_line(RunStore *s, char *line, long *run, char *err)
{
    char *f[10];
    int n = 0;
    for (char *p = strtok(line, "\t\n"); p && n < 10; p = strtok(NULL, "\t\n")) f[n++] = p;
    sqlite3_stmt *st;
    if (n == 10 && !strcmp(f[0], "S")) {
        st = s->ins_step;
        for (int i = 1; i <= 9; i++) {
            if (i == 1 || i == 2 || i == 4) sqlite3_bind_int64(st, i, strtol(f[i], NULL, 10));
            else bind_real(st, i, strtod(f[i], NULL));
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
    } else {
        return LM_OK;   /* a torn line (crash during a spill): skipped */
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
    char line[1024];
    long runs[16];
    int n_runs = 0, status = LM_OK;
    while (!status && fgets(line, sizeof line, f)) {
        long run = 0;
        status = insert_line(s, line, &run, err);
        int seen = run <= 0;
        for (int j = 0; j < n_runs && !seen; j++) seen = runs[j] == run;
        if (!seen && n_runs < 16) runs[n_runs++] = run;
    }
    fclose(f);
    for (int j = 0; j < n_runs && !status; j++) {   /* last_step, best/final val */
        sqlite3_bind_int64(s->upd_run, 1, runs[j]);
        sqlite3_bind_double(s->upd_run, 2, now_wall());
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
