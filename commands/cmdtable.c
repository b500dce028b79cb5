/* cmdtable.c — the command table engine (see cmdtable.h): lookup with suggestions,
 * argument checks, dispatch with caret-pointing errors and whether a line blocks, all
 * read from one Command array; the small helpers the engine's files share. Help text is
 * cmdtable_help.c, completion and hints cmdtable_complete.c. Not the commands: those are
 * cmd_*.c. */
#include "cmdtable.h"

#include "err.h"
#include "suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------------- */

void cmdtable_strlist_add(CmdStrList *l, const char *a, const char *b)
{
    if (l->failed) return;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            l->failed = 1;
            return;
        }
        l->v = nv;
        l->cap = cap;
    }
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    char *s = malloc(la + lb + 1);
    if (!s) {
        l->failed = 1;
        return;
    }
    memcpy(s, a, la);
    if (lb) memcpy(s + la, b, lb);
    s[la + lb] = 0;
    l->v[l->n++] = s;
}

/* Adds each alternative of "a|b|c". */
void cmdtable_strlist_add_values(CmdStrList *l, const char *values)
{
    while (values && *values) {
        const char *bar = strchr(values, '|');
        size_t len = bar ? (size_t)(bar - values) : strlen(values);
        char tmp[128];
        if (len >= sizeof tmp) len = sizeof tmp - 1;
        memcpy(tmp, values, len);
        tmp[len] = 0;
        if (len) cmdtable_strlist_add(l, tmp, NULL);
        values = bar ? bar + 1 : values + strlen(values);
    }
}

void cmdtable_free_cands(char **cands, int n)
{
    if (!cands) return;
    for (int i = 0; i < n; i++) free(cands[i]);
    free(cands);
}

const CmdArgSpec *cmdtable_spec(const Command *cmd, const char *key)
{
    for (const CmdArgSpec *s = cmd->keys; s && s->key; s++)
        if (strcmp(s->key, key) == 0) return s;
    return NULL;
}

/* The subcommand of cmd named word, or NULL. */
const CmdSub *cmdtable_sub(const Command *cmd, const char *word)
{
    for (const CmdSub *s = cmd->subs; s && s->name && word; s++)
        if (strcmp(s->name, word) == 0) return s;
    return NULL;
}

/* The nearest of the table's names, or of a command's keys, for "did you mean". */
static const char *cmdtable_nearest(const Command *table, int n, const CmdArgSpec *keys,
                                    const char *word)
{
    const char *names[256];
    int k = 0;
    if (table)
        for (int i = 0; i < n && k < 256; i++) names[k++] = table[i].name;
    for (const CmdArgSpec *s = keys; s && s->key && k < 256; s++) names[k++] = s->key;
    return suggest_nearest(word, names, k);
}

/* ---- lookup, checks, dispatch --------------------------------------------------- */

int cmdtable_find(const Command *table, int n, const char *name, const Command **cmd,
                  char *err)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(table[i].name, name) == 0) {
            *cmd = &table[i];
            return LM_OK;
        }
    }
    *cmd = NULL;
    const char *near = cmdtable_nearest(table, n, NULL, name);
    if (near)
        return err_set(err, LM_EARG, "unknown command '%s' — did you mean '%s'?", name, near);
    return err_set(err, LM_EARG, "unknown command '%s' (type 'help' for the list)", name);
}

static int cmdtable_in_values(const char *values, const char *v)
{
    size_t lv = strlen(v);
    while (values && *values) {
        const char *bar = strchr(values, '|');
        size_t len = bar ? (size_t)(bar - values) : strlen(values);
        if (len == lv && strncmp(values, v, len) == 0) return 1;
        values = bar ? bar + 1 : values + len;
    }
    return 0;
}

static int cmdtable_bad(const LexWord *w, int part, int *bo, int *bl)
{
    int o = w->offset, l = w->len; /* part 0: the word, 1: its key, 2: its value */
    if (part == 1) l = w->value_offset - 1 - w->offset;
    if (part == 2) {
        o = w->value_offset;
        l = w->offset + w->len - w->value_offset;
    }
    if (bo) *bo = o;
    if (bl) *bl = l;
    return LM_EARG;
}

