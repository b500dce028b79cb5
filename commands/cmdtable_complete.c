/* cmdtable_complete.c — what the line editor asks of the command table (see cmdtable.h):
 * tab completion of the word at the cursor (command names, keys, subcommands, enumerated
 * values, and the caller's provider for config keys and values, run ids, experiments,
 * paths) and the argument hint after what is typed. Not dispatch (cmdtable.c) and not
 * help (cmdtable_help.c). */
#include "cmdtable.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>

/* ---- completion ----------------------------------------------------------------- */

/* Adds the provider's candidates (with suffix appended) and frees its array. */
static void cmdtable_provide(CmdStrList *l, CompleteProvider p, void *ud, int what,
                             const char *key, const char *prefix, const char *suffix)
{
    if (!p) return;
    char **out = NULL;
    int k = p(ud, what, key, prefix, &out);
    for (int i = 0; i < k && out; i++) {
        if (out[i]) cmdtable_strlist_add(l, out[i], suffix);
        free(out[i]);
    }
    free(out);
}

static int cmdtable_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keeps the strings starting with prefix, sorted and unique. */
static void cmdtable_filter(CmdStrList *l, const char *prefix)
{
    size_t pl = strlen(prefix);
    int k = 0;
    for (int i = 0; i < l->n; i++) {
        if (strncmp(l->v[i], prefix, pl) == 0) l->v[k++] = l->v[i];
        else free(l->v[i]);
    }
    l->n = k;
    if (k > 1) qsort(l->v, (size_t)k, sizeof *l->v, cmdtable_cmp);
    k = 0;
    for (int i = 0; i < l->n; i++) {
        if (k > 0 && strcmp(l->v[k - 1], l->v[i]) == 0) free(l->v[i]);
        else l->v[k++] = l->v[i];
    }
    l->n = k;
}

/* Candidates for a word after the command name (w NULL: a new, empty word). */
static void cmdtable_complete_arg(const Command *table, int n, const Command *cmd,
                                  const LexWord *w, int first, CompleteProvider p, void *ud,
                                  CmdStrList *l, const char **prefix)
{
    if (w && w->key) {
        const CmdArgSpec *spec = cmdtable_spec(cmd, w->key);
        *prefix = w->value;
        if (spec && spec->values) cmdtable_strlist_add_values(l, spec->values);
        else if (!spec && cmd->arg_kind == ARG_CONFIG_KEYVAL)
            cmdtable_provide(l, p, ud, COMPLETE_CONFIG_VALUES, w->key, w->value, NULL);
        return;
    }
    *prefix = w ? w->text : "";
    if (cmd->arg_kind == ARG_NONE) return;
    for (const CmdArgSpec *s = cmd->keys; s && s->key; s++) cmdtable_strlist_add(l, s->key, "=");
    for (const CmdSub *s = first ? cmd->subs : NULL; s && s->name; s++) cmdtable_strlist_add(l, s->name, NULL);
    switch (cmd->arg_kind) {
    case ARG_CONFIG_KEYVAL: cmdtable_provide(l, p, ud, ARG_CONFIG_KEYVAL, NULL, *prefix, "="); break;
    case ARG_RUN_ID: case ARG_EXPERIMENT: case ARG_PATH:
        cmdtable_provide(l, p, ud, cmd->arg_kind, NULL, *prefix, NULL);
        break;
    case ARG_COMMAND:
        for (int i = 0; i < n; i++) cmdtable_strlist_add(l, table[i].name, NULL);
        break;
    default: break;
    }
}

/* Finds the word being completed in the lexed prefix: *w (NULL for a new word at the
 * cursor) and the words of its command, *argv and *argc (argc 0: a new command).
 * Returns 0, or -1 when the cursor is inside a comment (nothing to complete). */
