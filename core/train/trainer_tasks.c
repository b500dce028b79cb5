/* trainer_tasks.c — what a run does besides stepping: evaluations (with the plateau
 * schedule and the best loss), gate statistics on a fixed probe batch, periodic samples
 * streamed as events, checkpoints (step-N, best, pruning; pausing the run when one cannot
 * be written) and naming where a divergence appeared. Runs on the training thread. */
#include "private/trainer_impl.h"

#include "err.h"
#include "dist.h"
#include "evaluate.h"
#include "gate_probe.h"
#include "runfiles.h"
#include "sample.h"
#include "sysinfo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Per-layer, per-level gate statistics of coefficients (B*heads, T, levels) of one
 * forward: mean, std, histogram over positions t >= 2^level. out: levels entries. */
static void trainer_gate_stats(const float *coeff, int NH, int T, int levels, long step, int layer,
                        GateStat *out)
{
    for (int k = 0; k < levels; k++) {
        GateStat *g = &out[k];
        memset(g, 0, sizeof *g);
        g->step = step;
        g->layer = layer;
        g->level = k;
        double s = 0, s2 = 0;
        long n = 0;
        for (int i = 0; i < NH; i++)
            for (int p = 1 << k; p < T; p++) {
                float v = coeff[((size_t)i * T + p) * levels + k];
                s += v;
                s2 += (double)v * v;
                n++;
                int bin = (int)(v * GATE_HIST_BINS);
                g->hist[bin < 0 ? 0 : bin >= GATE_HIST_BINS ? GATE_HIST_BINS - 1 : bin]++;
            }
        g->mean = n ? (float)(s / n) : NAN;
        g->std = n ? (float)sqrt(fmax(0, s2 / n - (s / n) * (s / n))) : NAN;
    }
}

/* Gate statistics of every Dispatcher layer over a fixed probe batch (the first windows
 * of the validation split), so successive evaluations are comparable. */
static void emit_gates(Trainer *t)
{
    Model *m = t->m;
    if (!m->n_gate_layers)
        return;
    size_t n = t->ds.n[SPLIT_VALID];
    int T = m->cfg.bptt, B = m->cfg.batch;
    if (n < (size_t)T + 1)
        return;
    if ((size_t)B * T > n)
        B = (int)(n / (size_t)T);
    GateProbe gp;
    char err[LM_ERR_LEN];
    int *val = t->x;   /* (B, T): the split's first windows (x is refilled every step) */
    if (tokseq_read(&t->ds.split[SPLIT_VALID], 0, (size_t)B * T, val, err) ||
        gate_probe_run(&gp, m, val, B, T, 0, err))
        return;
    int L = gp.levels, NH = B * gp.heads;
    TrainEvent ev = {.kind = TEV_GATES, .n_gates = gp.layers * L};
    ev.gates = calloc((size_t)ev.n_gates, sizeof *ev.gates);
    if (!ev.gates) {
        gate_probe_free(&gp);
        return;
    }
    for (int l = 0; l < gp.layers; l++)
        if (gp.coeff[l])
            trainer_gate_stats(gp.coeff[l], NH, T, L, t->ts.step, l, ev.gates + (size_t)l * L);
    gate_probe_free(&gp);
    trainer_push(t, &ev);
}

int trainer_eval_shared(const Trainer *t, int final)
{
    int whole = final || t->cfg.eval_batches == 0;
    return dist_size() > 1 && !(whole && model_carries_state(t->m));
}

/* "1.23M" */
static void fmt_count(char *buf, size_t cap, double v)
{
    if (v >= 1e9) snprintf(buf, cap, "%.2fG", v / 1e9);
    else if (v >= 1e6) snprintf(buf, cap, "%.2fM", v / 1e6);
    else if (v >= 1e4) snprintf(buf, cap, "%.1fk", v / 1e3);
    else snprintf(buf, cap, "%.0f", v);
}

typedef struct {
    Trainer *t;
    double t0, last;       /* wall clock at the start and at the last report */
} EvalPace;

/* A whole-split evaluation's progress as the status' reason, at most once a second: every
 * view shows it beside "evaluating", and the console (headless output) prints it. */
