/* runstore_rowsig.c — who wrote a sweep's spec and a run's settings (see runstore.h): the
 * code a row carries (column `mac`, as alerts.mac: added to stores made before it without a
 * schema step, so older binaries read and write the tables as before and what they wrote
 * carries no code) is usersig's HMAC under the user's key over the row's text bound to its
 * context (a tag, the store's identity, the row's id, and for a sweep its creation time), so a
 * writer of a shared store can neither plant a spec or settings nor move the user's own to
 * another sweep, run or store. One list of the signed tables, for the migration. Not the
 * crypto (core/base/usersig.c), not alerts' codes (runstore_alertsig.c), not what is
 * refused when a check fails (core/sweep/sweep_runner.c, commands/cmd_fork.c). */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "usersig.h"

#include <stdio.h>
#include <string.h>

/* The tables whose rows carry their writer's code. */
static const char *const SIGNED_TABLES[] = {"alerts", "sweeps", "runs", NULL};

static int have_column(RunStore *s, const char *table, int *table_there, int *col_there)
{
    sqlite3_stmt *st;
    if (prep(s, "SELECT (SELECT count(*) FROM pragma_table_info(?1)),"
             " (SELECT count(*) FROM pragma_table_info(?1) WHERE name='mac')", &st, NULL))
        return -1;
    bind_str(st, 1, table);
    int ok = sqlite3_step(st) == SQLITE_ROW;
    *table_there = ok && sqlite3_column_int(st, 0) > 0;
    *col_there = ok && sqlite3_column_int(st, 1) > 0;
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

int runstore_rowsig_migrate(RunStore *s, char *err)
{
    int status = LM_OK;
    for (int i = 0; SIGNED_TABLES[i] && !status; i++) {
        int table = 0, col = 0;
        if (have_column(s, SIGNED_TABLES[i], &table, &col))
            return err_set(err, LM_EDB, "%s: cannot read the %s table's columns", s->path,
                           SIGNED_TABLES[i]);
        if (table && !col) {
            char sql[96];
            snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN mac TEXT", SIGNED_TABLES[i]);
            status = exec_sql(s, sql, "adding the rows' codes", err);
        }
    }
    return status;
}

int runstore_rowsig_missing(RunStore *s)
{
    for (int i = 0; SIGNED_TABLES[i]; i++) {
        int table = 0, col = 0;
        if (!have_column(s, SIGNED_TABLES[i], &table, &col) && table && !col) return 1;
    }
    return 0;
}

/* ---- sweeps ------------------------------------------------------------------------------ */

static int sweep_fields(const RunStore *s, long id, const char *spec, double created,
                        const char *mac, char *out_mac, char *err)
{
    char sid[32], when[64];
    snprintf(sid, sizeof sid, "%ld", id);
    snprintf(when, sizeof when, "%a", created);
    const char *f[] = {"lmlab sweep spec v1", s->store_id, sid, spec, when};
    int n = (int)(sizeof f / sizeof *f);
    return out_mac ? usersig_sign(f, n, out_mac, err) : usersig_verify(f, n, mac, err);
}

int runstore_sweep_sign(RunStore *s, long id, const char *spec, double created, char *err)
{
    char mac[USERSIG_HEX_LEN];
    int status = sweep_fields(s, id, spec, created, NULL, mac, err);
    sqlite3_stmt *st;
    if (!status) status = prep(s, "UPDATE sweeps SET mac=? WHERE id=?", &st, err);
    if (status) return status;
    bind_str(st, 1, mac);
    sqlite3_bind_int64(st, 2, id);
    int changes = 0;
    status = write_stmt(s, st, "signing a sweep's spec", &changes, err);
    return !status && !changes ? err_set(err, LM_EARG, "no sweep %ld", id) : status;
}

int runstore_sweep_trusted(const RunStore *s, const SweepRow *row, char *why, size_t cap)
{
    char err[LM_ERR_LEN] = "";
    if (!sweep_fields(s, row->id, row->spec, row->created, row->mac, NULL, err)) return LM_OK;
    if (why) snprintf(why, cap, "%s", err);
    return LM_EARG;
}

int runstore_sweep_refusal(const RunStore *s, const SweepRow *row, char *msg, size_t cap)
{
    char why[LM_ERR_LEN];
    if (!runstore_sweep_trusted(s, row, why, sizeof why)) return LM_OK;
    snprintf(msg, cap, "sweep %ld's spec was not written by you: refused (%s); nothing"
             " trains from it. Read it with `sweep show %ld`, then re-create the sweep from"
             " your own experiment file, or `sweep trust %ld` to sign it as yours",
             row->id, why, row->id, row->id);
    return LM_EARG;
}

/* ---- runs' settings and folder ---------------------------------------------------------- */

static int run_fields(const RunStore *s, long id, const char *config, const char *dir,
                      const char *mac, char *out_mac, char *err)
{
    char rid[32];
    snprintf(rid, sizeof rid, "%ld", id);
    const char *f[] = {"lmlab run settings v1", s->store_id, rid, config, dir};
    int n = (int)(sizeof f / sizeof *f);
    return out_mac ? usersig_sign(f, n, out_mac, err) : usersig_verify(f, n, mac, err);
}

/* Run id's stored folder and code ("" when none); LM_EARG "there is no run N". */
static int run_dir_mac(RunStore *s, long id, char *dir, size_t dcap, char *mac, size_t mcap,
                       char *err)
{
    sqlite3_stmt *st;
    int status = prep(s, "SELECT coalesce(checkpoint_dir, ''), coalesce(mac, '') FROM runs"
                      " WHERE id=?", &st, err);
    if (status) return status;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        col_copy(st, 0, dir, dcap);
        col_copy(st, 1, mac, mcap);
    } else {
        status = rc == SQLITE_DONE ? err_set(err, LM_EARG, "there is no run %ld", id)
                                   : runstore_db_fail(s, rc, "reading a run's code", err);
    }
    sqlite3_finalize(st);
    return status;
}

