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
    d->cursor_x = d->cursor_y = -1;
    d->alert_base = -1;   /* dash_alerts.c: the store not read yet */
    return LM_OK;
}

void dash_state_free(Dashboard *d)
{
    for (int i = 0; i < d->n_view_slots; i++) {   /* each view's own state */
        if (d->view_slots[i].release)
            d->view_slots[i].release(d->view_slots[i].state);
        free(d->view_slots[i].state);
    }
    textpane_destroy(d->out);
    history_free(&d->hist);
    for (int i = 0; i < d->n_marked; i++) {
        free(d->curves[i].pts);
        free(d->curves[i].config);
    }
    free(d->scratch);
    free(d->mark_rows);
    memset(d, 0, sizeof *d);
}
