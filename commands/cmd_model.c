/* cmd_model.c — the model a session samples and evaluates: a copy of the running run's
 * weights (taken between steps) or a checkpoint/run opened from disk; and the commands
 * that act on it: open, import, save. Not here: training control (cmd_train.c). */
#include "session.h"

#include "checkpoint.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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
    s->view_run = 0;
}

/* A model of configuration c and vocabulary V, allocated for sampling and evaluation,
 * after the memory estimate train runs (model_check_memory); `what` names the source. */
static Model *make_view(Session *s, const Config *c, int V, const char *what)
{
    char err[LM_ERR_LEN];
    if (model_check_memory(c, V, c->batch, c->bptt, err) == LM_ENOMEM) {
        session_error(s, LM_ENOMEM, "%s: refused before allocating anything: %s", what, err);
        return NULL;
    }
    Model *m = model_create(c, V, err);
    if (!m || model_alloc(m, c->batch, c->bptt, err)) {
        session_error(s, LM_EARG, "cannot build the model: %s", err);
        model_destroy(m);
        return NULL;
    }
    m->training = 0;
    return m;
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
            snprintf(s->view_source, sizeof s->view_source, "run #%ld (live weights)", s->run_id);
        }
        trainer_copy_params(s->trainer, s->view->params.data);
        return LM_OK;
    }
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
    Tokenizer *tok = NULL;
    int rc = LM_OK;
    char note[300] = "";
    if (!info.has_config && names_infer_config(st, &c, note, sizeof note, err))
        rc = session_error(s, LM_EFORMAT, "%s: %s", path, err);
    if (!rc && info.tokenizer_json && tokenizer_load(info.tokenizer_json, &tok, err))
        rc = session_error(s, LM_EFORMAT, "%s: damaged tokenizer: %s", path, err);
    if (!rc && !tok) { /* plain PyTorch weights: the tokenizer of the configured data */
        Dataset ds;
        if (dataset_load_config(&ds, &c, NULL, err))
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
    s->view_run = run_id;
    snprintf(s->view_source, sizeof s->view_source, "%s", path);
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


int cmd_open(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2)
        return session_error(s, LM_EARG, "open: give a run id or a checkpoint path");
    const char *which = "best";
    for (int i = 2; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "which"))
            which = argv[i].value;
    long id = session_parse_run_id(argv[1].text);
    char found_path[1100];   /* a run's checkpoint: checkpoint_find bounds it */
    const char *path = argv[1].text;
    if (id > 0) {
        path = found_path;
        RunStore *st = session_store(s);
        RunRow row;
        char err[LM_ERR_LEN];
        if (!st)
            return LM_EDB;
        if (runstore_get(st, id, &row, err))
            return session_error(s, LM_EARG, "%s — `runs` lists the stored runs", err);
        int found = checkpoint_find(row.checkpoint_dir, which, found_path, sizeof found_path);
        runstore_row_free(&row);
        if (found)
            return session_error(s, LM_EIO, "run #%ld has no %s checkpoint in %s", id, which,
                                 row.checkpoint_dir);
        int own = checkpoint_verify_owner(path, runstore_store_id(st), id, err);
        if (own == 1)
            session_printf(s, "warning: %s", err);
        else if (own)
            return session_error(s, own, "%s", err);
    }
    int rc = session_open_checkpoint(s, path, id > 0 ? id : 0);
    if (rc)
        return rc;
    if (id > 0)
        s->attached = id;   /* the dashboard's training view replays it (cmd_attach.c) */
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:s s:I}", "ok", 1, "opened", path, "model",
                                       s->view->cfg.model, "params",
                                       (json_int_t)model_param_count(s->view)));
    else
        session_printf(s, "opened %s: %s, %ld parameters, vocabulary %d", path,
                       s->view->cfg.model, model_param_count(s->view), s->view->vocab);
    return LM_OK;
}

int cmd_import(Session *s, int argc, const LexWord *argv)
{
    if (argc != 2)
        return session_error(s, LM_EARG, "import: give the path of a safetensors or "
                             "torch.save (.pt) file");
    int rc = session_open_checkpoint(s, argv[1].text, 0);
    if (!rc)
        session_printf(s, "imported %s: %s, %ld parameters", argv[1].text, s->view->cfg.model,
                       model_param_count(s->view));
    return rc;
}

int cmd_save(Session *s, int argc, const LexWord *argv)
{
    int rc = session_prepare_view(s);
    if (rc)
        return rc;
    char def[CONFIG_STR_LEN + 64], err[LM_ERR_LEN];   /* runs_dir is a config string */
    const char *path = NULL;   /* the user's own text: never copied into a fixed buffer */
    NamesKind names = NAMES_LMLAB;
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "names")) {
            if (names_parse(argv[i].value, &names, err))
                return session_error(s, LM_EARG, "%s", err);
        } else if (!argv[i].key) {
            path = argv[i].text;
        }
    if (!path || !path[0]) {
        mkdir(s->view->cfg.runs_dir, 0777);
        snprintf(def, sizeof def, "%s/saved-%ld.safetensors", s->view->cfg.runs_dir,
                 (long)time(NULL));
        path = def;
    }
    char *json = tokenizer_save(s->view_tok);
    rc = checkpoint_save_names(path, s->view, json, names, err);
    free(json);
    if (rc)
        return session_error(s, rc, "%s", err);
    const char *nm = names == NAMES_REFERENCE ? "reference" : "lmlab";
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:s}", "ok", 1, "saved", path, "names", nm));
    else
        session_printf(s, "saved %s (%s names)", path, nm);
    return LM_OK;
}
