/* runchanges.c — the settings a resume changed, read from the store's table of them (see
 * runchanges.h); the step budget is left out here. */
#include "runchanges.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

int runchanges_list(RunStore *st, long run, SettingChange **out, int *n, char *err)
{
    int status = runstore_setting_changes(st, run, out, n, err), k = 0;
    for (int i = 0; !status && i < *n; i++)
        if (strcmp((*out)[i].key, "steps")) (*out)[k++] = (*out)[i];
    if (!status) *n = k;
    if (!status && !k) {
        free(*out);
        *out = NULL;
    }
    return status;
}
