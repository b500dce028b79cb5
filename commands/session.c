/* session.c — session lifetime, output, the store connection, completion and line
 * dispatch (see session.h). */
#include "session.h"

#include "safetext.h"
#include "err.h"
#include "run_launch.h"
#include "sysinfo.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static void default_writer(void *ud, int kind, const char *text)
{
    (void)ud;
    FILE *f = kind == SESSION_OUT_ERROR ? stderr : stdout;
    fputs(text, f);
    if (kind != SESSION_OUT_STREAM)
        fputc('\n', f);
    fflush(f);
}

void session_init(Session *s, const char *db_path)
{
    memset(s, 0, sizeof *s);
    config_defaults(&s->cfg);
    const char *env = getenv("LMLAB_DB");
    snprintf(s->db_path, sizeof s->db_path, "%s",
             db_path && *db_path ? db_path : env && *env ? env : "lmlab.db");
    s->writer = default_writer;
    /* one default everywhere (dashboard, --plain, -c, scripts, headless): the settings of
     * experiments/default.conf when it exists and loads, as `use default` would */
    char path[1024], err[LM_ERR_LEN];
    Config c;
    config_defaults(&c);
    if (!session_find_experiment("default", path, sizeof path) &&
        !config_load_file(&c, path, err)) {
        s->cfg = c;
        snprintf(s->experiment, sizeof s->experiment, "default");
    }
}

void session_set_writer(Session *s, SessionWriter w, void *ud)
{
    s->writer = w ? w : default_writer;
    s->writer_ud = ud;
}

void session_set_prior(Session *s, long run)
{
    free(s->prior_loss);
    free(s->prior_val);
    s->prior_loss = s->prior_val = NULL;
    s->n_prior_loss = s->n_prior_val = 0;
    RunStore *st = run > 0 ? session_store(s) : NULL;
    char err[LM_ERR_LEN];
    if (st && runstore_series(st, run, "loss", &s->prior_loss, &s->n_prior_loss, err))
        s->n_prior_loss = 0;
    if (st && runstore_series(st, run, "val_loss", &s->prior_val, &s->n_prior_val, err))
        s->n_prior_val = 0;
}

/* The points of prior before the first of *v (n), put in front of it. */
static void prepend(SeriesPoint **v, int *n, int *cap, const SeriesPoint *prior, int np)
{
    long first = *n ? (*v)[0].step : -1;
    int k = 0;
    while (k < np && (first < 0 || prior[k].step < first))
        k++;
    if (!k)
        return;
    SeriesPoint *m = malloc((size_t)(k + *n) * sizeof *m);
    if (!m)
        return;
    memcpy(m, prior, (size_t)k * sizeof *m);
    if (*n)
        memcpy(m + k, *v, (size_t)*n * sizeof *m);
    free(*v);
    *v = m;
    *n += k;
    *cap = *n;
}

void session_free(Session *s)
{
    session_job_shutdown(s);
    session_set_prior(s, 0);
    model_destroy(s->view);
    tokenizer_destroy(s->view_tok);
    if (s->has_view_ds)
        dataset_free(&s->view_ds);
    s->has_view_ds = 0;
    runstore_close(s->store);
    s->view = NULL;
    s->view_tok = NULL;
    s->store = NULL;
}

void session_printf(Session *s, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* stored and generated text (names, notes, samples) never drives the terminal */
    char *safe = safetext_dup(buf, SAFETEXT_KEEP_NEWLINES);
    s->writer(s->writer_ud, SESSION_OUT_TEXT, safe ? safe : buf);
    free(safe);
}

