/* cmd_sample_runs.c — `sample runs=3,7,9 prompt="ROMEO:" tokens=200`: one prompt through
 * several stored runs with the same seed, temperature and sampling settings, each from
 * its best checkpoint (else its newest; which=final: its newest), shown side by side: a
 * column per run in text, one "sample" JSON event per run as each finishes. Each text is
 * also recorded as the run's sample (settings end in "runs=3,7,9"), which is where the
 * dashboard's samples view reads them. The session's open model is left as it was. Not
 * here: sampling itself (core/train/sample.c), loading a checkpoint into the session
 * (cmd_model.c). */
#include "cmd_analysis.h"

#include "checkpoint.h"
#include "run_weights.h"
#include "err.h"
#include "runrecord.h"
#include "runstore_group.h"
#include "sample.h"
#include "output.h"
#include "jsonval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SR_MAX_RUNS 9
#define SR_WIDTH 120     /* the side-by-side table's width in columns */

typedef struct {
    long id;
    long step;           /* the training step of the weights sampled (-1: unknown) */
    char name[64], source[600];
    char *text;          /* malloc'd generated text */
    SampleStats st;
} Column;

static const char *arg(int argc, const LexWord *argv, const char *key)
{
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, key)) return argv[i].value;
    return NULL;
}

static int arg_num(Session *s, int argc, const LexWord *argv, const char *key, double lo,
                   double hi, double *v)
{
    const char *t = arg(argc, argv, key);
    if (!t) return 0;
    char *end;
    double x = strtod(t, &end);
    if (end == t || *end || !(x >= lo && x <= hi))
        return session_error(s, LM_EARG, "%s=%s: expected a number from %g to %g", key, t, lo, hi);
    *v = x;
    return 0;
}

/* "3,7,#9" into ids. Count, or -1 after reporting. */
static int parse_runs(Session *s, const char *list, long *ids)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n == SR_MAX_RUNS)
            return session_error(s, LM_EARG, "runs=: at most %d runs side by side", SR_MAX_RUNS), -1;
        long id = session_parse_run_id(w);
        if (id <= 0)
            return session_error(s, LM_EARG, "runs=%s: '%s' is not a run id (give ids separated "
                                 "by commas, e.g. runs=3,7,9)", list, w), -1;
        for (int k = 0; k < n; k++)   /* the same run twice: identical columns */
            if (ids[k] == id)
                return session_error(s, LM_EARG, "runs=%s: run %ld is listed twice; each run "
                                     "is sampled once, side by side with the others", list,
                                     id), -1;
        ids[n++] = id;
    }
    if (n == 0) return session_error(s, LM_EARG, "runs= is empty: give run ids, e.g. runs=3,7,9"), -1;
    return n;
}

/* Run c->id's name and its checkpoint into c: which = "best" (core/run's record:
 * best.safetensors, else the kept file of the best step, else the newest) or "final" (the
 * newest). LM_OK, or reports. Called for every run before any is sampled, so a bad id
 * fails the command before it prints anything. */
static int find_run(Session *s, RunStore *st, Column *c, const char *which)
{
    char err[LM_ERR_LEN];
    RunRow row;
    RunRecord f;
    if (runstore_get(st, c->id, &row, err))
        return session_error(s, LM_EARG, "no run %ld — `runs` lists them", c->id);
    snprintf(c->name, sizeof c->name, "%s", row.name);
    int rc = runrecord_read(st, &row, &f, err);
    if (rc) {
        runstore_row_free(&row);
        return session_error(s, rc, "run %ld: %s", c->id, err);
    }
    const RunCkpt *k = NULL;
    char asked[sizeof c->source];
    long step = 0;
    int none = strcmp(which, "final") ? runrecord_pick(&f, "best", 0, &k, err) &&
                                            runrecord_pick(&f, "final", 0, &k, err)
                                      : runrecord_pick(&f, "final", 0, &k, err) != 0;
    if (none && f.owner_live) {   /* a live run without one yet: its owner writes one now */
        if (!s->json)
            session_printf(s, "run %ld has no checkpoint yet: asking its owner (pid %ld) to "
                           "write one", c->id, f.owner_pid);
        rc = run_weights_request(st, c->id, RUN_WEIGHTS_WAIT_S, asked, sizeof asked, &step,
                                 err);
        if (rc)
            rc = session_error(s, rc, "%s", err);
        else
            snprintf(c->source, sizeof c->source, "%s", asked);
    } else if (none)
        rc = session_error(s, LM_EARG, "run %ld has no checkpoint in '%s' (it wrote none, or "
                           "its files were removed)", c->id, row.checkpoint_dir);
    else if ((size_t)snprintf(c->source, sizeof c->source, "%s", k->path) >= sizeof c->source)
        rc = session_error(s, LM_EARG, "run %ld: its checkpoint path is longer than %zu bytes: "
                           "move its run folder somewhere shorter", c->id,
                           sizeof c->source - 1);
    runrecord_free(&f);
    runstore_row_free(&row);
    return rc;
}

