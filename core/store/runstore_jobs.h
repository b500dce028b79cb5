/* runstore_jobs.h — the jobs board's facts: every run the store has as running or paused,
 * from any process on any host (MPI jobs and sweep workers included), with its newest
 * step, a short tail of its loss for a sparkline, its progress and ETA, and whether its
 * owner is still alive. Read-only. Not the drawing (ui/view_jobs.c) or the printing
 * (commands/cmd_jobs.c). */
#ifndef LM_RUNSTORE_JOBS_H
#define LM_RUNSTORE_JOBS_H

#include "runstore.h"

#define JOBS_SPARK 32   /* loss points kept for the sparkline */
/* A running run's owner writes a step row or a heartbeat at least every 30 s while it
 * works: silent this long, its run has made no step for that long (a frozen, hung or busy
 * process; issue 49 item 5). */
#define JOBS_QUIET_SECONDS 45

typedef enum { JOB_RUNNING, JOB_PAUSED, JOB_STALE } JobState;

typedef struct {
    RunRow run;            /* the run (its strings: runstore_jobs_free) */
    JobState state;        /* stale: the owner is dead, or silent past the stale limit */
    StepMetric last;       /* newest logged step (zeroed when none) */
    long total_steps;      /* the configured steps, 0 when unknown (epochs=) */
    double eta;            /* seconds to total_steps at the run's pace; NAN unknown */
    double age;            /* seconds since the owner's last heartbeat (INFINITY: none) */
    int quiet;             /* running, its owner alive but silent JOBS_QUIET_SECONDS or more:
                              no step for `age` seconds (eta is then NAN) */
    float spark[JOBS_SPARK]; /* (n_spark) the newest losses, oldest first */
    long spark_step[JOBS_SPARK]; /* (n_spark) their steps */
    int n_spark;
} JobRow;

/* The state's name: "running", "paused", "stale". */
const char *runstore_job_state_name(JobState s);

/* Every running or paused run, newest first, into *rows (malloc'd, runstore_jobs_free).
 * Store errors as runstore_list. */
int runstore_jobs(RunStore *s, JobRow **rows, int *n, char *err);
void runstore_jobs_free(JobRow *rows, int n);

#endif
