/* dash_term.c — the dashboard's curses loop (see dash_term.h). One thread: get_wch with
 * a 100 ms timeout, a snapshot copy per wake-up, keys -> the key table -> actions,
 * commands through session_run_line with their output (and streamed samples) appended
 * to the scrollback by our writer, which also repaints (rate-limited) while a command
 * blocks, so streaming shows token by token. stderr goes to lmlab.log next to the
 * database while curses is up. Not the drawing: dashboard_render does every frame. */
#define NCURSES_WIDECHAR 1
#include "dash_term.h"

#include "alerts.h"
#include "commands.h"

#include "dash_follow.h"
#include "dash_alerts.h"
#include "dash_keys.h"
#include "dash_render.h"
#include "err.h"
#include "repl.h"
#include "views.h"
#include "sysinfo.h"

#include <curses.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAME_SECONDS 0.1   /* at most ~10 redraws a second */
#define MAX_PENDING 64      /* keys typed while a command runs, replayed after it */

/* The loop's state. */
typedef struct {
    Session *s;
    Dashboard *d;
    Canvas *c;
    CanvasCaps caps;
    void *screen;                /* the curses SCREEN */
    Snapshot snap;               /* the latest copy; kept after the run is reaped */
    DashFollow follow;           /* snap read from the store: another process's run */
    double next_reap;            /* when reap_dead next marks dead owners' runs */
    long sw_id;                  /* the sweep whose trials sweep_lines reported */
    char sw_seen[256][16];       /* each trial's status as last reported ("" = not yet) */
    int sw_end_said;             /* its end was reported */
    double sw_next;              /* when sweep_lines next reads the trials */
    DashCtx ctx;                 /* what the keys and views may use (callbacks below) */
    long drawn_run, drawn_seq;
    int dirty, quit, cursor_on, new_cmd, pumping;
    double last_draw;
    long f_run, f_msg, f_sample; /* what of the run the scrollback already reported */
    int f_val, f_end;
    int pending[MAX_PENDING], n_pending;
    char hist_path[1100];
    int saved_stderr;
    int keys_forwarded;  /* stdin is not the terminal (mpirun's pipe): raw mode, 0x03 is Ctrl-C */
    FILE *transcript;    /* --transcript: the output pane's lines appended (NULL: none) */
    int tr_midline;      /* the transcript's last line is not ended yet (a streamed piece) */
} DashTerm;

static void term_command(DashTerm *t, const char *line);
static void term_quit(DashTerm *t);

/* text appended to the transcript as the pane gets it; a line ends a streamed piece
 * first, as textpane_newline_if_needed does on the pane. */
static void transcript_add(DashTerm *t, const char *text, int line)
{
    if (!t->transcript)
        return;
    if (line && t->tr_midline)
        fputc('\n', t->transcript);
    fputs(text, t->transcript);
    size_t n = strlen(text);
    if (line)
        fputc('\n', t->transcript), t->tr_midline = 0;
    else if (n)
        t->tr_midline = text[n - 1] != '\n';
    fflush(t->transcript);
}

static void out_text(DashTerm *t, int color, const char *text)
{
    transcript_add(t, text, 1);
    textpane_newline_if_needed(t->d->out);
    textpane_append(t->d->out, text, -1, color, 0);
    textpane_append(t->d->out, "\n", 1, color, 0);
    t->dirty = 1;
}

