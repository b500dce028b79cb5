/* fuzz_lexer.c — libFuzzer target for the command-line lexer, and through it the
 * completion and hint paths of the command table and the caret formatter. Checks the
 * invariants the rest of the code relies on: every word's span lies inside the line and
 * words are in order; key=value words have value_offset right after an unquoted '=' ;
 * a word's unescaped text is never longer than its raw bytes; commands cover their
 * words; a failed split leaves an empty result with an error span inside the line.
 * The same bytes are also typed into the line editor as terminal input (decoded keys,
 * completion from the fake table, rendering), checking the buffer stays consistent.
 * Not built by meson. Build and run from the source root:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -std=c11 \
 *     -Icore -Icommands tests/fuzz/fuzz_lexer.c commands/lexer.c commands/cmdtable.c \
 *     commands/cmdtable_help.c commands/cmdtable_complete.c commands/suggest.c \
 *     commands/editor.c commands/history.c core/err.c -o /tmp/fuzz_lexer
 *   /tmp/fuzz_lexer -max_total_time=120 -max_len=256 /tmp/lexer_work tests/fuzz/corpus/lexer
 *   mkdir /tmp/lexer_min && /tmp/fuzz_lexer -merge=1 -use_counters=0 /tmp/lexer_min \
 *     tests/fuzz/corpus/lexer /tmp/lexer_work     # then replace the corpus by lexer_min
 * (-use_counters=0 keeps one input per covered edge rather than per hit-count bucket.)
 */
#include "cmdtable.h"
#include "editor.h"
#include "err.h"
#include "lexer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(c) \
    do { \
        if (!(c)) __builtin_trap(); \
    } while (0)

static const CmdArgSpec fuzz_keys[] = {{"mode", "mode=a|b", "a|b"}, {"steps", "steps=N", NULL},
                                       {NULL, NULL, NULL}};
static const Command fuzz_table[] = {
    {"train", "[key=value ...]", "train", NULL, ARG_CONFIG_KEYVAL, fuzz_keys, NULL, "t"},
    {"runs", "[RUN_ID]", "runs", NULL, ARG_RUN_ID, fuzz_keys, NULL, "r"},
    {"help", "[COMMAND]", "help", NULL, ARG_COMMAND, NULL, NULL, NULL},
    {"status", "", "status", NULL, ARG_NONE, NULL, NULL, "t"},
};

static void fuzz_check_words(const char *line, int n, const LexLine *l)
{
    int prev_end = 0, total = 0;
    for (int i = 0; i < l->n_words; i++) {
        const LexWord *w = &l->words[i];
        FUZZ_ASSERT(w->offset >= prev_end && w->len >= 1 && w->offset + w->len <= n);
        FUZZ_ASSERT((int)strlen(w->text) <= w->len);
        if (w->flags & LEXW_KEYVAL) {
            FUZZ_ASSERT(w->key && w->value);
            FUZZ_ASSERT(w->value_offset > w->offset && w->value_offset <= w->offset + w->len);
            FUZZ_ASSERT(line[w->value_offset - 1] == '=');
            FUZZ_ASSERT(strlen(w->key) + 1 + strlen(w->value) == strlen(w->text));
        } else {
            FUZZ_ASSERT(!w->key && w->value == w->text && w->value_offset == w->offset);
        }
        prev_end = w->offset + w->len;
    }
    for (int c = 0; c < l->n_cmds; c++) {
        const LexCommand *cmd = &l->cmds[c];
        FUZZ_ASSERT(cmd->argc >= 1 && cmd->argv >= l->words);
        FUZZ_ASSERT(cmd->argv + cmd->argc <= l->words + l->n_words);
        total += cmd->argc;
    }
    FUZZ_ASSERT(total == l->n_words);
}

static int fuzz_provider(void *ud, int what, const char *key, const char *prefix, char ***out)
{
    (void)ud;
    (void)what;
    (void)key;
    *out = malloc(2 * sizeof **out);
    if (!*out) return 0;
    (*out)[0] = strdup(prefix);
    (*out)[1] = strdup("x");
    return 2;
}

static void fuzz_editor(const uint8_t *data, size_t size)
{
    static LineEditor e; /* 12 KB: not on the stack */
    History h;
    history_init(&h, 4);
    history_add(&h, "train lr=1");
    history_add(&h, "runs r1");
    editor_init(&e, &h);
    size_t i = 0;
    while (i < size) {
        int key = 0;
        int used = editor_decode_key(data + i, (int)(size - i), &key);
        if (used == 0) break;
        i += (size_t)used;
        if (editor_key(&e, key) == EDIT_COMPLETE) {
            char **c;
            int nc, ws;
            if (cmdtable_complete(fuzz_table, 4, e.buf, e.cursor, fuzz_provider, NULL, &c, &nc,
                                  &ws) == LM_OK) {
                editor_complete_apply(&e, ws, c, nc);
                cmdtable_free_cands(c, nc);
            }
        }
        FUZZ_ASSERT(e.len >= 0 && e.len < EDITOR_MAX_LINE && e.buf[e.len] == 0);
        FUZZ_ASSERT((int)strlen(e.buf) == e.len); /* a NUL key is never inserted */
        FUZZ_ASSERT(e.cursor >= 0 && e.cursor <= e.len);
        FUZZ_ASSERT(e.cursor == e.len || (((unsigned char)e.buf[e.cursor]) & 0xC0) != 0x80);
        char out[4 * 16 + 1];
        int col;
        int n = editor_render(&e, 1 + (int)(i % 16), out, sizeof out, &col);
        FUZZ_ASSERT(n >= 0 && n < (int)sizeof out && col >= 0 && col <= (int)(i % 16));
    }
    history_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    if (!line) return 0;
    memcpy(line, data, size);
    line[size] = 0;
    int n = (int)strlen(line);
    char err[LM_ERR_LEN];
    for (int flags = 0; flags <= LEXER_PARTIAL; flags++) {
        LexLine l;
        int st = lexer_split(&l, line, flags, err);
        if (st == LM_OK) {
            fuzz_check_words(line, n, &l);
        } else {
            FUZZ_ASSERT(st == LM_EARG && flags == 0 && l.n_words == 0 && l.words == NULL);
            FUZZ_ASSERT(l.err_offset >= 0 && l.err_offset + l.err_len <= n);
            char buf[64];
            int want = lexer_caret(line, l.err_offset, l.err_len, buf, sizeof buf);
            FUZZ_ASSERT(want >= 0 && strlen(buf) < sizeof buf);
        }
        lexer_free(&l);
    }
    char **c;
    int nc, ws;
    int cursor = size ? data[0] % (n + 1) : 0;
    if (cmdtable_complete(fuzz_table, 4, line, cursor, fuzz_provider, NULL, &c, &nc, &ws) == LM_OK) {
        FUZZ_ASSERT(ws >= 0 && ws <= cursor);
        for (int i = 1; i < nc; i++) FUZZ_ASSERT(strcmp(c[i - 1], c[i]) < 0);
        cmdtable_free_cands(c, nc);
    }
    cmdtable_hint(fuzz_table, 4, line);
    cmdtable_dispatch(fuzz_table, 4, NULL, line, err);
    free(line);
    fuzz_editor(data, size);
    return 0;
}
