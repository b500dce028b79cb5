/* bench_diag.c — the cost of training diagnostics on a bench workload (see bench_diag.h). */
#include "bench_diag.h"

#include "diag.h"
#include "err.h"
#include "runstore.h"
#include "runstore_series.h"
#include "sysinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct BenchDiag {
    Diag *d;
    RunStore *st;
    long run;
    char dir[64], db[96];
    int n;
    double *collect, *record;   /* (n) seconds of each step's collect + finish, record */
    double *cpu;                /* (n) CPU seconds of collect + finish (this thread's) */
    int series, hists;
};

BenchDiag *bench_diag_create(const Model *m, Replicas *r, int n, char *err)
{
    BenchDiag *b = calloc(1, sizeof *b);
    if (!b || !(b->collect = calloc((size_t)n, sizeof(double))) ||
        !(b->record = calloc((size_t)n, sizeof(double))) ||
        !(b->cpu = calloc((size_t)n, sizeof(double)))) {
        bench_diag_destroy(b);
        err_set(err, LM_ENOMEM, "out of memory");
        return NULL;
    }
    b->n = n;
    snprintf(b->dir, sizeof b->dir, "/tmp/lmlab_bench_diag_XXXXXX");
    if (!mkdtemp(b->dir)) {
        b->dir[0] = 0;
        bench_diag_destroy(b);
        err_set(err, LM_EIO, "cannot make a scratch folder in /tmp");
        return NULL;
    }
    snprintf(b->db, sizeof b->db, "%s/diag.db", b->dir);
    RunInfo info = {.name = "bench-diag", .model = m->cfg.model};
    if (!(b->d = diag_create(m, r, 1, err)) || runstore_open(b->db, &b->st, err) ||
        runstore_run_create(b->st, &info, &b->run, err)) {
        bench_diag_destroy(b);
        return NULL;
    }
    return b;
}

void bench_diag_destroy(BenchDiag *b)
{
    if (!b) return;
    diag_destroy(b->d);
    runstore_close(b->st);
    if (b->dir[0]) {
        const char *ext[] = {"", "-wal", "-shm", "-runlocks"};
        char p[128];
        for (int i = 0; i < 4; i++) {
            snprintf(p, sizeof p, "%s%s", b->db, ext[i]);
            unlink(p);
        }
        rmdir(b->dir);
    }
    free(b->collect);
    free(b->record);
    free(b->cpu);
    free(b);
}

static double thread_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) ? 0 : t.tv_sec + t.tv_nsec * 1e-9;
}

double bench_diag_collect(BenchDiag *b, Model *m, Replicas *r, int s)
{
    double t0 = sysinfo_now(), c0 = thread_cpu_s();
    diag_collect(b->d, m, r, s + 1);
    double dt = sysinfo_now() - t0;
    if (s >= 0 && s < b->n) {
        b->collect[s] = dt;
        b->cpu[s] = thread_cpu_s() - c0;
    }
    return dt;
}

double bench_diag_finish(BenchDiag *b, const Model *m, int s)
{
    double t0 = sysinfo_now(), c0 = thread_cpu_s();
    SeriesBatch *sb = diag_finish(b->d, m, 1);
    double t1 = sysinfo_now();
    if (s >= 0 && s < b->n) b->cpu[s] += thread_cpu_s() - c0;
    char err[LM_ERR_LEN];
    if (sb) {
        runstore_series_log(b->st, b->run, sb->step, sb->scalars, sb->n_scalars, err);
        runstore_hist_log(b->st, b->run, sb->step, sb->hists, sb->n_hists, err);
        b->series = sb->n_scalars;
        b->hists = sb->n_hists;
    }
    double t2 = sysinfo_now();
    series_batch_free(sb);
    if (s >= 0 && s < b->n) {
        b->collect[s] += t1 - t0;
        b->record[s] = t2 - t1;
    }
    return t2 - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_diag_result(BenchDiag *b, BenchResult *out)
{
    qsort(b->collect, (size_t)b->n, sizeof(double), cmp_double);
    qsort(b->record, (size_t)b->n, sizeof(double), cmp_double);
    qsort(b->cpu, (size_t)b->n, sizeof(double), cmp_double);
    out->diag_s = b->collect[b->n / 2];
    out->diag_cpu_s = b->cpu[b->n / 2];
    out->diag_record_s = b->record[b->n / 2];
    out->diag_series = b->series;
    out->diag_hists = b->hists;
}
