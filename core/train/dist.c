/* dist.c — the process group over MPI, or the single-process stand-in (see dist.h).
 * Large buffers go through MPI in chunks of at most INT_MAX elements (MPI counts are int).
 * Not here: anything about models or data. */
#include "dist.h"

#include "err.h"
#include "sysinfo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_cores_all;   /* the cores of every rank, summed by describe_group */

void dist_append_machine(char *buf, size_t cap)
{
    char group[512];
    dist_describe(group, sizeof group);
    int mine = 0, used = 0;
    /* sysinfo_describe's "1 cores," is this rank's share (mpirun binds each rank to its
     * cores): say what the run used in all, and per rank */
    if (group[0] && g_cores_all > 0 && sscanf(buf, "%d cores,%n", &mine, &used) == 1 &&
        used > 0) {
        char rest[1024];
        snprintf(rest, sizeof rest, "%s", buf + used);
        snprintf(buf, cap, "%d cores in all (%d per rank x %d ranks),%s", g_cores_all, mine,
                 dist_size(), rest);
    }
    size_t n = strnlen(buf, cap);
    if (group[0] && n + 1 < cap)
        snprintf(buf + n, cap - n, "; mpi %s", group);
}

/* The size mpirun (OpenMPI, MPICH/PMI, PMIx) announced to this process: 0 when no
 * launcher started it (then MPI is not initialised at all: a second saved on every plain
 * lmlab command, and nothing to fail where MPI's singleton start would). */
static int launcher_size(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return atoi(v) > 1 ? atoi(v) : 1;
    }
    return getenv("PMIX_RANK") || getenv("PMI_RANK") ? 1 : 0;
}

int dist_local_size(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!v)
        v = getenv("MPI_LOCALNRANKS");
    int n = v ? atoi(v) : 1;
    return dist_world_size() > 1 && n > 1 ? n : 1;
}

int dist_args_differ(int argc, char **argv, char *note)
{
    unsigned long long h = 1469598103934665603ULL;   /* FNV-1a over argv[1..], NUL-ended */
    for (int i = 1; i < argc; i++)
        for (const unsigned char *p = (const unsigned char *)argv[i];; p++) {
            h = (h ^ *p) * 0x100000001b3ULL;
            if (!*p) break;
        }
    int lo = (int)(h & 0x7fffffff), hi = (int)((h >> 32) & 0x7fffffff);
    int v[4] = {lo, hi, -lo, -hi};   /* the minimum of each, and minus the maximum */
    dist_allreduce_min_int(v, 4);
    if (v[0] == -v[2] && v[1] == -v[3])
        return 0;
    int n = dist_size();
    char who[96] = "rank 1 takes every setting from rank 0 and never reads its own";
    if (n > 2)
        snprintf(who, sizeof who, "ranks 1 to %d take every setting from rank 0 and never "
                 "read their own", n - 1);
    snprintf(note, LM_ERR_LEN, "the %d processes of this mpirun job were started with "
             "different arguments: %s, so rank 0's words alone decide what runs and trains; "
             "give every rank the same command", n, who);
    return 1;
}

#ifdef LMLAB_MPI
#include <mpi.h>

static int g_started, g_rank, g_size = 1;
static int g_solo;         /* dist_solo: this process trains alone for now */
static char g_desc[512];   /* the group's size and hosts, see describe_group */

static void describe_group(void);

int dist_init(int *argc, char ***argv, char *err)
{
    if (!launcher_size())
        return LM_OK;               /* not under mpirun: one process, MPI untouched */
    /* OpenMPI: a rank waiting in a collective (while rank 0 evaluates or saves) yields
     * its core to runnable threads instead of spinning on it; the user's setting wins. */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        return err_set(err, LM_EIO, "MPI_Init_thread failed");
    g_started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (provided < MPI_THREAD_SERIALIZED && g_size > 1) {
        MPI_Finalize();
        g_started = 0;
        return err_set(err, LM_EARG, "this MPI library gives thread level %d, lmlab needs "
                       "MPI_THREAD_SERIALIZED (%d): use an MPI built with thread support",
                       provided, MPI_THREAD_SERIALIZED);
    }
    if (g_size > 1)
        describe_group();
    return LM_OK;
}

void dist_finalize(void)
{
    if (g_started)
        MPI_Finalize();
    g_started = 0;
}

void dist_abort(int code)
{
    if (g_started && dist_size() > 1)
        MPI_Abort(MPI_COMM_WORLD, code);
}

int dist_rank(void) { return g_solo ? 0 : g_rank; }
int dist_size(void) { return g_solo ? 1 : g_size; }
int dist_compiled(void) { return 1; }
void dist_solo(int on) { g_solo = on != 0; }
int dist_world_rank(void) { return g_rank; }
int dist_world_size(void) { return g_size; }

int dist_send(int dest, int tag, const void *buf, size_t bytes)
{
    if (!g_started || bytes > INT_MAX)
        return LM_EIO;
    return MPI_Send(buf, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD) == MPI_SUCCESS
               ? LM_OK : LM_EIO;
}

int dist_recv(int src, int tag, void *buf, size_t bytes, int *from)
{
    if (!g_started || bytes > INT_MAX)
        return LM_EIO;
    MPI_Status st;
    if (MPI_Recv(buf, (int)bytes, MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src, tag,
                 MPI_COMM_WORLD, &st) != MPI_SUCCESS)
        return LM_EIO;
    if (from)
        *from = st.MPI_SOURCE;
    return LM_OK;
}

