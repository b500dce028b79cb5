/* runchanges.h — what a run trained with from which step: the settings a resume changed,
 * read back from the notes run_launch writes ("resumed at step S with K=V (was W), ...").
 * Not the writing of those notes (run_launch.c) nor their wording on screen (commands/). */
#ifndef LM_RUNCHANGES_H
#define LM_RUNCHANGES_H

#include "runstore.h"

typedef struct {
    long step;          /* the resume's step: from this step on, the run trained with to */
    char key[48], from[128], to[128];
} SettingChange;

/* Every setting change of run, oldest first (*out malloc'd; NULL and 0 when none). The
 * step budget (steps=) is not a change of what the run trains with and is left out. */
int runchanges_list(RunStore *st, long run, SettingChange **out, int *n, char *err);

#endif
