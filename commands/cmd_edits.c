/* cmd_edits.c — the history commands that change a stored run: tag, untag, rename and
 * rm (with its plan, the y/N prompt and the report of the files it removed). Each edits
 * the run store through core/store and prints a line or, in JSON mode, one object.
 * Not here: reading runs (cmd_runs.c, cmd_compare.c, cmd_export.c), notes (cmd_log.c),
 * fork (cmd_fork.c), what deleting a run removes (runstore_delete_run_report). */
#include "session.h"
#include "cmd_edits.h"
#include "runargs.h"
#include "runrecord.h"
#include "runstore_edits.h"
#include "safetext.h"

#include "err.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* After tag or untag: the run's tags now, as {"ok", "run", "tags"} or "run 3 tagged 'x'
 * (tags: x, y)" ("none" when it has none left). */
static int tags_say(Session *s, RunStore *st, long id, const char *done, const char *tag)
{
    RunRow r;
    if (runargs_get_run(s, st, id, &r)) return LM_EARG;
    if (s->json) {
        json_t *run = runstore_run_json(&r);
        session_emit_json(s, json_pack("{s:b s:I s:O}", "ok", 1, "run", (json_int_t)id, "tags",
                                       json_object_get(run, "tags")));
        json_decref(run);
    } else {
        session_printf(s, "run %ld %s '%s' (tags: %s)", id, done, tag,
                       r.tags[0] ? r.tags : "none");
    }
    runstore_row_free(&r);
    return LM_OK;
}

int cmd_tag(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = NULL;
    long id = 0;
    if (runargs_store_and_id(s, argc, argv, "tag RUN_ID TAG", &st, &id)) return LM_EARG;
    if (argc != 3 || argv[2].key)
        return session_error(s, LM_EARG, "tag takes one tag after the run id: `tag %ld TAG`",
                             id);
    if (argv[2].text[0] == '-')   /* `tag 12 -baseline` is not a removal */
        return session_error(s, LM_EARG, "tag '%s' starts with '-': to remove a tag, `untag %ld "
                             "%s`", argv[2].text, id, argv[2].text + 1);
    char err[LM_ERR_LEN], what[96];
    int status = runstore_add_tag(st, id, argv[2].text, err);
    snprintf(what, sizeof what, "tagged '%.64s'", argv[2].text);
    if (!status) status = runstore_edit_log(st, id, 0, what, err);
    if (status) return session_error(s, status, "%s", err);
    return tags_say(s, st, id, "tagged", argv[2].text);
}

int cmd_untag(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = NULL;
    long id = 0;
    if (runargs_store_and_id(s, argc, argv, "untag RUN_ID TAG", &st, &id)) return LM_EARG;
    if (argc != 3 || argv[2].key)
        return session_error(s, LM_EARG, "untag takes one tag after the run id: `untag %ld "
                             "TAG`", id);
    char err[LM_ERR_LEN];
    int status = runstore_untag(st, id, argv[2].text, err);
    if (status) return session_error(s, status, "%s", err);
    return tags_say(s, st, id, "untagged", argv[2].text);
}

int cmd_rename(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = NULL;
    long id = 0;
    if (runargs_store_and_id(s, argc, argv, "rename RUN_ID NAME", &st, &id)) return LM_EARG;
    if (argc != 3 || argv[2].key)
        return session_error(s, LM_EARG, "rename takes one name after the run id: `rename %ld "
                             "NAME` (quote a name with spaces)", id);
    char err[LM_ERR_LEN];
    int status = runstore_rename(st, id, argv[2].text, err);
    if (status) return session_error(s, status, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:I s:s}", "ok", 1, "run", (json_int_t)id, "name",
                                       argv[2].text));
    else
        session_printf(s, "run %ld renamed '%s' (`run %ld` lists the edits)", id, argv[2].text,
                       id);
    return LM_OK;
}

