/* job.h — controlling a job, below the handlers: the one path by which `pause`, `resume`,
 * `stop`, `wait` and `sweep pause|resume|stop|wait|status` act on the session's own run,
 * the session's sweep, or another process's run (a request row in the store that the
 * run's owner answers). Handlers call these; nothing here calls a handler. */
#ifndef LM_JOB_H
#define LM_JOB_H

#include "session.h"

/* `pause`, `resume`, `stop` (verb) with id 0: whatever this session trains (its run, or
 * its sweep's current trial); with the id of a run this session does not train: a
 * request through the store to the run's owner (another process, or a trial of this
 * session's parallel sweep, whose worker process owns it), waiting about 2 s for the
 * answer. LM_ESTATE when nothing can take the verb (said), LM_EPENDING when the owner has
 * not answered yet (the request stays; the owner acts when it reads it). */
int job_control(Session *s, const char *verb, long id);

/* What `wait` acts on: the session's run (also one that has ended and is not reaped:
 * `wait` prints its end), or its sweep; an error naming `what` when nothing trains
 * (saying so when the run on screen is another process's). */
SessionJobKind job_need(Session *s, const char *what);

/* The session's sweep: `sweep pause|resume|stop` (what), `sweep wait` (one line per
 * change until it ends) and `sweep status`, as text or JSON lines. `sweep wait ID` and
 * `sweep status ID` (id_text; NULL: the session's) work on any stored sweep, live or
 * not, from any process: another process's or an ended sweep is read from the store. */
int job_sweep_control(Session *s, const char *what);
int job_sweep_wait(Session *s, const char *id_text);
int job_sweep_status(Session *s, const char *id_text);

#endif
