/* sweep_pool.h — the workers of a parallel sweep: local processes (`sweep ... parallel=K`)
 * and, under `mpirun -np N` with parallel=ranks, the job's ranks 1..N-1 (rank 0's own
 * share is one local process). A local worker is this lmlab binary run as `lmlab --db DB -c "sweep worker=ID
 * trial=K stop_at=N threads=T"`: it trains that one trial of the stored sweep exactly as
 * the one-by-one runner would (sweep_runner_open with a job), writing its run into the shared
 * store (SQLite in WAL mode takes several writer processes), and exits.
 * Why processes and not threads: a trial is a whole trainer (model, data, BLAS threads,
 * recorder, its own store connection); processes keep them apart with nothing shared but
 * the store, a worker that crashes takes no other trial with it, and stopping one is a
 * signal (SIGTERM: checkpoint, trial left pending; SIGSTOP/SIGCONT: pause/resume).
 * A worker rank gets its trial from rank 0 as a message (dist_send), trains it alone
 * (dist_solo: no data parallelism inside a trial) into the store given by --db, which must
 * therefore be on a file system every rank reaches (trivially so on one machine), and
 * answers when the trial has ended; pause, resume and stop are messages too.
 * The pool only starts, signals and reaps workers; the runner (sweep_runner.c, on rank 0)
 * decides what to train, reads the results back from the store and records the sweep.
 * Not here: the halving rule, the store. Linux (the binary is /proc/self/exe). */
#ifndef LM_SWEEP_POOL_H
#define LM_SWEEP_POOL_H

typedef struct SweepPool SweepPool;

/* A pool of `local` processes and the worker ranks 1..ranks (0 without MPI): at most
 * local + ranks trials at once. NULL with a message on failure (out of memory, this
 * program's path unreadable). */
SweepPool *sweep_pool_create(int local, int ranks, char *err);

int sweep_pool_running(const SweepPool *p); /* workers alive (not yet reaped) */
int sweep_pool_free(const SweepPool *p);    /* workers that may still be started */

/* Starts a worker training trial `trial` (from 1) of sweep `sweep_id` in the store at
 * db_path to stop_at (0 = its whole budget) with `threads` threads (0 = its config's).
 * LM_OK, LM_ESTATE when no slot is free, LM_EIO (with a message) when fork failed. */
int sweep_pool_spawn(SweepPool *p, const char *db_path, long sweep_id, int trial,
                     long stop_at, int threads, char *err);

/* Reaps one worker that has ended, without waiting: 1 and its trial and exit code
 * (*code: the exit status, or 128 + the signal that killed it), or 0 when none ended. */
int sweep_pool_reap(SweepPool *p, int *trial, int *code);

/* Sends sig to every live worker (SIGSTOP, SIGCONT, SIGTERM; to a rank: pause, resume,
 * stop messages). */
void sweep_pool_signal(SweepPool *p, int sig);

/* Ends every live worker (SIGCONT then SIGTERM), waits for them, sends the worker ranks
 * back to serving data-parallel runs, frees. NULL: no-op. */
void sweep_pool_destroy(SweepPool *p);

/* In a local worker process, once it watches for SIGTERM (the session's interrupt flag):
 * unblocks SIGTERM, which the pool keeps blocked from fork on, so a stop sent while the
 * worker started is delivered now instead of being lost. */
void sweep_pool_worker_ready(void);

/* Ranks 1..N-1: the service (trainer_dist_set_service) that trains the trials rank 0's
 * pool hands out until it sends QUIT. LM_OK, LM_EIO when MPI failed. */
int sweep_pool_serve_rank(void);

#endif
