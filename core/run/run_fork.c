/* run_fork.c — finding a fork's checkpoint and the settings a fork keeps (see
 * run_fork.h). Checkpoint names are runfiles.h's; a write's leftover temporary file never
 * counts. */
#include "run_fork.h"

#include "runfiles.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The step of a checkpoint file name "step-N.safetensors" (runfiles.h), or -1. */
static long name_step(const char *name)
{
    long step;
    int tmp;
    return runfiles_parse(name, &step, &tmp) == RUNFILE_STEP && !tmp ? step : -1;
}

int run_fork_find(const char *dir, long step, char *path, size_t path_cap, char *steps,
                  size_t cap)
{
    if (!runfiles_path(path, path_cap, dir, RUNFILE_STEP, step) && dir[0] && step >= 0 &&
        access(path, R_OK) == 0)
        return 0;
    path[0] = 0;
    long have[4096];
    int n = 0;
    DIR *d = dir[0] ? opendir(dir) : NULL;
    if (dir[0] && !d && errno == ENOENT) {   /* not keep_checkpoints: the folder went */
        snprintf(steps, cap, "none: its folder %.300s is gone (deleted or moved outside "
                 "lmlab)", dir);
        return -1;
    }
    for (struct dirent *e; d && (e = readdir(d)) && n < 4096;)
        if ((have[n] = name_step(e->d_name)) >= 0)
            n++;
    if (d) closedir(d);
    qsort(have, (size_t)n, sizeof *have, cmp_long);
    size_t o = (size_t)snprintf(steps, cap, "%s", n ? "" : "none");
    for (int i = 0; i < n && o < cap; i++) {
        char one[32];
        int l = snprintf(one, sizeof one, "%s%ld", i ? ", " : "", have[i]);
        if (o + (size_t)l + 6 >= cap) {
            snprintf(steps + o, cap - o, ", ...");
            break;
        }
        memcpy(steps + o, one, (size_t)l + 1);
        o += (size_t)l;
    }
    return -1;
}

int run_fork_fixed_key(const char *key)
{
    /* data= may be given (a fork of a run whose stored paths are not the user's must name
     * it): the launch refuses data whose content hash is not the parent's */
    static const char *const FIXED[] = {"tokenizer", "vocab_size", "batch", "bptt",
                                        "batching", "train_frac"};
    for (size_t i = 0; i < sizeof FIXED / sizeof *FIXED; i++)
        if (!strcmp(key, FIXED[i]))
            return 1;
    return 0;
}
