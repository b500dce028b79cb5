/* views.c — the dashboard's view table (see views.h): one line per view, in tab order.
 * Each entry names a `const DashView view_<name>` defined in ui/view_<name>.c. */
#include "views.h"

#include <string.h>

#define DASH_VIEW_TABLE(X) \
    X(train)               \
    X(history)             \
    X(tokens)              \
    X(sweep)               \
    X(jobs)                \
    X(samples)             \
    X(system)              \
    X(grid)

#define DECLARE(name) extern const DashView view_##name;
#define ENTRY(name) &view_##name,
DASH_VIEW_TABLE(DECLARE)
static const DashView *const VIEWS[] = {DASH_VIEW_TABLE(ENTRY)};
#define N_VIEWS ((int)(sizeof VIEWS / sizeof VIEWS[0]))
_Static_assert(N_VIEWS <= DASH_MAX_VIEWS, "one digit key per view");

int views_count(void) { return N_VIEWS; }

const DashView *views_get(int i) { return VIEWS[i]; }

int views_find(const char *name)
{
    for (int i = 0; i < N_VIEWS; i++)
        if (!strcmp(VIEWS[i]->name, name))
            return i;
    return -1;
}

/* 1 for a view whose plot settings are its own (DASH_VIEW_OWN_PLOT: the history view's x
 * axis and log scale chosen there stay there, issue 27). */
static int own_plot(int v)
{
    return (views_get(v)->flags & DASH_VIEW_OWN_PLOT) != 0;
}

void views_switch(DashCtx *x, int v)
{
    Dashboard *d = x->d;
    if (v < 0 || v >= views_count())
        return;
    if (own_plot(d->view) != own_plot(v)) {   /* swap in the entered view's settings */
        int xa = d->x_axis, ly = d->log_y;
        d->x_axis = d->other_x_axis, d->log_y = d->other_log_y;
        d->other_x_axis = xa, d->other_log_y = ly;
    }
    x->d->view = v;
    if (views_get(v)->enter)
        views_get(v)->enter(x);
}
