/* cmd_runs.h — the table's handlers of cmd_runs.c: the stored runs: `runs`, `run`, `compare`, `tag`, `rm`, `export`. */
#ifndef LM_CMD_RUNS_H
#define LM_CMD_RUNS_H

#include "session.h"

int cmd_runs(Session *s, int argc, const LexWord *argv);
int cmd_run(Session *s, int argc, const LexWord *argv);
int cmd_compare(Session *s, int argc, const LexWord *argv);
int cmd_tag(Session *s, int argc, const LexWord *argv);
int cmd_untag(Session *s, int argc, const LexWord *argv);
int cmd_rename(Session *s, int argc, const LexWord *argv);
int cmd_rm(Session *s, int argc, const LexWord *argv);
int cmd_export(Session *s, int argc, const LexWord *argv);

#endif
