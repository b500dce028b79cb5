/* rundir.c — naming and creating a run's checkpoint folder (see rundir.h). */
#include "rundir.h"

#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *rundir_name(char *out, size_t cap, const char *runs_dir, const char *store_id,
                        long run_id)
{
    if (store_id && store_id[0])
        snprintf(out, cap, "%.400s/run-%ld-%.40s", runs_dir, run_id, store_id);
    else
        snprintf(out, cap, "%.400s/run-%ld", runs_dir, run_id);
    return out;
}

/* The parent folder of dir (one level), created when missing. */
static int make_parent(const char *dir, char *err)
{
    char parent[1024];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    if (!slash || slash == parent)
        return LM_OK;
    *slash = 0;
    if (mkdir(parent, 0777) && errno != EEXIST)
        return err_set(err, LM_EIO, "cannot create the runs folder %s: %s", parent,
                       strerror(errno));
    return LM_OK;
}

int rundir_create(const char *dir, char *err)
{
    int rc = make_parent(dir, err);
    if (rc)
        return rc;
    if (!mkdir(dir, 0777))
        return LM_OK;
    if (errno != EEXIST)
        return err_set(err, LM_EIO, "cannot create the run folder %s: %s", dir,
                       strerror(errno));
    DIR *d = opendir(dir);
    if (!d)
        return err_set(err, LM_EIO, "%s exists but cannot be read: %s", dir, strerror(errno));
    char found[256] = "";
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(found, sizeof found, "%s", e->d_name);
            break;
        }
    closedir(d);
    if (found[0])
        return err_set(err, LM_ESTATE, "the run folder %s already holds %s, which this run "
                       "did not write: move that folder aside or set runs_dir to another "
                       "folder", dir, found);
    return LM_OK;
}
