/* repl.h — running commands: a string of commands (-c), a script file or standard input
 * (one command line per line), and the interactive line-mode prompt (own line editor with
 * history and completion). Signals: Ctrl-C interrupts the command in progress (wait,
 * sample, eval) or clears the line; SIGTERM/SIGHUP end the session cleanly (a running run
 * is stopped and recorded). Not here: the dashboard (ui/), which drives the same session. */
#ifndef LM_REPL_H
#define LM_REPL_H

#include "session.h"

#include <stdio.h>

/* Installs the SIGINT/SIGTERM/SIGHUP handlers that set s->interrupt / request the end. */
void repl_install_signals(Session *s);
/* 1 once SIGTERM or SIGHUP arrived. */
int repl_terminating(void);

/* Runs each command (lines, and commands separated by ';'); stops at the first failing
 * command unless keep_going. repl_run_file's errors start with "name:LINE: " (in JSON
 * mode the error object gets "file" and "line") when name is not NULL. Returns 0 when
 * every command succeeded, else the first failure's status. */
int repl_run_lines(Session *s, const char *text, int keep_going);
int repl_run_file(Session *s, FILE *f, const char *name, int keep_going);

/* The interactive prompt until `quit`, end of input or a termination signal. A failed
 * command is reported and the prompt goes on, so it is not the result: LM_OK, or the
 * editor's status (LM_EIO, LM_ENOMEM, reported) when the terminal could not be read. */
int repl_interactive(Session *s);

/* Where the history file lives: next to the database (<db dir>/.lmlab_history). */
void repl_history_path(const Session *s, char *out, size_t cap);

#endif
