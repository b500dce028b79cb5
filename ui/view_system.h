/* view_system.h — the system view's own state (SystemView), for the tests that fill it;
 * the view itself is view_system.c (its DashView view_system, listed in views.c). */
#ifndef LM_UI_VIEW_SYSTEM_H
#define LM_UI_VIEW_SYSTEM_H

#include "dash_view.h"
#include "textpane.h"

/* The shown run's system metrics and console. */
typedef struct {
    long sys_run;                         /* the run they were read for */
    SysSample *sys;                       /* (n_sys) malloc'd, by time */
    int n_sys;
    TextPane *console;                    /* the run's console lines */
    long console_after, console_cut;      /* last line read; lines cut from its start */
    double sys_next;                      /* reload then (monotonic seconds) */
} SystemView;

extern const DashView view_system;

#endif