int session_error(Session *s, int status, const char *fmt, ...)
{
    char buf[4096], line[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (s->json) {
        json_t *o = json_pack("{s:b, s:s, s:s}", "ok", 0, "error", buf, "status",
                              err_name(status));
        char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
        s->writer(s->writer_ud, SESSION_OUT_ERROR, t ? t : buf);
        free(t);
        json_decref(o);
    } else {
        size_t n = strlen(buf);
        while (n && buf[n - 1] == '\n')
            buf[--n] = 0;
        char safe[4100];
        snprintf(line, sizeof line, "error: %s",
                 safetext_escape(safe, sizeof safe, buf, SAFETEXT_KEEP_NEWLINES));
        s->writer(s->writer_ud, SESSION_OUT_ERROR, line);
    }
    return status ? status : LM_EARG;
}

void session_stream(Session *s, const char *piece)
{
    char *safe = s->json ? NULL : safetext_dup(piece, SAFETEXT_KEEP_NEWLINES | SAFETEXT_PASS_HIGH);
    s->writer(s->writer_ud, SESSION_OUT_STREAM, safe ? safe : piece);
    free(safe);
}

void session_emit_json(Session *s, json_t *obj)
{
    if (!obj) {   /* never a silent drop: a value json_pack refused (invalid UTF-8, ...) */
        session_error(s, LM_EFORMAT, "an answer could not be encoded as JSON and is missing "
                      "from this output: please report the command that printed this");
        return;
    }
    /* 16 digits: 0.003 stays 0.003 (17 would print 0.0030000000000000001), unix times
     * keep their microseconds */
    char *t = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16));
    if (t)
        s->writer(s->writer_ud, SESSION_OUT_TEXT, t);
    free(t);
    json_decref(obj);
}

RunStore *session_store(Session *s)
{
    if (s->store)
        return s->store;
    char err[LM_ERR_LEN];
    if (runstore_open(s->db_path, &s->store, err)) {
        session_error(s, LM_EDB, "%s", err);
        s->store = NULL;
    }
    return s->store;
}

void session_fmt_duration(char *buf, size_t cap, double sec)
{
    if (!isfinite(sec) || sec < 0)
        snprintf(buf, cap, "-");
    else if (sec < 10)   /* a short trial is not 0:00 */
        snprintf(buf, cap, "%.1fs", sec);
    else if (sec < 3600)
        snprintf(buf, cap, "%d:%02d", (int)sec / 60, (int)sec % 60);
    else
        snprintf(buf, cap, "%dh%02d", (int)sec / 3600, ((int)sec % 3600) / 60);
}

long session_parse_run_id(const char *w)
{
    if (!w)
        return -1;
    if (*w == '#')
        w++;
    char *end;
    errno = 0;
    long id = strtol(w, &end, 10);
    return *w && !*end && id > 0 && errno != ERANGE ? id : -1;   /* never cut to LONG_MAX */
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int session_find_experiment(const char *name, char *path, size_t cap)
{
    if (strchr(name, '/') || strstr(name, ".conf")) {   /* a cut path names another file */
        return (size_t)snprintf(path, cap, "%s", name) < cap && is_file(path) ? 0 : -1;
    }
    const char *env = getenv("LMLAB_EXPERIMENTS");
    const char *dirs[] = {env, "experiments", LMLAB_EXPERIMENTS_DIR};
    for (int i = 0; i < 3; i++) {
        if (!dirs[i])
            continue;
        if ((size_t)snprintf(path, cap, "%s/%s.conf", dirs[i], name) < cap && is_file(path))
            return 0;
    }
    return -1;
}

/* ---- the job ---- */

/* Frees the run's trainer and recorder once it has ended (or, with stop, after stopping
 * it), keeping its final weights as the model `sample`, `eval` and `coeffs` use. */
static void close_run(Session *s, int stop)
{
    if (!s->trainer)
        return;
    if (!stop && !trainer_is_done(trainer_status(s->trainer)))
        return;
    RunHandle h = {.trainer = s->trainer, .rec = s->rec, .run_id = s->run_id};
    if (stop) {
        run_launch_close(&h, 1);
    } else {
        trainer_join(s->trainer);
        session_prepare_view(s);
        snprintf(s->view_source, sizeof s->view_source, "run #%ld final weights (step %ld)",
                 s->run_id, s->view_step);
        run_launch_close(&h, 0);
    }
    s->trainer = NULL;
    s->rec = NULL;
}

int session_check_idle(Session *s, const char *starting)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_RUN)
        return session_error(s, LM_ESTATE, "run #%ld is still training: `stop` it (or `wait`) "
                             "before starting %s", s->run_id, starting);
    if (k == SESSION_JOB_SWEEP)
        return session_error(s, LM_ESTATE, "sweep #%ld is training its trials: `stop` it (or "
                             "`wait`) before starting %s", sweep_runner_id(s->sweep), starting);
    return LM_OK;
}

