/* runrecord.c — a stored run's record as it truly is (runrecord.h): its checkpoint files
 * each with its own evaluation, its best as its own record, lineage, group, precision and
 * owner. Moved down from commands/runfacts.c so every screen and export asks one layer. */
#include "runrecord.h"
#include "runchanges.h"
#include "safetext.h"
#include "series.h"

#include "checkpoint.h"
#include "err.h"
#include "runfiles.h"
#include "runstore_row.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static RunEval eval_at(const SeriesPoint *v, int nv, long step, long batches, long whole_step)
{
    RunEval e = {step, NAN, 0, batches};
    for (int i = 0; i < nv; i++)
        if (v[i].step == step) {
            e.loss = v[i].value;
            e.whole = batches == 0 || step == whole_step;
        }
    return e;
}

/* Puts the last entry of f->ckpts at its place in step order (after files of its step). */
static void sort_last(RunRecord *f)
{
    for (int i = f->n_ckpts - 1; i > 0 && f->ckpts[i - 1].step > f->ckpts[i].step; i--) {
        RunCkpt tmp = f->ckpts[i - 1];
        f->ckpts[i - 1] = f->ckpts[i];
        f->ckpts[i] = tmp;
    }
}

/* The run's best file: its own record (path and the step of the weights it holds), else
 * best.safetensors in the run's folder with the step its own metadata records (a store
 * that lost the record). Sets f->best_step; nothing when the file does not exist. */
static void add_best_file(RunRecord *f, const RunRow *r, const CheckpointRecord *rec,
                          int found, const SeriesPoint *v, int nv, long batches,
                          long whole_step)
{
    char path[1024];
    long step = found ? rec->step : -1;
    if (found && rec->path[0])
        snprintf(path, sizeof path, "%s", rec->path);
    else if (!r->checkpoint_dir[0] ||
             runfiles_path(path, sizeof path, r->checkpoint_dir, RUNFILE_BEST, 0))
        return;
    if (!is_file(path))
        return;
    if (step < 0) {
        CheckpointInfo info;
        SafeTensors *st = NULL;
        char err[LM_ERR_LEN];
        if (checkpoint_open(path, &info, &st, err))
            return;
        step = info.has_state ? info.ts.step : -1;
        safetensors_close(st);
        checkpoint_info_free(&info);
        if (step < 0)
            return;
    }
    RunCkpt *k = &f->ckpts[f->n_ckpts++];
    k->step = step;
    snprintf(k->path, sizeof k->path, "%s", path);
    k->eval = eval_at(v, nv, step, batches, whole_step);
    k->best_file = 1;
    f->best_step = step;
    sort_last(f);
}

/* Step checkpoints in the run's folder the store has no record of (written just before a
 * crash, before their record reached the store; or put there by hand): listed with the
 * step their name gives, so `open` sees what `train resume=` would resume from (and its
 * owner check refuses another run's file). */
static void add_unrecorded(RunRecord *f, const RunRow *r, const SeriesPoint *v, int nv,
                           long batches, long whole_step, int cap)
{
    DIR *d = r->checkpoint_dir[0] ? opendir(r->checkpoint_dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) && f->n_ckpts < cap) {
        long step;
        int tmp;
        if (runfiles_parse(e->d_name, &step, &tmp) != RUNFILE_STEP || tmp)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%.1000s/%s", r->checkpoint_dir, e->d_name);
        int known = 0;
        for (int i = 0; i < f->n_ckpts && !known; i++) {
            const char *a = strrchr(f->ckpts[i].path, '/');
            known = !strcmp(a ? a + 1 : f->ckpts[i].path, e->d_name);
        }
        if (known || !is_file(path))
            continue;
        RunCkpt *k = &f->ckpts[f->n_ckpts++];
        k->step = step;
        snprintf(k->path, sizeof k->path, "%s", path);
        k->eval = eval_at(v, nv, step, batches, whole_step);
        sort_last(f);
    }
    if (d)
        closedir(d);
}

/* Keeps the existing files, each with its own evaluation: the recorded step files, the
 * best file (its own record), step files the store has no record of. */
