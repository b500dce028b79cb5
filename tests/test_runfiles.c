/* test_runfiles.c — a run folder's file names (runfiles.h): every kind written and parsed
 * back to the same kind and step, torn ".tmp.PID" writes told apart, names that only look
 * like lmlab's refused, a path's last component read, a name too long for its buffer. */
#include "check.h"
#include "runfiles.h"

#include <string.h>

int main(void)
{
    char p[256];
    long step = 0;
    int tmp = 0;
    CHECK(runfiles_path(p, sizeof p, "runs/run-1-ab", RUNFILE_STEP, 500) == 0 &&
          !strcmp(p, "runs/run-1-ab/step-00000500.safetensors"), "step: %s", p);
    CHECK(runfiles_path(p, sizeof p, "d", RUNFILE_OPTIM, 7) == 0 &&
          !strcmp(p, "d/step-00000007.optim.safetensors"), "optim: %s", p);
    CHECK(runfiles_path(p, sizeof p, "d", RUNFILE_BEST, 7) == 0 &&
          !strcmp(p, "d/best.safetensors"), "best: %s", p);
    CHECK(runfiles_path(p, sizeof p, "", RUNFILE_JOURNAL, 0) == 0 &&
          !strcmp(p, "unrecorded-rows.tsv"), "journal, no folder: %s", p);
    CHECK(runfiles_path(p, 10, "d", RUNFILE_STEP, 1) == -1 && p[0] == 0, "too long");
    CHECK(runfiles_path(p, sizeof p, "d", RUNFILE_NONE, 1) == -1, "no kind");

    const RunFileKind kinds[] = {RUNFILE_STEP, RUNFILE_OPTIM, RUNFILE_BEST, RUNFILE_JOURNAL};
    for (int i = 0; i < 4; i++) {   /* every kind reads back as itself */
        runfiles_path(p, sizeof p, "/x/y", kinds[i], 123456789);
        RunFileKind k = runfiles_parse(p, &step, &tmp);
        CHECK(k == kinds[i] && !tmp && step == (i < 2 ? 123456789 : -1),
              "%s: kind %d step %ld", p, (int)k, step);
        strcat(p, ".tmp.4242");
        CHECK(runfiles_parse(p, &step, &tmp) == kinds[i] && tmp, "%s: torn write", p);
    }
    CHECK(runfiles_parse("step-300.safetensors", &step, NULL) == RUNFILE_STEP && step == 300,
          "unpadded step");
    const char *not_ours[] = {"step-x.safetensors", "step--5.safetensors", "step-.safetensors",
                              "step-5.safetensors.tmp.", "step-5.safetensors.tmp.1x",
                              "best.safetensors.bak", "mybest.safetensors", "config.txt",
                              "step-5.optim.safetensorsx", "", "best"};
    for (size_t i = 0; i < sizeof not_ours / sizeof *not_ours; i++)
        CHECK(runfiles_parse(not_ours[i], &step, &tmp) == RUNFILE_NONE && step == -1,
              "'%s' is not a run file", not_ours[i]);
    CHECK(runfiles_parse(NULL, NULL, NULL) == RUNFILE_NONE, "NULL");
    return check_summary();
}
