/* evaluate.h — loss over a whole split, as the seed's evaluate(): the split's tokens cut
 * into consecutive windows of bptt (the last one shorter), each window predicting its
 * next tokens, the mean over every predicted token. Transformers batch independent
 * windows (the same number as one window at a time); recurrent models carry their state
 * window to window, one stream. Or a quick estimate on N random windows (seed 004's
 * estimate_loss). Not here: choosing when to evaluate (trainer.c). */
#ifndef LM_EVALUATE_H
#define LM_EVALUATE_H

#include "model.h"
#include "replicas.h"
#include "rng.h"
#include "tokseq.h"

#include <stddef.h>

typedef struct {
    double loss;           /* mean cross-entropy per predicted token */
    double ppl;            /* exp(loss) */
    double bpc;            /* bits per character when chars > 0, else NAN */
    long tokens;           /* predicted tokens */
    int partial;           /* whole split: 1 when capped or stopped before its end (the
                              loss is an estimate over `tokens` of split_tokens) */
    long split_tokens;     /* whole split: the tokens it predicts in all (n - 1) */
} EvalResult;

/* A whole-split evaluation's cap and progress (all optional: a zeroed struct is none). */
typedef struct {
    uint64_t max_tokens;   /* predict at most this many tokens (the first ones; 0 = all) */
    void (*progress)(void *ud, uint64_t done, uint64_t total);  /* after each batch */
    void *ud;
} EvalLimits;

/* Evaluates m (switched to eval mode and back) over the ids of data (n = data->n;
 * token files are read window by window, so no split is held). batch: windows per
 * forward (at most the model's allocated B). max_batches 0 = the whole split, else that
 * many batches of random windows drawn with rng. chars: characters the split's text
 * holds (for bits per character; 0 = not char-level). cancel: polled between batches
 * (may be NULL). reps (may be NULL): the model's data-parallel replicas, used for
 * batches of independent windows. shared (under mpirun; not for a recurrent model's
 * whole split, whose state runs window to window): every rank of the job calls this
 * together with the same arguments and rng state; batch k is forwarded by rank k mod N
 * and the sums (and a cancel on any rank) are reduced over the ranks, so every rank
 * returns the same result in 1/N of the time. LM_OK, LM_EARG (split shorter
 * than 2 tokens), LM_ECANCEL, tokseq_read's errors (a changed file, an id beyond the
 * vocabulary). Uses caller-provided scratch x, y of at least batch * bptt
 * ints. */
int evaluate_split(Model *m, Replicas *reps, const TokSeq *data, int bptt, int batch,
                   int max_batches, int shared, Rng *rng, size_t chars,
                   const volatile int *cancel, int *x, int *y, EvalResult *out, char *err);

/* evaluate_split with limits for the whole split (max_batches 0): with lim->max_tokens the
 * first max_tokens predicted tokens only; a cancel after at least one batch returns LM_OK
 * with the batches done. Either way out->partial says the result is an estimate.
 * lim->progress is called on this rank after each batch it forwards (done, total:
 * predicted tokens; under `shared`, this rank's share counted as the whole's pace). */
int evaluate_split_limited(Model *m, Replicas *reps, const TokSeq *data, int bptt, int batch,
                           int max_batches, int shared, Rng *rng, size_t chars,
                           const volatile int *cancel, const EvalLimits *lim, int *x, int *y,
                           EvalResult *out, char *err);

#endif
