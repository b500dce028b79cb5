/* trainer_dist.h — one run spread over the processes of an MPI job (dist.h), the pattern
 * llm.c uses on GPUs: rank 0 is the whole lmlab (prompt, dashboard, run store,
 * checkpoints, evaluations, samples); ranks 1..N-1 only serve it (trainer_dist_serve).
 * Every trainer rank 0 builds is built on every rank from rank 0's Config and options,
 * and its weights and optimizer state are copied from rank 0. Every step each rank draws
 * the same global batch (same seed) and computes its contiguous share of the run's shards
 * (shardplan.h: the plan comes from the settings, not from N) on its cores; one allreduce
 * gives every shard's loss sum and tokens (so the backward is scaled by 1/(global tokens)),
 * the shards' gradients are folded in the plan's one order (rank N-1's shards first, each
 * rank folding its own onto the partial fold of the ranks above, point to point), rank 0
 * broadcasts the sum, and every rank takes the same optimizer step: the same bits as one
 * process with any thread count. Rank 0 alone decides whether
 * to go on (stop, pause, time budget, stop_at) and owns the learning-rate schedule's state
 * (plateau follows rank 0's evaluations); both reach the others once per step.
 * With one process every hook here is a no-op and the step is replicas_step.
 * Not here: MPI itself (dist.c), sweeps over several processes (sweep_pool.c, reached
 * through the service hook below). */
#ifndef LM_TRAINER_DIST_H
#define LM_TRAINER_DIST_H

#include "trainer.h"

/* Ranks 1..N-1: builds and trains every run rank 0 announces, silently (a failure is
 * printed to stderr with the rank), until rank 0 calls trainer_dist_release. Returns
 * LM_OK then. Rank 0 (or one process): returns LM_OK at once. */
int trainer_dist_serve(void);
/* Rank 0: tells the serving ranks there is nothing more to train (call before
 * dist_finalize). No-op elsewhere. */
void trainer_dist_release(void);

/* Ranks 1..N-1 (before trainer_dist_serve): fn runs when rank 0 calls
 * trainer_dist_call_service, talking to rank 0 by dist_send/dist_recv until it returns;
 * then the rank serves runs again. A parallel sweep's trial worker (sweep_pool.h) is the
 * one service: this file knows nothing of sweeps. */
void trainer_dist_set_service(int (*fn)(void));
/* Rank 0: sends every serving rank into its service (see above). No-op elsewhere. */
void trainer_dist_call_service(void);

/* ---- hooks for trainer.c (all ranks call them at the same points) ---- */

/* Rank 0, first thing in trainer_create: sends cfg and opt to the serving ranks. */
void trainer_dist_announce(const Config *cfg, const TrainerOptions *opt);
/* Last thing in trainer_create on every rank, t = the local result (NULL on failure):
 * every rank learns whether all built the run; then rank 0's parameters and optimizer
 * state are copied everywhere. Returns t, or NULL (t destroyed, message in err) when any
 * rank failed. */
Trainer *trainer_dist_agree(Trainer *t, char *err);
/* trainer_start (started = 1) and trainer_destroy of a trainer never started
 * (started = 0): tells the serving ranks whether to run the trainer they built. Acts only
 * for t = the trainer last agreed on and not yet started or dropped (destroying an older,
 * finished trainer sends nothing). */
void trainer_dist_start(const Trainer *t, int started);
/* The top of every step: returns rank 0's go (1 = take a step, 0 = leave the loop) and
 * copies rank 0's schedule state and training clock into t. */
int trainer_dist_control(Trainer *t, int go);
/* After the step loop on every rank: closes the loop for ranks still waiting on a
 * control (rank 0 left it after an evaluation or checkpoint). */
void trainer_dist_end(Trainer *t);
/* Rank 0's v on every rank (alone: v). Every rank must call it at the same point. */
int trainer_dist_flag(int v);
/* Ranks 1..N-1, where rank 0 evaluated (evaluated) or sampled or saved (other): forgets
 * the carried state of recurrent models as rank 0's tasks do for its rows (an evaluation
 * resets the primary model's, a sample or checkpoint every replica's). */
void trainer_dist_mirror_tasks(Trainer *t, int evaluated, int other);
/* The forward and backward of the global batch x, y (B = cfg.batch rows, T) over every
 * rank: gradients summed in t's params.grad on every rank, *loss_sum and *count over
 * the whole batch. LM_OK, or the first failing rank's status on every rank. */
int trainer_dist_step(Trainer *t, int T, double *loss_sum, long *count);

#endif