int dist_probe(int src, int tag, int *from)
{
    int flag = 0;
    MPI_Status st;
    if (!g_started || MPI_Iprobe(src < 0 ? MPI_ANY_SOURCE : src, tag, MPI_COMM_WORLD, &flag,
                                 &st) != MPI_SUCCESS)
        return 0;
    if (flag && from)
        *from = st.MPI_SOURCE;
    return flag;
}

/* Host names of every rank, gathered once by dist_init: "2 ranks on a(1) b(1)". */
static void describe_group(void)
{
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    char *all = calloc((size_t)g_size, sizeof me);
    if (!all)
        return;
    MPI_Allgather(me, sizeof me, MPI_CHAR, all, sizeof me, MPI_CHAR, MPI_COMM_WORLD);
    size_t cap = sizeof g_desc, o = (size_t)snprintf(g_desc, cap, "%d ranks on", g_size);
    for (int i = 0; i < g_size && o < cap; i++) {
        const char *h = all + (size_t)i * sizeof me;
        int seen = 0, n = 0;
        for (int j = 0; j < g_size; j++) {
            int same = !strcmp(h, all + (size_t)j * sizeof me);
            seen |= same && j < i;
            n += same;
        }
        if (!seen)
            o += (size_t)snprintf(g_desc + o, cap - o, " %s(%d)", h, n);
    }
    free(all);
    int cores = sysinfo_cores();
    MPI_Allreduce(&cores, &g_cores_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

void dist_describe(char *buf, size_t cap)
{
    if (cap)
        snprintf(buf, cap, "%s", dist_size() > 1 ? g_desc : "");
}

void dist_allreduce_sum_f32(float *buf, size_t n)
{
    for (size_t o = 0; dist_size() > 1 && o < n; o += INT_MAX) {
        int k = n - o > INT_MAX ? INT_MAX : (int)(n - o);
        MPI_Allreduce(MPI_IN_PLACE, buf + o, k, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
}

void dist_allreduce_sum_f64(double *buf, size_t n)
{
    for (size_t o = 0; dist_size() > 1 && o < n; o += INT_MAX) {
        int k = n - o > INT_MAX ? INT_MAX : (int)(n - o);
        MPI_Allreduce(MPI_IN_PLACE, buf + o, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
}

void dist_allreduce_min_int(int *v, int n)
{
    if (dist_size() > 1)
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
}

void dist_bcast(void *buf, size_t bytes)
{
    for (size_t o = 0; dist_size() > 1 && o < bytes; o += INT_MAX) {
        int k = bytes - o > INT_MAX ? INT_MAX : (int)(bytes - o);
        MPI_Bcast((char *)buf + o, k, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}


void dist_bcast_idle(void *buf, size_t bytes)
{
    if (dist_size() < 2)
        return;
    if (bytes > INT_MAX) {
        dist_bcast(buf, bytes);
        return;
    }
    MPI_Request rq;
    MPI_Ibcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
    double t0 = sysinfo_now();
    for (int done = 0;;) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (sysinfo_now() - t0 > 2e-3)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
}

#else /* one process: rank 0 of 1 */

int dist_init(int *argc, char ***argv, char *err)
{
    (void)argc; (void)argv;
    int n = launcher_size();
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank) rank = getenv("PMI_RANK");
    if (n > 1 && rank && atoi(rank) > 0) {
        err[0] = 0;                 /* rank 0 says why; the others end silently */
        return LM_EARG;
    }
    if (n > 1)
        return err_set(err, LM_EARG, "mpirun started %d processes, but this lmlab was built "
                       "without MPI: install libopenmpi-dev and rebuild (meson setup "
                       "--reconfigure build -Dmpi=enabled && ninja -C build), or run it "
                       "without mpirun", n);
    return LM_OK;
}

void dist_finalize(void) {}
void dist_abort(int code) { (void)code; }
int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }
int dist_compiled(void) { return 0; }
void dist_describe(char *buf, size_t cap) { if (cap) buf[0] = 0; }
void dist_allreduce_sum_f32(float *buf, size_t n) { (void)buf; (void)n; }
void dist_allreduce_sum_f64(double *buf, size_t n) { (void)buf; (void)n; }
void dist_allreduce_min_int(int *v, int n) { (void)v; (void)n; }
void dist_bcast(void *buf, size_t bytes) { (void)buf; (void)bytes; }
void dist_bcast_idle(void *buf, size_t bytes) { (void)buf; (void)bytes; }
void dist_solo(int on) { (void)on; }
int dist_world_rank(void) { return 0; }
int dist_world_size(void) { return 1; }
int dist_send(int dest, int tag, const void *buf, size_t bytes)
{
    (void)dest; (void)tag; (void)buf; (void)bytes;
    return LM_EIO;
}
int dist_recv(int src, int tag, void *buf, size_t bytes, int *from)
{
    (void)src; (void)tag; (void)buf; (void)bytes; (void)from;
    return LM_EIO;
}
int dist_probe(int src, int tag, int *from) { (void)src; (void)tag; (void)from; return 0; }

#endif