static void eval_progress(void *ud, uint64_t done, uint64_t total)
{
    EvalPace *p = ud;
    double now = sysinfo_now();
    if (now - p->last < 1.0 && done < total)
        return;
    p->last = now;
    double rate = done / fmax(now - p->t0, 1e-9), left = (double)(total - done) / fmax(rate, 1e-9);
    char a[16], b[16], r[16], msg[200];
    fmt_count(a, sizeof a, (double)done);
    fmt_count(b, sizeof b, (double)total);
    fmt_count(r, sizeof r, rate);
    snprintf(msg, sizeof msg, "evaluating the valid split: %s of %s tokens (%.0f%%), %s tok/s, "
             "ETA %d:%02d (stop ends it with an estimate)", a, b, 100.0 * done / fmax(total, 1),
             r, (int)(left / 60), (int)fmod(left, 60));
    trainer_set_status(p->t, TRAINER_EVALUATING, msg);
}

int trainer_do_eval(Trainer *t, int final, char *err)
{
    Config *c = &t->cfg;
    trainer_set_status(t, TRAINER_EVALUATING, NULL);
    Rng rng;
    rng_seed(&rng, (uint64_t)c->seed * 7919u + (uint64_t)t->ts.step);
    EvalResult r;
    int split = SPLIT_VALID;
    /* bits per character for char-level runs: every predicted token is one character */
    size_t chars = c->tokenizer_kind == TOKENIZER_CHAR ? t->ds.n[split] - 1 : 0;
    int batches = final ? 0 : c->eval_batches, lead = dist_rank() == 0;
    EvalPace pace = {t, sysinfo_now(), sysinfo_now()};
    EvalLimits lim = {(uint64_t)c->final_eval_tokens, lead ? eval_progress : NULL, &pace};
    int rc = evaluate_split_limited(t->m, t->reps, &t->ds.split[split], c->bptt, c->batch,
                                    batches, trainer_eval_shared(t, final), &rng, chars,
                                    &t->stop_req, &lim, t->x, t->y, &r, err);
    if (!rc && lead && r.partial) {
        char a[16], b[16], msg[LM_ERR_LEN];
        fmt_count(a, sizeof a, (double)r.tokens);
        fmt_count(b, sizeof b, (double)r.split_tokens);
        snprintf(msg, sizeof msg, "the valid loss %.4f at step %ld is an estimate over %ld "
                 "tokens (%s of the split's %s: %s)", r.loss, t->ts.step, r.tokens, a, b,
                 trainer_stopping(t) ? "the evaluation was stopped"
                                     : "capped by final_eval_tokens");
        trainer_push_text(t, TEV_LOG, msg);
    }
    /* rank 0 reports; elsewhere this was a share of its evaluation (rank 0's schedule
     * state reaches the other ranks with the next step's control) */
    if (!rc && lead) {
        TrainEvent ev = {.kind = TEV_EVAL};
        ev.eval.step = t->ts.step;
        snprintf(ev.eval.split, sizeof ev.eval.split, "valid");
        ev.eval.loss = r.loss;
        ev.eval.ppl = r.ppl;
        ev.eval.bpc = r.bpc;
        ev.eval.tokens = r.tokens;
        ev.eval.elapsed = t->ts.elapsed;
        trainer_push(t, &ev);
        schedule_observe(&t->sched, r.loss);
        if (isnan(t->best_val) || r.loss < t->best_val)
            t->best_val = r.loss;
        t->ts.best_val = t->best_val;
        emit_gates(t);
    }
    trainer_set_status(t, TRAINER_RUNNING, NULL);
    return rc;
}

static int sample_piece(void *ud, const char *piece, size_t len)
{
    Trainer *t = ud;
    TrainEvent ev = {.kind = TEV_SAMPLE_PIECE, .text = strndup(piece, len)};
    trainer_push(t, &ev);
    return trainer_stopping(t);
}

void trainer_do_sample(Trainer *t)
{
    SampleOptions o;
    sample_options_default(&o);
    o.n_tokens = t->cfg.sample_tokens;
    o.temperature = t->cfg.sample_temp;
    o.seed = (uint64_t)t->cfg.seed * 31u + (uint64_t)t->ts.step; /* no draw from the run's RNGs */
    char *text = NULL, err[LM_ERR_LEN];
    if (sample_generate(t->m, t->ds.tok, t->cfg.sample_prompt, &o, sample_piece, t, &text,
                        NULL, err)) {
        trainer_push_text(t, TEV_LOG, err);
        return;
    }
    TrainEvent ev = {.kind = TEV_SAMPLE, .text = text, .prompt = strdup(t->cfg.sample_prompt)};
    trainer_push(t, &ev);
    trainer_reset_states(t);
}