static void term_out(DashTerm *t, int color, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void term_out(DashTerm *t, int color, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out_text(t, color, buf);
}

/* ---- drawing ---- */

static void draw(DashTerm *t)
{
    int h, w;
    getmaxyx(stdscr, h, w);
    if (w != canvas_width(t->c) || h != canvas_height(t->c)) {
        if (canvas_resize(t->c, w, h))
            return;
        clearok(stdscr, TRUE);
    }
    dash_render(t->c, t->d, &t->snap, &t->caps);
    canvas_blit(t->c, stdscr, &t->caps);
    int on = t->d->cursor_x >= 0;
    if (on != t->cursor_on)
        curs_set(on);
    t->cursor_on = on;
    if (on)
        wmove(stdscr, t->d->cursor_y, t->d->cursor_x);
    wnoutrefresh(stdscr);
    doupdate();
    t->last_draw = sysinfo_now();
    t->dirty = 0;
    t->drawn_run = t->snap.run_id;
    t->drawn_seq = t->snap.seq;
}

/* ---- following the run ---- */

static void report_end(DashTerm *t)
{
    const Snapshot *sn = &t->snap;
    double el = sn->last.elapsed;
    char when[32], ppl[METRIC_PPL_TEXT];
    if (el < 60)
        snprintf(when, sizeof when, "%.1f s", el);
    else
        snprintf(when, sizeof when, "%d:%02d", (int)el / 60, (int)el % 60);
    term_out(t, UI_COLOR_ACCENT, "run #%ld %s %s after %ld steps in %s: %.0f tokens/s%s%s%s",
                  sn->run_id, sn->run_name, recorder_status_name(sn->status), sn->last.step, when,
                  el > 0 ? (double)sn->last.tokens / el : 0.0, sn->reason[0] ? " (" : "",
                  sn->reason, sn->reason[0] ? ")" : "");
    if (sn->n_val)
        term_out(t, UI_COLOR_ACCENT, "  final val loss %.4f (ppl %s), best %.4f",
                 sn->last_eval.loss, metric_ppl_text(sn->last_eval.ppl, ppl), sn->best_val);
}

/* Evaluations, trainer/store messages and the end of the run go to the scrollback. */
static void follow(DashTerm *t)
{
    const Snapshot *sn = &t->snap;
    char ppl[METRIC_PPL_TEXT];
    Dashboard *d = t->d;
    if (!sn->run_id)
        return;
    if (sn->run_id != t->f_run) {
        t->f_run = sn->run_id;
        t->f_val = t->f_end = 0;
        t->f_msg = 0;
        t->f_sample = -1;
        if (t->follow.active) {   /* read from the store: say so, report only what's new */
            t->f_val = sn->n_val;
            t->f_end = trainer_is_done(sn->status);
            t->f_sample = sn->sample_step;
            term_out(t, UI_COLOR_ACCENT, "run #%ld %s (%s), step %ld: %s the run store", sn->run_id,
                     sn->run_name, recorder_status_name(sn->status), sn->last.step,
                     t->f_end ? "replayed from" : "another process's, followed through");
        }
    }
    char tag[32] = "";   /* a sweep's trial: its lines say which */
    SweepRunner *sw = session_job_sweep(t->s);
    if (sw) {
        SweepProgress p;
        sweep_runner_progress(sw, &p);
        if (p.current && p.current_run == sn->run_id)
            snprintf(tag, sizeof tag, "[trial %d] ", p.current);
    }
    for (; t->f_val < sn->n_val; t->f_val++)
        term_out(t, UI_COLOR_DIM, "%seval   step %ld  val loss %.4f  ppl %s", tag,
                 sn->val[t->f_val].step, sn->val[t->f_val].value,
                 metric_ppl_text(exp(sn->val[t->f_val].value), ppl));
    if (sn->message_seq != t->f_msg) {
        t->f_msg = sn->message_seq;
        if (sn->message[0])
            term_out(t, UI_COLOR_WARN, "note: %s", sn->message);
    }
    if (sn->sample[0] && sn->sample_step != t->f_sample) {
        t->f_sample = sn->sample_step;
        d->sample_from_cmd = 0;  /* a new periodic sample takes the pane */
    }
    if (!t->f_end && trainer_is_done(sn->status)) {
        t->f_end = 1;
        report_end(t);
        if (views_get(d->view)->run_ended)
            views_get(d->view)->run_ended(&t->ctx);
    }
}

/* The sweep's progress for the status bar ("" without a sweep). */
/* A trial's status as the user reads it: a pending trial whose run is already
 * training (a parallel sweep's worker started it) is running. */
static const char *trial_state(const SweepTrialRow *r)
{
    return !strcmp(r->status, "pending") && r->run_id > 0 &&
                   (!strcmp(r->run_status, "running") || !strcmp(r->run_status, "paused"))
               ? "running" : r->status;
}

/* The session's sweep in the scrollback, whichever view is on screen and however many
 * trials run at once (parallel=K: in other processes): a line when a trial starts and
 * when it ends (with its best val), and one when the sweep ends. Read from the store at
 * most once a second. */
static void sweep_lines(DashTerm *t, SweepRunner *sw)
{
    double now = sysinfo_now();
    if (!sw || now < t->sw_next)
        return;
    t->sw_next = now + 1.0;
    SweepProgress p;
    sweep_runner_progress(sw, &p);
    if (p.sweep_id != t->sw_id) {
        t->sw_id = p.sweep_id;
        memset(t->sw_seen, 0, sizeof t->sw_seen);
        t->sw_end_said = 0;
    }
    RunStore *st = t->s->store;
    SweepTrialRow *rows = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (!st || runstore_sweep_trials(st, p.sweep_id, &rows, &n, err))
        return;
    for (int i = 0; i < n && i < 256; i++) {
        const char *now_st = trial_state(&rows[i]);
        if (!strcmp(now_st, t->sw_seen[i]) || !strcmp(now_st, "pending"))
            continue;
        if (!strcmp(now_st, "running"))
            term_out(t, UI_COLOR_ACCENT, "sweep #%ld: trial %d/%d (run #%ld, %s) started",
                     p.sweep_id, rows[i].trial, p.total, rows[i].run_id, rows[i].params);
        else if (isfinite(rows[i].best_val))
            term_out(t, UI_COLOR_ACCENT, "sweep #%ld: trial %d/%d (run #%ld, %s) %s: best val "
                     "%.4f", p.sweep_id, rows[i].trial, p.total, rows[i].run_id,
                     rows[i].params, now_st, rows[i].best_val);
        else
            term_out(t, UI_COLOR_ACCENT, "sweep #%ld: trial %d/%d (run #%ld, %s) %s",
                     p.sweep_id, rows[i].trial, p.total, rows[i].run_id, rows[i].params,
                     now_st);
        snprintf(t->sw_seen[i], sizeof t->sw_seen[i], "%s", now_st);
        t->dirty = 1;
    }
    free(rows);
    if (p.ended && !t->sw_end_said) {
        t->sw_end_said = 1;
        term_out(t, UI_COLOR_ACCENT, "sweep #%ld %s %s: %d trials: %d done, %d stopped early, "
                 "%d failed (`sweep show %ld` ranks them)", p.sweep_id, p.name, p.status,
                 p.total, p.done, p.stopped_early, p.failed, p.sweep_id);
        t->dirty = 1;
    }
}

static void sweep_status(DashTerm *t, SweepRunner *sw)
{
    char text[sizeof t->d->sweep] = "";
    if (sw) {
        SweepProgress p;
        sweep_runner_progress(sw, &p);
        if (p.ended)   /* no current trial then: the trials that ran to an end */
            snprintf(text, sizeof text, "#%ld %d/%d trials done %s", p.sweep_id,
                     p.done + p.stopped_early + p.failed, p.total, p.status);
        else if (p.running > 1 || (p.running && !p.current))   /* parallel=K */
            snprintf(text, sizeof text, "#%ld %d running, %d/%d done", p.sweep_id, p.running,
                     p.done + p.stopped_early + p.failed, p.total);
        else
            snprintf(text, sizeof text, "#%ld trial %d/%d", p.sweep_id, p.current, p.total);
    }
    if (strcmp(text, t->d->sweep)) {
        snprintf(t->d->sweep, sizeof t->d->sweep, "%s", text);
        t->dirty = 1;
    }
}

/* Which weights `open` loaded, when they belong to the run on screen: its bar then says
 * the step and file (the run's own step is where it ended, not what was loaded). */
static void opened_status(DashTerm *t)
{
    const Session *s = t->s;
    char text[sizeof t->d->opened] = "";
    if (s->view && s->view_run > 0 && s->view_run == t->snap.run_id && !s->trainer &&
        s->view_step >= 0) {
        const char *slash = strrchr(s->view_path, '/');   /* the file's own name */
        snprintf(text, sizeof text, "step %ld %.60s", s->view_step,
                 slash ? slash + 1 : s->view_path);
    }
    if (strcmp(text, t->d->opened)) {
        snprintf(t->d->opened, sizeof t->d->opened, "%s", text);
        t->dirty = 1;
    }
}

/* The run on screen was live but no longer has a snapshot: a command (`stop`) ended and
 * reaped it. Its final state comes from the store (STOPPED when the store cannot say),
 * so the status bar stops saying TRAINING with an ETA. The command reported the end. */
static void settle_reaped(DashTerm *t)
{
    Snapshot *sn = &t->snap;
    int status = TRAINER_STOPPED;
    RunStore *st = session_store(t->s);
    RunRow row;
    char err[LM_ERR_LEN];
    if (st && runstore_get(st, sn->run_id, &row, err) == LM_OK) {
        static const int ends[] = {TRAINER_FINISHED, TRAINER_STOPPED, TRAINER_DIVERGED,
                                   TRAINER_FAILED};
        for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
            if (!strcmp(row.status, recorder_status_name(ends[i])))
                status = ends[i];
        sn->interrupted = !strcmp(row.status, "interrupted");
        if (row.last_step > sn->last.step)
            sn->last.step = row.last_step;
        snprintf(sn->reason, sizeof sn->reason, "%s", row.reason);
        runstore_row_free(&row);
    }
    sn->status = status;
    if (t->f_run == sn->run_id)
        t->f_end = 1;
    t->dirty = 1;
}

/* Every 2 s, the explicit reaping step of the dashboard's long-lived store handle: this
 * host's runs whose process died are marked interrupted in the store at once, not when the
 * next process happens to open it (a query never does it). */
static void reap_dead(DashTerm *t)
{
    double now = sysinfo_now();
    if (now < t->next_reap)
        return;
    t->next_reap = now + 2.0;
    RunStore *st = t->s->store;   /* only an open store: never opens one for this */
    char err[LM_ERR_LEN];
    if (!st)
        return;
    /* first the alerts no owner can judge (a silent owner's stalled, a dead one's ended):
       the alerts view shows those that fire, from the store */
    alerts_watch_judge(st, t->s->db_path, "dashboard", NULL, NULL);
    runstore_reap_dead(st, err);   /* a failure: the next call retries */
}

/* Takes a snapshot of the run — a running sweep's trial, else the session's run, else
 * an ended sweep's last trial — or, without any, shows the configuration `train` would
 * use; then updates what depends on it. */
static void poll_run(DashTerm *t)
{
    Session *s = t->s;
    Dashboard *d = t->d;
    SweepRunner *sw = session_job_sweep(s);
    int have = session_snapshot(s, &t->snap);   /* its rules say when following resumes */
    int stored = dash_follow_poll(&t->follow, s, have, &t->snap, sysinfo_now());
    if (stored != d->from_store) {
        d->from_store = stored;
        t->dirty = 1;
    }
    if (!have && !stored && t->snap.run_id && !trainer_is_done(t->snap.status))
        settle_reaped(t);
    if (!have && !t->snap.run_id &&
        (strcmp(t->snap.cfg.model, s->cfg.model) || strcmp(t->snap.cfg.data, s->cfg.data) ||
         t->snap.cfg.steps != s->cfg.steps)) {
        t->snap.cfg = s->cfg;
        t->dirty = 1;
    }
    sweep_status(t, sw);
    sweep_lines(t, sw);
    opened_status(t);
    reap_dead(t);
    if (strcmp(d->experiment, s->experiment)) {
        snprintf(d->experiment, sizeof d->experiment, "%s", s->experiment);
        t->dirty = 1;
    }
    if (t->snap.run_id != t->drawn_run || t->snap.seq != t->drawn_seq)
        t->dirty = 1;
    follow(t);
    if (dash_alerts_poll(&t->ctx) > 0) {   /* a line was printed; the bell for attention */
        beep();
        t->dirty = 1;
    }
    const DashView *v = views_get(d->view);
    if (v->tick && v->tick(&t->ctx))
        t->dirty = 1;
}

/* While a command blocks: note resizes, keep typed keys for later, repaint. */
static void pump(DashTerm *t)
{
    wint_t ch;
    int r;
    if (t->pumping)   /* output written while pumping (a store error) draws later */
        return;
    t->pumping = 1;
    timeout(0);
    while ((r = get_wch(&ch)) != ERR) {
        if (r == KEY_CODE_YES && ch == KEY_RESIZE)
            t->dirty = 1;
        else if (t->n_pending < MAX_PENDING)
            t->pending[t->n_pending++] = r == KEY_CODE_YES ? DASH_KEY_FN((int)ch) : (int)ch;
    }
    timeout(100);
    if (sysinfo_now() - t->last_draw >= FRAME_SECONDS) {
        poll_run(t);
        draw(t);
    }
    t->pumping = 0;
}

static void writer(void *ud, int kind, const char *text)
{
    DashTerm *t = ud;
    Dashboard *d = t->d;
    if (kind == SESSION_OUT_STREAM) {
        transcript_add(t, text, 0);
        textpane_append(d->out, text, -1, UI_COLOR_DEFAULT, 0);
        if (t->new_cmd)
            d->cmd_sample[0] = 0, t->new_cmd = 0;
        size_t have = strlen(d->cmd_sample), add = strlen(text), cap = sizeof d->cmd_sample;
        if (add < cap) {
            if (have + add >= cap) {  /* keep the tail */
                size_t drop = have + add - (cap - 1);
                memmove(d->cmd_sample, d->cmd_sample + drop, have - drop + 1);
                have -= drop;
            }
            memcpy(d->cmd_sample + have, text, add + 1);
        }
        d->sample_from_cmd = 1;
        t->dirty = 1;
    } else {
        out_text(t, kind == SESSION_OUT_ERROR ? UI_COLOR_ERROR : UI_COLOR_DEFAULT, text);
    }
    if (d->busy)
        pump(t);
}

/* ---- commands ---- */

static void term_command(DashTerm *t, const char *line)
{
    Dashboard *d = t->d;
    term_out(t, UI_COLOR_ACCENT, "> %s", line);
    int n;
    const Command *table = session_commands(&n);
    if (cmdtable_blocks(table, n, line)) { /* `wait`, `watch`, `sweep wait`: flagged */
        int w = (int)strcspn(line + strspn(line, " \t"), " \t");
        char msg[200];
        snprintf(msg, sizeof msg, "`%.*s` is not needed in the dashboard: it blocks until the "
                 "run ends, and this screen follows the run already (nothing was run)", w,
                 line + strspn(line, " \t"));
        out_text(t, UI_COLOR_WARN, msg);
        return;
    }
    d->busy = 1;
    t->new_cmd = 1;
    t->s->interrupt = 0;
    draw(t);
    session_run_line(t->s, line);
    d->busy = 0;
    if (t->s->ask_cmd[0]) {   /* the command asks first (rm): y runs ask_cmd */
        snprintf(d->confirm_cmd, sizeof d->confirm_cmd, "%s", t->s->ask_cmd);
        snprintf(d->confirm_text[0], sizeof d->confirm_text[0], "%.79s", t->s->ask_text);
        snprintf(d->confirm_text[1], sizeof d->confirm_text[1], "(the plan is in the output)");
        d->confirm = DASH_CONFIRM_CMD;
        t->s->ask_cmd[0] = t->s->ask_text[0] = 0;
    }
    t->s->interrupt = 0;
    t->dirty = 1;
    poll_run(t);
}

static void term_quit(DashTerm *t)
{
    if (t->s->trainer && !trainer_is_done(trainer_status(t->s->trainer)))
        term_command(t, "stop");
    if (dash_view_sweep_active(t->s)) {
        term_out(t, UI_COLOR_WARN, "stopping the sweep (its trial is checkpointed; "
                      "`sweep resume ID` continues it)");
        draw(t);
        session_job_shutdown(t->s);
    }
    t->quit = 1;
}

/* ---- the DashCtx callbacks ---- */

static void ctx_out(void *loop, int color, const char *text) { out_text(loop, color, text); }
static void ctx_command(void *loop, const char *line) { term_command(loop, line); }
static void ctx_quit(void *loop) { term_quit(loop); }

/* ---- terminal setup and the loop ---- */

static int term_open(DashTerm *t)
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

static void term_close(DashTerm *t)
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
static int next_key(DashTerm *t)
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

int dash_term_run(Session *s, Dashboard *d, FILE *transcript)
{
    DashTerm t = {.s = s, .d = d, .saved_stderr = -1, .f_sample = -1, .transcript = transcript};
    t.ctx = (DashCtx){d, s, &t.snap, t.hist_path, &t, ctx_out, ctx_command, ctx_quit};
    t.c = canvas_create(DASH_MIN_W, DASH_MIN_H);
    if (!t.c || term_open(&t)) {
        canvas_destroy(t.c);
        return 1;
    }
    repl_history_path(s, t.hist_path, sizeof t.hist_path);
    char err[LM_ERR_LEN];
    int hist_st = history_load(&d->hist, t.hist_path, err);
    session_set_writer(s, writer, &t);
    s->quiet_progress = 1;
    term_out(&t, UI_COLOR_ACCENT, "lmlab %s: type `train` and watch it learn; F1 or ? lists "
              "the keys, `help` the commands.", LMLAB_VERSION);
    if (hist_st != LM_OK) term_out(&t, UI_COLOR_WARN, "warning: %s", err);
    if (!s->experiment[0] || !strcmp(s->experiment, "default"))
        session_run_line(s, "use default");   /* says which settings `train` will use */
    t.dirty = 1;
    while (!t.quit && !repl_terminating()) {
        if (s->interrupt) {   /* Ctrl-C outside a command: cancel, never quit */
            s->interrupt = 0;
            dash_keys_interrupt(&t.ctx);
            t.dirty = 1;
        }
        poll_run(&t);
        if (t.dirty && sysinfo_now() - t.last_draw >= FRAME_SECONDS)
            draw(&t);
        int key = next_key(&t);
        if (key >= 0) {
            dash_keys_press(&t.ctx, key);
            t.dirty = 1;
        }
    }
    if (repl_terminating())
        term_quit(&t);
    session_set_writer(s, NULL, NULL);
    term_close(&t);
    snapshot_free(&t.snap);
    canvas_destroy(t.c);
    return 0;
}
