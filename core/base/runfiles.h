/* runfiles.h — the names of the files in a run folder (step-N, its optimizer file, best,
 * the recorder's journal), written and parsed in one place from runfiles.def. It lives in
 * core/base because the lowest layers that need it, core/train (writing checkpoints) and
 * core/store (deleting the files a run wrote), do not see each other. It knows names only:
 * which file holds what (best's step, a checkpoint's evaluation) is core/run's record
 * (runrecord.h), never read from a name. */
#ifndef LM_RUNFILES_H
#define LM_RUNFILES_H

#include <stddef.h>

typedef enum {
    RUNFILE_NONE = -1,   /* not a name lmlab writes in a run folder */
#define RUNFILE(kind, prefix, numbered, suffix) kind,
#include "runfiles.def"
#undef RUNFILE
} RunFileKind;

/* Writes dir/NAME (or NAME alone when dir is NULL or "") of a file of `kind` (step used
 * when the kind is numbered) into out. 0, or -1 when it did not fit (out then holds "")
 * or kind is unknown. */
int runfiles_path(char *out, size_t cap, const char *dir, RunFileKind kind, long step);

/* Which run file `name` is (a path: its last component counts): the kind, with *step set
 * to the step a numbered name carries (else -1) and *tmp to 1 when it is such a file with
 * ".tmp.PID" after it (a write a crash interrupted; never a checkpoint), else 0. step and
 * tmp may be NULL. RUNFILE_NONE for any other name, "step-x.safetensors" or
 * "step--5.safetensors" included. */
RunFileKind runfiles_parse(const char *name, long *step, int *tmp);

#endif