/* What rm does to one run's files, in words. */
static void rm_describe(Session *s, RunStore *st, long id, int files, int done)
{
    RunRow r;
    char err[LM_ERR_LEN], name[200];
    if (runstore_get(st, id, &r, err)) return;
    RunRecord f;   /* the checkpoint files that exist, best.safetensors included */
    int nc = 0;
    if (runrecord_read(st, &r, &f, err) == LM_OK) {
        nc = f.n_ckpts;
        runrecord_free(&f);
    }
    const char *dir = r.checkpoint_dir[0] ? r.checkpoint_dir : "(no folder)";
    session_printf(s, "  run %ld '%s' (%s, %d checkpoint%s in %s): %s", id,
                   safetext_escape(name, sizeof name, r.name, 0), r.status, nc,
                   nc == 1 ? "" : "s", dir,
                   files ? (done ? "deleting the run and the files it wrote"
                                 : "the run and the files it wrote will be deleted (other "
                                   "files in its folder are left)")
                         : (done ? "deleting the run; its checkpoint files are kept"
                                 : "the run will be deleted; its checkpoint files are kept "
                                   "(checkpoints=true deletes them too)"));
    runstore_row_free(&r);
}

/* What rm did: the files removed, the entries it left (not written by the run), the folder. */
static void rm_report(Session *s, long id, int files, const RunFilesReport *rep)
{
    if (!files) {
        session_printf(s, "deleted run %ld (checkpoint files kept)", id);
        return;
    }
    if (rep->refused[0]) {   /* a run this user did not write: its paths are not theirs */
        session_printf(s, "deleted run %ld; no file was removed: its settings and folder were"
                       " not written by you (%s) — delete its files yourself if they are"
                       " yours", id, rep->refused);
        return;
    }
    session_printf(s, "deleted run %ld and the %d file%s it wrote", id, rep->removed,
                   rep->removed == 1 ? "" : "s");
    char dir[1100], left[1100];   /* names come from the disk: escaped */
    safetext_escape(dir, sizeof dir, rep->dir, 0);
    safetext_escape(left, sizeof left, rep->left_names, 0);
    if (rep->left)
        session_printf(s, "  left in %s (not written by run %ld): %s — the folder stays", dir,
                       id, left);
    else if (rep->dir_removed)
        session_printf(s, "  removed the empty folder %s", dir);
}

/* rm's words: the runs (each once, each checked to exist and not to be training), and
 * checkpoints= and yes. LM_OK, or the error said. */
static int rm_args(Session *s, RunStore *st, int argc, const LexWord *argv, long *ids, int *n,
                   int *files, int *yes)
{
    const char *usage = "rm RUN_ID... [checkpoints=true] [yes]";
    for (int i = 1; i < argc; i++) {
        if (argv[i].key) {
            if (strcmp(argv[i].key, "checkpoints"))
                return session_error(s, LM_EARG, "rm: unknown setting %s= — usage: %s",
                                     argv[i].key, usage);
            *files = !strcmp(argv[i].value, "true");
            continue;
        }
        if (!strcmp(argv[i].text, "yes") || !strcmp(argv[i].text, "--yes")) {
            *yes = 1;
            continue;
        }
        RunRow row;
        if (*n == RUNARGS_MAX_IDS)
            return session_error(s, LM_EARG, "too many runs (at most %d)", RUNARGS_MAX_IDS);
        if (runargs_parse_id(s, &argv[i], &ids[*n]) || runargs_get_run(s, st, ids[*n], &row))
            return LM_EARG;
        int live = runstore_run_live(st, &row);   /* refused before any plan is said */
        long pid = row.pid;
        runstore_row_free(&row);
        if (s->trainer && s->run_id == ids[*n])
            return session_error(s, LM_ESTATE, "run %ld is the run of this session — "
                                 "`stop` it and `wait` for it to end before deleting it",
                                 ids[*n]);
        if (live)
            return session_error(s, LM_ESTATE, "run %ld is being trained by process %ld: "
                                 "`stop %ld`, and once it has ended, `rm %ld`; nothing "
                                 "was deleted", ids[*n], pid, ids[*n], ids[*n]);
        int again = 0;   /* a run named twice is one run to delete */
        for (int k = 0; k < *n; k++)
            again |= ids[k] == ids[*n];
        *n += !again;
    }
    return LM_OK;
}

