/* cmd_config.c — help, quit, and the configuration commands: use, set, unset, show
 * (config, model, data, machine). */
#include "session.h"
#include "cmd_config.h"

#include "blas_select.h"
#include "dist.h"
#include "dataset_cache.h"
#include "err.h"
#include "kernels.h"
#include "suggest.h"
#include "sysinfo.h"
#include "tokformat.h"

#include <cblas.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a key allows: "1e-06..10", "true|false", "a|b|c", or "text". */
static void key_range(const ConfigKey *k, char *out, size_t cap)
{
    if (k->values)
        snprintf(out, cap, "%s", k->values);
    else if (k->type == CFG_BOOL)
        snprintf(out, cap, "true|false");
    else if (k->type == CFG_INT || k->type == CFG_FLOAT)
        snprintf(out, cap, "%.10g..%.10g", k->min, k->max);
    else
        snprintf(out, cap, "text");
}

/* `help set`: every setting with its current value, what it allows and its help (--json:
 * one object a setting, as `help set KEY` gives). */
static int help_set(Session *s)
{
    int nk;
    const ConfigKey *keys = config_keys(&nk);
    const char *group = "";
    Config def;
    config_defaults(&def);
    for (int i = 0; i < nk; i++) {
        char v[CONFIG_STR_LEN], range[96];
        if (config_get(&s->cfg, keys[i].key, v, sizeof v))
            snprintf(v, sizeof v, "?");
        key_range(&keys[i], range, sizeof range);
        if (s->json) {
            char dv[CONFIG_STR_LEN];
            config_get(&def, keys[i].key, dv, sizeof dv);
            session_emit_json(s, json_pack("{s:s s:s s:s s:s s:s s:s}", "key", keys[i].key,
                                           "value", v, "default", dv, "allowed", range, "help",
                                           keys[i].help, "group", keys[i].group));
            continue;
        }
        if (strcmp(group, keys[i].group))
            session_printf(s, "%s%s:", i ? "\n" : "", group = keys[i].group);
        session_printf(s, "  %-16s = %-14.40s %s  [%s]", keys[i].key, v, keys[i].help, range);
    }
    if (!s->json)
        session_printf(s, "\n`help set KEY` explains one setting; `show config` marks what "
                       "differs from the default.");
    return LM_OK;
}

/* `help set KEY`: that setting alone: value, default, range, help. */
static int help_set_key(Session *s, const char *key)
{
    const ConfigKey *k = config_find_key(key);
    if (!k) {
        int nk;
        const ConfigKey *keys = config_keys(&nk);
        const char *names[256];
        for (int i = 0; i < nk && i < 256; i++)
            names[i] = keys[i].key;
        const char *near = suggest_nearest(key, names, nk < 256 ? nk : 256);
        return session_error(s, LM_EARG, "no setting '%s'%s%s%s; `help set` lists them", key,
                             near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    }
    Config def;
    config_defaults(&def);
    char v[CONFIG_STR_LEN], dv[CONFIG_STR_LEN], range[96];
    config_get(&s->cfg, k->key, v, sizeof v);
    config_get(&def, k->key, dv, sizeof dv);
    key_range(k, range, sizeof range);
    if (s->json) {
        session_emit_json(s, json_pack("{s:s s:s s:s s:s s:s s:s}", "key", k->key, "value", v,
                                       "default", dv, "allowed", range, "help", k->help,
                                       "group", k->group));
        return LM_OK;
    }
    session_printf(s, "%s = %s   (default %s; %s settings)", k->key, v, dv, k->group);
    session_printf(s, "  %s", k->help);
    session_printf(s, "  allowed: %s", range);
    return LM_OK;
}

int cmd_help(Session *s, int argc, const LexWord *argv)
{
    int n = s->n_commands;
    const Command *table = s->commands;
    char *text = NULL, err[LM_ERR_LEN];
    const char *name = argc > 1 ? argv[1].text : NULL;
    if (name && !strcmp(name, "set")) /* the keys, from the config table */
        return argc > 2 ? help_set_key(s, argv[2].text) : help_set(s);
    if (cmdtable_help(table, n, name, &text, err))
        return session_error(s, LM_EARG, "%s", err);
    if (s->json) {
        session_emit_json(s, json_pack("{s:b s:s}", "ok", 1, "help", text));
    } else {
        size_t l = strlen(text);
        while (l && text[l - 1] == '\n')
            text[--l] = 0;
        session_printf(s, "%s", text);
        if (!name)
            session_printf(s, "\nKeys: Tab completes, Up/Down history, Ctrl-C cancels; "
                           "`help set` lists the settings.");
    }
    free(text);
    return LM_OK;
}

int cmd_quit(Session *s, int argc, const LexWord *argv)
{
    (void)argc; (void)argv;
    s->quit = 1;
    return LM_OK;
}

static void list_experiments(Session *s)
{
    const char *dirs[] = {"experiments", LMLAB_EXPERIMENTS_DIR};
    for (int i = 0; i < 2; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        session_printf(s, "experiments in %s:", dirs[i]);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l > 5 && !strcmp(e->d_name + l - 5, ".conf"))
                session_printf(s, "  %.*s", (int)(l - 5), e->d_name);
        }
        closedir(d);
        return;
    }
    session_printf(s, "no experiments directory found");
}

