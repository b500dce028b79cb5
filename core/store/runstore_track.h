/* runstore_track.h — what a tracker keeps beside a run's metrics (schema step 7, one
 * self-contained migration in runstore_track.c): the machine's and the process's system
 * metrics sampled by the run's owner, the run's console (what it printed, capped per run),
 * notes with their times on runs and sweeps (runstore_notes.c) and alert rules with the
 * alerts that fired (runstore_alerts.c). Every value is a bound parameter. Not the
 * sampling (core/run/sysmetrics.c), the wording of console lines (core/run/console.c) nor
 * the deciding when an alert fires (core/run/alerts.c). */
#ifndef LM_RUNSTORE_TRACK_H
#define LM_RUNSTORE_TRACK_H

#include "runstore.h"
#include "sysmetrics.h"

#define RUNSTORE_TRACK_VERSION 7
#define RUNSTORE_CONSOLE_MAX_LINES 5000  /* newest lines kept per run; older ones are cut */
#define RUNSTORE_CONSOLE_LINE_MAX 1000   /* bytes of one stored line (longer: cut, "…") */
#define RUNSTORE_NOTE_MAX 65536          /* bytes of one note; longer text is refused */
#define RUNSTORE_ALERT_RULE_LEN 64
#define RUNSTORE_ALERT_CMD_LEN 1024

/* The schema step: creates the tables when missing, copies the runs' single notes into
 * the notes table, and sets user_version 7. Runs inside the caller's transaction. */
int runstore_track_migrate(RunStore *s, char *err);

/* ---- system metrics ------------------------------------------------------------------- */


/* Stores one sample of run `run`. LM_EARG for an unknown run; store errors. */
int runstore_sys_log(RunStore *s, long run, const SysSample *x, char *err);

/* Every sample of run `run` (rank < 0: all ranks; else that rank), by time. *rows is
 * malloc'd (caller frees; NULL when none). */
int runstore_sys_series(RunStore *s, long run, int rank, SysSample **rows, int *n, char *err);
/* The samples of the ranks other than 0 (under mpirun) as a cursor (RunStoreCursor), by
 * step, then time and rank; read with runstore_sys_next (1, 0 at the end, -1 on a
 * failure). */
int runstore_sys_ranks_open(RunStore *s, long run, RunStoreCursor **c, char *err);
int runstore_sys_next(RunStoreCursor *c, SysSample *x, char *err);

typedef struct {
    int n, ranks;
    double first_t, last_t;
    double cpu_mean, cpu_peak, rss_mean, rss_peak, load_mean, load_peak, mem_avail_min;
    int threads_peak;
} SysSummary;

/* Means and peaks over every sample of the run (n = 0 and NaNs when none). */
int runstore_sys_summary(RunStore *s, long run, SysSummary *sum, char *err);

/* ---- console -------------------------------------------------------------------------- */

typedef struct {
    long seq;              /* the run's line number, from 1; lines before the first kept
                              one were cut (RUNSTORE_CONSOLE_MAX_LINES) */
    double t;
    char kind[16];         /* progress, eval, sample, warning, error, status, info */
    char *text;            /* malloc'd */
} ConsoleLine;

/* Appends one line (a longer text is cut to RUNSTORE_CONSOLE_LINE_MAX bytes at a UTF-8
 * boundary, marked "…"; embedded newlines are kept, the text is stored as given: the
 * readers escape it). The oldest lines past RUNSTORE_CONSOLE_MAX_LINES are deleted. */
int runstore_console_append(RunStore *s, long run, const char *kind, const char *text,
                            char *err);

/* Lines of run `run` with seq > after (after 0: from the start) among its newest
 * RUNSTORE_CONSOLE_MAX_LINES; tail > 0 keeps only the last tail of them. *lines malloc'd
 * (runstore_console_free). *cut = lines that were cut from the start of the console (0
 * when none), or -1 when the kept lines' numbers have a gap (written out of order into
 * the store: how many were cut is not known). */
int runstore_console_read(RunStore *s, long run, long after, int tail, ConsoleLine **lines,
                          int *n, long *cut, char *err);
void runstore_console_free(ConsoleLine *lines, int n);

#endif
