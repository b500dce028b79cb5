/* cmd_train.c — starting and steering a run: train (new or resumed, group=NAME files it
 * into a seed group; `train seeds=N` is the table's rewrite to the sweep path,
 * cmd_train_seeds in cmd_sweep.c), pause, resume and stop (one handler, cmd_control; the
 * control itself is job.c's), checkpoint. A run is a Trainer (training thread) plus a
 * Recorder (its events to the run store and the snapshot); the prompt returns at once.
 * Watching it (status, wait) is cmd_train_status.c. */
#include "session.h"
#include "cmd_train.h"
#include "job.h"

#include "err.h"
#include "output.h"
#include "runstore_group.h"
#include "run_launch.h"
#include "runrecord.h"
#include "sysinfo.h"
#include "run_trust.h"
#include "run_weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAIN_MAX_WORDS 64


/* resume=ID: the run's config, its newest checkpoint (its step in *at), and a data
 * identity check. */
static int prepare_resume(Session *s, long id, int force, Config *c, TrainerOptions *o,
                          long *at, char *hash, size_t cap)
{
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    RunRow row;
    char err[LM_ERR_LEN];
    if (runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "%s", err);
    int rc = LM_OK;
    double age = 0;
    int stale = runstore_run_stale(st, &row, RUNSTORE_STALE_SECONDS, &age);
    if (stale && !force)
        rc = session_error(s, LM_ESTATE, "run #%ld is marked %s by process %ld on host %s, "
                           "but has sent no heartbeat for %.0f s (stale after %d s): if that "
                           "process is gone, take the run over with `train resume=%ld "
                           "force=true`", id, row.status, row.pid, row.host, age,
                           RUNSTORE_STALE_SECONDS, id);
    else if (!stale && (!strcmp(row.status, "running") || !strcmp(row.status, "paused")))
        rc = session_error(s, LM_ESTATE, "run #%ld is %s in process %ld on host %s; stop it "
                           "there first", id, row.status, row.pid, row.host);
    else if (!strcmp(row.status, "finished"))
        rc = session_error(s, LM_ESTATE, "run #%ld has finished; to train further, start a "
                           "new run with init_from=%ld", id, id);
    config_defaults(c);
    if (!rc && config_from_text(c, row.config, err))
        rc = session_error(s, LM_EFORMAT, "run #%ld: stored configuration unreadable: %s", id,
                           err);
    if (!rc && runrecord_checkpoint_path(st, &row, "final", o->resume, sizeof o->resume, at,
                                         err))
        rc = session_error(s, LM_EIO, "run #%ld has no checkpoint in %s to resume from (%s)",
                           id, row.checkpoint_dir, err);
    int own = rc ? LM_OK : checkpoint_verify_owner(o->resume, runstore_store_id(st), id, err);
    if (own == 1)
        session_printf(s, "warning: %s", err);
    else if (own)
        rc = session_error(s, own, "resume=%ld: %s", id, err);
    snprintf(hash, cap, "%s", row.data_hash);
    snprintf(o->run_dir, sizeof o->run_dir, "%s", row.checkpoint_dir);
    runstore_row_free(&row);
    return rc;
}

/* init_from=RUN_ID becomes that run's best checkpoint path (*init_run, *init_step: the
 * run and the checkpoint's step, recorded as the new run's lineage). */
static int resolve_init_from(Session *s, Config *c, long *init_run, long *init_step)
{
    long id = session_parse_run_id(c->init_from);
    if (!c->init_from[0] || id < 0)
        return LM_OK;
    RunStore *st = session_store(s);
    RunRow row;
    char err[LM_ERR_LEN], path[1100];
    if (!st || runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "init_from=%s: %s", c->init_from, st ? err : "no store");
    int rc = runrecord_checkpoint_path(st, &row, "best", path, sizeof path, init_step, err);
    if (rc == LM_EARG)   /* no best: the newest, as before */
        rc = runrecord_checkpoint_path(st, &row, "final", path, sizeof path, init_step, err);
    runstore_row_free(&row);
    if (rc)
        return session_error(s, LM_EIO, "init_from=%ld: the run has no checkpoint (%s)", id,
                             err);
    if ((rc = checkpoint_verify_owner(path, runstore_store_id(st), id, err)) == 1)
        session_printf(s, "warning: %s", err);
    else if (rc)
        return session_error(s, rc, "init_from=%ld: %s", id, err);
    if (strlen(path) >= sizeof c->init_from)
        return session_error(s, LM_EARG, "init_from=%ld: its checkpoint path %s is longer than "
                             "%zu bytes; give a shorter path to the checkpoint", id, path,
                             sizeof c->init_from - 1);
    memcpy(c->init_from, path, strlen(path) + 1);
    *init_run = id;
    return LM_OK;
}

/* A text corpus being prepared into the token cache on first use: what was found (fresh,
 * stale, incomplete) and the end said always, the progress every 2 s. */
typedef struct {
    Session *s;
    double last;
} PreparePrinter;

