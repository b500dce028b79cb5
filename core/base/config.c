/* config.c — the key table behind Config: types, ranges, allowed values and help text
 * for every setting, the defaults, and setting or reading one key through the table, so
 * validation, help, completion and checkpoint text share one source. Not the text form
 * (experiment files, config_to_text: config_text.c) nor the checks of a whole Config
 * (config_validate, placeholders, the model family's flags: config_check.c). */
#include "config.h"
#include "numtext.h"
#include "alertrule.h"

#include "err.h"
#include "strdist.h"
#include "textcheck.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(field) offsetof(Config, field), sizeof(((Config *)0)->field)

/* "dispatcher|dispatcher-mh|...": the names of families.def in enum order. */
#define FAMILY(kind, name, flags, init, act_bytes) "|" name
static const char MODEL_VALUES[] = ""
#include "families.def"
    ;
#undef FAMILY

/* "char|word|...": the names of tokenizers.def in enum order. */
#define TOKENIZER(suffix, name) "|" name
static const char TOKENIZER_VALUES[] = ""
#include "tokenizers.def"
    ;
#undef TOKENIZER

static const ConfigKey KEYS[] = {
    /* model */
    {"model", CFG_ENUM, F(model), 0, 0, MODEL_VALUES + 1, "model family", "model"},
    {"d", CFG_INT, F(d), 2, 8192, NULL, "embedding width (d_model)", "model"},
    {"heads", CFG_INT, F(heads), 1, 256, NULL, "heads of the mixer (must divide d)", "model"},
    {"nhid", CFG_INT, F(nhid), 1, 65536, NULL,
     "feed-forward width (transformers) or hidden size (recurrent)", "model"},
    {"layers", CFG_INT, F(layers), 1, 64, NULL, "number of blocks / stacked cells", "model"},
    {"bptt", CFG_INT, F(bptt), 2, 65536, NULL,
     "context window in tokens (a power of two for Dispatcher models)", "model"},
    {"dropout", CFG_FLOAT, F(dropout), 0, 0.95, NULL,
     "dropout probability (Dispatcher: also the level-skip probability)", "model"},
    {"norm", CFG_ENUM, F(norm), 0, 0, "post|pre", "post-norm (the seed's) or pre-norm blocks",
     "model"},
    {"pos", CFG_ENUM, F(pos), 0, 0, "sinusoidal|learned", "positional encoding", "model"},
    {"act", CFG_ENUM, F(act), 0, 0, "relu|gelu", "feed-forward activation", "model"},
    {"tie", CFG_BOOL, F(tie), 0, 1, NULL, "tie the decoder to the embedding", "model"},
    {"init", CFG_ENUM, F(init), 0, 0, "uniform|normal",
     "uniform(-0.1,0.1) embedding/decoder (the seed) or GPT's normal(0,0.02)", "model"},
    /* data */
    {"data", CFG_STRING, F(data), 0, 0, NULL,
     "bundled corpus name, a text file, or a WikiText-layout directory", "data"},
    {"tokenizer", CFG_ENUM, F(tokenizer), 0, 0, TOKENIZER_VALUES + 1,
     "tokenizer", "data"},
    {"vocab_size", CFG_INT, F(vocab_size), 0, 1000000, NULL,
     "vocabulary limit (word) or target size (bpe); 0 = all words / 1024 for bpe", "data"},
    {"vocab", CFG_STRING, F(vocab), 0, 0, NULL, "wordpiece: BERT's vocab.txt (one piece a line); "
     "gpt2: a folder with vocab.bpe and encoder.json, or either's path (default data/gpt2)",
     "data"},
    {"lowercase", CFG_BOOL, F(lowercase), 0, 1, NULL,
     "wordpiece: lowercase and strip accents first (uncased BERT vocabularies)", "data"},
    {"vocab_from_train", CFG_BOOL, F(vocab_from_train), 0, 1, NULL, "wordpiece: the reference "
     "WikiText-2 vocabulary (pieces lowercased, <eos> per line, built from the train split)",
     "data"},
    {"train_frac", CFG_FLOAT, F(train_frac), 0.05, 0.995, NULL,
     "fraction of a single text file used for training", "data"},
    {"text_key", CFG_STRING, F(text_key), 0, 0, NULL,
     ".jsonl corpora: the key of each line's document (default text)", "data"},
    {"strict", CFG_BOOL, F(strict), 0, 1, NULL, "data prepare: refuse binary documents and bad "
     ".jsonl lines instead of skipping and counting them", "data"},
    {"tokens_dir", CFG_STRING, F(tokens_dir), 0, 0, NULL, "where prepared token shards are kept "
     "(empty: lmlab-tokens/ beside the run store)", "data"},
    /* training */
    {"batch", CFG_INT, F(batch), 1, 65536, NULL, "sequences per step", "train"},
    {"batching", CFG_ENUM, F(batching), 0, 0, "stream|random",
     "stream: contiguous streams (the seed's batchify); random: random windows", "train"},
    {"steps", CFG_INT, F(steps), 0, 1e9, NULL, "optimizer steps (0 = use epochs)", "train"},
    {"epochs", CFG_INT, F(epochs), 0, 100000, NULL, "passes over the training split", "train"},
    {"time_budget", CFG_FLOAT, F(time_budget), 0, 1e7, NULL,
     "stop after this many seconds of training (0 = no limit)", "train"},
    /* optimisation */
    {"optimizer", CFG_ENUM, F(optimizer), 0, 0, "sgd|adam|adamw", "optimizer", "optim"},
    {"lr", CFG_FLOAT, F(lr), 1e-9, 100, NULL, "peak learning rate", "optim"},
    {"beta1", CFG_FLOAT, F(beta1), 0, 0.999999, NULL, "Adam beta1", "optim"},
    {"beta2", CFG_FLOAT, F(beta2), 0, 0.9999999, NULL, "Adam beta2", "optim"},
    {"eps", CFG_FLOAT, F(eps), 1e-12, 1, NULL, "Adam epsilon", "optim"},
    {"weight_decay", CFG_FLOAT, F(weight_decay), 0, 10, NULL, "weight decay", "optim"},
    {"weight_decay_on", CFG_ENUM, F(weight_decay_on), 0, 0, "all|matrices",
     "what weight decay shrinks: all (PyTorch's default) or matrices only (no biases, "
     "norms' gains and biases)", "optim"},
    {"momentum", CFG_FLOAT, F(momentum), 0, 0.9999, NULL, "SGD momentum", "optim"},
    {"clip", CFG_FLOAT, F(clip), 0, 1e6, NULL, "clip gradients to this global norm (0 = off)",
     "optim"},
    {"schedule", CFG_ENUM, F(schedule), 0, 0, "constant|step|invsqrt|cosine|plateau|linear",
     "learning-rate schedule", "optim"},
    {"schedule_clock", CFG_ENUM, F(schedule_clock), 0, 0, "steps|time",
     "time: after the warmup (in steps) the schedule's progress is the larger of step/steps "
     "and training time/time_budget, so it ends at the budget however fast the machine "
     "(needs time_budget)",
     "optim"},
    {"warmup", CFG_INT, F(warmup), 0, 1e8, NULL, "linear warm-up steps", "optim"},
    {"step_size", CFG_INT, F(step_size), 1, 1e8, NULL, "steps between decays (step)", "optim"},
    {"gamma", CFG_FLOAT, F(gamma), 1e-6, 1, NULL, "decay factor (step)", "optim"},
    {"min_lr", CFG_FLOAT, F(min_lr), 0, 100, NULL, "floor of the learning rate", "optim"},
    {"patience", CFG_INT, F(patience), 0, 1000, NULL,
     "evaluations without improvement before a cut (plateau)", "optim"},
    {"factor", CFG_FLOAT, F(factor), 1e-6, 0.999, NULL, "cut factor (plateau)", "optim"},
    {"diverge_factor", CFG_FLOAT, F(diverge_factor), 0, 1e6, NULL,
     "a loss above this x ln(vocab) (a uniform guess) counts as diverging (0 = off)", "optim"},
    {"diverge_patience", CFG_INT, F(diverge_patience), 1, 1e8, NULL,
     "steps in a row above diverge_factor x ln(vocab) before the run stops as diverged",
     "optim"},
    /* evaluation, sampling, checkpoints */
    {"log_every", CFG_INT, F(log_every), 1, 1e6, NULL, "steps between logged metrics", "eval"},
    {"eval_every", CFG_INT, F(eval_every), 0, 1e8, NULL,
     "steps between validation evaluations (0 = only at the end)", "eval"},
    {"eval_batches", CFG_INT, F(eval_batches), 0, 1e6, NULL,
     "0 = the whole split; N = estimate on N random batches", "eval"},
    {"eval_at_seconds", CFG_STRING, F(eval_at_seconds), 0, 0, NULL,
     "whole-split validation evaluations at these seconds of training, e.g. 60,120,300 "
     "(evaluation time is not counted)", "eval"},
    {"final_eval_tokens", CFG_INT, F(final_eval_tokens), 0, 1e15, NULL,
     "cap of the final (whole-split) evaluation in tokens, its loss then an estimate over "
     "them (0 = the whole split)", "eval"},
    {"sample_every", CFG_INT, F(sample_every), 0, 1e8, NULL,
     "steps between text samples (0 = never)", "eval"},
    {"sample_tokens", CFG_INT, F(sample_tokens), 1, 100000, NULL, "tokens per periodic sample",
     "eval"},
    {"sample_temp", CFG_FLOAT, F(sample_temp), 0, 10, NULL,
     "temperature of periodic samples (0 = greedy)", "eval"},
    {"sample_prompt", CFG_STRING, F(sample_prompt), 0, 0, NULL, "prompt of periodic samples",
     "eval"},
    {"checkpoint_every", CFG_INT, F(checkpoint_every), 0, 1e8, NULL,
     "steps between checkpoints (0 = only at the end)", "eval"},
    {"keep_checkpoints", CFG_INT, F(keep_checkpoints), 1, 1000, NULL,
     "recent checkpoints kept per run (the best is always kept)", "eval"},
    {"diagnostics", CFG_INT, F(diagnostics), 0, 1e8, NULL,
     "steps between diagnostics: per-tensor gradient, weight and update norms, block "
     "activations, gate and attention entropies, weight and gradient histograms (0 = off)",
     "eval"},
    /* run */
    {"name", CFG_STRING, F(name), 0, 0, NULL, "a name for the run", "run"},
    {"init_from", CFG_STRING, F(init_from), 0, 0, NULL,
     "start from this checkpoint file or run id (fine-tuning)", "run"},
    {"runs_dir", CFG_STRING, F(runs_dir), 0, 0, NULL, "where checkpoints are written", "run"},
    {"seed", CFG_INT, F(seed), 0, 4e18, NULL, "random seed", "run"},
    {"threads", CFG_INT, F(threads), 0, 1024, NULL, "total threads (0 = all cores)", "run"},
    {"alerts", CFG_STRING, F(alerts), 0, 0, NULL,
     "alert rules for every run of this experiment, comma-separated: diverged, finished, "
     "failed, ended, stalled[:SECONDS], METRIC<X, METRIC>X (see `help alert`)", "run"},
    {"precision", CFG_ENUM, F(precision), 0, 0, "fp32|bf16",
     "matrix-product inputs: fp32, or bf16 with fp32 accumulation (CPUs with AVX512-BF16; "
     "elsewhere the run says so and trains in fp32)", "run"},
    {"cpu_recipe", CFG_ENUM, F(cpu_recipe), 0, 0, "none|bf16|fp32",
     "which CPU-dependent lines of the experiment file applied, set when it is read: "
     "'bf16:' lines on a CPU with AVX512-BF16, 'fp32:' lines elsewhere (none: the file has "
     "none)", "run"},
    {"shards", CFG_INT, F(shards), 0, 16, NULL,
     "the batch is cut into this many shards of rows, summed in one fixed order: the numbers "
     "depend on shards, never on threads or processes (0 = min(batch, 2); more shards let "
     "more threads or processes share a step)", "run"},
};
#define N_KEYS ((int)(sizeof KEYS / sizeof KEYS[0]))

