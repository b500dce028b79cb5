/* rundir.h — where a run's checkpoints live: the folder name carries the run id and the
 * store's identity (`<runs_dir>/run-<id>-<store_id>`), so two stores' run 1, or a run id
 * an old store handed out before, never share a folder; and a new run refuses a folder
 * that already holds files it did not write. Not the run store (no SQLite here) and not
 * the checkpoint format (checkpoint.h). */
#ifndef LM_RUNDIR_H
#define LM_RUNDIR_H

#include <stddef.h>

/* "<runs_dir>/run-<run_id>-<store_id>" into out (cap bytes); store_id NULL or "" gives
 * "<runs_dir>/run-<run_id>". Returns out. */
const char *rundir_name(char *out, size_t cap, const char *runs_dir, const char *store_id,
                        long run_id);

/* Creates the folder for a new run (and its parent, one level). LM_OK when it was created
 * or exists empty; LM_ESTATE naming a file when it already holds files (another run's:
 * a new run never writes next to them); LM_EIO when it cannot be created. */
int rundir_create(const char *dir, char *err);

#endif
