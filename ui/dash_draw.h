/* dash_draw.h — drawing helpers the dashboard's views and chrome share: wrapped text,
 * a centred dim message, the state's scratch buffer, the marked runs' loss curves as
 * plot series, the x axis name. Pure drawing into a Canvas. Not a view. */
#ifndef LM_UI_DASH_DRAW_H
#define LM_UI_DASH_DRAW_H

#include "dash_state.h"
#include "chart.h"

/* One row of s (len bytes) at most w columns wide, broken at the last space when a word
 * would be cut (a word longer than the row is cut) and at a newline. Sets *end to the
 * row's length in bytes; returns where the next row starts (the spaces or newline at the
 * break swallowed). */
size_t dash_draw_wrap_row(const char *s, size_t len, int w, size_t *end);
/* Draws text into r word-wrapped at r.w columns (newlines kept): the first r.h rows when
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
/* Appends the marked runs' curves to ps[n..], their x/y written into buf
 * (dash_draw_curves_need doubles), smoothed by d->cmp_smooth, each in its run's colour;
 * returns the new count. mode DASH_CURVES_AS_IS: d->cmp_metric as it is (history view);
 * DASH_CURVES_LOSS / DASH_CURVES_PPL: only when the metric is a loss (train or
 * validation), exp'd for PPL (the training view's overlays). */
enum { DASH_CURVES_LOSS, DASH_CURVES_PPL, DASH_CURVES_AS_IS };
int dash_draw_add_curves(const Dashboard *d, ChartSeries *ps, int n, double *buf, int mode);
/* The colour of run id's curve: the same run, the same colour, in every plot. */
int dash_draw_run_color(long id);
/* The name of d->cmp_metric ("train loss (smoothed)", "validation loss", ...) and of the
 * smoothing ("off", "5 pts", ...). */
const char *dash_draw_cmp_label(const Dashboard *d);
const char *dash_draw_smooth_label(const Dashboard *d);
/* y[0..n) smoothed in place by the one EMA (core/base/smooth.h) over a span of window points
 * (1: as is; non-finite points are skipped by the average but kept where they are). */
void dash_draw_smooth(double *y, int n, int window);
/* The settings that differ among n "key=value\n" configs, ranked as runkeys_diff (what a
 * sweep swept first, the seed last; sweeps: each run's sweep id, or NULL): up to max names
 * into keys. Returns how many differ (may exceed max). */
int dash_draw_diff_keys(const char *const *configs, const long *sweeps, int n,
                        char (*keys)[32], int max);

static inline int dash_draw_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

#endif
