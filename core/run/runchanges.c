/* runchanges.c — the settings a resume changed, parsed from run_launch's notes (see
 * runchanges.h). A note of another shape is not a change and is skipped. */
#include "runchanges.h"
#include "runstore_notes.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends the changes of one note "resumed at step S with k=v (was w), ..." */
static int parse_note(const char *text, SettingChange **out, int *n, int *cap)
{
    long step;
    int used = 0;
    if (sscanf(text, "resumed at step %ld with %n", &step, &used) != 1 || used == 0)
        return LM_OK;
    for (const char *p = text + used; *p;) {
        const char *eq = strchr(p, '='), *was = eq ? strstr(eq, " (was ") : NULL;
        const char *close = was ? strchr(was + 6, ')') : NULL;
        if (!close) break;
        SettingChange c = {.step = step};
        snprintf(c.key, sizeof c.key, "%.*s", (int)(eq - p), p);
        snprintf(c.to, sizeof c.to, "%.*s", (int)(was - eq - 1), eq + 1);
        snprintf(c.from, sizeof c.from, "%.*s", (int)(close - was - 6), was + 6);
        if (strcmp(c.key, "steps")) {
            if (*n == *cap) {
                SettingChange *m = realloc(*out, (size_t)(*cap = *cap ? 2 * *cap : 8) * sizeof *m);
                if (!m) return LM_ENOMEM;
                *out = m;
            }
            (*out)[(*n)++] = c;
        }
        p = close + 1;
        if (!strncmp(p, ", ", 2)) p += 2;
        else break;
    }
    return LM_OK;
}

int runchanges_list(RunStore *st, long run, SettingChange **out, int *n, char *err)
{
    NoteRow *nt = NULL;
    int k = 0, cap = 0, status = runstore_notes(st, run, 0, &nt, &k, err);
    *out = NULL;
    *n = 0;
    for (int i = 0; i < k && !status; i++)
        if (parse_note(nt[i].text, out, n, &cap))
            status = err_set(err, LM_ENOMEM, "out of memory reading run %ld's settings", run);
    runstore_notes_free(nt, k);
    if (status) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return status;
}
