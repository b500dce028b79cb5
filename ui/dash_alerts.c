/* dash_alerts.c — new fired alerts of the run on screen as scrollback lines (see
 * dash_alerts.h). Stored text is escaped by safetext before it reaches the screen. */
#include "dash_alerts.h"
#include "runstore_notes.h"
#include "safetext.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int dash_alerts_poll(DashCtx *x)
{
    Dashboard *d = x->d;
    long run = x->snap ? x->snap->run_id : 0;
    RunStore *st = x->s->store;
    if (!st || !dash_view_due(&d->alert_next, 0)) return 0;
    AlertEvent *ev = NULL;
    int n = 0, shown = 0;
    char err[LM_ERR_LEN], msg[600];
    if (d->alert_base < 0) {   /* the first read: what fired before this dashboard is old */
        if (runstore_alert_events(st, 0, 0, 0, &ev, &n, err)) return 0;
        d->alert_base = n ? ev[n - 1].id : 0;
        free(ev);
        ev = NULL;
        n = 0;
    }
    if (run <= 0) return 0;
    if (run != d->alert_run) {   /* a run on screen: every alert of it since the dashboard
                                    read the store, even one that fired before it came on
                                    screen (the first sight may come late) */
        d->alert_run = run;
        d->alert_seen = d->alert_base;
        d->alert_last[0] = 0;
    }
    if (runstore_alert_events(st, run, d->alert_seen, 16, &ev, &n, err)) return 0;
    for (int i = 0; i < n; i++, shown++) {
        d->alert_seen = ev[i].id;
        time_t t = (time_t)ev[i].t;
        struct tm tm;
        char when[16] = "";
        if (localtime_r(&t, &tm)) strftime(when, sizeof when, "%H:%M:%S", &tm);
        safetext_escape(msg, sizeof msg, ev[i].rule, 0);
        snprintf(d->alert_last, sizeof d->alert_last, "%.40s %s", msg, when);
        safetext_escape(msg, sizeof msg, ev[i].message, 0);
        char cmd[120], rule[80];   /* what the command did: started, or refused (issue 46) */
        safetext_escape(cmd, sizeof cmd, ev[i].cmd_status, 0);
        safetext_escape(rule, sizeof rule, ev[i].rule, 0);   /* a planted rule's bytes too */
        dash_view_out(x, UI_COLOR_ERROR, "ALERT run #%ld %s: %s%s%s%s", run, rule, msg,
                      cmd[0] ? " (command " : "", cmd, cmd[0] ? ")" : "");
    }
    free(ev);
    return shown;
}
