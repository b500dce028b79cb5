/* dash_keymap.h — the dashboard's global key table (key, context, action, help) and
 * the lookup that decides what a key means in the current focus: a view switch (the
 * view table's order gives the keys), the current view's own key (its DashView keys),
 * a global action, or nothing (the key is typed into the line). The help overlay reads
 * the same tables. Not what the actions do (dash_keys.c).
 *
 * Focus and keys: the command line has the focus at start, so typing `train` works at
 * once. While it has the focus, printable keys go to the line, except on an EMPTY line
 * '1'.. '9' '?' (no command starts with them); Tab completes a non-empty line and
 * otherwise cycles the focus; Esc moves the focus to the view. With the view or the
 * output pane focused, the single-letter shortcuts work and any other printable key
 * goes back to the command line and is typed there. Function keys work everywhere. */
#ifndef LM_UI_DASH_KEYMAP_H
#define LM_UI_DASH_KEYMAP_H

#include "dash_state.h"

/* Actions the global key table maps keys to. */
typedef enum {
    DA_NONE, DA_HELP, DA_FOCUS_NEXT, DA_FOCUS_PREV, DA_FOCUS_VIEW,
    DA_VIEW,      /* show view *arg */
    DA_VIEW_KEY,  /* the current view's key: its action is *arg */
    DA_QUIT, DA_PAUSE, DA_SAMPLE, DA_STOP, DA_LOG_Y, DA_X_AXIS, DA_PPL, DA_UP, DA_DOWN,
    DA_PAGE_UP, DA_PAGE_DOWN, DA_END, DA_REDRAW
} DashAction;

/* Where a global key binding applies. */
enum {
    DASH_CTX_ANY,     /* whatever has the focus */
    DASH_CTX_NAV,     /* a pane has the focus, or the command line is empty */
    DASH_CTX_PANE,    /* the view or the output pane has the focus */
};

typedef struct {
    int key;           /* '?', 27 (Esc), DASH_KEY_FN(KEY_F(1)), ... */
    const char *label; /* as shown in the help overlay: "F1", "?", "Space" */
    int context;       /* DASH_CTX_* */
    DashAction action;
    const char *help;  /* one line */
} DashKey;

/* The global key table (without the view keys: views.h). */
const DashKey *dash_keymap_keys(int *n);
/* The action bound to key in d's current focus and state, with its argument in *arg
 * (DA_VIEW: the view index; DA_VIEW_KEY: the view's action), or DA_NONE (the key goes
 * to the line editor; Tab on a non-empty command line is completion). */
DashAction dash_keymap_action(const Dashboard *d, int key, int *arg);

#endif