void session_job_reap(Session *s)
{
    close_run(s, 0);
}

void session_job_set_run(Session *s, const RunHandle *h)
{
    close_run(s, 0);   /* a run that ended since the command's reap: closed, not lost */
    s->trainer = h->trainer;
    s->rec = h->rec;
    s->run_id = h->run_id;
    s->left_job = NULL;   /* a new job shows (a freed recorder's address may be reused) */
    s->end_seen = 0;
    s->attached = 0;   /* the run trained here is the one on screen */
}

SessionJobKind session_job_kind(const Session *s)
{
    if (s->trainer && !trainer_is_done(trainer_status(s->trainer)))
        return SESSION_JOB_RUN;
    if (s->sweep && !sweep_runner_done(s->sweep))
        return SESSION_JOB_SWEEP;
    return SESSION_JOB_NONE;
}

void session_job_name(const Session *s, char *buf, size_t cap)
{
    switch (session_job_kind(s)) {
    case SESSION_JOB_RUN: snprintf(buf, cap, "run #%ld", s->run_id); break;
    case SESSION_JOB_SWEEP: snprintf(buf, cap, "sweep #%ld", sweep_runner_id(s->sweep)); break;
    default: if (cap) buf[0] = 0; break;
    }
}

SweepRunner *session_job_sweep(Session *s)
{
    return s->sweep;
}

void session_job_set_sweep(Session *s, SweepRunner *r)
{
    if (s->sweep != r)
        sweep_runner_destroy(s->sweep);
    s->sweep = r;
    s->left_job = NULL;   /* the new sweep shows (a freed runner's address may be reused) */
}

SessionJobKind session_job_pause(Session *s, int on)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_RUN)
        (on ? trainer_pause : trainer_resume)(s->trainer);
    else if (k == SESSION_JOB_SWEEP)
        (on ? sweep_runner_pause : sweep_runner_resume)(s->sweep);
    return k;
}

SessionJobKind session_job_stop(Session *s)
{
    SessionJobKind k = session_job_kind(s);
    if (k == SESSION_JOB_RUN) {
        trainer_stop(s->trainer);
        trainer_join(s->trainer);
        while (!recorder_done(s->rec))
            usleep(20000);
    } else if (k == SESSION_JOB_SWEEP) {
        sweep_runner_stop(s->sweep);
        sweep_runner_join(s->sweep);
    }
    return k;
}

void session_job_shutdown(Session *s)
{
    sweep_runner_destroy(s->sweep); /* stops and joins */
    s->sweep = NULL;
    close_run(s, 1);
}

/* The newest live run among those with this stored status, not this process's own. */
static long newest_live(RunStore *st, const char *filter, const char *host)
{
    RunRow *rows;
    int n;
    char err[LM_ERR_LEN];
    if (runstore_list(st, filter, "recent", 16, &rows, &n, err))
        return 0;
    long id = 0;
    for (int i = 0; i < n && !id; i++) {
        int own = rows[i].pid == (long)getpid() && !strcmp(rows[i].host, host);
        if (!own && runstore_run_live(st, &rows[i]))
            id = rows[i].id;
    }
    runstore_rows_free(rows, n);
    return id;
}

long session_followed_run(Session *s)
{
    if (s->attached > 0)
        return s->attached;
    RunStore *st = session_store(s);
    if (!st)
        return 0;
    char host[64] = "";
    if (gethostname(host, sizeof host - 1))
        snprintf(host, sizeof host, "localhost");
    long a = newest_live(st, "status=running", host), b = newest_live(st, "status=paused", host);
    return a > b ? a : b;
}

/* 1 when the screen should leave the session's ended job: `attach ID`/`open ID` chose a
 * run, or another process trains one (asked of the store at most once a second). */
static int follow_elsewhere(Session *s)
{
    if (s->attached > 0)
        return 1;
    double now = sysinfo_now();
    if (now >= s->live_checked + 1.0) {
        s->live_checked = now;
        s->live_elsewhere = session_followed_run(s);
    }
    return s->live_elsewhere > 0;
}

