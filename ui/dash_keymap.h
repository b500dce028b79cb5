/* dash_keymap.h — the dashboard's global key table (key, context, action, help) and
 * the lookup that decides what a key means in the current focus: a view switch (the
 * view table's order gives the keys), the current view's own key (its DashView keys),
 * a global action, or nothing (the key is typed into the line). The help overlay reads
 * the same tables. Not what the actions do (dash_keys.c).
 *
 * Focus and keys (one rule: typing a command can never trigger an action). No letter
 * is bound to anything: a letter always goes to the command line, and from a pane it
 * moves the focus there first, so everything typed after it is text. The command line
 * has the focus at start. View keys are not letters (arrows, PgUp/PgDn, End, Space,
 * Enter, / = * > ^) and act only while a pane (the view or the output) has the focus;
 * Esc, Tab and S-Tab move the focus. On an empty command line, and from a pane, '1'..'9'
 * switch views and '?' shows the help (no command starts with them). Function keys work
 * everywhere: F1 help, F2.. views, F5 pause/resume, F6 sample, F8 stop (asks), F10 quit
 * (asks while training). Destructive keys ask first. The screen shows which has the
 * focus (the tab line's badge, the bold frame, the prompt). */
#ifndef LM_UI_DASH_KEYMAP_H
#define LM_UI_DASH_KEYMAP_H

#include "dash_state.h"

/* Actions the global key table maps keys to. */
typedef enum {
    DA_NONE, DA_HELP, DA_FOCUS_NEXT, DA_FOCUS_PREV, DA_FOCUS_VIEW,
    DA_VIEW,      /* show view *arg */
    DA_VIEW_KEY,  /* the current view's key: its action is *arg */
    DA_QUIT, DA_PAUSE, DA_SAMPLE, DA_STOP, DA_LOG_Y, DA_X_AXIS, DA_PPL, DA_UP, DA_DOWN,
    DA_PAGE_UP, DA_PAGE_DOWN, DA_END, DA_REDRAW, DA_OUTPUT_SIZE
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

/* The function key number that shows view i: F(i+2), or 0 when a global key has it
 * (the view is then shown by its digit alone). */
int dash_keymap_view_fkey(int i);

#endif
