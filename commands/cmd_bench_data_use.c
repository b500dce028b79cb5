/* cmd_bench_data_use.c — the use half of `bench data` (issue 47): token caches of 40 MB,
 * 1 GB and 4 GB (gb= sets the largest; each written directly as random ids, its pages
 * dropped from the page cache) trained by a child `train quick` each: the time from its
 * start to its first step, and its peak memory (the process's own, ru_maxrss); then the
 * data feed's share of a `small` step (the feed reads a token file with pread, as
 * training does). The caches are removed after. Not a test: it measures this machine.
 * The prepare half (MB/s per tokenizer) is cmd_bench_data.c's. */
#include "cmd_bench.h"

#include "bench.h"
#include "bench_data.h"
#include "err.h"
#include "output.h"
#include "sysinfo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* One start on a cache of `mb` MB of tokens (2 bytes a token). */
static int one_start(Session *s, const char *work, double mb, BenchDataStart *r)
{
    char dir[300], data[320], runs[320], err[LM_ERR_LEN], exe[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/cache-%.0fMB", work, mb);
    double t0 = sysinfo_now();
    int rc = bench_data_write_cache(dir, (uint64_t)(mb * 1e6 / 2), 64, err);
    if (rc) return session_error(s, rc, "bench data: %s", err);
    session_printf(s, "  %6.0f MB of tokens written in %.1f s (%s)", mb, sysinfo_now() - t0, dir);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return session_error(s, LM_EIO, "bench data: cannot find this lmlab binary");
    exe[n] = 0;
    snprintf(data, sizeof data, "data=%s", dir);
    snprintf(runs, sizeof runs, "runs_dir=%s/runs", work);
    const char *args[] = {"quick", data, "tokenizer=char", "steps=20", "log_every=1",
                          "eval_every=0", "sample_every=0", "final_eval_tokens=4096",
                          "threads=1", runs, NULL};
    rc = bench_data_start(exe, work, args, 600, r, err);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) session_printf(s, "  (could not remove %s)", dir);
    if (rc) return session_error(s, rc, "bench data: %s", err);
    if (r->exit_status || r->first_step_s < 0)
        return session_error(s, LM_EIO, "bench data: the run on %.0f MB failed (exit %d): %s",
                             mb, r->exit_status, r->last_line);
    return LM_OK;
}

int cmd_bench_data_use(Session *s, double max_gb)
{
    char work[] = "/tmp/lmlab-bench-use-XXXXXX";
    if (!mkdtemp(work)) return session_error(s, LM_EIO, "bench data: cannot make a temporary folder");
    struct statvfs fs;
    double sizes[3] = {40, 1000, max_gb > 0 ? max_gb * 1000 : 4000}, free_mb = 0;
    if (!statvfs(work, &fs)) free_mb = (double)fs.f_bavail * fs.f_frsize / 1e6;
    if (free_mb > 0 && free_mb < sizes[2] * 1.05 + 100) {
        rmdir(work);
        return session_error(s, LM_ENOSPC, "bench data: a %.0f MB corpus needs that much free "
                             "space in /tmp, which has %.0f MB: set gb= lower", sizes[2], free_mb);
    }
    session_printf(s, "bench data (use): train quick on token caches, 20 steps, threads=1; "
                   "time from the process's start to its first step, and its peak memory");
    BenchDataStart r[3];
    int rc = LM_OK;
    for (int i = 0; i < 3 && !rc && !s->interrupt; i++) {
        rc = one_start(s, work, sizes[i], &r[i]);
        if (rc) break;
        Output *o = output_create("bench_data_start");
        output_real(o, "corpus_mb", sizes[i]);
        output_real(o, "first_step_s", r[i].first_step_s);
        output_real(o, "peak_rss_mb", r[i].peak_rss_kb / 1024.0);
        output_real(o, "run_s", r[i].total_s);
        output_line(o, "  {corpus_mb:%6.0f} MB: first step after {first_step_s:%.2f} s, peak "
                    "memory {peak_rss_mb:%.1f} MB (the whole run {run_s:%.1f} s)");
        output_emit(s, o);
    }
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    if (system(cmd)) session_printf(s, "  (could not remove %s)", work);
    if (rc) return rc;
    if (!s->interrupt)
        session_printf(s, "  peak memory, %.0f MB against 40 MB: %+.1f MB", sizes[2],
                       (r[2].peak_rss_kb - r[0].peak_rss_kb) / 1024.0);
    BenchWorkload w;   /* the feed's share of a small step */
    BenchResult br;
    char err[LM_ERR_LEN];
    if (!s->interrupt && !(rc = bench_workload("small", &w, err)) &&
        !(rc = bench_train(&w, &br, err))) {
        Output *o = output_create("bench_data_feed");
        output_real(o, "feed_ms", br.feed_s * 1e3);
        output_real(o, "step_ms", br.step_s * 1e3);
        output_real(o, "share_pct", 100 * br.feed_s / br.step_s);
        output_line(o, "  data feed of a small step: {feed_ms:%.3f} ms of {step_ms:%.1f} ms "
                    "({share_pct:%.3f}%%; the batch read with pread from a token file)");
        output_emit(s, o);
    } else if (rc) {
        return session_error(s, rc, "bench data: %s", err);
    }
    return LM_OK;
}
