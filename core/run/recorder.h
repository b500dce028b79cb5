/* recorder.h — the one consumer of a trainer's events: a thread that writes them to the
 * run store (its own connection, batched transactions) and keeps a snapshot of the run
 * (status, curves, gates, the streaming sample, messages) that readers copy under a
 * lock: the dashboard draws from it, printers follow it, nobody touches the model.
 * Store failures never drop data silently: rows stay pending, the snapshot says why, and
 * the recorder retries. Not here: drawing, or deciding what to train. */
#ifndef LM_RECORDER_H
#define LM_RECORDER_H

#include "err.h"
#include "runstore.h"
#include "trainer.h"

#define SNAP_MAX_GATES 1024
#define SNAP_SAMPLE_LEN 8192
#define SNAP_MAX_LOSS 8192      /* points of the loss series kept (memory stays flat) */
#define SNAP_RECENT_STEPS 1024  /* logged steps kept whole, for printers that follow */
#define SNAP_MESSAGES 8         /* recent messages kept, for printers that poll */

typedef struct {
    long run_id;
    char run_name[64];
    Config cfg;
    long total_steps, params;
    int vocab;
    int status;            /* TrainerStatus */
    int interrupted;       /* status STOPPED because its process is gone (the store's
                              "interrupted": resumable with `train resume=ID`) */
    char reason[LM_ERR_LEN];
    StepMetric last;       /* the latest logged step */
    StepMetric origin;     /* where this process's training began (trainer_origin): a
                              fork's or resume's step, tokens and seconds, else zeros */
    long fork_of;          /* the run this one forks (0 = not a fork; -1 = a fork whose
                              parent was deleted, read from the store) */
    StepMetric recent[SNAP_RECENT_STEPS]; /* logged step k (0-based) at [k % N], each with
                                             its own values, while k >= n_steps - N */
    long n_steps;          /* step events seen */
    EvalMetric last_eval;  /* valid when n_val > 0 */
    double best_val;       /* NAN before the first evaluation */
    SeriesPoint *loss;     /* (n_loss) logged training loss, malloc'd; at most SNAP_MAX_LOSS
                              points: on a long run each point is the mean of 2^k logged
                              steps (at the last one's step); the store keeps every step */
    int n_loss, cap_loss;
    SeriesPoint *val;      /* (n_val) validation loss per evaluation */
    int n_val, cap_val;
    GateStat gates[SNAP_MAX_GATES]; /* latest per (layer, level), layer-major */
    int n_gates, gate_layers, gate_levels;
    char sample[SNAP_SAMPLE_LEN];   /* the latest periodic sample (streams in) */
    long sample_step;
    int sample_live;
    long message_seq;               /* warnings and errors from the trainer or the store
                                       so far: snapshot_message reads the recent ones */
    char messages[SNAP_MESSAGES][LM_ERR_LEN];   /* number k (1-based) at [k % N] */
    char checkpoint[METRICS_PATH_LEN];
    long pending_rows;     /* rows waiting for the store */
    long unrecorded;       /* after the end: rows (and the final status, counted as one)
                              that never reached the store; 0 = everything recorded */
    char unrecorded_why[LM_ERR_LEN]; /* what was not recorded, where and why */
    long seq;              /* bumps on every change */
} Snapshot;

typedef struct Recorder Recorder;

/* Called on the recorder thread after each event is applied (may be NULL). */
typedef void (*RecorderCallback)(void *ud, const TrainEvent *ev, const Snapshot *snap);

/* Starts recording trainer t as run `run_id` of the store at db_path (opened anew by the
 * recorder's thread). The trainer must already be started or about to be. */
Recorder *recorder_create(Trainer *t, const char *db_path, long run_id, const char *run_name,
                          RecorderCallback cb, void *ud, char *err);
/* Waits until the run has ended and every event is recorded, then frees. */
void recorder_destroy(Recorder *r);
/* 1 once the run has ended and its final status is recorded. */
int recorder_done(Recorder *r);

/* Copies the snapshot into dst (whose series arrays are reused/grown; free them with
 * snapshot_free). Returns dst->seq. */
long recorder_snapshot(Recorder *r, Snapshot *dst);
void snapshot_free(Snapshot *s);
/* Message number k (1-based, up to s->message_seq), or NULL once SNAP_MESSAGES newer ones
 * took its place. A printer that polls prints every one since its last poll: two notes
 * between polls (a run's start has several) were one, the older lost. */
const char *snapshot_message(const Snapshot *s, long k);

/* Fills dst (series arrays reused/grown, as recorder_snapshot) with run `run` as the
 * store has it: status (a running/paused run whose process is gone shows as stopped,
 * the reason saying so), configuration, the last logged step, the loss curve (averaged
 * down to SNAP_MAX_LOSS points), evaluations, the last gates and the newest sample.
 * dst->seq bumps when the step, status, evaluations or sample changed since the last
 * fill of the same dst. For a run another process trains, or a finished one.
 * LM_EARG "no run N"; store errors as runstore_series. (snapshot_store.c) */
int snapshot_from_store(RunStore *st, long run, Snapshot *dst, char *err);

/* The store's name for a trainer status: trainer_status_name's, except that idle and
 * evaluating (which the store does not know) are "running". */
const char *recorder_status_name(int status);

/* What the snapshot's run trained itself, as runrecord_work says it of a stored run: a
 * fork from its fork point on (sn->origin), any other run from step 0 (a resume carries
 * on the run's totals). *seconds: its seconds of training; *tokens_per_s: its tokens over
 * them (0 before a logged step): the speed the end of `train`, `compare` and, once the
 * run has ended, the dashboard's status bar and `status` state. (snapshot_store.c) */
void snapshot_own_work(const Snapshot *sn, double *seconds, double *tokens_per_s);

/* The snapshot's status as the store words it: recorder_status_name's, but "interrupted"
 * for a run whose process ended without closing it (as `runs` and `run ID` say).
 * (snapshot_store.c) */
const char *snapshot_status_name(const Snapshot *sn);

#endif
