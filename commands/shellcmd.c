/* shellcmd.c — shell words to a REPL line (see shellcmd.h). */
#include "shellcmd.h"

#include "err.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

ShellWordKind shellcmd_classify(const Command *table, int n, const char *word, char *err)
{
    const Command *cmd;
    char cerr[LM_ERR_LEN];
    int is_cmd = cmdtable_find(table, n, word, &cmd, cerr) == LM_OK;
    struct stat st;
    int exists = stat(word, &st) == 0, regular = exists && S_ISREG(st.st_mode);
    if (is_cmd)
        return regular ? SHELL_WORD_BOTH : SHELL_WORD_COMMAND;
    size_t len = strlen(word);
    if (regular || strchr(word, '/') || (len > 6 && !strcmp(word + len - 6, ".lmlab")))
        return SHELL_WORD_SCRIPT;
    if (exists && S_ISDIR(st.st_mode))
        err_set(err, LM_EARG, "'%s' is a directory, neither a script nor a command "
                "(`lmlab help` lists the commands)", word);
    else
        err_set(err, LM_EARG, "%s (`lmlab help` lists the commands; a script is run as "
                "`lmlab FILE`)", cerr);
    return SHELL_WORD_UNKNOWN;
}

/* 1 when the lexer reads s back unchanged as one bare word (or a bare value). */
static int bare_ok(const char *s)
{
    if (!*s)
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '\'' || *p == ';' || *p == '#' || *p == 0x7f)
            return 0;
    return 1;
}

/* Appends s (quoted when needed) at line+*o; 0, or -1 when it does not fit. */
static int put_word(char *line, size_t cap, size_t *o, const char *s, int allow_bare)
{
    if (allow_bare && bare_ok(s)) {
        size_t l = strlen(s);
        if (*o + l + 1 >= cap)
            return -1;
        memcpy(line + *o, s, l + 1);
        *o += l;
        return 0;
    }
    if (*o + 2 >= cap)
        return -1;
    line[(*o)++] = '"';
    for (const char *p = s; *p; p++) {
        const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n"
                        : *p == '\t' ? "\\t" : NULL;
        size_t l = esc ? 2 : 1;
        if (*o + l + 2 >= cap)
            return -1;
        if (esc)
            memcpy(line + *o, esc, 2);
        else
            line[*o] = *p;
        *o += l;
    }
    line[(*o)++] = '"';
    line[*o] = 0;
    return 0;
}

/* Appends " " and the shell word w (key bare, value quoted when needed). */
static int put_arg(char *line, size_t cap, size_t *o, const char *w)
{
    if (*o + 2 >= cap)
        return -1;
    line[(*o)++] = ' ';
    line[*o] = 0;
    const char *eq = strchr(w, '=');
    if (!eq || eq == w)
        return put_word(line, cap, o, w, 1);
    char key[256];
    size_t kl = (size_t)(eq - w);
    if (kl >= sizeof key)
        return put_word(line, cap, o, w, 1);
    memcpy(key, w, kl);
    key[kl] = 0;
    if (!bare_ok(key))   /* a key the lexer cannot read bare: the whole word, quoted */
        return put_word(line, cap, o, w, 0);
    if (*o + kl + 2 >= cap)
        return -1;
    memcpy(line + *o, w, kl + 1);   /* "key=" */
    *o += kl + 1;
    line[*o] = 0;
    return eq[1] ? put_word(line, cap, o, eq + 1, 1) : 0;
}

int shellcmd_line(const char *const *words, int nw, char *line, size_t cap, char *err)
{
    size_t o = 0;
    int first = 1;
    line[0] = 0;
    if (nw > 1 && !strcmp(words[0], "train") && !strchr(words[1], '=')) {
        memcpy(line, "use", 4);
        o = 3;
        if (put_arg(line, cap, &o, words[1]) || o + 3 >= cap)
            goto too_long;
        memcpy(line + o, "; ", 3);
        o += 2;
        first = 2;
    }
    if (put_word(line, cap, &o, words[0], 1))
        goto too_long;
    for (int i = first; i < nw; i++)
        if (put_arg(line, cap, &o, words[i]))
            goto too_long;
    return LM_OK;
too_long:
    return err_set(err, LM_EARG, "the command line is too long (over %zu bytes): put the "
                   "commands in a script and run `lmlab FILE`", cap - 1);
}

int shellcmd_check_lasting(const Command *table, int n, const char *const *words, int nw,
                           char *err)
{
    const Command *cmd;
    char cerr[LM_ERR_LEN];
    if (nw < 2 || cmdtable_find(table, n, words[0], &cmd, cerr) != LM_OK ||
        !(cmd->flags & CMD_SESSION))
        return LM_OK;
    return err_set(err, LM_EARG, "`%s` changes this session's settings, and a one-shot "
                   "`lmlab %s ...` ends with it, so it would do nothing: give it with what "
                   "uses it, e.g. `lmlab train quick lr=1e-3` or `lmlab -c \"use quick; set "
                   "lr=1e-3; train\"`, or start `lmlab` for a session", cmd->name, cmd->name);
}