static int collect(RunRecord *f, const RunRow *r, const CheckpointRecord *c, int nc,
                   const CheckpointRecord *best, int found, const SeriesPoint *v, int nv,
                   long batches, long whole_step)
{
    int cap = nc + 65;   /* the records, best.safetensors, up to 64 unrecorded step files */
    f->ckpts = calloc((size_t)cap, sizeof *f->ckpts);
    if (!f->ckpts)
        return LM_ENOMEM;
    long newest = -1, keep = runstore_config_long(r->config, "keep_checkpoints", 3),
         every = runstore_config_long(r->config, "checkpoint_every", 500);
    for (int i = 0; i < nc; i++)
        newest = c[i].step > newest ? c[i].step : newest;
    struct stat ds;
    f->dir_gone = r->checkpoint_dir[0] && stat(r->checkpoint_dir, &ds) && errno == ENOENT;
    f->lost_step = -1;
    for (int i = 0; i < nc; i++) {
        if (!is_file(c[i].path)) {   /* trainer_tasks.c prune_checkpoints' rule, or not */
            if (every > 0 && c[i].step % every == 0 &&
                c[i].step <= newest - keep * every) {
                f->n_gone++;
            } else {
                f->n_lost++;
                f->lost_step = c[i].step > f->lost_step ? c[i].step : f->lost_step;
            }
            continue;
        }
        RunCkpt *k = &f->ckpts[f->n_ckpts++];
        k->step = c[i].step;
        snprintf(k->path, sizeof k->path, "%s", c[i].path);
        k->eval = eval_at(v, nv, c[i].step, batches, whole_step);
    }
    add_best_file(f, r, best, found, v, nv, batches, whole_step);
    if (f->best_step < 0 && found)   /* recorded but the file is gone */
        f->best_step = best->step;
    add_unrecorded(f, r, v, nv, batches, whole_step, cap);
    if (f->best_step >= 0) {         /* the best's own evaluation, when there is one */
        RunEval e = eval_at(v, nv, f->best_step, batches, whole_step);
        if (!isnan(e.loss))
            f->best = e;
    }
    int has_best = 0;
    for (int i = 0; i < f->n_ckpts; i++)
        has_best |= f->ckpts[i].best = f->ckpts[i].best_file;
    if (!has_best && !isnan(f->best.loss))   /* the best step's own file, when it is kept */
        for (int i = 0; i < f->n_ckpts; i++)
            f->ckpts[i].best = f->ckpts[i].step == f->best.step;
    return LM_OK;
}

int runrecord_read(RunStore *st, const RunRow *r, RunRecord *f, char *err)
{
    memset(f, 0, sizeof *f);
    f->best.loss = f->best_whole.loss = f->final.loss = NAN;
    f->best_step = -1;
    f->parent_run = r->parent_run;
    f->parent_step = r->parent_step;
    f->parent_init = r->parent_init;
    RunRow parent;
    char pe[LM_ERR_LEN];
    if (r->parent_run > 0 && runstore_get(st, r->parent_run, &parent, pe) == LM_OK) {
        if (strcmp(parent.data_hash, r->data_hash))
            snprintf(f->parent_data, sizeof f->parent_data, "%s", parent.data_name);
        runstore_row_free(&parent);
    }
    runrecord_precision(r, f->precision, sizeof f->precision);
    f->owner_live = runstore_run_live(st, r);
    f->owner_gone = !f->owner_live && (!strcmp(r->status, "running") ||
                                       !strcmp(r->status, "paused"));
    f->owner_pid = r->pid;
    snprintf(f->owner_host, sizeof f->owner_host, "%s", r->host);
    CheckpointRecord best;
    int found = 0;
    long batches = runstore_config_long(r->config, "eval_batches", 0);
    long whole_step = runstore_final_whole_step(r);
    SeriesPoint *v = NULL;
    CheckpointRecord *c = NULL;
    int nv = 0, nc = 0;
    int rc = runstore_series(st, r->id, "val_loss", &v, &nv, err);
    if (!rc)
        rc = runstore_checkpoints(st, r->id, &c, &nc, err);
    if (!rc)
        rc = runstore_best_checkpoint(st, r->id, &best, &found, err);
    if (!rc)
        rc = runstore_group_of(st, r->id, f->group, sizeof f->group, err);
    for (int i = 0; !rc && i < nv; i++) {
        if (isnan(v[i].value))
            continue;
        RunEval e = eval_at(v, nv, v[i].step, batches, whole_step);
        f->final = e;
        if (isnan(f->best.loss) || e.loss < f->best.loss)
            f->best = e;
        if (e.whole && (isnan(f->best_whole.loss) || e.loss < f->best_whole.loss))
            f->best_whole = e;
    }
    if (!rc && (rc = collect(f, r, c, nc, &best, found, v, nv, batches, whole_step)))
        err_set(err, rc, "out of memory");
    free(v);
    free(c);
    if (rc)
        runrecord_free(f);
    return rc;
}