static int cmdtable_check_keyval(const Command *cmd, const LexWord *w, int *bo, int *bl,
                                 char *err)
{
    const CmdArgSpec *spec = cmdtable_spec(cmd, w->key);
    if (!spec) {
        /* the config table (or, for free-form ARG_WORD commands, the handler) judges */
        if (cmd->arg_kind == ARG_CONFIG_KEYVAL || cmd->arg_kind == ARG_WORD) return LM_OK;
        const char *near = cmdtable_nearest(NULL, 0, cmd->keys, w->key);
        if (near)
            err_set(err, LM_EARG, "unknown key '%s' for '%s' — did you mean '%s'?", w->key,
                    cmd->name, near);
        else if (!cmd->keys || !cmd->keys[0].key)
            err_set(err, LM_EARG, "'%s' takes no key=value arguments", cmd->name);
        else
            err_set(err, LM_EARG, "unknown key '%s' for '%s'", w->key, cmd->name);
        return cmdtable_bad(w, 1, bo, bl);
    }
    if (spec->values && !cmdtable_in_values(spec->values, w->value)) {
        CmdStrList vals = {0};
        cmdtable_strlist_add_values(&vals, spec->values);
        const char *near = suggest_nearest(w->value, (const char *const *)vals.v, vals.n);
        if (near)
            err_set(err, LM_EARG, "bad value '%s' for %s (one of %s) — did you mean '%s'?",
                    w->value, w->key, spec->values, near);
        else
            err_set(err, LM_EARG, "bad value '%s' for %s (one of %s)", w->value, w->key,
                    spec->values);
        cmdtable_free_cands(vals.v, vals.n);
        return cmdtable_bad(w, 2, bo, bl);
    }
    return LM_OK;
}

/* A first bare word that is none of the command's subcommands. */
static int cmdtable_check_sub(const Command *cmd, const LexWord *w, int *bo, int *bl, char *err)
{
    const char *names[64];
    int k = 0;
    char list[512] = "";
    size_t o = 0;
    for (const CmdSub *s = cmd->subs; s->name && k < 64; s++) {
        names[k++] = s->name;
        int m = snprintf(list + o, sizeof list - o, "%s%s", o ? ", " : "", s->name);
        if (m > 0 && (size_t)m < sizeof list - o) o += (size_t)m;
    }
    const char *near = suggest_nearest(w->text, names, k);
    if (near)
        err_set(err, LM_EARG, "'%s %s': no such subcommand — did you mean '%s %s'?", cmd->name,
                w->text, cmd->name, near);
    else
        err_set(err, LM_EARG, "'%s %s': no such subcommand (one of %s)", cmd->name, w->text,
                list);
    return cmdtable_bad(w, 0, bo, bl);
}

/* Checks a command's arguments against its entry: no arguments for ARG_NONE; only
 * key=value words for ARG_KEYVAL and ARG_CONFIG_KEYVAL; a first bare word that is one
 * of cmd->subs (when listed); keys must be in cmd->keys
 * (except for ARG_CONFIG_KEYVAL, whose other keys the handler checks against the config
 * table); values of enumerated keys must be one of them. LM_OK, or LM_EARG with a
 * message (with a "did you mean" when one is near) and the byte span of the offending
 * part in the original line in *bad_offset, *bad_len (the key of an unknown key, the
 * value of a bad value, else the word; either pointer may be NULL). */
static int cmdtable_check_args(const Command *cmd, int argc, const LexWord *argv, int *bad_offset,
                        int *bad_len, char *err)
{
    if (cmd->subs && cmd->subs[0].name && argc > 1 && !argv[1].key &&
        !cmdtable_sub(cmd, argv[1].text))
        return cmdtable_check_sub(cmd, &argv[1], bad_offset, bad_len, err);
    for (int i = 1; i < argc; i++) {
        const LexWord *w = &argv[i];
        if (cmd->arg_kind == ARG_NONE) {
            err_set(err, LM_EARG, "'%s' takes no arguments", cmd->name);
            return cmdtable_bad(w, 0, bad_offset, bad_len);
        }
        if (w->key) {
            int st = cmdtable_check_keyval(cmd, w, bad_offset, bad_len, err);
            if (st != LM_OK) return st;
        } else if (cmd->arg_kind == ARG_KEYVAL || cmd->arg_kind == ARG_CONFIG_KEYVAL) {
            const char *near = cmdtable_nearest(NULL, 0, cmd->keys, w->text);
            if (near)
                err_set(err, LM_EARG, "'%s' takes key=value arguments, not '%s' — did you "
                        "mean '%s=...'?", cmd->name, w->text, near);
            else if (cmdtable_spec(cmd, "prompt"))   /* sample hello: the text it is for */
                err_set(err, LM_EARG, "'%s' takes key=value arguments, not '%s' — a prompt's "
                        "text goes in prompt=\"%s\"", cmd->name, w->text, w->text);
            else
                err_set(err, LM_EARG, "'%s' takes key=value arguments, not '%s'", cmd->name,
                        w->text);
            return cmdtable_bad(w, 0, bad_offset, bad_len);
        }
    }
    return LM_OK;
}

/* Appends the caret lines under [off, off+len) of line to the message in err. */
static int cmdtable_point(char *err, int st, const char *line, int off, int len)
{
    if (!err) return st;
    size_t k = strlen(err);
    if (k + 2 < LM_ERR_LEN) {
        err[k++] = '\n';
        lexer_caret(line, off, len, err + k, LM_ERR_LEN - k);
    }
    return st;
}

