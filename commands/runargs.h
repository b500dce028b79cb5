/* runargs.h — the run-id arguments the history commands share (commands/runargs.c): a
 * run id or several parsed and checked against the store with the commands' wording, and
 * the damaged-store guard of the reading commands. Not here: any handler, any output of
 * a command's own (cmd_runs.c, cmd_compare.c, cmd_edits.c, cmd_export.c). */
#ifndef LM_RUNARGS_H
#define LM_RUNARGS_H

#include "session.h"

#define RUNARGS_MAX_IDS 256   /* run ids one command takes at the most */

/* Parses argv word w as a run id into *id; reports and returns LM_EARG otherwise. */
int runargs_parse_id(Session *s, const LexWord *w, long *id);

/* runstore_get with the commands' wording for an unknown run ("no run 9 — `runs` lists
 * them"); the caller frees *row (runstore_row_free) on LM_OK. */
int runargs_get_run(Session *s, RunStore *st, long id, RunRow *row);

/* The store and one existing run id from argv[1]; the usage hint when it is missing.
 * Reports and returns non-zero otherwise. */
int runargs_store_and_id(Session *s, int argc, const LexWord *argv, const char *usage,
                         RunStore **st, long *id);

/* Parses argv[1..] as existing run ids (key=value words skipped) into ids (room for
 * RUNARGS_MAX_IDS), their count in *n. Reports and returns LM_EARG on a bad one. */
int runargs_parse_ids(Session *s, RunStore *st, int argc, const LexWord *argv, long *ids,
                      int *n);

/* Runs read(s, argc, argv) after checking the whole store: damage is said first and
 * turns a successful read's status into LM_EFORMAT (what could be read is still shown). */
int runargs_read_checked(Session *s, int (*read)(Session *, int, const LexWord *), int argc,
                         const LexWord *argv);

#endif
