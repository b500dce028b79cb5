/* run_trust.h — whether a stored run's settings may act as the user resuming it (issue 46
 * item 1's audit): a run store may be written by others, and a resumed run's settings
 * (data=, vocab=, runs_dir=) read and write files as whoever resumes. The proof a writer of
 * the store cannot forge is the checkpoint file itself: it must belong to the user
 * resuming, and the settings that name files must be the ones it was trained with (kept
 * in its metadata), unless the user gives them on the command line. Not the resume itself
 * (commands/cmd_train.c, core/sweep). */
#ifndef LM_RUN_TRUST_H
#define LM_RUN_TRUST_H

#include "config.h"
#include "runstore.h"

/* LM_OK when the settings cfg (read from the store) may be used to resume from checkpoint
 * ckpt ("" = none: nothing to check against, LM_OK); keys the user gave on the command
 * line are in given (a NULL-terminated list, or NULL) and not checked. LM_EARG with a
 * message saying what differs or whose the checkpoint is, and what to do. */
int run_trust_settings(const char *ckpt, const Config *cfg, const char *const *given,
                       char *err);

/* LM_OK when the settings of stored run `run` (its stored text, config) that name files
 * (data=, vocab=, tokens_dir=, init_from=, runs_dir=: the same list) may act as this user
 * when a new run starts from them (`fork`): the run's settings carry this user's code
 * (runstore_run_config_trusted), or each such setting is its default or given on the
 * command line (given, NULL-terminated). Else LM_EARG: "run N's stored data=X was not
 * written by you (why): give data= on the command line to TO_DO". Settings that name no
 * file are data and are never checked (forking a colleague's run is a real use). */
int run_trust_stored_paths(RunStore *st, long run, const char *config,
                           const char *const *given, const char *to_do, char *err);

#endif
