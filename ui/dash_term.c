/* dash_term.c — the dashboard's curses loop (see dash_term.h). One thread: get_wch with
 * a 100 ms timeout, a snapshot copy per wake-up, keys -> the key table -> actions,
 * commands through session_run_line with their output (and streamed samples) appended
 * to the scrollback by our writer, which also repaints (rate-limited) while a command
 * blocks, so streaming shows token by token. stderr goes to lmlab.log next to the
 * database while curses is up. The wake-up's snapshot and reports are dash_term_poll.c,
 * the terminal's setup and keys dash_term_tty.c. Not the drawing: dashboard_render does
 * every frame. */
#define NCURSES_WIDECHAR 1
#include "dash_term.h"
#include "dash_term_impl.h"

#include "commands.h"

#include "dash_keys.h"
#include "dash_render.h"
#include "err.h"
#include "repl.h"
#include "sysinfo.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_SECONDS 0.1   /* at most ~10 redraws a second */

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

void dash_term_out(DashTerm *t, int color, const char *fmt, ...)
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
        dash_term_poll(t);
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
    dash_term_out(t, UI_COLOR_ACCENT, "> %s", line);
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
    dash_term_poll(t);
}

static void term_quit(DashTerm *t)
{
    if (t->s->trainer && !trainer_is_done(trainer_status(t->s->trainer)))
        term_command(t, "stop");
    if (dash_view_sweep_active(t->s)) {
        dash_term_out(t, UI_COLOR_WARN, "stopping the sweep (its trial is checkpointed; "
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

int dash_term_run(Session *s, Dashboard *d, FILE *transcript)
{
    DashTerm t = {.s = s, .d = d, .saved_stderr = -1, .f_sample = -1, .transcript = transcript};
    t.ctx = (DashCtx){d, s, &t.snap, t.hist_path, &t, ctx_out, ctx_command, ctx_quit};
    t.c = canvas_create(DASH_MIN_W, DASH_MIN_H);
    if (!t.c || dash_term_open(&t)) {
        canvas_destroy(t.c);
        return 1;
    }
    repl_history_path(s, t.hist_path, sizeof t.hist_path);
    char err[LM_ERR_LEN];
    int hist_st = history_load(&d->hist, t.hist_path, err);
    session_set_writer(s, writer, &t);
    s->quiet_progress = 1;
    dash_term_out(&t, UI_COLOR_ACCENT, "lmlab %s: type `train` and watch it learn; F1 or ? lists "
              "the keys, `help` the commands.", LMLAB_VERSION);
    if (hist_st != LM_OK) dash_term_out(&t, UI_COLOR_WARN, "warning: %s", err);
    if (!s->experiment[0] || !strcmp(s->experiment, "default"))
        session_run_line(s, "use default");   /* says which settings `train` will use */
    t.dirty = 1;
    while (!t.quit && !repl_terminating()) {
        if (s->interrupt) {   /* Ctrl-C outside a command: cancel, never quit */
            s->interrupt = 0;
            dash_keys_interrupt(&t.ctx);
            t.dirty = 1;
        }
        dash_term_poll(&t);
        if (t.dirty && sysinfo_now() - t.last_draw >= FRAME_SECONDS)
            draw(&t);
        int key = dash_term_next_key(&t);
        if (key >= 0) {
            dash_keys_press(&t.ctx, key);
            t.dirty = 1;
        }
    }
    if (repl_terminating())
        term_quit(&t);
    session_set_writer(s, NULL, NULL);
    dash_term_close(&t);
    snapshot_free(&t.snap);
    canvas_destroy(t.c);
    return 0;
}
