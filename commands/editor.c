/* editor.c — the key-driven line editor (see editor.h): editing on a fixed buffer,
 * rendering with horizontal scrolling and terminal key decoding (bytes to key codes, no
 * terminal touched). Not a curses client: the dashboard draws what editor_render gives.
 * Not the plain-mode readline over raw termios (editor_readline.c). */
#include "editor.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffer primitives ---------------------------------------------------------- */

static int editor_is_cont(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

static int editor_prev(const LineEditor *e, int i)
{
    if (i <= 0) return 0;
    i--;
    while (i > 0 && editor_is_cont(e->buf[i])) i--;
    return i;
}

static int editor_next(const LineEditor *e, int i)
{
    if (i >= e->len) return e->len;
    i++;
    while (i < e->len && editor_is_cont(e->buf[i])) i++;
    return i;
}

/* Word characters for M-b/M-f/M-d: letters, digits, '_' and any non-ASCII byte. */
static int editor_is_word(char c)
{
    unsigned char u = (unsigned char)c;
    return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
           (u >= 'A' && u <= 'Z') || u == '_';
}

static int editor_word_left(const LineEditor *e, int i)
{
    while (i > 0 && !editor_is_word(e->buf[i - 1])) i--;
    while (i > 0 && editor_is_word(e->buf[i - 1])) i--;
    return i;
}

static int editor_word_right(const LineEditor *e, int i)
{
    while (i < e->len && !editor_is_word(e->buf[i])) i++;
    while (i < e->len && editor_is_word(e->buf[i])) i++;
    return i;
}

/* Removes [a, b); when kill is set the removed bytes become the kill-ring entry. */
static void editor_delete(LineEditor *e, int a, int b, int kill)
{
    if (a >= b) return;
    if (kill) {
        memcpy(e->kill, e->buf + a, (size_t)(b - a));
        e->kill[b - a] = 0;
    }
    memmove(e->buf + a, e->buf + b, (size_t)(e->len - b + 1));
    e->len -= b - a;
    if (e->cursor >= b) e->cursor -= b - a;
    else if (e->cursor > a) e->cursor = a;
}

void editor_init(LineEditor *e, History *history)
{
    memset(e, 0, sizeof *e);
    e->history = history;
    editor_reset(e);
}

void editor_reset(LineEditor *e)
{
    e->buf[0] = 0;
    e->len = e->cursor = e->scroll = 0;
    e->selected = 0;
    e->cut = 0;
    e->saved[0] = 0;
    e->hist_pos = e->history ? e->history->n : 0;
}

void editor_set_line(LineEditor *e, const char *text)
{
    size_t n = strlen(text);
    e->cut = n > EDITOR_MAX_LINE - 1;
    if (n > EDITOR_MAX_LINE - 1) {
        n = EDITOR_MAX_LINE - 1;
        while (n > 0 && editor_is_cont(text[n])) n--;
    }
    memcpy(e->buf, text, n);
    e->buf[n] = 0;
    e->len = e->cursor = (int)n;
    e->selected = 0;
}

/* Inserts n bytes at the cursor and moves past them. Returns 0, or -1 (nothing
 * inserted) when they do not fit. */
static int editor_insert(LineEditor *e, const char *s, int n)
{
    if (n <= 0) return 0;
    if (e->len + n > EDITOR_MAX_LINE - 1) {
        e->cut = 1;   /* what was typed is not all there: Enter refuses the line */
        return -1;
    }
    memmove(e->buf + e->cursor + n, e->buf + e->cursor, (size_t)(e->len - e->cursor + 1));
    memcpy(e->buf + e->cursor, s, (size_t)n);
    e->len += n;
    e->cursor += n;
    return 0;
}

/* UTF-8 encoding of a printable code point; 0 when cp is not one. */
static int editor_encode(int cp, char *out)
{
    if (cp < 32 || cp == 127 || (cp >= 0x80 && cp < 0xA0) || (cp >= 0xD800 && cp < 0xE000) ||
        cp > 0x10FFFF)
        return 0;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- keys ----------------------------------------------------------------------- */

static void editor_history_move(LineEditor *e, int dir)
{
    History *h = e->history;
    if (!h) return;
    if (e->hist_pos > h->n) e->hist_pos = h->n; /* the history shrank meanwhile */
    int to = e->hist_pos + dir;
    if (to < 0 || to > h->n) return;
    if (e->hist_pos == h->n) memcpy(e->saved, e->buf, (size_t)e->len + 1);
    e->hist_pos = to;
    editor_set_line(e, to == h->n ? e->saved : history_get(h, to));
}

/* Keys that only move the cursor. Returns 1 when key was one of them. */
static int editor_move_key(LineEditor *e, int key)
{
    switch (key) {
    case EDITOR_KEY_LEFT: case EDITOR_KEY_CTRL_B: e->cursor = editor_prev(e, e->cursor); break;
    case EDITOR_KEY_RIGHT: case EDITOR_KEY_CTRL_F: e->cursor = editor_next(e, e->cursor); break;
    case EDITOR_KEY_HOME: case EDITOR_KEY_CTRL_A: e->cursor = 0; break;
    case EDITOR_KEY_END: case EDITOR_KEY_CTRL_E: e->cursor = e->len; break;
    case EDITOR_KEY_ALT_B: e->cursor = editor_word_left(e, e->cursor); break;
    case EDITOR_KEY_ALT_F: e->cursor = editor_word_right(e, e->cursor); break;
    case EDITOR_KEY_UP: case EDITOR_KEY_CTRL_P: editor_history_move(e, -1); break;
    case EDITOR_KEY_DOWN: case EDITOR_KEY_CTRL_N: editor_history_move(e, +1); break;
    default: return 0;
    }
    return 1;
}

/* Keys that delete, kill or yank. Returns 1 when key was one of them. */
static int editor_edit_key(LineEditor *e, int key)
{
    int c = e->cursor;
    switch (key) {
    case EDITOR_KEY_BACKSPACE: case EDITOR_KEY_CTRL_H: editor_delete(e, editor_prev(e, c), c, 0); break;
    case EDITOR_KEY_DELETE: case EDITOR_KEY_CTRL_D: editor_delete(e, c, editor_next(e, c), 0); break;
    case EDITOR_KEY_CTRL_K: editor_delete(e, c, e->len, 1); break;
    case EDITOR_KEY_CTRL_U: editor_delete(e, 0, c, 1); break;
    case EDITOR_KEY_CTRL_W: {
        int a = c;
        while (a > 0 && (e->buf[a - 1] == ' ' || e->buf[a - 1] == '\t')) a--;
        while (a > 0 && e->buf[a - 1] != ' ' && e->buf[a - 1] != '\t') a--;
        editor_delete(e, a, c, 1);
        break;
    }
    case EDITOR_KEY_ALT_D: editor_delete(e, c, editor_word_right(e, c), 1); break;
    case EDITOR_KEY_ALT_BACKSPACE: editor_delete(e, editor_word_left(e, c), c, 1); break;
    case EDITOR_KEY_CTRL_Y: editor_insert(e, e->kill, (int)strlen(e->kill)); break;
    default: return 0;
    }
    return 1;
}

void editor_select_all(LineEditor *e)
{
    e->cursor = e->len;
    e->selected = e->len > 0;
}

int editor_key(LineEditor *e, int key)
{
    if (e->selected) {   /* a typed character or a deletion replaces the selected line */
        e->selected = 0;
        int printable = key >= ' ' && key != EDITOR_KEY_BACKSPACE && key < 0x110000;
        if (printable || key == EDITOR_KEY_BACKSPACE || key == EDITOR_KEY_CTRL_H ||
            key == EDITOR_KEY_DELETE) {
            e->len = e->cursor = 0;
            e->buf[0] = 0;
            if (!printable)
                return EDIT_NONE;
        }
    }
    switch (key) {
    case EDITOR_KEY_ENTER: case EDITOR_KEY_CTRL_J: return EDIT_SUBMIT;
    case EDITOR_KEY_TAB: return EDIT_COMPLETE;
    case EDITOR_KEY_CTRL_C: return EDIT_INTERRUPT;
    case EDITOR_KEY_CTRL_L: return EDIT_CLEAR;
    case EDITOR_KEY_CTRL_Z: return EDIT_SUSPEND;
    case EDITOR_KEY_CTRL_D:
        if (e->len == 0) return EDIT_EOF;
        break;
    default: break;
    }
    if (editor_move_key(e, key) || editor_edit_key(e, key)) return EDIT_NONE;
    char u[4];
    int n = editor_encode(key, u);
    if (n) editor_insert(e, u, n);
    return EDIT_NONE;
}

int editor_complete_apply(LineEditor *e, int word_start, char *const *cands, int n)
{
    if (n <= 0 || word_start < 0 || word_start > e->cursor) return 0;
    size_t typed = (size_t)(e->cursor - word_start);
    size_t lcp = strlen(cands[0]);
    for (int i = 1; i < n; i++) {
        size_t k = 0;
        while (k < lcp && cands[i][k] == cands[0][k]) k++;
        lcp = k;
    }
    while (lcp > 0 && editor_is_cont(cands[0][lcp])) lcp--; /* whole code points */
    if (n > 1 && lcp <= typed) return 1;
    if ((size_t)e->len - typed + lcp + 1 > EDITOR_MAX_LINE - 1) return n > 1; /* no room */
    editor_delete(e, word_start, e->cursor, 0);
    editor_insert(e, cands[0], (int)lcp);
    if (n == 1 && lcp > 0) {
        char last = cands[0][lcp - 1];
        if (last != '=' && last != '/' && e->buf[e->cursor] != ' ') editor_insert(e, " ", 1);
    }
    return n > 1;
}

/* ---- rendering ------------------------------------------------------------------ */

/* Code points in [a, b). */
static int editor_cols(const LineEditor *e, int a, int b)
{
    int n = 0;
    for (int i = a; i < b; i++) n += !editor_is_cont(e->buf[i]);
    return n;
}

int editor_render(LineEditor *e, int width, char *out, size_t cap, int *cursor_col)
{
    if (width < 1) width = 1;
    if (e->scroll > e->cursor || e->scroll > e->len) e->scroll = e->cursor;
    while (e->scroll > 0 && editor_is_cont(e->buf[e->scroll])) e->scroll--;
    /* cursor at most width-1 columns right of the start */
    int cc = editor_cols(e, e->scroll, e->cursor);
    while (cc > width - 1) {
        e->scroll = editor_next(e, e->scroll);
        cc--;
    }
    /* scroll back while the rest of the line plus the cursor cell still fits */
    int tail = editor_cols(e, e->scroll, e->len);
    while (e->scroll > 0 && tail + 1 < width) {
        e->scroll = editor_prev(e, e->scroll);
        tail++;
        cc++;
    }
    size_t k = 0;
    int cols = 0;
    for (int i = e->scroll; i < e->len && cols < width;) {
        int j = editor_next(e, i);
        if (k + (size_t)(j - i) + 1 > cap) break;
        for (int b = i; b < j; b++) {
            unsigned char c = (unsigned char)e->buf[b];
            out[k++] = c < 32 || c == 127 ? ' ' : (char)c;
        }
        cols++;
        i = j;
    }
    if (cap) out[k] = 0;
    *cursor_col = cc;
    return (int)k;
}

/* ---- terminal key decoding ------------------------------------------------------ */

static int editor_decode_utf8(const unsigned char *s, int n, int *key)
{
    unsigned char c = s[0];
    int len = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    int cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0F : c & 0x1F;
    *key = -1;
    if (len == 0) return 1;
    for (int i = 1; i < len; i++) {
        if (i >= n) return 0;
        if ((s[i] & 0xC0) != 0x80) return i; /* malformed: drop what was read */
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    int min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp < 0xE000)) *key = cp;
    return len;
}

/* CSI sequences: ESC [ params final. */
static int editor_decode_csi(const unsigned char *s, int n, int *key)
{
    int i = 2, p1 = 0, p2 = 0, np = 0;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';')) {
        if (s[i] == ';') np++;
        else if (np == 0 && p1 < 1000) p1 = p1 * 10 + (s[i] - '0');
        else if (np == 1 && p2 < 1000) p2 = p2 * 10 + (s[i] - '0');
        if (++i > 16) { *key = -1; return i; }
    }
    if (i >= n) return 0;
    unsigned char f = s[i];
    *key = -1;
    if (f < 0x40 || f > 0x7E) return i; /* not a final byte: drop the sequence so far */
    int mod = p2 >= 2; /* any modifier turns Left/Right into word moves */
    switch (f) {
    case 'A': *key = EDITOR_KEY_UP; break;
    case 'B': *key = EDITOR_KEY_DOWN; break;
    case 'C': *key = mod ? EDITOR_KEY_ALT_F : EDITOR_KEY_RIGHT; break;
    case 'D': *key = mod ? EDITOR_KEY_ALT_B : EDITOR_KEY_LEFT; break;
    case 'H': *key = EDITOR_KEY_HOME; break;
    case 'F': *key = EDITOR_KEY_END; break;
    case '~':
        *key = p1 == 1 || p1 == 7 ? EDITOR_KEY_HOME : p1 == 4 || p1 == 8 ? EDITOR_KEY_END
             : p1 == 3 ? EDITOR_KEY_DELETE : -1;
        break;
    default: break;
    }
    return i + 1;
}

