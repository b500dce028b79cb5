/* names_reference.c — lmlab's names and the reference repositories' (see
 * names_reference.h). The mapping is by prefix, not a table per family: lmlab's
 * transformer names are the reference's with "transformer_encoder.layers." shortened to
 * "blocks." and "self_attn." to "mixer." (linear1/2, norm1/2, encoder, decoder are the
 * same words), and the recurrent names are identical. The reference names are listed in
 * tests/fixtures/reference/README.md. */
#include "names_reference.h"

#include "err.h"
#include "posenc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_LAYERS "transformer_encoder.layers."
#define LM_LAYERS "blocks."

int names_parse(const char *s, NamesKind *out, char *err)
{
    if (!strcmp(s, "lmlab"))
        *out = NAMES_LMLAB;
    else if (!strcmp(s, "reference"))
        *out = NAMES_REFERENCE;
    else
        return err_set(err, LM_EARG, "names=%.60s: use names=lmlab (lmlab's own, the default) "
                       "or names=reference (the reference repositories' state_dict names)", s);
    return LM_OK;
}

void names_map(const char *name, NamesKind k, char *out, size_t cap)
{
    size_t lp = strlen(LM_LAYERS);
    if (k == NAMES_LMLAB || strncmp(name, LM_LAYERS, lp)) {
        snprintf(out, cap, "%s", name);
        return;
    }
    const char *rest = name + lp;            /* "L.mixer.x" or "L.linear1.weight" */
    const char *dot = strchr(rest, '.');
    if (dot && !strncmp(dot, ".mixer.", 7))
        snprintf(out, cap, REF_LAYERS "%.*s.self_attn.%s", (int)(dot - rest), rest, dot + 7);
    else
        snprintf(out, cap, REF_LAYERS "%s", rest);
}

int names_reference_check(const Config *c, char *err)
{
    if (!config_is_transformer(c) && !config_is_recurrent(c))
        return err_set(err, LM_EARG, "model=%s has no reference class: names=reference covers "
                       "dispatcher, dispatcher-mh, msa (fractalego/dispatcher) and lstm, gru, "
                       "rnn (PyTorch's word_language_model); save it with lmlab's names",
                       c->model);
    if (config_is_transformer(c) && strcmp(c->norm, "post"))
        return err_set(err, LM_EARG, "norm=%s: the reference transformer is post-norm and has "
                       "no final norm to name; save with lmlab's names", c->norm);
    if (config_is_transformer(c) && strcmp(c->pos, "sinusoidal"))
        return err_set(err, LM_EARG, "pos=%s: the reference transformer has only the fixed "
                       "sinusoidal table; save with lmlab's names", c->pos);
    return LM_OK;
}

NamesKind names_detect(const SafeTensors *st)
{
    for (int i = 0; i < safetensors_count(st); i++) {
        const char *n = safetensors_at(st, i)->name;
        if (!strncmp(n, REF_LAYERS, strlen(REF_LAYERS)) || !strcmp(n, NAMES_PE))
            return NAMES_REFERENCE;
    }
    return NAMES_LMLAB;
}

/* Up to `max` names of list, comma-separated, into buf. */
/* The model kind through config_set, so the parsed enum follows the name (the names
 * here are always valid values). */
static void set_model(Config *c, const char *kind)
{
    char ignored[LM_ERR_LEN];
    config_set(c, "model", kind, ignored);
}

static void list_names(char *buf, size_t cap, const char *const *names, int n, int max)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && i < max && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%.70s", i ? ", " : "", names[i]);
    if (n > max && o < cap)
        snprintf(buf + o, cap - o, ", ... (%d in all)", n);
}

int names_mismatch(const Model *m, const SafeTensors *st, const char *missing, char *err)
{
    const char *found[4];
    int nf = safetensors_count(st);
    for (int i = 0; i < nf && i < 4; i++)
        found[i] = safetensors_at(st, i)->name;
    char lm[2][PARAMS_NAME_LEN], ref[2][PARAMS_NAME_LEN + 32], fbuf[300];
    const char *lml[2], *refl[2];
    int ne = 0;
    for (int i = 0; i < m->params.n && ne < 2; i++) {   /* the first, and a layer's mixer */
        const char *n = m->params.info[i].name;
        if (i && !strstr(n, "mixer") && !strstr(n, "rnn."))
            continue;
        snprintf(lm[ne], sizeof lm[ne], "%s", n);
        names_map(n, NAMES_REFERENCE, ref[ne], sizeof ref[ne]);
        lml[ne] = lm[ne];
        refl[ne] = ref[ne];
        ne++;
    }
    char a[200], b[220];
    list_names(a, sizeof a, lml, ne, 2);
    list_names(b, sizeof b, refl, ne, 2);
    list_names(fbuf, sizeof fbuf, found, nf, 3);
    return err_set(err, LM_EFORMAT, "tensor '%.80s' is missing: this %s (%d layers) expects "
                   "lmlab's names (%s, ...) or the reference's (%s, ...); the file holds %s",
                   missing, m->cfg.model, m->cfg.layers, a, b, nf ? fbuf : "no tensors");
}

