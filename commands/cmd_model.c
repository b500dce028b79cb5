/* cmd_model.c — the commands that act on the model a session samples and evaluates: open,
 * import, save. The model itself (a copy of the running run's weights, or a checkpoint
 * loaded from disk) is session_view.c's. Not here: training control (cmd_train.c). */
#include "session.h"
#include "output.h"
#include "cmd_model.h"
#include "runrecord.h"

#include "checkpoint.h"
#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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
    const char *path = argv[1].text;      /* the user's own text: never copied */
    struct stat st;
    size_t digits = strspn(path + (*path == '-' || *path == '#'), "0123456789");
    if (id <= 0 && digits && !path[digits + (*path == '-' || *path == '#')] &&
        stat(path, &st))   /* open 0: a number, no such file: "cannot open" said nothing */
        return session_error(s, LM_EARG, "run id expected, got '%s' — `runs` lists the ids "
                             "(and no file '%s' exists)", path, path);
    int rc = id > 0 ? session_open_run(s, id, which, step)
                    : session_open_checkpoint(s, path, 0);
    if (rc)
        return rc;
    if (id > 0)
        path = s->view_path;
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
    if (rc)
        return rc;
    Output *o = output_create("import");   /* one record: text or --json */
    output_str(o, "path", argv[1].text);
    output_str(o, "model", s->view->cfg.model);
    output_int(o, "params", model_param_count(s->view));
    output_line(o, "imported {path}: {model}, {params} parameters");
    return output_emit(s, o);
}

int cmd_save(Session *s, int argc, const LexWord *argv)
{
    char def[CONFIG_STR_LEN + 64], err[LM_ERR_LEN];   /* runs_dir is a config string */
    const char *path = NULL;   /* the user's own text: never copied into a fixed buffer */
    NamesKind names = NAMES_LMLAB;
    long run = 0;              /* save RUN_ID [PATH]: that run's best checkpoint */
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "names")) {
            if (names_parse(argv[i].value, &names, err))
                return session_error(s, LM_EARG, "%s", err);
        } else if (argv[i].key) {
            return session_error(s, LM_EARG, "save: unknown setting %s= (save [RUN_ID] [PATH] "
                                 "[names=lmlab|reference])", argv[i].key);
        } else if (i == 1 && session_parse_run_id(argv[i].text) > 0) {
            run = session_parse_run_id(argv[i].text);
        } else if (path) {
            return session_error(s, LM_EARG, "save: one path, got '%s' and '%s' (save "
                                 "[RUN_ID] [PATH] [names=lmlab|reference])", path, argv[i].text);
        } else {
            path = argv[i].text;
        }
    int rc = run ? session_open_run(s, run, "best", 0) : session_prepare_view(s);
    if (rc)
        return rc;
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
