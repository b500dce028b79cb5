/* session_view.c — the model a session samples and evaluates (session.h): a copy of the
 * running run's weights (taken between steps) or a checkpoint loaded from disk. Below both
 * session.c (which keeps a finished run's final weights) and cmd_model.c (open, import,
 * save), so neither calls into the other. */
#include "session.h"

#include "checkpoint.h"
#include "dataset_cache.h"
#include "err.h"
#include "runrecord.h"
#include "run_weights.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOLLOW_VIEW_WAIT_S 15.0   /* a followed live run's first checkpoint, asked for */

static void drop_view(Session *s)
{
    model_destroy(s->view);
    tokenizer_destroy(s->view_tok);
    if (s->has_view_ds)
        dataset_free(&s->view_ds);
    s->view = NULL;
    s->view_tok = NULL;
    s->has_view_ds = 0;
    s->view_source[0] = 0;
    s->view_path[0] = 0;
    s->view_run = 0;
    s->view_step = -1;
    s->view_follow = 0;
}

/* A model of configuration c and vocabulary V, allocated for sampling and evaluation
 * (its weights, no gradients or optimizer state) after the memory check for that
 * (model_check_memory_weights); `what` names the source. */
static Model *make_view(Session *s, const Config *c, int V, const char *what)
{
    char err[LM_ERR_LEN];
    if (model_check_memory_weights(c, V, c->batch, c->bptt, err) == LM_ENOMEM) {
        session_error(s, LM_ENOMEM, "%s: refused before allocating anything: %s", what, err);
        return NULL;
    }
    Model *m = model_create_weights(c, V, err);
    if (!m || model_alloc(m, c->batch, c->bptt, err)) {
        session_error(s, LM_EARG, "cannot build the model: %s", err);
        model_destroy(m);
        return NULL;
    }
    m->training = 0;
    return m;
}

/* The run the screen follows (another process's, or the one `attach`/`open` chose) gives
 * the view its newest checkpoint, reloaded when it writes a newer one; a live run with none
 * yet is asked for one once (run_weights.h), waited for a few seconds (issue 49 item 7). */
static void follow_view(Session *s)
{
    long id = session_followed_run(s);
    RunStore *st = id > 0 ? session_store(s) : NULL;
    if (!st)
        return;
    char path[4096], err[LM_ERR_LEN];
    long step = -1;
    if (run_weights_newest(st, id, path, sizeof path, &step, err)) {
        if (s->view_asked == id)
            return;
        s->view_asked = id;
        if (run_weights_request(st, id, FOLLOW_VIEW_WAIT_S, path, sizeof path, &step, err))
            return;
    }
    if (s->view && s->view_run == id && s->view_step == step && !strcmp(s->view_path, path))
        return;   /* up to date */
    if (session_open_checkpoint(s, path, id))
        return;
    s->view_follow = 1;
    const char *slash = strrchr(path, '/');
    snprintf(s->view_source, sizeof s->view_source, "run #%ld %.900s (its newest checkpoint, "
             "step %ld)", id, slash ? slash + 1 : path, step);
}

int session_prepare_view(Session *s)
{
    if (s->trainer) {
        const Config *c = trainer_config(s->trainer);
        int V = trainer_vocab(s->trainer);
        if (!s->view || s->view_run != s->run_id || s->view->vocab != V) {
            drop_view(s);
            if (!(s->view = make_view(s, c, V, "the running run's model")))
                return LM_EARG;
            char err[LM_ERR_LEN];
            char *json = tokenizer_save(trainer_dataset(s->trainer)->tok);
            if (!json || tokenizer_load(json, &s->view_tok, err)) {
                free(json);
                drop_view(s);
                return session_error(s, LM_ENOMEM, "cannot copy the tokenizer");
            }
            free(json);
            s->view_run = s->run_id;
        }
        trainer_copy_params(s->trainer, s->view->params.data);
        Snapshot sn = {0};   /* the copy is taken between steps: at least the logged one */
        recorder_snapshot(s->rec, &sn);
        s->view_step = sn.last.step;
        snapshot_free(&sn);
        snprintf(s->view_source, sizeof s->view_source, "run #%ld live weights (step %ld)",
                 s->run_id, s->view_step);
        return LM_OK;
    }
    if (!s->view || s->view_follow)
        follow_view(s);
    if (!s->view)
        return session_error(s, LM_ESTATE, "no model: start a run with `train`, or `open` a "
                             "stored run or checkpoint");
    return LM_OK;
}