static int cmdtable_locate(const LexLine *lx, const char *upto, int cursor,
                           const LexWord **w, const LexWord **argv, int *argc)
{
    *w = NULL;
    *argv = NULL;
    *argc = 0;
    int from = 0;
    const LexCommand *last = lx->n_cmds ? &lx->cmds[lx->n_cmds - 1] : NULL;
    if (last) {
        const LexWord *lw = &last->argv[last->argc - 1];
        from = lw->offset + lw->len;
        if (from == cursor) *w = lw;
    }
    for (int i = from; i < cursor; i++) {
        if (upto[i] == '#') return -1;
        if (upto[i] == ';') return 0; /* a new command */
    }
    if (last) {
        *argv = last->argv;
        *argc = last->argc;
    }
    return 0;
}

int cmdtable_complete(const Command *table, int n, const char *line, int cursor,
                      CompleteProvider p, void *ud, char ***cands, int *ncand,
                      int *word_start)
{
    size_t len = strlen(line);
    if (cursor < 0) cursor = 0;
    if ((size_t)cursor > len) cursor = (int)len;
    *cands = NULL;
    *ncand = 0;
    *word_start = cursor;
    char *upto = strndup(line, (size_t)cursor);
    if (!upto) return LM_ENOMEM;
    LexLine lx;
    int st = lexer_split(&lx, upto, LEXER_PARTIAL, NULL);
    CmdStrList l = {0};
    const char *prefix = "";
    const LexWord *w = NULL, *argv = NULL;
    int argc = 0;
    int skip = st != LM_OK || cmdtable_locate(&lx, upto, cursor, &w, &argv, &argc) != 0;
    if (skip || (w && (w->flags & LEXW_QUOTED))) {
        /* inside a comment or quotes: nothing */
    } else if (argc == 0 || (w && w == argv)) {
        prefix = w ? w->text : "";
        for (int i = 0; i < n; i++) cmdtable_strlist_add(&l, table[i].name, NULL);
    } else {
        const Command *cmd = NULL;
        if (cmdtable_find(table, n, argv[0].text, &cmd, NULL) == LM_OK)
            cmdtable_complete_arg(table, n, cmd, w, w ? w == &argv[1] : argc == 1, p, ud, &l,
                                  &prefix);
    }
    if (w) *word_start = w->key ? w->value_offset : w->offset;
    cmdtable_filter(&l, prefix);
    lexer_free(&lx);
    free(upto);
    if (st != LM_OK || l.failed) {
        cmdtable_free_cands(l.v, l.n);
        return LM_ENOMEM;
    }
    *cands = l.v;
    *ncand = l.n;
    if (l.n == 0) {
        free(l.v);
        *cands = NULL;
    }
    return LM_OK;
}

int cmdtable_completer(void *completer, const char *line, int cursor, char ***cands,
                       int *ncand, int *word_start)
{
    const CmdCompleter *c = completer;
    return cmdtable_complete(c->table, c->n, line, cursor, c->provider, c->ud, cands, ncand,
                             word_start);
}

/* ---- hints ---------------------------------------------------------------------- */

const char *cmdtable_hint(const Command *table, int n, const char *line)
{
    LexLine lx;
    const LexWord *w, *argv;
    int argc;
    const char *hint = NULL;
    if (lexer_split(&lx, line, LEXER_PARTIAL, NULL) != LM_OK) return NULL;
    const Command *cmd = NULL;
    if (cmdtable_locate(&lx, line, (int)strlen(line), &w, &argv, &argc) == 0 && argc > 0 && cmdtable_find(table, n, argv[0].text, &cmd, NULL) == LM_OK) {
        const CmdArgSpec *spec = w && w->key ? cmdtable_spec(cmd, w->key) : NULL;
        const CmdSub *sub = argc > 1 && !argv[1].key ? cmdtable_sub(cmd, argv[1].text) : NULL;
        if (spec && spec->hint) hint = spec->hint;
        else if (sub && sub->args_hint && *sub->args_hint) hint = sub->args_hint;
        else if (cmd->args_hint && *cmd->args_hint) hint = cmd->args_hint;
    }
    lexer_free(&lx);
    return hint;
}