void config_defaults(Config *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->model, "dispatcher");
    c->model_kind = MODEL_DISPATCHER;
    c->d = 128; c->heads = 1; c->nhid = 512; c->layers = 4; c->bptt = 64;
    c->dropout = 0;
    strcpy(c->norm, "post"); strcpy(c->pos, "sinusoidal"); strcpy(c->act, "relu");
    strcpy(c->init, "uniform");
    strcpy(c->data, "tinyshakespeare"); strcpy(c->tokenizer, "char");
    c->tokenizer_kind = TOKENIZER_CHAR;
    c->train_frac = 0.9f;
    snprintf(c->text_key, sizeof c->text_key, "text");
    c->batch = 12; strcpy(c->batching, "random");
    c->batching_kind = CONFIG_BATCHING_RANDOM;
    c->steps = 2000;
    strcpy(c->optimizer, "adamw");
    c->lr = 1e-3f; c->beta1 = 0.9f; c->beta2 = 0.999f; c->eps = 1e-8f;
    c->weight_decay = 0.01f;
    strcpy(c->schedule, "constant");
    strcpy(c->schedule_clock, "steps");
    strcpy(c->weight_decay_on, "all");
    c->step_size = 1000; c->gamma = 0.5f; c->patience = 3; c->factor = 0.5f;
    c->diverge_factor = 3; c->diverge_patience = 20;
    c->log_every = 10; c->eval_every = 500; c->sample_every = 500; c->sample_tokens = 200;
    c->sample_temp = 0.8f;
    strcpy(c->sample_prompt, "\n");
    c->checkpoint_every = 500; c->keep_checkpoints = 3;
    strcpy(c->runs_dir, "runs");
    c->seed = 1337;
    strcpy(c->precision, "fp32");
    strcpy(c->cpu_recipe, "none");
}