/* Runs one checked command: the table's route or its handler, with the caller's step. */
static int cmdtable_run(const Command *cmd, CmdContext *ctx, const LexCommand *lc,
                        CmdStepFn step)
{
    CmdHandler h = cmd->route ? cmd->route(lc->argc, lc->argv) : NULL;
    if (!h)
        h = cmd->handler;
    int after = (cmd->flags & CMD_STEP_AFTER) != 0;
    if (step && !after)
        step(ctx);
    int st = h ? h(ctx, lc->argc, lc->argv) : LM_OK;
    if (step && after)
        step(ctx);
    return st;
}

int cmdtable_dispatch_each(const Command *table, int n, CmdContext *ctx, const char *line,
                           CmdStepFn step, char *err)
{
    LexLine lx;
    int st = lexer_split(&lx, line, 0, err);
    if (st != LM_OK) {
        if (st == LM_EARG) cmdtable_point(err, st, line, lx.err_offset, lx.err_len);
        lexer_free(&lx);
        return st;
    }
    LexWord *words = NULL;   /* a lead's command without its word */
    for (int c = 0; c < lx.n_cmds && st == LM_OK; c++) {
        const LexCommand *lc = &lx.cmds[c];
        const Command *cmd;
        int bo = 0, bl = 0;
        const Command *lead = NULL;
        LexCommand rest = *lc;
        if ((st = cmdtable_find(table, n, lc->argv[0].text, &cmd, err)) == LM_OK &&
            (cmd->flags & CMD_LEAD_USE) && lc->argc > 1 && !lc->argv[1].key &&
            cmdtable_find(table, n, CMD_LEAD_COMMAND, &lead, NULL) == LM_OK) {
            /* "train quick k=v": "use quick" (the lead's word), then "train k=v" */
            LexWord two[2] = {lc->argv[0], lc->argv[1]};
            two[0].text = two[0].value = lead->name;
            LexCommand first = {two, 2, lc->offset, lc->len};
            if ((st = cmdtable_check_args(lead, 2, two, &bo, &bl, err)) != LM_OK)
                cmdtable_point(err, st, line, bo, bl);
            else if ((st = cmdtable_run(lead, ctx, &first, step)) != LM_OK && err)
                err[0] = 0;
            if (st != LM_OK)
                break;
            words = malloc(sizeof *words * (size_t)(lc->argc - 1));
            if (!words) {
                st = err_set(err, LM_ENOMEM, "out of memory");
                break;
            }
            words[0] = lc->argv[0];
            for (int i = 2; i < lc->argc; i++)
                words[i - 1] = lc->argv[i];
            rest.argv = words;
            rest.argc = lc->argc - 1;
            lc = &rest;
        }
        if (st != LM_OK) {
            cmdtable_point(err, st, line, lc->argv[0].offset, lc->argv[0].len);
        } else if ((st = cmdtable_check_args(cmd, lc->argc, lc->argv, &bo, &bl, err)) != LM_OK) {
            cmdtable_point(err, st, line, bo, bl);
        } else if ((st = cmdtable_run(cmd, ctx, lc, step)) != LM_OK) {
            if (err) err[0] = 0; /* the handler has reported its own error */
        }
        free(words);
        words = NULL;
    }
    free(words);
    lexer_free(&lx);
    return st;
}

int cmdtable_dispatch(const Command *table, int n, CmdContext *ctx, const char *line,
                      char *err)
{
    return cmdtable_dispatch_each(table, n, ctx, line, NULL, err);
}

/* ---- what a line does ----------------------------------------------------------- */

int cmdtable_blocks(const Command *table, int n, const char *line)
{
    LexLine lx;
    int blocks = 0;
    if (lexer_split(&lx, line, 0, NULL) != LM_OK) {
        lexer_free(&lx);
        return 0;
    }
    for (int c = 0; c < lx.n_cmds && !blocks; c++) {
        const LexCommand *lc = &lx.cmds[c];
        const Command *cmd;
        if (cmdtable_find(table, n, lc->argv[0].text, &cmd, NULL) != LM_OK) continue;
        const CmdSub *sub = lc->argc > 1 && !lc->argv[1].key ? cmdtable_sub(cmd, lc->argv[1].text)
                                                             : NULL;
        blocks = (cmd->flags & CMD_BLOCKS) || (sub && (sub->flags & CMD_BLOCKS));
        for (int i = 1; i < lc->argc && (cmd->flags & CMD_FOLLOW_BLOCKS); i++)
            blocks |= !lc->argv[i].key && !strcmp(lc->argv[i].text, "follow");
    }
    lexer_free(&lx);
    return blocks;
}
