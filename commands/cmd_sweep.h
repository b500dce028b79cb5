/* cmd_sweep.h — the table's handlers of cmd_sweep.c: `sweep`, and cmd_train_seeds, the
 * handler the table routes `train seeds=N` to (N runs differing only in their seed, as a
 * sweep whose runs form one group). */
#ifndef LM_CMD_SWEEP_H
#define LM_CMD_SWEEP_H

#include "session.h"

int cmd_sweep(Session *s, int argc, const LexWord *argv);
int cmd_train_seeds(Session *s, int argc, const LexWord *argv);

#endif
