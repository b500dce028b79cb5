/* dashboard.c — dashboard_run (see dashboard.h): a fresh state, the curses loop, free.
 * Not the loop (dash_term.c) or the drawing (dash_render.c). */
#include "dashboard.h"

#include "dash_state.h"
#include "dash_term.h"

int dashboard_run(Session *s)
{
    Dashboard d;
    if (dash_state_init(&d))
        return 1;
    int rc = dash_term_run(s, &d);
    dash_state_free(&d);
    return rc;
}
