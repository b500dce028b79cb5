/* alerts_watch.c — the alert rules judged from outside the run's owner (see alerts.h:
 * alerts_watch_judge): a frozen (SIGSTOP), hung or dead owner cannot say its run stalled
 * or ended, so any lmlab process with the store open (`jobs`, `log follow`, the dashboard,
 * `watch`) judges `stalled` on the owner's silence and `ended` on its death, and the
 * store's one row per (rule, run) makes whoever sees it first the one that fires it. Not
 * the rules (alertrule.h), nor the metric rules, which only the owner sees change. */
#include "alerts.h"

#include "err.h"
#include "runstore_jobs.h"
#include "runstore_row.h"
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Run j's facts as the store has them: status "running" with the owner's silence as the
 * time since its last step, or "interrupted" when its owner is gone. */
static void store_facts(RunStore *st, const JobRow *j, AlertFacts *f, int *gone)
{
    memset(f, 0, sizeof *f);
    *gone = !runstore_run_live(st, &j->run);
    f->status = *gone ? "interrupted" : j->run.status;
    f->step = j->last.step ? j->last.step : j->run.last_step;
    f->loss = j->last.step ? j->last.loss : NAN;
    f->val_loss = j->run.final_val;
    f->best_val = j->run.best_val;
    /* the owner writes step rows and a heartbeat at least every 30 s while it lives and
       runs: its silence is at most the time since its last logged step */
    f->since_step = isfinite(j->age) ? j->age : INFINITY;
}

/* Judges run r's rules of kind `kind` against f and fires those that fire; the count. */
static int judge_run(RunStore *st, const char *db_path, const RunRow *r, AlertFacts *f,
                     AlertKind kind, const char *tail, const char *judge, AlertsSeen cb,
                     void *ud)
{
    AlertRow *a = NULL;
    int na = 0, fired_n = 0;
    char err[LM_ERR_LEN];
    if (runstore_alerts(st, r->id, &a, &na, err))
        return 0;
    AlertEngine e;
    alerts_init(&e, r->id, r->name, db_path);
    for (int k = 0; k < na; k++) {
        AlertRule rule;
        char msg[400];
        if (alertrule_parse(a[k].rule, &rule, NULL, 0, err) || rule.kind != kind ||
            !alertrule_fires(&rule, f, msg, sizeof msg - 120))
            continue;
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof msg - l, "%s", tail);
        if (alerts_fire(&e, st, &a[k], f, msg, judge)) {
            fired_n++;
            if (cb)
                cb(ud, r->id, a[k].rule, msg);
        }
    }
    free(a);
    return fired_n;
}

int alerts_watch_judge(RunStore *st, const char *db_path, const char *who, AlertsSeen cb,
                       void *ud)
{
    JobRow *jobs = NULL;
    RunRow *ended = NULL;
    int nj = 0, ne = 0, fired_n = 0;
    char err[LM_ERR_LEN], judge[96], tail[120];
    if (!st)
        return 0;
    snprintf(judge, sizeof judge, "pid %ld, %.60s", (long)getpid(), who ? who : "lmlab");
    if (runstore_jobs(st, &jobs, &nj, err) == LM_OK)
        for (int i = 0; i < nj; i++) {
            if (jobs[i].run.pid == (long)getpid())   /* its own recorder judges its runs */
                continue;
            AlertFacts f;
            int gone;
            store_facts(st, &jobs[i], &f, &gone);
            if (gone)
                snprintf(tail, sizeof tail, ": its process (pid %ld) is gone", jobs[i].run.pid);
            else
                snprintf(tail, sizeof tail, "; no word from its process (pid %ld) for %.0f s",
                         jobs[i].run.pid, f.since_step);
            fired_n += judge_run(st, db_path, &jobs[i].run, &f, gone ? ALERT_ENDED
                                 : ALERT_STALLED, tail, judge, cb, ud);
        }
    runstore_jobs_free(jobs, nj);
    /* opening the store marks a dead owner's run interrupted at once: those of the last
       RUNSTORE_STALE_SECONDS still owe their `ended` alert */
    if (runstore_list(st, "status=interrupted", "recent", 64, &ended, &ne, err) == LM_OK)
        for (int i = 0; i < ne; i++) {
            if (!(ended[i].ended > sysinfo_wall() - RUNSTORE_STALE_SECONDS))
                continue;
            AlertFacts f = {.status = "interrupted", .step = ended[i].last_step,
                            .loss = NAN, .val_loss = ended[i].final_val,
                            .best_val = ended[i].best_val};
            snprintf(tail, sizeof tail, ": its process (pid %ld) is gone", ended[i].pid);
            fired_n += judge_run(st, db_path, &ended[i], &f, ALERT_ENDED, tail, judge, cb, ud);
        }
    runstore_rows_free(ended, ne);
    return fired_n;
}
