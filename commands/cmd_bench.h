/* cmd_bench.h — the table's handler of cmd_bench.c, `bench`, and what the bench module's
 * other files measure for it. */
#ifndef LM_CMD_BENCH_H
#define LM_CMD_BENCH_H

#include "session.h"

int cmd_bench(Session *s, int argc, const LexWord *argv);

/* `bench board` times dashboard frames through this hook (the dashboard's
 * dashboard_bench_frame, set by app/ so that commands/ needs no ui/); without it the
 * bench times the frames' store reads only. */
typedef int (*BenchFrameFn)(Session *s, const char *view, int frames, int w, int h,
                            double *ms, char *err);
void bench_set_frame_hook(BenchFrameFn fn);

/* One training workload (cmd_bench_train.c), built-in or an experiment's, timed `steps`
 * steps (0: its own) at precisions prec (1 fp32, 2 bf16, 3 both; 0: fp32 for a built-in
 * one, an experiment's own precision; its threads and shards too unless the session sets
 * threads), each in a child process, with diagnostics=N when > 0. Prints; returns the
 * status. */
int cmd_bench_training(Session *s, const char *name, int steps, int prec, int diagnostics);

/* `bench all` (cmd_bench_train.c): every built-in workload at precisions prec, then
 * sampling. Prints; returns the statuses or'ed. */
int cmd_bench_all(Session *s, int steps, int threads, int prec, int tokens);

/* `bench sample` (cmd_bench_train.c): sampling tokens/s with and without the cache over
 * `tokens` generated tokens. Prints; returns the status. */
int cmd_bench_sampling(Session *s, int tokens);

/* `bench store` (cmd_bench_store.c): the recording overhead, `steps`-step runs with and
 * without the store, alternating. Prints; returns the status. */
int cmd_bench_store(Session *s, long steps);

/* `bench board` (cmd_bench_store.c): the jobs board's and lists' reads and the dashboard's
 * frames on two synthetic stores built in /tmp. Prints; returns the status. */
int cmd_bench_board(Session *s);

/* The small workload trained `steps` steps in this process (cmd_bench_store.c), recorded
 * in dir/bench.db as `train` records a run, or (dir NULL) its events just drained: the
 * training tokens/s, or -1 with err on failure. */
double cmd_bench_store_run(const char *dir, long steps, char *err);

/* `bench track` (cmd_bench_track.c): the tracking's cost per second of training against
 * a step of the small workload measured at tokens_per_s. Prints; returns the status. */
int cmd_bench_track(Session *s, double tokens_per_s, long tokens_per_step);

/* `bench data`'s prepare part (cmd_bench_data.c): prepare MB/s per tokenizer over a
 * generated corpus of mb megabytes, on `threads` threads (0 = every core), each in a
 * temporary cache removed after. Prints; returns the status. */
int cmd_bench_data_prepare(Session *s, int mb, int threads);

/* `bench data`'s use part (cmd_bench_data_use.c): time to the first step and peak memory
 * of `train quick` on generated token caches of 40 MB, 1 GB and max_gb GB (0: 4), and the
 * data feed's share of a small step. Prints; returns the status. */
int cmd_bench_data_use(Session *s, double max_gb);

/* `bench tokenizer` (cmd_bench_tok.c): encoding MB/s on one core of each tokenizer in list
 * (a comma list of kinds; NULL or "all": every kind, wordpiece when vocab= is set) over
 * file (NULL: the bundled corpora). Prints; returns the status. */
int cmd_bench_tokenizer(Session *s, const char *list, const char *file);

/* The kinds of a `bench tokenizer=` list into kinds (TOKENIZER_N_KINDS room; NULL: only
 * check): their count, or -1 after reporting the unknown name. */
int cmd_bench_tokenizer_list(Session *s, const char *list, TokenizerKind *kinds);

#endif
