/* cmd_attach.c — the `attach` command: which stored run the session shows when it trains
 * none itself (session_followed_run, session.c, answers which one is followed). The store
 * is the channel: another process's run is read from it (snapshot_from_store), never from
 * that process. Not the dashboard's polling (ui/dash_follow.c) or `status` (cmd_train.c). */
#include "session.h"
#include "cmd_attach.h"

#include "output.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cmd_attach(Session *s, int argc, const LexWord *argv)
{
    if (argc > 2)
        return session_error(s, LM_EARG, "attach: give one run id (`attach 12`), or nothing "
                             "to follow the newest running run again");
    long id = 0;
    if (argc == 2 && (id = session_parse_run_id(argv[1].text)) <= 0)
        return session_error(s, LM_EARG, "attach: '%s' is not a run id; `runs` lists them",
                             argv[1].text);
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    RunRow row;
    char err[LM_ERR_LEN];
    if (id && runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "attach: %s — `runs` lists the stored runs", err);
    s->attached = id;
    s->live_checked = 0;   /* session_snapshot looks for the newest live run again now */
    char job[64];
    session_job_name(s, job, sizeof job);
    Output *o = output_create("attach");
    if (id) {
        output_int(o, "run", id);
        output_str(o, "status", row.status);
        output_str(o, "name", row.name);
        output_line(o, runstore_run_live(st, &row)
                           ? "attached run #{run} ({name}, {status}): followed from the store"
                           : "attached run #{run} ({name}, {status}): replayed from the store");
        runstore_row_free(&row);
    } else {
        long live = session_followed_run(s);
        output_int(o, "following", live);
        if (job[0]) {   /* the session's own job shows first: say so, not what is not */
            output_str(o, "training_here", job);
            output_line(o, live ? "{training_here} trains here and shows first; then the newest "
                                  "running run (now #{following})"
                                : "{training_here} trains here and shows first; then the newest "
                                  "running run (none at the moment)");
        } else {
            output_line(o, live ? "following the newest running run: #{following}"
                                : "following the newest running run (none at the moment)");
        }
    }
    return output_emit(s, o);
}
