/* cmd_fork.c — `fork ID step=N key=value ...`: a new run that continues run ID from its
 * checkpoint at step N (weights, optimizer moments, data position, RNG; restored as
 * `train resume=` restores them) with the parent's settings and the changes on top,
 * recorded with its parent and step. Refusals say what to do: no checkpoint at N (the
 * steps that have one), a setting the data position depends on, too few steps, a
 * stored setting naming a file that another user wrote (run_trust.h: give it here).
 * Not the launch (run_launch) nor the checkpoint lookup (core/run/run_fork.c). */
#include "session.h"
#include "cmd_fork.h"

#include "checkpoint.h"
#include "output.h"
#include "run_fork.h"
#include "run_launch.h"
#include "run_trust.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

/* The parent's settings with argv's key=value changes (step= taken apart into *step). */
static int fork_config(Session *s, const RunRow *p, int argc, const LexWord *argv, Config *c,
                       long *step)
{
    char err[LM_ERR_LEN];
    config_defaults(c);
    if (config_from_text(c, p->config, err))
        return session_error(s, LM_EFORMAT, "fork: run #%ld's stored settings are unreadable: "
                             "%s", p->id, err);
    *step = -1;
    for (int i = 2; i < argc; i++) {
        const LexWord *w = &argv[i];
        if (!w->key)
            return session_error(s, LM_EARG, "fork: '%s' is not key=value (fork ID step=N "
                                 "key=value ...)", w->text);
        if (!strcmp(w->key, "step")) {
            char *end;
            errno = 0;
            *step = strtol(w->value, &end, 10);
            if (!*w->value || *end || *step < 0 || errno == ERANGE)
                return session_error(s, LM_EARG, "fork: step=%.40s%s is not a step number "
                                     "(0 to %ld)", w->value, strlen(w->value) > 40 ? "..." : "",
                                     LONG_MAX);
            continue;
        }
        if (run_fork_fixed_key(w->key))
            return session_error(s, LM_EARG, "fork: %s cannot change in a fork (the "
                                 "checkpoint's data position depends on it); start a new run "
                                 "from its weights with `train init_from=%ld %s=%s`", w->key,
                                 p->id, w->key, w->value);
        if (config_set(c, w->key, w->value, err))
            return session_error(s, LM_EARG, "fork: %s", err);
    }
    if (*step < 0)
        return session_error(s, LM_EARG, "fork: give the step to fork at (`fork %ld step=N "
                             "key=value ...`; `run %ld` lists its checkpoints)", p->id, p->id);
    if (c->steps > 0 && c->steps <= *step)
        return session_error(s, LM_EARG, "fork: steps=%ld ends before the fork step %ld; give "
                             "steps= above it", c->steps, *step);
    return LM_OK;
}

/* The parent's checkpoint at step, checked to be the parent's own. */
static int fork_checkpoint(Session *s, RunStore *st, const RunRow *p, long step, char *path,
                           size_t cap)
{
    char have[512], err[LM_ERR_LEN];
    if (run_fork_find(p->checkpoint_dir, step, path, cap, have, sizeof have))
        return session_error(s, LM_EARG, "fork: run #%ld has no checkpoint at step %ld; "
                             "steps with one: %s%s", p->id, step, have,
                             strncmp(have, "none: ", 6) ? " (checkpoint_every and "
                             "keep_checkpoints decide which are kept)" : "");
    int own = checkpoint_verify_owner(path, runstore_store_id(st), p->id, err);
    if (own == 1)
        session_printf(s, "warning: %s", err);
    else if (own)
        return session_error(s, own, "fork: %s", err);
    return LM_OK;
}

int cmd_fork(Session *s, int argc, const LexWord *argv)
{
    long id = argc > 1 && !argv[1].key ? session_parse_run_id(argv[1].text) : -1;
    if (id <= 0)
        return session_error(s, LM_EARG, "fork: give a run id first (`fork 7 step=200 "
                             "lr=1e-4`)");
    if (session_job_kind(s) != SESSION_JOB_NONE)
        return session_error(s, LM_ESTATE, "fork: this session is training; `stop` it (or "
                             "`wait`) before starting a fork");
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    RunRow p;
    char err[LM_ERR_LEN], path[1200];
    if (runstore_get(st, id, &p, err)) return session_error(s, LM_EARG, "fork: %s", err);
    Config c;
    long step = 0;
    int rc = fork_config(s, &p, argc, argv, &c, &step), named = 0;
    for (int i = 2; i < argc; i++)
        named |= argv[i].key && !strcmp(argv[i].key, "name");
    if (!rc && !named) {   /* its own name, not its parent's: "PARENT-fork@STEP" */
        char tail[32];
        snprintf(tail, sizeof tail, "-fork@%ld", step);
        int room = (int)sizeof c.name - 1 - (int)strlen(tail);
        snprintf(c.name, sizeof c.name, "%.*s%s", room > 0 ? room : 0, p.name, tail);
    }
    if (!rc) {   /* stored settings naming files act as this user only when they wrote them */
        const char *given[64];
        int ng = 0;
        for (int i = 2; i < argc && ng < 63; i++)
            if (argv[i].key) given[ng++] = argv[i].key;
        given[ng] = NULL;
        if (run_trust_stored_paths(st, id, p.config, given, "fork it", err))
            rc = session_error(s, LM_EARG, "fork: %s", err);
    }
    if (!rc) rc = fork_checkpoint(s, st, &p, step, path, sizeof path);
    RunLaunchOptions lo = {.db_path = s->db_path, .store = st, .fork_from = path,
                           .data_hash = p.data_hash, .parent_run = id, .parent_step = step};
    RunHandle h;
    if (!rc && (rc = run_launch(&c, &lo, &h, err)))
        session_error(s, rc, "fork: %s", err);
    runstore_row_free(&p);
    if (rc) return rc;
    session_job_set_run(s, &h);
    Output *o = output_create(NULL);
    output_bool(o, "ok", 1);
    output_int(o, "run", h.run_id);
    output_str(o, "action", "forked");
    output_int(o, "parent", id);
    output_int(o, "parent_step", step);
    output_int(o, "steps", trainer_total_steps(h.trainer));
    output_str(o, "dir", h.run_dir);
    output_line(o, "run #{run} forked from run #{parent} at step {parent_step}: continues to "
                "step {steps}; checkpoints in {dir}");
    return output_emit(s, o);
}
