/* dash_keys.h — what a key does in the dashboard: overlays (help, quit confirmation)
 * first, then the key lookup (dash_keymap_action) and its actions (global ones here,
 * a view's own ones in its on_key), then the command line editor (or a view's line),
 * with completion and history. Works through a DashCtx, so it never calls the loop
 * directly. Not the bindings (dash_keymap.c, view_*.c). */
#ifndef LM_UI_DASH_KEYS_H
#define LM_UI_DASH_KEYS_H

#include "dash_view.h"

/* Handles one key (a code point, or DASH_KEY_FN(curses code)). */
void dash_keys_press(DashCtx *x, int key);

/* Ctrl-C (the signal or the key) outside a command: closes an overlay (a question is
 * answered "no"), else cancels the view's line, else clears the command line, else (an
 * empty line) says how to quit. Never quits. */
void dash_keys_interrupt(DashCtx *x);

#endif
