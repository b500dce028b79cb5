/* shardplan.h — how a training step's work is cut, the one place that decides it. A run's
 * batch of B rows is cut into S shards of consecutive rows; S comes from the run's settings
 * alone (`shards=`, or by default from `batch`), never from `threads=`, a sweep's
 * `parallel=` or the number of MPI processes. Every shard's forward and backward is the same
 * computation wherever it runs (same rows, same shapes, single-threaded BLAS); the shards'
 * gradients (and loss sums) are then added in ONE fixed order, the right fold
 *     g = g_0 + (g_1 + (... + (g_{S-2} + g_{S-1})))
 * element by element, on one process or spread over several (trainer_dist.c passes the
 * partial fold from the last rank down to rank 0). So threads and processes only decide
 * who computes which shard, and the numbers are bit-identical for any of them.
 * Reductions over the parameter slab (the gradient norm) use a fixed cut too: NORM_CHUNKS
 * chunks whatever the thread count.
 * Not here: running the shards (replicas.c) or sending them (trainer_dist.c). */
#ifndef LM_SHARDPLAN_H
#define LM_SHARDPLAN_H

#include <stddef.h>

#define SHARDPLAN_MAX 16        /* shards of a run (and models a process holds) */
#define SHARDPLAN_AUTO_MAX 2    /* shards=0 (auto): min(batch, this) */
#define SHARDPLAN_NORM_CHUNKS 64 /* fixed chunks of the parameter slab for the norm */

typedef struct {
    int B;        /* rows of a training batch */
    int S;        /* shards, 1..min(B, SHARDPLAN_MAX) */
} ShardPlan;

/* The plan of a run with batch rows and the `shards` setting (0 = auto: min(batch,
 * SHARDPLAN_AUTO_MAX)). LM_OK, or LM_EARG with a message (shards above batch or
 * SHARDPLAN_MAX). */
int shardplan_init(ShardPlan *p, int batch, int shards, char *err);

/* Rows [*r0, *r1) of shard s of a batch of `rows` rows cut into `shards` shards
 * (consecutive, sizes differing by at most one, the larger first). */
void shardplan_rows(int rows, int shards, int s, int *r0, int *r1);

/* Shards a batch of `rows` rows is cut into under plan p: p->S, or fewer when the batch is
 * smaller (an evaluation's last, short batch). */
int shardplan_shards_for(const ShardPlan *p, int rows);

/* The contiguous share [*lo, *hi) of n items that owner i of `owners` takes (MPI ranks own
 * shards this way, threads their shards and models). */
void shardplan_share(int n, int owners, int i, int *lo, int *hi);

/* Chunk c of SHARDPLAN_NORM_CHUNKS of a slab of n floats: [*lo, *hi), each chunk starting
 * at a multiple of 16 elements (some may be empty). */
void shardplan_chunk(size_t n, int c, size_t *lo, size_t *hi);

/* "2 shards of 4 rows (batch 8)" or "3 shards of 3-4 rows (batch 10)". */
void shardplan_describe(const ShardPlan *p, char *buf, size_t cap);

#endif
