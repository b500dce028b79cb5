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
    X(system)

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
