/* run_launch.c — trainer + run record + checkpoint folder + recorder, started in one
 * place (see run_launch.h). Not here: choosing what to resume, printing. */
#include "run_launch.h"
#include "runstore_changes.h"
#include "safetext.h"

#include "checkpoint.h"
#include "dataset_cache.h"

#include "dist.h"
#include "err.h"
#include "gemm_bf16.h"
#include "rundir.h"
#include "runstore_control.h"
#include "runstore_notes.h"
#include "runstore_row.h"
#include "sysinfo.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void run_launch_name(const Config *cfg, const char *data_name, char *buf, size_t cap)
{
    if (cfg->name[0])
        snprintf(buf, cap, "%s", cfg->name);
    else
        snprintf(buf, cap, "%s-%s", cfg->model, data_name ? data_name : "data");
}

void run_launch_dir(const char *runs_dir, const char *store_id, long id, char *buf,
                    size_t cap)
{
    rundir_name(buf, cap, runs_dir, store_id, id);
}

/* The run's stored record: everything needed to find, compare and reproduce it. */
static int record_run(RunHandle *h, const RunLaunchOptions *o, char *err)
{
    Trainer *t = h->trainer;
    const Dataset *ds = trainer_dataset(t);
    const Config *c = trainer_config(t);
    char *cfg = config_to_text(c), hash[32], thash[32], machine[320];
    if (!cfg)
        return err_set(err, LM_ENOMEM, "out of memory");
    snprintf(hash, sizeof hash, "%016llx", ds->hash);
    snprintf(thash, sizeof thash, "%016llx", tokenizer_hash(ds->tok));
    sysinfo_describe(machine, sizeof machine);
    dist_append_machine(machine, sizeof machine);   /* under mpirun: the ranks and hosts */
    if (!strcmp(c->precision, "bf16")) {   /* the kernels round differently (gemm_bf16.h):
                                            * a bf16 run's bits are its kernel's */
        size_t n = strlen(machine);
        snprintf(machine + n, sizeof machine - n, ", bf16 kernel %s",
                 gemm_bf16_kernel_name(gemm_bf16_select_kernel()));
    }
    RunInfo info = {.name = h->name, .config = cfg, .model = c->model, .data_name = ds->name,
                    .data_hash = hash, .tokenizer = c->tokenizer, .tokenizer_hash = thash,
                    .machine = machine, .git_rev = sysinfo_git_rev(), .tags = o->tags,
                    .params = trainer_param_count(t), .sweep_id = o->sweep_id};
    int rc = runstore_run_create(o->store, &info, &h->run_id, err);
    if (rc) {
        free(cfg);
        return LM_EDB;
    }
    run_launch_dir(c->runs_dir, runstore_store_id(o->store), h->run_id, h->run_dir,
                   sizeof h->run_dir);
    if ((rc = rundir_create(h->run_dir, err))) {
        free(cfg);
        return rc; /* another run's files are there, or it cannot be created */
    }
    rc = runstore_set_checkpoint_dir(o->store, h->run_id, h->run_dir, err) ? LM_EDB : LM_OK;
    /* signed at creation when the user's key could be used: say so when it could not */
    if (!rc && runstore_run_config_trusted(o->store, h->run_id, cfg, h->unsigned_why,
                                           sizeof h->unsigned_why) != LM_OK &&
        runstore_run_config_sign(o->store, h->run_id, cfg, h->unsigned_why) == LM_OK)
        h->unsigned_why[0] = 0;   /* signed now (a second try names why it cannot be) */
    free(cfg);
    if (rc)
        return rc;
    if (o->fork_from && o->parent_run > 0 &&
        runstore_set_parent(o->store, h->run_id, o->parent_run, o->parent_step,
                            RUNSTORE_PARENT_FORK, err))
        return LM_EDB;
    if (!o->fork_from && o->init_run > 0 &&   /* init_from: the weights' origin */
        runstore_set_parent(o->store, h->run_id, o->init_run, o->init_step,
                            RUNSTORE_PARENT_INIT, err))
        return LM_EDB;
    return LM_OK;
}

/* A fork continues its parent's data position: the data must be the parent's. */
static int check_fork_data(RunHandle *h, const RunLaunchOptions *o, char *err)
{
    char have[32];
    snprintf(have, sizeof have, "%016llx", trainer_dataset(h->trainer)->hash);
    if (o->fork_from && o->data_hash && o->data_hash[0] && strcmp(have, o->data_hash))
        return err_set(err, LM_EFORMAT, "run #%ld was trained on data with hash %s, but its "
                       "data now hashes to %s: the dataset changed, so step %ld's data "
                       "position means nothing; put the data back as it was to fork, or "
                       "start a new run from the weights on the data as it is now (`train "
                       "init_from=%ld` with its model settings: `run %ld` lists them)",
                       o->parent_run, o->data_hash, have, o->parent_step, o->parent_run,
                       o->parent_run);
    return LM_OK;
}

