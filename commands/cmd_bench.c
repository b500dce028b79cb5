/* cmd_bench.c — `bench [WORKLOAD ...] [steps=N] [tokens=N]`: the arguments (names checked
 * before anything runs; --json, as `lmlab bench ... --json`, and --help taken here too),
 * the machine, its kernels and peaks, then each named workload handed to the file that
 * measures it: training and sampling (cmd_bench_train.c), store, track and board
 * (cmd_bench_store.c, cmd_bench_track.c), data (cmd_bench_data.c, cmd_bench_data_use.c),
 * tokenizer (cmd_bench_tok.c). */
#include "cmd_bench.h"

#include "session.h"
#include "bench.h"
#include "bench_peak.h"
#include "blas_select.h"
#include "err.h"
#include "kernels.h"
#include "output.h"
#include "sysinfo.h"

#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* precision=fp32|bf16|both as a bit set (1 fp32, 2 bf16); -1 for anything else. */
static int bench_precisions(const char *v)
{
    return !strcmp(v, "fp32") ? 1 : !strcmp(v, "bf16") ? 2 : !strcmp(v, "both") ? 3 : -1;
}

/* The bf16 peak beside the sgemm one (when bf16 is asked for or the CPU has it). */
static void bench_bf16_peak_line(Output *mo, int prec)
{
    const char *k = bench_bf16_kernel();
    if (!k && !(prec & 2))
        return;
    double g = bench_peak_for("bf16");
    output_real(mo, "bf16_gflops", g);
    output_str(mo, "bf16_kernel", k ? k : "none");
    output_line(mo, !k ? "bf16: no kernel (this CPU lacks avx512_bf16)"
                                        : "bf16 peak {bf16_gflops:%.1f} GFLOP/s (1536^3, "
                                          "{bf16_kernel} kernel)");
}

/* A workload `bench` knows: a built-in training workload, an experiment, sample, store,
 * board or all. */
static int bench_name_ok(const char *name)
{
    BenchWorkload w;
    char err[LM_ERR_LEN], path[1024];
    return !strcmp(name, "sample") || !strcmp(name, "store") || !strcmp(name, "track") || !strcmp(name, "all") ||
           !strcmp(name, "data") ||
           !strcmp(name, "tokenizer") ||
           !strcmp(name, "board") ||
           bench_workload(name, &w, err) == LM_OK ||
           session_find_experiment(name, path, sizeof path) == 0;
}

/* `bench --help`: the usage and the workloads, from the command table and bench.c. */
static int bench_help(Session *s)
{
    int n = s->n_commands;
    const Command *table = s->commands;
    for (int i = 0; i < n; i++)
        if (!strcmp(table[i].name, "bench"))
            session_printf(s, "bench [WORKLOAD ...] [steps=N] [tokens=N] [precision=fp32|bf16|"
                           "both] [--json]: %s\n%s",
                           table[i].summary, table[i].help ? table[i].help : "");
    char line[512];
    int o = snprintf(line, sizeof line, "workloads:");
    for (const char *const *w = bench_workload_names(); *w && o < (int)sizeof line; w++)
        o += snprintf(line + o, sizeof line - (size_t)o, " %s", *w);
    if (o < (int)sizeof line)
        snprintf(line + o, sizeof line - (size_t)o, " sample store board tokenizer all, or an "
                 "experiment's name (default: small small-msa sample)");
    session_printf(s, "%s", line);
    return LM_OK;
}

/* The machine, its kernels and the peaks, before any workload. */
static void print_machine(Session *s, int prec)
{
    char desc[256], kernels[320];
    sysinfo_describe(desc, sizeof desc);
    double peak = bench_peak_for("fp32");
    blas_select_describe(kernels, sizeof kernels);
    Output *mo = output_create("machine");
    output_str(mo, "machine", desc);
    output_str(mo, "kernels", kernels);
    output_str(mo, "blas_core", openblas_get_corename());
    output_real(mo, "sgemm_gflops", peak);
    output_line(mo, "machine: {machine}; sgemm peak {sgemm_gflops:%.1f} GFLOP/s (1536^3)");
    output_line(mo, "kernels: {kernels}");
    char code[KERNEL_N_FAMILIES * 96] = "", one[256];   /* what each family runs here */
    for (int f = 0, o = 0; f < KERNEL_N_FAMILIES && o < (int)sizeof code; f++) {
        kernels_chosen((KernelFamily)f, one, sizeof one);
        int n = (int)strcspn(one, "(");   /* the name without its explanation */
        while (n > 0 && one[n - 1] == ' ')
            n--;
        o += snprintf(code + o, sizeof code - (size_t)o, "%s%s %.*s", f ? ", " : "",
                      kernels_family_name((KernelFamily)f), n, one);
    }
    output_str(mo, "code", code);
    output_line(mo, "code: {code}");
    bench_bf16_peak_line(mo, prec);
    output_emit(s, mo);
}

/* bench's numeric settings (steps=, tokens=, diagnostics=, mb=, gb=). */
typedef struct {
    int steps, tokens, diagnostics, data_mb;
    double data_gb;
} BenchArgs;

/* Takes w when it is one of BenchArgs' keys: 1 taken, 0 not one of them, -1 refused (said):
 * each a whole number (gb= a decimal) within its range. */
