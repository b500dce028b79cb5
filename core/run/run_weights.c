/* run_weights.c — a stored run's newest weights, written on request (see run_weights.h). */
#include "run_weights.h"

#include "err.h"
#include "runrecord.h"
#include "runstore_control.h"
#include "sysinfo.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int run_weights_newest(RunStore *st, long run, char *path, size_t cap, long *step, char *err)
{
    RunRow r;
    int rc = runstore_get(st, run, &r, err);
    if (rc)
        return rc;
    rc = runrecord_checkpoint_path(st, &r, "final", path, cap, step, err);
    runstore_row_free(&r);
    return rc;
}

int run_weights_request(RunStore *st, long run, double wait_s, char *path, size_t cap,
                        long *step, char *err)
{
    RunRow r;
    int rc = runstore_get(st, run, &r, err);
    if (rc)
        return rc;
    int live = runstore_run_live(st, &r);
    runstore_row_free(&r);
    if (!live)
        return err_set(err, LM_ESTATE, "run %ld has no live owner to write a checkpoint (it "
                       "is not training): its newest checkpoint is all there is", run);
    char e2[LM_ERR_LEN], was[16];
    long before = -1, req = 0;
    if (run_weights_newest(st, run, path, cap, &before, e2))
        before = -1;
    snprintf(was, sizeof was, "%ld", before);
    if ((rc = runstore_control_request(st, run, "checkpoint", &req, err)))
        return rc;
    double end = sysinfo_now() + wait_s;
    while (sysinfo_now() < end) {
        long now_step = -1;
        if (run_weights_newest(st, run, path, cap, &now_step, e2) == LM_OK &&
            now_step > before) {
            *step = now_step;
            return LM_OK;
        }
        RunControl c;
        if (runstore_control_get(st, req, &c, e2) == LM_OK && c.acknowledged_at > 0 &&
            !strstr(c.reply, "writes a checkpoint"))
            return err_set(err, LM_ESTATE, "run %ld: %s", run, c.reply);
        usleep(200000);
    }
    return err_set(err, LM_EPENDING, "run %ld's owner wrote no checkpoint within %.0f s of the "
                   "request (newest before: %s; request %ld stays until it reads the store)",
                   run, wait_s, before >= 0 ? was : "none", req);
}
