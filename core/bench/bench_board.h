/* bench_board.h — the workloads of `bench board`: a synthetic run store (n runs, of which
 * n_running stay running, owned by this process and so alive; the rest finished; each
 * with a configuration, logged steps and evaluations) and the median time of the reads a
 * dashboard frame and the run list do on it (the jobs board, lists with filters and
 * sorts). Not a timed test: nothing here asserts; the command prints. Not the drawing
 * (the command times a frame through a hook the dashboard provides). */
#ifndef LM_BENCH_BOARD_H
#define LM_BENCH_BOARD_H

#include "runstore.h"

/* Fills a new store at path with n_runs runs (n_running of them left running), each with
 * `steps` logged steps (a finished run: a tenth of them) and an evaluation every 10th
 * step. *create_s receives the seconds it took. LM_OK or the store's error. */
int bench_board_make(const char *path, int n_runs, int n_running, int steps,
                     double *create_s, char *err);

/* The median milliseconds of `reps` calls of runstore_jobs (*n: the jobs listed). */
int bench_board_time_jobs(RunStore *st, int reps, double *ms, int *n, char *err);

/* The median milliseconds of `reps` calls of runstore_list(filter, sort) (*n: rows). */
int bench_board_time_list(RunStore *st, const char *filter, const char *sort, int reps,
                          double *ms, int *n, char *err);

#endif
