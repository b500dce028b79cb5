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

/* checkpoint: write a checkpoint of the current weights now (issue 49 item 7) */
typedef enum { RUNCTL_PAUSE, RUNCTL_RESUME, RUNCTL_STOP, RUNCTL_CHECKPOINT,
               RUNCTL_N_VERBS } RunControlVerb;

/* Whom a request is addressed to: the process that owned the run when it was asked
 * (its pid and host) and when that process took the run (created or resumed it), so a
 * request dies with its owner: a later owner, even one with a reused pid, never reads it. */
typedef struct {
    long pid;                 /* 0: nobody (a row from before requests were addressed) */
    char host[256];
    double since;             /* unix seconds the owner took the run */
} RunOwner;

typedef struct {
    long id, run_id;
    int verb_id;              /* RUNCTL_* when the stored text is a verb (length and bytes
                               * equal); -1 for anything else, a blob or "stop\0..." too */
    char verb[48];            /* as stored, printable: bytes outside ASCII as \xNN, cut "..." */
    double requested_at;      /* unix seconds */
    double acknowledged_at;   /* unix seconds; 0 while unanswered */
    long requester_pid;
    char requester_host[64];
    RunOwner owner;           /* whom it is addressed to */
    char reply[256];          /* the owner's answer, "superseded by request #N" or
                               * "expired: WHY" ("" while unanswered) */
} RunControl;

/* The schema step that adds the control table and runs.parent_run/parent_step (called
 * by runstore_open's migration, inside its transaction). Idempotent: what exists already
 * is left as it is. LM_OK or the store's error. */
int runstore_control_migrate(RunStore *s, char *err);

/* Schema step 9 (RUNSTORE_OWNER_VERSION; self-contained, idempotent): requests are
 * addressed to one owner (run_control.owner_pid/host/since, runs.owner_since) with a
 * partial index on the unanswered ones per owner; unanswered rows of before are answered
 * as expired. Sets user_version 9. */
#define RUNSTORE_OWNER_VERSION 9
int runstore_control_migrate_owner(RunStore *s, char *err);

/* Records a request: verb (pause|resume|stop) for run, from this process and host, now,
 * addressed to the run's current owner. *id receives the request's id. LM_EARG for an
 * unknown verb ("what to use") or run. */
int runstore_control_request(RunStore *s, long run, const char *verb, long *id, char *err);

/* The owner recorded in run's row now (pid, host, since) into *out. LM_EARG "no run N". */
int runstore_run_owner(RunStore *s, long run, RunOwner *out, char *err);

/* The owner's poll: the newest unanswered request of run addressed to me into *out
 * (*found 1), found through an index whatever else the table holds (rows for other
 * owners, other runs or unknown verbs cost nothing); older unanswered requests to me are
 * answered "superseded by request #N". *found 0 when there is none. */
int runstore_control_take(RunStore *s, long run, const RunOwner *me, RunControl *out,
                          int *found, char *err);

/* Answers every unanswered request of run "expired: why" (its owner ended or a new one
 * took the run before answering). */
int runstore_control_expire(RunStore *s, long run, const char *why, char *err);

/* Answers request id with reply (cut to fit), now. A request already answered keeps
 * its first answer (LM_OK). LM_EARG "no control request N". */
int runstore_control_answer(RunStore *s, long id, const char *reply, char *err);

/* One request into *out. LM_EARG "no control request N". */
int runstore_control_get(RunStore *s, long id, RunControl *out, char *err);

/* Refreshes run's heartbeat (a paused run logs no steps but is alive). */
int runstore_control_heartbeat(RunStore *s, long run, char *err);

/* How a run descends from its parent (runs.parent_kind): a fork continues the parent's
 * steps, data position and counters from parent_step; a run started with init_from= takes
 * only the weights of the parent's checkpoint of parent_step and counts from step 0. */
typedef enum { RUNSTORE_PARENT_FORK = 0, RUNSTORE_PARENT_INIT = 1 } RunParentKind;

/* Records that run descends from parent at parent_step, as kind says. LM_EARG for an
 * unknown run or parent. */
int runstore_set_parent(RunStore *s, long run, long parent, long parent_step,
                        RunParentKind kind, char *err);

/* Adds runs.parent_kind ('fork' or 'init') when it is missing (no schema step: older
 * binaries keep working, and the parents they record read as forks), inside the store's
 * migration transaction. Before it, a run started with init_from= was recorded as its
 * parent's fork; such a row is told apart by its steps: a fork's first logged step is
 * past its fork step, a fine-tune's is not (it counts from 0). Idempotent. */
int runstore_lineage_migrate(RunStore *s, char *err);

/* 1 when runs.parent_kind is missing (the store needs runstore_lineage_migrate). */
int runstore_lineage_missing(RunStore *s);

#define RUNSTORE_LINEAGE_MAX 16   /* ancestors followed at most */

/* A fork's metric continued from its ancestors' (runstore_lineage.c): each ancestor's points up to the step
 * its child was forked at, then the run's own (runstore_series otherwise). A deleted
 * ancestor ends the lineage there. *pts malloc'd (free()); errors as runstore_series. */
int runstore_series_lineage(RunStore *s, long run, const char *metric, SeriesPoint **pts,
                            int *n, char *err);
/* The same kept to what a chart draws, read a point at a time (runstore_lineage.c): the
 * steps cut into at most max_buckets ranges, each keeping its first, lowest, highest and
 * last point (M4) and its first NaN, in step order, so *n <= 5 max_buckets whatever the
 * run's length; every point when there are at most 2 max_buckets steps from the first. */
int runstore_series_lineage_m4(RunStore *s, long run, const char *metric, int max_buckets,
                               SeriesPoint **pts, int *n, char *err);
/* The same for the run's own points alone (no ancestors): a seed group's member. LM_EARG
 * "no run N". */
int runstore_series_m4(RunStore *s, long run, const char *metric, int max_buckets,
                       SeriesPoint **pts, int *n, char *err);

#endif
