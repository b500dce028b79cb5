/* view_train.h — the training view's own state (TrainView), for the tests that fill it;
 * the view itself is view_train.c (its DashView view_train, listed in views.c). */
#ifndef LM_UI_VIEW_TRAIN_H
#define LM_UI_VIEW_TRAIN_H

#include "dash_view.h"

/* The gates heatmap's cursor (layer, level) and the selected cell's history
 * (runstore_series "gate:L:K"), with what was loaded (run, gates step, cell). */
typedef struct {
    int gate_row, gate_col;
    SeriesPoint *gate_hist;               /* (n_gate_hist) malloc'd */
    int n_gate_hist;
    long gh_run, gh_step;
    int gh_row, gh_col;
    double gh_retry;                      /* reload then: the store may lag the snapshot */
} TrainView;

extern const DashView view_train;

#endif
