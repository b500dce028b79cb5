/* lexer.c — the command-line lexer (see lexer.h for the rules). One pass over the line;
 * the words' texts live in one arena sized up front (a word's text, key and value each
 * need at most its raw length plus a NUL), so no pointer moves after it is handed out.
 * Not a validator of keys or values: cmdtable.c and config.c judge those. */
#include "lexer.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>

#define LEXER_MAX_LINE (1 << 24)

typedef struct {
    const char *line;
    int n, i;
    int flags;
    char *t;          /* next free arena byte */
    LexLine *out;
    int cap_words;
    int *cmd_first;   /* (n_cmds) index of each command's first word */
    int cap_cmds;
} Lexer;

static int lexer_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int lexer_push_word(Lexer *lx, const LexWord *w)
{
    LexLine *o = lx->out;
    if (o->n_words == lx->cap_words) {
        int cap = lx->cap_words ? 2 * lx->cap_words : 8;
        LexWord *nw = realloc(o->words, (size_t)cap * sizeof *nw);
        if (!nw) return LM_ENOMEM;
        o->words = nw;
        lx->cap_words = cap;
    }
    o->words[o->n_words++] = *w;
    return LM_OK;
}

/* Closes the command whose first word is `first` (nothing when it has no words). */
static int lexer_end_command(Lexer *lx, int first)
{
    LexLine *o = lx->out;
    if (o->n_words == first) return LM_OK;
    if (o->n_cmds == lx->cap_cmds) {
        int cap = lx->cap_cmds ? 2 * lx->cap_cmds : 4;
        int *nf = realloc(lx->cmd_first, (size_t)cap * sizeof *nf);
        if (!nf) return LM_ENOMEM;
        lx->cmd_first = nf;
        lx->cap_cmds = cap;
    }
    lx->cmd_first[o->n_cmds++] = first;
    return LM_OK;
}

/* Copies a quoted part starting at the opening quote; advances lx->i past the closing
 * quote. Returns LM_OK, or LM_EARG for an unclosed quote (accepted when partial). */
static int lexer_quoted(Lexer *lx, int *wflags, char *err)
{
    const char *s = lx->line;
    char q = s[lx->i];
    int open = lx->i++;
    *wflags |= LEXW_QUOTED;
    while (lx->i < lx->n && s[lx->i] != q) {
        char c = s[lx->i];
        if (q == '"' && c == '\\' && lx->i + 1 < lx->n) {
            char e = s[lx->i + 1];
            char m = e == '"' ? '"' : e == '\\' ? '\\' : e == 'n' ? '\n' : e == 't' ? '\t' : 0;
            if (m) {
                *lx->t++ = m;
                lx->i += 2;
                continue;
            }
        }
        *lx->t++ = c;
        lx->i++;
    }
    if (lx->i < lx->n) {
        lx->i++; /* the closing quote */
        return LM_OK;
    }
    if (lx->flags & LEXER_PARTIAL) {
        *wflags |= LEXW_OPEN;
        return LM_OK;
    }
    lx->out->err_offset = open;
    lx->out->err_len = lx->n - open;
    return err_set(err, LM_EARG, "unterminated %s quote (opened at column %d)",
                   q == '"' ? "double" : "single", open + 1);
}

/* Scans one word starting at lx->i (a non-space, non-';', non-'#' byte). */
static int lexer_word(Lexer *lx, char *err)
{
    const char *s = lx->line;
    LexWord w = {0};
    char *text = lx->t;
    int eq = -1, st;
    w.offset = lx->i;
    while (lx->i < lx->n) {
        char c = s[lx->i];
        if (lexer_is_space(c) || c == ';' || c == '#') break;
        if (c == '"' || c == '\'') {
            if ((st = lexer_quoted(lx, &w.flags, err)) != LM_OK) return st;
            continue;
        }
        if (c == '=' && eq < 0) {
            eq = (int)(lx->t - text);
            w.value_offset = lx->i + 1;
        }
        *lx->t++ = c;
        lx->i++;
    }
    *lx->t++ = 0;
    w.len = lx->i - w.offset;
    w.text = text;
    w.value = text;
    if (eq < 0) {
        w.value_offset = w.offset;
    } else {
        if (eq == 0 && !(lx->flags & LEXER_PARTIAL)) {
            lx->out->err_offset = w.offset;
            lx->out->err_len = w.len;
            return err_set(err, LM_EARG, "empty key before '=' at column %d", w.offset + 1);
        }
        size_t tl = (size_t)(lx->t - text) - 1, kl = (size_t)eq;
        char *key = lx->t;
        memcpy(key, text, kl);
        key[kl] = 0;
        char *val = key + kl + 1;
        size_t vl = tl - kl - 1;
        memcpy(val, text + kl + 1, vl);
        val[vl] = 0;
        lx->t = val + vl + 1;
        w.key = key;
        w.value = val;
        w.flags |= LEXW_KEYVAL;
    }
    return lexer_push_word(lx, &w);
}

