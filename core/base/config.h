/* config.h — one flat set of key=value settings for a run: experiment files, the command
 * line, sweeps and checkpoints all use it. A table of keys (config.c) gives each key's
 * type, range, allowed values and help, so validation, `help`, completion and the
 * checkpoint text come from one place; config_text.c reads and writes the text form
 * (experiment files, config_to_text), config_check.c the checks of a whole Config and
 * the model family's flags. Not a parser of files with sections. */
#ifndef LM_CONFIG_H
#define LM_CONFIG_H

#include <stddef.h>

#define CONFIG_STR_LEN 256
#define CONFIG_MAX_EVAL_MARKS 32   /* times in eval_at_seconds */

typedef enum { CFG_INT, CFG_FLOAT, CFG_BOOL, CFG_ENUM, CFG_STRING } ConfigType;

/* What a model family is, for checks that hold for several families (config_is_*). */
enum { MODEL_F_TRANSFORMER = 1, MODEL_F_DISPATCHER = 2, MODEL_F_RECURRENT = 4 };

/* The model families, one per line of core/base/families.def (the registry). */
typedef enum {
#define FAMILY(kind, name, flags, init, act_bytes) kind,
#include "families.def"
#undef FAMILY
    MODEL_N_KINDS
} ModelKind;

/* The values of batching=, in the order of the key's allowed values. */
typedef enum { CONFIG_BATCHING_STREAM, CONFIG_BATCHING_RANDOM } ConfigBatching;

/* The tokenizer kinds, one per line of core/base/tokenizers.def. */
typedef enum {
#define TOKENIZER(suffix, name) TOKENIZER_##suffix,
#include "tokenizers.def"
#undef TOKENIZER
    TOKENIZER_N_KINDS
} TokenizerKind;

typedef struct {
    /* model */
    char model[32];        /* a name of families.def: dispatcher | msa | lstm | ... */
    ModelKind model_kind;  /* the same, parsed by config_set */
    int d, heads, nhid, layers, bptt;
    float dropout;
    char norm[8];          /* post | pre */
    char pos[16];          /* sinusoidal | learned */
    char act[8];           /* relu | gelu */
    int tie;
    char init[16];         /* uniform | normal */
    /* data */
    char data[CONFIG_STR_LEN];
    char tokenizer[16];    /* a name of tokenizers.def: char | word | bpe | ... */
    TokenizerKind tokenizer_kind; /* the same, parsed by config_set */
    int vocab_size;
    char vocab[CONFIG_STR_LEN];  /* wordpiece: BERT's vocab.txt */
    int lowercase, vocab_from_train;  /* wordpiece options */
    float train_frac;
    char text_key[64];     /* .jsonl corpora: the document's key */
    int strict;            /* data prepare: refuse bad documents instead of skipping them */
    char tokens_dir[CONFIG_STR_LEN]; /* token cache root; "" = lmlab-tokens/ beside the store */
    /* batching and budget */
    int batch;
    char batching[8];      /* stream | random */
    ConfigBatching batching_kind;   /* the same, parsed by config_set */
    long steps;
    int epochs;
    double time_budget;    /* seconds; 0 = none */
    /* optimisation */
    char optimizer[8];     /* sgd | adam | adamw */
    float lr, beta1, beta2, eps, weight_decay, momentum, clip;
    char schedule[12];     /* constant | step | invsqrt | cosine | plateau */
    char schedule_clock[8]; /* steps | time (progress also by time_budget's clock) */
    char weight_decay_on[12]; /* all | matrices (no biases, no norms) */
    int warmup, step_size, patience;
    float gamma, min_lr, factor;
    float diverge_factor;  /* loss above this x ln(V) ... */
    int diverge_patience;  /* ... for this many steps in a row: diverged */
    /* evaluation, sampling, checkpoints */
    int log_every, eval_every, eval_batches, sample_every, sample_tokens, checkpoint_every;
    int diagnostics;       /* steps between diagnostics (core/train/diag.h); 0 = off */
    char eval_at_seconds[CONFIG_STR_LEN]; /* "60,120,...": whole-split evaluations at these
                                             seconds of training ("" = none) */
    long final_eval_tokens; /* whole-split evaluations predict at most this many tokens,
                               the result then an estimate (0 = the whole split) */
    float sample_temp;
    char sample_prompt[CONFIG_STR_LEN];
    int keep_checkpoints;
    /* run */
    char name[64];
    char init_from[CONFIG_STR_LEN]; /* a checkpoint or run to fine-tune from */
    char runs_dir[CONFIG_STR_LEN];
    long seed;
    int threads;
    int shards;            /* the batch's cut into shards (0 = auto); core/train/shardplan.h */
    char precision[8];     /* fp32 | bf16: the matrix products' inputs (matmul.h) */
    char alerts[CONFIG_STR_LEN]; /* alert rules set on each run (alertrule.h), "" = none */
    char cpu_recipe[8];    /* none | bf16 | fp32: which CPU-dependent lines of the
                              experiment file applied (config_load_file) */
} Config;

