/* editor.c — the key-driven line editor (see editor.h): editing on a fixed buffer,
 * rendering with horizontal scrolling, terminal key decoding, and a plain-mode readline
 * over raw termios. Not a curses client: the dashboard draws what editor_render gives. */
#include "editor.h"

#include "err.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

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

/* ---- plain line mode ------------------------------------------------------------ */

/* The terminal state to restore; file-scope because signal handlers need it. */
static struct termios editor_saved_tty;
static volatile sig_atomic_t editor_signalled;
static const int editor_signals[] = {SIGTERM, SIGHUP, SIGQUIT, SIGINT};
#define EDITOR_NSIG ((int)(sizeof editor_signals / sizeof editor_signals[0]))
static struct sigaction editor_old_actions[EDITOR_NSIG];

/* Bytes read from the terminal but not yet decoded into keys. They outlive one
 * editor_readline call: what was typed ahead or pasted while the previous line was being
 * handled is the next line's input, never dropped (psql and sqlite3 behave the same). */
static unsigned char editor_pending[256];
static int editor_npending;

/* The terminal is switched with TCSADRAIN, never TCSAFLUSH: TCSAFLUSH would discard every
 * byte typed ahead while a command ran (the kernel keeps them in its input queue while
 * the terminal is in cooked mode). */
static void editor_on_signal(int sig)
{
    tcsetattr(STDIN_FILENO, TCSANOW, &editor_saved_tty);
    editor_signalled = sig;
    for (int i = 0; i < EDITOR_NSIG; i++)
        if (editor_signals[i] == sig) sigaction(sig, &editor_old_actions[i], NULL);
    raise(sig); /* delivered with the previous action once this handler returns */
}

/* Byte-at-a-time input without echo, signals or flow control; output untouched. */
static void editor_make_raw(struct termios *t)
{
    t->c_iflag &= ~(tcflag_t)(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
    t->c_lflag &= ~(tcflag_t)(ECHO | ICANON | IEXTEN | ISIG);
    t->c_cc[VMIN] = 1;
    t->c_cc[VTIME] = 0;
}

static int editor_raw_on(void)
{
    if (tcgetattr(STDIN_FILENO, &editor_saved_tty) != 0) return -1;
    struct termios raw = editor_saved_tty;
    editor_make_raw(&raw);
    editor_signalled = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = editor_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < EDITOR_NSIG; i++)
        sigaction(editor_signals[i], &sa, &editor_old_actions[i]);
    if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0) return 0;
    for (int i = 0; i < EDITOR_NSIG; i++)
        sigaction(editor_signals[i], &editor_old_actions[i], NULL);
    return -1;
}

static void editor_raw_off(void)
{
    if (!editor_signalled) tcsetattr(STDIN_FILENO, TCSADRAIN, &editor_saved_tty);
    for (int i = 0; i < EDITOR_NSIG; i++)
        if (editor_signals[i] != editor_signalled)
            sigaction(editor_signals[i], &editor_old_actions[i], NULL);
}

static void editor_write(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void editor_puts(const char *s)
{
    editor_write(s, strlen(s));
}

/* Prompt, the visible slice, clear to the end, then the cursor at its column. */
static void editor_redraw(LineEditor *e, const char *prompt)
{
    struct winsize ws;
    int cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
    int pw = (int)strlen(prompt);
    int width = cols - pw - 1 > 8 ? cols - pw - 1 : 8;
    char vis[4 * 512 + 1], tail[32];
    if (width > 512) width = 512;
    int cc;
    int n = editor_render(e, width, vis, sizeof vis, &cc);
    editor_puts("\r");
    editor_puts(prompt);
    editor_write(vis, (size_t)n);
    snprintf(tail, sizeof tail, "\x1b[K\r\x1b[%dC", pw + cc);
    editor_puts(pw + cc > 0 ? tail : "\x1b[K\r");
}

/* Takes `used` decoded bytes off the front of the pending input. */
static void editor_consume(int used)
{
    memmove(editor_pending, editor_pending + used, (size_t)(editor_npending - used));
    editor_npending -= used;
}

/* Decodes one key from the pending bytes, reading more when they hold no whole key. A
 * lone ESC becomes EDITOR_KEY_ESC after 50 ms; an escape sequence left unfinished that
 * long is dropped whole (key -1), never inserted as text. Bytes after the key stay
 * pending. Returns 0 with *key set, -1 at end of input, -2 on an error (errno) or a
 * signal. */
static int editor_read_key(int *key)
{
    for (;;) {
        if (editor_npending > 0) {
            int used = editor_decode_key(editor_pending, editor_npending, key);
            if (used > 0) {
                editor_consume(used);
                return 0;
            }
            struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
            if (editor_npending == (int)sizeof editor_pending || poll(&p, 1, 50) == 0) {
                int lone_esc = editor_pending[0] == 27 && editor_npending == 1;
                *key = lone_esc ? EDITOR_KEY_ESC : -1;
                editor_consume(editor_pending[0] == 27 ? editor_npending : 1);
                return 0;
            }
        }
        ssize_t r = read(STDIN_FILENO, editor_pending + editor_npending,
                         sizeof editor_pending - (size_t)editor_npending);
        if (r < 0 && errno == EINTR && !editor_signalled) continue;
        if (r == 0) return -1;
        if (r < 0) return -2;
        editor_npending += (int)r;
    }
}

/* Prints candidates below the line in columns, then leaves the line to be redrawn. */
static void editor_list(char *const *cands, int n)
{
    struct winsize ws;
    int cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
    int w = 0;
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(cands[i]);
        if (l > w) w = l;
    }
    w += 2;
    int per = cols / w > 0 ? cols / w : 1;
    editor_puts("\r\n");
    for (int i = 0; i < n; i++) {
        editor_puts(cands[i]);
        if ((i + 1) % per == 0 || i == n - 1) {
            editor_puts("\r\n");
        } else {
            for (int k = (int)strlen(cands[i]); k < w; k++) editor_puts(" ");
        }
    }
}

