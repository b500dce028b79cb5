/* cmd_jobs.c — the jobs board as a command (`jobs`: every running or paused run of the
 * store, from any process on any host). Controlling a run by id (`pause ID`, ...) is
 * job.c's. Not the dashboard's board (ui/view_jobs.c). */
#include "session.h"
#include "cmd_jobs.h"

#include "alerts.h"
#include "output.h"
#include "jsonval.h"
#include "runstore_control.h"
#include "runstore_jobs.h"
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static json_t *job_json(const JobRow *j)
{
    json_t *o = json_object(), *sp = json_array();
    for (int i = 0; i < j->n_spark; i++)
        json_array_append_new(sp, jsonval_num(j->spark[i]));
    json_object_set_new(o, "id", json_integer(j->run.id));
    json_object_set_new(o, "name", jsonval_str(j->run.name));
    json_object_set_new(o, "host", jsonval_str(j->run.host));
    json_object_set_new(o, "pid", json_integer(j->run.pid));
    json_object_set_new(o, "state", json_string(runstore_job_state_name(j->state)));
    json_object_set_new(o, "step", json_integer(j->last.step));
    json_object_set_new(o, "total_steps", j->total_steps ? json_integer(j->total_steps)
                                                         : json_null());
    json_object_set_new(o, "loss", j->last.step ? jsonval_num(j->last.loss) : json_null());
    json_object_set_new(o, "val_loss", jsonval_num(j->run.final_val));
    json_object_set_new(o, "tokens_per_s", j->last.step ? jsonval_num(j->last.tokens_per_s)
                                                        : json_null());
    json_object_set_new(o, "eta_s", jsonval_num(j->eta));
    json_object_set_new(o, "heartbeat_age_s", jsonval_num(j->age));
    json_object_set_new(o, "no_step_for_s", j->quiet ? jsonval_num(j->age) : json_null());
    json_object_set_new(o, "sweep", j->run.sweep_id ? json_integer(j->run.sweep_id) : json_null());
    json_object_set_new(o, "losses", sp);
    return o;
}

/* One text line of the board (j NULL: the header); the sparkline: the newest 16 losses. */
static void job_line(Session *s, const JobRow *j)
{
    if (!j) {
        session_printf(s, "%-5s %-18s %-20s %11s %7s %7s %-16s %7s %6s  %s", "id", "name",
                       "host/pid", "step/total", "loss", "val", "loss trend", "tok/s", "ETA",
                       "state");
        return;
    }
    char who[96], step[32], loss[16] = "-", val[16] = "-", tps[16] = "-", eta[16], spark[160];
    snprintf(who, sizeof who, "%.12s/%ld", j->run.host, j->run.pid);
    if (j->total_steps) snprintf(step, sizeof step, "%ld/%ld", j->last.step, j->total_steps);
    else snprintf(step, sizeof step, "%ld/?", j->last.step);
    if (j->last.step) {
        snprintf(loss, sizeof loss, "%.4f", j->last.loss);
        snprintf(tps, sizeof tps, "%.0f", j->last.tokens_per_s);
    }
    if (isfinite(j->run.final_val)) snprintf(val, sizeof val, "%.4f", j->run.final_val);
    session_fmt_duration(eta, sizeof eta, j->state == JOB_RUNNING ? j->eta : NAN);
    const float *tail = j->spark + (j->n_spark > 16 ? j->n_spark - 16 : 0);
    output_sparkline(tail, j->n_spark > 16 ? 16 : j->n_spark, 1, spark, sizeof spark);
    int pad = 16 - (j->n_spark > 16 ? 16 : j->n_spark);   /* block chars are one column */
    char state[48];
    if (j->quiet)   /* a frozen or hung owner: what the board says instead of running */
        snprintf(state, sizeof state, "no step for %.0f s", j->age);
    else
        snprintf(state, sizeof state, "%s", runstore_job_state_name(j->state));
    session_printf(s, "#%-4ld %-18.18s %-20.20s %11s %7s %7s %s%*s %7s %6s  %s", j->run.id,
                   j->run.name, who, step, loss, val, spark, pad, "", tps, eta, state);
}

/* An alert this process saw first and fired (alerts_watch_judge's callback). */
static void seen_alert(void *ud, long run, const char *rule, const char *msg)
{
    Session *s = ud;
    Output *o = output_create("alert");
    output_int(o, "run", run);
    output_str(o, "rule", rule);
    output_str(o, "message", msg);
    output_line(o, "alert: run #{run} {rule} fired: {message}");
    output_emit(s, o);
}

/* `watch [seconds=N]`: judges the rules no owner can judge (a frozen or dead owner's
 * stalled and ended) every second until Ctrl-C or N seconds, and says each that fires. */
int cmd_watch(Session *s, int argc, const LexWord *argv)
{
    double seconds = 0;
    for (int i = 1; i < argc; i++) {
        char *e = NULL;
        if (argv[i].key && !strcmp(argv[i].key, "seconds"))
            seconds = strtod(argv[i].value, &e);
        if (!argv[i].key || strcmp(argv[i].key, "seconds") || !e || *e || !(seconds > 0))
            return session_error(s, LM_EARG, "watch takes seconds=N (N > 0; default: until "
                                 "Ctrl-C), got '%s'", argv[i].text);
    }
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    if (!s->json)
        session_printf(s, "watching %s for stalled and ended runs%s (Ctrl-C stops)",
                       runstore_path(st), seconds > 0 ? " for the given seconds" : "");
    double end = seconds > 0 ? sysinfo_now() + seconds : INFINITY;
    char err[LM_ERR_LEN];
    s->interrupt = 0;
    while (!s->interrupt && sysinfo_now() < end) {
        alerts_watch_judge(st, s->db_path, "watch", seen_alert, s);
        runstore_reap_dead(st, err);   /* after judging: a dead owner's run ends here */
        usleep(500000);
    }
    return LM_OK;
}

int cmd_jobs(Session *s, int argc, const LexWord *argv)
{
    if (argc > 1)
        return session_error(s, LM_EARG, "jobs takes no arguments (`jobs` lists every running "
                             "or paused run; `--json jobs` as JSON); got '%s'",
                             argv[1].text ? argv[1].text : argv[1].key);
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    JobRow *j = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    alerts_watch_judge(st, s->db_path, "jobs", seen_alert, s);   /* what no owner can say */
    int rc = runstore_jobs(st, &j, &n, err);
    if (rc) return session_error(s, rc, "%s", err);
    if (s->json) {
        for (int i = 0; i < n; i++) session_emit_json(s, job_json(&j[i]));
    } else if (n == 0) {
        session_printf(s, "no run is training in %s (`runs` lists every run)", runstore_path(st));
    } else {
        job_line(s, NULL);
        for (int i = 0; i < n; i++) job_line(s, &j[i]);
    }
    runstore_jobs_free(j, n);
    return LM_OK;
}
