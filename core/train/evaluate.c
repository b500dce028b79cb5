/* evaluate.c — whole-split and estimated evaluation (see evaluate.h). */
#include "evaluate.h"

#include "dist.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void finish(EvalResult *out, double sum, long count, size_t chars)
{
    out->tokens = count;
    out->loss = count ? sum / (double)count : NAN;
    out->ppl = exp(out->loss);
    /* bits per character: the total bits over the characters the tokens spell */
    out->bpc = chars ? sum / log(2.0) / (double)chars : NAN;
}

/* One forward over `rows` windows already packed as (rows, T) in x/y: batch k's sum and
 * tokens added to *sum, *count, or, when the ranks share the evaluation, kept in part[2k],
 * part[2k+1] (every batch's sum is added in batch order after the reduction, so the total
 * is the same bits for any number of ranks). */
static int run_batch(Model *m, Replicas *reps, const int *x, const int *y, int rows, int T,
                     double *part, size_t k, double *sum, long *count)
{
    double s;
    long c;
    int rc = reps && !m->carry_state ? replicas_step(reps, x, y, rows, T, &s, &c)
                                     : model_forward(m, x, y, rows, T, &s, &c);
    if (rc)
        return rc;
    if (part) {
        part[2 * k] = s;
        part[2 * k + 1] = (double)c;
        return LM_OK;
    }
    *sum += s;
    *count += c;
    return LM_OK;
}

/* The batches whole_split packs: full windows rows_max at a time, then the short one. */
static size_t whole_split_batches(size_t n, int bptt, int rows_max)
{
    size_t windows = (n - 1 + (size_t)bptt - 1) / (size_t)bptt, full = (n - 1) / (size_t)bptt;
    return (full + (size_t)rows_max - 1) / (size_t)rows_max + (windows > full);
}

/* The whole split in batches of consecutive windows; with ranks > 1 this rank forwards
 * batches me, me + ranks, ... (their windows are independent: not for carried state). */
static int whole_split(Model *m, Replicas *reps, const TokSeq *data, size_t n, int bptt,
                       int batch, int ranks, int me, const volatile int *cancel,
                       const EvalLimits *lim, int *x, int *y, double *part, double *sum,
                       long *count, char *err)
{
    size_t windows = (n - 1 + (size_t)bptt - 1) / (size_t)bptt;
    int recurrent = model_carries_state(m);
    int rows_max = recurrent ? 1 : batch;
    size_t full = (n - 1) / (size_t)bptt; /* windows of exactly bptt tokens */
    for (size_t w = 0, k = 0; w < windows; k++) {
        if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED))
            return LM_ECANCEL;
        int rows = 0;
        int T = w < full ? bptt : (int)(n - 1 - w * (size_t)bptt);
        /* pack consecutive windows of the same length */
        while (rows < rows_max && w < windows) {
            int Tw = w < full ? bptt : (int)(n - 1 - w * (size_t)bptt);
            if (Tw != T)
                break;
            rows++;
            w++;
        }
        if (k % (size_t)ranks != (size_t)me)
            continue;
        uint64_t first = (w - (size_t)rows) * (uint64_t)bptt;
        for (int r = 0; r < rows; r++) {   /* read only the batches this rank forwards */
            int rc = tokseq_read(data, first + (uint64_t)r * (uint64_t)bptt, (size_t)T,
                                 x + (size_t)r * T, err);
            if (!rc) {
                memcpy(y + (size_t)r * T, x + (size_t)r * T + 1, (size_t)(T - 1) * sizeof(int));
                rc = tokseq_read(data, first + (uint64_t)r * (uint64_t)bptt + (uint64_t)T, 1,
                                 y + (size_t)r * T + T - 1, err);
            }
            if (rc)
                return rc;
        }
        int rc = run_batch(m, reps, x, y, rows, T, part, k, sum, count);
        if (rc)
            return rc;
        if (lim && lim->progress)
            lim->progress(lim->ud, w * (uint64_t)bptt < n - 1 ? w * (uint64_t)bptt : n - 1,
                          n - 1);
    }
    return LM_OK;
}

int evaluate_split(Model *m, Replicas *reps, const TokSeq *data, int bptt, int batch,
                   int max_batches, int shared, Rng *rng, size_t chars,
                   const volatile int *cancel, int *x, int *y, EvalResult *out, char *err)
{
    return evaluate_split_limited(m, reps, data, bptt, batch, max_batches, shared, rng, chars,
                                  cancel, NULL, x, y, out, err);
}

/* Uniform in [0, n) (below 2^32 rng_below's draws, as ever; beyond, 64 bits). */
static uint64_t draw_below(Rng *r, uint64_t n)
{
    if (n <= UINT32_MAX) return rng_below(r, (uint32_t)n);
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
        uint64_t v = (uint64_t)rng_u32(r) << 32 | rng_u32(r);
        if (v < lim) return v % n;
    }
}

/* max_batches batches of random windows; every rank draws every batch's starts (the same
 * rng state everywhere) and reads and forwards its own batches k = me mod ranks. */
