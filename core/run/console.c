/* console.c — a run's events worded as console lines (see console.h); the same words as
 * the prompt's printer (commands/cmd_train.c) so `log ID` reads like the terminal did.
 * A step's fields are the registry's step metrics with a console format (metrics.def). */
#include "console.h"
#include "series.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int console_line(ConsoleState *c, const TrainEvent *ev, double now, char *kind, char *buf,
                 size_t cap)
{
    const char *k = "info";
    char ppl[METRIC_PPL_TEXT];
    switch (ev->kind) {
    case TEV_STEP: {
        int last = c->total_steps > 0 && ev->step.step >= c->total_steps;
        if (c->last_progress > 0 && now - c->last_progress < CONSOLE_PROGRESS_EVERY && !last)
            return 0;
        c->last_progress = now;
        const StepMetric *m = &ev->step;
        size_t o = (size_t)snprintf(buf, cap, "step %6ld/%ld", m->step, c->total_steps);
        for (int i = 0; i < series_count() && o < cap; i++) {   /* the registry's console */
            const SeriesEntry *si = series_info(i);                 /* fields, in its order */
            if (si->step_index < 0 || !si->console[0]) continue;
            o += (size_t)snprintf(buf + o, cap - o, "  ");
            if (o < cap)
                o += (size_t)snprintf(buf + o, cap - o, si->console,
                                      step_metric_get(m, si->step_index));
        }
        k = "progress";
        break;
    }
    case TEV_EVAL:
        snprintf(buf, cap, "step %ld  %s loss %.4f  ppl %s", ev->eval.step, ev->eval.split,
                 ev->eval.loss, metric_ppl_text(ev->eval.ppl, ppl));
        k = "eval";
        break;
    case TEV_SAMPLE:
        snprintf(buf, cap, "sample at step %ld:\n%s", ev->at_step, ev->text ? ev->text : "");
        k = "sample";
        break;
    case TEV_CHECKPOINT:
        snprintf(buf, cap, "checkpoint step %ld %s", ev->ckpt.step, ev->ckpt.path);
        break;
    case TEV_LOG:
        snprintf(buf, cap, "%s", ev->text ? ev->text : "");
        k = ev->text && (strstr(ev->text, "error") || strstr(ev->text, "failed"))
                ? "error" : "warning";
        break;
    case TEV_STATUS: {
        const char *why = ev->text && ev->text[0] ? ev->text : "";
        if (ev->status == TRAINER_EVALUATING && *why) {   /* a whole split's progress */
            if (c->last_progress > 0 && now - c->last_progress < CONSOLE_PROGRESS_EVERY)
                return 0;
            c->last_progress = now;
            snprintf(buf, cap, "%s", why);
            k = "progress";
            break;
        }
        if (ev->status == TRAINER_EVALUATING || ev->status == TRAINER_IDLE ||
            (ev->status == TRAINER_RUNNING && !*why))   /* back from an evaluation */
            return 0;
        snprintf(buf, cap, "%s%s%s", trainer_status_name((TrainerStatus)ev->status),
                 *why ? ": " : "", why);
        k = ev->status == TRAINER_FAILED || ev->status == TRAINER_DIVERGED ? "error" : "status";
        break;
    }
    default:
        return 0;
    }
    snprintf(kind, 16, "%s", k);
    return 1;
}