/* Run id's model and tokenizer from the checkpoint find_run chose, for B=1. */
static int load_run(Session *s, Column *c, Model **m, Tokenizer **tok)
{
    char err[LM_ERR_LEN];
    *m = NULL, *tok = NULL;
    CheckpointInfo info;
    SafeTensors *sf = NULL;
    if (checkpoint_open(c->source, &info, &sf, err))
        return session_error(s, LM_EFORMAT, "run %ld: %s", c->id, err);
    c->step = info.has_state ? info.ts.step : -1;
    int rc = LM_OK;
    if (!info.has_config || !info.tokenizer_json)
        rc = session_error(s, LM_EFORMAT, "run %ld: %s has no configuration or tokenizer inside",
                           c->id, c->source);
    if (!rc && tokenizer_load(info.tokenizer_json, tok, err))
        rc = session_error(s, LM_EFORMAT, "run %ld: damaged tokenizer: %s", c->id, err);
    if (!rc && checkpoint_check_fits(&info.cfg, tokenizer_vocab_size(*tok), sf, "", err))
        rc = session_error(s, LM_EFORMAT, "run %ld: %s: %s", c->id, c->source, err);
    if (!rc && model_check_memory_weights(&info.cfg, tokenizer_vocab_size(*tok), 1,
                                          info.cfg.bptt, err) == LM_ENOMEM)
        rc = session_error(s, LM_ENOMEM, "run %ld: %s", c->id, err);
    if (!rc && (!(*m = model_create_weights(&info.cfg, tokenizer_vocab_size(*tok), err)) ||
                model_alloc(*m, 1, info.cfg.bptt, err) || checkpoint_read_weights(*m, sf, "", err)))
        rc = session_error(s, LM_EFORMAT, "run %ld: cannot build its model: %s", c->id, err);
    if (*m) (*m)->training = 0;
    safetensors_close(sf);
    checkpoint_info_free(&info);
    if (rc) {
        model_destroy(*m), *m = NULL;
        tokenizer_destroy(*tok), *tok = NULL;
    }
    return rc;
}

static int stop_cb(void *ud, const char *piece, size_t len)
{
    (void)piece, (void)len;
    return ((Session *)ud)->interrupt;
}

/* The next line of at most w display cells from *p (a newline ends one early). */
static int take_line(const char **p, int w, char *out, size_t cap)
{
    const char *q = *p;
    size_t o = 0;
    int cells = 0;
    if (!*q) return 0;
    while (*q && *q != '\n' && cells < w && o + 5 < cap) {
        int len = 1;
        unsigned char b = (unsigned char)*q;
        if (b >= 0xf0) len = 4;
        else if (b >= 0xe0) len = 3;
        else if (b >= 0xc0) len = 2;
        for (int k = 0; k < len && q[k]; k++) out[o++] = *q == '\t' ? ' ' : q[k];
        q += len, cells++;
    }
    for (; cells < w; cells++) out[o++] = ' ';
    out[o] = 0;
    if (*q == '\n') q++;
    *p = q;
    return 1;
}

static void print_columns(Session *s, const Column *c, int n, const char *prompt)
{
    int w = (SR_WIDTH - 3 * (n - 1)) / n;
    if (w < 16) w = 16;
    char line[4096], piece[512], head[128];
    const char *pos[SR_MAX_RUNS];
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        snprintf(head, sizeof head, "#%ld %s", c[k].id, c[k].name);
        const char *hp = head;
        take_line(&hp, w, piece, sizeof piece);
        off += (size_t)snprintf(line + off, sizeof line - off, "%s%s", k ? " │ " : "", piece);
        pos[k] = c[k].text;
    }
    while (off > 0 && off < sizeof line && line[off - 1] == ' ') line[--off] = 0;
    session_printf(s, "prompt: %s", prompt);
    session_printf(s, "%s", line);
    for (int more = 1; more;) {
        more = 0, off = 0;
        for (int k = 0; k < n; k++) {
            if (!take_line(&pos[k], w, piece, sizeof piece)) take_line(&(const char *){" "}, w, piece, sizeof piece);
            else more = 1;
            off += (size_t)snprintf(line + off, off < sizeof line ? sizeof line - off : 0, "%s%s",
                                    k ? " │ " : "", piece);
        }
        while (off > 0 && off < sizeof line && line[off - 1] == ' ') line[--off] = 0;
        if (more) session_printf(s, "%s", line);
    }
}

