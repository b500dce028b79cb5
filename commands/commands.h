/* commands.h — the top of commands/: THE command table (commands.c) and the dispatcher
 * that runs a line through it. Below it: the handlers (cmd_*.h, one header per module,
 * never calling each other), what they share (job.h, output.h, runkeys.h, ...), the
 * session (session.h) and the table engine (cmdtable.h). */
#ifndef LM_COMMANDS_H
#define LM_COMMANDS_H

#include "cmdtable.h"
#include "session.h"

/* The command table: every command, its help, its handler and its rewrites. */
const Command *session_commands(int *n);

/* Runs one line (several commands separated by ';') through the table. Once per command,
 * before its handler (after it for CMD_STEP_AFTER: `wait`, `stop`), the session's reap
 * (session_job_reap) closes a run that has ended. LM_OK or the first failure's status;
 * errors are already reported through the writer. */
int session_run_line(Session *s, const char *line);

#endif