static int print_prepare(const TokCacheProgress *p, void *ud)
{
    PreparePrinter *pp = ud;
    Session *s = pp->s;
    if (p->message) {
        Output *o = output_create("prepare");
        output_str(o, "text", p->message);
        output_line(o, "data: {text}");
        output_emit(s, o);
        return s->interrupt != 0;
    }
    double now = sysinfo_now();
    if (now - pp->last < 2)
        return s->interrupt != 0;
    pp->last = now;
    Output *o = output_create("prepare_progress");
    output_str(o, "phase", tokcache_phase_name(p->phase));
    if (p->phase == TOKCACHE_LIST) {   /* a directory of many files: what is found so far */
        output_int(o, "entries", (long)p->tokens);
        output_line(o, "data: listing the corpus's files: {entries} looked at so far "
                    "(Ctrl-C stops)");
        output_emit(s, o);
        return s->interrupt != 0;
    }
    output_real(o, "mb_done", p->bytes_done / 1e6);
    output_real(o, "mb_total", p->bytes_total / 1e6);
    output_real(o, "mtokens", p->tokens / 1e6);
    output_real(o, "mb_per_s", p->mb_per_s);
    output_real(o, "eta_s", p->eta_seconds);
    output_line(o, p->eta_seconds >= 0 ? "data: preparing ({phase}) {mb_done:%.0f} of "
                "{mb_total:%.0f} MB, {mtokens:%.2f}M tokens, {mb_per_s:%.1f} MB/s, ETA "
                "{eta_s:%.0f} s" : "data: preparing ({phase}) {mb_done:%.0f} of {mb_total:%.0f} "
                "MB, {mtokens:%.2f}M tokens");
    output_emit(s, o);
    return s->interrupt != 0;
}

/* The run's configuration: the session's (or a resumed run's stored one) with the
 * command's key=value words applied. */
static int train_config(Session *s, int argc, const LexWord *argv, Config *c, long init[2],
                        TrainerOptions *o, long *resume, char *hash, size_t cap)
{
    char err[LM_ERR_LEN];
    long at = 0;     /* the resumed checkpoint's step */
    int force = 0;   /* force=true: take over a run whose other-host heartbeat is stale */
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "force"))
            force = !strcmp(argv[i].value, "true");
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "resume")) {
            *resume = session_parse_run_id(argv[i].value);
            if (*resume < 0)
                return session_error(s, LM_EARG, "resume=%s: expected a run id", argv[i].value);
            if (prepare_resume(s, *resume, force, c, o, &at, hash, cap))
                return LM_EARG;
        }
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && (!strcmp(argv[i].key, "resume") || !strcmp(argv[i].key, "force")))
            continue;
        if (config_set(c, argv[i].key ? argv[i].key : argv[i].text, argv[i].value, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (*resume > 0) {   /* stored settings that name files act as this user: checked */
        const char *given[64];
        int n = 0;
        for (int i = 1; i < argc && n < 63; i++)
            if (argv[i].key) given[n++] = argv[i].key;
        given[n] = NULL;
        if (run_trust_settings(o->resume, c, given, err))
            return session_error(s, LM_EARG, "resume=%ld: %s", *resume, err);
        for (int i = 1; i < argc; i++)   /* steps= is the total to reach, not steps to add */
            if (argv[i].key && !strcmp(argv[i].key, "steps") && c->steps > 0 && c->steps < at)
                return session_error(s, LM_EARG, "resume=%ld steps=%ld: the run is at step %ld "
                                     "(its checkpoint) and steps= is the total to reach, not "
                                     "steps to add: give steps=%ld or more (steps=%ld ends it "
                                     "there with its final evaluation)", *resume, c->steps, at,
                                     at + 1, at);
    }
    if (!session_store(s) || resolve_init_from(s, c, &init[0], &init[1]))
        return LM_EARG;
    return LM_OK;
}

/* The run just started, filed into seed group `group`. */
static int file_into_group(Session *s, const char *group)
{
    char err[LM_ERR_LEN];
    RunStore *st = session_store(s);
    if (!st || runstore_group_set(st, &s->run_id, 1, group, err))
        return session_error(s, LM_EDB, "run #%ld started but not filed into group %s: %s",
                             s->run_id, group, st ? err : "no store");
    if (!s->json) session_printf(s, "run #%ld is in group %s", s->run_id, group);
    return LM_OK;
}

int cmd_train(Session *s, int argc, const LexWord *argv)
{
    char err[LM_ERR_LEN];
    const char *group = NULL;   /* group=NAME: the run is filed into seed group NAME */
    LexWord words[TRAIN_MAX_WORDS];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        int grouping = i && argv[i].key && !strcmp(argv[i].key, "group");
        if (grouping)
            group = argv[i].value;
        /* seeds=1 (the table routes larger ones to the sweep path): one run, as without */
        else if (!(i && argv[i].key && (!strcmp(argv[i].key, "seeds") ||
                                        !strcmp(argv[i].key, "repeat"))) && n < TRAIN_MAX_WORDS)
            words[n++] = argv[i];
    }
    if (n == TRAIN_MAX_WORDS)
        return session_error(s, LM_EARG, "too many words (at most %d)", TRAIN_MAX_WORDS - 1);
    if (group && !runstore_group_name_ok(group))
        return session_error(s, LM_EARG, "group=%s: a name of 1 to %d characters without "
                             "spaces or commas", group, RUNSTORE_GROUP_LEN - 1);
    argc = n;
    argv = words;
    if (session_check_idle(s, "a run"))
        return LM_ESTATE;
    Config c = s->cfg;
    TrainerOptions o = {0};
    long resume = 0;
    char want_hash[80] = "";
    long init[2] = {0, 0};
    if (train_config(s, argc, argv, &c, init, &o, &resume, want_hash, sizeof want_hash))
        return LM_EARG;
    PreparePrinter pp = {s, 0};
    RunLaunchOptions lo = {.db_path = s->db_path, .store = session_store(s),
                           .resume_id = resume, .resume_from = o.resume,
                           .resume_dir = o.run_dir, .data_hash = want_hash,
                           .init_run = init[0], .init_step = init[1],
                           .prepare_fn = print_prepare, .prepare_ud = &pp};
    RunHandle h;
    int rc = run_launch(&c, &lo, &h, err);
    if (rc)
        return session_error(s, rc, "%s%s", rc == LM_EDB && !resume ? "cannot record the run: "
                             : "", err);
    session_job_set_run(s, &h);
    session_set_prior(s, resume ? h.run_id : 0);   /* a resumed run keeps its history shown */
    Output *out = output_create(NULL);
    output_bool(out, "ok", 1);
    output_int(out, "run", h.run_id);
    output_str(out, "action", resume ? "resumed" : "started");
    output_str(out, "model", c.model);
    output_str(out, "data", trainer_dataset(h.trainer)->name);
    output_int(out, "params", trainer_param_count(h.trainer));
    output_int(out, "steps", trainer_total_steps(h.trainer));
    output_str(out, "precision", trainer_config(h.trainer)->precision);   /* what runs */
    output_str(out, "dir", h.run_dir);
    const Config *tc = trainer_config(h.trainer);   /* what trains, overrides applied: the
                                                       `using` line said the preset's */
    output_int(out, "d", tc->d);
    output_int(out, "layers", tc->layers);
    output_int(out, "bptt", tc->bptt);
    output_line(out, "run #{run} {action}: {model} d={d} layers={layers} bptt={bptt} on "
                "{data}, {params} parameters, {steps} steps in {precision}; checkpoints in "
                "{dir}");
    output_emit(s, out);
    if (h.unsigned_why[0] && !resume)
        session_printf(s, "note: run #%ld is not signed under your key (%s): `fork %ld` will "
                       "need its file settings given and `rm %ld checkpoints=true` will keep "
                       "its files, as for another user's run", h.run_id, h.unsigned_why,
                       h.run_id, h.run_id);
    return group ? file_into_group(s, group) : LM_OK;
}

