/* dash_term.h — the dashboard's curses loop: terminal setup (locale, colours, stderr
 * to a log file), a snapshot copy per wake-up, commands run through the Session with
 * their output in the scrollback, redraws at most ~10 per second and only when the
 * snapshot or the state changed. Keys go to dash_keys_press with a DashCtx whose
 * callbacks (scrollback line, run a command, quit) are this loop's. Not the drawing
 * (dash_render.c, view_*.c) and not the key bindings (dash_keymap.c, view_*.c). */
#ifndef LM_UI_DASH_TERM_H
#define LM_UI_DASH_TERM_H

#include "dash_state.h"

#include <stdio.h>

/* Runs the dashboard d (initialised) on the terminal for session s until quit, end of
 * input or a termination signal; restores the terminal, stderr and the session's writer.
 * Every line added to the output pane is also appended to transcript (when not NULL).
 * 0, or 1 when the terminal could not be set up (nothing changed). */
int dash_term_run(Session *s, Dashboard *d, FILE *transcript);

#endif
