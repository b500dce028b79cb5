/* runstore_many.c — several series of one run read in one pass over the rows they share
 * (runstore_series_read_many, runstore.h): the step metrics are columns of one metrics
 * row, an evaluation split's values columns of one evals row, the system samples of rank 0
 * columns of one row, so the series whose source (the registry's table and row filter,
 * runstore_series_source) is the same are read by one query of all their columns. A
 * report of a 5 M-step run read its rows once for each of its seven step metrics, 0.7-1.1 s
 * a pass. Each series' points are those runstore_series_open gives it. Not a reader of
 * several runs, and not the single series' cursor (runstore_registry.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where each series lives: its rows (from), its column, whether it is a running best. */
typedef struct {
    char from[480], col[64];
    int best, done;
} Source;

/* The series of one pass (those of src whose rows are src[first]'s) as one query:
 * "SELECT step, col, col, ... FROM rows ORDER BY step", each row's values visited. */
static int read_pass(RunStore *s, long run, Source *src, int n, int first,
                     RunStoreManyVisit visit, void *ctx, char *err)
{
    int *member = malloc((size_t)n * sizeof *member), m = 0;
    double *best = malloc((size_t)n * sizeof *best);
    char *sql = malloc((size_t)n * 70 + 600);
    if (!member || !best || !sql) {
        free(member), free(best), free(sql);
        return err_set(err, LM_ENOMEM, "out of memory reading series");
    }
    size_t o = (size_t)sprintf(sql, "SELECT step");
    for (int k = first; k < n; k++)
        if (!src[k].done && !strcmp(src[k].from, src[first].from)) {
            src[k].done = 1;
            best[m] = NAN;
            member[m++] = k;
            o += (size_t)sprintf(sql + o, ", %s", src[k].col);
        }
    sprintf(sql + o, " FROM %s ORDER BY step", src[first].from);
    RunStoreCursor *c;
    int status = runstore_cursor_new(s, sql, run, "reading a series", &c, err), rc = 0;
    while (!status && (rc = runstore_cursor_step(c, err)) == 1) {
        s->rows_read++;   /* one row, whatever the series it holds */
        for (int i = 0; i < m && !status; i++) {
            SeriesPoint p = {sqlite3_column_int64(c->st, 0), col_real(c->st, 1 + i)};
            if (src[member[i]].best) {   /* as the cursor's running minimum: NULLs skipped */
                if (!isnan(p.value) && (isnan(best[i]) || p.value < best[i])) best[i] = p.value;
                p.value = best[i];
            }
            status = visit(ctx, member[i], &p);
        }
    }
    if (!status && rc < 0) status = LM_EDB;
    runstore_cursor_close(c);
    free(member), free(best), free(sql);
    return status;
}

int runstore_series_read_many(RunStore *s, long run, const char *const *names, int n,
                              RunStoreManyVisit visit, void *ctx, char *err)
{
    Source *src = calloc((size_t)n + 1, sizeof *src);
    if (!src) return err_set(err, LM_ENOMEM, "out of memory reading series");
    int status = runstore_check_run(s, run, err);
    for (int k = 0; k < n && !status; k++) {   /* the errors runstore_series_open gives */
        SeriesRef ref;
        if ((status = series_find(names[k], &ref, err))) break;
        if ((ref.info->source == SERIES_SRC_NAMED || ref.info->source == SERIES_SRC_HIST) &&
            !runstore_series_named(s, run, ref.name)) {
            char shown[SERIES_NAME_LEN * 4];
            status = err_set(err, LM_EARG, "run %ld has no series '%s' (`series %ld` lists its "
                             "series)", run, series_escape(shown, sizeof shown, ref.name), run);
            break;
        }
        runstore_series_source(&ref, "?1", src[k].from, sizeof src[k].from, src[k].col,
                               sizeof src[k].col);
        src[k].best = ref.info->source == SERIES_SRC_BEST;
    }
    for (int k = 0; k < n && !status; k++)
        if (!src[k].done) status = read_pass(s, run, src, n, k, visit, ctx, err);
    free(src);
    return status;
}
