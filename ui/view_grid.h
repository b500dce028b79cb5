/* view_grid.h — the grid view's own state (GridView), for the tests that fill it; the
 * view itself is view_grid.c (its DashView view_grid, listed in views.c). */
#ifndef LM_UI_VIEW_GRID_H
#define LM_UI_VIEW_GRID_H

#include "dash_view.h"
#include "runstore_series.h"
#include "series.h"

/* The shown run's series matching the pattern, and the pick. */
typedef struct {
    long run;                             /* the run they were read for */
    char pattern[SERIES_NAME_LEN];        /* "*" at first */
    char (*names)[SERIES_NAME_LEN];       /* (n) malloc'd, registry order */
    double **x, **y;                      /* (n) each (len[k]) malloc'd: step, value */
    int *len;
    HistPoint **hist;                     /* (n) a histogram series' steps, else NULL */
    int *n_hist;
    int n, sel, enlarged;
    int cols;                             /* charts per row at the last draw */
    char msg[LM_ERR_LEN];                 /* why nothing is shown ("" when something is) */
    double next;                          /* reload then (monotonic seconds) */
    long loaded_step;                     /* the run's last step when read (-1: never) */
} GridView;

extern const DashView view_grid;

/* Reads run's series matching g->pattern from st into g. LM_OK, or LM_EARG with g->msg
 * saying why nothing is shown (a pattern that matches none names what the run has). */
int view_grid_load(GridView *g, RunStore *st, long run);
/* Reads only the points from the last step g holds on, for g->run (a live run's new
 * steps), and puts them in place of that step's; when the series the pattern matches changed, reads all (view_grid_load). */
int view_grid_update(GridView *g, RunStore *st);

enum { VIEW_GRID_UP, VIEW_GRID_DOWN, VIEW_GRID_LEFT, VIEW_GRID_RIGHT, VIEW_GRID_ENLARGE };

/* Moves the pick (or toggles enlarging) as an arrow or Enter does (VIEW_GRID_*), Up and
 * Down by a row of the grid as last drawn. */
void view_grid_move(GridView *g, int action);

#endif
