/* test_lexer.c — the command-line lexer: words, key=value, quotes and escapes, ';',
 * comments, byte offsets, partial mode, a table of bad inputs with their error columns,
 * and the caret formatter. Exact string comparisons throughout (no tolerances). */
#include "check.h"
#include "err.h"
#include "lexer.h"

#include <string.h>

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void test_words(void)
{
    char err[LM_ERR_LEN];
    LexLine l;
    const char *line = "  train lr=0.1 model=dispatcher  ";
    CHECK(lexer_split(&l, line, 0, err) == LM_OK, "split: %s", err);
    CHECK(l.n_cmds == 1 && l.n_words == 3, "cmds %d words %d", l.n_cmds, l.n_words);
    if (l.n_words == 3) {
        const LexWord *w = l.words;
        CHECK(streq(w[0].text, "train") && w[0].key == NULL && streq(w[0].value, "train"),
              "word 0 '%s'", w[0].text);
        CHECK(w[0].offset == 2 && w[0].len == 5, "word 0 span %d+%d", w[0].offset, w[0].len);
        CHECK(streq(w[1].key, "lr") && streq(w[1].value, "0.1") && streq(w[1].text, "lr=0.1"),
              "word 1 key '%s' value '%s'", w[1].key, w[1].value);
        CHECK(w[1].offset == 8 && w[1].len == 6 && w[1].value_offset == 11,
              "word 1 span %d+%d value at %d", w[1].offset, w[1].len, w[1].value_offset);
        CHECK(w[1].flags == LEXW_KEYVAL, "word 1 flags %d", w[1].flags);
        CHECK(streq(w[2].key, "model") && streq(w[2].value, "dispatcher"), "word 2");
        CHECK(l.cmds[0].argv == l.words && l.cmds[0].argc == 3, "argv");
        CHECK(l.cmds[0].offset == 2 && l.cmds[0].len == 29, "cmd span %d+%d",
              l.cmds[0].offset, l.cmds[0].len);
    }
    lexer_free(&l);
}

static void test_quotes(void)
{
    char err[LM_ERR_LEN];
    LexLine l;
    const char *line = "sample prompt=\"To be, or\" 'single \\n raw' x=\"a\\\"b\\\\c\\nd\\q\" a\"b c\"d e=";
    CHECK(lexer_split(&l, line, 0, err) == LM_OK, "split: %s", err);
    CHECK(l.n_words == 6, "words %d", l.n_words);
    if (l.n_words == 6) {
        const LexWord *w = l.words;
        CHECK(streq(w[1].key, "prompt") && streq(w[1].value, "To be, or"), "prompt '%s'",
              w[1].value);
        CHECK(w[1].flags == (LEXW_KEYVAL | LEXW_QUOTED), "prompt flags %d", w[1].flags);
        CHECK(w[1].offset == 7 && w[1].len == 18 && w[1].value_offset == 14,
              "prompt span %d+%d v%d", w[1].offset, w[1].len, w[1].value_offset);
        CHECK(streq(w[2].text, "single \\n raw") && w[2].key == NULL, "single '%s'", w[2].text);
        CHECK(streq(w[3].value, "a\"b\\c\nd\\q"), "escapes '%s'", w[3].value);
        CHECK(streq(w[4].text, "ab cd") && w[4].key == NULL, "joined '%s'", w[4].text);
        CHECK(streq(w[5].key, "e") && streq(w[5].value, ""), "empty value '%s'", w[5].value);
    }
    lexer_free(&l);
    /* '=' inside quotes does not make a key; a quoted ';' or '#' is text */
    CHECK(lexer_split(&l, "\"a=b\" 'x;y#z' k='v=w'", 0, err) == LM_OK, "split: %s", err);
    CHECK(l.n_words == 3 && l.n_cmds == 1, "words %d cmds %d", l.n_words, l.n_cmds);
    if (l.n_words == 3) {
        CHECK(l.words[0].key == NULL && streq(l.words[0].text, "a=b"), "quoted =");
        CHECK(streq(l.words[1].text, "x;y#z"), "quoted ; # '%s'", l.words[1].text);
        CHECK(streq(l.words[2].key, "k") && streq(l.words[2].value, "v=w"), "second =");
    }
    lexer_free(&l);
}

