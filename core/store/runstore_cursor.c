/* runstore_cursor.c — a query of the store read one row at a time (RunStoreCursor,
 * runstore.h): what the exports walk series of millions of points with, in memory that
 * does not grow with them. The typed openers and readers live beside the tables they read
 * (runstore_registry.c: a registry series; runstore_series.c: named scalars and
 * histograms; runstore_query.c: gates; runstore_track.c: system samples). Not a general
 * query API: every cursor's SQL is the store's own. */
#include "runstore.h"
#include "private/runstore_impl.h"

int runstore_cursor_new(RunStore *s, const char *sql, long run, const char *what,
                        RunStoreCursor **c, char *err)
{
    *c = calloc(1, sizeof **c);
    if (!*c) return err_set(err, LM_ENOMEM, "out of memory %s", what);
    int status = prep(s, sql, &(*c)->st, err);
    if (status) {
        free(*c);
        *c = NULL;
        return status;
    }
    sqlite3_bind_int64((*c)->st, 1, run);
    (*c)->s = s;
    (*c)->what = what;
    return LM_OK;
}

int runstore_cursor_step(RunStoreCursor *c, char *err)
{
    int rc = sqlite3_step(c->st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    runstore_db_fail(c->s, rc, c->what, err);
    return -1;
}

void runstore_cursor_close(RunStoreCursor *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}
