/* cmdtable_help.c — the command table's help text (cmdtable_help, see cmdtable.h): every
 * command grouped by its table group, one line each, or one command's usage, summary,
 * help, subcommands and keys, all read from the Command array, formatted into a growable
 * buffer. Not dispatch (cmdtable.c) and not completion (cmdtable_complete.c). */
#include "cmdtable.h"

#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
