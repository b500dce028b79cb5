/* runargs.c — the run-id arguments the history commands share: parsing and checking run
 * ids against the store with one wording, and the damaged-store guard of `runs`, `run`
 * and `export`. Not here: any handler or output of a command's own. */
#include "runargs.h"

#include "err.h"

/* Parses argv word w as a run id into *id; reports and returns LM_EARG otherwise. */
int runargs_parse_id(Session *s, const LexWord *w, long *id)
{
    *id = w && !w->key ? session_parse_run_id(w->text) : -1;
    if (*id > 0) return LM_OK;
    return session_error(s, LM_EARG, "run id expected, got '%s' — `runs` lists the ids",
                         w ? w->text : "");
}

/* runstore_get with the commands' wording for an unknown run. */
int runargs_get_run(Session *s, RunStore *st, long id, RunRow *row)
{
    char err[LM_ERR_LEN];
    int status = runstore_get(st, id, row, err);
    if (status == LM_EARG) return session_error(s, status, "no run %ld — `runs` lists them", id);
    if (status) return session_error(s, status, "%s", err);
    return LM_OK;
}

/* The store and one existing run id from argv[1]; the usage hint when it is missing. */
int runargs_store_and_id(Session *s, int argc, const LexWord *argv, const char *usage,
                         RunStore **st, long *id)
{
    if (argc < 2 || argv[1].key)
        return session_error(s, LM_EARG, "run id expected — usage: %s", usage);
    if (runargs_parse_id(s, &argv[1], id)) return LM_EARG;
    if (!(*st = session_store(s))) return LM_EDB;
    RunRow row;
    if (runargs_get_run(s, *st, *id, &row)) return LM_EARG;
    runstore_row_free(&row);
    return LM_OK;
}

/* Parses argv[1..] as existing run ids (no key=value words). */
int runargs_parse_ids(Session *s, RunStore *st, int argc, const LexWord *argv, long *ids,
                      int *n)
{
    *n = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i].key) continue;
        if (*n == RUNARGS_MAX_IDS)
            return session_error(s, LM_EARG, "too many runs (at most %d)", RUNARGS_MAX_IDS);
        if (runargs_parse_id(s, &argv[i], &ids[*n])) return LM_EARG;
        RunRow r;
        if (runargs_get_run(s, st, ids[*n], &r)) return LM_EARG;
        runstore_row_free(&r);
        (*n)++;
    }
    return LM_OK;
}

/* runs, run and export read whatever the store still gives, but never silently: a store
 * whose whole quick_check fails (damage in the per-step tables, which the open's check of
 * the run list does not read) is said first, and the command exits non-zero. */
int runargs_read_checked(Session *s, int (*read)(Session *, int, const LexWord *), int argc,
                         const LexWord *argv)
{
    RunStore *st = session_store(s);
    char err[LM_ERR_LEN];
    int damaged = st && runstore_check_whole(st, err) != LM_OK;
    if (damaged)
        session_error(s, LM_EFORMAT, "%s; what follows is what could still be read, and may "
                      "be incomplete", err);
    int rc = read(s, argc, argv);
    return damaged && !rc ? LM_EFORMAT : rc;
}