void cmd_sample_record(Session *s, RunStore *st, long run, long step, const char *prompt,
                       const char *settings, const char *text)
{
    char err[LM_ERR_LEN], err2[LM_ERR_LEN];
    if (!runstore_log_sample(st, run, step > 0 ? step : 0, prompt, settings, text, err) &&
        !runstore_flush(st, err))
        return;
    RunRow row;
    int gone = runstore_get(st, run, &row, err2) == LM_EARG;
    if (!gone)
        runstore_row_free(&row);
    session_printf(s, "warning: run %ld's sample not recorded: %s", run,
                   gone ? "the run was deleted from the store after its weights were read "
                          "(the text above is all there is of this sample)" : err);
}

int cmd_sample_runs(Session *s, int argc, const LexWord *argv)
{
    const char *list = arg(argc, argv, "runs");
    if (!list)   /* the table routes only `sample runs=...` here */
        return session_error(s, LM_EARG, "sample: runs=ID,ID,... names the runs to sample");
    int status, *rc = &status;
    SampleOptions o;
    sample_options_default(&o);
    double tokens = o.n_tokens, temp = o.temperature, top_k = 0, top_p = 1, seed = o.seed;
    long ids[SR_MAX_RUNS];
    int n = parse_runs(s, list, ids);
    *rc = LM_EARG;
    if (n < 0 || arg_num(s, argc, argv, "tokens", 1, 100000, &tokens) ||
        arg_num(s, argc, argv, "temp", 0, 100, &temp) ||
        arg_num(s, argc, argv, "top_k", 0, 1e7, &top_k) ||
        arg_num(s, argc, argv, "top_p", 1e-6, 1, &top_p) ||
        arg_num(s, argc, argv, "seed", 0, 1e18, &seed))
        return LM_EARG;
    o.n_tokens = (int)tokens, o.temperature = (float)temp, o.top_k = (int)top_k;
    o.top_p = (float)top_p, o.seed = (uint64_t)seed;
    const char *prompt = arg(argc, argv, "prompt"), *cache = arg(argc, argv, "cache");
    const char *which = arg(argc, argv, "which");
    if (!which) which = "best";
    if (strcmp(which, "best") && strcmp(which, "final"))
        return session_error(s, LM_EARG, "which=%s: use best (each run's best checkpoint, the "
                             "default) or final (its newest)", which);
    o.use_cache = !cache || strcmp(cache, "false");
    if (!prompt) prompt = "";
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    char settings[256], err[LM_ERR_LEN];
    snprintf(settings, sizeof settings, "tokens=%d temp=%g top_k=%d top_p=%g seed=%llu runs=%s",
             o.n_tokens, o.temperature, o.top_k, o.top_p, (unsigned long long)o.seed, list);
    Column c[SR_MAX_RUNS] = {{0}};
    s->interrupt = 0;
    *rc = LM_OK;
    for (int k = 0; k < n && !*rc; k++) {   /* every run checked before any is sampled */
        c[k].id = ids[k];
        *rc = find_run(s, st, &c[k], which);
    }
    for (int k = 0; k < n && !*rc; k++) {
        Model *m;
        Tokenizer *tok;
        if ((*rc = load_run(s, &c[k], &m, &tok))) break;
        *rc = sample_generate(m, tok, prompt, &o, stop_cb, s, &c[k].text, &c[k].st, err);
        model_destroy(m);
        tokenizer_destroy(tok);
        if (*rc) {
            session_error(s, *rc, "run %ld: %s", ids[k], err);
            break;
        }
        cmd_sample_record(s, st, c[k].id, c[k].step, prompt, settings, c[k].text);
        if (s->json) {
            json_t *e = json_pack("{s:s s:I s:o s:o s:o s:i s:f s:I s:f}", "event", "sample",
                                  "run", (json_int_t)c[k].id, "name", jsonval_str(c[k].name),
                                  "checkpoint", jsonval_str(c[k].source), "prompt",
                                  jsonval_str(prompt), "tokens", c[k].st.generated,
                                  "tokens_per_s", c[k].st.tokens_per_s, "seed",
                                  (json_int_t)o.seed, "temp",
                                  runstore_f32_decimal(o.temperature));
            json_object_set_new(e, "text", jsonval_str(c[k].text));
            session_emit_json(s, e);
        } else {
            session_printf(s, "run #%ld %s: %d tokens, %.0f tokens/s (%s)", c[k].id, c[k].name,
                           c[k].st.generated, c[k].st.tokens_per_s, c[k].source);
        }
    }
    if (!*rc && !s->json) print_columns(s, c, n, prompt);
    char last[1024];   /* what the dashboard's samples view shows */
    snprintf(last, sizeof last, "%s\t%.700s", settings, prompt);
    if (!*rc && runstore_setting_set(st, "samples.last", last, err))
        session_printf(s, "warning: %s", err);
    for (int k = 0; k < n; k++) free(c[k].text);
    return *rc;
}