static void test_commands_and_comments(void)
{
    char err[LM_ERR_LEN];
    LexLine l;
    CHECK(lexer_split(&l, "set lr=1; ;train steps=5 ;status # runs; help", 0, err) == LM_OK,
          "split: %s", err);
    CHECK(l.n_cmds == 3 && l.n_words == 5, "cmds %d words %d", l.n_cmds, l.n_words);
    if (l.n_cmds == 3) {
        CHECK(l.cmds[0].argc == 2 && streq(l.cmds[0].argv[0].text, "set"), "cmd 0");
        CHECK(l.cmds[1].argc == 2 && streq(l.cmds[1].argv[1].key, "steps"), "cmd 1");
        CHECK(l.cmds[1].offset == 11 && l.cmds[1].len == 13, "cmd 1 span %d+%d",
              l.cmds[1].offset, l.cmds[1].len);
        CHECK(l.cmds[2].argc == 1 && streq(l.cmds[2].argv[0].text, "status"), "cmd 2");
    }
    lexer_free(&l);
    CHECK(lexer_split(&l, "lr=0.1#comment", 0, err) == LM_OK && l.n_words == 1 &&
          streq(l.words[0].value, "0.1"), "comment glued to a value");
    lexer_free(&l);
    const char *empty[] = {"", "   ", "# only a comment", ";;;", " ; # x"};
    for (int i = 0; i < 5; i++) {
        CHECK(lexer_split(&l, empty[i], 0, err) == LM_OK && l.n_cmds == 0 && l.n_words == 0,
              "empty line '%s'", empty[i]);
        lexer_free(&l);
    }
    /* UTF-8 passes through untouched; offsets are bytes */
    CHECK(lexer_split(&l, "sample prompt=\xc3\xa9t\xc3\xa9 x", 0, err) == LM_OK && l.n_words == 3,
          "utf8");
    if (l.n_words == 3) {
        CHECK(streq(l.words[1].value, "\xc3\xa9t\xc3\xa9") && l.words[1].len == 12 &&
              l.words[2].offset == 20, "utf8 span %d off %d", l.words[1].len, l.words[2].offset);
    }
    lexer_free(&l);
}

static void test_errors(void)
{
    static const struct {
        const char *line;
        int offset, len;
        const char *needle;
    } bad[] = {
        {"train prompt=\"To be", 13, 6, "unterminated double quote (opened at column 14)"},
        {"x 'abc", 2, 4, "unterminated single quote (opened at column 3)"},
        {"\"", 0, 1, "column 1"},
        {"a \"b\\\"", 2, 4, "unterminated double"},  /* the escaped quote does not close */
        {"train =5", 6, 2, "empty key before '=' at column 7"},
        {"set lr=1; =", 10, 1, "empty key"},
        {"''=x", 0, 4, "empty key"},
        {"ok; 'x\" y", 4, 5, "single quote"},
    };
    int nb = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < nb; i++) {
        char err[LM_ERR_LEN] = "";
        LexLine l;
        int st = lexer_split(&l, bad[i].line, 0, err);
        CHECK(st == LM_EARG, "bad[%d] '%s' status %d", i, bad[i].line, st);
        CHECK(strstr(err, bad[i].needle) != NULL, "bad[%d] message '%s'", i, err);
        CHECK(l.err_offset == bad[i].offset && l.err_len == bad[i].len,
              "bad[%d] span %d+%d, want %d+%d", i, l.err_offset, l.err_len, bad[i].offset,
              bad[i].len);
        CHECK(l.n_words == 0 && l.words == NULL, "bad[%d] emptied", i);
        lexer_free(&l);
    }
}

static void test_partial(void)
{
    LexLine l;
    CHECK(lexer_split(&l, "sample prompt=\"To be", LEXER_PARTIAL, NULL) == LM_OK &&
          l.n_words == 2, "partial open quote");
    if (l.n_words == 2) {
        CHECK(l.words[1].flags & LEXW_OPEN, "open flag");
        CHECK(streq(l.words[1].value, "To be") && l.words[1].len == 13, "open value '%s'",
              l.words[1].value);
    }
    lexer_free(&l);
    CHECK(lexer_split(&l, "x =", LEXER_PARTIAL, NULL) == LM_OK && l.n_words == 2 &&
          streq(l.words[1].key, ""), "partial empty key");
    lexer_free(&l);
}

static void test_caret(void)
{
    char buf[256];
    int n = lexer_caret("train lrr=1", 6, 3, buf, sizeof buf);
    CHECK(streq(buf, "  train lrr=1\n        ^^^\n"), "caret '%s'", buf);
    CHECK(n == (int)strlen(buf), "caret length %d", n);
    lexer_caret("\xc3\xa9t\xc3\xa9 x", 6, 1, buf, sizeof buf);
    CHECK(streq(buf, "  \xc3\xa9t\xc3\xa9 x\n      ^\n"), "utf8 caret '%s'", buf);
    lexer_caret("\ta b", 3, 0, buf, sizeof buf);
    CHECK(streq(buf, "  \ta b\n  \t  ^\n"), "tab caret '%s'", buf);
    lexer_caret("ab", 9, 4, buf, sizeof buf);
    CHECK(streq(buf, "  ab\n    ^\n"), "clamped caret '%s'", buf);
    char small[8];
    n = lexer_caret("train lrr=1", 6, 3, small, sizeof small);
    CHECK(n == 26 && strlen(small) == 7 && memcmp(small, "  train", 7) == 0,
          "truncated %d '%s'", n, small);
}

int main(void)
{
    test_words();
    test_quotes();
    test_commands_and_comments();
    test_errors();
    test_partial();
    test_caret();
    return check_summary();
}