const ConfigKey *config_keys(int *n)
{
    *n = N_KEYS;
    return KEYS;
}

const ConfigKey *config_find_key(const char *key)
{
    for (int i = 0; i < N_KEYS; i++)
        if (strcmp(KEYS[i].key, key) == 0)
            return &KEYS[i];
    return NULL;
}

/* The key closest to an unknown one, or NULL when none is plausibly meant. */
static const char *nearest_key(const char *key)
{
    const char *best = NULL;
    int best_d = 1 + (int)strlen(key) / 3;
    for (int i = 0; i < N_KEYS; i++) {
        int dd = strdist_edit(key, KEYS[i].key, 0);
        if (dd < best_d || (dd <= best_d && !best && strncmp(KEYS[i].key, key, strlen(key)) == 0)) {
            best_d = dd;
            best = KEYS[i].key;
        }
    }
    return best;
}

/* The index of v among "a|b|c", or -1. */
static int enum_index(const char *values, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = values; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return i;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

static int parse_number(const ConfigKey *k, const char *value, double *out, char *err)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    while (*end && isspace((unsigned char)*end))
        end++;
    if (end == value || *end || errno == ERANGE || !isfinite(v))
        return err_set(err, LM_EARG, "%s=%s: expected a %s", k->key, value,
                       k->type == CFG_INT ? "whole number" : "number");
    if (k->type == CFG_INT && v != floor(v))
        return err_set(err, LM_EARG, "%s=%s: expected a whole number", k->key, value);
    if (v < k->min || v > k->max)
        return err_set(err, LM_EARG, "%s=%s is out of range: allowed %.10g to %.10g (%s)", k->key,
                       value, k->min, k->max, k->help);
    *out = v;
    return LM_OK;
}

