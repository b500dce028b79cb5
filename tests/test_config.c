/* test_config.c — the key table: defaults validate, every bad value is refused with a
 * message naming key and value, text round trip, experiment files. */
#include "check.h"
#include "config.h"
#include "err.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void expect_refused(const char *pair, const char *needle)
{
    Config c;
    char err[LM_ERR_LEN] = "";
    config_defaults(&c);
    int rc = config_set_pair(&c, pair, err);
    CHECK(rc == LM_EARG, "'%s' accepted", pair);
    CHECK(strstr(err, needle) != NULL, "'%s': message '%s' lacks '%s'", pair, err, needle);
}

static void expect_invalid(const char *pairs[], const char *needle)
{
    Config c;
    char err[LM_ERR_LEN] = "";
    config_defaults(&c);
    for (int i = 0; pairs[i]; i++)
        CHECK(config_set_pair(&c, pairs[i], err) == LM_OK, "%s: %s", pairs[i], err);
    CHECK(config_validate(&c, err) != LM_OK, "combination accepted (%s)", pairs[0]);
    CHECK(strstr(err, needle) != NULL, "message '%s' lacks '%s'", err, needle);
}

/* Lines by the CPU's bf16 support: "bf16:" lines apply where the CPU has AVX512-BF16,
 * "fp32:" lines where it has not, in file order; cpu_recipe records which; the other
 * CPU's lines are still checked; plain text (stored settings) refuses them. */
static void test_cpu_recipe(void)
{
    char path[] = "/tmp/lmlab_cfg_XXXXXX", err[LM_ERR_LEN] = "";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "d = 128\nbf16: d = 192   # wider where bf16 is\nbf16: precision = bf16\n"
               "fp32:batch=6\nlr = 2e-3\n");
    fclose(f);
    Config c;
    for (int bf16 = 0; bf16 < 2; bf16++) {
        config_defaults(&c);
        CHECK(config_load_file_cpu(&c, path, bf16, err) == LM_OK, "bf16=%d: %s", bf16, err);
        CHECK(c.d == (bf16 ? 192 : 128) && c.batch == (bf16 ? 12 : 6) &&
              !strcmp(c.precision, bf16 ? "bf16" : "fp32") && c.lr == 2e-3f,
              "bf16=%d: d=%d batch=%d precision=%s", bf16, c.d, c.batch, c.precision);
        CHECK(!strcmp(c.cpu_recipe, bf16 ? "bf16" : "fp32"), "recorded recipe '%s'",
              c.cpu_recipe);
        char *text = config_to_text(&c);
        CHECK(text && strstr(text, bf16 ? "cpu_recipe=bf16" : "cpu_recipe=fp32"),
              "the stored settings say which recipe ran");
        free(text);
    }
    /* a typo in the other CPU's line is still an error, naming the line */
    f = fopen(path, "w");
    fprintf(f, "d = 128\nbf16: dd = 192\n");
    fclose(f);
    config_defaults(&c);
    CHECK(config_load_file_cpu(&c, path, 0, err) == LM_EARG && strstr(err, ":2:") &&
          strstr(err, "dd"), "typo in a skipped bf16 line: '%s'", err);
    config_defaults(&c);
    CHECK(config_load_file(&c, path, err) == LM_EARG, "typo accepted on this CPU");
    /* no conditional lines: none */
    f = fopen(path, "w");
    fprintf(f, "d = 64\n");
    fclose(f);
    config_defaults(&c);
    CHECK(config_load_file_cpu(&c, path, 1, err) == LM_OK && !strcmp(c.cpu_recipe, "none"),
          "no conditional lines: '%s'", c.cpu_recipe);
    unlink(path);
    config_defaults(&c);
    CHECK(config_from_text(&c, "d=64\nbf16: d=96\n", err) == LM_EARG &&
          strstr(err, "experiment files"), "plain text with a bf16: line: '%s'", err);
    CHECK(c.d == 64, "line 1 applied before the refusal (d=%d)", c.d);
}

/* A key given twice in an experiment file: a second plain line (or a second bf16: line)
 * is refused naming both lines, where the last silently won; a plain line after a bf16:
 * one is refused (it would undo it); a bf16: or fp32: line after the plain one overrides
 * it on its CPU, as the speedrun preset's `bf16: steps = 200000` does. */
