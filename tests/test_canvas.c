/* test_canvas.c — the off-screen Canvas: put/text clipping at every edge, UTF-8
 * decoding (multi-byte, invalid, truncated), truncation markers, frames in Unicode and
 * ASCII, the text dump, resize, and canvas_blit into a real ncursesw window opened on
 * /dev/null (skipped with a message when no terminfo entry is found). */
#define NCURSES_WIDECHAR 1
#include "canvas.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "check.h"

static int ascii_only(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return 0;
    return 1;
}

/* Row y of the canvas as UTF-8 (buf of n bytes). */
static const char *row(const Canvas *c, int y, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int x = 0; x < canvas_width(c); x++) {
        const char *g = canvas_glyph(c, x, y);
        size_t len = strlen(g);
        if (k + len + 1 > n)
            break;
        memcpy(buf + k, g, len);
        k += len;
        buf[k] = '\0';
    }
    return buf;
}

static void test_put_clip(void)
{
    Canvas *c = canvas_create(10, 3);
    CHECK(c != NULL, "create");
    CHECK(canvas_width(c) == 10 && canvas_height(c) == 3, "size");
    CHECK(strcmp(canvas_glyph(c, 0, 0), " ") == 0, "blank cells are spaces");
    canvas_put(c, -1, 0, "x", 1, 0);
    canvas_put(c, 10, 0, "x", 1, 0);
    canvas_put(c, 0, -1, "x", 1, 0);
    canvas_put(c, 0, 3, "x", 1, 0);
    char *d = canvas_dump(c);
    CHECK(d && strcmp(d, "          \n          \n          \n") == 0, "out-of-range puts ignored");
    free(d);
    canvas_put(c, 9, 2, "é", 3, UI_ATTR_BOLD);
    CHECK(strcmp(canvas_glyph(c, 9, 2), "é") == 0, "corner cell set");
    CHECK(canvas_color(c, 9, 2) == 3 && canvas_attr(c, 9, 2) == UI_ATTR_BOLD, "colour and attr");
    CHECK(canvas_color(c, 10, 2) == -1 && canvas_attr(c, -1, 0) == -1, "outside: -1");
    CHECK(strcmp(canvas_glyph(c, 10, 0), "") == 0, "outside glyph is empty");
    canvas_put(c, 0, 0, "→x", 0, 0);
    CHECK(strcmp(canvas_glyph(c, 0, 0), "→") == 0, "only the first code point is kept");
    canvas_put(c, 1, 0, "\x01", 0, 0);
    CHECK(strcmp(canvas_glyph(c, 1, 0), "?") == 0, "a control glyph shows '?'");
    canvas_put(c, 2, 0, "\xff", 0, 0);
    CHECK(strcmp(canvas_glyph(c, 2, 0), "?") == 0, "an invalid byte shows '?'");
    canvas_put(c, 3, 0, NULL, 0, 0);
    CHECK(strcmp(canvas_glyph(c, 3, 0), " ") == 0, "NULL glyph is a space");
    canvas_put(c, 4, 0, "\xF0\x9F\x98\x80", 0, 0);
    CHECK(strcmp(canvas_glyph(c, 4, 0), "\xF0\x9F\x98\x80") == 0, "4-byte glyph kept");
    canvas_clear(c);
    CHECK(strcmp(canvas_glyph(c, 9, 2), " ") == 0 && canvas_attr(c, 9, 2) == 0, "clear");
    canvas_destroy(c);
    canvas_destroy(NULL);
}

