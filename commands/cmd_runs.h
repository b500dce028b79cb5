/* cmd_runs.h — the table's handlers of cmd_runs.c: the stored runs read: `runs`, `run`. */
#ifndef LM_CMD_RUNS_H
#define LM_CMD_RUNS_H

#include "session.h"

int cmd_runs(Session *s, int argc, const LexWord *argv);
int cmd_run(Session *s, int argc, const LexWord *argv);

#endif
