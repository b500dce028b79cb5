/* runfacts.h — the one reading of a stored run's facts that `run`, `open`, `status` and
 * the screens share: which checkpoint files exist (each with its own step and its own
 * evaluation, not the best-so-far the trainer had when it wrote it), which one holds the
 * best weights, and whether the best and final validation losses are whole-split
 * evaluations or estimates over eval_batches batches. Read from the store and the
 * files; nothing is written. */
#ifndef LM_RUNFACTS_H
#define LM_RUNFACTS_H

#include "runstore.h"

/* One validation evaluation of a run. */
typedef struct {
    long step;
    double loss;       /* NAN when none */
    int whole;         /* over the whole validation split (else an estimate) */
    long batches;      /* an estimate's batches (eval_batches of the run's config) */
} RunEval;

/* One checkpoint file that exists. */
typedef struct {
    long step;         /* the training step its weights are from */
    char path[1024];
    RunEval eval;      /* the evaluation at exactly that step (loss NAN when none) */
    int best_file;     /* the run's best.safetensors */
    int best;          /* holds the best weights: best.safetensors, or the step file of the
                          same step when best.safetensors is gone */
} RunCkpt;

typedef struct {
    RunCkpt *ckpts;    /* existing files in step order, best.safetensors after its step */
    int n_ckpts;
    int n_gone;        /* recorded checkpoint files no longer on disk (keep_checkpoints) */
    RunEval best;      /* the lowest evaluation the best checkpoint was chosen by (loss NAN
                          when none) */
    RunEval best_whole;/* the lowest whole-split evaluation (loss NAN when none) */
    RunEval final;     /* the last evaluation (loss NAN when none) */
} RunFacts;

/* Reads run r's facts. LM_OK, or the store's error in err. Free with runfacts_free. */
int runfacts_read(RunStore *st, const RunRow *r, RunFacts *f, char *err);
void runfacts_free(RunFacts *f);

/* "2.1097 (ppl 8.26) at step 1000, an estimate over 5 batches" or "... whole split";
 * "-" when e->loss is NAN. */
void runfacts_fmt_eval(char *buf, size_t cap, const RunEval *e);

/* The checkpoint `open` loads for which = "best" | "final" | "last" (= final) and step
 * (> 0: that step's file; which is then ignored): LM_OK with *out pointing into f, or
 * LM_EARG with what exists in err. */
int runfacts_pick(const RunFacts *f, const char *which, long step, const RunCkpt **out,
                  char *err);

/* 1 when run r's best validation loss (the store's lowest evaluation, r->best_val) is an
 * estimate over eval_batches batches rather than a whole-split evaluation: read from its
 * row alone (no query), for tables of many runs. */
int runfacts_best_estimated(const RunRow *r);

/* Whether two stored runs computed the same numbers (issue 35: same seed and settings,
 * any threads or processes): every logged step's loss, gradient norm and learning rate,
 * and every validation and test evaluation, compared bit for bit over the steps both
 * runs logged (a fork and its parent: not the fork's first logged loss when the fork point
 * is inside a log_every window, which averages fewer steps by construction). */
typedef struct {
    int identical;     /* 1: no difference over the steps both logged */
    long step;         /* else the first step where they part */
    char what[32];     /* "loss", "grad_norm", "lr", "val_loss" or "test_loss" */
    double a, b;       /* the two values there */
    long common;       /* logged steps both runs have (the others are not compared) */
    long last_a, last_b;   /* the last step each logged */
    char kernels[160]; /* "" or why the numbers may differ: "BLAS kernels OpenBLAS 0.3.21
                          Haswell vs OpenBLAS 0.3.21 Cooperlake", "precision fp32 vs bf16",
                          "shards 2 vs 4" */
} RunParity;

/* Compares runs a and b (rows read with runstore_get). LM_OK or the store's error in err. */
int runfacts_parity(RunStore *st, const RunRow *a, const RunRow *b, RunParity *p, char *err);
/* "identical over the 12 logged steps both have" or "part at step 7 (loss 4.1685572 vs
 * 4.1702871)", then "; differ: shards 3 vs 2" when p->kernels says so. */
void runfacts_fmt_parity(char *buf, size_t cap, const RunParity *p);

#endif