static void test_text(void)
{
    Canvas *c = canvas_create(10, 3);
    char buf[128];
    int n = canvas_text(c, 7, 0, 10, "hello", 0, 0);
    CHECK(n == 5, "columns occupied counts the clipped part: %d", n);
    CHECK(strcmp(row(c, 0, buf, sizeof buf), "       hel") == 0, "right clip: '%s'", buf);
    n = canvas_text(c, -2, 1, 10, "hello", 0, 0);
    CHECK(n == 5 && strcmp(row(c, 1, buf, sizeof buf), "llo       ") == 0, "left clip: '%s'",
          buf);
    n = canvas_text(c, 0, 2, 3, "hello", 0, 0);
    CHECK(n == 3 && strcmp(row(c, 2, buf, sizeof buf), "hel       ") == 0, "max_w: '%s'", buf);
    CHECK(canvas_text(c, 0, 5, 10, "below", 0, 0) == 5, "off-canvas row still measured");
    CHECK(canvas_text(c, 0, 0, 0, "x", 0, 0) == 0 && canvas_text(c, 0, 0, 5, NULL, 0, 0) == 0,
          "max_w 0 and NULL draw nothing");

    canvas_clear(c);
    n = canvas_text(c, 0, 0, 10, "h\xC3\xA9llo\xE2\x86\x92!", 2, UI_ATTR_DIM);
    CHECK(n == 7, "UTF-8: one column per code point: %d", n);
    CHECK(strcmp(canvas_glyph(c, 1, 0), "é") == 0 && strcmp(canvas_glyph(c, 5, 0), "→") == 0,
          "multi-byte glyphs in their cells");
    CHECK(canvas_color(c, 5, 0) == 2 && canvas_attr(c, 5, 0) == UI_ATTR_DIM, "text colour");
    n = canvas_text(c, 0, 1, 10, "a\xE2\x82", 0, 0);   /* truncated 3-byte sequence */
    CHECK(n == 3 && strcmp(row(c, 1, buf, sizeof buf), "a??       ") == 0,
          "a truncated sequence shows '?' per byte: '%s'", buf);
    n = canvas_text(c, 0, 2, 10, "a\tb\nc", 0, 0);
    CHECK(n == 3 && strcmp(row(c, 2, buf, sizeof buf), "a b       ") == 0,
          "tab drawn as a space, newline stops: '%s'", buf);
    CHECK(canvas_utf8_width("h\xC3\xA9\xE2\x86\x92") == 3, "utf8 width");
    CHECK(canvas_utf8_width("a\xE2\x82") == 3, "utf8 width counts invalid bytes");
    CHECK(canvas_utf8_len("\xC0\x80", 2) == 0, "overlong rejected");
    CHECK(canvas_utf8_len("\xED\xA0\x80", 3) == 0, "surrogate rejected");
    CHECK(canvas_utf8_len("\xE2\x86\x92", 2) == 0, "incomplete is 0");

    canvas_clear(c);
    n = canvas_text_fit(c, 0, 0, 4, "abcdef", 0, 0, 1);
    CHECK(n == 4 && strcmp(row(c, 0, buf, sizeof buf), "abc…      ") == 0, "ellipsis: '%s'", buf);
    n = canvas_text_fit(c, 0, 1, 4, "abcdef", 0, 0, 0);
    CHECK(n == 4 && strcmp(row(c, 1, buf, sizeof buf), "abc~      ") == 0, "ASCII '~': '%s'", buf);
    n = canvas_text_fit(c, 0, 2, 4, "abcd", 0, 0, 1);
    CHECK(n == 4 && strcmp(row(c, 2, buf, sizeof buf), "abcd      ") == 0, "exact fit kept: '%s'",
          buf);
    canvas_destroy(c);
}