static void test_key_twice(void)
{
    char path[] = "/tmp/lmlab_cfg_XXXXXX", err[LM_ERR_LEN] = "";
    int fd = mkstemp(path);
    close(fd);
    static const struct {
        const char *text, *want;   /* want NULL: loads */
    } cases[] = {
        {"model = dispatcher\nsteps = 30\nlr = 1e-3\nsteps = 10   # later\n",
         ":4: steps is given twice (lines 2 and 4): keep one"},
        {"steps = 30\nbf16: steps = 300\n\nbf16: steps = 400\n",
         ":4: bf16: steps is given twice (lines 2 and 4): keep one"},
        {"fp32: lr = 1e-3\nlr = 2e-3\n",
         ":2: lr is given after the fp32: lr line 1, which it would undo"},
        {"steps = 30\nbf16: steps = 300\nfp32: steps = 40\nd = 64\n", NULL},
    };
    for (int k = 0; k < 4; k++) {
        FILE *f = fopen(path, "w");
        fputs(cases[k].text, f);
        fclose(f);
        for (int bf16 = 0; bf16 < 2; bf16++) {
            Config c;
            config_defaults(&c);
            int rc = config_load_file_cpu(&c, path, bf16, err);
            if (cases[k].want)
                CHECK(rc == LM_EARG && strstr(err, cases[k].want), "case %d, bf16=%d: '%s'",
                      k, bf16, err);
            else
                CHECK(rc == LM_OK && c.steps == (bf16 ? 300 : 40) && c.d == 64,
                      "a CPU's line over the plain one: bf16=%d: steps=%ld %s", bf16,
                      (long)c.steps, err);
        }
    }
    unlink(path);
}

/* '#' comments: outside quotes, after a quoted value; none on a line that ends in a quote
 * (config_to_text's whole quoted values, inner quotes unescaped): those round-trip. */
static void test_comments(void)
{
    Config c;
    char err[LM_ERR_LEN];
    config_defaults(&c);
    CHECK(config_from_text(&c, "sample_prompt = \"The\"   # a short prompt\n"
                           "name = \"a#b\"  # the \"main\" one\nd = 32  # the \"small\" width\n",
                           err) == LM_OK, "comments after quotes: %s", err);
    CHECK(!strcmp(c.sample_prompt, "The") && !strcmp(c.name, "a#b") && c.d == 32,
          "values '%s' '%s' %d", c.sample_prompt, c.name, c.d);
    config_defaults(&c);   /* the fuzzer's find: a value that starts with a quote */
    CHECK(config_set(&c, "sample_prompt", "\"0T0, with #every = 500", err) == LM_OK, "%s", err);
    char *text = config_to_text(&c), *again = NULL;
    Config back;
    config_defaults(&back);
    CHECK(text && config_from_text(&back, text, err) == LM_OK, "reread: %s", err);
    again = config_to_text(&back);
    CHECK(text && again && !strcmp(text, again) && !strcmp(back.sample_prompt, c.sample_prompt),
          "a quoted value with '#' round-trips: '%s'", back.sample_prompt);
    free(text);
    free(again);
}

/* A preset's "/path/to/" placeholders are named before a run loads anything, each with
 * its setting's help and what tries the preset on bundled data; vocab only where the
 * tokenizer reads it. */
static void test_placeholders(void)
{
    Config c;
    char err[LM_ERR_LEN];
    config_defaults(&c);
    CHECK(config_check_placeholders(&c, err) == LM_OK, "the defaults have none: %s", err);
    CHECK(config_set(&c, "data", "/path/to/openwebtext", err) == LM_OK &&
          config_set(&c, "init_from", "/path/to/run/best.safetensors", err) == LM_OK &&
          config_set(&c, "vocab", "/path/to/vocab.txt", err) == LM_OK, "set: %s", err);
    CHECK(config_check_placeholders(&c, err) == LM_EARG && strstr(err, "placeholders are still set") &&
          strstr(err, "data=/path/to/openwebtext, ") && strstr(err, "init_from=/path/to/run") &&
          !strstr(err, "vocab=") && strstr(err, "data=wikitext-small init_from= (an empty"),
          "data and init_from named, vocab not read by char: %s", err);
    CHECK(config_set(&c, "tokenizer", "wordpiece", err) == LM_OK, "set: %s", err);
    CHECK(config_check_placeholders(&c, err) == LM_EARG && strstr(err, "vocab=/path/to/vocab.txt") &&
          strstr(err, "tokenizer=word"), "wordpiece reads vocab: %s", err);
    CHECK(config_set(&c, "data", "wikitext-small", err) == LM_OK &&
          config_set(&c, "init_from", "", err) == LM_OK &&
          config_set(&c, "tokenizer", "word", err) == LM_OK, "set: %s", err);
    CHECK(config_check_placeholders(&c, err) == LM_OK, "the at-once settings pass: %s", err);
}

