/* dash_views.h — the dashboard's three main views drawn into a rectangle of a Canvas
 * from the Dashboard state and a run Snapshot: training (plots, gates, sample), history
 * (run table, marked runs' curves, config diff) and tokens (per-token gates). Pure
 * drawing: nothing here touches curses, the session or the store; data is loaded by
 * the loop (dashboard.c / dash_term.c). Not the chrome (status bar, command line, help:
 * dashboard.c). */
#ifndef LM_UI_DASH_VIEWS_H
#define LM_UI_DASH_VIEWS_H

#include "dashboard.h"

/* Each draws the view into r (r.w >= 40, r.h >= 8 expected; smaller still draws
 * without overflowing). focused: the view has the keyboard focus (bold frame). They
 * write only the canvas and d's drawing fields (scratch, run_scroll, mark_rows). */
void dash_views_training(Canvas *c, Rect r, Dashboard *d, const Snapshot *snap,
                         const CanvasCaps *caps, int focused);
void dash_views_history(Canvas *c, Rect r, Dashboard *d, const Snapshot *snap,
                        const CanvasCaps *caps, int focused);
void dash_views_tokens(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused);

/* Draws text into r wrapped at r.w columns (newlines kept): the first r.h rows when
 * from_top, else the last r.h rows (the tail of a streaming text). */
void dash_views_wrap(Canvas *c, Rect r, const char *text, int color, int from_top);

#endif
