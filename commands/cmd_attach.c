/* cmd_attach.c — following runs through the store: which run the session shows when it
 * trains none itself (the one `attach` or `open` chose, else the newest live run of
 * another process), and the `attach` command. The store is the channel: another
 * process's run is read from it (snapshot_from_store), never from that process.
 * Not the dashboard's polling (ui/dash_follow.c) or `status` (cmd_train.c). */
#include "session.h"

#include "output.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The newest live run among those with this stored status, not this process's own. */
static long newest_live(RunStore *st, const char *filter, const char *host)
{
    RunRow *rows;
    int n;
    char err[LM_ERR_LEN];
    if (runstore_list(st, filter, "recent", 16, &rows, &n, err))
        return 0;
    long id = 0;
    for (int i = 0; i < n && !id; i++) {
        int own = rows[i].pid == (long)getpid() && !strcmp(rows[i].host, host);
        if (!own && runstore_run_live(st, &rows[i]))
            id = rows[i].id;
    }
    runstore_rows_free(rows, n);
    return id;
}

long session_followed_run(Session *s)
{
    if (s->attached > 0)
        return s->attached;
    RunStore *st = session_store(s);
    if (!st)
        return 0;
    char host[64] = "";
    if (gethostname(host, sizeof host - 1))
        snprintf(host, sizeof host, "localhost");
    long a = newest_live(st, "status=running", host), b = newest_live(st, "status=paused", host);
    return a > b ? a : b;
}

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
    session_job_reap(s);
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