static void test_box_dump(void)
{
    Canvas *c = canvas_create(8, 4);
    canvas_box(c, (Rect){0, 0, 8, 4}, "title", 0, 1);
    char *d = canvas_dump(c);
    const char *want = "┌ tit… ┐\n│      │\n│      │\n└──────┘\n";
    CHECK(d && strcmp(d, want) == 0, "unicode box:\n%s", d ? d : "");
    free(d);
    CHECK(canvas_attr(c, 2, 0) == UI_ATTR_BOLD, "title bold");
    canvas_clear(c);
    canvas_box(c, (Rect){0, 0, 8, 4}, "ab", 1, 0);
    d = canvas_dump(c);
    CHECK(d && strcmp(d, "+ ab --+\n|      |\n|      |\n+------+\n") == 0, "ASCII box:\n%s",
          d ? d : "");
    CHECK(d && ascii_only(d), "ASCII box has no byte >= 0x80");
    free(d);
    CHECK(canvas_color(c, 0, 0) == UI_COLOR_ACCENT, "focused frame in accent colour");
    canvas_clear(c);
    canvas_box(c, (Rect){5, 2, 6, 4}, "x", 1, 1);   /* partly outside */
    CHECK(strcmp(canvas_glyph(c, 5, 2), "┏") == 0, "focused unicode frame is heavy");
    canvas_box(c, (Rect){0, 0, 1, 1}, "x", 0, 1);   /* too small: nothing */
    CHECK(strcmp(canvas_glyph(c, 0, 0), " ") == 0, "1x1 box draws nothing");
    Rect in = canvas_rect_inner((Rect){2, 3, 10, 5});
    CHECK(in.x == 3 && in.y == 4 && in.w == 8 && in.h == 3, "inner rect");
    in = canvas_rect_inner((Rect){0, 0, 1, 1});
    CHECK(in.w == 0 && in.h == 0, "inner of tiny rect is empty");

    canvas_clear(c);
    canvas_fill(c, (Rect){6, 3, 5, 5}, "#", 1, 0);
    canvas_mark(c, (Rect){-3, -3, 5, 4}, -1, UI_ATTR_REVERSE);
    d = canvas_dump(c);
    CHECK(d && strcmp(d, "        \n        \n        \n      ##\n") == 0, "fill clipped:\n%s",
          d ? d : "");
    free(d);
    CHECK(canvas_attr(c, 1, 0) == UI_ATTR_REVERSE && canvas_attr(c, 2, 0) == 0, "mark clipped");

    CHECK(canvas_resize(c, 3, 1) == 0, "resize");
    d = canvas_dump(c);
    CHECK(d && strcmp(d, "   \n") == 0, "resized and blank");
    free(d);
    CHECK(canvas_resize(c, 0, 0) == 0, "resize to empty");
    d = canvas_dump(c);
    CHECK(d && d[0] == '\0', "empty dump");
    free(d);
    canvas_put(c, 0, 0, "x", 0, 0);   /* no crash */
    canvas_text(c, 0, 0, 5, "x", 0, 0);
    canvas_box(c, (Rect){0, 0, 5, 5}, "t", 0, 1);
    canvas_destroy(c);
    c = canvas_create(-4, 2);
    CHECK(c && canvas_width(c) == 0, "negative size is 0");
    canvas_destroy(c);
}

/* canvas_blit into a real curses window: glyphs, attributes, colour pairs. */
static void test_blit(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "C.utf8")) {
        printf("  blit: skipped (no UTF-8 locale)\n");
        return;
    }
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
    if (!scr) {
        printf("  blit: skipped (no terminfo entry for xterm-256color)\n");
        if (out)
            fclose(out);
        if (in)
            fclose(in);
        return;
    }
    start_color();
    canvas_init_colors();
    Canvas *c = canvas_create(12, 3);
    canvas_box(c, (Rect){0, 0, 12, 3}, "é", 0, 1);
    canvas_text(c, 1, 1, 10, "ab", UI_COLOR_ERROR, UI_ATTR_BOLD | UI_ATTR_REVERSE);
    WINDOW *w = newwin(3, 8, 0, 0);   /* narrower than the canvas: clipped */
    CanvasCaps uc = {1, 1}, ascii = {0, 1}, mono = {1, 0};
    canvas_blit(c, w, &uc);
    cchar_t cc;
    wchar_t wc[CCHARW_MAX + 1];
    attr_t a;
    short pair;
    CHECK(mvwin_wch(w, 0, 0, &cc) == OK && getcchar(&cc, wc, &a, &pair, NULL) == OK &&
              wc[0] == L'┌', "corner blitted");
    CHECK(mvwin_wch(w, 0, 2, &cc) == OK && getcchar(&cc, wc, &a, &pair, NULL) == OK &&
              wc[0] == L'é', "UTF-8 title glyph blitted");
    CHECK(mvwin_wch(w, 1, 2, &cc) == OK && getcchar(&cc, wc, &a, &pair, NULL) == OK &&
              wc[0] == L'b' && (a & A_BOLD) && (a & A_REVERSE), "attributes blitted");
    CHECK(!has_colors() || pair == UI_COLOR_ERROR, "colour pair blitted: %d", pair);
    canvas_blit(c, w, &ascii);
    CHECK(mvwin_wch(w, 0, 0, &cc) == OK && getcchar(&cc, wc, &a, &pair, NULL) == OK &&
              wc[0] == L'?', "ASCII blit maps non-ASCII to '?'");
    canvas_blit(c, w, &mono);   /* NO_COLOR: attributes kept, no colour pair */
    CHECK(mvwin_wch(w, 1, 2, &cc) == OK && getcchar(&cc, wc, &a, &pair, NULL) == OK &&
              wc[0] == L'b' && (a & A_BOLD) && pair == 0, "monochrome blit: pair %d", pair);
    canvas_blit(c, NULL, &uc);   /* no crash */
    delwin(w);
    canvas_destroy(c);
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
}

