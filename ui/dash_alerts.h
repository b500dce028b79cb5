/* dash_alerts.h — alerts in every dashboard: about once a second, the alerts that fired
 * for the run on screen since the last look (runstore_alert_events) become a line in the
 * scrollback each, and the newest stays in the status bar ("alert step>1 11:17:03") while
 * the run is on screen, since the scrollback may scroll it off within a second; the loop
 * rings the terminal bell when there were any. Alerts that had fired before the dashboard
 * first read the store are not replayed (`alert ID` lists them). */
#ifndef LM_UI_DASH_ALERTS_H
#define LM_UI_DASH_ALERTS_H

#include "dash_view.h"

/* The number of new alerts shown (0 when none or not due). */
int dash_alerts_poll(DashCtx *x);

#endif