static void prune_checkpoints(Trainer *t, long step)
{
    long drop = step - (long)t->cfg.keep_checkpoints * (t->cfg.checkpoint_every > 0
                                                          ? t->cfg.checkpoint_every : 1);
    if (t->cfg.checkpoint_every <= 0 || drop <= 0)
        return;
    char p[1200];
    if (!runfiles_path(p, sizeof p, t->opt.run_dir, RUNFILE_STEP, drop))
        unlink(p);
    if (!runfiles_path(p, sizeof p, t->opt.run_dir, RUNFILE_OPTIM, drop))
        unlink(p);
}

/* The training state a checkpoint records (RNGs, batcher, schedule, run id). */
static void fill_state(Trainer *t)
{
    t->ts.model_rng = t->m->rng;
    batcher_get_state(&t->batcher, t->ts.batcher);
    t->ts.sched = t->sched;
    t->ts.run_id = t->opt.run_id;
}

int trainer_write_best(Trainer *t)
{
    char err[LM_ERR_LEN], best[METRICS_PATH_LEN];
    if (!t->opt.run_dir[0])
        return LM_OK;
    int rc = LM_OK;
    if (mkdir(t->opt.run_dir, 0777) && errno != EEXIST)
        rc = err_set(err, LM_EIO, "cannot create %s: %s", t->opt.run_dir, strerror(errno));
    if (!rc && runfiles_path(best, sizeof best, t->opt.run_dir, RUNFILE_BEST, 0))
        rc = err_set(err, LM_EARG, "the run folder's path is too long: %.200s", t->opt.run_dir);
    fill_state(t);
    if (!rc)
        rc = checkpoint_save(best, t->m, NULL, t->tok_json, &t->ts, err);
    if (rc) {
        char msg[LM_ERR_LEN + 64];
        snprintf(msg, sizeof msg, "best checkpoint not written: %s", err);
        trainer_push_text(t, TEV_LOG, msg);
        return rc;
    }
    t->best_written = t->ts.step;
    TrainEvent ev = {.kind = TEV_CHECKPOINT};
    ev.ckpt.step = t->ts.step;
    memcpy(ev.ckpt.path, best, sizeof ev.ckpt.path);
    ev.ckpt.val_loss = t->best_val;
    ev.ckpt.is_best = 1;
    trainer_push(t, &ev);
    return LM_OK;
}

/* Writes step-N (and best when this evaluation improved). On failure the run pauses
 * with the reason; resume retries. Returns LM_OK or the failure. */
static int do_checkpoint(Trainer *t, int is_best, char *err)
{
    if (!t->opt.run_dir[0])
        return LM_OK;
    if (mkdir(t->opt.run_dir, 0777) && errno != EEXIST)
        return err_set(err, LM_EIO, "cannot create %s: %s", t->opt.run_dir, strerror(errno));
    char path[METRICS_PATH_LEN];
    if (runfiles_path(path, sizeof path, t->opt.run_dir, RUNFILE_STEP, t->ts.step))
        return err_set(err, LM_EARG, "the run folder's path is too long: %.200s",
                       t->opt.run_dir);
    fill_state(t);
    int rc = checkpoint_save(path, t->m, &t->optim, t->tok_json, &t->ts, err);
    if (rc)
        return rc;
    TrainEvent ev = {.kind = TEV_CHECKPOINT};
    ev.ckpt.step = t->ts.step;
    memcpy(ev.ckpt.path, path, sizeof ev.ckpt.path);
    ev.ckpt.val_loss = t->best_val;
    ev.ckpt.is_best = is_best;
    trainer_push(t, &ev);
    if (is_best && t->best_written != t->ts.step) {
        char best[METRICS_PATH_LEN];
        if (!runfiles_path(best, sizeof best, t->opt.run_dir, RUNFILE_BEST, 0) &&
            checkpoint_save(best, t->m, NULL, t->tok_json, &t->ts, err) == LM_OK) {
            t->best_written = t->ts.step;
            TrainEvent bev = {.kind = TEV_CHECKPOINT};
            bev.ckpt = ev.ckpt;
            memcpy(bev.ckpt.path, best, sizeof bev.ckpt.path);
            trainer_push(t, &bev);
        }
    }
    prune_checkpoints(t, t->ts.step);
    trainer_reset_states(t);
    t->saved_step = t->ts.step;
    return LM_OK;
}