/* Issue 21: double-width glyphs (CJK, emoji) are measured by wcwidth and take two cells,
 * so the text after them keeps its columns and nothing at the end is lost. */
static void test_wide(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "C.utf8")) {
        printf("no UTF-8 locale: wide-glyph checks skipped\n");
        return;
    }
    Canvas *c = canvas_create(8, 3);
    char buf[128];
    const char *cjk = "\xE6\x97\xA5\xE6\x9C\xAC";   /* 日本: 2 glyphs, 4 columns */
    CHECK(canvas_utf8_width(cjk) == 4, "width of two CJK glyphs: %d", canvas_utf8_width(cjk));
    CHECK(canvas_utf8_width("\xF0\x9F\x98\x80") == 2, "an emoji takes two columns");
    int n = canvas_text(c, 0, 0, 8, "\xE6\x97\xA5\xE6\x9C\xAC" "abcd", 0, 0);
    CHECK(n == 8 && strcmp(row(c, 0, buf, sizeof buf), "日本abcd") == 0,
          "two wide glyphs then 4 ASCII fill 8 columns, nothing lost: %d '%s'", n, buf);
    CHECK(strcmp(canvas_glyph(c, 4, 0), "a") == 0, "'a' in column 4");
    n = canvas_text(c, 0, 1, 3, cjk, 0, 0);
    CHECK(n == 2 && strcmp(row(c, 1, buf, sizeof buf), "日      ") == 0,
          "a wide glyph that does not fit is not drawn: %d '%s'", n, buf);
    canvas_put(c, 1, 0, "x", 0, 0);   /* over the right half of 日 */
    CHECK(strcmp(row(c, 0, buf, sizeof buf), " x本abcd") == 0, "half overwritten: '%s'", buf);
    canvas_put(c, 7, 2, "\xE6\x97\xA5", 0, 0);   /* last column: no room */
    CHECK(strcmp(canvas_glyph(c, 7, 2), " ") == 0, "a wide glyph in the last column: a space");
    n = canvas_text_fit(c, 0, 2, 5, "\xE6\x97\xA5\xE6\x9C\xAC\xE6\x97\xA5", 0, 0, 1);
    CHECK(strstr(row(c, 2, buf, sizeof buf), "…") != NULL && n <= 5, "cut wide text ends in an "
          "ellipsis within max_w: %d '%s'", n, buf);
    char *d = canvas_dump(c);
    CHECK(d && strncmp(d, " x本abcd\n", strlen(" x本abcd\n")) == 0, "dump: '%s'", d ? d : "");
    free(d);
    canvas_destroy(c);
    setlocale(LC_ALL, "C");
}

int main(void)
{
    test_put_clip();
    test_text();
    test_wide();
    test_box_dump();
    test_blit();
    return check_summary();
}