static int random_batches(Model *m, Replicas *reps, const TokSeq *data, size_t n, int bptt,
                          int batch, int max_batches, int ranks, int me, Rng *rng,
                          const volatile int *cancel, int *x, int *y, double *part,
                          double *sum, long *count, char *err)
{
    int T = (size_t)bptt < n - 1 ? bptt : (int)(n - 1), rc = LM_OK;
    for (int k = 0; k < max_batches && !rc; k++) {
        if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED))
            return LM_ECANCEL;
        uint64_t start[batch];
        for (int b = 0; b < batch; b++)
            start[b] = draw_below(rng, n - (size_t)T);
        if (k % ranks != me)
            continue;
        for (int b = 0; b < batch && !rc; b++) {
            rc = tokseq_read(data, start[b], (size_t)T, x + (size_t)b * T, err);
            if (!rc) {
                memcpy(y + (size_t)b * T, x + (size_t)b * T + 1, (size_t)(T - 1) * sizeof(int));
                rc = tokseq_read(data, start[b] + (uint64_t)T, 1, y + (size_t)b * T + T - 1, err);
            }
        }
        if (rc)
            return rc;
        if (m->ops->reset_state)
            m->ops->reset_state(m);
        rc = run_batch(m, reps, x, y, batch, T, part, (size_t)k, sum, count);
    }
    return rc;
}

int evaluate_split_limited(Model *m, Replicas *reps, const TokSeq *data, int bptt, int batch,
                           int max_batches, int shared, Rng *rng, size_t chars,
                           const volatile int *cancel, const EvalLimits *lim, int *x, int *y,
                           EvalResult *out, char *err)
{
    memset(out, 0, sizeof *out);
    size_t n = data->n, n_all = n;
    if (max_batches == 0 && lim && lim->max_tokens > 0 && lim->max_tokens + 1 < n)
        n = (size_t)lim->max_tokens + 1;   /* the first max_tokens predictions */
    if (n < 2)
        return err_set(err, LM_EARG, "the split has %zu tokens: nothing to evaluate", n);
    if (batch > m->B)
        batch = m->B;
    if (bptt > m->T)
        bptt = m->T;
    int was_training = m->training, was_carry = m->carry_state;
    m->training = 0;
    m->carry_state = model_carries_state(m) && max_batches == 0;
    if (m->ops->reset_state)
        m->ops->reset_state(m);
    double sum = 0;
    long count = 0;
    int rc = LM_OK;
    char rmsg[LM_ERR_LEN] = "";   /* a read's failure (tokseq_read) */
    int ranks = shared ? dist_size() : 1, me = shared ? dist_rank() : 0;
    size_t n_batches = max_batches > 0 ? (size_t)max_batches
                     : whole_split_batches(n, bptt, model_carries_state(m) ? 1 : batch);
    double *part = NULL;   /* shared: every batch's sum and tokens, then the failure flag */
    if (ranks > 1 && !(part = calloc(2 * n_batches + 1, sizeof *part))) {
        err_set(err, LM_ENOMEM, "out of memory for a shared evaluation");
        dist_abort(1);     /* the other ranks would wait in the reduction */
        return LM_ENOMEM;
    }
    if (max_batches == 0) {
        rc = whole_split(m, reps, data, n, bptt, batch, ranks, me, cancel, lim, x, y, part,
                         &sum, &count, rmsg);
    } else {
        rc = random_batches(m, reps, data, n, bptt, batch, max_batches, ranks, me, rng, cancel,
                            x, y, part, &sum, &count, rmsg);
    }
    if (ranks > 1) {   /* one reduction, whatever happened: no rank is left waiting; each
                          entry has one rank's value (the others' are 0), so it is exact */
        part[2 * n_batches] = rc ? 1 : 0;
        dist_allreduce_sum_f64(part, 2 * n_batches + 1);
        for (size_t k = 0; k < n_batches; k++) {
            sum += part[2 * k];
            count += (long)part[2 * k + 1];
        }
        if (!rc && part[2 * n_batches] > 0)
            rc = LM_ECANCEL;   /* another rank was cancelled or failed */
        free(part);
    }
    if (m->ops->reset_state)
        m->ops->reset_state(m);
    if (reps)
        replicas_reset_state(reps);
    m->training = was_training;
    m->carry_state = was_carry;
    int partial = max_batches == 0 && (n < n_all || (rc == LM_ECANCEL && lim && count > 0));
    if (rc == LM_ECANCEL && partial)
        rc = LM_OK;   /* stopped: what was evaluated is the estimate */
    if (rc == LM_ECANCEL)
        return err_set(err, rc, "evaluation cancelled");
    if (rc && rmsg[0])
        return err_set(err, rc, "evaluation failed: %s", rmsg);
    if (rc)
        return err_set(err, rc, "evaluation failed (%s)", err_name(rc));
    /* bits per character at every evaluation of a char-level run: over the whole split its
     * characters, over sampled batches or a part the characters predicted (one a token) */
    finish(out, sum, count, !chars ? 0 : max_batches == 0 && !partial ? chars : (size_t)count);
    out->partial = partial;
    out->split_tokens = max_batches == 0 ? (long)(n_all - 1) : 0;
    return LM_OK;
}