/* ---- configuration from shapes ---- */

/* Layer l's tensor `suffix` (lmlab's form, e.g. "mixer.linear_in.weight") in either
 * naming, or NULL. */
static const StTensor *layer_tensor(const SafeTensors *st, int l, const char *suffix)
{
    char lm[ST_NAME_LEN], ref[ST_NAME_LEN];
    snprintf(lm, sizeof lm, LM_LAYERS "%d.%s", l, suffix);
    names_map(lm, NAMES_REFERENCE, ref, sizeof ref);
    const StTensor *t = safetensors_find(st, lm);
    return t ? t : safetensors_find(st, ref);
}

/* Layers present: how many of layer_tensor(l, suffix) (or of rnn.weight_ih_l<l> when
 * suffix is NULL) exist from l = 0 on. */
static int count_layers(const SafeTensors *st, const char *suffix)
{
    char name[64];
    for (int L = 0;; L++) {
        snprintf(name, sizeof name, "rnn.weight_ih_l%d", L);
        if (suffix ? !layer_tensor(st, L, suffix) : !safetensors_find(st, name))
            return L;
    }
}

/* A dimension read from a file as an int, or -1 (outside every range) when it is not
 * one: a (long) shape must not be truncated into a plausible width. */
static int dim_int(long v)
{
    return v >= 0 && v <= INT_MAX ? (int)v : -1;
}

static int infer_recurrent(const SafeTensors *st, Config *c, int d, char *note, size_t cap,
                           char *err)
{
    const StTensor *hh = safetensors_find(st, "rnn.weight_hh_l0");
    if (!hh || hh->ndim != 2 || hh->shape[1] < 1 || hh->shape[0] % hh->shape[1])
        return err_set(err, LM_EFORMAT, "rnn.weight_hh_l0 is missing or not (G*nhid, nhid)");
    long g = hh->shape[0] / hh->shape[1];
    const char *kind = g == 4 ? "lstm" : g == 3 ? "gru" : g == 1 ? "rnn" : NULL;
    if (!kind)
        return err_set(err, LM_EFORMAT, "rnn.weight_hh_l0 has %ld x nhid rows: not an RNN (1), "
                       "GRU (3) or LSTM (4)", g);
    set_model(c, kind);
    c->d = d;
    c->nhid = dim_int(hh->shape[1]);
    c->layers = count_layers(st, NULL);
    c->tie = !safetensors_find(st, "decoder.weight");
    snprintf(note, cap, "model=%s d=%d nhid=%d layers=%d tie=%s (from the file)", c->model,
             c->d, c->nhid, c->layers, c->tie ? "true" : "false");
    return LM_OK;
}

/* The mixer: msa, or one of the Dispatchers with heads and bptt where shapes decide. */
static int infer_mixer(const SafeTensors *st, Config *c, const char **heads_from, char *err)
{
    *heads_from = "the file";
    if (layer_tensor(st, 0, "mixer.in_proj_weight")) {
        set_model(c, "msa");
        if (c->heads < 1 || c->d % c->heads)
            c->heads = 1;
        *heads_from = "your configuration: the file cannot tell";
        return LM_OK;
    }
    const StTensor *in = layer_tensor(st, 0, "mixer.linear_in.weight");
    const StTensor *ia = layer_tensor(st, 0, "mixer.internal_attention.weight");
    if (!in || !ia || in->ndim != 2 || ia->ndim != 2 || in->shape[0] < 1 ||
        c->d % in->shape[0] || ia->shape[0] < 1 || ia->shape[0] > 30)
        return err_set(err, LM_EFORMAT, "layer 0 has neither an attention (in_proj_weight) "
                       "nor a Dispatcher mixer (linear_in, internal_attention) of usable shape");
    long r = in->shape[0], rows = ia->shape[0];
    /* linear_in (d/h, d/h) is the paper's layer; (d, d) is the multi-head one, or the
     * paper's with one head when the configuration says so (their shapes agree) */
    int paper_h1 = c->model_kind == MODEL_DISPATCHER && c->heads == 1 && config_levels(c) == rows;
    if (r < c->d || paper_h1) {
        set_model(c, "dispatcher");
        c->heads = (int)(c->d / r);
        c->bptt = 1 << rows;
        *heads_from = "the file; model=dispatcher-mh when linear_in is d x d";
        return LM_OK;
    }
    set_model(c, "dispatcher-mh"); /* rows = levels * heads */
    if (c->heads < 1 || rows % c->heads || c->d % c->heads)
        c->heads = 1;
    *heads_from = "your configuration; with linear_in d x d, model=dispatcher heads=1 "
                  "in the configuration means the paper's layer";
    c->bptt = 1 << (rows / c->heads);
    return LM_OK;
}