void runrecord_free(RunRecord *f)
{
    free(f->ckpts);
    f->ckpts = NULL;
    f->n_ckpts = 0;
}

void runrecord_fmt_eval(char *buf, size_t cap, const RunEval *e)
{
    if (isnan(e->loss)) {
        snprintf(buf, cap, "-");
        return;
    }
    char how[64];
    if (e->whole)
        snprintf(how, sizeof how, "whole split");
    else
        snprintf(how, sizeof how, "an estimate over %ld batch%s", e->batches,
                 e->batches == 1 ? "" : "es");
    char ppl[METRIC_PPL_TEXT];
    snprintf(buf, cap, "%.4f (ppl %s) at step %ld, %s", e->loss, metric_ppl_text(exp(e->loss), ppl),
             e->step, how);
}

const char *runrecord_owner_state(const RunRecord *f)
{
    return f->owner_live ? "alive" : f->owner_gone ? "gone" : "ended";
}

void runrecord_fmt_owner(char *buf, size_t cap, const RunRecord *f)
{
    if (f->owner_pid <= 0 && !f->owner_host[0]) {
        snprintf(buf, cap, "-");
        return;
    }
    const char *state = runrecord_owner_state(f);
    snprintf(buf, cap, "pid %ld@%s, %s%s", f->owner_pid, f->owner_host[0] ? f->owner_host : "?",
             state, f->owner_gone ? ": the store says it runs, but its process no longer "
             "exists" : "");
}

/* "100, 200, best (step 300)" — what exists, for an error. */
static void list_existing(const RunRecord *f, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < f->n_ckpts && o + 32 < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s%ld%s", i ? ", " : "",
                              f->ckpts[i].best_file ? "best (step " : "step=", f->ckpts[i].step,
                              f->ckpts[i].best_file ? ")" : "");
}

int runrecord_pick(const RunRecord *f, const char *which, long step, const RunCkpt **out,
                  char *err)
{
    char have[400];
    list_existing(f, have, sizeof have);
    const RunCkpt *pick = NULL;
    for (int i = 0; i < f->n_ckpts; i++) {
        const RunCkpt *k = &f->ckpts[i];
        if (step > 0 ? !k->best_file && k->step == step
                     : !strcmp(which, "best") ? k->best_file
                     : !k->best_file && (!pick || k->step >= pick->step))
            pick = k;
    }
    if (!pick && step <= 0 && !strcmp(which, "best"))   /* no best file: the best step's */
        for (int i = 0; i < f->n_ckpts; i++)
            if (f->ckpts[i].best)
                pick = &f->ckpts[i];
    if (!pick && f->dir_gone && f->n_lost)   /* not pruned: the folder itself went */
        return err_set(err, LM_EARG, "no checkpoint exists: the run's folder is gone (deleted "
                       "or moved outside lmlab) with the %d checkpoint file%s it recorded, up "
                       "to step %ld: put the folder back to use them", f->n_lost,
                       f->n_lost == 1 ? "" : "s", f->lost_step);
    if (!pick) {
        if (step > 0)
            return err_set(err, LM_EARG, "no checkpoint of step %ld exists (kept: %s)", step,
                           have[0] ? have : "none");
        return err_set(err, LM_EARG, "no %s checkpoint exists (kept: %s)%s", which,
                       have[0] ? have : "none", have[0] && !strcmp(which, "best")
                       ? ": the run has no best yet (not evaluated); open a kept one with "
                         "`open ID which=final` or `open ID step=N`, then `eval`" : "");
    }
    *out = pick;
    return LM_OK;
}

