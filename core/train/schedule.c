/* schedule.c — learning-rate schedules (see schedule.h). The plateau rule follows
 * torch.optim.lr_scheduler.ReduceLROnPlateau (PyTorch 1.13); cosine follows
 * CosineAnnealingLR's closed form with a warmup in front, linear the same ends joined by a
 * straight line (decay to min_lr over the whole horizon); invsqrt is the Transformer
 * paper's (Vaswani et al. 2017, eq. 3) shape scaled so the peak is base_lr.
 * Not an optimizer and not aware of epochs. */
#include "schedule.h"

#include "err.h"

#include <math.h>
#include <string.h>

static const char *const kind_names[] = {"constant", "step",    "invsqrt",
                                         "cosine",   "plateau", "linear"};
#define N_KINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

int schedule_kind_parse(const char *name, SchedKind *kind)
{
    for (int i = 0; name && i < N_KINDS; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *kind = (SchedKind)i;
            return LM_OK;
        }
    return LM_EARG;
}

const char *schedule_kind_name(SchedKind kind)
{
    return (int)kind >= 0 && (int)kind < N_KINDS ? kind_names[kind] : "?";
}

void schedule_init(Schedule *s, SchedKind kind, float base_lr, long total_steps, int warmup,
                   int step_size, float gamma, float min_lr, int patience, float factor)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->base_lr = base_lr;
    s->total_steps = total_steps;
    s->warmup = warmup > 0 ? warmup : 0;
    s->step_size = step_size;
    s->gamma = gamma;
    s->min_lr = min_lr;
    s->patience = patience > 0 ? patience : 0;
    s->factor = factor;
    s->best = INFINITY;
    s->bad_evals = 0;
    s->plateau_scale = 1.0f;
}

/* The schedule's value after warmup, before the min_lr floor. */
static double lr_after_warmup(const Schedule *s, long step)
{
    double base = s->base_lr;
    switch (s->kind) {
    case SCHED_CONSTANT:
        return base;
    case SCHED_STEP:
        return s->step_size > 0 ? base * pow(s->gamma, (double)(step / s->step_size)) : base;
    case SCHED_INVSQRT: {
        double w = s->warmup > 0 ? s->warmup : 1;
        return step <= w ? base : base * sqrt(w / (double)step);
    }
    case SCHED_COSINE:
    case SCHED_LINEAR: {
        long span = s->total_steps - s->warmup;
        if (span <= 0)
            return base;
        double progress = (double)(step - s->warmup) / (double)span;
        if (progress > 1)
            progress = 1;
        double min = s->min_lr;
        double left = s->kind == SCHED_COSINE ? 0.5 * (1.0 + cos(M_PI * progress)) : 1 - progress;
        return min + (base - min) * left;
    }
    case SCHED_PLATEAU:
        return base * s->plateau_scale;
    }
    return base;
}

float schedule_lr(const Schedule *s, long step)
{
    if (step < 0)
        step = 0;
    if (step < s->warmup)
        return (float)((double)s->base_lr * (double)(step + 1) / (double)s->warmup);
    double lr = lr_after_warmup(s, step);
    return (float)(lr < s->min_lr ? s->min_lr : lr);
}

void schedule_observe(Schedule *s, double val_loss)
{
    if (s->kind != SCHED_PLATEAU)
        return;
    if (val_loss < s->best * (1.0 - 1e-4)) {   /* false for NaN */
        s->best = val_loss;
        s->bad_evals = 0;
    } else {
        s->bad_evals++;
    }
    if (s->bad_evals <= s->patience)
        return;
    s->bad_evals = 0;
    double old_lr = (double)s->base_lr * s->plateau_scale;
    if (old_lr < s->min_lr)
        old_lr = s->min_lr;
    double new_lr = old_lr * s->factor;
    if (new_lr < s->min_lr)
        new_lr = s->min_lr;
    if (old_lr - new_lr > 1e-8 && s->base_lr > 0)   /* torch's eps: tiny changes are skipped */
        s->plateau_scale = (float)(new_lr / s->base_lr);
}
