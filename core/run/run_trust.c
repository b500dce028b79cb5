/* run_trust.c — a resumed run's settings checked against its own checkpoint (see
 * run_trust.h). */
#include "run_trust.h"
#include "checkpoint.h"
#include "err.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The settings that name files lmlab reads or writes when it resumes a run. */
static const char *const PATH_KEYS[] = {"data", "vocab", "runs_dir", NULL};

static int given_key(const char *const *given, const char *key)
{
    for (int i = 0; given && given[i]; i++)
        if (!strcmp(given[i], key)) return 1;
    return 0;
}

int run_trust_settings(const char *ckpt, const Config *cfg, const char *const *given,
                       char *err)
{
    if (!ckpt || !ckpt[0]) return LM_OK;
    struct stat sb;
    if (stat(ckpt, &sb)) return LM_OK;   /* missing: the resume itself says so */
    if (sb.st_uid != geteuid())
        return err_set(err, LM_EARG, "the checkpoint %s belongs to uid %ld, not to you (uid"
                       " %ld): this run's stored settings may have been written by anyone who"
                       " can write the store, and would read and write files as you; resume"
                       " only your own runs, or start a new run from it with init_from",
                       ckpt, (long)sb.st_uid, (long)geteuid());
    CheckpointInfo info;
    SafeTensors *st = NULL;
    char e2[LM_ERR_LEN];
    if (checkpoint_open(ckpt, &info, &st, e2)) return LM_OK;   /* the resume says why */
    int status = LM_OK;
    for (int k = 0; info.has_config && PATH_KEYS[k] && !status; k++) {
        char stored[1100], trained[1100];
        if (given_key(given, PATH_KEYS[k])) continue;
        config_get(cfg, PATH_KEYS[k], stored, sizeof stored);
        config_get(&info.cfg, PATH_KEYS[k], trained, sizeof trained);
        if (strcmp(stored, trained))
            status = err_set(err, LM_EARG, "the run's stored %s=%s is not what its checkpoint"
                             " %s was trained with (%s=%s): the store was changed after it was"
                             " written, perhaps by another user; refused — give %s= on the"
                             " command line to choose", PATH_KEYS[k], stored, ckpt,
                             PATH_KEYS[k], trained, PATH_KEYS[k]);
    }
    safetensors_close(st);
    checkpoint_info_free(&info);
    return status;
}