/* rm ID... [checkpoints=true] [yes|--yes]: without yes it only says what would happen
 * (at an interactive prompt, s->can_ask: then the prompt asks y/N and runs it with yes;
 * at a terminal otherwise: repeat with yes; in a script: an error, nothing deleted). */
int cmd_rm(Session *s, int argc, const LexWord *argv)
{
    RunStore *st;
    long ids[RUNARGS_MAX_IDS];
    int n = 0, files = 0, yes = 0;
    if (argc < 2 || argv[1].key)
        return session_error(s, LM_EARG, "run id expected — usage: rm RUN_ID... "
                             "[checkpoints=true] [yes]");
    if (!(st = session_store(s))) return LM_EDB;
    int rc = rm_args(s, st, argc, argv, ids, &n, &files, &yes);
    if (rc) return rc;
    if (!yes) {   /* the plan, always; then at a terminal a hint, in a script an error */
        int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
        if (!s->json) {
            session_printf(s, "rm would delete %d run%s:", n, n == 1 ? "" : "s");
            for (int i = 0; i < n; i++) rm_describe(s, st, ids[i], files, 0);
        }
        if (!tty && !s->json)
            return session_error(s, LM_EARG, "rm deletes runs for good: with no terminal to "
                                 "ask at, add yes (or --yes); nothing was deleted");
        if (!tty)
            return session_error(s, LM_EARG, "rm needs yes (or --yes) to delete; nothing "
                                 "was deleted");
        if (s->can_ask && !s->json) {   /* the prompt asks y/N and runs this with yes */
            size_t o = (size_t)snprintf(s->ask_cmd, sizeof s->ask_cmd, "rm");
            for (int i = 0; i < n && o < sizeof s->ask_cmd; i++)
                o += (size_t)snprintf(s->ask_cmd + o, sizeof s->ask_cmd - o, " %ld", ids[i]);
            if (o < sizeof s->ask_cmd)
                snprintf(s->ask_cmd + o, sizeof s->ask_cmd - o, "%s yes",
                         files ? " checkpoints=true" : "");
            snprintf(s->ask_text, sizeof s->ask_text, "delete %d run%s%s for good? (y/N) ", n,
                     n == 1 ? "" : "s", files ? " and their checkpoint files" : "");
            return LM_OK;
        }
        session_printf(s, "nothing deleted yet: repeat the command with yes to delete");
        return LM_OK;
    }
    char err[LM_ERR_LEN];
    for (int i = 0; i < n; i++) {
        if (!s->json) rm_describe(s, st, ids[i], files, 1);
        RunFilesReport rep;
        int status = runstore_delete_run_report(st, ids[i], files, &rep, err);
        if (status && files && rep.left)
            rm_report(s, ids[i], files, &rep);
        if (status) return session_error(s, status, "%s", err);
        if (s->view && s->view_run == ids[i]) s->view_run = 0; /* the open copy stays usable */
        if (s->json) {
            json_t *o = json_pack("{s:b s:I s:b s:i s:i s:s s:b}", "ok", 1, "deleted",
                                  (json_int_t)ids[i], "checkpoints", files, "files_removed",
                                  rep.removed, "entries_left", rep.left, "left",
                                  rep.left_names, "folder_removed", rep.dir_removed);
            if (o && rep.refused[0])
                json_object_set_new(o, "files_refused", json_string(rep.refused));
            session_emit_json(s, o);
        } else
            rm_report(s, ids[i], files, &rep);
    }
    return LM_OK;
}
