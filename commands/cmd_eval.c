/* cmd_eval.c — talking to a model: eval (loss/perplexity on a split), sample (streamed
 * text), coeffs (the Dispatcher's per-level gates, per layer and per token). They use
 * the session's view model: the live weights of the running run, or an opened run. */
#include "session.h"
#include "cmd_eval.h"
#include "cmd_analysis.h"

#include "dataset_cache.h"
#include "err.h"
#include "evaluate.h"
#include "gate_probe.h"
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *arg(int argc, const LexWord *argv, const char *key)
{
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, key))
            return argv[i].value;
    return NULL;
}

static int arg_num(Session *s, int argc, const LexWord *argv, const char *key, double lo,
                   double hi, double *v)
{
    const char *t = arg(argc, argv, key);
    if (!t)
        return 0;
    char *end;
    double x = strtod(t, &end);
    if (end == t || *end || !(x >= lo && x <= hi))
        return session_error(s, LM_EARG, "%s=%s: expected a number from %g to %g", key, t, lo, hi);
    *v = x;
    return 0;
}

/* The dataset of the view model: the trainer's, or the opened run's data re-encoded with
 * its own tokenizer. */
static const Dataset *view_data(Session *s)
{
    if (s->trainer)
        return trainer_dataset(s->trainer);
    if (s->has_view_ds)
        return &s->view_ds;
    char err[LM_ERR_LEN];
    char *json = tokenizer_save(s->view_tok);
    Tokenizer *copy = NULL;
    if (!json || tokenizer_load(json, &copy, err)) {
        free(json);
        session_error(s, LM_ENOMEM, "cannot copy the tokenizer");
        return NULL;
    }
    free(json);
    if (dataset_load_prepared(&s->view_ds, &s->view->cfg, s->db_path, copy, err)) {
        session_error(s, LM_EIO, "the model's data: %s", err);
        return NULL;
    }
    s->has_view_ds = 1;
    return &s->view_ds;
}

int cmd_eval(Session *s, int argc, const LexWord *argv)
{
    double batches = 0;
    long run = 0;   /* eval RUN_ID: that run's best checkpoint, not the open model */
    for (int i = 1; i < argc; i++)
        if (!argv[i].key && (i > 1 || (run = session_parse_run_id(argv[i].text)) <= 0))
            return session_error(s, LM_EARG, "eval: unexpected '%s' (eval [RUN_ID] "
                                 "[split=valid|test] [batches=N])", argv[i].text);
    if (arg_num(s, argc, argv, "batches", 0, 1e6, &batches))
        return LM_EARG;
    int orc = run > 0 ? session_open_run(s, run, "best", 0) : session_prepare_view(s);
    if (orc)
        return orc;
    const char *split_name = arg(argc, argv, "split");
    int split = split_name && !strcmp(split_name, "test") ? SPLIT_TEST : SPLIT_VALID;
    const Dataset *ds = view_data(s);
    if (!ds)
        return LM_EIO;
    if (ds->n[split] < 2)
        return session_error(s, LM_EARG, "the %s split of %s is empty (a single text file has "
                             "only train and valid)", dataset_split_name(split), ds->name);
    Model *m = s->view;
    int *x = malloc((size_t)m->B * m->T * sizeof(int)), *y = malloc((size_t)m->B * m->T * sizeof(int));
    Rng rng;
    rng_seed(&rng, (uint64_t)m->cfg.seed);
    EvalResult r;
    char err[LM_ERR_LEN];
    size_t chars = m->cfg.tokenizer_kind == TOKENIZER_CHAR ? ds->n[split] - 1 : 0;
    s->interrupt = 0;
    EvalLimits lim = {0};   /* Ctrl-C during a whole split: the tokens done, an estimate */
    int rc = x && y ? evaluate_split_limited(m, NULL, &ds->split[split], m->cfg.bptt, m->B,
                                             (int)batches, 0, &rng, chars, &s->interrupt, &lim,
                                             x, y, &r, err)
                    : err_set(err, LM_ENOMEM, "out of memory");
    free(x);
    free(y);
    if (rc)
        return session_error(s, rc, "%s", err);
    if (s->json) {
        json_t *o = json_pack("{s:s s:s s:f s:f s:I s:s s:b}", "event", "eval", "split",
                              dataset_split_name(split), "loss", r.loss, "ppl", r.ppl, "tokens",
                              (json_int_t)r.tokens, "model", s->view_source,
                              "partial", r.partial);
        json_object_set_new(o, "bpc", isnan(r.bpc) ? json_null() : json_real(r.bpc));
        session_emit_json(s, o);
    } else {
        char ppl[METRIC_PPL_TEXT];
        session_printf(s, "%s %s: loss %.4f  ppl %s  over %ld tokens%s", s->view_source,
                       dataset_split_name(split), r.loss, metric_ppl_text(r.ppl, ppl), r.tokens,
                       batches > 0 ? " (estimate)" : r.partial ? " (an estimate: interrupted "
                       "before the split's end)" : "");
        if (!isnan(r.bpc))
            session_printf(s, "  bits per character %.4f", r.bpc);
    }
    return LM_OK;
}

