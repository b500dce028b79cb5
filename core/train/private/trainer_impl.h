/* trainer_impl.h — the Trainer's state, shared by trainer_create.c (construction),
 * trainer_control.c (the event queue, control, accessors), trainer.c (the step loop),
 * trainer_tasks.c (evaluations, gate statistics, samples, checkpoints, divergence
 * diagnosis) and trainer_dist.c (mpirun). Internal: callers use trainer.h. */
#ifndef LM_TRAINER_IMPL_H
#define LM_TRAINER_IMPL_H

#include "diag.h"
#include "optim.h"
#include "replicas.h"
#include "schedule.h"
#include "trainer.h"

#include <pthread.h>

typedef struct EventNode {
    TrainEvent ev;
    struct EventNode *next;
} EventNode;

struct Trainer {
    Config cfg;
    TrainerOptions opt;
    Dataset ds;
    Model *m;
    Replicas *reps;        /* the shards this process computes (replicas.h) */
    Diag *diag;            /* diagnostics=N (diag.h), NULL when off */
    float *fold_buf;       /* under mpirun: the next rank's partial fold (params.total) */
    Optimizer optim;
    Schedule sched;
    Batcher batcher;
    char *tok_json;
    int *x, *y;            /* (batch, bptt) */
    long total_steps, steps_per_epoch;
    TrainState ts;
    long start_step;       /* ts.step when training began (a resume's or fork's step, else 0) */
    long start_tokens;     /* ts.tokens and ... */
    double start_elapsed;  /* ... ts.elapsed then (trainer_origin) */
    double best_val;
    float last_gnorm;
    long best_written;     /* step whose evaluation best.safetensors holds (-1 none) */
    int high_loss_steps;   /* consecutive steps above diverge_factor x ln(V) */
    double marks[CONFIG_MAX_EVAL_MARKS]; /* eval_at_seconds, parsed */
    int n_marks, next_mark; /* marks[next_mark] is the next one not yet evaluated */
    long sched_pos;        /* the schedule's position for this step (schedule_clock) */
    char fatal[512];       /* (LM_ERR_LEN) why a checkpoint can never be written (run fails) */
    char unsaved[512];     /* (LM_ERR_LEN) why the checkpoint a stop cut short (while it
                              waited for space) was not written: the run ends stopped */
    long saved_step;       /* step of the last step checkpoint this trainer wrote (-1 none) */
    int data_failed;       /* the loop ended on reading tokens (a step's batch, an
                              evaluation): the weights are the last step's, intact */
    /* control */
    pthread_t thread;
    int started;
    pthread_mutex_t mu;    /* status, requests, queue */
    pthread_cond_t cv;     /* pause/resume, new events */
    pthread_mutex_t step_mu; /* held while parameters change */
    int ckpt_req;            /* trainer_checkpoint_now: a checkpoint after this step */
    char stop_why[160];      /* trainer_stop_because: who or what stopped it ("": said none) */
    int stop_req, pause_req; /* read through __atomic loads (the training thread polls
                                them); written with __atomic stores under mu */
    TrainerStatus status;
    EventNode *head, *tail;
};

/* Whether a stop was requested (any thread, no lock needed). */
static inline int trainer_stopping(const Trainer *t)
{
    return __atomic_load_n(&t->stop_req, __ATOMIC_ACQUIRE);
}

/* trainer_control.c */
void trainer_push(Trainer *t, TrainEvent *ev);
void trainer_push_text(Trainer *t, TrainEventKind kind, const char *text);
void trainer_set_status(Trainer *t, TrainerStatus s, const char *reason);

/* trainer.c */
void trainer_reset_states(Trainer *t);

/* trainer_tasks.c */
int trainer_do_eval(Trainer *t, int final, char *err);
/* 1 when trainer_do_eval is shared by every rank of an mpirun job: each rank forwards its
 * share of the batches (evaluate.h), for the periodic estimates and the final whole-split
 * evaluation alike, except a recurrent model's whole split (its state runs window to
 * window: rank 0's alone). Every rank must then call trainer_do_eval together. */
int trainer_eval_shared(const Trainer *t, int final);
void trainer_do_sample(Trainer *t);
int trainer_checkpoint_or_pause(Trainer *t, int is_best);
/* Writes best.safetensors now (after an evaluation that improved). LM_OK or the failure
 * (logged; the step checkpoints still carry the weights). */
int trainer_write_best(Trainer *t);
void trainer_find_nonfinite(const Model *m, char *buf, size_t cap);

#endif
