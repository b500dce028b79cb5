/* repl.c — script and line-mode drivers of a Session (see repl.h). */
#include "repl.h"

#include "commands.h"

#include "editor.h"
#include "err.h"
#include "history.h"
#include "lexer.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static Session *g_session;
static volatile sig_atomic_t g_terminate;
static pthread_t g_main;       /* the thread that prints and waits (repl_install_signals') */
static int g_pipe_out[2];      /* stdout, stderr: not a terminal (a pipe, a file) */

static void on_wake(int sig) { (void)sig; }   /* SIGURG: only ends a blocked write */

/* A terminating signal must reach the waiting thread even when it is blocked writing to a
 * pipe nobody drains (`lmlab train | less` scrolled back; mpirun, which stops reading its
 * ranks once told to end them and kills them a second later): before, the run trained on
 * and was never stopped cleanly (the kill left it "interrupted"). Output that is not a
 * terminal stops blocking (what no one reads is dropped), and the main thread's write, if
 * another thread took the signal, is interrupted. Both calls are async-signal-safe. */
static void unblock_output(void)
{
    for (int fd = 1; fd <= 2; fd++) {
        int fl = g_pipe_out[fd - 1] ? fcntl(fd, F_GETFL) : -1;
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    }
    if (!pthread_equal(pthread_self(), g_main))
        pthread_kill(g_main, SIGURG);
}