int editor_decode_key(const unsigned char *s, int n, int *key)
{
    if (n < 1) return 0;
    if (s[0] != 27) {
        if (s[0] < 0x80) {
            *key = s[0];
            return 1;
        }
        return editor_decode_utf8(s, n, key);
    }
    if (n < 2) return 0;
    *key = -1;
    switch (s[1]) {
    case '[': return editor_decode_csi(s, n, key);
    case 'O':
        if (n < 3) return 0;
        *key = s[2] == 'A' ? EDITOR_KEY_UP : s[2] == 'B' ? EDITOR_KEY_DOWN
             : s[2] == 'C' ? EDITOR_KEY_RIGHT : s[2] == 'D' ? EDITOR_KEY_LEFT
             : s[2] == 'H' ? EDITOR_KEY_HOME : s[2] == 'F' ? EDITOR_KEY_END : -1;
        return 3;
    case 'b': case 'B': *key = EDITOR_KEY_ALT_B; return 2;
    case 'f': case 'F': *key = EDITOR_KEY_ALT_F; return 2;
    case 'd': case 'D': *key = EDITOR_KEY_ALT_D; return 2;
    case 127: case 8: *key = EDITOR_KEY_ALT_BACKSPACE; return 2;
    case 27: *key = EDITOR_KEY_ESC; return 1; /* ESC ESC: the first is a lone ESC */
    default: return 2;
    }
}

