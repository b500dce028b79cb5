/* statusbar.c — the status line: state badge, then fields chosen by priority to fit
 * the width (dropped whole, never wrapped or cut mid-field unless the badge alone
 * does not fit). Not a layout manager for more than one line. */
#include "statusbar.h"

#include <string.h>

#define STATUSBAR_MAX_FIELDS 32
#define SEP 2

int statusbar_state_color(int state)
{
    switch (state) {
    case STATUSBAR_TRAINING: return UI_COLOR_OK;
    case STATUSBAR_PAUSED: return UI_COLOR_WARN;
    case STATUSBAR_DIVERGED:
    case STATUSBAR_FAILED: return UI_COLOR_ERROR;
    case STATUSBAR_FINISHED: return UI_COLOR_ACCENT;
    default: return UI_COLOR_DIM;
    }
}

static const char *statusbar_state_name(int state)
{
    switch (state) {
    case STATUSBAR_TRAINING: return "TRAINING";
    case STATUSBAR_PAUSED: return "PAUSED";
    case STATUSBAR_DIVERGED: return "DIVERGED";
    case STATUSBAR_FAILED: return "FAILED";
    case STATUSBAR_FINISHED: return "FINISHED";
    default: return "IDLE";
    }
}

static int field_width(const StatusField *f)
{
    int w = canvas_utf8_width(f->value);
    if (f->label && f->label[0])
        w += canvas_utf8_width(f->label) + (f->value && f->value[0] ? 1 : 0);
    return w;
}

/* Marks in keep[] the fields that fit in `avail` columns, dropping the lowest
 * priority first (the rightmost of equals). Returns how many are kept. */
static int choose(const StatusBarData *d, int n, int avail, int *keep)
{
    int total = 0, kept = n;
    for (int i = 0; i < n; i++) {
        keep[i] = 1;
        total += SEP + field_width(&d->fields[i]);
    }
    while (total > avail && kept > 0) {
        int worst = -1;
        for (int i = 0; i < n; i++)
            if (keep[i] && (worst < 0 || d->fields[i].priority <= d->fields[worst].priority))
                worst = i;
        keep[worst] = 0;
        kept--;
        total -= SEP + field_width(&d->fields[worst]);
    }
    return kept;
}

static int field_draw(Canvas *c, int x, int y, int end, const StatusField *f,
                      const CanvasCaps *caps)
{
    x += SEP;
    if (f->label && f->label[0]) {
        x += canvas_text(c, x, y, end - x, f->label, UI_COLOR_DIM, caps->colors ? 0 : UI_ATTR_DIM);
        if (f->value && f->value[0])
            x++;
    }
    int color = caps->colors ? f->color : 0;
    x += canvas_text(c, x, y, end - x, f->value, color, UI_ATTR_BOLD);
    return x;
}

int statusbar_draw(Canvas *c, Rect r, const StatusBarData *d, const CanvasCaps *caps)
{
    if (r.w < 1 || r.h < 1 || !d)
        return 0;
    const char *name = d->state_text ? d->state_text : statusbar_state_name(d->state);
    int color = caps->colors ? statusbar_state_color(d->state) : 0;
    int end = r.x + r.w, x = r.x;
    canvas_put(c, x++, r.y, " ", color, UI_ATTR_REVERSE | UI_ATTR_BOLD);
    x += canvas_text_fit(c, x, r.y, end - x, name, color, UI_ATTR_REVERSE | UI_ATTR_BOLD,
                         caps->unicode);
    canvas_put(c, x++, r.y, " ", color, UI_ATTR_REVERSE | UI_ATTR_BOLD);
    int n = d->n_fields < STATUSBAR_MAX_FIELDS ? d->n_fields : STATUSBAR_MAX_FIELDS;
    if (!d->fields || n <= 0 || x >= end)
        return 0;
    int keep[STATUSBAR_MAX_FIELDS];
    int kept = choose(d, n, end - x, keep);
    int right_w = 0;
    for (int i = 0; i < n; i++)
        if (keep[i] && d->fields[i].right)
            right_w += SEP + field_width(&d->fields[i]);
    for (int i = 0; i < n; i++)
        if (keep[i] && !d->fields[i].right)
            x = field_draw(c, x, r.y, end, &d->fields[i], caps);
    x = end - right_w;
    for (int i = 0; i < n; i++)
        if (keep[i] && d->fields[i].right)
            x = field_draw(c, x, r.y, end, &d->fields[i], caps);
    return kept;
}
