/* runstore_jobs.c — the running and paused runs with their progress (see runstore_jobs.h):
 * two indexed list queries (status running, paused) and, per run, its newest JOBS_SPARK
 * losses by the metrics' primary key; liveness from the run locks (this host) or the
 * heartbeat (other hosts). Not writing anything. */
#include "runstore_jobs.h"
#include "private/runstore_impl.h"
#include "runstore_row.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char *runstore_job_state_name(JobState s)
{
    return s == JOB_PAUSED ? "paused" : s == JOB_STALE ? "stale" : "running";
}

/* The run's newest losses (oldest first) and its newest step. */
static int job_tail(RunStore *s, JobRow *j, char *err)
{
    sqlite3_stmt *st;
    char cols[768], sql[1024];
    runstore_step_columns(cols, sizeof cols);
    snprintf(sql, sizeof sql, "SELECT %s FROM metrics WHERE run_id=? ORDER BY step DESC"
             " LIMIT ?", cols);
    int status = prep(s, sql, &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, j->run.id);
    sqlite3_bind_int(st, 2, JOBS_SPARK);
    float back[JOBS_SPARK];
    long back_step[JOBS_SPARK];
    int n = 0, rc;
    while (n < JOBS_SPARK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == 0)
            runstore_step_from_row(st, &j->last);
        back_step[n] = sqlite3_column_int64(st, 0);
        back[n++] = (float)col_real(st, STEP_M_loss + 1);
    }
    if (n < JOBS_SPARK && rc != SQLITE_DONE)
        status = runstore_db_fail(s, rc, "reading a job's losses", err);
    sqlite3_finalize(st);
    for (int i = 0; i < n; i++) {
        j->spark[i] = back[n - 1 - i];
        j->spark_step[i] = back_step[n - 1 - i];
    }
    j->n_spark = n;
    return status;
}

static void job_progress(RunStore *s, JobRow *j)
{
    j->total_steps = runstore_config_long(j->run.config, "steps", 0);
    const StepMetric *m = &j->last;
    j->eta = metric_eta(m->step, j->total_steps, m->elapsed,
                        runstore_config_double(j->run.config, "time_budget", 0));
    runstore_run_stale(s, &j->run, 0, &j->age);
    if (!runstore_run_live(s, &j->run))
        j->state = JOB_STALE;
    else
        j->state = !strcmp(j->run.status, "paused") ? JOB_PAUSED : JOB_RUNNING;
    j->quiet = j->state == JOB_RUNNING && j->age >= JOBS_QUIET_SECONDS;
    if (j->quiet)
        j->eta = NAN;   /* no pace to tell the end by */
}

int runstore_jobs(RunStore *s, JobRow **rows, int *n, char *err)
{
    static const char *const FILTERS[2] = {"status=running", "status=paused"};
    RunRow *part[2] = {NULL, NULL};
    int np[2] = {0, 0}, status = LM_OK;
    *rows = NULL;
    *n = 0;
    if (runstore_pending(s)) runstore_flush(s, NULL);   /* this process's rows too */
    for (int k = 0; k < 2 && !status; k++)
        status = runstore_list(s, FILTERS[k], "recent", 0, &part[k], &np[k], err);
    JobRow *j = status ? NULL : calloc((size_t)(np[0] + np[1] + 1), sizeof *j);
    if (!status && !j) status = err_set(err, LM_ENOMEM, "out of memory listing jobs");
    int m = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < np[k]; i++) {
            if (j) j[m++].run = part[k][i];     /* takes the strings */
            else runstore_row_free(&part[k][i]);
        }
    free(part[0]);
    free(part[1]);
    for (int i = 0; i < m && !status; i++) {
        status = job_tail(s, &j[i], err);
        job_progress(s, &j[i]);
    }
    for (int a = 1; a < m; a++)   /* newest first across both statuses (insertion sort) */
        for (int b = a; b > 0 && j[b].run.id > j[b - 1].run.id; b--) {
            JobRow t = j[b];
            j[b] = j[b - 1];
            j[b - 1] = t;
        }
    if (status) {
        runstore_jobs_free(j, m);
        return status;
    }
    *rows = j;
    *n = m;
    return LM_OK;
}

void runstore_jobs_free(JobRow *rows, int n)
{
    for (int i = 0; rows && i < n; i++)
        runstore_row_free(&rows[i].run);
    free(rows);
}
