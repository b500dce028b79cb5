/* runstore_edits.h — editing a stored run after the fact (issue 49 item 10): removing a
 * tag, renaming, editing or deleting a note, each recorded with its time in the table
 * run_edits (schema step 11, RUNSTORE_EDITS_VERSION), which `run ID` lists. Adding a tag
 * or a note is runstore.h's / runstore_notes.h's; this file records the user's own `tag`
 * too (runstore_edit_log). Not here: the command words (commands/cmd_edits.c, cmd_log.c). */
#ifndef LM_RUNSTORE_EDITS_H
#define LM_RUNSTORE_EDITS_H

#include "runstore.h"

#define RUNSTORE_EDITS_VERSION 12

/* Creates run_edits and sets the schema version (the store's one migration calls it). */
int runstore_edits_migrate(RunStore *s, char *err);

typedef struct {
    long id, run_id, sweep_id;   /* exactly one of run_id, sweep_id is > 0 */
    double t;                    /* when (unix seconds) */
    char what[640];              /* "renamed 'a' to 'b'", "untagged 'x'", "note 7 edited
                                    (was: ...)", "note 7 deleted (was: ...)" */
} EditRow;

/* Records an edit of run `run` (or sweep `sweep`) at the current time. LM_OK or the
 * store's error. */
int runstore_edit_log(RunStore *s, long run, long sweep, const char *what, char *err);

/* Removes tag from run id and records it. LM_EARG: no such run, or the run has no such
 * tag (the message lists its tags). */
int runstore_untag(RunStore *s, long id, const char *tag, char *err);

/* Renames run id (1..63 bytes of UTF-8 without control characters) and records the old
 * and the new name. LM_EARG: a bad name or no such run. */
int runstore_rename(RunStore *s, long id, const char *name, char *err);

/* Replaces note note_id's text (it keeps its time; the edit is recorded with its own, and
 * the old text). The note must belong to run `run` or sweep `sweep` (the one > 0). LM_EARG:
 * no such note there, or text refused as runstore_note_add refuses it. */
int runstore_note_edit(RunStore *s, long run, long sweep, long note_id, const char *text,
                       char *err);

/* Deletes note note_id of run `run` or sweep `sweep`, recording its text. LM_EARG when it
 * has no such note. */
int runstore_note_delete(RunStore *s, long run, long sweep, long note_id, char *err);

/* The edits of run `run` (and of its sweep) or of sweep `sweep`, oldest first. *rows
 * malloc'd (free); may be NULL when *n = 0. */
int runstore_edits(RunStore *s, long run, long sweep, EditRow **rows, int *n, char *err);

#endif
