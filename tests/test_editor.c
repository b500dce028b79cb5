/* test_editor.c — the line editor driven by key codes (every key's effect, UTF-8 cursor
 * moves, kill ring, history navigation, completion apply, rendering with horizontal
 * scrolling, terminal key decoding) and the history module (cap, de-duplication, file
 * round trip with special characters). There is no test_history in tests/meson.build,
 * so history is tested here. Exact comparisons throughout. */
#include "check.h"
#include "editor.h"
#include "err.h"
#include "history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void keys(LineEditor *e, const char *s)
{
    for (; *s; s++) editor_key(e, (unsigned char)*s);
}

#define LINE_IS(e, text, cur)                                                         \
    CHECK(strcmp((e)->buf, (text)) == 0 && (e)->cursor == (cur) &&                   \
              (e)->len == (int)strlen(text),                                          \
          "line '%s' cursor %d, want '%s' cursor %d", (e)->buf, (e)->cursor, (text), (cur))

static void test_motion_and_delete(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    keys(&e, "hello world");
    LINE_IS(&e, "hello world", 11);
    editor_key(&e, EDITOR_KEY_HOME);
    LINE_IS(&e, "hello world", 0);
    editor_key(&e, EDITOR_KEY_LEFT); /* at the start: stays */
    LINE_IS(&e, "hello world", 0);
    editor_key(&e, EDITOR_KEY_RIGHT);
    editor_key(&e, EDITOR_KEY_CTRL_F);
    LINE_IS(&e, "hello world", 2);
    editor_key(&e, EDITOR_KEY_CTRL_B);
    LINE_IS(&e, "hello world", 1);
    editor_key(&e, EDITOR_KEY_END);
    LINE_IS(&e, "hello world", 11);
    editor_key(&e, EDITOR_KEY_RIGHT); /* at the end: stays */
    LINE_IS(&e, "hello world", 11);
    editor_key(&e, EDITOR_KEY_CTRL_A);
    LINE_IS(&e, "hello world", 0);
    editor_key(&e, EDITOR_KEY_CTRL_E);
    editor_key(&e, EDITOR_KEY_BACKSPACE);
    LINE_IS(&e, "hello worl", 10);
    editor_key(&e, EDITOR_KEY_CTRL_H);
    LINE_IS(&e, "hello wor", 9);
    editor_key(&e, EDITOR_KEY_HOME);
    editor_key(&e, EDITOR_KEY_DELETE);
    LINE_IS(&e, "ello wor", 0);
    CHECK(editor_key(&e, EDITOR_KEY_CTRL_D) == EDIT_NONE, "C-d deletes on a non-empty line");
    LINE_IS(&e, "llo wor", 0);
    editor_key(&e, EDITOR_KEY_BACKSPACE); /* at the start: nothing */
    LINE_IS(&e, "llo wor", 0);
    editor_key(&e, 'X');
    LINE_IS(&e, "Xllo wor", 1);
    /* non-printable keys do nothing */
    editor_key(&e, 7);
    editor_key(&e, 0x85);
    editor_key(&e, 0xD800);
    editor_key(&e, EDITOR_KEY_ESC);
    editor_key(&e, -1);
    LINE_IS(&e, "Xllo wor", 1);
}

