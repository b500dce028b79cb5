/* bench_tok.c — encoding speed of a tokenizer on one core (see bench_tok.h). Not the
 * command (commands/cmd_bench_tok.c) and not a multi-threaded prepare. */
#include "bench_tok.h"

#include "err.h"
#include "sysinfo.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_TOK_TRAIN_MAX (1u << 20)
#define BENCH_TOK_MIN_S 1.0

static double thread_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) ? 0 : (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int bench_tok_encode(TokenizerKind kind, const TokenizerOptions *opt, const char *text,
                     size_t len, BenchTokResult *r, char *err)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->bytes = len;
    size_t train = kind == TOKENIZER_CHAR || len < BENCH_TOK_TRAIN_MAX ? len : BENCH_TOK_TRAIN_MAX;
    Tokenizer *t;
    double t0 = sysinfo_now();
    int rc = tokenizer_train_opts(kind, text, train, opt, &t, err);
    if (rc) return rc;
    r->build_s = sysinfo_now() - t0;
    r->vocab = tokenizer_vocab_size(t);
    double spent = 0;
    while (!rc && (r->passes < 2 || spent < BENCH_TOK_MIN_S)) {
        int *ids;
        size_t n;
        double a = sysinfo_now(), ca = thread_cpu_s();
        rc = tokenizer_encode(t, text, len, &ids, &n, err);
        double d = sysinfo_now() - a, cd = thread_cpu_s() - ca;
        if (rc) break;
        free(ids);
        spent += d;
        if (!r->passes || d < r->best_s) r->best_s = d;
        if (!r->passes || cd < r->best_cpu_s) r->best_cpu_s = cd;
        if (!r->passes) r->first_cpu_s = cd;
        r->tokens = n;
        r->passes++;
    }
    tokenizer_destroy(t);
    if (!rc) {
        r->mb_per_s = r->best_s > 0 ? (double)len / r->best_s / 1e6 : 0;
        r->mb_per_cpu_s = r->best_cpu_s > 0 ? (double)len / r->best_cpu_s / 1e6 : 0;
        r->first_mb_per_cpu_s = r->first_cpu_s > 0 ? (double)len / r->first_cpu_s / 1e6 : 0;
    }
    return rc;
}
