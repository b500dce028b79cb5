/* cmd_jobs.h — the table's handlers of cmd_jobs.c: the jobs board as a command: `jobs`, and `watch`, which
 * judges the alert rules no run owner can judge (alerts.h: alerts_watch_judge). */
#ifndef LM_CMD_JOBS_H
#define LM_CMD_JOBS_H

#include "session.h"

int cmd_jobs(Session *s, int argc, const LexWord *argv);
int cmd_watch(Session *s, int argc, const LexWord *argv);

#endif
