/* view_sweep.h — the sweep view's own state (SweepView), for the tests that fill it; the
 * view itself is view_sweep.c (its DashView view_sweep, listed in views.c). */
#ifndef LM_UI_VIEW_SWEEP_H
#define LM_UI_VIEW_SWEEP_H

#include "dash_view.h"

/* The sweep shown (the session's, else the newest stored) and its trials. */
typedef struct {
    long sw_id;
    char sw_name[64], sw_status[16];
    SweepTrialRow *sw_trials;             /* (n_sw_trials) malloc'd */
    int n_sw_trials, sw_sel, sw_scroll, sw_param; /* sw_param: the swept key on the x axis */
    double sw_next;                       /* reload then (monotonic seconds) */
    char sw_bar_seen[96];                 /* the table was loaded when the status bar's sweep
                                             progress read this (a change reloads it) */
} SweepView;

extern const DashView view_sweep;

#endif