void runrecord_precision(const RunRow *r, char *out, size_t cap)
{
    if (!runstore_config_value(r->config, "precision", out, cap))
        snprintf(out, cap, "fp32");   /* a run from before the setting */
}

void runrecord_fmt_parent(char *out, size_t cap, const RunRow *r)
{
    const char *kind = r->parent_init ? "init " : "";
    if (r->parent_run > 0)
        snprintf(out, cap, "%s#%ld@%ld", kind, r->parent_run, r->parent_step);
    else if (r->parent_step > 0)
        snprintf(out, cap, "%s(rm)@%ld", kind, r->parent_step);
    else if (cap)
        out[0] = 0;
}

int runrecord_checkpoint_path(RunStore *st, const RunRow *r, const char *which, char *path,
                              size_t cap, long *step, char *err)
{
    RunRecord f;
    const RunCkpt *k = NULL;
    int rc = runrecord_read(st, r, &f, err);
    if (rc)
        return rc;
    if (!(rc = runrecord_pick(&f, which, 0, &k, err))) {
        if ((size_t)snprintf(path, cap, "%s", k->path) >= cap)
            rc = err_set(err, LM_EIO, "run %ld's checkpoint path is longer than %zu bytes: "
                         "move its run folder somewhere shorter", r->id, cap - 1);
        else if (step)
            *step = k->step;
    }
    runrecord_free(&f);
    return rc;
}

/* ---- parity: the same numbers? ---- */


/* "OpenBLAS 0.3.21 Cooperlake" out of a machine description ("" when it names none). */
static void blas_kernels(const char *machine, char *buf, size_t cap)
{
    const char *p = machine ? strstr(machine, "OpenBLAS ") : NULL;
    int words = 0;
    size_t n = 0;
    buf[0] = 0;
    if (!p)
        return;
    while (p[n] && n + 1 < cap && p[n] != ',' && !(p[n] == ' ' && ++words == 3))
        n++;
    snprintf(buf, cap, "%.*s", (int)n, p);
}

/* The settings and kernels that decide the numbers besides the seed: where a and b differ. */
static void parity_kernels(const RunRow *a, const RunRow *b, RunParity *p)
{
    char ka[64], kb[64], va[64], vb[64];
    size_t o = 0;
    blas_kernels(a->machine, ka, sizeof ka);
    blas_kernels(b->machine, kb, sizeof kb);
    if (strcmp(ka, kb))
        o += (size_t)snprintf(p->kernels + o, sizeof p->kernels - o, "BLAS kernels %s vs %s",
                              ka[0] ? ka : "?", kb[0] ? kb : "?");
    /* log_every: a logged loss is the mean of the steps since the last row */
    const char *keys[] = {"precision", "shards", "log_every"};
    for (int k = 0; k < 3 && o < sizeof p->kernels; k++) {
        runstore_config_value(a->config, keys[k], va, sizeof va);
        runstore_config_value(b->config, keys[k], vb, sizeof vb);
        if (strcmp(va, vb))   /* a run from before shards= existed split by thread */
            o += (size_t)snprintf(p->kernels + o, sizeof p->kernels - o, "%s%s %s vs %s",
                                  o ? ", " : "", keys[k], va[0] ? va : "(by thread)",
                                  vb[0] ? vb : "(by thread)");
    }
}

/* The value of series `metric` of run `run` at `step` into *v: 1 found, 0 not, < 0 error. */
static int value_at(RunStore *st, long run, const char *metric, long step, double *v,
                    char *err)
{
    SeriesPoint p;
    int found = 0;
    if (runstore_series_point(st, run, metric, step, &p, &found, err)) return -1;
    if (found) *v = p.value;
    return found;
}

