/* cmd_fork.h — the table's handlers of cmd_fork.c: `fork`: a new run from a checkpoint of another, with changed settings. */
#ifndef LM_CMD_FORK_H
#define LM_CMD_FORK_H

#include "session.h"

int cmd_fork(Session *s, int argc, const LexWord *argv);

#endif