/* A long setting (seed, final_eval_tokens) as typed: a decimal integer is read exactly,
 * where the double parse_number checked rounds past 2^53 (seed=9007199254740993 was
 * stored as ...992, so two seeds typed apart trained alike); other forms (1e6) as v. */
static int set_long(const ConfigKey *k, const char *value, double v, long *field, char *err)
{
    char *end;
    errno = 0;
    long long x = strtoll(value, &end, 10);
    while (end != value && isspace((unsigned char)*end))
        end++;
    if (end == value || *end || errno == ERANGE) {
        *field = (long)v;
        return LM_OK;
    }
    if ((long double)x < (long double)k->min || (long double)x > (long double)k->max)
        return err_set(err, LM_EARG, "%s=%s is out of range: allowed %.10g to %.10g (%s)",
                       k->key, value, k->min, k->max, k->help);
    *field = (long)x;
    return LM_OK;
}

/* The enums kept next to their text: the value's index among the key's values. */
static void set_kind(Config *c, const ConfigKey *k, int idx)
{
    if (k->offset == offsetof(Config, model))
        c->model_kind = (ModelKind)idx;
    else if (k->offset == offsetof(Config, batching))
        c->batching_kind = (ConfigBatching)idx;
    else if (k->offset == offsetof(Config, tokenizer))
        c->tokenizer_kind = (TokenizerKind)idx;
}

