/* cmd_plot.h — the `plot` command (commands/cmd_plot.c): curves of several runs, or a
 * run's gate heatmap, read from the run store and drawn to SVG/PNG/PDF by plot/. */
#ifndef LM_CMD_PLOT_H
#define LM_CMD_PLOT_H

#include "plot_read.h"
#include "session.h"

/* plot ID ID ... [metric=train|val|test|<series>] [x=step|tokens|time] [smooth=K]
 *      [title="..."] file=PATH.svg|png|pdf
 * plot gates ID [step=N] file=PATH.svg|png|pdf
 * plot ID series=PATTERN file=PATH.svg|png|pdf (a grid of the run's matching series) */
int cmd_plot(Session *s, int argc, const LexWord *argv);

/* One run's series matching pattern (series.h) as small multiples into path
 * (cmd_plot_grid.c; `plot ID series=PATTERN` and the report's grid). *n_series receives
 * how many, *n_decimated (may be NULL) how many were read decimated (plot_read.h: a
 * series of more points than its M4 columns keep); LM_EARG naming the run's series when
 * the pattern matches none. */
int cmd_plot_grid_file(RunStore *st, long id, const char *pattern, const char *path,
                       const char *title, int *n_series, int *n_decimated, char *err);
/* The same figure of series already read (plot_read_many: names[k]'s curve c[k], a
 * histogram series' mean; a histogram is drawn as its heat strip, read here, and c[k].x
 * then holds its steps): what the report draws of the series it read with its curves. */
int cmd_plot_grid_draw(RunStore *st, long id, char (*names)[SERIES_NAME_LEN], PlotCurve *c,
                       int n, const char *path, const char *title, int *n_decimated, char *err);

/* series [RUN_ID] [PATTERN]: the registry's series (name aliases unit kind agg help), or
 * those a run has with the number each reads as (cmd_plot_grid.c). */
int cmd_series(Session *s, int argc, const LexWord *argv);

/* plot sweep ID file=...: the sweep's parallel coordinates (cmd_plot_sweep.c): an axis
 * per swept setting (log where it spans more than 20x) and one for the sweep's metric,
 * a line per finished trial coloured by the metric. Reports and returns the status. */
int cmd_plot_sweep(Session *s, RunStore *st, long sweep, const char *file, const char *title);

#endif
