/* runchanges.h — what a run trained with from which step: the settings a resume changed,
 * as the store's table run_setting_changes holds them (runstore_changes.h; run_launch
 * writes them with the run's new settings). Not the writing (run_launch.c) nor their
 * wording on screen (commands/). */
#ifndef LM_RUNCHANGES_H
#define LM_RUNCHANGES_H

#include "runstore.h"
#include "runstore_changes.h"

/* step: the resume's step, from which the run trained with `to`; key, from, to whole */
typedef RunSettingChange SettingChange;

/* Every setting change of run, oldest first (*out malloc'd; NULL and 0 when none). The
 * step budget (steps=) is not a change of what the run trains with and is left out. */
int runchanges_list(RunStore *st, long run, SettingChange **out, int *n, char *err);

#endif