/* Names the first parameter whose gradient (or value) is not finite. */
void trainer_find_nonfinite(const Model *m, char *buf, size_t cap)
{
    const ParamSet *ps = &m->params;
    for (int i = 0; i < ps->n; i++) {
        const float *g = params_grad(ps, i), *w = params_data(ps, i);
        for (size_t k = 0; k < ps->info[i].numel; k++)
            if (!isfinite(g[k]) || !isfinite(w[k])) {
                snprintf(buf, cap, "%s %s", isfinite(w[k]) ? "the gradient of" : "the weights of",
                         ps->info[i].name);
                return;
            }
    }
    snprintf(buf, cap, "the loss (every gradient is finite)");
}

/* Paused (status event on the first try) until `resume`, a stop, or `every` seconds have
 * passed (then the checkpoint is retried without anyone's help: a headless run cannot be
 * resumed from another process). Returns 1 when a stop was requested. */
static int wait_retry(Trainer *t, const char *why, double every, int first)
{
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->pause_req, 1, __ATOMIC_RELEASE);
    t->status = TRAINER_PAUSED;
    pthread_mutex_unlock(&t->mu);
    if (first) {
        TrainEvent ev = {.kind = TEV_STATUS, .status = TRAINER_PAUSED, .text = strdup(why)};
        trainer_push(t, &ev);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long ns = until.tv_nsec + (long)((every - floor(every)) * 1e9);
    until.tv_sec += (time_t)floor(every) + ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&t->mu);
    while (t->pause_req && !t->stop_req)
        if (pthread_cond_timedwait(&t->cv, &t->mu, &until) == ETIMEDOUT)
            break;
    __atomic_store_n(&t->pause_req, 0, __ATOMIC_RELEASE);
    int stop = t->stop_req;
    t->status = TRAINER_RUNNING;
    pthread_mutex_unlock(&t->mu);
    return stop;
}

/* Checkpoint; on a space or I/O failure, pause and retry (by itself every
 * checkpoint_retry seconds, or at `resume`) until it succeeds or the run is stopped. */
int trainer_checkpoint_or_pause(Trainer *t, int is_best)
{
    char err[LM_ERR_LEN];
    int tries = 0;
    for (;;) {
        int rc = do_checkpoint(t, is_best, err);
        if (rc == LM_OK) {
            if (tries)
                trainer_set_status(t, TRAINER_RUNNING, "checkpoint written after a retry");
            t->unsaved[0] = 0;   /* an earlier try a stop cut short is written now */
            return LM_OK;
        }
        struct stat gone;
        if (!tries && t->opt.run_dir[0] && stat(t->opt.run_dir, &gone) && errno == ENOENT &&
            do_checkpoint(t, is_best, err) == LM_OK) {   /* deleted while it was written */
            char msg[METRICS_PATH_LEN + 160];
            snprintf(msg, sizeof msg, "the run folder %s was deleted while the step-%ld "
                     "checkpoint was written: made again, and the checkpoint written",
                     t->opt.run_dir, t->ts.step);
            trainer_push_text(t, TEV_LOG, msg);
            t->unsaved[0] = 0;
            return LM_OK;
        }
        if (rc != LM_ENOSPC && rc != LM_EIO) {   /* waiting for space cannot fix it */
            snprintf(t->fatal, sizeof t->fatal, "checkpoint failed: %.480s", err);
            trainer_push_text(t, TEV_LOG, t->fatal);
            return rc;
        }
        double every = t->opt.checkpoint_retry > 0 ? t->opt.checkpoint_retry : 30;
        char msg[LM_ERR_LEN + 300];
        snprintf(msg, sizeof msg, "checkpoint failed: %.400s — training paused; free space or "
                 "fix the directory: retrying every %g s by itself (`resume` retries now); "
                 "`stop`, Ctrl-C or SIGTERM ends the run keeping the checkpoints already "
                 "written",
                 err, every);
        if (!tries++)
            trainer_push_text(t, TEV_LOG, msg);
        if (wait_retry(t, msg, every, tries == 1)) {   /* stopped: said in the run's end */
            snprintf(t->unsaved, sizeof t->unsaved, "%.500s", err);
            return rc;
        }
    }
}

