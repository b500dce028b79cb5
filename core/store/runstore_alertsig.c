/* runstore_alertsig.c — who wrote an alert's command (see runstore_notes.h): the code an
 * alert row carries (column `mac`, added by runstore_rowsig.c to stores made before it
 * without a schema step: older binaries read and write the table as before, and their
 * commands are refused) is
 * usersig's HMAC over the row's full content bound to its context, so a writer of a shared
 * store can neither plant a command nor move one of yours to another run, rule or store.
 * Not the crypto (core/base/usersig.c) nor the firing (core/run/alerts.c). */
#include "runstore_notes.h"
#include "private/runstore_impl.h"
#include "usersig.h"

#include <stdio.h>
#include <string.h>

/* The signed fields of a row: a tag, the store's identity, the ids, the texts and the
 * creation time (hex float, exact). */
static int row_sign_or_verify(const RunStore *s, const AlertRow *a, const char *mac,
                              char *out_mac, char *err)
{
    char id[32], run[32], sweep[32], created[64];
    snprintf(id, sizeof id, "%ld", a->id);
    snprintf(run, sizeof run, "%ld", a->run_id);
    snprintf(sweep, sizeof sweep, "%ld", a->sweep_id);
    snprintf(created, sizeof created, "%a", a->created);
    const char *f[] = {"lmlab alert command v1", s->store_id, id, run, sweep, a->rule, a->cmd,
                       a->origin, created};
    int n = (int)(sizeof f / sizeof *f);
    return out_mac ? usersig_sign(f, n, out_mac, err) : usersig_verify(f, n, mac, err);
}

int runstore_alert_sign(const RunStore *s, AlertRow *a, char *err)
{
    return row_sign_or_verify(s, a, NULL, a->mac, err);
}

int runstore_alert_trusted(const RunStore *s, const AlertRow *a, char *why, size_t cap)
{
    char err[LM_ERR_LEN] = "", len[160] = "";
    int forged = row_sign_or_verify(s, a, a->mac, NULL, err) != LM_OK;
    if (a->cmd_bytes >= RUNSTORE_ALERT_CMD_LEN)
        snprintf(len, sizeof len, "its stored command is %ld bytes, over the %d a command may"
                 " have", a->cmd_bytes, RUNSTORE_ALERT_CMD_LEN - 1);
    else if (a->cmd_bytes != (long)strlen(a->cmd))
        snprintf(len, sizeof len, "its stored command holds a NUL byte");
    if (!forged && !len[0]) return LM_OK;
    if (why) snprintf(why, cap, "%s%s%s", forged ? err : "", forged && len[0] ? "; " : "", len);
    return forged ? LM_EARG : LM_EFORMAT;
}
