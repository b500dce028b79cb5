/* runstore_control.h — controlling a run from another process through the run store: a
 * control row (run, verb pause|resume|stop, who asked and when) that the run's own
 * recorder reads at its own pace, acts on through its trainer, and answers (when, and a
 * one-line reply). Also a run's lineage (the run and step it was forked from). The
 * requester and the owner share nothing but the store file, so this works across
 * processes, MPI jobs and hosts that share the file. Not here: acting on a verb (the
 * recorder, core/run/recorder.c) or waiting for an answer (commands/cmd_jobs.c). */
#ifndef LM_RUNSTORE_CONTROL_H
#define LM_RUNSTORE_CONTROL_H

#include "runstore.h"

typedef enum { RUNCTL_PAUSE, RUNCTL_RESUME, RUNCTL_STOP, RUNCTL_N_VERBS } RunControlVerb;

typedef struct {
    long id, run_id;
    char verb[16];            /* as stored: may be a verb this build does not know */
    double requested_at;      /* unix seconds */
    double acknowledged_at;   /* unix seconds; 0 while unanswered */
    long requester_pid;
    char requester_host[64];
    char reply[256];          /* the owner's answer ("" while unanswered) */
} RunControl;

/* The verb named by text (pause|resume|stop), or -1. */
int runstore_control_verb(const char *text);

/* The schema step that adds the control table and runs.parent_run/parent_step (called
 * by runstore_open's migration, inside its transaction). Idempotent: what exists already
 * is left as it is. LM_OK or the store's error. */
int runstore_control_migrate(RunStore *s, char *err);

/* Records a request: verb (pause|resume|stop) for run, from this process and host, now.
 * *id receives the request's id. LM_EARG for an unknown verb ("what to use") or run. */
int runstore_control_request(RunStore *s, long run, const char *verb, long *id, char *err);

/* Up to max unanswered requests for run, oldest first, into out (*n of them). */
int runstore_control_pending(RunStore *s, long run, RunControl *out, int max, int *n,
                             char *err);

/* Answers request id with reply (cut to fit), now. A request already answered keeps
 * its first answer (LM_OK). LM_EARG "no control request N". */
int runstore_control_answer(RunStore *s, long id, const char *reply, char *err);

/* One request into *out. LM_EARG "no control request N". */
int runstore_control_get(RunStore *s, long id, RunControl *out, char *err);

/* Refreshes run's heartbeat (a paused run logs no steps but is alive). */
int runstore_control_heartbeat(RunStore *s, long run, char *err);

/* Records that run was forked from parent at parent_step. LM_EARG for an unknown run or
 * parent. */
int runstore_set_parent(RunStore *s, long run, long parent, long parent_step, char *err);

#define RUNSTORE_LINEAGE_MAX 16   /* ancestors followed at most */

/* A fork's metric continued from its ancestors': each ancestor's points up to the step
 * its child was forked at, then the run's own (runstore_series otherwise). A deleted
 * ancestor ends the lineage there. *pts malloc'd (free()); errors as runstore_series. */
int runstore_series_lineage(RunStore *s, long run, const char *metric, SeriesPoint **pts,
                            int *n, char *err);

#endif
