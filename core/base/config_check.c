/* config_check.c — what a Config means beyond its fields (the model family's flags from
 * families.def, a Dispatcher's levels, the decay's scope, eval_at_seconds' times) and
 * whether it holds together before a run (config_validate, the presets' /path/to/
 * placeholders). Not the checks of one value, which config_set makes by the key table. */
#include "config.h"

#include "err.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAMILY(kind, name, flags, init, act_bytes) flags,
static const int MODEL_FLAGS[] = {
#include "families.def"
};
#undef FAMILY

const char *config_model_name(ModelKind kind)
{
    static const char *const names[] = {
#define FAMILY(kind, name, flags, init, act_bytes) name,
#include "families.def"
#undef FAMILY
    };
    return (unsigned)kind < MODEL_N_KINDS ? names[kind] : NULL;
}

static int model_flags(const Config *c)
{
    return (unsigned)c->model_kind < MODEL_N_KINDS ? MODEL_FLAGS[c->model_kind] : 0;
}

int config_is_dispatcher(const Config *c)
{
    return !!(model_flags(c) & MODEL_F_DISPATCHER);
}

int config_is_transformer(const Config *c)
{
    return !!(model_flags(c) & MODEL_F_TRANSFORMER);
}

int config_is_recurrent(const Config *c)
{
    return !!(model_flags(c) & MODEL_F_RECURRENT);
}

int config_decays_all(const Config *c)
{
    return strcmp(c->weight_decay_on, "matrices") != 0;
}

int config_parse_eval_marks(const char *text, double *marks, int *n, char *err)
{
    *n = 0;
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    while (*p) {   /* leaves early (at a non-blank) only on a malformed list */
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(v) || v <= 0)
            break;
        if (*n && v <= marks[*n - 1])
            return err_set(err, LM_EARG, "eval_at_seconds=%s: the times must increase", text);
        if (*n == CONFIG_MAX_EVAL_MARKS)
            return err_set(err, LM_EARG, "eval_at_seconds=%s: at most %d times", text,
                           CONFIG_MAX_EVAL_MARKS);
        marks[(*n)++] = v;
        p = end;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            break;
    }
    if (*p)
        return err_set(err, LM_EARG, "eval_at_seconds=%s: expected positive seconds "
                       "separated by commas, e.g. 60,120,300", text);
    return LM_OK;
}

int config_levels(const Config *c)
{
    int L = 0;
    while ((2L << L) <= c->bptt)
        L++;
    return L;
}

int config_check_placeholders(const Config *c, char *err)
{
    char set[LM_ERR_LEN] = "", at_once[160] = "";
    size_t o = 0, a = 0;
    int n = 0, n_keys;
    const ConfigKey *keys = config_keys(&n_keys);
    for (int i = 0; i < n_keys; i++) {
        const ConfigKey *k = &keys[i];
        if (k->type != CFG_STRING)
            continue;
        const char *v = (const char *)c + k->offset;
        int unread = !strcmp(k->key, "vocab") && c->tokenizer_kind != TOKENIZER_WORDPIECE &&
                     c->tokenizer_kind != TOKENIZER_GPT2;   /* tokenizer=word: no file */
        if (strncmp(v, "/path/to/", 9) || unread || o >= sizeof set)
            continue;
        o += (size_t)snprintf(set + o, sizeof set - o, "%s%s=%s", n++ ? ", " : "", k->key, v);
        const char *try = !strcmp(k->key, "data") ? "data=wikitext-small"
                          : !strcmp(k->key, "vocab") ? "tokenizer=word"
                          : !strcmp(k->key, "init_from") ? "init_from=" : "";
        if (try[0] && a < sizeof at_once)
            a += (size_t)snprintf(at_once + a, sizeof at_once - a, " %s", try);
    }
    if (!n)
        return LM_OK;
    int bert = strstr(set, "vocab=") && strstr(set, "bert");   /* the paper presets' */
    return err_set(err, LM_EARG, "the preset's placeholder%s still set: %s. Give %s on the "
                   "command line, as the preset's comment says%s%s%s%s", n > 1 ? "s are" : " is",
                   set, n > 1 ? "each" : "it", bert ? " (BERT's vocab.txt: https://huggingface.co/"
                   "bert-base-cased/resolve/main/vocab.txt; lmlab does not download it)" : "",
                   at_once[0] ? "; to try the preset at once on bundled data:" : "", at_once,
                   strstr(at_once, "init_from=") ? " (an empty init_from= starts from scratch)" : "");
}

int config_validate(const Config *c, char *err)
{
    if (config_is_transformer(c) && c->d % c->heads)
        return err_set(err, LM_EARG, "heads=%d does not divide d=%d: pick heads among the "
                       "divisors of d", c->heads, c->d);
    if (config_is_dispatcher(c) && (c->bptt & (c->bptt - 1)))
        return err_set(err, LM_EARG, "bptt=%d: Dispatcher models need a power of two "
                       "(levels = log2(bptt)); try %d", c->bptt, 1 << config_levels(c));
    if (config_is_transformer(c) && !strcmp(c->pos, "sinusoidal") && c->d % 2)
        return err_set(err, LM_EARG, "d=%d: sinusoidal positions need an even d", c->d);
    if (config_is_recurrent(c) && c->tie && c->d != c->nhid)
        return err_set(err, LM_EARG, "tie=true needs d == nhid for recurrent models "
                       "(d=%d, nhid=%d)", c->d, c->nhid);
    if (c->model_kind == MODEL_LINEAR && c->bptt > 4096)
        return err_set(err, LM_EARG, "bptt=%d: the linear LM mixes a bptt x bptt matrix; "
                       "keep it at most 4096", c->bptt);
    if (c->steps == 0 && c->epochs == 0)
        return err_set(err, LM_EARG, "set a budget: steps=N or epochs=N");
    if ((!strcmp(c->schedule, "cosine") || !strcmp(c->schedule, "linear")) && c->steps == 0)
        return err_set(err, LM_EARG, "schedule=%s needs steps=N (it decays to min_lr at "
                       "the last step)", c->schedule);
    if (!strcmp(c->schedule_clock, "time") && !(c->time_budget > 0))
        return err_set(err, LM_EARG, "schedule_clock=time needs time_budget=SECONDS (the "
                       "schedule ends when the training clock reaches it)");
    if (c->tokenizer_kind == TOKENIZER_BPE && c->vocab_size && c->vocab_size < 257)
        return err_set(err, LM_EARG, "vocab_size=%d: bpe needs at least 257 (256 bytes + one "
                       "merge)", c->vocab_size);
    if (c->min_lr > c->lr)
        return err_set(err, LM_EARG, "min_lr=%g is above lr=%g", c->min_lr, c->lr);
    if (c->tokenizer_kind == TOKENIZER_WORDPIECE && !c->vocab[0])
        return err_set(err, LM_EARG, "tokenizer=wordpiece needs vocab=PATH, a BERT vocab.txt "
                       "(e.g. bert-base-cased's)");
    return LM_OK;
}
