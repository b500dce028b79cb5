/* cmd_train.h — the table's handlers of the session's run: `train` (group=NAME files it
 * into a seed group), `pause`, `resume` and `stop` (one handler, cmd_control: the verb is
 * the command's word) and `checkpoint` in cmd_train.c; `status` and `wait` in
 * cmd_train_status.c. */
#ifndef LM_CMD_TRAIN_H
#define LM_CMD_TRAIN_H

#include "session.h"

int cmd_train(Session *s, int argc, const LexWord *argv);
int cmd_control(Session *s, int argc, const LexWord *argv);
int cmd_checkpoint(Session *s, int argc, const LexWord *argv);
int cmd_status(Session *s, int argc, const LexWord *argv);
int cmd_wait(Session *s, int argc, const LexWord *argv);

#endif
