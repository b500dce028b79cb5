/* run_weights.h — the weights of a stored run that another process may be training (issue
 * 49 item 7): its newest checkpoint, and when it has none newer than a step, a control
 * request `checkpoint` that makes its owner write one now, waited for. What `sample
 * runs=ID`, `checkpoint ID` and a session following another process's run (the
 * dashboard's sample, gates and tokens) load. Not the loading of a model (commands/
 * session_view.c) nor the request's table (core/store/runstore_control.h). */
#ifndef LM_RUN_WEIGHTS_H
#define LM_RUN_WEIGHTS_H

#include "runstore.h"

#define RUN_WEIGHTS_WAIT_S 60.0   /* how long a command waits for a requested checkpoint */

/* The newest checkpoint of run `run` (its newest step file, else best.safetensors) into
 * path and *step. LM_OK; LM_EARG when it has none (err says so), or the store's error. */
int run_weights_newest(RunStore *st, long run, char *path, size_t cap, long *step,
                       char *err);

/* The run's owner is asked to write a checkpoint now (a control request), and this waits
 * up to wait_s seconds for a checkpoint newer than the newest there was: its path and
 * step. LM_OK; LM_ESTATE when the run has no live owner (ended: its newest checkpoint is
 * all there is) or the owner refused (its reply in err); LM_EPENDING when the owner did
 * not write one within wait_s; or the store's error. */
int run_weights_request(RunStore *st, long run, double wait_s, char *path, size_t cap,
                        long *step, char *err);

#endif
