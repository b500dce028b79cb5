/* cmd_jobs.h — the table's handlers of cmd_jobs.c: the jobs board as a command: `jobs`. */
#ifndef LM_CMD_JOBS_H
#define LM_CMD_JOBS_H

#include "session.h"

int cmd_jobs(Session *s, int argc, const LexWord *argv);

#endif
