/* dash_view.c — the small helpers views share (see dash_view.h): each view's own state,
 * scrollback lines,
 * whether a run or sweep is active, opening a view's aux line. Not the views. */
#include "dash_view.h"

#include "err.h"
#include "sweep_runner.h"
#include "sysinfo.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void *dash_view_state(Dashboard *d, const DashView *v)
{
    if (!v->state_size)
        return NULL;
    for (int i = 0; i < d->n_view_slots; i++)
        if (d->view_slots[i].view == v)
            return d->view_slots[i].state;
    if (d->n_view_slots == DASH_MAX_VIEW_SLOTS)
        return NULL;
    void *state = calloc(1, v->state_size);
    if (!state || (v->init && v->init(state) != LM_OK)) {
        free(state);
        return NULL;
    }
    d->view_slots[d->n_view_slots++] = (DashViewSlot){v, state, v->free};
    return state;
}

void dash_view_out(DashCtx *x, int color, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    x->out(x->loop, color, buf);
}

int dash_view_sweep_active(Session *s)
{
    SweepRunner *sw = session_job_sweep(s);
    return sw && !sweep_runner_done(sw);
}

int dash_view_run_active(const DashCtx *x)
{
    return (x->s->trainer && x->snap->run_id && !trainer_is_done(x->snap->status)) ||
           dash_view_sweep_active(x->s);
}

int dash_view_due(double *next, int forced)
{
    double now = sysinfo_now();
    if (!forced && now < *next)
        return 0;
    *next = now + 1.0;
    return 1;
}

void dash_view_prompt(DashCtx *x, const char *label, const char *text)
{
    Dashboard *d = x->d;
    d->prompt_mode = DASH_PROMPT_VIEW;
    snprintf(d->prompt_label, sizeof d->prompt_label, "%s", label);
    char buf[600];
    size_t o = 0;
    for (const char *p = text; *p && o + 3 < sizeof buf; p++) /* show newlines as \n */
        if (*p == '\n')
            buf[o++] = '\\', buf[o++] = 'n';
        else
            buf[o++] = *p;
    buf[o] = 0;
    editor_set_line(&d->aux, buf);
    editor_select_all(&d->aux);   /* typing replaces the old text; arrows keep it */
}
