/* dash_draw.h — drawing helpers the dashboard's views and chrome share: wrapped text,
 * a centred dim message, the state's scratch buffer, the marked runs' loss curves as
 * plot series, the x axis name. Pure drawing into a Canvas. Not a view. */
#ifndef LM_UI_DASH_DRAW_H
#define LM_UI_DASH_DRAW_H

#include "dash_state.h"
#include "plot.h"

/* Draws text into r wrapped at r.w columns (newlines kept): the first r.h rows when
 * from_top, else the last r.h rows (the tail of a streaming text). */
void dash_draw_wrap(Canvas *c, Rect r, const char *text, int color, int from_top);
/* A dim message in the middle of in (a box's inner rectangle). */
void dash_draw_message(Canvas *c, Rect in, const char *text);
/* d->scratch grown to need doubles, or NULL (out of memory). */
double *dash_draw_scratch(Dashboard *d, long need);
/* "step", "tokens" or "seconds" for d->x_axis. */
const char *dash_draw_x_label(const Dashboard *d);
/* Doubles the marked runs' curves need in a scratch buffer. */
long dash_draw_curves_need(const Dashboard *d);
/* Appends the marked runs' loss curves (exp'd when ppl) to ps[n..], their x/y written
 * into buf (dash_draw_curves_need doubles); returns the new count. */
int dash_draw_add_curves(const Dashboard *d, PlotSeries *ps, int n, double *buf, int ppl);

static inline int dash_draw_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

#endif
