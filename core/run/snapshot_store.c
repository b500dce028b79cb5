/* snapshot_store.c — a run's Snapshot read from the run store instead of a recorder:
 * how the dashboard and `status` show a run another process trains (the store is the
 * channel between processes) or replay a finished one. Not live-only fields: the
 * streaming state of a sample, pending rows and messages stay empty. Also what reads or
 * frees any Snapshot (snapshot_message, snapshot_free). */
#include "recorder.h"
#include "runrecord.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The status a stored run shows as: its stored status, and "running"/"paused" whose
 * process is gone (or "interrupted") as stopped with *interrupted set and the reason
 * saying so. */
static int stored_status(RunStore *st, const RunRow *row, char *reason, size_t cap,
                         int *interrupted)
{
    *interrupted = 0;
    static const int all[] = {TRAINER_RUNNING, TRAINER_PAUSED, TRAINER_FINISHED,
                              TRAINER_STOPPED, TRAINER_DIVERGED, TRAINER_FAILED};
    snprintf(reason, cap, "%s", row->reason);
    int live = runstore_run_live(st, row);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(row->status, recorder_status_name(all[i])) &&
            (live || trainer_is_done(all[i])))
            return all[i];
    *interrupted = 1;
    if (!row->reason[0] || !strcmp(row->status, "running") || !strcmp(row->status, "paused"))
        snprintf(reason, cap, "%s: its process (pid %ld on %s) is gone",
                 strcmp(row->status, "interrupted") ? "interrupted" : row->status, row->pid,
                 row->host);
    return TRAINER_STOPPED;
}

/* Replaces *dst (n, cap) with pts (n points), averaged down to at most max points. */
static void take_series(SeriesPoint **dst, int *dn, int *dcap, SeriesPoint *pts, int n, int max)
{
    int k = 1;
    while (n / k > max)
        k *= 2;
    if (k > 1) {
        int h = 0;
        for (int i = 0; i < n; i += k, h++) {
            int e = i + k < n ? i + k : n;
            double sum = 0;
            for (int j = i; j < e; j++)
                sum += pts[j].value;
            pts[h] = (SeriesPoint){pts[e - 1].step, sum / (e - i)};
        }
        n = h;
    }
    free(*dst);
    *dst = pts;
    *dn = n;
    *dcap = n;
}

/* Curves, evaluations, gates and the newest sample. */
static int load_rows(RunStore *st, long run, Snapshot *d, char *err)
{
    SeriesPoint *p;
    int n, rc = runstore_series(st, run, "loss", &p, &n, err);
    if (rc) return rc;
    take_series(&d->loss, &d->n_loss, &d->cap_loss, p, n, SNAP_MAX_LOSS);
    if ((rc = runstore_series(st, run, "val_loss", &p, &n, err))) return rc;
    take_series(&d->val, &d->n_val, &d->cap_val, p, n, 1 << 30);
    if (d->n_val) {
        const SeriesPoint *v = &d->val[d->n_val - 1];
        d->last_eval = (EvalMetric){.step = v->step, .split = "valid", .loss = v->value,
                                    .ppl = exp(v->value), .bpc = NAN};
    }
    GateStat *g;
    if ((rc = runstore_gates_at(st, run, -1, &g, &n, err))) return rc;
    d->n_gates = n < SNAP_MAX_GATES ? n : SNAP_MAX_GATES;
    d->gate_layers = d->gate_levels = 0;
    for (int i = 0; i < d->n_gates; i++) {
        d->gates[i] = g[i];
        if (g[i].layer + 1 > d->gate_layers) d->gate_layers = g[i].layer + 1;
        if (g[i].level + 1 > d->gate_levels) d->gate_levels = g[i].level + 1;
    }
    free(g);
    SampleRow *s;
    if ((rc = runstore_samples(st, run, &s, &n, err))) return rc;
    d->sample[0] = 0;
    d->sample_step = 0;
    if (n) {
        snprintf(d->sample, sizeof d->sample, "%s", s[n - 1].text);
        d->sample_step = s[n - 1].step;
    }
    runstore_samples_free(s, n);
    return LM_OK;
}

int snapshot_from_store(RunStore *st, long run, Snapshot *dst, char *err)
{
    RunRow row;
    int rc = runstore_get(st, run, &row, err);
    if (rc) return rc;
    long old_step = dst->run_id == run ? dst->last.step : -1;
    int old_status = dst->status, old_val = dst->n_val;
    long old_sample = dst->sample_step, seq = dst->seq;
    dst->run_id = run;
    snprintf(dst->run_name, sizeof dst->run_name, "%s", row.name);
    config_defaults(&dst->cfg);
    char cerr[LM_ERR_LEN];
    config_from_text(&dst->cfg, row.config, cerr); /* an older file's unknown keys: skipped */
    dst->params = row.params;
    dst->status = stored_status(st, &row, dst->reason, sizeof dst->reason, &dst->interrupted);
    dst->best_val = row.best_val;
    rc = runstore_last_step(st, run, &dst->last, &dst->n_steps, err);
    if (!rc)
        rc = load_rows(st, run, dst, err);
    long total = dst->cfg.steps > 0 ? dst->cfg.steps : 0;
    dst->total_steps = total > dst->last.step ? total : dst->last.step;
    if (dst->n_steps)
        dst->recent[(dst->n_steps - 1) % SNAP_RECENT_STEPS] = dst->last;
    dst->sample_live = 0;
    dst->pending_rows = dst->unrecorded = 0;
    memset(&dst->origin, 0, sizeof dst->origin);
    dst->fork_of = 0;
    RunWork w;   /* a fork's own work begins at its parent's counters of the fork step */
    char werr[LM_ERR_LEN];
    if (!rc && (row.parent_run > 0 || row.parent_step > 0) && !row.parent_init && dst->n_steps &&
        runrecord_work(st, &row, &w, werr) == LM_OK && w.from_step > 0) {
        dst->fork_of = row.parent_run > 0 ? row.parent_run : -1;   /* -1: deleted */
        dst->origin.step = w.from_step;
        dst->origin.tokens = dst->last.tokens - w.tokens;
        dst->origin.elapsed = dst->last.elapsed - w.seconds;
    }
    runstore_row_free(&row);
    if (old_step != dst->last.step || old_status != dst->status || old_val != dst->n_val ||
        old_sample != dst->sample_step)
        dst->seq = seq + 1;
    return rc;
}

void snapshot_own_work(const Snapshot *sn, double *seconds, double *tokens_per_s)
{
    const StepMetric *from = sn->fork_of ? &sn->origin : &(StepMetric){0};
    *seconds = sn->last.elapsed - from->elapsed;
    *tokens_per_s = *seconds > 0 ? (double)(sn->last.tokens - from->tokens) / *seconds : 0;
}

const char *snapshot_status_name(const Snapshot *sn)
{
    return sn->interrupted && sn->status == TRAINER_STOPPED ? "interrupted"
                                                            : recorder_status_name(sn->status);
}

void snapshot_free(Snapshot *s)
{
    free(s->loss);
    free(s->val);
    s->loss = s->val = NULL;
    s->n_loss = s->n_val = s->cap_loss = s->cap_val = 0;
}

const char *snapshot_message(const Snapshot *s, long k)
{
    if (k < 1 || k > s->message_seq || k <= s->message_seq - SNAP_MESSAGES)
        return NULL;
    return s->messages[k % SNAP_MESSAGES];
}
