/* dash_term.h — the dashboard's curses loop: terminal setup (locale, colours, stderr
 * to a log file), a snapshot copy per wake-up, commands run through the Session with
 * their output in the scrollback, redraws at most ~10 per second and only when the
 * snapshot or the state changed. The loop's state (DashTerm) and the helpers the key
 * actions (dash_keys.c) use are declared here. Not the drawing (dashboard.c,
 * dash_views.c) and not the key bindings (dashboard.c's table, dash_keys.c). */
#ifndef LM_UI_DASH_TERM_H
#define LM_UI_DASH_TERM_H

#include "dashboard.h"

#define DASH_TERM_MAX_PENDING 64   /* keys typed while a command runs, replayed after */

typedef struct {
    Session *s;
    Dashboard *d;
    Canvas *c;
    CanvasCaps caps;
    void *screen;                /* the curses SCREEN */
    Snapshot snap;               /* the latest copy; kept after the run is reaped */
    long drawn_run, drawn_seq;
    int dirty, quit, cursor_on, new_cmd, pumping;
    double last_draw;
    long f_run, f_msg, f_sample; /* what of the run the scrollback already reported */
    int f_val, f_end;
    long gh_run, gh_step;        /* the gate history loaded: run, gates step, cell */
    int gh_row, gh_col;
    double gh_retry;             /* reload then: the store may lag the snapshot */
    int pending[DASH_TERM_MAX_PENDING], n_pending;
    char hist_path[1100];
    int saved_stderr;
} DashTerm;

/* Runs the dashboard d (initialised) on the terminal for session s until quit, end of
 * input or a termination signal; restores the terminal, stderr and the session's writer.
 * 0, or 1 when the terminal could not be set up (nothing changed). */
int dash_term_run(Session *s, Dashboard *d);

/* For the key actions. dash_term_out: a line in the scrollback. dash_term_command: runs
 * a command line (echoed; `wait` refused) with the screen following its output.
 * dash_term_quit: stops a training run (recorded) or a running sweep and ends the loop.
 * dash_term_run_active: a run or a sweep is training or paused; dash_term_sweep_active:
 * a sweep is. dash_term_reload_runs: the history
 * list again. dash_term_tokens: the per-token gates of d->tok.prompt with the current
 * weights. dash_term_gate_history: clamps the gate cursor and loads the cell's history
 * when it changed. */
void dash_term_out(DashTerm *t, int color, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void dash_term_command(DashTerm *t, const char *line);
void dash_term_quit(DashTerm *t);
int dash_term_run_active(const DashTerm *t);
int dash_term_sweep_active(const DashTerm *t);
void dash_term_reload_runs(DashTerm *t);
void dash_term_tokens(DashTerm *t);
void dash_term_gate_history(DashTerm *t);

#endif