int session_open_checkpoint(Session *s, const char *path, long run_id)
{
    char err[LM_ERR_LEN];
    CheckpointInfo info;
    SafeTensors *st = NULL;
    if (checkpoint_open(path, &info, &st, err))
        return session_error(s, LM_EFORMAT, "%s", err);
    Config c = info.has_config ? info.cfg : s->cfg;
    long info_step = info.has_state ? info.ts.step : -1;
    Tokenizer *tok = NULL;
    int rc = LM_OK;
    char note[300] = "";
    if (!info.has_config && names_infer_config(st, &c, note, sizeof note, err))
        rc = session_error(s, LM_EFORMAT, "%s: %s", path, err);
    if (!rc && info.tokenizer_json && tokenizer_load(info.tokenizer_json, &tok, err))
        rc = session_error(s, LM_EFORMAT, "%s: damaged tokenizer: %s", path, err);
    if (!rc && !tok) { /* plain PyTorch weights: the tokenizer of the configured data */
        Dataset ds;
        if (dataset_load_prepared(&ds, &c, s->db_path, NULL, err))
            rc = session_error(s, LM_EIO, "%s has no tokenizer, and the configured data "
                               "cannot provide one: %s", path, err);
        else {
            char *json = tokenizer_save(ds.tok);
            if (!json || tokenizer_load(json, &tok, err))
                rc = session_error(s, LM_ENOMEM, "out of memory");
            free(json);
            dataset_free(&ds);
        }
    }
    Model *m = NULL;
    if (!rc) {
        int V = tokenizer_vocab_size(tok);
        if (info.vocab && info.vocab != V)
            rc = session_error(s, LM_EFORMAT, "%s: vocabulary of %d tokens, but the tokenizer "
                               "has %d", path, info.vocab, V);
        else if (checkpoint_check_fits(&c, V, st, "", err))   /* before allocating */
            rc = session_error(s, LM_EFORMAT, "%s: %s", path, err);
        else if (!(m = make_view(s, &c, V, path)))
            rc = LM_EARG;
        else if (checkpoint_read_weights(m, st, "", err))
            rc = session_error(s, LM_EFORMAT, "%s: %s", path, err);
    }
    safetensors_close(st);
    checkpoint_info_free(&info);
    if (rc) {
        model_destroy(m);
        tokenizer_destroy(tok);
        return rc;
    }
    drop_view(s);
    s->view = m;
    s->view_tok = tok;
    s->tok_settings_newer = 0;
    s->view_run = run_id;
    s->view_step = info_step;
    snprintf(s->view_source, sizeof s->view_source, "%s", path);
    snprintf(s->view_path, sizeof s->view_path, "%s", path);
    if (note[0] && !s->json)
        session_printf(s, "%s: no lmlab configuration inside; %s", path, note);
    char bad_tensor[96];   /* every way in (open, import) warns the same */
    long n_bad = checkpoint_count_nonfinite(s->view, bad_tensor, sizeof bad_tensor);
    if (n_bad)
        session_printf(s, "warning: %s holds %ld non-finite weights (NaN/Inf), first in %s: "
                       "the run that wrote it diverged; its samples and evaluations are "
                       "meaningless", path, n_bad, bad_tensor);
    return LM_OK;
}



/* Where `open RUN_ID [which=best|final] [step=N]` finds its file (runrecord.h): the
 * checkpoint in *pick and its description ("best.safetensors (step 700; val 2.1109 at step
 * 700, an estimate over 5 batches)") in what. LM_OK or reported. */
static int open_pick(Session *s, long id, const char *which, long step, char *path,
                     size_t cap, char *what, size_t wcap)
{
    RunStore *st = session_store(s);
    RunRow row;
    RunRecord f;
    char err[LM_ERR_LEN];
    if (!st)
        return LM_EDB;
    if (runstore_get(st, id, &row, err))
        return session_error(s, LM_EARG, "%s — `runs` lists the stored runs", err);
    int rc = runrecord_read(st, &row, &f, err);
    if (rc) {
        runstore_row_free(&row);
        return session_error(s, rc, "%s", err);
    }
    const RunCkpt *k = NULL;
    if ((rc = runrecord_pick(&f, which, step, &k, err)) == LM_OK) {
        const char *slash = strrchr(k->path, '/');
        char ev[200];
        runrecord_fmt_eval(ev, sizeof ev, &k->eval);
        if ((size_t)snprintf(path, cap, "%s", k->path) >= cap)
            rc = session_error(s, LM_EARG, "run #%ld: its checkpoint path is longer than %zu "
                               "bytes: move its run folder somewhere shorter", id, cap - 1);
        snprintf(what, wcap, "run #%ld %s (step %ld of %ld; val %s)", id,
                 slash ? slash + 1 : k->path, k->step, row.last_step,
                 isnan(k->eval.loss) ? "not evaluated at this step" : ev);
    } else {
        session_error(s, LM_EARG, "run #%ld: %s", id, err);
    }
    runrecord_free(&f);
    runstore_row_free(&row);
    return rc;
}

int session_open_run(Session *s, long id, const char *which, long step)
{
    char found[4096], what[4400] = "", err[LM_ERR_LEN];   /* open_pick bounds them */
    if (open_pick(s, id, which, step, found, sizeof found, what, sizeof what))
        return LM_EARG;
    int own = checkpoint_verify_owner(found, runstore_store_id(s->store), id, err);
    if (own == 1)
        session_printf(s, "warning: %s", err);
    else if (own)
        return session_error(s, own, "%s", err);
    int rc = session_open_checkpoint(s, found, id);
    if (rc)
        return rc;
    s->attached = id;   /* the dashboard's training view replays it (cmd_attach.c) */
    snprintf(s->view_source, sizeof s->view_source, "%s", what);
    return LM_OK;
}