int config_set(Config *c, const char *key, const char *value, char *err)
{
    const ConfigKey *k = config_find_key(key);
    if (!k) {
        const char *near = nearest_key(key);
        if (near)
            return err_set(err, LM_EARG, "unknown key '%s' — did you mean '%s'?", key, near);
        return err_set(err, LM_EARG, "unknown key '%s' (see `help set` for the keys)", key);
    }
    char *field = (char *)c + k->offset;
    double v;
    int rc;
    switch (k->type) {
    case CFG_INT:
        if ((rc = parse_number(k, value, &v, err)))
            return rc;
        if (k->size == sizeof(long))
            return set_long(k, value, v, (long *)field, err);
        *(int *)field = (int)v;
        return LM_OK;
    case CFG_FLOAT:
        if ((rc = parse_number(k, value, &v, err)))
            return rc;
        if (k->size == sizeof(double))
            *(double *)field = v;
        else
            *(float *)field = (float)v;
        return LM_OK;
    case CFG_BOOL:
        if (!strcmp(value, "1") || !strcmp(value, "true") || !strcmp(value, "yes") ||
            !strcmp(value, "on"))
            *(int *)field = 1;
        else if (!strcmp(value, "0") || !strcmp(value, "false") || !strcmp(value, "no") ||
                 !strcmp(value, "off"))
            *(int *)field = 0;
        else
            return err_set(err, LM_EARG, "%s=%s: expected true or false", key, value);
        return LM_OK;
    case CFG_ENUM: {
        int idx = enum_index(k->values, value);
        if (idx < 0)
            return err_set(err, LM_EARG, "%s=%s: allowed values are %s", key, value, k->values);
        snprintf(field, k->size, "%s", value);
        set_kind(c, k, idx);
        return LM_OK;
    }
    case CFG_STRING:
        if (!value[0] && k->offset == offsetof(Config, runs_dir))
            return err_set(err, LM_EARG, "runs_dir: an empty path is refused (run folders would "
                           "land at the filesystem root); give a folder, e.g. runs_dir=runs "
                           "(relative paths resolve against the working folder)");
        if (strlen(value) >= k->size)
            return err_set(err, LM_EARG, "%s: value too long (at most %zu bytes)", key,
                           k->size - 1);
        if (k->offset == offsetof(Config, eval_at_seconds)) {
            double marks[CONFIG_MAX_EVAL_MARKS];
            int n;
            if ((rc = config_parse_eval_marks(value, marks, &n, err)))
                return rc;
        }
        if (k->offset == offsetof(Config, alerts) && (rc = alertrule_check_list(value, err)))
            return rc;
        if ((rc = textcheck_value(key, value, !strcmp(key, "sample_prompt")
                                                  ? TEXTCHECK_ALLOW_NEWLINE : 0, err)))
            return rc;
        snprintf(field, k->size, "%s", value);
        return LM_OK;
    }
    return err_set(err, LM_EARG, "%s: unsupported type", key);
}

int config_set_pair(Config *c, const char *pair, char *err)
{
    const char *eq = strchr(pair, '=');
    if (!eq || eq == pair)
        return err_set(err, LM_EARG, "'%s': expected key=value", pair);
    char key[64];
    size_t n = (size_t)(eq - pair);
    if (n >= sizeof key)
        return err_set(err, LM_EARG, "'%.40s...': key too long", pair);
    memcpy(key, pair, n);
    key[n] = 0;
    return config_set(c, key, eq + 1, err);
}

int config_get(const Config *c, const char *key, char *buf, size_t cap)
{
    const ConfigKey *k = config_find_key(key);
    if (!k)
        return -1;
    const char *field = (const char *)c + k->offset;
    switch (k->type) {
    case CFG_INT:
        if (k->size == sizeof(long))
            snprintf(buf, cap, "%ld", *(const long *)field);
        else
            snprintf(buf, cap, "%d", *(const int *)field);
        break;
    case CFG_FLOAT:
        if (k->size == sizeof(double)) {   /* the shortest that reads back: 0.1, not
                                              0.10000000000000001 (as show config said) */
            char t[NUMTEXT_LEN];
            numtext_shortest(t, *(const double *)field, 0);
            snprintf(buf, cap, "%s", t);
        } else { /* the shortest text that reads back as the same float: 0.9, not 0.899999976 */
            float v = *(const float *)field;
            for (int prec = 6; prec <= 9; prec++) {
                snprintf(buf, cap, "%.*g", prec, v);
                if (strtof(buf, NULL) == v)
                    break;
            }
        }
        break;
    case CFG_BOOL:
        snprintf(buf, cap, "%s", *(const int *)field ? "true" : "false");
        break;
    default:
        snprintf(buf, cap, "%s", field);
    }
    return 0;
}