static int lexer_scan(Lexer *lx, char *err)
{
    const char *s = lx->line;
    int first = 0, st;
    while (lx->i < lx->n) {
        char c = s[lx->i];
        if (lexer_is_space(c)) {
            lx->i++;
        } else if (c == ';') {
            if ((st = lexer_end_command(lx, first)) != LM_OK) return st;
            first = lx->out->n_words;
            lx->i++;
        } else if (c == '#') {
            break;
        } else if ((st = lexer_word(lx, err)) != LM_OK) {
            return st;
        }
    }
    return lexer_end_command(lx, first);
}

/* Turns the recorded first-word indices into LexCommand entries. */
static int lexer_build_commands(Lexer *lx)
{
    LexLine *o = lx->out;
    if (o->n_cmds == 0) return LM_OK;
    o->cmds = malloc((size_t)o->n_cmds * sizeof *o->cmds);
    if (!o->cmds) return LM_ENOMEM;
    for (int c = 0; c < o->n_cmds; c++) {
        int a = lx->cmd_first[c];
        int b = c + 1 < o->n_cmds ? lx->cmd_first[c + 1] : o->n_words;
        LexCommand *cmd = &o->cmds[c];
        cmd->argv = o->words + a;
        cmd->argc = b - a;
        cmd->offset = o->words[a].offset;
        cmd->len = o->words[b - 1].offset + o->words[b - 1].len - cmd->offset;
    }
    return LM_OK;
}

int lexer_split(LexLine *out, const char *line, int flags, char *err)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(line);
    if (n > LEXER_MAX_LINE) return err_set(err, LM_EARG, "line too long (%zu bytes)", n);
    Lexer lx = {.line = line, .n = (int)n, .flags = flags, .out = out};
    out->arena_ = malloc(6 * n + 8);
    if (!out->arena_) return err_set(err, LM_ENOMEM, "out of memory lexing a line");
    lx.t = out->arena_;
    int st = lexer_scan(&lx, err);
    if (st == LM_OK) st = lexer_build_commands(&lx);
    free(lx.cmd_first);
    if (st != LM_OK) {
        int eo = out->err_offset, el = out->err_len;
        lexer_free(out);
        out->err_offset = eo;
        out->err_len = el;
        if (st == LM_ENOMEM) err_set(err, st, "out of memory lexing a line");
    }
    return st;
}

void lexer_free(LexLine *l)
{
    if (!l) return;
    free(l->words);
    free(l->cmds);
    free(l->arena_);
    memset(l, 0, sizeof *l);
}

/* Appends one byte to buf if there is room for it and the NUL; counts it anyway. */
static void lexer_put(char *buf, size_t cap, size_t *k, char c)
{
    if (*k + 1 < cap) buf[*k] = c;
    (*k)++;
}

int lexer_caret(const char *line, int offset, int len, char *buf, size_t cap)
{
    size_t k = 0, n = strlen(line);
    if (offset < 0) offset = 0;
    if ((size_t)offset > n) offset = (int)n;
    if (len < 1) len = 1;
    lexer_put(buf, cap, &k, ' ');
    lexer_put(buf, cap, &k, ' ');
    for (size_t i = 0; i < n; i++) lexer_put(buf, cap, &k, line[i] == '\n' ? ' ' : line[i]);
    lexer_put(buf, cap, &k, '\n');
    lexer_put(buf, cap, &k, ' ');
    lexer_put(buf, cap, &k, ' ');
    for (int i = 0; i < offset; i++) {
        unsigned char c = (unsigned char)line[i];
        if ((c & 0xC0) == 0x80) continue; /* a UTF-8 continuation byte: same column */
        lexer_put(buf, cap, &k, c == '\t' ? '\t' : ' ');
    }
    /* one caret per code point of the span (at least one) */
    int carets = 0;
    for (int i = offset; i < offset + len && (size_t)i < n; i++)
        if (((unsigned char)line[i] & 0xC0) != 0x80) carets++;
    if (carets < 1) carets = 1;
    for (int i = 0; i < carets; i++) lexer_put(buf, cap, &k, '^');
    lexer_put(buf, cap, &k, '\n');
    if (cap) buf[k < cap ? k : cap - 1] = 0;
    return (int)k;
}
