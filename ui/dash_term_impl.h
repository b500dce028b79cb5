/* dash_term_impl.h — what the dashboard loop's three files share (ui/ has no private/;
 * only dash_term*.c include this): the loop's state, the scrollback line the wake-up's
 * reports print through (dash_term.c), the wake-up itself (dash_term_poll.c) and the
 * terminal's setup and keys (dash_term_tty.c). Not an interface for views: they get a
 * DashCtx (dash_view.h). */
#ifndef LM_UI_DASH_TERM_IMPL_H
#define LM_UI_DASH_TERM_IMPL_H

#include "dash_follow.h"
#include "dash_state.h"
#include "dash_view.h"

#include <stdio.h>

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

/* A scrollback line of color, printf-style (at most 2 KiB), also in the transcript. */
void dash_term_out(DashTerm *t, int color, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* dash_term_poll.c: takes a snapshot of the run — a running sweep's trial, else the
 * session's run, else an ended sweep's last trial — or, without any, shows the
 * configuration `train` would use; then updates what depends on it (status bar, the
 * scrollback's reports, alerts, the view's tick), setting t->dirty when a redraw is due. */
void dash_term_poll(DashTerm *t);

/* dash_term_tty.c: sets up the terminal (locale, curses, colours, stderr to lmlab.log
 * next to the database): 0, or -1 when it cannot (no TERM, a dumb one), nothing changed. */
int dash_term_open(DashTerm *t);
/* Ends curses and puts stderr back. */
void dash_term_close(DashTerm *t);
/* The next key (keys kept while a command ran first; Esc sequences curses did not decode
 * mapped or dropped; Ctrl-C through a launcher's pipe sets the session's interrupt). -1
 * for none within the loop's 100 ms. */
int dash_term_next_key(DashTerm *t);

#endif