static void on_signal(int sig)
{
    if (sig == SIGINT) {
        if (g_session)
            g_session->interrupt = 1;
    } else if (g_terminate) {   /* the second SIGTERM/SIGHUP: the clean stop is stuck */
        static const char msg[] = "lmlab: a second signal: exiting now, without waiting for "
                                  "the run to stop (its last checkpoint is kept; "
                                  "`train resume=ID` continues it)\n";
        (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
        _exit(1);
    } else {
        g_terminate = 1;
        if (g_session) {
            g_session->interrupt = 1;
            g_session->terminating = 1;
        }
        unblock_output();
    }
}

void repl_install_signals(Session *s)
{
    g_session = s;
    g_main = pthread_self();
    g_pipe_out[0] = !isatty(STDOUT_FILENO);   /* a terminal's flags are the shell's too */
    g_pipe_out[1] = !isatty(STDERR_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);   /* no SA_RESTART: a blocked write returns */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_wake;
    sigaction(SIGURG, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int repl_terminating(void)
{
    return g_terminate;
}

/* Where a script's command came from: errors passing through the session's writer get
 * "name:line: " in front (or "file" and "line" fields in JSON mode). */
typedef struct {
    Session *s;
    SessionWriter writer;
    void *ud;
    const char *name;
    long line;
} ScriptPlace;

static void place_writer(void *ud, int kind, const char *text)
{
    ScriptPlace *p = ud;
    json_t *o = kind == SESSION_OUT_ERROR && p->s->json ? json_loads(text, 0, NULL) : NULL;
    char *t = NULL;
    if (o) {
        json_object_set_new(o, "file", json_string(p->name));
        json_object_set_new(o, "line", json_integer(p->line));
        t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    } else if (kind == SESSION_OUT_ERROR && asprintf(&t, "%s:%ld: %s", p->name, p->line,
                                                     text) < 0) {
        t = NULL;
    }
    p->writer(p->ud, kind, t ? t : text);
    free(t);
}

/* Runs one line; with keep_going each ';'-separated command on its own, so a failing one
 * does not take the rest of the line with it. Returns 1 when the script must stop. */
static int run_one(Session *s, const char *line, int keep_going, int *first_rc)
{
    LexLine lx;
    int split = keep_going && lexer_split(&lx, line, 0, NULL) == LM_OK && lx.n_cmds > 1;
    for (int c = 0; split && c < lx.n_cmds; c++) {
        char *one = strndup(line + lx.cmds[c].offset, (size_t)lx.cmds[c].len);
        int rc = one ? session_run_line(s, one) : LM_ENOMEM;
        free(one);
        if (rc && !*first_rc)
            *first_rc = rc;
        if (s->quit || g_terminate)
            break;
    }
    if (keep_going)
        lexer_free(&lx);
    if (split)
        return s->quit || g_terminate;
    int rc = session_run_line(s, line);
    if (rc && !*first_rc)
        *first_rc = rc;
    return (rc && !keep_going) || s->quit || g_terminate;
}

int repl_run_lines(Session *s, const char *text, int keep_going)
{
    char *copy = strdup(text);
    if (!copy)
        return LM_ENOMEM;
    int first = 0;
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if (run_one(s, line, keep_going, &first))
            break;
    free(copy);
    return first;
}

/* The 1-based line of the first NUL byte of a regular file read from its current position,
 * or 0 (none, or not a regular file: a pipe is checked line by line instead). The position
 * is restored. */
static long first_nul_line(FILE *f)
{
    struct stat st;
    off_t start = ftello(f);
    if (start < 0 || fstat(fileno(f), &st) || !S_ISREG(st.st_mode))
        return 0;
    long line = 1, found = 0;
    int ch;
    while (!found && (ch = getc(f)) != EOF) {
        if (ch == 0)
            found = line;
        else if (ch == '\n')
            line++;
    }
    clearerr(f);
    if (fseeko(f, start, SEEK_SET))
        return 0;
    return found;
}

/* 1 when text holds a carriage return followed by more than blanks (a CRLF line's CR, and
 * blanks after it, are whitespace to the lexer). */
static int cr_inside(const char *text)
{
    for (const char *cr = strchr(text, '\r'); cr; cr = strchr(cr + 1, '\r'))
        for (const char *p = cr + 1; *p; p++)
            if (!strchr(" \t\r\v\f", *p))
                return 1;
    return 0;
}

int repl_run_file(Session *s, FILE *f, const char *name, int keep_going)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int first = 0;
    ScriptPlace place = {s, s->writer, s->writer_ud, name, 0};
    if (name)
        session_set_writer(s, place_writer, &place);
    long nul_line = first_nul_line(f);
    if (nul_line > 0) {   /* a script file holding NUL runs nothing at all */
        place.line = nul_line;
        first = session_error(s, LM_EFORMAT, "this line holds a NUL byte: the script is "
                              "refused and nothing in it ran (remove the byte and run it again)");
        if (name)
            session_set_writer(s, place.writer, place.ud);
        return first;
    }
    while ((n = getline(&line, &cap, f)) >= 0) {
        place.line++;
        size_t len = (size_t)n;
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        char *text = line;
        if (place.line == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3))
            text += 3;   /* a UTF-8 byte-order mark before the first command */
        if (memchr(line, 0, len)) {   /* piped input: this line is refused, not cut */
            int rc = session_error(s, LM_EFORMAT, "this line holds a NUL byte: refused, nothing "
                                   "on it ran");
            if (!first)
                first = rc;
            if (!keep_going)
                break;
            continue;
        }
        if (cr_inside(text)) {   /* CR-only line ends: the whole file read as one line */
            int rc = session_error(s, LM_EFORMAT, "this line holds a carriage return (\\r) "
                                   "before more text: the file ends its lines with CR alone "
                                   "(old Mac text), so it reads as one line; nothing on it ran "
                                   "(convert them: tr '\\r' '\\n' < FILE > NEW)");
            if (!first)
                first = rc;
            if (!keep_going)
                break;
            continue;
        }
        if (run_one(s, text, keep_going, &first))
            break;
    }
    if (name)
        session_set_writer(s, place.writer, place.ud);
    free(line);
    return first;
}

void repl_history_path(const Session *s, char *out, size_t cap)
{
    const char *slash = strrchr(s->db_path, '/');
    if (slash)
        snprintf(out, cap, "%.*s/.lmlab_history", (int)(slash - s->db_path), s->db_path);
    else
        snprintf(out, cap, ".lmlab_history");
}

/* Asks s->ask_text on the prompt line; y or yes runs s->ask_cmd, anything else does not. */
static void ask_answer(Session *s, LineEditor *ed)
{
    char cmd[sizeof s->ask_cmd], q[sizeof s->ask_text], err[LM_ERR_LEN];
    snprintf(cmd, sizeof cmd, "%s", s->ask_cmd);
    snprintf(q, sizeof q, "%s", s->ask_text);
    s->ask_cmd[0] = s->ask_text[0] = 0;
    char *answer = NULL;
    int rc = editor_readline(ed, q, NULL, NULL, &answer, err);
    int yes = rc == LM_OK && answer && (!strcasecmp(answer, "y") || !strcasecmp(answer, "yes"));
    free(answer);
    if (yes)
        session_run_line(s, cmd);
    else
        session_printf(s, "not done (answer y to confirm): nothing was deleted");
}

/* Every way to leave the prompt (`quit`, Ctrl-D) comes here: while a run or a sweep
 * trains it asks first, as the dashboard does; 1 to leave. */
static int confirm_quit(Session *s, LineEditor *ed)
{
    if (session_job_kind(s) == SESSION_JOB_NONE)
        return 1;
    char job[64], q[160], err[LM_ERR_LEN], *answer = NULL;
    session_job_name(s, job, sizeof job);
    snprintf(q, sizeof q, "%s is training: stop it (checkpointed and recorded) and quit? (y/N) ",
             job);
    int rc = editor_readline(ed, q, NULL, NULL, &answer, err);
    int yes = rc == LM_OK && answer && (!strcasecmp(answer, "y") || !strcasecmp(answer, "yes"));
    free(answer);
    if (!yes)
        session_printf(s, "not quitting: %s goes on (`stop` stops it, `wait` waits for its end)",
                       job);
    else
        session_printf(s, "stopping %s: its checkpoint is written and it is recorded as stopped",
                       job);
    return yes;
}

int repl_interactive(Session *s)
{
    History h;
    LineEditor ed;
    char hist_path[1100], err[LM_ERR_LEN];
    history_init(&h, 1000);
    repl_history_path(s, hist_path, sizeof hist_path);
    if (history_load(&h, hist_path, err) != LM_OK) session_printf(s, "warning: %s", err);
    editor_init(&ed, &h);
    int n;
    CmdCompleter comp = {session_commands(&n), 0, session_complete, s};
    comp.n = n;
    s->can_ask = 1;
    session_printf(s, "lmlab %s — type `help` for the commands, Tab to complete, `quit` to "
                   "leave.", LMLAB_VERSION);
    int rc = LM_OK;
    while (!s->quit && !g_terminate) {
        char *line = NULL;
        s->interrupt = 0;
        rc = editor_readline(&ed, "lmlab> ", cmdtable_completer, &comp, &line, err);
        if (rc == LM_ECANCEL) {
            rc = LM_OK;
            continue;
        }
        if (rc) {
            session_error(s, rc, "cannot read the terminal: %s", err);
            break;
        }
        if (!line) {   /* Ctrl-D */
            if (confirm_quit(s, &ed))
                break;
            continue;
        }
        session_run_line(s, line);
        free(line);
        if (s->quit && !confirm_quit(s, &ed))
            s->quit = 0;
        history_save(&h, hist_path, err);
        if (s->ask_cmd[0])   /* the command asks first (rm): y runs it, anything else not */
            ask_answer(s, &ed);
    }
    history_free(&h);
    return rc;
}
