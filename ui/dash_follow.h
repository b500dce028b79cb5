/* dash_follow.h — the dashboard following a run through the run store: when the session
 * trains nothing itself, the run `attach`/`open` chose, or the newest live run another
 * process trains, is read into the loop's snapshot (snapshot_from_store) at most once a
 * second. Not which run that is (session_followed_run, commands/cmd_attach.c). */
#ifndef LM_UI_DASH_FOLLOW_H
#define LM_UI_DASH_FOLLOW_H

#include "recorder.h"
#include "session.h"

#define DASH_FOLLOW_SECONDS 1.0   /* the store is polled at most this often */
#define DASH_FOLLOW_DONE_SECONDS 10.0  /* an ended run is reread this often (a resume) */

typedef struct {
    double next;   /* monotonic seconds of the next poll */
    int active;    /* snap holds a run read from the store */
    long attached; /* the session's attached run at the last poll */
    int no_store;  /* the store could not be opened: not retried every second */
    char error[LM_ERR_LEN];  /* the last read's failure, "" when it worked */
} DashFollow;

/* own: the session put a run of its own into snap this wake-up (it always wins: the
 * follow stops). Otherwise, when due (now: monotonic seconds), reads the followed run
 * into snap; a followed run that stopped being live is read until its end is seen;
 * without any, snap keeps what it showed. Returns 1 when snap holds a run read from the
 * store (f->active). */
int dash_follow_poll(DashFollow *f, Session *s, int own, Snapshot *snap, double now);

#endif
