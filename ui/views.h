/* views.h — THE table of dashboard views (views.c), in tab order: view i is shown by
 * the key '1' + i (on an empty command line or from a pane) and by F(2 + i). Adding a
 * view is one file (view_<name>.c defining `const DashView view_<name>`) and one line in
 * views.c (docs/architecture.md). Not the views themselves. */
#ifndef LM_UI_VIEWS_H
#define LM_UI_VIEWS_H

#include "dash_view.h"

/* The number of views (1 .. DASH_MAX_VIEWS). */
int views_count(void);
/* View i (0 <= i < views_count()). */
const DashView *views_get(int i);
/* The index of the view called name, or -1. */
int views_find(const char *name);

/* Makes view v the one on screen, as its number key does: the history view's own plot
 * settings swapped in or out, the view's enter hook run. */
void views_switch(DashCtx *x, int v);

#endif