/* `pause ID`, `resume ID`, `stop ID`: the id named (LM_OK with *id 0 when none is
 * given); a run this session does not train is controlled through the store. */
static int control_target(Session *s, int argc, const LexWord *argv, const char *what,
                          long *id)
{
    *id = 0;
    if (argc > 2 || (argc == 2 && (argv[1].key || (*id = session_parse_run_id(argv[1].text)) <= 0)))
        return session_error(s, LM_EARG, "%s: give one run id (`%s 12`; `jobs` lists the "
                             "running runs), or nothing for this session's run", what, what);
    return LM_OK;
}

int cmd_control(Session *s, int argc, const LexWord *argv)
{
    const char *verb = argv[0].text;   /* pause, resume or stop: the table's words */
    long id;
    if (control_target(s, argc, argv, verb, &id))
        return LM_EARG;
    return job_control(s, verb, id);
}

/* `checkpoint [RUN_ID]`: the run's owner (any process, through the store) writes a
 * checkpoint of its current weights now; this waits for the file and names it, so a live
 * run can be sampled, opened or evaluated from any shell (issue 49 item 7). */
int cmd_checkpoint(Session *s, int argc, const LexWord *argv)
{
    long id;
    if (control_target(s, argc, argv, "checkpoint", &id))
        return LM_EARG;
    if (!id && !(id = s->rec ? s->run_id : 0))
        return session_error(s, LM_EARG, "checkpoint: give the run id of a training run "
                             "(`jobs` lists them)");
    RunStore *st = session_store(s);
    if (!st)
        return LM_EDB;
    char path[1024], err[LM_ERR_LEN];
    long step = 0;
    int rc = run_weights_request(st, id, RUN_WEIGHTS_WAIT_S, path, sizeof path, &step, err);
    if (rc)
        return session_error(s, rc, "%s", err);
    Output *o = output_create("checkpoint");
    output_int(o, "run", id);
    output_int(o, "step", step);
    output_str(o, "path", path);
    output_line(o, "run #{run} wrote a checkpoint at step {step}: {path} (`sample runs={run} "
                "which=final` or `open {run} which=final` reads it)");
    return output_emit(s, o);
}
