/* dash_state.c — the Dashboard's init and free (see dash_state.h). Nothing else. */
#include "dash_state.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dash_state_init(Dashboard *d)
{
    memset(d, 0, sizeof *d);
    d->out = textpane_create(5000);
    if (!d->out)
        return LM_ENOMEM;
    history_init(&d->hist, HISTORY_DEFAULT_MAX);
    editor_init(&d->ed, &d->hist);
    editor_init(&d->aux, NULL);
    snprintf(d->tok.prompt, sizeof d->tok.prompt, "ROMEO:\nBut soft, what light");
    d->cursor_x = d->cursor_y = -1;
    d->hist_cursor = -1;
    return LM_OK;
}

void dash_state_free(Dashboard *d)
{
    textpane_destroy(d->out);
    history_free(&d->hist);
    runstore_rows_free(d->runs, d->n_runs);
    for (int i = 0; i < d->n_marked; i++) {
        free(d->curves[i].pts);
        free(d->curves[i].config);
    }
    free(d->gate_hist);
    free(d->sw_trials);
    runstore_jobs_free(d->jobs, d->n_jobs);
    free(d->sys);                        /* system view */
    textpane_destroy(d->console);
    free(d->tok.text);
    free(d->tok.gates);
    free(d->scratch);
    free(d->mark_rows);
    free(d->hist_group);
    free(d->hist_smooth);
    for (int i = 0; i < d->n_sp; i++)   /* samples view */
        free(d->sp_text[i]);
    for (int i = 0; i < d->n_bands; i++)   /* history view's seed-group bands */
        free(d->bands[i].x), free(d->bands[i].mean), free(d->bands[i].lo), free(d->bands[i].hi);
    memset(d, 0, sizeof *d);
}
