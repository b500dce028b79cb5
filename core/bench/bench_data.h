/* bench_data.h — the use half of `lmlab bench data`: token caches of a chosen size written
 * directly (random ids of a small char vocabulary, the lmlab cache layout of docs/data.md,
 * their pages dropped from the page cache after writing, so a start reads them cold), and
 * a `train` of this lmlab binary started on one as a child process: the wall time from
 * its start to its first step and its peak resident memory (wait4's ru_maxrss: the
 * process's own pages; token files are read with pread, never mapped, so they are not in
 * it). Not a test: it measures this machine. Not the prepare half (tokcache's bench). */
#ifndef LM_BENCH_DATA_H
#define LM_BENCH_DATA_H

#include <stdint.h>

/* Writes a cache of `tokens` train tokens (and 1% more as valid) into dir (created):
 * shards of at most 100M uint16 tokens, tokenizer.json (char, vocabulary V <= 90),
 * meta.json last. LM_OK, LM_EIO / LM_ENOSPC (the message names the file). */
int bench_data_write_cache(const char *dir, uint64_t tokens, int V, char *err);

typedef struct {
    double first_step_s;   /* from the child's start to its first logged step */
    double total_s;        /* to its exit */
    long peak_rss_kb;      /* its ru_maxrss */
    int exit_status;       /* 0 when it trained and ended well */
    char last_line[256];   /* its last output line (for a failure's message) */
} BenchDataStart;

/* Runs `exe --db <work>/bench.db --json train <args...>` (args: NULL-terminated extra
 * words) with its output read line by line; fills out. LM_OK when it ran (see
 * out->exit_status), LM_EIO when it cannot be started. Waits at most timeout_s. */
int bench_data_start(const char *exe, const char *work, const char *const *args,
                     double timeout_s, BenchDataStart *out, char *err);

#endif
