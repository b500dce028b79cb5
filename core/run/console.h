/* console.h — the lines a run's console keeps (runstore_console_append): what the run's
 * events say, worded as the prompt prints them (progress, evaluations, samples, warnings,
 * errors, checkpoints, the end). Progress lines are kept at most every
 * CONSOLE_PROGRESS_EVERY seconds (the store keeps every step anyway). Not the storing. */
#ifndef LM_CONSOLE_H
#define LM_CONSOLE_H

#include "trainer.h"

#include <stddef.h>

#define CONSOLE_PROGRESS_EVERY 2.0

typedef struct {
    double last_progress;  /* monotonic seconds of the last progress line (0: none) */
    long total_steps;
} ConsoleState;

/* Words event ev into buf (cap bytes) and its kind into kind (16 bytes): 1 when the
 * event makes a console line, 0 when not (gates, sample pieces, a progress line too soon
 * after the previous one). now: monotonic seconds. */
int console_line(ConsoleState *c, const TrainEvent *ev, double now, char *kind, char *buf,
                 size_t cap);

#endif
