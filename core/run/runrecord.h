/* runrecord.h — the one record of a stored run that `run`, `open`, `runs`, `compare`,
 * exports and the dashboard share: which checkpoint files exist (each with its own step
 * and its own evaluation, not the best-so-far the trainer had when it wrote it), the best
 * as its own record (best.safetensors and the step whose weights it holds, kept apart from
 * the step file of that step), whether the best and final validation losses are
 * whole-split evaluations or estimates over eval_batches batches, its lineage (fork
 * parent), seed group, precision and whether its owner process is alive. Read from the
 * store and the run folder; nothing is written. File names are runfiles.h's: nothing
 * above this layer reads a run folder's names. */
#ifndef LM_RUNRECORD_H
#define LM_RUNRECORD_H

#include "runstore.h"
#include "runstore_group.h"

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
    int n_gone;        /* recorded step files no longer on disk that keep_checkpoints
                          removed (on its grid, older than the newest kept ones) */
    int n_lost;        /* recorded checkpoint files no longer on disk that keep_checkpoints
                          did not remove: deleted or moved outside lmlab */
    long lost_step;    /* the newest of those (-1 none) */
    int dir_gone;      /* the run's checkpoint folder itself is missing */
    long best_step;    /* the step whose weights the best record holds (-1 none) */
    RunEval best;      /* the evaluation the best checkpoint was chosen by: the one at
                          best_step, else the lowest (loss NAN when none) */
    RunEval best_whole;/* the lowest whole-split evaluation (loss NAN when none) */
    RunEval final;     /* the last evaluation (loss NAN when none) */
    long parent_run, parent_step;  /* a fork's origin (0 = none), or init_from's run */
    int parent_init;   /* 1: parent_run is init_from's run (a fine-tune), 0: a fork */
    char parent_data[256];/* the parent's data when it is not this run's (init_from on
                             another corpus), else "" */
    char group[RUNSTORE_GROUP_LEN];/* its seed group ("" = none) */
    char precision[16];/* the run's precision= setting: "fp32" or "bf16" */
    int owner_live;    /* running or paused with its process alive (runstore_run_live) */
    int owner_gone;    /* running or paused in the store, but its process is gone (on
                          another host: no heartbeat for RUNSTORE_STALE_SECONDS) */
    long owner_pid;    /* the process that created or last resumed it (0 = not recorded) */
    char owner_host[64];/* and its host ("" = not recorded) */
} RunRecord;

/* Reads run r's record. LM_OK, or the store's error in err. Free with runrecord_free. */
int runrecord_read(RunStore *st, const RunRow *r, RunRecord *f, char *err);
void runrecord_free(RunRecord *f);

/* "2.1097 (ppl 8.26) at step 1000, an estimate over 5 batches" or "... whole split";
 * "-" when e->loss is NAN. */
void runrecord_fmt_eval(char *buf, size_t cap, const RunEval *e);

/* The owner's state: "alive", "gone" (running or paused in the store, its process
 * no longer exists) or "ended" (the run is not running: its last owner let it go). */
const char *runrecord_owner_state(const RunRecord *f);

/* "pid 4242@vm, alive" (or "gone: running in the store but its process no longer exists",
 * or "ended"); "-" when no owner was recorded. */
void runrecord_fmt_owner(char *buf, size_t cap, const RunRecord *f);

/* The checkpoint `open` loads for which = "best" | "final" | "last" (= final) and step
 * (> 0: that step's file; which is then ignored): LM_OK with *out pointing into f, or
 * LM_EARG with what exists in err. */
int runrecord_pick(const RunRecord *f, const char *which, long step, const RunCkpt **out,
                   char *err);

/* The path (and *step, may be NULL) of run r's checkpoint for which = "best" | "final"
 * (runrecord_pick over its record): what `open`, `init_from=ID`, `train resume=ID` and a
 * sweep's resumed trial load. LM_OK; LM_EARG when none exists (err says what is kept),
 * LM_EIO when the path does not fit cap, or the store's error. */
int runrecord_checkpoint_path(RunStore *st, const RunRow *r, const char *which, char *path,
                              size_t cap, long *step, char *err);


/* The run's precision= setting from its row alone into out ("fp32" when its config does
 * not say: runs from before the setting). */
void runrecord_precision(const RunRow *r, char *out, size_t cap);

/* The run's parent in a table cell into out: "#7@200" (a fork of run 7 at step 200),
 * "init #7@200" (started with init_from= from run 7's weights of step 200), "(rm)@200"
 * (its parent was deleted), or "" (trained from scratch). */
void runrecord_fmt_parent(char *out, size_t cap, const RunRow *r);

/* What a run trained itself: a fork from its fork point on (its parent's steps, tokens
 * and seconds before it are not its own), any other run from step 0 (a resume carries on
 * the same run's totals). tokens_per_s is tokens over seconds of training (NAN before a
 * logged step): the speed `compare` and the end of `train` state. */
typedef struct {
    long from_step;    /* where its own training began */
    long steps, tokens;
    double seconds, tokens_per_s;
} RunWork;

/* Reads run r's own work from its logged steps (and, for a fork, its parent's row at the
 * fork step; the fork's first row when that is gone). LM_OK or the store's error. */
int runrecord_work(RunStore *st, const RunRow *r, RunWork *w, char *err);

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
    char cause[240];   /* "" or the setting change before the part: "precision changed at
                          step 200 in run 2 (fp32 -> bf16)" (runchanges_list) */
} RunParity;

/* Compares runs a and b (rows read with runstore_get). LM_OK or the store's error in err. */
int runrecord_parity(RunStore *st, const RunRow *a, const RunRow *b, RunParity *p, char *err);
/* "identical over the 12 logged steps both have" or "part at step 7 (loss 4.1685572 vs
 * 4.1702871)", then "; precision changed at step 6 in run 2 (fp32 -> bf16)" when
 * p->cause says so, then "; differ: shards 3 vs 2" when p->kernels says so. */
void runrecord_fmt_parity(char *buf, size_t cap, const RunParity *p);

#endif
