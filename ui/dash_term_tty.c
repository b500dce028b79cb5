/* dash_term_tty.c — the dashboard loop's terminal (see dash_term_impl.h): setting it up
 * (locale, curses modes, colours unless NO_COLOR, stderr to lmlab.log) and back, and
 * reading keys: those kept while a command ran, escape sequences curses did not decode,
 * Ctrl-C in raw mode when the keys come through a launcher's pipe. Not what a key does
 * (dash_keys.c). */
#define NCURSES_WIDECHAR 1
#include "dash_term_impl.h"

#include "canvas.h"
#include "dash_keys.h"

#include <curses.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dash_term_open(DashTerm *t)
{
    const char *term = getenv("TERM");
    if (!term || !*term || !strcmp(term, "dumb"))
        return -1;   /* no cursor addressing: line mode */
    setlocale(LC_ALL, "");
    t->caps.unicode = !strcmp(nl_langinfo(CODESET), "UTF-8");
    if (!getenv("ESCDELAY"))
        set_escdelay(25);
    t->screen = newterm(NULL, stdout, stdin);
    if (!t->screen)
        return -1;
    set_term(t->screen);
    /* Ctrl-C stays a signal: it sets s->interrupt (repl_install_signals). When the keys
     * come through a launcher's pipe (mpirun: app/main.c), the signal would go to the
     * launcher and end the whole job: raw mode, and next_key turns the byte into it. */
    t->keys_forwarded = !isatty(STDIN_FILENO);
    if (t->keys_forwarded)
        raw();
    else
        cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    intrflush(stdscr, FALSE);
    timeout(100);
    const char *no_color = getenv("NO_COLOR");   /* no-color.org: set and non-empty */
    t->caps.colors = has_colors() && !(no_color && no_color[0]);
    if (t->caps.colors) {
        start_color();
        canvas_init_colors();
    }
    curs_set(0);
    /* stderr into a log file next to the database: nothing may write over the screen */
    char log[1100];
    const char *slash = strrchr(t->s->db_path, '/');
    snprintf(log, sizeof log, "%.*slmlab.log", slash ? (int)(slash - t->s->db_path + 1) : 0,
             t->s->db_path);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    fflush(stderr);
    t->saved_stderr = dup(STDERR_FILENO);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    return 0;
}

void dash_term_close(DashTerm *t)
{
    endwin();
    delscreen(t->screen);
    fflush(stderr);
    if (t->saved_stderr >= 0) {
        dup2(t->saved_stderr, STDERR_FILENO);
        close(t->saved_stderr);
    }
}

/* The next key typed (keys kept while a command ran first); wait: block for up to the
 * loop's timeout, else only what is there already. -1 for none. */
static int raw_key(DashTerm *t, int wait)
{
    if (t->n_pending) {
        int k = t->pending[0];
        memmove(t->pending, t->pending + 1, (size_t)--t->n_pending * sizeof t->pending[0]);
        return k;
    }
    wint_t ch;
    if (!wait)
        timeout(0);
    int r = get_wch(&ch);
    if (!wait)
        timeout(100);
    if (r == ERR)
        return -1;
    return r == KEY_CODE_YES ? DASH_KEY_FN((int)ch) : (int)ch;
}

/* An escape sequence curses did not know (ESC already read, then '[' or 'O' in intro):
 * reads it to its final byte and maps the common Home/End/Delete/PgUp/PgDn/arrow forms;
 * anything else is dropped (-1), never typed as text. */
static int escape_sequence(DashTerm *t, int intro)
{
    char seq[16];
    int n = 0, k;
    while ((k = raw_key(t, 0)) >= 0) {
        if (n < (int)sizeof seq - 1)
            seq[n++] = (char)k;
        if (k >= 0x40 && k <= 0x7E && !(intro == '[' && n == 1 && k == '['))
            break;   /* the final byte (a Linux console F-key "[[A" goes on) */
        if (k < 0x20 || k > 0x7E)
            return -1;
    }
    seq[n] = 0;
    static const struct { const char *s; int key; } map[] = {
        {"H", KEY_HOME}, {"1~", KEY_HOME}, {"7~", KEY_HOME}, {"F", KEY_END}, {"4~", KEY_END},
        {"8~", KEY_END}, {"3~", KEY_DC}, {"5~", KEY_PPAGE}, {"6~", KEY_NPAGE}, {"A", KEY_UP},
        {"B", KEY_DOWN}, {"C", KEY_RIGHT}, {"D", KEY_LEFT}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(seq, map[i].s))
            return DASH_KEY_FN(map[i].key);
    return -1;
}

/* The next key: Esc + [ or O starts a sequence curses did not decode
 * (escape_sequence); Esc + any other key is Esc, then that key. -1 for none. */
int dash_term_next_key(DashTerm *t)
{
    int k = raw_key(t, 1);
    if (k == 3 && t->keys_forwarded) {   /* Ctrl-C typed in raw mode (term_open) */
        t->s->interrupt = 1;
        return -1;
    }
    if (k != 27)
        return k;
    int k2 = raw_key(t, 0);
    if (k2 == '[' || k2 == 'O')
        return escape_sequence(t, k2);
    if (k2 >= 0) {   /* put it back: it is read next */
        if (t->n_pending == MAX_PENDING)
            t->n_pending--;
        memmove(t->pending + 1, t->pending, (size_t)t->n_pending * sizeof t->pending[0]);
        t->pending[0] = k2;
        t->n_pending++;
    }
    return 27;
}