/* LM_EFORMAT: `what` is missing, with a few of the names the file holds. */
static int unknown_model(const SafeTensors *st, const char *what, char *err)
{
    const char *found[3];
    int nf = safetensors_count(st);
    for (int i = 0; i < nf && i < 3; i++)
        found[i] = safetensors_at(st, i)->name;
    char fbuf[300];
    list_names(fbuf, sizeof fbuf, found, nf, 3);
    return err_set(err, LM_EFORMAT, "not a model lmlab knows: %s; expected lmlab's or the "
                   "reference's names (encoder.weight, transformer_encoder.layers.0.* or "
                   "blocks.0.*, rnn.weight_ih_l0, ...), the file holds %s", what,
                   nf ? fbuf : "no tensors");
}

/* The inferred configuration within every key's range (config_from_text applies
 * them) and consistent (config_validate): a file's shapes cannot ask for d = 2^40. */
static int check_inferred(const Config *c, char *err)
{
    char *text = config_to_text(c), e2[LM_ERR_LEN];
    Config chk;
    config_defaults(&chk);
    int rc = !text ? LM_ENOMEM : config_from_text(&chk, text, e2) ? LM_EFORMAT
             : config_validate(&chk, e2) ? LM_EFORMAT : LM_OK;
    free(text);
    if (rc == LM_ENOMEM)
        return err_set(err, rc, "out of memory");
    if (rc)
        return err_set(err, rc, "its tensor shapes describe a model lmlab cannot build "
                       "(model=%s d=%d nhid=%d layers=%d): %s", c->model, c->d, c->nhid,
                       c->layers, e2);
    return LM_OK;
}

static int infer_config(const SafeTensors *st, Config *c, char *note, size_t cap, char *err)
{
    const StTensor *emb = safetensors_find(st, "encoder.weight");
    if (!emb || emb->ndim != 2 || emb->shape[1] < 1)
        return unknown_model(st, "no encoder.weight (V, d)", err);
    int d = dim_int(emb->shape[1]);
    if (safetensors_find(st, "rnn.weight_ih_l0"))
        return infer_recurrent(st, c, d, note, cap, err);
    const StTensor *w1 = layer_tensor(st, 0, "linear1.weight");
    if (!w1 || w1->ndim != 2)
        return unknown_model(st, "neither rnn.weight_ih_l0 nor layer 0's linear1.weight", err);
    c->d = d;
    c->nhid = dim_int(w1->shape[0]);
    c->layers = count_layers(st, "linear1.weight");
    c->tie = !safetensors_find(st, "decoder.weight");
    snprintf(c->pos, sizeof c->pos, "%s",
             safetensors_find(st, "pos_embedding.weight") ? "learned" : "sinusoidal");
    snprintf(c->norm, sizeof c->norm, "%s", safetensors_find(st, "norm_f.weight") ? "pre" : "post");
    const char *heads_from;
    int rc = infer_mixer(st, c, &heads_from, err);
    if (!rc && c->model_kind == MODEL_MSA)   /* no tensor of MSA's has bptt's size */
        snprintf(note, cap, "model=%s d=%d nhid=%d layers=%d (from the file), heads=%d "
                 "bptt=%d (from %s)", c->model, c->d, c->nhid, c->layers, c->heads, c->bptt,
                 heads_from);
    else if (!rc)
        snprintf(note, cap, "model=%s d=%d nhid=%d layers=%d bptt=%d (from the file), "
                 "heads=%d (from %s)", c->model, c->d, c->nhid, c->layers, c->bptt, c->heads,
                 heads_from);
    return rc;
}

int names_infer_config(const SafeTensors *st, Config *c, char *note, size_t cap, char *err)
{
    int rc = infer_config(st, c, note, cap, err);
    return rc ? rc : check_inferred(c, err);
}

int names_reference_pe(const Model *m, float **pe, long shape[3])
{
    *pe = NULL;
    if (!config_is_transformer(&m->cfg))
        return LM_OK;
    int d = m->cfg.d;
    if (!(*pe = malloc((size_t)NAMES_PE_ROWS * (size_t)d * sizeof **pe)))
        return LM_ENOMEM;
    posenc_sinusoid(*pe, NAMES_PE_ROWS, d);
    shape[0] = NAMES_PE_ROWS;
    shape[1] = 1;
    shape[2] = d;
    return LM_OK;
}
