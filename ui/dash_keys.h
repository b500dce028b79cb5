/* dash_keys.h — what a key does in the dashboard: overlays (help, quit confirmation)
 * first, then the key table (dashboard_key_action) and its actions, then the command
 * line editor (or the filter / prompt line), with completion and history.
 * Not the bindings themselves: the key table lives in dashboard.c. */
#ifndef LM_UI_DASH_KEYS_H
#define LM_UI_DASH_KEYS_H

#include "dash_term.h"

/* Handles one key (a code point, or DASH_KEY_FN(curses code)) in the loop t. */
void dash_keys_press(DashTerm *t, int key);

#endif