/* A stored run continues as itself: same data (by hash), claimed for this process. */
static int claim_run(RunHandle *h, const Config *cfg, const RunLaunchOptions *o, char *err)
{
    char have[32], why[LM_ERR_LEN];
    snprintf(have, sizeof have, "%016llx", trainer_dataset(h->trainer)->hash);
    if (o->data_hash && o->data_hash[0] && strcmp(have, o->data_hash))
        return err_set(err, LM_EFORMAT, "run #%ld was trained on data with hash %s, but %.200s "
                       "now hashes to %s: the dataset changed since the run started, and a "
                       "resume goes on from the run's place in it; put the data back as it "
                       "was to resume, or start a new run from the weights on the data as it "
                       "is now (`train init_from=%ld` with its model settings: `run %ld` lists "
                       "them)", o->resume_id, o->data_hash, cfg->data, have, o->resume_id,
                       o->resume_id);
    int rc = runstore_run_claim(o->store, o->resume_id, why);
    if (rc)
        return err_set(err, rc == LM_ESTATE ? LM_ESTATE : LM_EDB, "%s", why);
    h->run_id = o->resume_id;
    snprintf(h->run_dir, sizeof h->run_dir, "%s", o->resume_dir ? o->resume_dir : "");
    return LM_OK;
}

/* The step the resumed checkpoint holds (-1 when it cannot be read). */
static long resume_step(const char *path)
{
    CheckpointInfo info;
    SafeTensors *st = NULL;
    char err[LM_ERR_LEN];
    if (!path || !path[0] || checkpoint_open(path, &info, &st, err)) return -1;
    long step = info.has_state ? info.ts.step : -1;
    safetensors_close(st);
    checkpoint_info_free(&info);
    return step;
}

/* A resume whose settings differ from the stored ones (precision=bf16, shards=2, steps=):
 * the run's record takes the settings it now trains with, and a note says which changed
 * and from which step, so `run ID`, --json, compare and the report state what the run
 * trained with, when (issue 46 item 4). Store failures only lose the note. */
static void record_resume_changes(RunHandle *h, const RunLaunchOptions *o)
{
    RunRow row;
    char err[LM_ERR_LEN], note[2048];
    if (runstore_get(o->store, h->run_id, &row, err)) return;
    const Config *cur = trainer_config(h->trainer);
    Config was;   /* the stored settings, read as values (unescaped), as the run has them */
    config_defaults(&was);
    int readable = config_from_text(&was, row.config, err) == LM_OK, nk = 0, nc = 0;
    const ConfigKey *keys = config_keys(&nk);
    RunSettingChange *c = calloc((size_t)nk, sizeof *c);
    char *now = config_to_text(cur);
    size_t n = 0;
    for (int i = 0; c && readable && i < nk; i++) {
        RunSettingChange *x = &c[nc];
        char stored[8];
        snprintf(x->key, sizeof x->key, "%s", keys[i].key);
        config_get(cur, x->key, x->to, sizeof x->to);
        config_get(&was, x->key, x->from, sizeof x->from);
        if (!runstore_config_value(row.config, x->key, stored, sizeof stored))
            snprintf(x->from, sizeof x->from, "unset");   /* an older run's record lacks it */
        else if (!strcmp(x->from, x->to))
            continue;
        nc++;
        char ef[300], et[300];   /* the note is for reading: one line, controls escaped */
        n += (size_t)snprintf(note + n, n < sizeof note ? sizeof note - n : 0,
                              "%s%s=%s (was %s)", n ? ", " : "", x->key,
                              safetext_escape(et, sizeof et, x->to, 0),
                              safetext_escape(ef, sizeof ef, x->from, 0));
    }
    if (now && !readable)   /* unreadable stored settings: replaced, no change to name */
        runstore_run_set_config(o->store, h->run_id, now, 0, NULL, 0, NULL, err);
    if (nc && now) {   /* the settings, each change (from its step) and the note: one write */
        char text[2200];
        long step = resume_step(o->resume_from);
        if (step >= 0)
            snprintf(text, sizeof text, "resumed at step %ld with %.2000s", step, note);
        else
            snprintf(text, sizeof text, "resumed with %.2000s", note);
        runstore_run_set_config(o->store, h->run_id, now, step, c, step >= 0 ? nc : 0, text,
                                err);
    }
    free(c);
    free(now);
    runstore_row_free(&row);
}

