/* session.c — session lifetime, output, the store connection and completion (see
 * session.h). The job (what the session trains, the reap, what the screen follows) is
 * session_job.c's; the open model session_view.c's; dispatch is commands.c's. */
#include "session.h"

#include "safetext.h"
#include "err.h"
#include "run_launch.h"
#include "sysinfo.h"

#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 when a line can be written to fd without blocking (a file always can): a reader
 * that is slow but reading gets a tenth of a second, until a first line is dropped; from
 * then on nothing waits (mpirun kills its ranks one second after its SIGTERM). */
static int output_ready(int fd)
{
    static int dropped;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int ready = poll(&p, 1, dropped ? 0 : 100) == 1 && (p.revents & POLLOUT);
    dropped |= !ready;
    return ready;
}

static void default_writer(void *ud, int kind, const char *text)
{
    const Session *s = ud;   /* this session (session_init, session_set_writer) */
    FILE *f = kind == SESSION_OUT_ERROR ? stderr : stdout;
    /* a session ending on SIGTERM/SIGHUP never waits for a reader that has stopped reading
     * (mpirun once told to end its ranks; a pager): the line is dropped, so the session
     * gets on with stopping its run cleanly before it is killed */
    if (s && s->terminating && !output_ready(fileno(f)))
        return;
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
    s->writer_ud = s;
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
    s->writer_ud = w ? ud : s;
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
    char small[8192], *buf = small;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    /* a longer line (a 65 KB note) is printed whole, never cut silently (issue 46) */
    if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)))
        vsnprintf(buf, (size_t)n + 1, fmt, again);
    else if (!buf)
        buf = small;
    va_end(again);
    /* stored and generated text (names, notes, samples) never drives the terminal */
    char *safe = safetext_dup(buf, SAFETEXT_KEEP_NEWLINES);
    s->writer(s->writer_ud, SESSION_OUT_TEXT, safe ? safe : buf);
    free(safe);
    if (buf != small) free(buf);
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