static void test_words_and_kill(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    keys(&e, "train lr=0.1 model=msa");
    editor_key(&e, EDITOR_KEY_ALT_B);
    LINE_IS(&e, "train lr=0.1 model=msa", 19);
    editor_key(&e, EDITOR_KEY_ALT_B);
    LINE_IS(&e, "train lr=0.1 model=msa", 13);
    editor_key(&e, EDITOR_KEY_ALT_B);
    LINE_IS(&e, "train lr=0.1 model=msa", 11);
    editor_key(&e, EDITOR_KEY_ALT_F);
    LINE_IS(&e, "train lr=0.1 model=msa", 12);
    editor_key(&e, EDITOR_KEY_ALT_F);
    LINE_IS(&e, "train lr=0.1 model=msa", 18);
    editor_key(&e, EDITOR_KEY_CTRL_K);
    LINE_IS(&e, "train lr=0.1 model", 18);
    CHECK(strcmp(e.kill, "=msa") == 0, "kill '%s'", e.kill);
    editor_key(&e, EDITOR_KEY_CTRL_W);
    LINE_IS(&e, "train lr=0.1 ", 13);
    CHECK(strcmp(e.kill, "model") == 0, "C-w kill '%s'", e.kill);
    editor_key(&e, EDITOR_KEY_CTRL_W); /* skips the trailing space first */
    LINE_IS(&e, "train ", 6);
    editor_key(&e, EDITOR_KEY_CTRL_Y);
    LINE_IS(&e, "train lr=0.1 ", 13);
    editor_key(&e, EDITOR_KEY_CTRL_A);
    editor_key(&e, EDITOR_KEY_ALT_D);
    LINE_IS(&e, " lr=0.1 ", 0);
    CHECK(strcmp(e.kill, "train") == 0, "M-d kill '%s'", e.kill);
    editor_key(&e, EDITOR_KEY_END);
    editor_key(&e, EDITOR_KEY_ALT_BACKSPACE);
    LINE_IS(&e, " lr=0.", 6);
    CHECK(strcmp(e.kill, "1 ") == 0, "M-backspace kill '%s'", e.kill);
    editor_key(&e, EDITOR_KEY_LEFT);
    editor_key(&e, EDITOR_KEY_CTRL_U);
    LINE_IS(&e, ".", 0);
    CHECK(strcmp(e.kill, " lr=0") == 0, "C-u kill '%s'", e.kill);
    editor_key(&e, EDITOR_KEY_CTRL_Y);
    editor_key(&e, EDITOR_KEY_CTRL_Y);
    LINE_IS(&e, " lr=0 lr=0.", 10);
}

static void test_actions(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    CHECK(editor_key(&e, EDITOR_KEY_CTRL_D) == EDIT_EOF, "C-d on empty line");
    keys(&e, "ab");
    CHECK(editor_key(&e, EDITOR_KEY_TAB) == EDIT_COMPLETE, "tab");
    CHECK(editor_key(&e, EDITOR_KEY_CTRL_L) == EDIT_CLEAR, "C-l");
    CHECK(editor_key(&e, EDITOR_KEY_CTRL_C) == EDIT_INTERRUPT, "C-c");
    LINE_IS(&e, "ab", 2);
    CHECK(editor_key(&e, EDITOR_KEY_ENTER) == EDIT_SUBMIT, "enter");
    CHECK(editor_key(&e, EDITOR_KEY_CTRL_J) == EDIT_SUBMIT, "C-j");
    LINE_IS(&e, "ab", 2);
    editor_reset(&e);
    LINE_IS(&e, "", 0);
}

static void test_utf8(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    editor_key(&e, 0xE9);    /* é: 2 bytes */
    editor_key(&e, 0x4E2D);  /* 中: 3 bytes */
    editor_key(&e, 0x1F600); /* 😀: 4 bytes */
    editor_key(&e, 'x');
    LINE_IS(&e, "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80x", 10);
    editor_key(&e, EDITOR_KEY_LEFT);
    CHECK(e.cursor == 9, "left over x: %d", e.cursor);
    editor_key(&e, EDITOR_KEY_LEFT);
    CHECK(e.cursor == 5, "left over emoji: %d", e.cursor);
    editor_key(&e, EDITOR_KEY_LEFT);
    CHECK(e.cursor == 2, "left over CJK: %d", e.cursor);
    editor_key(&e, EDITOR_KEY_RIGHT);
    CHECK(e.cursor == 5, "right over CJK: %d", e.cursor);
    editor_key(&e, EDITOR_KEY_BACKSPACE);
    LINE_IS(&e, "\xc3\xa9\xf0\x9f\x98\x80x", 2);
    editor_key(&e, EDITOR_KEY_DELETE);
    LINE_IS(&e, "\xc3\xa9x", 2);
    editor_key(&e, EDITOR_KEY_ALT_B); /* non-ASCII counts as a word character */
    LINE_IS(&e, "\xc3\xa9x", 0);
    /* a full buffer ignores further input; set_line truncates at a code point */
    char big[EDITOR_MAX_LINE + 8];
    memset(big, 'a', sizeof big);
    big[EDITOR_MAX_LINE - 2] = (char)0xc3;
    big[EDITOR_MAX_LINE - 1] = (char)0xa9;
    big[EDITOR_MAX_LINE] = 0;
    editor_set_line(&e, big);
    CHECK(e.len == EDITOR_MAX_LINE - 2 && e.cursor == e.len, "truncated to %d", e.len);
    editor_key(&e, 'b');
    editor_key(&e, 0xE9);
    CHECK(e.len == EDITOR_MAX_LINE - 1 && e.buf[e.len - 1] == 'b', "full: len %d", e.len);
}