int session_snapshot(Session *s, Snapshot *dst)
{
    if (s->rec) {   /* the session's run, until its end has been seen and another is due */
        if (s->left_job == (const void *)s->rec ||
            (recorder_done(s->rec) && s->end_seen && follow_elsewhere(s))) {
            s->left_job = s->rec;   /* left once: it does not come back when that one ends */
            return 0;
        }
        recorder_snapshot(s->rec, dst);
        s->end_seen = recorder_done(s->rec) && trainer_is_done(dst->status);
        if (dst->run_id == s->run_id) {   /* a resumed run: its whole history on screen */
            prepend(&dst->loss, &dst->n_loss, &dst->cap_loss, s->prior_loss, s->n_prior_loss);
            prepend(&dst->val, &dst->n_val, &dst->cap_val, s->prior_val, s->n_prior_val);
        }
        return 1;
    }
    if (!s->sweep)
        return 0;
    /* a training sweep's current trial; an ended sweep's last trial only until another run
     * is to be followed (auto-follow resumes after the session's own job), then never again */
    if (sweep_runner_done(s->sweep) &&
        (s->left_job == (const void *)s->sweep || follow_elsewhere(s))) {
        s->left_job = s->sweep;
        return 0;
    }
    return sweep_runner_snapshot(s->sweep, dst) == 1;
}

/* ---- completion ---- */

static int push_cand(char ***out, int *n, int *cap, const char *s)
{
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 16;
        char **p = realloc(*out, (size_t)c * sizeof *p);
        if (!p)
            return -1;
        *out = p;
        *cap = c;
    }
    if (!((*out)[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

static void complete_experiments(const char *prefix, char ***out, int *n, int *cap)
{
    const char *dirs[] = {"experiments", LMLAB_EXPERIMENTS_DIR};
    for (int i = 0; i < 2; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l > 5 && !strcmp(e->d_name + l - 5, ".conf") &&
                !strncmp(e->d_name, prefix, strlen(prefix))) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)(l - 5), e->d_name);
                push_cand(out, n, cap, name);
            }
        }
        closedir(d);
    }
}

int session_complete(void *ud, int what, const char *key, const char *prefix, char ***out)
{
    Session *s = ud;
    int n = 0, cap = 0;
    *out = NULL;
    if (what == ARG_CONFIG_KEYVAL) {
        int nk;
        const ConfigKey *keys = config_keys(&nk);
        for (int i = 0; i < nk; i++)
            if (!strncmp(keys[i].key, prefix, strlen(prefix)))
                push_cand(out, &n, &cap, keys[i].key);
    } else if (what == COMPLETE_CONFIG_VALUES && key) {
        const ConfigKey *k = config_find_key(key);
        if (k && k->type == CFG_ENUM) {
            char vals[256];
            snprintf(vals, sizeof vals, "%s", k->values);
            for (char *sv = NULL, *v = strtok_r(vals, "|", &sv); v; v = strtok_r(NULL, "|", &sv))
                push_cand(out, &n, &cap, v);
        } else if (k && k->type == CFG_BOOL) {
            push_cand(out, &n, &cap, "true");
            push_cand(out, &n, &cap, "false");
        } else if (!strcmp(key, "data")) {
            push_cand(out, &n, &cap, "tinyshakespeare");
            push_cand(out, &n, &cap, "wikitext-small");
        }
    } else if (what == ARG_EXPERIMENT) {
        complete_experiments(prefix, out, &n, &cap);
    } else if (what == ARG_RUN_ID) {
        RunStore *st = session_store(s);
        RunRow *rows = NULL;
        int nr = 0;
        char err[LM_ERR_LEN];
        if (st && runstore_list(st, NULL, "recent", 200, &rows, &nr, err) == LM_OK) {
            for (int i = 0; i < nr; i++) {
                char id[32];
                snprintf(id, sizeof id, "%ld", rows[i].id);
                if (!strncmp(id, prefix, strlen(prefix)))
                    push_cand(out, &n, &cap, id);
            }
            runstore_rows_free(rows, nr);
        }
    }
    return n;
}