static void editor_run_completion(LineEditor *e, EditorCompleteFn complete, void *ud)
{
    char **cands = NULL;
    int n = 0, ws = e->cursor;
    if (!complete || complete(ud, e->buf, e->cursor, &cands, &n, &ws) != LM_OK) n = 0;
    if (n == 0) editor_puts("\a");
    else if (editor_complete_apply(e, ws, cands, n)) editor_list(cands, n);
    for (int i = 0; i < n; i++) free(cands[i]);
    free(cands);
}

/* Not a terminal: one line from stdin, without its newline. */
static int editor_read_plain(char **line, char *err)
{
    char *buf = NULL;
    size_t cap = 0;
    errno = 0;
    ssize_t n = getline(&buf, &cap, stdin);
    if (n < 0) {
        free(buf);
        *line = NULL;
        if (ferror(stdin)) return err_set(err, LM_EIO, "reading input: %s", strerror(errno));
        return LM_OK;
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
    if (memchr(buf, 0, (size_t)n)) {
        free(buf);
        *line = NULL;
        return err_set(err, LM_EFORMAT, "the line holds a NUL byte: refused, nothing on it"
                       " ran (a binary file or a stray Ctrl-@?)");
    }
    *line = buf;
    return LM_OK;
}

/* Ctrl-Z at the prompt: raw mode swallows the terminal's own suspend key, so the editor
 * does what the terminal would: restore the terminal, stop the process (SIGTSTP, so a
 * shell's job control sees a stopped job), and take raw mode back on `fg`. */
static void editor_suspend(void)
{
    editor_puts("^Z\r\n");
    tcsetattr(STDIN_FILENO, TCSADRAIN, &editor_saved_tty);
    raise(SIGTSTP); /* returns once the process is continued */
    struct termios raw = editor_saved_tty;
    editor_make_raw(&raw);
    tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
}

/* The raw-mode loop; the caller switched the terminal to raw and restores it. */
static int editor_loop(LineEditor *e, const char *prompt, EditorCompleteFn complete,
                       void *ud, char **line, char *err)
{
    for (;;) {
        editor_redraw(e, prompt);
        int key;
        int r = editor_read_key(&key);
        if (r != 0) {
            int en = errno;
            editor_puts("\r\n");
            if (editor_signalled) return err_set(err, LM_ECANCEL, "interrupted by a signal");
            if (r == -2) return err_set(err, LM_EIO, "reading the terminal: %s", strerror(en));
            return LM_OK; /* end of input: *line stays NULL */
        }
        switch (editor_key(e, key)) {
        case EDIT_SUBMIT:
            editor_puts("\r\n");
            if (e->cut) {   /* never run a line that is not what was typed */
                char msg[300];
                snprintf(msg, sizeof msg, "error: " EDITOR_CUT_TEXT "\r\n", EDITOR_MAX_LINE - 1);
                editor_puts(msg);
                editor_reset(e);
                break;
            }
            *line = strdup(e->buf);
            if (!*line) return err_set(err, LM_ENOMEM, "out of memory");
            if (e->history) history_add(e->history, e->buf);
            editor_reset(e);
            return LM_OK;
        case EDIT_EOF: editor_puts("\r\n"); return LM_OK;
        case EDIT_INTERRUPT:
            editor_puts("^C\r\n");
            editor_reset(e);
            return err_set(err, LM_ECANCEL, "interrupted");
        case EDIT_CLEAR: editor_puts("\x1b[H\x1b[2J"); break;
        case EDIT_SUSPEND: editor_suspend(); break;
        case EDIT_COMPLETE: editor_run_completion(e, complete, ud); break;
        default: break;
        }
    }
}

int editor_readline(LineEditor *e, const char *prompt, EditorCompleteFn complete, void *ud,
                    char **line, char *err)
{
    *line = NULL;
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return editor_read_plain(line, err);
    if (editor_raw_on() != 0) return editor_read_plain(line, err);
    int st = editor_loop(e, prompt, complete, ud, line, err);
    editor_raw_off();
    return st;
}
