/* cmd_bench.h — the table's handlers of cmd_bench.c: `bench`. */
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

#endif