static void test_history_navigation(void)
{
    History h;
    history_init(&h, 10);
    history_add(&h, "first");
    history_add(&h, "second");
    LineEditor e;
    editor_init(&e, &h);
    keys(&e, "typing");
    editor_key(&e, EDITOR_KEY_UP);
    LINE_IS(&e, "second", 6);
    editor_key(&e, EDITOR_KEY_CTRL_P);
    LINE_IS(&e, "first", 5);
    editor_key(&e, EDITOR_KEY_UP); /* oldest: stays */
    LINE_IS(&e, "first", 5);
    editor_key(&e, EDITOR_KEY_DOWN);
    LINE_IS(&e, "second", 6);
    editor_key(&e, EDITOR_KEY_BACKSPACE); /* edit a recalled entry, then move away */
    editor_key(&e, EDITOR_KEY_CTRL_N);
    LINE_IS(&e, "typing", 6);
    editor_key(&e, EDITOR_KEY_DOWN); /* below the typed line: stays */
    LINE_IS(&e, "typing", 6);
    editor_key(&e, EDITOR_KEY_UP);
    LINE_IS(&e, "second", 6);
    CHECK(strcmp(history_get(&h, 1), "second") == 0, "history entry unchanged");
    history_add(&h, e.buf);
    editor_reset(&e);
    CHECK(e.hist_pos == h.n, "reset returns to the typed line");
    editor_key(&e, EDITOR_KEY_UP);
    LINE_IS(&e, "second", 6);
    history_free(&h);
}

static void test_complete_apply(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    char *one[] = {"train"};
    keys(&e, "tr");
    CHECK(editor_complete_apply(&e, 0, one, 1) == 0, "single: no list");
    LINE_IS(&e, "train ", 6);
    char *keys2[] = {"layers=", "lr="};
    keys(&e, "l");
    CHECK(editor_complete_apply(&e, 6, keys2, 2) == 1, "ambiguous: list");
    LINE_IS(&e, "train l", 7);
    char *vals[] = {"dispatcher", "dispatcher-mh"};
    editor_set_line(&e, "train model=d x");
    e.cursor = 13;
    CHECK(editor_complete_apply(&e, 12, vals, 2) == 1, "lcp: list");
    LINE_IS(&e, "train model=dispatcher x", 22);
    char *key[] = {"steps="};
    editor_set_line(&e, "train st");
    editor_complete_apply(&e, 6, key, 1);
    LINE_IS(&e, "train steps=", 12);
    char *path[] = {"data/"};
    editor_set_line(&e, "load da");
    editor_complete_apply(&e, 5, path, 1);
    LINE_IS(&e, "load data/", 10);
    char *msa[] = {"msa"};
    editor_set_line(&e, "m x");
    e.cursor = 1;
    editor_complete_apply(&e, 0, msa, 1); /* a space already follows */
    LINE_IS(&e, "msa x", 3);
    CHECK(editor_complete_apply(&e, 0, msa, 0) == 0, "no candidates");
    LINE_IS(&e, "msa x", 3);
    char *utf[] = {"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa0"}; /* common prefix ends mid code point */
    editor_set_line(&e, "");
    editor_complete_apply(&e, 0, utf, 2);
    LINE_IS(&e, "\xc3\xa9t", 3);
}

