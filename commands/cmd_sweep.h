/* cmd_sweep.h — the session's sweep runner, for the parts of lmlab outside the `sweep`
 * command: the dashboard reads its progress and current trial, quitting stops it.
 * The runner itself is core/sweep_runner.h; the command is cmd_sweep (session.h). */
#ifndef LM_CMD_SWEEP_H
#define LM_CMD_SWEEP_H

#include "sweep_runner.h"

/* The sweep started or resumed in this process (running, or ended and not yet replaced),
 * or NULL. Owned by cmd_sweep.c; valid until cmd_sweep_shutdown or the next sweep. */
SweepRunner *cmd_sweep_runner(void);

/* Stops the sweep cleanly (its current trial writes a checkpoint and stays pending, so
 * `sweep resume ID` continues it later), joins and frees it. For quit. */
void cmd_sweep_shutdown(void);

#endif
