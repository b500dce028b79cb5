/* dash_follow.c — the dashboard's store polling (see dash_follow.h). */
#include "dash_follow.h"

#include "err.h"
#include "runstore.h"

#include <string.h>

int dash_follow_poll(DashFollow *f, Session *s, int own, Snapshot *snap, double now)
{
    if (own) {
        f->active = 0;
        return 0;
    }
    if (s->attached != f->attached) {   /* `attach`/`open` chose another: read it now */
        f->attached = s->attached;
        f->next = 0;
    }
    if (now < f->next)
        return f->active;
    f->next = now + DASH_FOLLOW_SECONDS;
    if (!s->store && f->no_store)
        return f->active;   /* it could not be opened (said once); a command may open it */
    long id = session_followed_run(s);
    f->no_store = !s->store;
    if (!id && f->active && snap->run_id && !trainer_is_done(snap->status))
        id = snap->run_id;   /* it stopped being live: read its end */
    if (!id)
        return f->active;    /* nothing to follow: keep what is on screen */
    if (f->active && id == snap->run_id && trainer_is_done(snap->status))
        f->next = now + DASH_FOLLOW_DONE_SECONDS;
    RunStore *st = session_store(s);
    if (!st)
        return f->active;
    if (snapshot_from_store(st, id, snap, f->error)) {
        RunRow r;
        char e2[LM_ERR_LEN];
        int rc = runstore_get(st, id, &r, e2);
        if (rc == LM_OK)
            runstore_row_free(&r);
        if (rc != LM_EARG)   /* a busy store: read again at the next poll */
            return f->active;
        /* deleted (`rm` in another process): the screen leaves it, and says so */
        if (s->attached == id)
            s->attached = 0;
        f->attached = s->attached;
        snapshot_free(snap);
        memset(snap, 0, sizeof *snap);
        session_printf(s, "run #%ld was deleted from the run store: the screen leaves it", id);
        f->active = 0;
        return 0;
    }
    f->error[0] = 0;
    f->active = 1;
    return 1;
}
