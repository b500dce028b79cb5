/* cmdtable.c — the command table engine (see cmdtable.h): lookup with suggestions,
 * argument checks, dispatch with caret-pointing errors, help text, completion and
 * hints, all read from one Command array. Not the commands: those are cmd_*.c. */
#include "cmdtable.h"

#include "err.h"
#include "suggest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------------- */

/* A growable list of malloc'd strings; `failed` records an allocation failure. */
typedef struct {
    char **v;
    int n, cap, failed;
} StrList;

static void strlist_add(StrList *l, const char *a, const char *b)
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
static void strlist_add_values(StrList *l, const char *values)
{
    while (values && *values) {
        const char *bar = strchr(values, '|');
        size_t len = bar ? (size_t)(bar - values) : strlen(values);
        char tmp[128];
        if (len >= sizeof tmp) len = sizeof tmp - 1;
        memcpy(tmp, values, len);
        tmp[len] = 0;
        if (len) strlist_add(l, tmp, NULL);
        values = bar ? bar + 1 : values + strlen(values);
    }
}

void cmdtable_free_cands(char **cands, int n)
{
    if (!cands) return;
    for (int i = 0; i < n; i++) free(cands[i]);
    free(cands);
}

/* A growable text buffer with printf-style appends. */
typedef struct {
    char *s;
    size_t len, cap;
    int failed;
} Text;

__attribute__((format(printf, 2, 3))) static void text_add(Text *t, const char *fmt, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = 1;
            return;
        }
        if (t->s && t->len + (size_t)k < t->cap) {
            t->len += (size_t)k;
            return;
        }
        size_t cap = t->cap ? t->cap : 256;
        while (cap <= t->len + (size_t)k) cap *= 2;
        char *ns = realloc(t->s, cap);
        if (!ns) {
            t->failed = 1;
            return;
        }
        t->s = ns;
        t->cap = cap;
    }
}

static const CmdArgSpec *cmdtable_spec(const Command *cmd, const char *key)
{
    for (const CmdArgSpec *s = cmd->keys; s && s->key; s++)
        if (strcmp(s->key, key) == 0) return s;
    return NULL;
}

/* The subcommand of cmd named word, or NULL. */
static const CmdSub *cmdtable_sub(const Command *cmd, const char *word)
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
        StrList vals = {0};
        strlist_add_values(&vals, spec->values);
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

/* ---- help ----------------------------------------------------------------------- */

static int cmdtable_same_group(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void cmdtable_help_all(const Command *table, int n, Text *t)
{
    int w = 0;
    for (int i = 0; i < n; i++) {
        int l = (int)(strlen(table[i].name) + 1 + strlen(table[i].args_hint ? table[i].args_hint : ""));
        if (l > w) w = l;
    }
    if (w > 36) w = 36;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = cmdtable_same_group(table[j].group, table[i].group);
        if (seen) continue;
        text_add(t, "%s%s:\n", i ? "\n" : "", table[i].group ? table[i].group : "commands");
        for (int j = i; j < n; j++) {
            const Command *c = &table[j];
            if (!cmdtable_same_group(c->group, table[i].group)) continue;
            char left[256];
            snprintf(left, sizeof left, "%s %s", c->name, c->args_hint ? c->args_hint : "");
            text_add(t, "  %-*s  %s\n", w, left, c->summary ? c->summary : "");
        }
    }
}