int runrecord_work(RunStore *st, const RunRow *r, RunWork *w, char *err)
{
    memset(w, 0, sizeof *w);
    w->tokens_per_s = NAN;
    SeriesPoint tok, sec, tok_first, sec_first;   /* the last rows (and the first) only */
    int nt = 0, ns = 0, rc = runstore_series_point(st, r->id, "tokens", RUNSTORE_STEP_LAST,
                                                   &tok, &nt, err);
    if (!rc)
        rc = runstore_series_point(st, r->id, "elapsed", RUNSTORE_STEP_LAST, &sec, &ns, err);
    if (rc || !nt || !ns)
        return rc;
    double tok0 = 0, sec0 = 0;
    /* a fork: its counters carry on its parent's, read at the fork point (a deleted
     * parent's row is gone, parent_run NULL: its parent_step still says it is a fork) */
    if ((r->parent_run > 0 || r->parent_step > 0) && !r->parent_init) {
        int a = r->parent_run > 0 ? value_at(st, r->parent_run, "tokens", r->parent_step,
                                             &tok0, err) : 0;
        int b = a > 0 ? value_at(st, r->parent_run, "elapsed", r->parent_step, &sec0, err) : a;
        w->from_step = r->parent_step;
        if (a < 0 || b < 0) {
            rc = LM_EDB;
        } else if (!a || !b) {   /* the parent is gone: from the fork's first row */
            int f1 = 0, f2 = 0;
            rc = runstore_series_point(st, r->id, "tokens", RUNSTORE_STEP_FIRST, &tok_first,
                                       &f1, err);
            if (!rc)
                rc = runstore_series_point(st, r->id, "elapsed", RUNSTORE_STEP_FIRST,
                                           &sec_first, &f2, err);
            tok0 = tok_first.value, sec0 = sec_first.value, w->from_step = tok_first.step;
        }
    }
    w->steps = tok.step - w->from_step;
    w->tokens = (long)(tok.value - tok0);
    w->seconds = sec.value - sec0;
    if (w->seconds > 0)
        w->tokens_per_s = (double)w->tokens / w->seconds;
    return rc;
}

static int same_value(double x, double y)
{
    return (isnan(x) && isnan(y)) || !memcmp(&x, &y, sizeof x);   /* bit for bit */
}

/* A fork logs, at its first row after the fork point, the mean loss of the steps since
 * that point, its parent of log_every steps: that row is not the same number even when every
 * step is. The step of that row to leave out of the loss comparison, or -1. */
static long fork_skip(const RunRow *a, const RunRow *b)
{
    const RunRow *f = b->parent_run == a->id ? b : a->parent_run == b->id ? a : NULL;
    char v[32];
    if (!f || f->parent_step <= 0 || f->parent_init)   /* init_from: not a continuation */
        return -1;
    runstore_config_value(f->config, "log_every", v, sizeof v);
    long every = atol(v);
    if (every <= 1 || f->parent_step % every == 0)
        return -1;
    return (f->parent_step / every + 1) * every;
}

/* The latest setting change of a or b before the step where they part, into p->cause. */
static int parity_cause(RunStore *st, const RunRow *a, const RunRow *b, RunParity *p, char *err)
{
    long best = -1;
    for (int r = 0; r < 2; r++) {
        const RunRow *x = r ? b : a;
        SettingChange *c = NULL;
        int n = 0, status = runchanges_list(st, x->id, &c, &n, err);
        if (status) return status;
        for (int i = 0; i < n; i++)
            if (c[i].step < p->step && c[i].step > best) {
                best = c[i].step;
                char from[256], to[256];
                snprintf(p->cause, sizeof p->cause, "%.47s changed at step %ld in run %ld"
                         " (%.60s -> %.60s)", c[i].key, c[i].step, x->id,
                         safetext_escape(from, sizeof from, c[i].from, 0),
                         safetext_escape(to, sizeof to, c[i].to, 0));
            }
        free(c);
    }
    return LM_OK;
}

/* The next point of cursor c into *p: LM_OK (*more = 0 at its end) or LM_EDB (err). */
static int pull(RunStoreCursor *c, SeriesPoint *p, int *more, char *err)
{
    int rc = runstore_series_next(c, p, err);
    *more = rc > 0;
    return rc < 0 ? LM_EDB : LM_OK;
}