static void test_render(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    char out[64];
    int col;
    keys(&e, "abcdefghij");
    int n = editor_render(&e, 20, out, sizeof out, &col);
    CHECK(n == 10 && strcmp(out, "abcdefghij") == 0 && col == 10, "fits: '%s' col %d", out, col);
    editor_render(&e, 6, out, sizeof out, &col);
    CHECK(strcmp(out, "fghij") == 0 && col == 5, "scrolled: '%s' col %d", out, col);
    editor_key(&e, EDITOR_KEY_HOME);
    editor_render(&e, 6, out, sizeof out, &col);
    CHECK(strcmp(out, "abcdef") == 0 && col == 0, "home: '%s' col %d", out, col);
    for (int i = 0; i < 7; i++) editor_key(&e, EDITOR_KEY_RIGHT);
    editor_render(&e, 6, out, sizeof out, &col);
    CHECK(strcmp(out, "cdefgh") == 0 && col == 5, "right: '%s' col %d", out, col);
    editor_key(&e, EDITOR_KEY_LEFT);
    editor_render(&e, 6, out, sizeof out, &col);
    CHECK(strcmp(out, "cdefgh") == 0 && col == 4, "left keeps the view: '%s' col %d", out, col);
    editor_key(&e, EDITOR_KEY_CTRL_K); /* shorter line: scrolls back to fill the field */
    editor_render(&e, 6, out, sizeof out, &col);
    CHECK(strcmp(out, "bcdef") == 0 && col == 5, "after kill: '%s' col %d", out, col);
    editor_set_line(&e, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    editor_render(&e, 4, out, sizeof out, &col);
    CHECK(strcmp(out, "\xc3\xa9\xc3\xa9\xc3\xa9") == 0 && col == 3, "utf8 columns: col %d", col);
    editor_set_line(&e, "a\tb");
    editor_render(&e, 10, out, sizeof out, &col);
    CHECK(strcmp(out, "a b") == 0, "control chars as spaces: '%s'", out);
    editor_set_line(&e, "abcdefgh");
    e.cursor = 0;
    n = editor_render(&e, 8, out, 4, &col);
    CHECK(n == 3 && strcmp(out, "abc") == 0, "cap respected: '%s'", out);
}

static void test_decode(void)
{
    static const struct {
        const char *bytes;
        int used, key;
    } cases[] = {
        {"a", 1, 'a'}, {"\x7f", 1, EDITOR_KEY_BACKSPACE}, {"\r", 1, EDITOR_KEY_ENTER},
        {"\x1b[A", 3, EDITOR_KEY_UP}, {"\x1b[B", 3, EDITOR_KEY_DOWN},
        {"\x1b[C", 3, EDITOR_KEY_RIGHT}, {"\x1b[D", 3, EDITOR_KEY_LEFT},
        {"\x1b[H", 3, EDITOR_KEY_HOME}, {"\x1b[F", 3, EDITOR_KEY_END},
        {"\x1bOH", 3, EDITOR_KEY_HOME}, {"\x1bOF", 3, EDITOR_KEY_END},
        {"\x1b[1~", 4, EDITOR_KEY_HOME}, {"\x1b[4~", 4, EDITOR_KEY_END},
        {"\x1b[3~", 4, EDITOR_KEY_DELETE}, {"\x1b[1;5C", 6, EDITOR_KEY_ALT_F},
        {"\x1b[1;3D", 6, EDITOR_KEY_ALT_B}, {"\x1b" "b", 2, EDITOR_KEY_ALT_B},
        {"\x1b" "f", 2, EDITOR_KEY_ALT_F}, {"\x1b" "d", 2, EDITOR_KEY_ALT_D},
        {"\x1b\x7f", 2, EDITOR_KEY_ALT_BACKSPACE}, {"\x1b[5~", 4, -1},
        {"\xc3\xa9", 2, 0xE9}, {"\xe4\xb8\xad", 3, 0x4E2D}, {"\xf0\x9f\x98\x80", 4, 0x1F600},
        {"\xc0\x80", 1, -1} /* overlong lead byte */, {"\xed\xa0\x80", 3, -1} /* surrogate */,
        {"\xc3x", 1, -1} /* missing continuation */, {"\x1b", 0, 0}, {"\x1b[", 0, 0},
        {"\x1b[1;", 0, 0}, {"\xe4\xb8", 0, 0},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        int key = 0;
        int used = editor_decode_key((const unsigned char *)cases[i].bytes,
                                     (int)strlen(cases[i].bytes), &key);
        CHECK(used == cases[i].used && (used == 0 || key == cases[i].key),
              "decode case %d: used %d key %d, want %d %d", i, used, key, cases[i].used,
              cases[i].key);
    }
}

static void test_history_file(void)
{
    char err[LM_ERR_LEN];
    History h, g;
    history_init(&h, 3);
    history_add(&h, "a");
    history_add(&h, "a");  /* consecutive duplicate */
    history_add(&h, "   "); /* blank */
    history_add(&h, "b");
    history_add(&h, "a");
    CHECK(h.n == 3 && strcmp(history_get(&h, 0), "a") == 0 && strcmp(history_get(&h, 2), "a") == 0,
          "dedup consecutive only: n %d", h.n);
    history_add(&h, "c");
    CHECK(h.n == 3 && strcmp(history_get(&h, 0), "b") == 0 && strcmp(history_get(&h, 2), "c") == 0,
          "cap drops the oldest");
    CHECK(history_get(&h, 3) == NULL && history_get(&h, -1) == NULL, "out of range");
    history_free(&h);

    const char *special[] = {"sample prompt=\"To be,\\nor\"", "two\nlines\r\n", "back\\slash\\",
                             "\\n literal", "caf\xc3\xa9 ; # x", "tab\there"};
    int ns = (int)(sizeof special / sizeof special[0]);
    history_init(&h, 0);
    CHECK(h.max == HISTORY_DEFAULT_MAX && HISTORY_DEFAULT_MAX == 1000, "default cap");
    for (int i = 0; i < ns; i++) history_add(&h, special[i]);
    char path[64];
    snprintf(path, sizeof path, "/tmp/lmlab_test_history_%ld", (long)getpid());
    CHECK(history_save(&h, path, err) == LM_OK, "save: %s", err);
    history_init(&g, 0);
    CHECK(history_load(&g, path, err) == LM_OK, "load: %s", err);
    CHECK(g.n == ns, "round trip count %d", g.n);
    for (int i = 0; i < ns && i < g.n; i++)
        CHECK(strcmp(history_get(&g, i), special[i]) == 0, "round trip %d: '%s'", i,
              history_get(&g, i));
    FILE *f = fopen(path, "r");
    int lines = 0, c;
    while (f && (c = fgetc(f)) != EOF) lines += c == '\n';
    if (f) fclose(f);
    CHECK(lines == ns, "one line per entry: %d", lines);
    history_free(&g);
    history_free(&h);
    remove(path);
}

static void test_history_cap_and_errors(void)
{
    char err[LM_ERR_LEN], path[64];
    History h, g;
    snprintf(path, sizeof path, "/tmp/lmlab_test_history_cap_%ld", (long)getpid());
    /* the cap applies when adding and when loading 1200 entries */
    history_init(&h, 0);
    for (int i = 0; i < 1200; i++) {
        char s[32];
        snprintf(s, sizeof s, "cmd %d", i);
        history_add(&h, s);
    }
    CHECK(h.n == 1000 && strcmp(history_get(&h, 0), "cmd 200") == 0, "cap 1000: n %d", h.n);
    CHECK(history_save(&h, path, err) == LM_OK, "save big: %s", err);
    history_init(&g, 0);
    CHECK(history_load(&g, path, err) == LM_OK && g.n == 1000 &&
          strcmp(history_get(&g, 999), "cmd 1199") == 0, "reload big: n %d", g.n);
    history_free(&g);
    history_free(&h);
    remove(path);
    /* a missing file is an empty history; an unwritable path is LM_EIO */
    history_init(&g, 0);
    CHECK(history_load(&g, path, err) == LM_OK && g.n == 0, "missing file");
    CHECK(history_save(&g, "/nonexistent-dir/x/history", err) == LM_EIO && strlen(err) > 0,
          "unwritable: %s", err);
    history_free(&g);
}

/* A history path that is not a regular file is never opened in a blocking way, never
 * replaced, and turns history off; a symbolic link is followed (the link stays). */
static void test_history_special_files(void)
{
    char err[LM_ERR_LEN], dir[64], fifo[96], link[96], target[96];
    snprintf(dir, sizeof dir, "/tmp/lmlab_test_hist_dir_%ld", (long)getpid());
    CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    History h;
    history_init(&h, 0);
    CHECK(history_load(&h, fifo, err) == LM_EFORMAT && h.off && strstr(err, "a FIFO"),
          "FIFO refused without blocking: %s", err);
    history_add(&h, "help");
    CHECK(history_save(&h, fifo, err) == LM_OK, "save with history off is a no-op");
    struct stat sb;
    CHECK(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO is still a FIFO");
    history_free(&h);
    history_init(&h, 0);
    CHECK(history_load(&h, dir, err) == LM_EFORMAT && h.off && strstr(err, "a directory"),
          "directory refused: %s", err);
    history_free(&h);
    /* a FIFO that appears after loading is not replaced either */
    history_init(&h, 0);
    history_add(&h, "runs");
    CHECK(history_save(&h, fifo, err) == LM_EFORMAT && h.off, "save onto a FIFO refused");
    CHECK(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO survived the save");
    history_free(&h);
    /* a symbolic link to a regular file: the target gets the history, the link stays */
    snprintf(target, sizeof target, "%s/real", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    FILE *f = fopen(target, "w");
    if (f) fclose(f);
    CHECK(symlink("real", link) == 0, "symlink");
    history_init(&h, 0);
    history_add(&h, "status");
    CHECK(history_save(&h, link, err) == LM_OK, "save through a link: %s", err);
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "the link is still a link");
    History g;
    history_init(&g, 0);
    CHECK(history_load(&g, target, err) == LM_OK && g.n == 1 &&
          strcmp(history_get(&g, 0), "status") == 0, "the target holds the history");
    history_free(&g);
    history_free(&h);
    remove(fifo);
    remove(link);
    remove(target);
    rmdir(dir);
}

/* Issue 27: a pre-filled filter is selected: typing replaces it (it was appended to:
 * "lr<0.005lrr<1"), Backspace empties it, an arrow keeps it for editing. */
static void test_select_all(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    editor_set_line(&e, "lr<0.005");
    editor_select_all(&e);
    editor_key(&e, 'l');
    editor_key(&e, 'r');
    CHECK(strcmp(e.buf, "lr") == 0 && e.cursor == 2, "typing replaces the selection: '%s'", e.buf);
    editor_set_line(&e, "lr<0.005");
    editor_select_all(&e);
    editor_key(&e, EDITOR_KEY_BACKSPACE);
    CHECK(e.len == 0, "backspace empties the selection: '%s'", e.buf);
    editor_set_line(&e, "lr<0.005");
    editor_select_all(&e);
    editor_key(&e, EDITOR_KEY_LEFT);
    editor_key(&e, '1');
    CHECK(strcmp(e.buf, "lr<0.0015") == 0, "an arrow keeps the text for editing: '%s'", e.buf);
    editor_select_all(&e);
    editor_key(&e, EDITOR_KEY_ENTER);
    CHECK(strcmp(e.buf, "lr<0.0015") == 0, "Enter keeps the selected text: '%s'", e.buf);
}

/* A line that does not fit is marked cut (its callers refuse it on Enter: what is typed
 * past the room is gone), and a fresh line is not. */
static void test_cut(void)
{
    LineEditor e;
    editor_init(&e, NULL);
    for (int i = 0; i < EDITOR_MAX_LINE - 1; i++)
        editor_key(&e, 'z');
    CHECK(!e.cut && e.len == EDITOR_MAX_LINE - 1, "a full line is whole: cut %d, %d bytes",
          e.cut, e.len);
    keys(&e, "END");
    CHECK(e.cut && e.len == EDITOR_MAX_LINE - 1 && !strstr(e.buf, "END"),
          "typing past the room marks the line cut: cut %d, %d bytes", e.cut, e.len);
    editor_reset(&e);
    keys(&e, "ab");
    CHECK(!e.cut, "a new line is not cut");
    char *big = malloc(EDITOR_MAX_LINE + 10);
    memset(big, 'q', EDITOR_MAX_LINE + 9);
    big[EDITOR_MAX_LINE + 9] = 0;
    editor_set_line(&e, big);
    CHECK(e.cut, "a set line that does not fit is cut");
    editor_set_line(&e, "short");
    CHECK(!e.cut, "a set line that fits is not");
    free(big);
}

int main(void)
{
    test_cut();
    test_select_all();
    test_history_special_files();
    test_motion_and_delete();
    test_words_and_kill();
    test_actions();
    test_utf8();
    test_history_navigation();
    test_complete_apply();
    test_render();
    test_decode();
    test_history_file();
    test_history_cap_and_errors();
    return check_summary();
}
