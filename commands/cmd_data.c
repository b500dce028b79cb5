/* cmd_data.c — `data prepare SPEC [key=value ...]` (tokenize a corpus once into the token
 * cache), `data list` (each cache: size, tokens, sources, tokenizer, fresh or stale) and
 * `data rm KEY|SPEC [yes]` (free one; says what it would remove without yes, as `rm`).
 * The cache itself is core/data/tokcache.c; this file parses, asks and prints. */
#include "cmd_data.h"

#include "err.h"
#include "safetext.h"
#include "sysinfo.h"
#include "tokcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    double last_line, last_json;
    int bar;                 /* a bar is drawn on stderr (to end with a newline) */
} ProgressState;

static ProgressState g_prog;


static void fmt_eta(char *b, size_t cap, double s)
{
    if (s < 0) snprintf(b, cap, "?");
    else session_fmt_duration(b, cap, s);
}

/* The progress of a prepare: a bar on a terminal's stderr, a line every few seconds in
 * the dashboard (its output pane) or a pipe, JSON events with --json. Stops after Ctrl-C. */
static int data_progress(const TokCacheProgress *p, void *ud)
{
    Session *s = ud;
    double t = sysinfo_now();
    int tty = !s->json && !s->quiet_progress && isatty(STDERR_FILENO);
    if (p->message) {
        if (g_prog.bar) fputc('\n', stderr);
        g_prog.bar = 0;
        if (s->json)
            session_emit_json(s, json_pack("{s:s s:s s:s}", "event", p->phase == TOKCACHE_DONE ?
                                           "data_done" : "data_note", "key", p->key ? p->key : "",
                                           "message", p->message));
        else
            session_printf(s, "%s", p->message);
        return s->interrupt != 0;
    }
    if (p->phase == TOKCACHE_LIST && !s->json) {   /* a directory of many files */
        if (tty) {
            fprintf(stderr, "\rlisting the corpus's files: %llu looked at (Ctrl-C stops)",
                    p->tokens);
            fflush(stderr);
            g_prog.bar = 1;
        } else if (t - g_prog.last_line >= (s->quiet_progress ? 1.0 : 10.0)) {
            g_prog.last_line = t;
            session_printf(s, "listing the corpus's files: %llu looked at", p->tokens);
        }
        return s->interrupt != 0;
    }
    char eta[32];
    fmt_eta(eta, sizeof eta, p->eta_seconds);
    double frac = p->bytes_total ? (double)p->bytes_done / (double)p->bytes_total : 0;
    if (s->json) {
        if (t - g_prog.last_json >= 1.0) {
            g_prog.last_json = t;
            session_emit_json(s, json_pack("{s:s s:s s:s s:I s:I s:I s:f s:f s:f}", "event",
                                           "data_progress", "key", p->key ? p->key : "", "phase",
                                           tokcache_phase_name(p->phase), "bytes", (json_int_t)p->bytes_done,
                                           "bytes_total", (json_int_t)p->bytes_total, "tokens",
                                           (json_int_t)p->tokens, "mb_per_s", p->mb_per_s,
                                           "eta_s", p->eta_seconds, "seconds", p->seconds));
        }
    } else if (tty) {
        char bar[31];
        int k = (int)(frac * 30);
        for (int i = 0; i < 30; i++) bar[i] = i < k ? '#' : '.';
        bar[30] = 0;
        fprintf(stderr, "\r%-6s [%s] %3.0f%% %.1f/%.1f MB %.2fM tokens %.1f MB/s ETA %-8s",
                tokcache_phase_name(p->phase), bar, 100 * frac, (double)p->bytes_done / 1e6,
                (double)p->bytes_total / 1e6, (double)p->tokens / 1e6, p->mb_per_s, eta);
        fflush(stderr);
        g_prog.bar = 1;
    } else if (t - g_prog.last_line >= (s->quiet_progress ? 1.0 : 10.0)) {
        g_prog.last_line = t;   /* the dashboard's output pane, or a log */
        session_printf(s, "%s: %.0f%% of %.1f MB, %.2fM tokens, %.1f MB/s, ETA %s",
                       tokcache_phase_name(p->phase), 100 * frac, (double)p->bytes_total / 1e6,
                       (double)p->tokens / 1e6, p->mb_per_s, eta);
    }
    return s->interrupt != 0;
}

/* The configuration of a data command: the session's with the key=value words applied
 * (force=, yes and a bare SPEC taken out). */
