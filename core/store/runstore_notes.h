/* runstore_notes.h — notes and alerts in the run store (tables of schema step 7, created
 * by runstore_track_migrate): every note with its time on a run or a sweep, alert rules
 * on a run or a sweep (each with an optional command), and the alerts that fired (each
 * rule fires at most once per run). Text is checked (valid UTF-8, no control characters
 * but newline and tab) before it is stored. Not the rule language nor its evaluation
 * (core/run/alerts.c). */
#ifndef LM_RUNSTORE_NOTES_H
#define LM_RUNSTORE_NOTES_H

#include "runstore_track.h"

typedef struct {
    long id, run_id, sweep_id;   /* exactly one of run_id, sweep_id is > 0 */
    double t;
    char *text;                  /* malloc'd */
} NoteRow;

/* Adds a note to run `run` (sweep 0) or sweep `sweep` (run 0) at the current time.
 * LM_EARG: empty text, text over RUNSTORE_NOTE_MAX bytes (the message names the limit),
 * invalid UTF-8 or control characters, no such run or sweep. *id = the note's id. */
int runstore_note_add(RunStore *s, long run, long sweep, const char *text, long *id,
                      char *err);

/* The notes of a run (run > 0: its own, then those of its sweep), of a sweep (sweep > 0)
 * or of every run and sweep (both 0), oldest first. *rows malloc'd (runstore_notes_free). */
int runstore_notes(RunStore *s, long run, long sweep, NoteRow **rows, int *n, char *err);
void runstore_notes_free(NoteRow *rows, int n);

typedef struct {
    long id, run_id, sweep_id;   /* run_id 0 and sweep_id 0 never both */
    char rule[RUNSTORE_ALERT_RULE_LEN];
    char cmd[RUNSTORE_ALERT_CMD_LEN];   /* "" = none */
    double created;
    char origin[32];             /* "live" (the alert command) or "config" */
    long cmd_bytes;              /* the stored command's length (over the buffer: refused) */
    char mac[65];                /* the writer's code over the row ("" = none) */
} AlertRow;

/* Stores rule (already checked by the caller) with cmd ("" or NULL for none); a command is
 * signed with the user's key (usersig.h), so only its writer's processes will run it: a
 * failure to sign (an unsafe key file, no home) refuses the alert with the reason. */
int runstore_alert_add(RunStore *s, long run, long sweep, const char *rule, const char *cmd,
                       const char *origin, long *id, char *err);

/* The rules that apply to run `run` (its own and its sweep's; run 0: every rule).
 * *rows malloc'd (free). */
int runstore_alerts(RunStore *s, long run, AlertRow **rows, int *n, char *err);

/* LM_OK when row a's command may run in this process: its code proves that this user
 * wrote this row (the same store, run or sweep, rule, command, origin and time), and the
 * command is whole (under RUNSTORE_ALERT_CMD_LEN bytes, no NUL). Else LM_EARG (the code
 * fails, whatever else) or LM_EFORMAT (signed but not whole) with why (cap bytes). runstore_alert_sign fills a->mac for the row as it will be stored. */
int runstore_alert_trusted(const RunStore *s, const AlertRow *a, char *why, size_t cap);
int runstore_alert_sign(const RunStore *s, AlertRow *a, char *err);

/* Deletes rule id. LM_EARG when there is none. */
int runstore_alert_remove(RunStore *s, long id, char *err);

typedef struct {
    long id, alert_id, run_id;
    double t;
    char rule[RUNSTORE_ALERT_RULE_LEN];
    char message[512];
    char cmd_status[128];
} AlertEvent;

/* Records that rule alert_id fired for run (once: *fired = 0 when it already had). */
int runstore_alert_fire(RunStore *s, long alert_id, long run, const char *rule,
                        const char *message, int *fired, long *event_id, char *err);
/* Sets what the alert's command did ("exit 0", "not started: ..."). */
int runstore_alert_cmd_status(RunStore *s, long event_id, const char *status, char *err);

/* Fired alerts with id > after (run > 0: of that run only), oldest first, at most max.
 * *rows malloc'd (free). */
int runstore_alert_events(RunStore *s, long run, long after, int max, AlertEvent **rows,
                          int *n, char *err);

#endif
