/* dashboard.h — the ncurses dashboard (htop-style), the entry point app/ calls.
 * Views: 1 training (loss/perplexity plots, gates heatmap with a cursor, the cell's
 * histogram and history, the streaming sample), 2 history (the run store table, sort,
 * filter, marked runs overlaid with their config diff), 3 tokens (per-token gates of a
 * prompt); the view table is ui/views.c, one file per view (docs/architecture.md).
 * Module stack (each includes only those below it): dashboard -> dash_term ->
 * {dash_keys, dash_render} -> {dash_keymap, views} -> view_* -> {dash_view, dash_draw,
 * dash_data} -> dash_state -> widgets. Not here: the commands (commands/) or training
 * (core/): the dashboard only reads snapshots. */
#ifndef LM_UI_DASHBOARD_H
#define LM_UI_DASHBOARD_H

#include "session.h"

#include <stdio.h>

/* The interactive dashboard on the terminal until quit, end of input or a termination
 * signal; s must have its signals installed (repl_install_signals). Takes over stdin,
 * stdout and (redirected to lmlab.log next to the database) stderr, restoring them.
 * transcript, when not NULL, gets every line of the output pane as it is added (flushed
 * line by line; the caller opens and closes it). Returns 0, or 1 when the terminal could
 * not be set up (nothing was changed). */
int dashboard_run(Session *s, FILE *transcript);

/* For `bench board`: the median milliseconds of `frames` frames of view `name` (its data
 * reloaded from s's store, as when due, then the whole screen drawn into a w x h canvas,
 * without a terminal). LM_OK, LM_EARG for an unknown view, LM_ENOMEM. */
int dashboard_bench_frame(Session *s, const char *name, int frames, int w, int h, double *ms,
                          char *err);

#endif
