/* editor_readline.c — the line editor's plain line mode (see editor.h): editor_readline
 * over raw termios, keys read and decoded (editor_decode_key), the line redrawn in place,
 * Tab completion listed, Ctrl-Z suspending, typed-ahead bytes kept for the next line, and
 * the terminal restored on every exit and on a terminating signal. Not the editing
 * (editor.c). */
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
