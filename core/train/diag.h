/* diag.h — a training run's diagnostics (`diagnostics=N`, issue 48): every N steps, the
 * numbers researchers look at past the loss, as named series of that step:
 *   grad/<tensor>    L2 norm of the tensor's gradient (the whole step's, after the fold of
 *                    every shard and process, before clipping)
 *   weight/<tensor>  L2 norm of its weights before the step's update
 *   update/<tensor>  RMS(update) / RMS(weights before it) = ||w' - w|| / ||w||, the
 *                    optimizer's actual step (clipping, lr, decay); absent where ||w|| = 0
 *   act/<layer>/mean|std|max   the block output's mean, standard deviation (population)
 *                    and largest magnitude over the step's whole batch (transformers)
 *   gate_entropy/<layer>/<level>    Dispatcher: the mean binary entropy, in bits, of the
 *                    level's gates (clamped to [0,1]) over positions t >= 2^level
 *   gate_saturated/<layer>/<level>  the share of those gates <= 0.01 or >= 0.99
 *   attn_entropy/<layer>/<head>     MSA: the mean entropy, in nats, of the head's
 *                    attention distribution over the step's rows
 *   hist/weight/<tensor>, hist/grad/<tensor>  64-bin histograms (SeriesHist)
 * <tensor> is the checkpoint's name (params.h). Activation, gate and attention numbers come
 * from the step's own forward (every shard's saved activations: dropout as trained), each
 * shard's sums combined in the shard plan's order, so any thread or process count gives
 * the same numbers. NaN and infinities are recorded as they are; nothing here stops a run.
 * Not the storage (runstore_series.h) and not the step itself (trainer.c calls the two
 * hooks below around its update). */
#ifndef LM_DIAG_H
#define LM_DIAG_H

#include "metrics.h"
#include "model.h"
#include "replicas.h"

typedef struct Diag Diag;

/* The diagnostics of a model every `every` steps (> 0), trained on the shards of r (NULL:
 * the model alone, one shard): keeps room for a copy of the weights (the update ratio).
 * NULL with a message when out of memory. */
Diag *diag_create(const Model *m, Replicas *r, int every, char *err);
void diag_destroy(Diag *d);

/* 1 when the step numbered `step` (1-based, the one being taken) is a diagnostics step. */
int diag_due(const Diag *d, long step);

/* After the step's gradient is complete (folded and, under mpirun, broadcast) and before
 * its update: the gradient and weight numbers, the histograms, the activation, gate and
 * attention numbers of every shard's last forward, and a copy of the weights. Under
 * mpirun every rank calls it at the same point (one allreduce of the shards' sums). */
void diag_collect(Diag *d, Model *m, Replicas *r, long step);

/* After the update (updated = 1), or instead of it (0: a diverged step, no update
 * ratios): the step's batch of series (caller owns it: series_batch_free), or NULL when
 * nothing was collected or memory ran out. */
SeriesBatch *diag_finish(Diag *d, const Model *m, int updated);

#endif