static int bench_numeric_key(Session *s, const LexWord *w, BenchArgs *a)
{
    const struct {
        const char *key, *what;
        double lo, hi;
        int *n;       /* a whole number's place, or */
        double *x;    /* a decimal's */
    } keys[] = {
        {"steps", "the timed steps of each training workload", 1, 1000000, &a->steps, NULL},
        {"tokens", "the tokens the sampling bench generates", 1, 1000000, &a->tokens, NULL},
        {"diagnostics", "the steps between two diagnostics collections", 1, 100000000,
         &a->diagnostics, NULL},
        {"mb", "the generated corpus's size in MB", 1, 100000, &a->data_mb, NULL},
        {"gb", "the largest token cache's size in GB", 1.1, 1000, NULL, &a->data_gb},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (strcmp(w->key, keys[k].key))
            continue;
        char *end;
        errno = 0;
        double v = keys[k].x ? strtod(w->value, &end) : (double)strtol(w->value, &end, 10);
        if (*end || end == w->value || errno || !(v >= keys[k].lo && v <= keys[k].hi))
            return session_error(s, LM_EARG, "bench: %s=%s: give %s, %s from %.10g to %.10g",
                                 keys[k].key, w->value, keys[k].what,
                                 keys[k].x ? "a number" : "a whole number", keys[k].lo,
                                 keys[k].hi), -1;
        if (keys[k].x)
            *keys[k].x = v;
        else
            *keys[k].n = (int)v;
        return 1;
    }
    return 0;
}

static int bench_command(Session *s, int argc, const LexWord *argv)
{
    char err[LM_ERR_LEN];
    BenchArgs a = {.tokens = 512, .data_mb = 50, .data_gb = 4};
    int n_named = 0, prec = 1, prec_given = 0, taken;
    const char *tok_list = NULL, *tok_file = NULL;   /* bench tokenizer's */
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && (taken = bench_numeric_key(s, &argv[i], &a)) != 0) {
            if (taken < 0) return LM_EARG;
        }
        else if (argv[i].key && !strcmp(argv[i].key, "tokenizer")) {   /* checked before any run */
            if (cmd_bench_tokenizer_list(s, tok_list = argv[i].value, NULL) < 0) return LM_EARG;
        }
        else if (argv[i].key && !strcmp(argv[i].key, "file")) tok_file = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "precision")) {
            prec_given = 1;
            if ((prec = bench_precisions(argv[i].value)) < 0)
                return session_error(s, LM_EARG, "bench: precision must be fp32, bf16 or "
                                     "both (fp32 and bf16 side by side), not '%s'",
                                     argv[i].value);
        }
        else if (argv[i].key) return session_error(s, LM_EARG, "bench: unknown key '%s'",
                                                   argv[i].key);
        else if (!strcmp(argv[i].text, "--json")) s->json = 1;
        else if (!strcmp(argv[i].text, "--help") || !strcmp(argv[i].text, "-h"))
            return bench_help(s);
        else if (bench_name_ok(argv[i].text)) n_named++;
        else return session_error(s, LM_EARG, "bench: unknown workload '%s': neither a built-in "
                                  "one (`bench --help` lists them) nor an experiment (`use` "
                                  "lists them)", argv[i].text);
    }
    sysinfo_set_threads(s->cfg.threads > 0 ? s->cfg.threads : sysinfo_cores());
    int threads = s->cfg.threads;
    print_machine(s, prec);
    const char *defaults[] = {"small", "small-msa", "sample", NULL};
    int rc = LM_OK;
    for (int i = 0; n_named ? i < argc : defaults[i] != NULL; i++) {
        const char *name = n_named ? argv[i].text : defaults[i];
        if (n_named && (i == 0 || argv[i].key || argv[i].text[0] == '-'))
            continue;
        if (!strcmp(name, "sample")) { rc |= cmd_bench_sampling(s, a.tokens); continue; }
        if (!strcmp(name, "store")) { rc |= cmd_bench_store(s, a.steps > 0 ? a.steps : 300); continue; }
        if (!strcmp(name, "track")) {   /* cmd_bench_track.c, against a small step here */
            BenchWorkload w;
            bench_workload("small", &w, err);
            double tps = cmd_bench_store_run(NULL, a.steps > 0 ? a.steps : 200, err);
            rc |= tps < 0 ? session_error(s, LM_EIO, "track bench: %s", err)
                          : cmd_bench_track(s, tps, (long)w.cfg.batch * w.cfg.bptt);
            continue;
        }
        if (!strcmp(name, "board")) { rc |= cmd_bench_board(s); continue; }
        if (!strcmp(name, "data")) {   /* cmd_bench_data.c: prepare MB/s per tokenizer; */
            rc |= cmd_bench_data_prepare(s, a.data_mb, threads);   /* cmd_bench_data_use.c: */
            rc |= cmd_bench_data_use(s, a.data_gb);   /* starts, memory, the feed's share */
            continue;
        }
        if (!strcmp(name, "tokenizer")) { rc |= cmd_bench_tokenizer(s, tok_list, tok_file); continue; }
        if (!strcmp(name, "all")) { rc |= cmd_bench_all(s, a.steps, threads, prec, a.tokens); continue; }
        rc |= cmd_bench_training(s, name, a.steps, prec_given ? prec : 0, a.diagnostics);
    }
    return rc ? LM_EIO : LM_OK;
}

/* --json applies to this command only: the session's own setting comes back after it. */
int cmd_bench(Session *s, int argc, const LexWord *argv)
{
    int json = s->json, rc = bench_command(s, argc, argv);
    s->json = json;
    return rc;
}