/* The experiment name nearest to name (suggest_nearest over the first experiments
 * folder found), or "" when none is near. */
static void nearest_experiment(const char *name, char *out, size_t cap)
{
    const char *env = getenv("LMLAB_EXPERIMENTS");
    const char *dirs[] = {env, "experiments", LMLAB_EXPERIMENTS_DIR};
    for (int i = 0; i < 3; i++) {
        DIR *d = dirs[i] ? opendir(dirs[i]) : NULL;
        if (!d)
            continue;
        char names[64][64];
        const char *list[64];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 64) {
            size_t l = strlen(e->d_name);
            if (l > 5 && l < 64 && !strcmp(e->d_name + l - 5, ".conf")) {
                snprintf(names[n], sizeof names[n], "%.*s", (int)(l - 5), e->d_name);
                list[n] = names[n];
                n++;
            }
        }
        closedir(d);
        const char *near = suggest_nearest(name, list, n);
        snprintf(out, cap, "%s", near ? near : "");
        return;
    }
}

/* Whether a and b build different tokenizers (the keys `tokenize` and `train` read). */
static int tokenizer_differs(const Config *a, const Config *b)
{
    return a->tokenizer_kind != b->tokenizer_kind || a->vocab_size != b->vocab_size ||
           a->lowercase != b->lowercase || a->vocab_from_train != b->vocab_from_train ||
           strcmp(a->vocab, b->vocab) || strcmp(a->data, b->data);
}

/* The session's settings become c; a tokenizer setting that changed marks the settings'
 * tokenizer newer than the open model's (what `tokenize` encodes with). */
static void settings_take(Session *s, const Config *c)
{
    if (tokenizer_differs(&s->cfg, c))
        s->tok_settings_newer = 1;
    s->cfg = *c;
}

int cmd_use(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2) {
        list_experiments(s);
        return LM_OK;
    }
    char path[1024], err[LM_ERR_LEN];
    struct stat sb;
    if (strchr(argv[1].text, '/') && !stat(argv[1].text, &sb) && S_ISDIR(sb.st_mode))
        return session_error(s, LM_EARG, "use %s: a directory, not an experiment file: give "
                             "a .conf file, or a name from `use`'s list", argv[1].text);
    if (session_find_experiment(argv[1].text, path, sizeof path)) {
        char near[128] = "";
        nearest_experiment(argv[1].text, near, sizeof near);
        return session_error(s, LM_EIO, "no experiment '%s' (looked for experiments/%s.conf)%s%s%s;"
                             " `use` lists them", argv[1].text, argv[1].text,
                             near[0] ? "; did you mean " : "", near, near[0] ? "?" : "");
    }
    Config c;
    config_defaults(&c);
    if (config_load_file(&c, path, err))
        return session_error(s, LM_EARG, "%s", err);
    settings_take(s, &c);
    snprintf(s->experiment, sizeof s->experiment, "%s", argv[1].text);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:s s:s}", "ok", 1, "experiment", argv[1].text,
                                       "model", c.model));
    else
        session_printf(s, "using %s (%s): model=%s d=%d layers=%d bptt=%d data=%s%s", argv[1].text,
                       path, c.model, c.d, c.layers, c.bptt, c.data,
                       !strcmp(c.cpu_recipe, "bf16") ? "; its bf16 recipe (this CPU has AVX512-BF16)"
                       : !strcmp(c.cpu_recipe, "fp32") ? "; its fp32 recipe (this CPU has no "
                                                        "AVX512-BF16)" : "");
    return LM_OK;
}

