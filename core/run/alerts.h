/* alerts.h — a run owner's alerts (the recorder runs them): about once a second it reads
 * the rules that apply to its run (runstore_alerts: the run's own, its sweep's, and those
 * its configuration's `alerts=` key stored at launch), checks each against the run's facts
 * (alertrule.h) and, when one fires for the first time, records it in the store (every
 * dashboard attached to the run shows it and rings the bell) and starts its command: the
 * words of the command split without a shell (quotes group words; no expansion) and run
 * with posix_spawnp, the run's facts in LMLAB_* environment variables, never inside the
 * command line. Not the rule language (alertrule.h) nor the showing (ui/, commands/). */
#ifndef LM_ALERTS_H
#define LM_ALERTS_H

#include "alertrule.h"
#include "runstore_notes.h"
#include "runstore_track.h"

#include <sys/types.h>

#define ALERTS_MAX_KIDS 16
#define ALERTS_ARGV_MAX 64
#define ALERTS_CMD_SECONDS 300.0   /* a command's time limit (LMLAB_ALERT_CMD_SECONDS) */

typedef struct {
    long run_id;
    char run_name[64];
    char db_path[1024];
    double next_poll;      /* monotonic seconds */
    int n_kids;
    pid_t kid[ALERTS_MAX_KIDS];   /* each the leader of its own process group */
    long kid_event[ALERTS_MAX_KIDS];
    double kid_start[ALERTS_MAX_KIDS];   /* monotonic seconds */
    double cmd_seconds;    /* the time limit of a command */
} AlertEngine;

void alerts_init(AlertEngine *e, long run, const char *run_name, const char *db_path);

/* When due (every second; always when force), checks every rule for the facts f and acts
 * on those that fire; reaps finished commands and records their exit status. Store
 * failures only delay alerts. Returns the number that fired. */
int alerts_poll(AlertEngine *e, RunStore *st, const AlertFacts *f, int force);

/* Records that rule a fired for e's run with msg (once: 0 when it already had), writes the
 * run's console line "alert RULE fired: MSG" (judge: "" for the owner, else who saw it,
 * e.g. "pid 4242, jobs") and starts its command. 1 when this call fired it. */
int alerts_fire(AlertEngine *e, RunStore *st, const AlertRow *a, const AlertFacts *f,
                const char *msg, const char *judge);

/* Any process with the store open judges the rules an owner cannot judge itself
 * (alerts_watch.c): a running run whose owner has said nothing (no step row, no
 * heartbeat) for a rule's stalled seconds fires `stalled` (a frozen or hung process), and
 * a running or paused run whose owner process is gone fires `ended`; whoever sees it first
 * fires it, once. who names the judge ("jobs", "watch", "dashboard"). Each fired alert is
 * passed to cb (may be NULL) with the run, its rule and message. Returns how many fired. */
typedef void (*AlertsSeen)(void *ud, long run, const char *rule, const char *msg);
int alerts_watch_judge(RunStore *st, const char *db_path, const char *who, AlertsSeen cb,
                       void *ud);

/* Waits (at most `seconds`) for the commands still running, then ends those left (their
 * whole process group: TERM, then KILL) and records how each ended. A command's process
 * group is also ended when the command exits (what it left running in the background)
 * and when it passes its time limit, so no command outlives its run (issue 46 item 8). */
void alerts_finish(AlertEngine *e, RunStore *st, double seconds);

/* 1 when row a's command may run in this process (runstore_alert_trusted: this user wrote
 * it, here, for this run and rule, and it is whole); else 0 with why (cap bytes), worded
 * for the user: "not written by you: refused (...)" or "not whole: refused (...)". */
int alerts_command_allowed(const RunStore *st, const AlertRow *a, char *why, size_t cap);

/* Splits cmd into words (spaces separate; '...' and "..." group; a backslash escapes the
 * next character outside single quotes) into argv (at most max - 1 words, NULL-terminated,
 * pointing into buf of cap bytes). Returns the word count, or -1 with err set (empty
 * command, unclosed quote, too many words or too long). */
int alerts_split(const char *cmd, char *buf, size_t cap, char **argv, int max, char *err);


#endif
