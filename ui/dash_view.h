/* dash_view.h — what a dashboard view is (DashView: name, keys, its own state, draw,
 * on_key, hooks)
 * and what it may ask of the loop (DashCtx: the state, the session, the latest snapshot,
 * a line in the scrollback, running a command). Views are listed in ONE table
 * (views.c); each lives in its own file (view_<name>.c). The loop (dash_term.c) fills a
 * DashCtx; views never include it, so dependencies point one way:
 * dash_term -> dash_keys, dash_render -> views -> view_* -> dash_view -> dash_state.
 * Not the global keys (dash_keymap.c) and not the chrome (dash_render.c). */
#ifndef LM_UI_DASH_VIEW_H
#define LM_UI_DASH_VIEW_H

#include "dash_state.h"

/* What a view (or the key actions) may use. loop is the caller's; the callbacks get it. */
typedef struct DashCtx {
    Dashboard *d;
    Session *s;
    const Snapshot *snap;
    const char *hist_path;   /* the command history file */
    void *loop;
    void (*out)(void *loop, int color, const char *text);   /* a scrollback line */
    void (*command)(void *loop, const char *line);          /* runs it, echoed */
    void (*quit)(void *loop);  /* stops a run or sweep (recorded) and ends the loop */
} DashCtx;

/* One key of a view: acts when the view has the focus; listed in the help overlay. */
typedef struct {
    int key;           /* code point or DASH_KEY_FN(KEY_*) */
    const char *label; /* "Space", "Up" */
    int action;        /* the view's own code, passed to on_key */
    const char *help;  /* one line */
} DashViewKey;

/* DashView.flags */
enum {
    DASH_VIEW_OWN_PLOT = 1,   /* its plot settings (x axis, log y) are its own, kept apart
                                 from the other views' (swapped in when it is entered) */
};

typedef struct DashView {
    const char *name;       /* tab label and lookup ("history"); key: its place in the table */
    int flags;              /* DASH_VIEW_* */
    /* Its own state (dash_view_state): state_size bytes, zeroed, then init (LM_OK or
     * LM_ENOMEM; or NULL) on the view's first use in a Dashboard; free (or NULL) releases
     * what it holds when the Dashboard is freed. 0: no state of its own. */
    size_t state_size;
    int (*init)(void *state);
    void (*free)(void *state);
    const DashViewKey *keys;
    int n_keys;
    /* Draws the view into r (r.w >= 40, r.h >= 8 expected; smaller still draws without
     * overflowing). focused: bold frame. Writes only the canvas and d's drawing fields. */
    void (*draw)(Canvas *c, Rect r, Dashboard *d, const Snapshot *snap,
                 const CanvasCaps *caps, int focused);
    void (*on_key)(DashCtx *x, int action);            /* one of keys[].action */
    void (*enter)(DashCtx *x);        /* it becomes the current view: load; or NULL */
    void (*run_ended)(DashCtx *x);    /* the shown run ended (current view); or NULL */
    int (*tick)(DashCtx *x);          /* each wake-up (current view): 1 redraw; or NULL */
    void (*on_prompt)(DashCtx *x, const char *line); /* its aux line submitted; or NULL */
} DashView;

/* v's own state in d (made on first use, see DashView.state_size; owned by d and freed
 * by dash_state_free). NULL when v has none or it could not be made (out of memory):
 * the view then draws and does nothing. */
void *dash_view_state(Dashboard *d, const DashView *v);
/* A line in the scrollback (printf-style) through x->out. */
void dash_view_out(DashCtx *x, int color, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A run or a sweep is training or paused (dash_view_sweep_active: a sweep is). */
int dash_view_run_active(const DashCtx *x);
int dash_view_sweep_active(Session *s);
/* Whether a view's reload is due: forced, or *next (monotonic s) has passed; when due,
 * the next one is a second later. Views reload their store data at most once a second. */
int dash_view_due(double *next, int forced);
/* Opens the aux line with label ("filter> ") holding text (newlines shown as \n); its
 * Enter goes to the current view's on_prompt, Esc cancels. */
void dash_view_prompt(DashCtx *x, const char *label, const char *text);

#endif
