/* cmd_plot.h — the `plot` command (commands/cmd_plot.c): curves of several runs, or a
 * run's gate heatmap, read from the run store and drawn to SVG/PNG/PDF by plot/. */
#ifndef LM_CMD_PLOT_H
#define LM_CMD_PLOT_H

#include "session.h"

/* plot ID ID ... [metric=train|val|test|<series>] [x=step|tokens|time] [smooth=K]
 *      [title="..."] file=PATH.svg|png|pdf
 * plot gates ID [step=N] file=PATH.svg|png|pdf */
int cmd_plot(Session *s, int argc, const LexWord *argv);

#endif
