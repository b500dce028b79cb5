/* statusbar.h — the one-line summary at the bottom of the dashboard: a coloured state
 * badge then "label value" fields; when the line is too narrow, the lowest-priority
 * fields are dropped whole instead of wrapping. Reads plain strings.
 * Not a message line: transient messages belong to the text pane. */
#ifndef LM_UI_STATUSBAR_H
#define LM_UI_STATUSBAR_H

#include "canvas.h"

enum {
    STATUSBAR_IDLE = 0,
    STATUSBAR_TRAINING,   /* green */
    STATUSBAR_PAUSED,     /* yellow */
    STATUSBAR_DIVERGED,   /* red */
    STATUSBAR_FAILED,     /* red */
    STATUSBAR_FINISHED,   /* accent */
};

typedef struct {
    const char *label;    /* "step", may be NULL */
    const char *value;    /* "1200/5000" */
    int priority;         /* higher survives longer; lowest dropped first (rightmost on ties) */
    int color;            /* UI_COLOR_* for the value, 0 = default */
    int right;            /* 1: aligned to the right end of the line (e.g. "F1 help") */
} StatusField;

typedef struct {
    int state;            /* STATUSBAR_* */
    const char *state_text; /* NULL: the state's name ("TRAINING", ...) */
    const StatusField *fields; /* (n_fields), kept in this order */
    int n_fields;
} StatusBarData;

/* Draws the first row of r: the state badge (always kept, in reverse video and its
 * colour), then the fields that fit, separated by two spaces, the `right` ones
 * packed at the right end. Draws nothing when r.w < 1 or r.h < 1. Returns the number
 * of fields shown. */
int statusbar_draw(Canvas *c, Rect r, const StatusBarData *d, const CanvasCaps *caps);

/* The colour (UI_COLOR_*) and default name of a state. */
int statusbar_state_color(int state);

#endif