static int data_config(Session *s, int argc, const LexWord *argv, Config *c, const char **spec,
                       int *force, int *yes)
{
    char err[LM_ERR_LEN];
    *c = s->cfg;
    *spec = NULL;
    for (int i = 2; i < argc; i++) {
        if (argv[i].key && !strcmp(argv[i].key, "force")) *force = !strcmp(argv[i].value, "true");
        else if (!argv[i].key && (!strcmp(argv[i].text, "yes") || !strcmp(argv[i].text, "--yes"))) *yes = 1;
        else if (!argv[i].key && !*spec) *spec = argv[i].text;
        else if (!argv[i].key)
            return session_error(s, LM_EARG, "data: one SPEC at a time ('%s' and '%s'); list "
                                 "several sources with commas: a.txt,b/,c.jsonl.zst", *spec, argv[i].text);
        else if (config_set(c, argv[i].key, argv[i].value, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (*spec && config_set(c, "data", *spec, err)) return session_error(s, LM_EARG, "%s", err);
    return LM_OK;
}

static int data_root(Session *s, const Config *c, char *root, size_t cap)
{
    char err[LM_ERR_LEN];
    if (tokcache_root(s->db_path, c->tokens_dir, root, cap, err)) return session_error(s, LM_EARG, "%s", err);
    return LM_OK;
}

static int data_prepare(Session *s, int argc, const LexWord *argv)
{
    Config c;
    const char *spec;
    int force = 0, yes = 0;
    char root[1100], dir[1200], err[LM_ERR_LEN];
    if (data_config(s, argc, argv, &c, &spec, &force, &yes) || data_root(s, &c, root, sizeof root))
        return LM_EARG;
    TokCacheRequest r;
    if (tokcache_request_config(&r, &c, root, NULL, err)) return session_error(s, LM_EARG, "%s", err);
    r.force = force;
    memset(&g_prog, 0, sizeof g_prog);
    s->interrupt = 0;
    int rc = tokcache_ensure(&r, data_progress, s, dir, sizeof dir, err);
    if (g_prog.bar) fputc('\n', stderr);
    g_prog.bar = 0;
    if (rc) return session_error(s, rc, "%s", err);
    TokCacheEntry e;
    tokcache_inspect(dir, &e);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:s s:I s:I s:I s:s s:i s:I}", "ok", 1, "key", e.key,
                                       "dir", dir, "train_tokens", (json_int_t)e.tokens[0],
                                       "valid_tokens", (json_int_t)e.tokens[1], "test_tokens",
                                       (json_int_t)e.tokens[2], "tokenizer", e.tokenizer,
                                       "vocab_size", e.vocab_size, "bytes", (json_int_t)e.bytes));
    else
        session_printf(s, "%s: %llu train, %llu valid, %llu test tokens; %.1f MB in %s", e.key,
                       e.tokens[0], e.tokens[1], e.tokens[2], (double)e.bytes / 1e6, dir);
    return LM_OK;
}

static int data_list(Session *s, int argc, const LexWord *argv)
{
    Config c;
    const char *spec;
    int force = 0, yes = 0;
    char root[1100], err[LM_ERR_LEN];
    if (data_config(s, argc, argv, &c, &spec, &force, &yes) || data_root(s, &c, root, sizeof root))
        return LM_EARG;
    TokCacheEntry *e;
    int n;
    if (tokcache_list(root, &e, &n, err)) return session_error(s, LM_EIO, "%s", err);
    if (s->json) {
        json_t *a = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(a, json_pack("{s:s s:s s:s s:s s:I s:I s:I s:I s:s s:i s:s s:i s:I}",
                "key", e[i].key, "state", tokcache_state_name(e[i].state), "why", e[i].why,
                "dir", e[i].dir, "bytes", (json_int_t)e[i].bytes, "train_tokens", (json_int_t)e[i].tokens[0],
                "valid_tokens", (json_int_t)e[i].tokens[1], "test_tokens", (json_int_t)e[i].tokens[2],
                "tokenizer", e[i].tokenizer, "vocab_size", e[i].vocab_size, "sources", e[i].sources,
                "n_sources", e[i].n_sources, "created", (json_int_t)e[i].created));
        session_emit_json(s, json_pack("{s:s s:o}", "root", root, "caches", a));
        free(e);
        return LM_OK;
    }
    if (n == 0) session_printf(s, "no prepared tokens in %s (`data prepare SPEC` makes some)", root);
    else session_printf(s, "%-16s  %-10s  %9s  %13s  %-18s  %s", "key", "state", "size", "tokens",
                        "tokenizer", "sources");
    for (int i = 0; i < n; i++) {
        char tk[48], src[1100];
        snprintf(tk, sizeof tk, "%s/%d", e[i].tokenizer[0] ? e[i].tokenizer : "?", e[i].vocab_size);
        safetext_escape(src, sizeof src, e[i].sources, 0);
        session_printf(s, "%-16s  %-10s  %7.1f MB  %13llu  %-18s  %s%s%d file%s", e[i].key,
                       tokcache_state_name(e[i].state), (double)e[i].bytes / 1e6,
                       e[i].tokens[0] + e[i].tokens[1] + e[i].tokens[2], tk, src,
                       src[0] ? " — " : "", e[i].n_sources, e[i].n_sources == 1 ? "" : "s");
        if (e[i].why[0]) {
            char why[1100];
            safetext_escape(why, sizeof why, e[i].why, 0);
            session_printf(s, "    %s", why);
        }
    }
    free(e);
    return LM_OK;
}