int runstore_run_config_sign(RunStore *s, long id, const char *config, char *err)
{
    char mac[USERSIG_HEX_LEN], dir[1100], old[USERSIG_HEX_LEN];
    int status = run_dir_mac(s, id, dir, sizeof dir, old, sizeof old, err);
    if (!status) status = run_fields(s, id, config, dir, NULL, mac, err);
    sqlite3_stmt *st;
    if (!status) status = prep(s, "UPDATE runs SET mac=? WHERE id=?", &st, err);
    if (status) return status;
    bind_str(st, 1, mac);
    sqlite3_bind_int64(st, 2, id);
    return write_stmt(s, st, "signing a run's settings", NULL, err);
}

int runstore_run_config_trusted(RunStore *s, long id, const char *config, char *why,
                                size_t cap)
{
    char mac[USERSIG_HEX_LEN] = "", dir[1100], err[LM_ERR_LEN] = "";
    int status = run_dir_mac(s, id, dir, sizeof dir, mac, sizeof mac, err);
    if (!status) status = run_fields(s, id, config, dir, mac, NULL, err);
    if (status && why) snprintf(why, cap, "%s", err);
    return status ? LM_EARG : LM_OK;
}

int runstore_run_signed_config(RunStore *s, long id, char **config, char *why, size_t cap)
{
    sqlite3_stmt *st;
    *config = NULL;
    if (prep(s, "SELECT coalesce(config, '') FROM runs WHERE id=?", &st, NULL)) {
        if (why) snprintf(why, cap, "its record cannot be read");
        return LM_EDB;
    }
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) *config = col_dup(st, 0);
    sqlite3_finalize(st);
    if (!*config) {
        if (why) snprintf(why, cap, "its record cannot be read");
        return LM_EDB;
    }
    return runstore_run_config_trusted(s, id, *config, why, cap);
}