int cmd_set(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2)
        return session_error(s, LM_EARG, "set: give key=value pairs (`help set` lists the keys)");
    Config c = s->cfg;
    char err[LM_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        if (!argv[i].key)
            return session_error(s, LM_EARG, "set: expected key=value, got '%s'", argv[i].text);
        if (config_set(&c, argv[i].key, argv[i].value, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (config_validate(&c, err))
        return session_error(s, LM_EARG, "%s (nothing was changed)", err);
    settings_take(s, &c);
    if (s->json)
        session_emit_json(s, json_pack("{s:b}", "ok", 1));
    return LM_OK;
}

int cmd_unset(Session *s, int argc, const LexWord *argv)
{
    Config base;
    config_defaults(&base);
    char path[1024], err[LM_ERR_LEN], val[CONFIG_STR_LEN * 2];
    if (s->experiment[0] && !session_find_experiment(s->experiment, path, sizeof path))
        config_load_file(&base, path, err);
    Config c = s->cfg;
    for (int i = 1; i < argc; i++) {
        if (config_get(&base, argv[i].text, val, sizeof val))
            return session_error(s, LM_EARG, "unset: unknown key '%s'", argv[i].text);
        config_set(&c, argv[i].text, val, err);
    }
    settings_take(s, &c);
    return LM_OK;
}

static void show_config(Session *s)
{
    int nk;
    const ConfigKey *keys = config_keys(&nk);
    Config def;
    config_defaults(&def);
    json_t *o = s->json ? json_object() : NULL;
    for (int i = 0; i < nk; i++) {
        char v[CONFIG_STR_LEN * 2], d[CONFIG_STR_LEN * 2];
        config_get(&s->cfg, keys[i].key, v, sizeof v);
        config_get(&def, keys[i].key, d, sizeof d);
        if (o) {
            json_object_set_new(o, keys[i].key, runstore_json_setting(keys[i].key, v));
            continue;
        }
        char shown[CONFIG_STR_LEN * 2 + 2];
        size_t k = 0;
        for (const char *p = v; *p && k + 3 < sizeof shown; p++) { /* one line per key */
            if (*p == '\n') { shown[k++] = '\\'; shown[k++] = 'n'; }
            else if (*p == '\t') { shown[k++] = '\\'; shown[k++] = 't'; }
            else shown[k++] = *p;
        }
        shown[k] = 0;
        session_printf(s, "  %-16s %-20s%s", keys[i].key, shown, strcmp(v, d) ? "  *" : "");
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "(unknown: %s)", strerror(errno));
    if (o)
        session_emit_json(s, json_pack("{s:s s:o s:s}", "experiment", s->experiment, "config", o,
                                       "paths_relative_to", cwd));
    else {
        session_printf(s, "(* = differs from the default; experiment: %s)",
                       s->experiment[0] ? s->experiment : "none");
        session_printf(s, "(relative paths in runs_dir, data, vocab, init_from resolve against "
                       "the working folder: %s)", cwd);
    }
}

/* Parameters and memory need the vocabulary: loading the data gives it. */
static int show_model(Session *s, int with_data)
{
    char err[LM_ERR_LEN];
    Dataset ds;
    if (config_validate(&s->cfg, err))
        return session_error(s, LM_EARG, "%s", err);
    if (dataset_load_prepared(&ds, &s->cfg, s->db_path, NULL, err))
        return session_error(s, LM_EIO, "%s", err);
    int V = tokenizer_vocab_size(ds.tok);
    Model *m = model_create(&s->cfg, V, err);
    if (!m) {
        dataset_free(&ds);
        return session_error(s, LM_EARG, "%s", err);
    }
    long P = model_param_count(m);
    /* the data's share: ids held in memory (a text read whole), or the shard tables and
     * windows of token files, which are read, not held */
    double data_bytes = (double)dataset_resident_bytes(&ds);
    double bytes = model_estimate_bytes(&s->cfg, V, s->cfg.batch, s->cfg.bptt) + data_bytes;
    double avail = sysinfo_mem_available();
    if (s->json) {
        json_t *o = json_pack("{s:s s:I s:i s:f s:f s:f s:s s:I s:I s:I}", "model", s->cfg.model,
                              "params", (json_int_t)P, "vocab", V, "memory_bytes", bytes,
                              "data_memory_bytes", data_bytes,
                              "available_bytes", avail, "data", ds.name, "train_tokens",
                              (json_int_t)ds.n[SPLIT_TRAIN], "valid_tokens",
                              (json_int_t)ds.n[SPLIT_VALID], "test_tokens",
                              (json_int_t)ds.n[SPLIT_TEST]);
        session_emit_json(s, o);
    } else {
        if (config_is_recurrent(&s->cfg))   /* no heads, no norm: what it has, only */
            session_printf(s, "model   %s: d=%d nhid=%d layers=%d bptt=%d", s->cfg.model,
                           s->cfg.d, s->cfg.nhid, s->cfg.layers, s->cfg.bptt);
        else
            session_printf(s, "model   %s: d=%d heads=%d nhid=%d layers=%d bptt=%d norm=%s",
                           s->cfg.model, s->cfg.d, s->cfg.heads, s->cfg.nhid, s->cfg.layers,
                           s->cfg.bptt, s->cfg.norm);
        if (config_is_dispatcher(&s->cfg))
            session_printf(s, "        %d levels (shifts 1..%d), receptive field %d tokens",
                           config_levels(&s->cfg), 1 << (config_levels(&s->cfg) - 1),
                           (1 << config_levels(&s->cfg)) - 1);
        session_printf(s, "params  %ld (%.2f M)", P, P / 1e6);
        session_printf(s, "memory  about %.0f MiB for batch=%d x bptt=%d (parameters, Adam "
                       "state, activations; the data %s %.1f MiB); %.1f GiB available",
                       bytes / (1 << 20), s->cfg.batch, s->cfg.bptt,
                       ds.format ? "read from token files, holding" : "held as token ids,",
                       data_bytes / (1 << 20), avail / (1 << 30));
        if (with_data)
            session_printf(s, "data    %s (%s tokenizer, vocabulary %d): train %zu, valid %zu, "
                           "test %zu tokens; hash %016llx", ds.name, s->cfg.tokenizer, V,
                           ds.n[SPLIT_TRAIN], ds.n[SPLIT_VALID], ds.n[SPLIT_TEST], ds.hash);
        if (with_data && ds.format) {
            double fb = 0;
            for (int k = 0; k < 3; k++) fb += (double)tokseq_file_bytes(&ds.split[k]);
            session_printf(s, "        %s, %.2f GiB of token files read with pread (the page "
                           "cache keeps them, reclaimable and shared; not held by lmlab)",
                           tokformat_name((TokFormat)ds.format), fb / (1 << 30));
        }
    }
    model_destroy(m);
    dataset_free(&ds);
    return LM_OK;
}

/* The CPU, the OpenBLAS build and its kernels, and who chose them (blas_select.h); under
 * mpirun also the process group, as the run store records it. */
static int show_machine(Session *s)
{
    char desc[512], blas[256], kernels[320], cpu_text[160];
    BlasCpu cpu;
    blas_select_read_cpu(&cpu);
    sysinfo_describe(desc, sizeof desc);
    dist_append_machine(desc, sizeof desc);
    sysinfo_blas(blas, sizeof blas);
    blas_select_describe(kernels, sizeof kernels);
    blas_select_cpu_text(&cpu, cpu_text, sizeof cpu_text);
    const char *best = blas_select_best_core(&cpu);
    char code[KERNEL_N_FAMILIES][256];   /* what runs each kernel family (kernels.h) */
    for (int f = 0; f < KERNEL_N_FAMILIES; f++)
        kernels_chosen((KernelFamily)f, code[f], sizeof code[f]);
    if (s->json) {
        json_t *fam = json_object();
        for (int f = 0; f < KERNEL_N_FAMILIES; f++)
            json_object_set_new(fam, kernels_family_name((KernelFamily)f), json_string(code[f]));
        session_emit_json(s, json_pack("{s:s s:s s:s s:s s:s s:s s:o}", "machine", desc, "cpu",
                                       cpu_text, "blas", blas, "kernels", kernels, "blas_core",
                                       openblas_get_corename(), "best_core", best,
                                       "kernel_families", fam));
        return LM_OK;
    }
    char fams[KERNEL_N_FAMILIES * 280] = "";
    for (int f = 0, o = 0; f < KERNEL_N_FAMILIES && o < (int)sizeof fams; f++)
        o += snprintf(fams + o, sizeof fams - (size_t)o, "\n  %-12s %s",
                      kernels_family_name((KernelFamily)f), code[f]);
    session_printf(s, "machine  %s\ncpu      %s\nblas     %s\nkernels  %s\nbest     %s "
                   "(the strongest OpenBLAS core this CPU supports)\ncode per kernel family "
                   "(chosen at run time):%s", desc, cpu_text, blas, kernels,
                   *best ? best : "unknown", fams);
    return LM_OK;
}

int cmd_show(Session *s, int argc, const LexWord *argv)
{
    const char *what = argc > 1 ? argv[1].text : "config";
    if (!strcmp(what, "config")) {
        show_config(s);
        return LM_OK;
    }
    if (!strcmp(what, "model"))
        return show_model(s, 0);
    if (!strcmp(what, "data"))
        return show_model(s, 1);
    if (!strcmp(what, "machine"))
        return show_machine(s);
    return session_error(s, LM_EARG, "show %s: expected config, model, data or machine", what);
}
