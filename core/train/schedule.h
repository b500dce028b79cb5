/* schedule.h — learning-rate schedules: the lr of each (0-based) step as a pure function
 * of the step, plus the one stateful schedule, reduce-on-plateau, which also listens to
 * evaluation losses. Every kind shares the same linear warmup:
 *     step < warmup:  lr = base_lr * (step + 1) / warmup   (reaches base_lr at warmup-1)
 * and, after warmup, is never below min_lr.
 * Not an optimizer (optim.h) and not tied to epochs: steps are optimizer updates.
 * Checkpoint state: best, bad_evals and plateau_scale (the rest comes from the config). */
#ifndef LM_SCHEDULE_H
#define LM_SCHEDULE_H

typedef enum {
    SCHED_CONSTANT, SCHED_STEP, SCHED_INVSQRT, SCHED_COSINE, SCHED_PLATEAU, SCHED_LINEAR
} SchedKind;

typedef struct {
    SchedKind kind;
    float base_lr, min_lr, gamma, factor;
    int warmup, step_size, patience;
    long total_steps;
    /* plateau state: */
    double best;          /* best validation loss seen (+inf before the first) */
    int bad_evals;        /* evaluations since the last improvement */
    float plateau_scale;  /* product of the reductions so far (1 at the start) */
} Schedule;   /* plain value: no _free needed */

/* "constant", "step", "invsqrt", "cosine", "plateau", "linear" -> *kind. LM_OK or LM_EARG. */
int schedule_kind_parse(const char *name, SchedKind *kind);

/* The name schedule_kind_parse accepts for kind, or "?". */
const char *schedule_kind_name(SchedKind kind);

/* Fills *s. total_steps is the cosine and linear horizon (with total_steps <= warmup
 * they stay at base_lr); step_size/gamma drive "step"; patience/factor drive "plateau". Never
 * fails: nonsensical values (step_size <= 0, warmup < 0) disable that part. */
void schedule_init(Schedule *s, SchedKind kind, float base_lr, long total_steps, int warmup,
                   int step_size, float gamma, float min_lr, int patience, float factor);

/* The learning rate for 0-based step `step`, after warmup:
 *   constant: base_lr
 *   step:     base_lr * gamma^floor(step / step_size)              (torch StepLR)
 *   invsqrt:  base_lr * sqrt(warmup / step) for step >= warmup: base_lr at step == warmup,
 *             base_lr/2 at 4*warmup (warmup 0 counts as 1)
 *   cosine:   min_lr + (base_lr - min_lr) * (1 + cos(pi * (step - warmup) /
 *             (total_steps - warmup))) / 2: base_lr at warmup, min_lr from total_steps on
 *   linear:   min_lr + (base_lr - min_lr) * (1 - (step - warmup) / (total_steps - warmup)):
 *             the same ends as cosine, a straight line between them
 *   plateau:  base_lr * plateau_scale
 * each then raised to min_lr if below it. */
float schedule_lr(const Schedule *s, long step);

/* Plateau only (a no-op for other kinds): one evaluation's validation loss, with
 * torch.optim.lr_scheduler.ReduceLROnPlateau semantics (mode min, threshold 1e-4
 * relative, cooldown 0): an improvement is val_loss < best * (1 - 1e-4); otherwise a bad
 * evaluation, and when bad evaluations exceed `patience` (the (patience+1)-th in a row)
 * the lr is multiplied by factor, not below min_lr, and the count restarts. A NaN loss
 * counts as bad. */
void schedule_observe(Schedule *s, double val_loss);

#endif
