/* sysmetrics.h — one sample of what the machine and this process are doing, for a run's
 * system metrics (SysSample; stored by the recorder every few seconds, runstore_track.h;
 * under mpirun the other ranks' samples reach rank 0 through trainer_dist.c): the
 * process's CPU use since the previous sample (in all and per thread, from /proc/self/stat
 * and /proc/self/task/TID/stat), resident memory, thread count, the machine's load and
 * free memory. Linux only; a value that cannot be read is NaN (or 0 threads). Not a
 * profiler: a few small /proc reads, about a hundred microseconds per sample. */
#ifndef LM_SYSMETRICS_H
#define LM_SYSMETRICS_H

typedef struct {
    double t;              /* Unix seconds */
    int rank;              /* MPI rank (0 alone) */
    long step;             /* the run's last logged step when sampled */
    double cpu;            /* process CPU % since the previous sample (100 = one core) */
    double rss_mb;         /* resident memory, MiB */
    int threads;
    double load1;          /* the machine's 1-minute load average */
    double mem_avail_mb, mem_total_mb;
    double tokens_per_s;   /* the run's speed at the sample (NaN when unknown) */
    char thread_cpu[256];  /* "tid:cpu% ..." for the busiest threads, "" when unread */
} SysSample;

/* A sample's value by its run_sysmetrics column name (t cpu rss_mb threads load1
 * mem_avail_mb mem_total_mb tokens_per_s: the registry's sys/ series name them), NaN for
 * another name. */
double sysmetrics_value(const SysSample *x, const char *column);

#define SYSMETRICS_MAX_THREADS 128
#define SYSMETRICS_EVERY 5.0      /* seconds between a run's samples */

/* The sampling interval: $LMLAB_SYSMETRICS_EVERY seconds when set (tests), else
 * SYSMETRICS_EVERY. */
double sysmetrics_every(void);

typedef struct {
    double last_t;                /* monotonic seconds of the previous sample (0: none) */
    unsigned long long last_ticks;
    int n_threads;
    long tid[SYSMETRICS_MAX_THREADS];
    unsigned long long ticks[SYSMETRICS_MAX_THREADS];
} SysMeter;

/* A meter with no previous sample (the first sample's CPU % is since the process
 * started). Caller-owned; nothing to free. */
void sysmetrics_init(SysMeter *m);

/* Fills x (t, cpu, rss_mb, threads, load1, mem_avail_mb, mem_total_mb, thread_cpu: the
 * busiest threads as "tid:cpu% ..." when there are several) and moves the meter on.
 * rank, step and tokens_per_s are the caller's. Never fails. */
void sysmetrics_sample(SysMeter *m, SysSample *x);

#endif
