/* dash_keymap.c — the global key table and the key lookup (see dash_keymap.h).
 * Not the actions (dash_keys.c) and not the view keys (each view_*.c). */
#define NCURSES_WIDECHAR 1
#include "dash_keymap.h"

#include "views.h"

#include <curses.h>

#define KEY_ESC 27
#define KEY_CTRL_L 12
#define KEY_CTRL_D 4

/* THE global key table: dispatch (dash_keymap_action) and the help overlay both read
 * it. Adjacent entries with the same help text share one help line. */
static const DashKey KEYS[] = {
    {DASH_KEY_FN(KEY_F(1)), "F1", DASH_CTX_ANY, DA_HELP, "help (any key closes)"},
    {'?', "?", DASH_CTX_NAV, DA_HELP, "help (any key closes)"},
    {'\t', "Tab", DASH_CTX_ANY, DA_FOCUS_NEXT, "next pane / complete"},
    {DASH_KEY_FN(KEY_BTAB), "S-Tab", DASH_CTX_ANY, DA_FOCUS_PREV, "previous pane"},
    {KEY_ESC, "Esc", DASH_CTX_ANY, DA_FOCUS_VIEW, "leave the command line"},
    {DASH_KEY_FN(KEY_F(5)), "F5", DASH_CTX_ANY, DA_PAUSE, "pause / resume the run"},
    {DASH_KEY_FN(KEY_F(6)), "F6", DASH_CTX_ANY, DA_SAMPLE, "sample 200 tokens"},
    {DASH_KEY_FN(KEY_F(8)), "F8", DASH_CTX_ANY, DA_STOP, "stop the run (asks)"},
    {DASH_KEY_FN(KEY_F(10)), "F10", DASH_CTX_ANY, DA_QUIT, "quit (asks if training)"},
    {KEY_CTRL_D, "C-d", DASH_CTX_NAV, DA_QUIT, "quit (asks if training)"},
    {'*', "*", DASH_CTX_PANE, DA_LOG_Y, "log / linear y"},
    {'>', ">", DASH_CTX_PANE, DA_X_AXIS, "x: steps/tokens/time"},
    {'^', "^", DASH_CTX_PANE, DA_PPL, "loss / perplexity plot"},
    {DASH_KEY_FN(KEY_UP), "Up", DASH_CTX_PANE, DA_UP, "output: scroll"},
    {DASH_KEY_FN(KEY_DOWN), "Down", DASH_CTX_PANE, DA_DOWN, "output: scroll"},
    {DASH_KEY_FN(KEY_PPAGE), "PgUp", DASH_CTX_ANY, DA_PAGE_UP, "page output"},
    {DASH_KEY_FN(KEY_NPAGE), "PgDn", DASH_CTX_ANY, DA_PAGE_DOWN, "page output"},
    {DASH_KEY_FN(KEY_END), "End", DASH_CTX_PANE, DA_END, "output: follow newest"},
    {DASH_KEY_FN(KEY_F(9)), "F9", DASH_CTX_ANY, DA_OUTPUT_SIZE, "output: larger / full"},
    {KEY_CTRL_L, "C-l", DASH_CTX_ANY, DA_REDRAW, "redraw the screen"},
};
#define N_KEYS ((int)(sizeof KEYS / sizeof KEYS[0]))

const DashKey *dash_keymap_keys(int *n)
{
    *n = N_KEYS;
    return KEYS;
}

int dash_keymap_view_fkey(int i)
{
    for (int j = 0; j < N_KEYS; j++)
        if (KEYS[j].key == DASH_KEY_FN(KEY_F(2 + i)))
            return 0;   /* F5 pauses, F10 quits, ...: that view has its digit only */
    return 2 + i;
}

DashAction dash_keymap_action(const Dashboard *d, int key, int *arg)
{
    *arg = 0;
    if (key == '\r' || key == DASH_KEY_FN(KEY_ENTER))
        key = '\n';
    if (d->prompt_mode != DASH_PROMPT_CMD)
        return DA_NONE;   /* a view's line takes every key (Esc cancels) */
    int cmd = d->focus == DASH_FOCUS_CMD, nav = !cmd || d->ed.len == 0;
    if (key == '\t' && cmd && d->ed.len > 0)
        return DA_NONE;   /* completion */
    for (int i = 0; i < views_count(); i++)
        if ((dash_keymap_view_fkey(i) && key == DASH_KEY_FN(KEY_F(2 + i))) ||
            (nav && key == '1' + i)) {
            *arg = i;
            return DA_VIEW;
        }
    if (d->focus == DASH_FOCUS_VIEW) {
        const DashView *v = views_get(d->view);
        for (int i = 0; i < v->n_keys; i++)
            if (v->keys[i].key == key) {
                *arg = v->keys[i].action;
                return DA_VIEW_KEY;
            }
    }
    for (int i = 0; i < N_KEYS; i++) {
        if (KEYS[i].key != key)
            continue;
        int c = KEYS[i].context;
        if (c == DASH_CTX_ANY || (c == DASH_CTX_NAV && nav) || (c == DASH_CTX_PANE && !cmd))
            return KEYS[i].action;
    }
    return DA_NONE;
}