static int stream_piece(void *ud, const char *piece, size_t len)
{
    Session *s = ud;
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), piece);
    if (!s->json)
        session_stream(s, buf);
    return s->interrupt;
}

int cmd_sample(Session *s, int argc, const LexWord *argv)
{
    SampleOptions o;
    sample_options_default(&o);
    double tokens = o.n_tokens, temp = o.temperature, top_k = 0, top_p = 1, seed = o.seed;
    if (arg(argc, argv, "which"))
        return session_error(s, LM_EARG, "which= goes with runs=ID (`sample runs=ID "
                             "which=final`); the open model is sampled as it is (`open ID "
                             "which=final` opens another checkpoint)");
    if (arg_num(s, argc, argv, "tokens", 1, 100000, &tokens) ||
        arg_num(s, argc, argv, "temp", 0, 100, &temp) ||
        arg_num(s, argc, argv, "top_k", 0, 1e7, &top_k) ||
        arg_num(s, argc, argv, "top_p", 1e-6, 1, &top_p) ||
        arg_num(s, argc, argv, "seed", 0, 1e18, &seed) || session_prepare_view(s))
        return LM_EARG;
    const char *cache = arg(argc, argv, "cache");
    o.n_tokens = (int)tokens;
    o.temperature = (float)temp;
    o.top_k = (int)top_k;
    o.top_p = (float)top_p;
    o.seed = (uint64_t)seed;
    o.use_cache = !cache || strcmp(cache, "false");
    const char *positions = arg(argc, argv, "positions");
    o.slide_positions = positions && !strcmp(positions, "slide");
    const char *prompt = arg(argc, argv, "prompt");
    if (!prompt)
        prompt = "";
    if (strlen(prompt) > 65536)
        return session_error(s, LM_EARG, "prompt of %zu bytes: keep it under 64 KiB (only the "
                             "last bptt tokens are used anyway)", strlen(prompt));
    char *text = NULL, err[LM_ERR_LEN], unknown[512];
    SampleStats st;
    s->interrupt = 0;
    int *ids = NULL;   /* a prompt the model cannot read is refused before it is echoed
                          (it was printed, then the error on the same line) */
    size_t n_ids = 0;
    if (tokenizer_encode_prompt(s->view_tok, prompt, strlen(prompt), &ids, &n_ids, err))
        return session_error(s, LM_EARG, "prompt: %s", err);
    free(ids);
    int n_unknown = sample_unknown_words(s->view_tok, prompt, unknown, sizeof unknown);
    if (n_unknown && !s->json)
        session_printf(s, "note: %d prompt word%s not in the vocabulary, read as <unk>: %s",
                       n_unknown, n_unknown == 1 ? " is" : "s are", unknown);
    if (!s->json)
        session_stream(s, prompt);
    int rc = sample_generate(s->view, s->view_tok, prompt, &o, stream_piece, s, &text, &st, err);
    if (rc)
        return session_error(s, rc, "%s", err);
    if (s->json) {
        json_t *o = json_pack("{s:s s:s s:s s:i s:f s:b}", "event", "sample", "prompt",
                              prompt, "text", text, "tokens", st.generated,
                              "tokens_per_s", st.tokens_per_s, "cached", st.cached);
        json_t *unk = json_array();
        for (char *sv = NULL, *w = strtok_r(unknown, " ", &sv); w; w = strtok_r(NULL, " ", &sv))
            json_array_append_new(unk, json_string(w));
        json_object_set_new(o, "unknown", unk);
        json_object_set_new(o, "prompt_tokens", json_integer(st.prompt_tokens));
        json_object_set_new(o, "weights", json_string(s->view_source));
        json_object_set_new(o, "step", s->view_step >= 0 ? json_integer(s->view_step)
                                                         : json_null());
        session_emit_json(s, o);
    } else {
        session_stream(s, "\n");
        session_printf(s, "(%d tokens, %.0f tokens/s%s; weights: %s)", st.generated,
                       st.tokens_per_s, st.cached ? ", cached decoding" : ", window recompute",
                       s->view_source);
    }
    if (s->view_run > 0 && session_store(s)) {
        char settings[160];
        snprintf(settings, sizeof settings, "tokens=%d temp=%g top_k=%d top_p=%g seed=%llu",
                 o.n_tokens, o.temperature, o.top_k, o.top_p, (unsigned long long)o.seed);
        cmd_sample_record(s, s->store, s->view_run, s->view_step, prompt, settings, text);
    }
    free(text);
    return LM_OK;
}