/* Series `name` of runs a and b merged by step up to the last step both have, a point of
 * each at a time (runstore_series_open: memory bounded, and nothing past that step is
 * read): the first step where they part into p; first: the training loss, which also
 * counts the steps in common and says each run's last step. */
static int parity_series(RunStore *st, const RunRow *a, const RunRow *b, const char *name,
                         int first, long skip, RunParity *p, char *err)
{
    SeriesPoint la, lb, x = {0}, y = {0};
    int fa = 0, fb = 0, rc = runstore_series_point(st, a->id, name, RUNSTORE_STEP_LAST, &la,
                                                   &fa, err);
    if (!rc) rc = runstore_series_point(st, b->id, name, RUNSTORE_STEP_LAST, &lb, &fb, err);
    if (rc) return rc;
    if (first) p->last_a = fa ? la.step : 0, p->last_b = fb ? lb.step : 0;
    if (!fa || !fb) return LM_OK;
    long last = la.step < lb.step ? la.step : lb.step;
    RunStoreCursor *ca = NULL, *cb = NULL;
    int ma = 0, mb = 0;
    rc = runstore_series_open(st, a->id, name, &ca, err);
    if (!rc) rc = runstore_series_open(st, b->id, name, &cb, err);
    if (!rc) rc = pull(ca, &x, &ma, err);
    if (!rc) rc = pull(cb, &y, &mb, err);
    while (!rc && (ma || mb)) {   /* merge by step, up to `last` */
        long s = ma && (!mb || x.step <= y.step) ? x.step : y.step;
        if (s > last || (!first && !p->identical && s > p->step)) break;   /* nothing to find */
        int ia = ma && x.step == s, ib = mb && y.step == s;
        if (first && ia && ib) p->common++;
        if (ia && ib && !(first && s == skip) && !same_value(x.value, y.value) &&
            (p->identical || s < p->step)) {
            p->identical = 0;
            p->step = s;
            p->a = x.value;
            p->b = y.value;
            snprintf(p->what, sizeof p->what, "%s", name);
        }
        if (ia) rc = pull(ca, &x, &ma, err);
        if (ib && !rc) rc = pull(cb, &y, &mb, err);
    }
    runstore_cursor_close(ca);
    runstore_cursor_close(cb);
    return rc;
}

int runrecord_parity(RunStore *st, const RunRow *a, const RunRow *b, RunParity *p, char *err)
{
    memset(p, 0, sizeof *p);
    p->identical = 1;
    p->step = -1;
    parity_kernels(a, b, p);
    long skip = fork_skip(a, b);
    /* the registry's series a resumed or forked run reproduces (SERIES_F_PARITY), the
     * training loss first: it counts the steps in common */
    const char *names[32] = {"loss"};
    int n_names = 1;
    for (int q = 0; q < series_count() && n_names < 32; q++)
        if ((series_info(q)->flags & SERIES_F_PARITY) && !series_info(q)->family &&
            strcmp(series_info(q)->name, "loss"))
            names[n_names++] = series_info(q)->name;
    for (int k = 0; k < n_names; k++) {
        int rc = parity_series(st, a, b, names[k], k == 0, skip, p, err);
        if (rc) return rc;
    }
    return p->identical ? LM_OK : parity_cause(st, a, b, p, err);
}

void runrecord_fmt_parity(char *buf, size_t cap, const RunParity *p)
{
    int o;
    if (p->identical && p->common == 0)
        o = snprintf(buf, cap, "no logged steps in common to compare");
    else if (p->identical)
        o = snprintf(buf, cap, "identical over the %ld logged step%s both have", p->common,
                     p->common == 1 ? "" : "s");
    else
        o = snprintf(buf, cap, "part at step %ld (%s %.9g vs %.9g)%s%s", p->step, p->what, p->a,
                     p->b, p->cause[0] ? "; " : "", p->cause);
    if (p->kernels[0] && o > 0 && (size_t)o < cap)
        snprintf(buf + o, cap - (size_t)o, "; differ: %s%s", p->kernels,
                 p->identical ? "" : " (another kernel or plan rounds differently)");
}
