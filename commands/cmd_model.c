/* cmd_model.c — the commands that act on the model a session samples and evaluates: open,
 * import, save. The model itself (a copy of the running run's weights, or a checkpoint
 * loaded from disk) is session_view.c's. Not here: training control (cmd_train.c). */
#include "session.h"
#include "runrecord.h"

#include "checkpoint.h"
#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

int cmd_open(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2)
        return session_error(s, LM_EARG, "open: give a run id or a checkpoint path");
    const char *which = "best";
    long step = 0;
    for (int i = 2; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "which")) {
            which = argv[i].value;
        } else if (argv[i].key && !strcmp(argv[i].key, "step")) {
            char *end;
            step = strtol(argv[i].value, &end, 10);
            if (*end || step <= 0)
                return session_error(s, LM_EARG, "step=%s: give the step of a kept checkpoint "
                                     "(`run ID` lists them)", argv[i].value);
        } else {
            return session_error(s, LM_EARG, "open: unexpected '%s' (open RUN_ID|PATH "
                                 "[which=best|final] [step=N])", argv[i].text);
        }
    long id = session_parse_run_id(argv[1].text);
    char found[4096], what[4400] = "";   /* a run's checkpoint: open_pick bounds it */
    const char *path = argv[1].text;      /* the user's own text: never copied */
    if (id > 0) {
        path = found;
        char err[LM_ERR_LEN];
        if (open_pick(s, id, which, step, found, sizeof found, what, sizeof what))
            return LM_EARG;
        int own = checkpoint_verify_owner(path, runstore_store_id(s->store), id, err);
        if (own == 1)
            session_printf(s, "warning: %s", err);
        else if (own)
            return session_error(s, own, "%s", err);
    }
    int rc = session_open_checkpoint(s, path, id > 0 ? id : 0);
    if (rc)
        return rc;
    if (id > 0) {
        s->attached = id;   /* the dashboard's training view replays it (cmd_attach.c) */
        snprintf(s->view_source, sizeof s->view_source, "%s", what);
    }
    if (s->json) {
        json_t *o = json_pack("{s:b s:s s:s s:I s:s}", "ok", 1, "opened", path, "model",
                              s->view->cfg.model, "params",
                              (json_int_t)model_param_count(s->view), "what", s->view_source);
        json_object_set_new(o, "step", s->view_step >= 0 ? json_integer(s->view_step)
                                                         : json_null());
        session_emit_json(s, o);
    } else {
        session_printf(s, "opened %s: %s, %ld parameters, vocabulary %d%s", s->view_source,
                       s->view->cfg.model, model_param_count(s->view), s->view->vocab,
                       id > 0 && step <= 0 && !strcmp(which, "best")
                           ? " (which=final or step=N opens another checkpoint)" : "");
    }
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