int main(void)
{
    test_comments();
    test_placeholders();
    test_cpu_recipe();
    test_key_twice();
    Config c, d;
    char err[LM_ERR_LEN];
    config_defaults(&c);
    CHECK(config_validate(&c, err) == LM_OK, "defaults invalid: %s", err);
    CHECK(config_levels(&c) == 6, "levels of bptt=64: %d", config_levels(&c));

    /* every kind of bad value */
    expect_refused("lrr=0.1", "did you mean 'lr'");
    expect_refused("stpes=10", "did you mean 'steps'");
    expect_refused("xyzzy=1", "unknown key 'xyzzy'");
    expect_refused("d=0", "out of range");
    expect_refused("lr=-1", "out of range");
    expect_refused("batch=1000000000", "out of range");
    expect_refused("bptt=1", "out of range");
    /* the bound is printed as it is: 0.9999999 was "%g", "1", so beta2=1 read "allowed 0 to 1" */
    expect_refused("beta2=1", "allowed 0 to 0.9999999 (");
    {   /* a double setting reads as typed: time_budget=0.1 was "0.10000000000000001" */
        char v[64];
        CHECK(config_set(&c, "time_budget", "0.1", err) == LM_OK, "%s", err);
        CHECK(config_get(&c, "time_budget", v, sizeof v) == 0 && !strcmp(v, "0.1"),
              "time_budget=0.1 reads '%s'", v);
        CHECK(config_set(&c, "time_budget", "0", err) == LM_OK, "%s", err);
        /* a seed past 2^53 as typed: 9007199254740993 was stored as ...992 */
        CHECK(config_set(&c, "seed", "9007199254740993", err) == LM_OK &&
              config_get(&c, "seed", v, sizeof v) == 0 && !strcmp(v, "9007199254740993"),
              "seed=9007199254740993 reads '%s'", v);
        CHECK(config_set(&c, "seed", "1e18", err) == LM_OK && c.seed == 1000000000000000000L,
              "seed=1e18: %ld", c.seed);
        config_set(&c, "seed", "1337", err);
    }
    expect_refused("seed=4000000000000000001", "allowed 0 to 4e+18");
    expect_refused("d=12.5", "whole number");
    expect_refused("d=abc", "whole number");
    expect_refused("lr=nan", "number");
    expect_refused("lr=1e999", "number");
    expect_refused("model=transformer", "allowed values are dispatcher|");
    expect_refused("tie=maybe", "true or false");
    expect_refused("=5", "expected key=value");
    expect_refused("steps", "expected key=value");

    const char *heads[] = {"d=100", "heads=3", NULL};
    expect_invalid(heads, "does not divide");
    const char *bptt[] = {"bptt=48", NULL};
    expect_invalid(bptt, "power of two");
    const char *tie[] = {"model=lstm", "tie=true", "d=64", "nhid=128", NULL};
    expect_invalid(tie, "d == nhid");
    const char *budget[] = {"steps=0", "epochs=0", NULL};
    expect_invalid(budget, "budget");
    const char *cos[] = {"schedule=cosine", "steps=0", "epochs=2", NULL};
    expect_invalid(cos, "cosine");
    const char *lin[] = {"schedule=linear", "steps=0", "epochs=2", NULL};
    expect_invalid(lin, "schedule=linear needs steps=N");

    /* msa with heads not a power of two is fine */
    config_defaults(&c);
    CHECK(config_set_pair(&c, "model=msa", err) == LM_OK, "%s", err);
    CHECK(config_set_pair(&c, "bptt=48", err) == LM_OK, "%s", err);
    CHECK(config_validate(&c, err) == LM_OK, "msa bptt=48 refused: %s", err);

    /* text round trip, including a prompt with a newline and a quote */
    config_defaults(&c);
    config_set_pair(&c, "sample_prompt=ROMEO:\nO \"Juliet\"", err);
    config_set_pair(&c, "lr=0.0003", err);
    config_set_pair(&c, "time_budget=12.5", err);
    char *text = config_to_text(&c);
    CHECK(text != NULL, "to_text failed");
    config_defaults(&d);
    CHECK(config_from_text(&d, text, err) == LM_OK, "from_text: %s", err);
    CHECK(memcmp(&c, &d, sizeof c) == 0, "round trip differs");
    CHECK(strcmp(d.sample_prompt, "ROMEO:\nO \"Juliet\"") == 0, "prompt '%s'", d.sample_prompt);
    free(text);

    /* experiment file with comments and an error on line 3 */
    char path[] = "/tmp/lmlab_cfg_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# a comment\nmodel = msa   # trailing\nheads = four\n");
    fclose(f);
    config_defaults(&c);
    CHECK(config_load_file(&c, path, err) == LM_EARG, "bad file accepted");
    CHECK(strstr(err, ":3:") && strstr(err, "heads"), "message '%s'", err);
    CHECK(strcmp(c.model, "msa") == 0, "line 2 not applied");
    unlink(path);
    /* issue 21: a UTF-8 byte-order mark before line 1 is skipped; an empty runs_dir is
     * refused with the key and file:line named (it would put run folders at "/") */
    char bom_path[] = "/tmp/lmlab_cfg_XXXXXX";
    fd = mkstemp(bom_path);
    f = fdopen(fd, "w");
    fprintf(f, "\xEF\xBB\xBF" "d=48\nruns_dir=\n");
    fclose(f);
    config_defaults(&c);
    CHECK(config_load_file(&c, bom_path, err) == LM_EARG, "empty runs_dir in a file accepted");
    CHECK(c.d == 48, "line 1 after a byte-order mark not applied (d=%d)", c.d);
    CHECK(strstr(err, ":2:") && strstr(err, "runs_dir") && strstr(err, "empty"),
          "message '%s'", err);
    CHECK(strcmp(c.runs_dir, "runs") == 0, "runs_dir changed to '%s'", c.runs_dir);
    unlink(bom_path);
    expect_refused("runs_dir=", "runs_dir");
    CHECK(config_load_file(&c, "/nonexistent/x.conf", err) == LM_EIO, "missing file");
    CHECK(strstr(err, "/nonexistent/x.conf") != NULL, "message '%s'", err);

    /* enums parsed once, next to their text; a refused value changes neither */
    config_defaults(&c);
    CHECK(c.model_kind == MODEL_DISPATCHER && c.batching_kind == CONFIG_BATCHING_RANDOM &&
          c.tokenizer_kind == TOKENIZER_CHAR, "defaults' enums");
    const char *models[] = {"dispatcher", "dispatcher-mh", "msa", "linear", "lstm", "gru", "rnn"};
    const ModelKind kinds[] = {MODEL_DISPATCHER, MODEL_DISPATCHER_MH, MODEL_MSA, MODEL_LINEAR,
                               MODEL_LSTM, MODEL_GRU, MODEL_RNN};
    for (int i = 0; i < 7; i++) {
        CHECK(config_set(&c, "model", models[i], err) == LM_OK, "%s", err);
        CHECK(c.model_kind == kinds[i] && !strcmp(config_model_name(kinds[i]), models[i]),
              "model=%s -> kind %d", models[i], (int)c.model_kind);
        CHECK(config_is_recurrent(&c) == (i >= 4) && config_is_transformer(&c) == (i <= 2) &&
              config_is_dispatcher(&c) == (i <= 1), "model=%s flags", models[i]);
    }
    CHECK(config_set(&c, "model", "lstmm", err) == LM_EARG && c.model_kind == MODEL_RNN &&
          !strcmp(c.model, "rnn"), "a refused model changed the config");
    CHECK(MODEL_N_KINDS == 7 && config_model_name(MODEL_N_KINDS) == NULL, "kinds");
    CHECK(config_set(&c, "batching", "stream", err) == LM_OK &&
          c.batching_kind == CONFIG_BATCHING_STREAM, "batching=stream");
    const char *toks[] = {"char", "word", "bpe", "wordpiece", "basic_english", "gpt2"};
    const int tok_kinds[] = {TOKENIZER_CHAR, TOKENIZER_WORD, TOKENIZER_BPE, TOKENIZER_WORDPIECE,
                             TOKENIZER_BASIC_ENGLISH, TOKENIZER_GPT2};
    for (int i = 0; i < 6; i++)
        CHECK(config_set(&c, "tokenizer", toks[i], err) == LM_OK &&
              (int)c.tokenizer_kind == tok_kinds[i], "tokenizer=%s: config's enum and "
              "TokenizerKind disagree", toks[i]);
    const char *linear[] = {"model=linear", "bptt=8192", NULL};
    expect_invalid(linear, "4096");
    const char *bpe[] = {"tokenizer=bpe", "vocab_size=100", NULL};
    expect_invalid(bpe, "257");

    int n;
    const ConfigKey *keys = config_keys(&n);
    CHECK(n > 40, "only %d keys", n);
    for (int i = 0; i < n; i++)
        CHECK(keys[i].help && keys[i].group, "key %s lacks help", keys[i].key);
    return check_summary();
}
