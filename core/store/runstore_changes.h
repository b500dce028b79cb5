/* runstore_changes.h — what a run trained with from which step (issue 46 item 4): each
 * setting a resume changed, one row of the table run_setting_changes (schema step 13,
 * RUNSTORE_CHANGES_VERSION) with the step the resume started from, the key, the old and the
 * new value, written in the same transaction as the run's new settings. Stores made before
 * the table have their resume notes ("resumed at step S with k=v (was w), ...") parsed into
 * it once, by the migration (the only place that reads that wording). Not the notes, not
 * what is printed (core/run/runchanges.c, commands/cmd_log.c). */
#ifndef LM_RUNSTORE_CHANGES_H
#define LM_RUNSTORE_CHANGES_H

#include "runstore.h"

/* Schema step: creates run_setting_changes, fills it from the old resume notes and sets
 * user_version to that number, inside the caller's transaction. */
#define RUNSTORE_CHANGES_VERSION 13
int runstore_changes_migrate(RunStore *s, char *err);

typedef struct {
    long step;              /* the resume's step: from this step on the run trained with to */
    char key[48];
    char from[1100], to[1100]; /* the values whole ("unset": the key was not stored) */
} RunSettingChange;

/* A resume's new settings: run id's settings text becomes config (its writer's code
 * re-signed, runstore_run_config_sign), each of the n changes is recorded at `step`, and
 * the note (NULL: none) is added, all in one transaction (nothing of it on failure).
 * LM_EARG "no run N", or the store's error. */
int runstore_run_set_config(RunStore *s, long id, const char *config, long step,
                            const RunSettingChange *changes, int n, const char *note,
                            char *err);

/* Every recorded setting change of run, oldest first (*out malloc'd; NULL and 0 when
 * none). */
int runstore_setting_changes(RunStore *s, long run, RunSettingChange **out, int *n,
                             char *err);

#endif
