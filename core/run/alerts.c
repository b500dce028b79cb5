/* alerts.c — checking a run's alert rules and starting their commands (see alerts.h).
 * posix_spawn(3) with an argv built here: the stored command is split into words, never
 * handed to /bin/sh, and the run's facts (name, status, losses: stored text) travel only
 * as environment values. */
#include "alerts.h"
#include "err.h"
#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void alerts_init(AlertEngine *e, long run, const char *run_name, const char *db_path)
{
    memset(e, 0, sizeof *e);
    e->run_id = run;
    snprintf(e->run_name, sizeof e->run_name, "%s", run_name ? run_name : "");
    snprintf(e->db_path, sizeof e->db_path, "%s", db_path ? db_path : "");
    const char *lim = getenv("LMLAB_ALERT_CMD_SECONDS");
    e->cmd_seconds = lim && atof(lim) > 0 ? atof(lim) : ALERTS_CMD_SECONDS;
}

int alerts_split(const char *cmd, char *buf, size_t cap, char **argv, int max, char *err)
{
    size_t o = 0;
    int n = 0;
    const char *p = cmd ? cmd : "";
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        if (n >= max - 1) {
            err_set(err, LM_EARG, "the alert's command has more than %d words", max - 1);
            return -1;
        }
        argv[n++] = buf + o;
        char q = 0;
        while (*p && (q || (*p != ' ' && *p != '\t'))) {
            if (!q && (*p == '\'' || *p == '"')) q = *p++;
            else if (q && *p == q) { q = 0; p++; }
            else {
                if (*p == '\\' && q != '\'' && p[1]) p++;
                if (o + 2 >= cap) {
                    err_set(err, LM_EARG, "the alert's command is too long");
                    return -1;
                }
                buf[o++] = *p++;
            }
        }
        if (q) {
            err_set(err, LM_EARG, "the alert's command has an unclosed %c quote", q);
            return -1;
        }
        buf[o++] = 0;
    }
    argv[n] = NULL;
    if (!n) err_set(err, LM_EARG, "the alert's command is empty");
    return n ? n : -1;
}

/* Starts argv[0] (found on PATH) with the parent's environment plus env (NULL-terminated
 * "KEY=value" strings, overriding). LM_OK with *pid, or LM_EIO with a message. */
static int alerts_spawn(char *const argv[], char *const env[], pid_t *pid, char *err)
{
    size_t n_env = 0, n_add = 0;
    while (environ && environ[n_env]) n_env++;
    while (env && env[n_add]) n_add++;
    char **all = calloc(n_env + n_add + 1, sizeof *all);
    if (!all) return err_set(err, LM_ENOMEM, "out of memory starting the alert's command");
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++) {   /* the parent's, minus what env overrides */
        size_t eq = strcspn(environ[i], "=");
        int over = 0;
        for (size_t j = 0; j < n_add && !over; j++)
            over = !strncmp(env[j], environ[i], eq + 1);
        if (!over) all[k++] = environ[i];
    }
    for (size_t j = 0; j < n_add; j++) all[k++] = env[j];
    all[k] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);   /* the command must not write on the dashboard */
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t at;   /* its own process group, so it can be ended whole */
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    int rc = posix_spawnp(pid, argv[0], &fa, &at, argv, all);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    free(all);
    if (rc)
        return err_set(err, LM_EIO, "cannot start %s: %s", argv[0], strerror(rc));
    return LM_OK;
}

/* The LMLAB_* facts of the run for the command's environment, into env (NULL-terminated;
 * strings in store, 12 x 640 bytes). */
static void facts_env(const AlertEngine *e, const AlertRow *a, const AlertFacts *f,
                      const char *msg, char store[][640], char **env)
{
    int n = 0;
    snprintf(store[n], 640, "LMLAB_RUN_ID=%ld", e->run_id), n++;
    snprintf(store[n], 640, "LMLAB_RUN_NAME=%s", e->run_name), n++;
    snprintf(store[n], 640, "LMLAB_ALERT_ID=%ld", a->id), n++;
    snprintf(store[n], 640, "LMLAB_ALERT_RULE=%s", a->rule), n++;
    snprintf(store[n], 640, "LMLAB_ALERT_MESSAGE=%s", msg), n++;
    snprintf(store[n], 640, "LMLAB_STATUS=%s", f->status ? f->status : ""), n++;
    snprintf(store[n], 640, "LMLAB_STEP=%ld", f->step), n++;
    snprintf(store[n], 640, "LMLAB_LOSS=%.6g", f->loss), n++;
    snprintf(store[n], 640, "LMLAB_VAL_LOSS=%.6g", f->val_loss), n++;
    snprintf(store[n], 640, "LMLAB_BEST_VAL=%.6g", f->best_val), n++;
    snprintf(store[n], 640, "LMLAB_DB=%.600s", e->db_path), n++;
    for (int i = 0; i < n; i++) env[i] = store[i];
    env[n] = NULL;
}

int alerts_command_allowed(const RunStore *st, const AlertRow *a, char *why, size_t cap)
{
    char e[LM_ERR_LEN];
    int rc = runstore_alert_trusted(st, a, e, sizeof e);
    if (rc == LM_OK) return 1;
    snprintf(why, cap, "%s: refused (%.330s)", rc == LM_EARG ? "not written by you"
                                                              : "not whole", e);
    return 0;
}