static void cmdtable_help_one(const Command *c, Text *t)
{
    text_add(t, "usage: %s %s\n\n%s\n", c->name, c->args_hint ? c->args_hint : "",
             c->summary ? c->summary : "");
    if (c->help && *c->help) text_add(t, "\n%s%s", c->help, c->help[strlen(c->help) - 1] == '\n' ? "" : "\n");
    if (c->flags & CMD_BLOCKS)   /* its own help says until when */
        text_add(t, "\nBlocks: it returns when it ends (Ctrl-C stops waiting).\n");
    if (c->flags & CMD_DESTRUCTIVE) text_add(t, "\nDestructive: deletes stored data.\n");
    if (c->subs && c->subs[0].name) {
        text_add(t, "\nsubcommands:\n");
        for (const CmdSub *s = c->subs; s->name; s++) {
            char left[128];
            snprintf(left, sizeof left, "%s %s", s->name, s->args_hint ? s->args_hint : "");
            text_add(t, "  %-16s  %s%s%s\n", left, s->summary ? s->summary : "",
                     s->flags & CMD_BLOCKS ? " (blocks until it ends)" : "",
                     s->flags & CMD_DESTRUCTIVE ? " (deletes stored data)" : "");
        }
    }
    if (c->keys && c->keys[0].key) {
        text_add(t, "\nkeys:\n");
        for (const CmdArgSpec *s = c->keys; s->key; s++) {
            if (s->values) text_add(t, "  %-24s  one of %s\n", s->hint ? s->hint : s->key, s->values);
            else text_add(t, "  %s\n", s->hint ? s->hint : s->key);
        }
    }
}

int cmdtable_help(const Command *table, int n, const char *name, char **text, char *err)
{
    Text t = {0};
    *text = NULL;
    if (!name || !*name) {
        cmdtable_help_all(table, n, &t);
    } else {
        const Command *c;
        int st = cmdtable_find(table, n, name, &c, err);
        if (st != LM_OK) return st;
        cmdtable_help_one(c, &t);
    }
    if (!t.failed && !t.s && !(t.s = calloc(1, 1))) /* an empty table: "" */
        t.failed = 1;
    if (t.failed) {
        free(t.s);
        return err_set(err, LM_ENOMEM, "out of memory formatting help");
    }
    *text = t.s;
    return LM_OK;
}

/* ---- completion ----------------------------------------------------------------- */

/* Adds the provider's candidates (with suffix appended) and frees its array. */
static void cmdtable_provide(StrList *l, CompleteProvider p, void *ud, int what,
                             const char *key, const char *prefix, const char *suffix)
{
    if (!p) return;
    char **out = NULL;
    int k = p(ud, what, key, prefix, &out);
    for (int i = 0; i < k && out; i++) {
        if (out[i]) strlist_add(l, out[i], suffix);
        free(out[i]);
    }
    free(out);
}

static int cmdtable_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keeps the strings starting with prefix, sorted and unique. */
static void cmdtable_filter(StrList *l, const char *prefix)
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
                                  StrList *l, const char **prefix)
{
    if (w && w->key) {
        const CmdArgSpec *spec = cmdtable_spec(cmd, w->key);
        *prefix = w->value;
        if (spec && spec->values) strlist_add_values(l, spec->values);
        else if (!spec && cmd->arg_kind == ARG_CONFIG_KEYVAL)
            cmdtable_provide(l, p, ud, COMPLETE_CONFIG_VALUES, w->key, w->value, NULL);
        return;
    }
    *prefix = w ? w->text : "";
    if (cmd->arg_kind == ARG_NONE) return;
    for (const CmdArgSpec *s = cmd->keys; s && s->key; s++) strlist_add(l, s->key, "=");
    for (const CmdSub *s = first ? cmd->subs : NULL; s && s->name; s++) strlist_add(l, s->name, NULL);
    switch (cmd->arg_kind) {
    case ARG_CONFIG_KEYVAL: cmdtable_provide(l, p, ud, ARG_CONFIG_KEYVAL, NULL, *prefix, "="); break;
    case ARG_RUN_ID: case ARG_EXPERIMENT: case ARG_PATH:
        cmdtable_provide(l, p, ud, cmd->arg_kind, NULL, *prefix, NULL);
        break;
    case ARG_COMMAND:
        for (int i = 0; i < n; i++) strlist_add(l, table[i].name, NULL);
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
    StrList l = {0};
    const char *prefix = "";
    const LexWord *w = NULL, *argv = NULL;
    int argc = 0;
    int skip = st != LM_OK || cmdtable_locate(&lx, upto, cursor, &w, &argv, &argc) != 0;
    if (skip || (w && (w->flags & LEXW_QUOTED))) {
        /* inside a comment or quotes: nothing */
    } else if (argc == 0 || (w && w == argv)) {
        prefix = w ? w->text : "";
        for (int i = 0; i < n; i++) strlist_add(&l, table[i].name, NULL);
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
