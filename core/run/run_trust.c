/* run_trust.c — a resumed run's settings checked against its own checkpoint (see
 * run_trust.h). */
#include "run_trust.h"
#include "checkpoint.h"
#include "err.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The settings that name files or folders lmlab reads or writes when it trains with them
 * (the one list: resume, sweep trials and fork check these; every other setting is data). */
static const char *const PATH_KEYS[] = {"data", "vocab", "tokens_dir", "init_from", "runs_dir",
                                        NULL};

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

int run_trust_stored_paths(RunStore *st, long run, const char *config,
                           const char *const *given, const char *to_do, char *err)
{
    Config stored, dflt;
    char e2[LM_ERR_LEN], why[LM_ERR_LEN] = "";
    config_defaults(&stored);
    config_defaults(&dflt);
    if (config_from_text(&stored, config ? config : "", e2))
        return err_set(err, LM_EFORMAT, "run %ld's stored settings are unreadable: %s", run, e2);
    for (int k = 0, checked = 0; PATH_KEYS[k]; k++) {
        char v[1100], d[1100];
        if (given_key(given, PATH_KEYS[k])) continue;
        config_get(&stored, PATH_KEYS[k], v, sizeof v);
        config_get(&dflt, PATH_KEYS[k], d, sizeof d);
        if (!strcmp(v, d)) continue;   /* what lmlab would use anyway: nothing chosen */
        if (!checked++ && !runstore_run_config_trusted(st, run, config, why, sizeof why))
            return LM_OK;
        return err_set(err, LM_EARG, "run %ld's stored %s=%s was not written by you (%s):"
                       " give %s= on the command line to %s (settings that name no file are"
                       " taken from any run)", run, PATH_KEYS[k], v, why, PATH_KEYS[k], to_do);
    }
    return LM_OK;
}