static void start_command(AlertEngine *e, RunStore *st, const AlertRow *a, const AlertFacts *f,
                          const char *msg, long event)
{
    char buf[RUNSTORE_ALERT_CMD_LEN + 8], err[LM_ERR_LEN], status[400];
    char *argv[ALERTS_ARGV_MAX], store[12][640], *env[13];
    pid_t pid = 0;
    facts_env(e, a, f, msg, store, env);
    if (!alerts_command_allowed(st, a, status, sizeof status)) {
        char line[600];
        snprintf(line, sizeof line, "alert %ld (%s): its command was not run — %s", a->id,
                 a->rule, status);
        runstore_console_append(st, e->run_id, "warning", line, err);
    } else if (e->n_kids >= ALERTS_MAX_KIDS)
        snprintf(status, sizeof status, "not started: %d alert commands still running",
                 ALERTS_MAX_KIDS);
    else if (alerts_split(a->cmd, buf, sizeof buf, argv, ALERTS_ARGV_MAX, err) < 0 ||
             alerts_spawn(argv, env, &pid, err))
        snprintf(status, sizeof status, "not started: %.100s", err);
    else {
        snprintf(status, sizeof status, "started (pid %ld)", (long)pid);
        e->kid[e->n_kids] = pid;
        e->kid_start[e->n_kids] = sysinfo_now();
        e->kid_event[e->n_kids++] = event;
    }
    runstore_alert_cmd_status(st, event, status, err);
}

/* Ends process group pg: TERM, then KILL after up to a second. 1 when it had members. */
static int end_group(pid_t pg)
{
    if (killpg(pg, SIGTERM) != 0) return 0;
    for (int i = 0; i < 20 && killpg(pg, 0) == 0; i++) {
        waitpid(pg, NULL, WNOHANG);   /* the leader, if it is ours and ended */
        usleep(50000);
    }
    killpg(pg, SIGKILL);
    return 1;
}

/* Reaps the commands that ended (block: waits for each), and ends those past their time
 * limit or, with kill_all, every one left; records each end. */
static void reap(AlertEngine *e, RunStore *st, int block, int kill_all)
{
    double now = sysinfo_now();
    for (int i = 0; i < e->n_kids;) {
        int ws = 0, killed = 0;
        pid_t r = waitpid(e->kid[i], &ws, block ? 0 : WNOHANG);
        if (r == 0 && (kill_all || now - e->kid_start[i] > e->cmd_seconds)) {
            end_group(e->kid[i]);
            r = waitpid(e->kid[i], &ws, 0);
            killed = 1;
        }
        if (r == 0) { i++; continue; }
        char status[400], err[LM_ERR_LEN];
        int left = !killed && end_group(e->kid[i]);   /* what it left in the background */
        if (killed && kill_all)
            snprintf(status, sizeof status, "ended with the run after %.0f s (still running)",
                     now - e->kid_start[i]);
        else if (killed)
            snprintf(status, sizeof status, "killed after %.0f s (time limit %.0f s)",
                     now - e->kid_start[i], e->cmd_seconds);
        else if (r < 0) snprintf(status, sizeof status, "ended (status unknown)");
        else if (WIFEXITED(ws)) snprintf(status, sizeof status, "exit %d", WEXITSTATUS(ws));
        else snprintf(status, sizeof status, "killed by signal %d", WTERMSIG(ws));
        if (left)
            snprintf(status + strlen(status), sizeof status - strlen(status),
                     "; what it left running was ended");
        if (st) runstore_alert_cmd_status(st, e->kid_event[i], status, err);
        e->kid[i] = e->kid[--e->n_kids];
        e->kid_event[i] = e->kid_event[e->n_kids];
        e->kid_start[i] = e->kid_start[e->n_kids];
    }
}

int alerts_poll(AlertEngine *e, RunStore *st, const AlertFacts *f, int force)
{
    double now = sysinfo_now();
    if (!st || (!force && now < e->next_poll)) return 0;
    e->next_poll = now + 1.0;
    reap(e, st, 0, 0);
    AlertRow *a = NULL;
    int n = 0, fired_n = 0;
    char err[LM_ERR_LEN];
    if (runstore_alerts(st, e->run_id, &a, &n, err)) return 0;
    for (int i = 0; i < n; i++) {
        AlertRule r;
        char msg[300];
        if (alertrule_parse(a[i].rule, &r, NULL, 0, err) || !alertrule_fires(&r, f, msg, sizeof msg))
            continue;
        fired_n += alerts_fire(e, st, &a[i], f, msg, "");
    }
    free(a);
    return fired_n;
}

int alerts_fire(AlertEngine *e, RunStore *st, const AlertRow *a, const AlertFacts *f,
                const char *msg, const char *judge)
{
    int fired = 0;
    long event = 0;
    char err[LM_ERR_LEN], line[RUNSTORE_CONSOLE_LINE_MAX];
    if (runstore_alert_fire(st, a->id, e->run_id, a->rule, msg, &fired, &event, err) || !fired)
        return 0;
    /* the run's console has it (`log ID`, the owner's terminal reads it back) */
    snprintf(line, sizeof line, "alert %.60s fired: %.300s%s%.200s%s", a->rule, msg,
             judge[0] ? " (seen by " : "", judge, judge[0] ? ")" : "");
    runstore_console_append(st, e->run_id, "alert", line, err);
    if (a->cmd[0]) start_command(e, st, a, f, msg, event);
    return 1;
}

void alerts_finish(AlertEngine *e, RunStore *st, double seconds)
{
    double end = sysinfo_now() + seconds;
    while (e->n_kids && sysinfo_now() < end) {
        reap(e, st, 0, 0);
        if (e->n_kids) usleep(50000);
    }
    reap(e, st, 0, 1);   /* none outlives its run */
}
