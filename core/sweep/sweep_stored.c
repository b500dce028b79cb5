/* sweep_stored.c — a stored sweep's progress read from the run store alone (see
 * sweep_runner.h: sweep_stored_progress), so `sweep status ID` and `sweep wait ID` work on
 * any sweep from any process, live or not. Not here: a running sweep's own runner
 * (sweep_runner.c) or what is printed (commands/job.c). */
#include "sweep_runner.h"

#include "runstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sweep_stored_progress(RunStore *st, long id, SweepProgress *p, int *live, char *err)
{
    memset(p, 0, sizeof *p);
    *live = 0;
    SweepRow row = {0};
    SweepTrialRow *t = NULL;
    int n = 0, rc = runstore_sweep_get(st, id, &row, err);
    if (!rc)
        rc = runstore_sweep_trials(st, id, &t, &n, err);
    if (rc) {
        free(row.spec);
        return rc;
    }
    p->sweep_id = id;
    snprintf(p->name, sizeof p->name, "%.47s", row.name);
    if (!p->name[0])
        snprintf(p->name, sizeof p->name, "sweep%ld", id);
    snprintf(p->status, sizeof p->status, "%s", row.status);
    for (int s = SWEEP_GRID; s <= SWEEP_HALVING; s++)
        if (!strcmp(row.strategy, sweep_strategy_name((SweepStrategy)s)))
            p->strategy = (SweepStrategy)s;
    p->total = n;
    for (int i = 0; i < n; i++) {
        const char *s = t[i].status;
        sweep_progress_count(p, s, t[i].stopped_early);
        RunRow r;
        char e2[LM_ERR_LEN];
        int open_run = t[i].run_id > 0 && (!strcmp(t[i].run_status, "running") ||
                                           !strcmp(t[i].run_status, "paused"));
        if (open_run && runstore_get(st, t[i].run_id, &r, e2) == LM_OK) {
            int alive = runstore_run_live(st, &r);
            runstore_row_free(&r);
            *live |= alive;
            if (alive && !strcmp(s, "running") && !p->current) {   /* the first training */
                p->current = t[i].trial;
                p->current_run = t[i].run_id;
                snprintf(p->current_params, sizeof p->current_params, "%s", t[i].params);
            }
        }
    }
    p->ended = strcmp(row.status, "running") && strcmp(row.status, "paused");
    free(t);
    free(row.spec);
    return LM_OK;
}
