/* cmd_analysis.h — the commands' side of issue 28's analysis: seed groups (`group`; `train
 * group=NAME` files its run itself, `train seeds=N` is the table's rewrite to the sweep
 * path), a seeded sweep's groups ranked by their mean (`sweep show`), parameter
 * importance (`sweep importance ID`), the runs table's shaping (`runs columns= sort=ANY
 * group_by=`, cmd_runs_table.c) and one prompt through several stored runs (`sample
 * runs=`, cmd_sample_runs.c, the table's rewrite of `sample`). Below the handlers that
 * use it (cmd_runs, cmd_sweep, cmd_plot, cmd_report); it calls no handler. */
#ifndef LM_CMD_ANALYSIS_H
#define LM_CMD_ANALYSIS_H

#include "runstore.h"
#include "session.h"
#include "sweep_analysis.h"

/* `group NAME ID ...`: files stored runs into group NAME by hand (replacing their old
 * group); `group NAME` lists its members with mean ± std; `group none ID ...` takes
 * runs out of their group. */
int cmd_group(Session *s, int argc, const LexWord *argv);

/* After `sweep show`'s table: when the trials carry seed=, their seed groups ranked by
 * the group's mean metric, mean ± std and N (text, or one "sweep_group" JSON object
 * each). metric (n) is each trial's ranking metric (NaN when unranked). */
void cmd_sweep_groups_print(Session *s, long sweep, const SweepTrialRow *t,
                            const double *metric, int n);

/* `sweep importance ID`: each swept setting's share of the metric's variance and the
 * sign of its effect (text table or one JSON object). */
int cmd_analysis_sweep_importance(Session *s, const char *word);

/* The done trials of sweep id and their metric (best_val or final_val, as the sweep
 * ranks; NaN when not done): *t and *metric malloc'd (free both). *final 1 for
 * final_val. Reports and returns the status on failure. */
int cmd_analysis_sweep_metric(Session *s, RunStore *st, long id, SweepTrialRow **t,
                              double **metric, int *n, int *final);

/* "2.3105 ± 0.0012" (mean ± sample std), "2.3105 (1 run)" for a group of one (no spread
 * to state), "-" for none: the one text of a group's value. */
void cmd_analysis_fmt_pm(char *buf, size_t cap, const StatSummary *st);

/* `runs` shaped (cmd_runs_table.c): rows as runstore_list gave them, laid out in the
 * given columns (NULL: the store's saved layout; a column neither a run field, a setting
 * nor a key of a stored run's config is refused with did-you-mean; keep 1: the columns are
 * saved as the layout of later `runs` and the dashboard, else they are for this call) and, for sort not one of runstore_list's
 * own orders (best|recent|model|name), ordered by that column ("-col": descending); or
 * group_by=KEY's table of groups; limit > 0 keeps the first `limit` rows after the
 * sort. *handled 0 (nothing printed) when there is no column
 * choice, saved layout, own sort or group_by: cmd_runs prints its usual table. */
int cmd_runs_table_render(Session *s, RunStore *st, const RunRow *runs, int n,
                          const char *columns, int keep, const char *sort,
                          const char *group_by, int limit, int *handled);
/* 1 when sort is NULL or one of runstore_list's orders. */
int cmd_runs_table_builtin_sort(const char *sort);
/* The text of column col for run r (group: its group name or ""/NULL; smooth: its
 * final_smooth or NAN) into out; *num its number (NAN for text or "-"). The one cell
 * format of `runs columns=` and the dashboard's history table. */
/* 1 when a `runs` column names a series of the registry (its cell is the run's aggregate,
 * runstore_series_summary; cmd_runs_table_cell does not read the store). */
int cmd_runs_table_is_series(const char *col);
void cmd_runs_table_cell(const RunRow *r, const char *group, double smooth, const char *col,
                         char *out, size_t cap, double *num);
/* final_smooth of run id: the debiased EMA (weight 0.9) of its training loss at its last
 * step, NAN when it has none. */
double cmd_runs_table_final_smooth(RunStore *st, long id);
/* The store's kept `runs columns=... keep=true` layout ("runs.columns") into out; 1 when one
 * is set and every column in it is known (else 0: the default table is shown). */
int cmd_runs_table_saved(RunStore *st, char *out, size_t cap);

/* `sample runs=A,B,C ...`: the same prompt, seed and temperature through each run's
 * checkpoint, side by side (cmd_sample_runs.c): the handler the table routes `sample` to
 * when its words hold runs=. */
int cmd_sample_runs(Session *s, int argc, const LexWord *argv);
/* Records a sample of stored run `run`'s weights of `step` (0: unknown) in the store, or
 * says why it could not be (a warning: the text was already printed), as for a run
 * deleted by another process since it was opened. */
void cmd_sample_record(Session *s, RunStore *st, long run, long step, const char *prompt,
                       const char *settings, const char *text);

#endif
