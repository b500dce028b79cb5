/* sysmetrics.c — a system-metrics sample from /proc (see sysmetrics.h). CPU % is
 * (utime + stime) ticks over the wall time between samples, as top computes it (proc(5):
 * /proc/[pid]/stat fields 14 and 15). Not a monitor thread: the recorder calls it. */
#include "sysmetrics.h"
#include "sysinfo.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* utime + stime of a /proc stat file, in clock ticks; 0 when unreadable. */
static unsigned long long stat_ticks(const char *path)
{
    char buf[1024];
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');   /* the command name may hold spaces */
    unsigned long long ut = 0, stt = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                     &ut, &stt) != 2)
        return 0;
    return ut + stt;
}

static double load_avg(void)
{
    double l = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = NAN;
        fclose(f);
    }
    return l;
}

void sysmetrics_init(SysMeter *m) { memset(m, 0, sizeof *m); }

double sysmetrics_every(void)
{
    const char *e = getenv("LMLAB_SYSMETRICS_EVERY");
    return e && atof(e) > 0 ? atof(e) : SYSMETRICS_EVERY;
}

typedef struct { long tid; double cpu; } ThreadCpu;

static int by_cpu_desc(const void *a, const void *b)
{
    double x = ((const ThreadCpu *)a)->cpu, y = ((const ThreadCpu *)b)->cpu;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Per-thread CPU % since the previous sample, the busiest first, into x->thread_cpu;
 * returns the number of threads seen. */
static int sample_threads(SysMeter *m, double dt, double hz, SysSample *x)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    long tid[SYSMETRICS_MAX_THREADS];
    unsigned long long ticks[SYSMETRICS_MAX_THREADS];
    ThreadCpu tc[SYSMETRICS_MAX_THREADS];
    int n = 0, total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        total++;
        if (n == SYSMETRICS_MAX_THREADS) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        tid[n] = atol(e->d_name);
        ticks[n] = stat_ticks(path);
        tc[n].tid = tid[n];
        tc[n].cpu = NAN;
        for (int i = 0; i < m->n_threads && dt > 0; i++)
            if (m->tid[i] == tid[n] && ticks[n] >= m->ticks[i])
                tc[n].cpu = 100.0 * (double)(ticks[n] - m->ticks[i]) / hz / dt;
        n++;
    }
    closedir(d);
    memcpy(m->tid, tid, (size_t)n * sizeof *tid);
    memcpy(m->ticks, ticks, (size_t)n * sizeof *ticks);
    m->n_threads = n;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(tc[i].cpu)) tc[k++] = tc[i];
    qsort(tc, (size_t)k, sizeof *tc, by_cpu_desc);
    size_t used = 0;
    x->thread_cpu[0] = 0;
    for (int i = 0; i < k && i < 8 && used + 24 < sizeof x->thread_cpu; i++)
        used += (size_t)snprintf(x->thread_cpu + used, sizeof x->thread_cpu - used, "%s%ld:%.0f",
                                 i ? " " : "", tc[i].tid, tc[i].cpu);
    return total;
}

void sysmetrics_sample(SysMeter *m, SysSample *x)
{
    double now = sysinfo_now(), hz = (double)sysconf(_SC_CLK_TCK);
    if (hz <= 0) hz = 100;
    unsigned long long ticks = stat_ticks("/proc/self/stat");
    double dt = m->last_t > 0 ? now - m->last_t : 0;
    x->t = sysinfo_wall();
    x->cpu = dt > 0 && ticks >= m->last_ticks ? 100.0 * (double)(ticks - m->last_ticks) / hz / dt
                                               : NAN;
    long rss = sysinfo_rss_kb();
    x->rss_mb = rss >= 0 ? rss / 1024.0 : NAN;
    x->threads = sample_threads(m, dt, hz, x);
    x->load1 = load_avg();
    double avail = sysinfo_mem_available(), total = sysinfo_mem_total();
    x->mem_avail_mb = avail > 0 ? avail / 1048576.0 : NAN;
    x->mem_total_mb = total > 0 ? total / 1048576.0 : NAN;
    m->last_t = now;
    m->last_ticks = ticks;
}

double sysmetrics_value(const SysSample *x, const char *c)
{
    if (!strcmp(c, "t")) return x->t;
    if (!strcmp(c, "cpu")) return x->cpu;
    if (!strcmp(c, "rss_mb")) return x->rss_mb;
    if (!strcmp(c, "threads")) return x->threads;
    if (!strcmp(c, "load1")) return x->load1;
    if (!strcmp(c, "mem_avail_mb")) return x->mem_avail_mb;
    if (!strcmp(c, "mem_total_mb")) return x->mem_total_mb;
    if (!strcmp(c, "tokens_per_s")) return x->tokens_per_s;
    return NAN;
}
