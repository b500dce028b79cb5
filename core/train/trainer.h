/* trainer.h — a training run on its own thread: configuration -> dataset, tokenizer,
 * model, optimizer, schedule; then steps, periodic evaluations, gate statistics, samples
 * and checkpoints, reported as a stream of events the caller consumes (trainer_poll).
 * Control: start, pause, resume, stop (the current step finishes cleanly, a checkpoint
 * is written). A NaN/Inf loss or gradient ends the run as `diverged`, naming the step and
 * the first tensor where it appeared, and which checkpoint is left (if any). A checkpoint
 * that cannot be written (disk full, read-only) pauses the run with the reason; resume
 * retries.
 * Not here: recording events (runstore), drawing them (ui), parsing commands. */
#ifndef LM_TRAINER_H
#define LM_TRAINER_H

#include "checkpoint.h"
#include "config.h"
#include "dataset.h"
#include "metrics.h"
#include "sysmetrics.h"
#include "model.h"

typedef enum {
    TRAINER_IDLE, TRAINER_RUNNING, TRAINER_PAUSED, TRAINER_EVALUATING, TRAINER_FINISHED,
    TRAINER_STOPPED, TRAINER_DIVERGED, TRAINER_FAILED
} TrainerStatus;

typedef enum {
    TEV_STEP,              /* step */
    TEV_EVAL,              /* eval */
    TEV_GATES,             /* gates[n_gates] */
    TEV_SAMPLE_PIECE,      /* text: the next piece of a periodic sample */
    TEV_SAMPLE,            /* text: the whole sample, prompt: its prompt */
    TEV_CHECKPOINT,        /* ckpt */
    TEV_STATUS,            /* status, text: the reason */
    TEV_LOG,               /* text: a message (warnings, errors that did not end the run) */
    TEV_SYS,               /* sys[n_sys]: under mpirun, the other ranks' system samples */
    TEV_SERIES,            /* series: named scalars and histograms (diagnostics, diag.h) */
} TrainEventKind;

typedef struct {
    TrainEventKind kind;
    long at_step;
    StepMetric step;
    EvalMetric eval;
    CheckpointRecord ckpt;
    GateStat *gates;
    int n_gates;
    SysSample *sys;        /* TEV_SYS: (n_sys) ranks 1..N-1, malloc'd */
    int n_sys;
    SeriesBatch *series;   /* TEV_SERIES, malloc'd (series_batch_free) */
    int status;
    char *text, *prompt;
} TrainEvent;

typedef struct {
    long run_id;           /* recorded in checkpoints */
    char run_dir[512];     /* where checkpoints go (created if missing) */
    char resume[1024];     /* a checkpoint of this run to continue from, or "" */
    long fork_of;          /* > 0: `resume` is this run's checkpoint and the run is a new
                              one (a fork): its ending says what it trained ("finished at
                              step 60: trained 30 steps from #7@30") */
    long stop_at;          /* > 0: evaluate, checkpoint and stop at this step (a rung of
                              successive halving); the run ends as `stopped` */
    double checkpoint_retry; /* seconds between automatic retries of a checkpoint that
                                failed for space or I/O (0 = 30 s); `resume` retries at once */
    char data_dir[1024];   /* the token folder the caller resolved data= to (a prepared
                              cache, dataset_cache.h), read instead of data= itself; the
                              run keeps data= as its data's name. "" = load data= */
    double (*clock)(void); /* the training clock in seconds (time_budget, eval_at_seconds,
                              elapsed); NULL = sysinfo_now. Tests give a fake one; it is not
                              sent to the other ranks of an MPI job (they use sysinfo_now) */
} TrainerOptions;

typedef struct Trainer Trainer;

/* Loads the data and builds everything (with the memory estimate checked against the
 * machine before allocating). init_from (fine-tuning) and resume reuse the checkpoint's
 * tokenizer. NULL with a message on failure. */
Trainer *trainer_create(const Config *cfg, const TrainerOptions *opt, char *err);
void trainer_destroy(Trainer *t);   /* stops and joins first */

/* Names the run before it starts: its store id and checkpoint directory. */
void trainer_set_run(Trainer *t, long run_id, const char *run_dir);
/* Records the run store's identity in every checkpoint this run writes (with the run id
 * from trainer_set_run), so open/resume can tell its checkpoints from another run's. */
void trainer_set_store_id(Trainer *t, const char *store_id);
/* The run's checkpoint directory ("" when none; owned by the trainer). */
const char *trainer_run_dir(const Trainer *t);
/* Sets TrainerOptions.stop_at before the start. */
void trainer_set_stop_at(Trainer *t, long step);

int trainer_start(Trainer *t, char *err);
void trainer_pause(Trainer *t);
void trainer_resume(Trainer *t);
void trainer_stop(Trainer *t);      /* asks; the thread finishes its step */
/* trainer_stop, and why: its end reason says "stopped at step N: WHY" (the first cause). */
void trainer_stop_because(Trainer *t, const char *why);
/* Asks for a checkpoint of the current weights after the current step (while paused: at
 * once), as the step's periodic one is written; one process only (not under mpirun). */
void trainer_checkpoint_now(Trainer *t);
void trainer_join(Trainer *t);      /* waits for the thread to end */
TrainerStatus trainer_status(Trainer *t);
const char *trainer_status_name(TrainerStatus s);
int trainer_is_done(TrainerStatus s);

/* Next event, waiting up to timeout seconds (0 = don't wait). 1 when *ev was filled
 * (release it with trainer_event_free), 0 otherwise. */
int trainer_poll(Trainer *t, TrainEvent *ev, double timeout);
void trainer_event_free(TrainEvent *ev);

/* Read-only views for the caller (valid for the trainer's lifetime). */
const Config *trainer_config(const Trainer *t);
const Dataset *trainer_dataset(const Trainer *t);
long trainer_total_steps(const Trainer *t);
/* The steps done so far (the resumed step plus those trained since): the step the run is
 * at now, read from any thread (the recorder's last logged step can lag it). */
long trainer_step(const Trainer *t);
long trainer_param_count(const Trainer *t);
/* Where this trainer began: the step, tokens and seconds of training of the checkpoint it
 * resumed or forked from (all 0 for a fresh run) into *at, and the run it forks (0 = not a
 * fork) into *fork_of: what a fork trained itself is the last step's minus these. */
void trainer_origin(const Trainer *t, StepMetric *at, long *fork_of);
int trainer_vocab(const Trainer *t);

/* Copies the current parameters (between steps, so never a half-updated set) into dst
 * (ps->total floats of a model with the same configuration). */
void trainer_copy_params(Trainer *t, float *dst);

#endif
