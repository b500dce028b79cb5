/* view_history_impl.h — what the history view's three files share (ui/ has no private/;
 * only view_history*.c include this): the view's key actions, its state's lookup, the
 * runs table and its kept columns (view_history_table.c) and the plot pane's pieces, the
 * marked runs' settings, seed groups as bands and the curve cursor (view_history_plot.c).
 * Not an interface for other views: the view is reached through its DashView entry. */
#ifndef LM_UI_VIEW_HISTORY_IMPL_H
#define LM_UI_VIEW_HISTORY_IMPL_H

#include "chart.h"
#include "dash_data.h"
#include "dash_view.h"

enum { K_UP, K_DOWN, K_PAGE_UP, K_PAGE_DOWN, K_MARK, K_OPEN, K_FILTER, K_SORT, K_METRIC,
       K_SMOOTH, K_BAND, K_CUR_LEFT, K_CUR_RIGHT, K_CUR_UP, K_CUR_DOWN, K_REVERSE };

extern const DashView view_history;

/* The view's own state (HistoryView, dash_data.h). The view's entry points (draw, the keys,
 * tick, reload) make sure it exists before anything below reads it, so helpers take it as
 * given; hv(d) is that lookup. */
static inline HistoryView *hv(const Dashboard *d)
{
    return dash_view_state((Dashboard *)d, &view_history);
}

/* view_history_table.c: the runs table in rect r (the fixed columns and the settings that
 * differ among the visible runs, or the columns `runs columns=` kept), the marked rows
 * shown; keeps its scroll in the view's state. */
void view_history_runs_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps,
                             int focused);
/* The kept columns' values of every listed run (groups, final_smooth, series aggregates),
 * read from st only for runs that moved since the last reload. */
void view_history_load_custom(Dashboard *d, RunStore *st);

/* view_history_plot.c: the marked runs side by side in rect in (the settings that differ,
 * then the results). */
void view_history_compare_table(Canvas *c, Rect in, const Dashboard *d,
                                const CanvasCaps *caps);
/* The marked runs' seed groups as mean lines over ± std bands in rect pin. */
void view_history_draw_bands(Canvas *c, Rect pin, Dashboard *d, const CanvasCaps *caps);
/* The curve cursor over the chart framed by f (pr: the plot's box, for its title). */
void view_history_draw_cursor(Canvas *c, Rect pr, const ChartFrame *f, Dashboard *d,
                              const ChartSeries *ps, int n, const CanvasCaps *caps);
/* The cursor's keys (K_CUR_LEFT, K_CUR_RIGHT, K_CUR_UP, K_CUR_DOWN). */
void view_history_cursor_key(Dashboard *d, int action);

#endif
