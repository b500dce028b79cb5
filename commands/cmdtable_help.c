/* cmdtable_help.c — the command table's help text (cmdtable_help, see cmdtable.h): every
 * command grouped by its table group, one line each, or one command's usage, summary,
 * help, subcommands and keys, all read from the Command array, formatted into a growable
 * buffer (strbuf.h). Not dispatch (cmdtable.c) and not completion (cmdtable_complete.c). */
#include "cmdtable.h"

#include "err.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmdtable_same_group(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void cmdtable_help_all(const Command *table, int n, StrBuf *t)
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
        strbuf_printf(t, "%s%s:\n", i ? "\n" : "", table[i].group ? table[i].group : "commands");
        for (int j = i; j < n; j++) {
            const Command *c = &table[j];
            if (!cmdtable_same_group(c->group, table[i].group)) continue;
            char left[256];
            snprintf(left, sizeof left, "%s %s", c->name, c->args_hint ? c->args_hint : "");
            strbuf_printf(t, "  %-*s  %s\n", w, left, c->summary ? c->summary : "");
        }
    }
}

static void cmdtable_help_one(const Command *c, StrBuf *t)
{
    strbuf_printf(t, "usage: %s %s\n\n%s\n", c->name, c->args_hint ? c->args_hint : "",
             c->summary ? c->summary : "");
    if (c->help && *c->help)
        strbuf_printf(t, "\n%s%s", c->help, c->help[strlen(c->help) - 1] == '\n' ? "" : "\n");
    if (c->flags & CMD_BLOCKS)   /* its own help says until when */
        strbuf_printf(t, "\nBlocks: it returns when it ends (Ctrl-C stops waiting).\n");
    if (c->flags & CMD_DESTRUCTIVE) strbuf_printf(t, "\nDestructive: deletes stored data.\n");
    if (c->subs && c->subs[0].name) {
        strbuf_printf(t, "\nsubcommands:\n");
        for (const CmdSub *s = c->subs; s->name; s++) {
            char left[128];
            snprintf(left, sizeof left, "%s %s", s->name, s->args_hint ? s->args_hint : "");
            strbuf_printf(t, "  %-16s  %s%s%s\n", left, s->summary ? s->summary : "",
                     s->flags & CMD_BLOCKS ? " (blocks until it ends)" : "",
                     s->flags & CMD_DESTRUCTIVE ? " (deletes stored data)" : "");
        }
    }
    if (c->keys && c->keys[0].key) {
        strbuf_printf(t, "\nkeys:\n");
        for (const CmdArgSpec *s = c->keys; s->key; s++) {
            if (s->values)
                strbuf_printf(t, "  %-24s  one of %s\n", s->hint ? s->hint : s->key, s->values);
            else strbuf_printf(t, "  %s\n", s->hint ? s->hint : s->key);
        }
    }
}

int cmdtable_help(const Command *table, int n, const char *name, char **text, char *err)
{
    StrBuf t = {0};
    *text = NULL;
    if (!name || !*name) {
        cmdtable_help_all(table, n, &t);
    } else {
        const Command *c;
        int st = cmdtable_find(table, n, name, &c, err);
        if (st != LM_OK) return st;
        cmdtable_help_one(c, &t);
    }
    if (!t.oom && !t.p && !(t.p = calloc(1, 1))) /* an empty table: "" */
        t.oom = 1;
    if (t.oom) {
        free(t.p);
        return err_set(err, LM_ENOMEM, "out of memory formatting help");
    }
    *text = t.p;
    return LM_OK;
}