static void coeff_table(Session *s, const GateProbe *gp, const int *ids, int layer)
{
    int L = gp->levels, T = gp->T;
    json_t *arr = s->json ? json_array() : NULL;
    for (int l = 0; l < gp->layers; l++) {
        if ((layer >= 0 && l != layer) || !gp->coeff[l])
            continue;
        char line[1024], shown[64];
        int w = 6;   /* the token column: as wide as the widest token (at most 24), never cut
                        to 6 ("releas") */
        for (int j = 0; j < T; j++) {
            const char *tt = tokenizer_token_text(s->view_tok, ids[j]);
            int len = tt ? (int)strlen(tt) : 1;
            w = len > w ? len : w;
        }
        w = w < 24 ? w : 24;
        char head[32];
        snprintf(head, sizeof head, "layer %d  token", l);
        int o = snprintf(line, sizeof line, "%-*s", 8 + w, head);
        for (int k = 0; k < L && o < 900; k++)
            o += snprintf(line + o, sizeof line - (size_t)o, "%6d", 1 << k);
        if (!arr)
            session_printf(s, "%s   (shift)", line);
        for (int j = 0; j < T; j++) {
            const char *tt = tokenizer_token_text(s->view_tok, ids[j]);
            json_t *row = arr ? json_array() : NULL;
            snprintf(shown, sizeof shown, "%s", !tt ? "?" : !strcmp(tt, " ") ? "' '"
                                               : !strcmp(tt, "\n") ? "\\n" : tt);
            if ((int)strlen(shown) > w)   /* a longer one is marked cut, not silently */
                snprintf(shown + w - 1, sizeof shown - (size_t)(w - 1), "~");
            o = snprintf(line, sizeof line, "        %-*s", w, shown);
            for (int k = 0; k < L; k++) {
                float g = gate_probe_token(gp, l, 0, j, k);
                int masked = gate_probe_masked(gp, j, k);
                if (row)
                    json_array_append_new(row, masked ? json_null() : json_real(g));
                else if (masked)
                    o += snprintf(line + o, sizeof line - (size_t)o, "     ·");
                else
                    o += snprintf(line + o, sizeof line - (size_t)o, "%6.2f", g);
            }
            if (arr)
                json_array_append_new(arr, json_pack("{s:i s:i s:s s:o}", "layer", l, "position",
                                                     j, "token", tt ? tt : "", "gates", row));
            else
                session_printf(s, "%s", line);
        }
    }
    if (arr)
        session_emit_json(s, json_pack("{s:s s:o}", "event", "coeffs", "tokens", arr));
}

int cmd_coeffs(Session *s, int argc, const LexWord *argv)
{
    double layer = -1;
    if (arg_num(s, argc, argv, "layer", 0, 63, &layer) || session_prepare_view(s))
        return LM_EARG;
    Model *m = s->view;
    if (!m->n_gate_layers)
        return session_error(s, LM_EARG, "coeffs: %s has no gates (only Dispatcher models do)",
                             m->cfg.model);
    if (layer >= m->n_gate_layers)
        return session_error(s, LM_EARG, "layer=%d: the model has layers 0..%d", (int)layer,
                             m->n_gate_layers - 1);
    const char *prompt = arg(argc, argv, "prompt");
    if (!prompt)
        prompt = "ROMEO:\nBut soft, what light";
    int *ids = NULL;
    size_t n = 0;
    char err[LM_ERR_LEN];
    if (tokenizer_encode_prompt(s->view_tok, prompt, strlen(prompt), &ids, &n, err))
        return session_error(s, LM_EARG, "%s", err);
    if (n == 0) {
        free(ids);
        return session_error(s, LM_EARG, "coeffs: the prompt is empty");
    }
    int T = n > (size_t)m->cfg.bptt ? m->cfg.bptt : (int)n;
    const int *win = ids + n - T;
    GateProbe gp;
    int rc = gate_probe_run(&gp, m, win, 1, T, GATE_PROBE_TOKENS, err);
    if (rc) {
        free(ids);
        return session_error(s, rc, "coeffs: %s", err);
    }
    if (!s->json && (size_t)T < n)   /* the model sees bptt tokens: the prompt's last */
        session_printf(s, "gate coefficient per level for the last %d of the prompt's %zu "
                       "tokens, the model's window (bptt=%d) (%s); · = level masked (shift "
                       "beyond the start)", T, n, m->cfg.bptt, s->view_source);
    else if (!s->json)
        session_printf(s, "gate coefficient per level for each token of the prompt (%s); "
                       "· = level masked (shift beyond the start)", s->view_source);
    coeff_table(s, &gp, win, (int)layer);
    gate_probe_free(&gp);
    free(ids);
    return LM_OK;
}
