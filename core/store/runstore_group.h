/* runstore_group.h — seed groups and per-store settings in the run store.
 * A group is a name shared by runs that repeat one configuration with different seeds
 * (`train EXP seeds=N`, a sweep with seeds=N per trial) or that the user puts together by
 * hand; the tables draw its curves as mean ± std and give mean ± std of its results.
 * Settings are small key/value texts a store keeps for its users (the runs table's
 * columns, sort, filter and marks), so a layout comes back next session.
 * Schema: versioned step 10 (RUNSTORE_GROUP_VERSION, run by the store's migration in its
 * one transaction like every other step): tables run_groups and store_settings and a
 * trigger that files a seeded sweep's trial runs under the sweep's group as the runner
 * records them (CREATE ... IF NOT EXISTS: a store that gained them before they were a
 * step keeps its rows). */
#ifndef LM_RUNSTORE_GROUP_H
#define LM_RUNSTORE_GROUP_H

#include "runstore.h"

#include <stddef.h>

#define RUNSTORE_GROUP_LEN 64   /* a group name, with its NUL */

/* Schema step RUNSTORE_GROUP_VERSION: creates run_groups, store_settings and the sweep
 * trial trigger (when missing) and sets user_version to that number, inside the caller's
 * transaction. Called only by the store's migration. LM_EDB/LM_EIO on failure. */
#define RUNSTORE_GROUP_VERSION 10
int runstore_group_migrate(RunStore *s, char *err);

/* 1 when name is a valid group name: 1..63 characters, no whitespace or comma. */
int runstore_group_name_ok(const char *name);

/* Puts the n runs ids into group name (replacing their old group); name NULL or ""
 * takes them out of any group. All or nothing. LM_EARG for a bad name or an unknown run
 * (naming it). */
int runstore_group_set(RunStore *s, const long *ids, int n, const char *name, char *err);

/* The group of run id into name (cap bytes; "" when none). */
int runstore_group_of(RunStore *s, long id, char *name, size_t cap, char *err);

/* The groups of n runs at once (names: n entries of RUNSTORE_GROUP_LEN; "" = none):
 * one query, for tables of many runs. */
int runstore_groups_of(RunStore *s, const long *ids, int n, char (*names)[RUNSTORE_GROUP_LEN],
                       char *err);

/* The member ids of group name in id order. *ids malloc'd (free()); NULL when *n = 0.
 * LM_EARG "no group NAME" when it has no member. */
int runstore_group_members(RunStore *s, const char *name, long **ids, int *n, char *err);

typedef struct {
    char name[RUNSTORE_GROUP_LEN];
    int n_runs;
} GroupRow;

/* Every group with its member count, by name. *rows malloc'd (free()). */
int runstore_groups(RunStore *s, GroupRow **rows, int *n, char *err);

/* A store setting into val (cap bytes). Returns LM_OK with *found 1, or LM_OK with
 * *found 0 and val "" when the key was never set. */
int runstore_setting_get(RunStore *s, const char *key, char *val, size_t cap, int *found,
                         char *err);

/* Sets a store setting (value NULL deletes it). Keys and values are plain text; the
 * callers name their keys "<who>.<what>" (e.g. "runs.columns"). */
int runstore_setting_set(RunStore *s, const char *key, const char *value, char *err);

#endif