typedef struct {
    const char *key;
    ConfigType type;
    size_t offset;         /* into Config */
    size_t size;           /* of the field */
    double min, max;       /* numbers: inclusive range */
    const char *values;    /* enums: "a|b|c" */
    const char *help;
    const char *group;     /* model, data, train, optim, eval, run */
} ConfigKey;

/* The defaults (the bundled Tiny Shakespeare char-level Dispatcher). */
void config_defaults(Config *c);

/* Sets one key from text. LM_OK, or LM_EARG with a message naming the key, the value
 * and what is allowed (and the nearest key when the key is unknown). Enum keys with a C
 * enum (model, batching, tokenizer) set both the text and the enum: a Config's model,
 * batching or tokenizer must only be changed through here (or config_defaults). */
int config_set(Config *c, const char *key, const char *value, char *err);

/* Parses "key=value" (one item). Same errors as config_set. */
int config_set_pair(Config *c, const char *pair, char *err);

/* LM_EARG naming every setting still holding an experiment file's placeholder (a path
 * that starts "/path/to/"), what each takes, and the settings that try the preset at
 * once on bundled data; LM_OK when none. Before a run loads anything. */
int config_check_placeholders(const Config *c, char *err);

/* Checks combinations (d divisible by heads, bptt a power of two for Dispatcher
 * models, a budget set, ...). LM_OK or LM_EARG naming what to change. */
int config_validate(const Config *c, char *err);

/* Reads an experiment file: one key=value a line, '#' comments. A line "bf16: key =
 * value" applies only on a CPU with AVX512-BF16 (sysinfo_bf16), "fp32: key = value" only
 * on one without, in file order with the rest; when the file has such lines, cpu_recipe
 * records which applied ("bf16" or "fp32"), so a stored run says which recipe it got.
 * A key is given once: a second plain line (or a second bf16: line) for a key is refused
 * naming both lines, as is a plain line after a bf16:/fp32: line of its key (which it
 * would undo); a bf16: or fp32: line after the plain one overrides it on its CPU.
 * Errors name the file and line. */
int config_load_file(Config *c, const char *path, char *err);
/* The same with the CPU's AVX512-BF16 support given (bf16 != 0: it has it). */
int config_load_file_cpu(Config *c, const char *path, int bf16, char *err);

/* Formats a value as text into buf; returns 0, or -1 for an unknown key. */
int config_get(const Config *c, const char *key, char *buf, size_t cap);

/* The whole configuration as "key=value\n" lines (malloc'd; caller frees). Loading it
 * back with config_set_pair gives the same Config. */
char *config_to_text(const Config *c);

/* Parses config_to_text output (or an experiment file's text). */
int config_from_text(Config *c, const char *text, char *err);

/* The key table, for help and completion; *n receives its length. */
const ConfigKey *config_keys(int *n);
const ConfigKey *config_find_key(const char *key);

/* Where a line's '#' comment starts: the first '#' outside double quotes (a backslash
 * escapes the character after it), or NULL; a line that ends in a double quote has none
 * (a whole quoted value, as config_to_text writes one: its inner quotes are not escaped).
 * Experiment and sweep files alike. */
char *config_comment(char *line);

/* The registry name of a model kind ("dispatcher", ...), or NULL when out of range. */
const char *config_model_name(ModelKind kind);

/* 1 when the model is a Dispatcher variant, a transformer, a recurrent model (the
 * family's flags in families.def). */
int config_is_dispatcher(const Config *c);
int config_is_transformer(const Config *c);
int config_is_recurrent(const Config *c);
/* 1 when weight decay applies to every parameter (weight_decay_on=all), 0 when biases and
 * norms are spared (matrices): the optimizer's decay_all. */
int config_decays_all(const Config *c);

/* Parses eval_at_seconds' text ("60,120,180", increasing positive seconds, at most
 * CONFIG_MAX_EVAL_MARKS; "" = none) into marks[0..*n). LM_OK, or LM_EARG with a message
 * saying what was wrong (marks and *n then undefined). */
int config_parse_eval_marks(const char *text, double *marks, int *n, char *err);

/* Levels of a Dispatcher layer: floor(log2(bptt)). */
int config_levels(const Config *c);

#endif
