/* dash_render.h — draws a whole dashboard frame into a Canvas from the Dashboard state
 * and a run Snapshot: testable without a terminal. Not the curses loop (dash_term.h). */
#ifndef LM_UI_DASH_RENDER_H
#define LM_UI_DASH_RENDER_H

#include "dash_state.h"

/* Draws a whole frame of size canvas_width x canvas_height from the state and the run
 * snapshot (a zeroed Snapshot with run_id 0 = no run; its cfg still names the model and
 * data to show). Below DASH_MIN_W x DASH_MIN_H it draws only the "terminal too small"
 * message. Writes nothing but the canvas and the state's drawing fields (scratch, table
 * scroll, scrollback clamp, cursor_x/y). */
void dash_render(Canvas *c, Dashboard *d, const Snapshot *snap, const CanvasCaps *caps);

#endif