/* A recorded run that never got going is marked failed, so it does not stay `running`. */
static void fail_recorded(RunHandle *h, const RunLaunchOptions *o, const char *why)
{
    char e2[LM_ERR_LEN];
    trainer_destroy(h->trainer); /* stops and joins */
    h->trainer = NULL;
    if (h->run_id)
        runstore_run_set_status(o->store, h->run_id, "failed", why, e2);
}

/* The tokenizer a start checkpoint fixes (resume, fork, init_from), or NULL. */
static Tokenizer *start_tokenizer(const char *path)
{
    CheckpointInfo info = {0};
    SafeTensors *st = NULL;
    Tokenizer *tok = NULL;
    char e[LM_ERR_LEN];
    if (!path || !path[0] || checkpoint_open(path, &info, &st, e))
        return NULL;
    if (info.tokenizer_json && tokenizer_load(info.tokenizer_json, &tok, e))
        tok = NULL;
    checkpoint_info_free(&info);
    safetensors_close(st);
    return tok;
}

/* A text corpus is read from its token cache beside the run store, prepared on first use
 * (o->prepare_fn says so and shows the progress): to->data_dir. Token files given as data=
 * are read as they are. LM_OK or the prepare's error (nothing is recorded then). */
static int resolve_data(const Config *cfg, const RunLaunchOptions *o, TrainerOptions *to,
                        char *err)
{
    char root[1024];
    int rc = tokcache_root(o->db_path, cfg->tokens_dir, root, sizeof root, err);
    if (rc)
        return rc;
    Tokenizer *given = start_tokenizer(to->resume[0] ? to->resume : cfg->init_from);
    rc = dataset_cache_dir(cfg, root, given, 1, o->prepare_fn, o->prepare_ud, to->data_dir,
                           sizeof to->data_dir, err);
    tokenizer_destroy(given);
    return rc;
}

int run_launch(const Config *cfg, const RunLaunchOptions *o, RunHandle *h, char *err)
{
    memset(h, 0, sizeof *h);
    if (!o->store || !o->db_path)
        return err_set(err, LM_EARG, "run_launch: no run store");
    if (config_check_placeholders(cfg, err))   /* before any data is prepared */
        return LM_EARG;
    TrainerOptions to = {0};
    if (o->resume_id > 0 && o->resume_from)
        snprintf(to.resume, sizeof to.resume, "%s", o->resume_from);
    if (o->resume_id > 0 && o->resume_dir)
        snprintf(to.run_dir, sizeof to.run_dir, "%s", o->resume_dir);
    if (o->resume_id <= 0 && o->fork_from) { /* restores state; the new run's folder later */
        snprintf(to.resume, sizeof to.resume, "%s", o->fork_from);
        to.fork_of = o->parent_run;
    }
    int prc = resolve_data(cfg, o, &to, err);
    if (prc)   /* as a trainer that cannot be built (its data), or the user's Ctrl-C */
        return prc == LM_ECANCEL ? prc : LM_EARG;
    if (!(h->trainer = trainer_create(cfg, &to, err)))
        return LM_EARG;
    run_launch_name(trainer_config(h->trainer), trainer_dataset(h->trainer)->name, h->name,
                    sizeof h->name);
    int rc = o->resume_id > 0 ? claim_run(h, cfg, o, err) : check_fork_data(h, o, err);
    if (!rc && o->resume_id > 0)
        record_resume_changes(h, o);
    if (!rc && o->resume_id <= 0)
        rc = record_run(h, o, err);
    if (rc) {
        if (o->resume_id > 0) { /* not ours: leave the stored run as it was */
            trainer_destroy(h->trainer);
            h->trainer = NULL;
        } else {
            fail_recorded(h, o, err);
        }
        return rc;
    }
    trainer_set_run(h->trainer, h->run_id, h->run_dir);
    trainer_set_store_id(h->trainer, runstore_store_id(o->store)); /* in every checkpoint */
    if (o->stop_at > 0)
        trainer_set_stop_at(h->trainer, o->stop_at);
    if (trainer_start(h->trainer, err)) {
        fail_recorded(h, o, err);
        return LM_ENOMEM;
    }
    /* the trainer's events queue up until the recorder drains them */
    h->rec = recorder_create(h->trainer, o->db_path, h->run_id, h->name, NULL, NULL, err);
    if (!h->rec) {
        fail_recorded(h, o, err);
        return LM_ENOMEM;
    }
    return LM_OK;
}

int run_launch_done(RunHandle *h)
{
    return !h->rec || recorder_done(h->rec);
}

void run_launch_close(RunHandle *h, int stop)
{
    if (!h->trainer)
        return;
    if (stop)
        trainer_stop(h->trainer);
    trainer_join(h->trainer);
    recorder_destroy(h->rec); /* waits until every event is recorded */
    trainer_destroy(h->trainer);
    h->rec = NULL;
    h->trainer = NULL;
}
