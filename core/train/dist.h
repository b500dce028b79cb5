/* dist.h — the process group a run is spread over: MPI when lmlab is built with it
 * (`meson setup -Dmpi=enabled`, OpenMPI's libopenmpi-dev), otherwise one process that is
 * rank 0 of 1 where every collective is the identity. This is the only interface to MPI
 * in lmlab (dist.c is the only file that includes mpi.h). What is shared per step and
 * why is in trainer_dist.c and docs/scaling.md.
 * Not here: sockets of our own, or deciding what to compute (the trainer does). */
#ifndef LM_DIST_H
#define LM_DIST_H

#include <stddef.h>

/* Starts the process group (MPI_Init_thread asking for MPI_THREAD_SERIALIZED: collectives
 * run on the training thread, never two at once) when a launcher (mpirun) started this
 * process; otherwise MPI is left alone and this is rank 0 of 1. Call once, first thing
 * in main.
 * Returns LM_OK, or LM_EARG with a message when the process was started by mpirun with
 * several ranks but this lmlab was built without MPI (the caller exits; the message is
 * "" on ranks other than 0, so it is printed once). */
int dist_init(int *argc, char ***argv, char *err);
/* Ends the process group (MPI_Finalize); no-op when dist_init did not start one. */
void dist_finalize(void);
/* Ends every process of the job at once with this exit code (MPI_Abort): for a rank that
 * cannot go on, so no other rank waits forever in a collective. Returns (doing nothing)
 * when there is no job of several processes to end. */
void dist_abort(int code);

/* 1 when the processes of the job were started with different arguments (argv[1..],
 * compared by hash; the program's path may differ), with what that means in note (at
 * least LM_ERR_LEN bytes): ranks 1..N-1 take every setting from rank 0 and never read
 * their own. 0 when they agree, and alone. A collective: every rank calls it, once, right
 * after dist_init. */
int dist_args_differ(int argc, char **argv, char *note);

int dist_rank(void);   /* 0 .. dist_size()-1; 0 without MPI */
int dist_size(void);   /* number of processes; 1 without MPI */
/* 1 when this build has MPI compiled in. */
int dist_compiled(void);
/* "2 ranks on hostA(2)": the group's size and hosts (gathered by dist_init), for the run
 * store; "" for one process. Not a collective: any rank may call it. */
void dist_describe(char *buf, size_t cap);
/* Appends "; mpi " and dist_describe's text to the machine description in buf (size cap)
 * under mpirun; leaves buf as it is for one process. */
void dist_append_machine(char *buf, size_t cap);

/* ---- a parallel sweep (core/sweep/sweep_pool.c): ranks train trials of their own ---- */

/* on = 1: this process trains alone from now on: dist_size() is 1, dist_rank() 0, the
 * collectives are the identity and the machine description is the plain one, so the
 * trainer runs exactly as in a one-process lmlab; point-to-point messages below still
 * reach the whole job. on = 0: back to the job. */
void dist_solo(int on);
int dist_world_rank(void);  /* this process's rank in the job, solo or not (0 alone) */
int dist_world_size(void);  /* the job's size, solo or not (1 alone) */
/* How many of the job's processes run on this host (the launcher's
 * OMPI_COMM_WORLD_LOCAL_SIZE / MPI_LOCALNRANKS), 1 when unknown or alone. */
int dist_local_size(void);
/* Point-to-point, whole messages of `bytes` bytes with a tag (>= 0). dist_send blocks
 * until buf may be reused; dist_recv blocks until a message from src (-1: any) with the
 * tag arrives, its sender in *from (may be NULL). LM_OK, or LM_EIO (no job, MPI failed). */
int dist_send(int dest, int tag, const void *buf, size_t bytes);
int dist_recv(int src, int tag, void *buf, size_t bytes, int *from);
/* 1 when a message from src (-1: any) with the tag is waiting (its sender in *from), else
 * 0; never blocks. */
int dist_probe(int src, int tag, int *from);

/* Collectives over every rank (all must call them in the same order). In place. */
void dist_allreduce_sum_f32(float *buf, size_t n);
void dist_allreduce_sum_f64(double *buf, size_t n);
void dist_allreduce_min_int(int *v, int n);
/* Copies rank 0's bytes into every other rank's buf. */
void dist_bcast(void *buf, size_t bytes);
/* dist_bcast for a broadcast the other ranks may wait on for long (rank 0's next job, or
 * the next step of a paused run): a waiting rank polls for 2 ms, then sleeps 1 ms between
 * polls instead of spinning a core at 100% as a blocking MPI_Bcast does. Every rank must
 * call this one (not dist_bcast) for the same broadcast. */
void dist_bcast_idle(void *buf, size_t bytes);

#endif