static int is_hex_key(const char *w)
{
    if (strlen(w) != TOKCACHE_KEY_LEN) return 0;
    for (; *w; w++)
        if (!strchr("0123456789abcdef", *w)) return 0;
    return 1;
}

static int data_rm(Session *s, int argc, const LexWord *argv)
{
    Config c;
    const char *spec;
    int force = 0, yes = 0;
    char root[1100], err[LM_ERR_LEN], key[TOKCACHE_KEY_LEN + 1];
    if (data_config(s, argc, argv, &c, &spec, &force, &yes) || data_root(s, &c, root, sizeof root))
        return LM_EARG;
    if (!spec) return session_error(s, LM_EARG, "data rm needs a KEY (as `data list` shows) or the "
                                    "SPEC that was prepared: data rm KEY [yes]");
    if (is_hex_key(spec)) {
        snprintf(key, sizeof key, "%s", spec);
    } else {
        TokCacheRequest r;
        if (tokcache_request_config(&r, &c, root, NULL, err) || tokcache_key(&r, key, err))
            return session_error(s, LM_EARG, "%s; `data list` shows the prepared corpora and "
                                 "`data rm KEY yes` deletes one", err);
    }
    char dir[1200];
    if (!tokcache_find(root, key, dir, sizeof dir))   /* nothing: said before any question */
        return session_error(s, LM_EARG, "no prepared tokens %s in '%s'%s (see `data list`)",
                             key, root, is_hex_key(spec) ? "" : " for that corpus");
    TokCacheEntry e;
    tokcache_inspect(dir, &e);
    if (!yes) {
        int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
        if (!s->json && e.state == TOKCACHE_INCOMPLETE)   /* an interrupted prepare's files */
            session_printf(s, "data rm would delete an unfinished prepare of %s (%.1f MB) in %s",
                           key, (double)e.bytes / 1e6, dir);
        else if (!s->json)
            session_printf(s, "data rm would delete the prepared tokens %s (%s, %.1f MB, %s/%d, %s) in %s",
                           key, tokcache_state_name(e.state), (double)e.bytes / 1e6, e.tokenizer,
                           e.vocab_size, e.sources, dir);
        if (!tty)
            return session_error(s, LM_EARG, "data rm deletes for good: add yes (or --yes) to "
                                 "confirm; nothing was deleted");
        session_printf(s, "nothing deleted yet: repeat the command with yes to delete");
        return LM_OK;
    }
    int read = tokcache_in_use(dir);   /* a run reading them keeps their space */
    int rc = tokcache_remove(root, key, err);
    if (rc) return session_error(s, rc == LM_ESTATE ? LM_ESTATE : LM_EARG, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:I s:b}", "ok", 1, "deleted", key, "bytes",
                                       (json_int_t)e.bytes, "still_read", read));
    else
        session_printf(s, "deleted %s %s (%.1f MB %s)", e.state == TOKCACHE_INCOMPLETE ?
                       "the unfinished prepare of" : "the prepared tokens", key,
                       (double)e.bytes / 1e6, read ? "freed only when the runs still reading "
                       "them end: a run keeps the files it has open and trains on to its end"
                       : "freed");
    return LM_OK;
}

int cmd_data(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2 || argv[1].key)
        return session_error(s, LM_EARG, "data needs prepare, list or rm: data prepare SPEC "
                             "[tokenizer=...] [threads=N]");
    if (!strcmp(argv[1].text, "prepare")) return data_prepare(s, argc, argv);
    if (!strcmp(argv[1].text, "list")) return data_list(s, argc, argv);
    if (!strcmp(argv[1].text, "rm")) return data_rm(s, argc, argv);
    return session_error(s, LM_EARG, "data %s: unknown (prepare, list or rm)", argv[1].text);
}
