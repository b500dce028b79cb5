/* cmd_bench_data.c — the prepare half of `bench data`: prepare MB/s per tokenizer over a
 * generated corpus (words drawn from a fixed list with a fixed seed, lines of 5-25 words),
 * on every core or `threads`, each into a fresh temporary token cache that is removed
 * afterwards. The rest of `bench data` (start time, memory, the feed's share of a step)
 * is the dataset side's. Not a test: it measures this machine. */
#include "cmd_bench.h"

#include "tokcache.h"

#include "err.h"
#include "rng.h"
#include "sysinfo.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const WORDS[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
    "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "language",
    "model", "training", "dispatcher", "attention", "network", "tokens", "corpus", "shard",
    "memory", "during", "between", "October", "1987", "3.14", "(see", "below),", "don't",
    "naïve", "café", "Zürich", "über", "日本語", "данные", "—", "\"quoted\"", "x=1;", "it's",
};

/* Writes about mb MB of generated English-like text to path. */
static int make_corpus(const char *path, int mb, char *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return err_set(err, LM_EIO, "cannot write '%s'", path);
    Rng r;
    rng_seed(&r, 1234);
    const int nw = (int)(sizeof WORDS / sizeof WORDS[0]);
    unsigned long long target = (unsigned long long)mb * 1000000ULL, n = 0;
    while (n < target) {
        int k = 5 + (int)rng_below(&r, 21);
        for (int i = 0; i < k; i++) {
            const char *w = WORDS[rng_below(&r, (uint32_t)nw)];
            n += (unsigned long long)fprintf(f, i ? " %s" : "%s", w);
        }
        n += (unsigned long long)fprintf(f, rng_below(&r, 8) ? ".\n" : ".\n\n");
    }
    if (fclose(f)) return err_set(err, LM_EIO, "cannot write '%s'", path);
    return LM_OK;
}

static int quiet(const TokCacheProgress *p, void *ud)
{
    (void)p;
    return ((Session *)ud)->interrupt != 0;
}

int cmd_bench_data_prepare(Session *s, int mb, int threads)
{
    char base[] = "/tmp/lmlab-bench-data-XXXXXX", corpus[200], root[200], err[LM_ERR_LEN];
    if (!mkdtemp(base)) return session_error(s, LM_EIO, "bench data: cannot make a temporary folder");
    snprintf(corpus, sizeof corpus, "%s/corpus.txt", base);
    snprintf(root, sizeof root, "%s/tokens", base);
    int rc = make_corpus(corpus, mb, err);
    int cores = threads > 0 ? threads : sysinfo_cores();
    if (!rc && !s->json)
        session_printf(s, "data prepare: %d MB generated text, %d thread%s (a shared machine "
                       "measures lower)", mb, cores, cores == 1 ? "" : "s");
    for (int k = 0; !rc && k < TOKENIZER_N_KINDS; k++) {
        Config c;
        config_defaults(&c);
        const char *name = tokenizer_kind_name((TokenizerKind)k);
        char e2[LM_ERR_LEN];
        if (config_set(&c, "tokenizer", name, e2)) continue;
        if (k == TOKENIZER_WORDPIECE && config_set(&c, "vocab_from_train", "true", e2)) continue;
        TokCacheRequest r;
        if (tokcache_request_config(&r, &c, root, NULL, err)) { rc = LM_EARG; break; }
        r.spec = corpus;
        r.threads = cores;
        r.force = 1;
        char dir[1200];
        double t0 = sysinfo_now();
        int st = tokcache_ensure(&r, quiet, s, dir, sizeof dir, err);
        double sec = sysinfo_now() - t0;
        if (st) {
            session_printf(s, "  %-14s failed: %s", name, err);
            continue;
        }
        TokCacheEntry e;
        tokcache_inspect(dir, &e);
        unsigned long long tok = e.tokens[0] + e.tokens[1] + e.tokens[2];
        if (s->json)
            session_emit_json(s, json_pack("{s:s s:s s:i s:i s:f s:f s:I}", "bench", "data_prepare",
                                           "tokenizer", name, "threads", cores, "mb", mb, "seconds", sec,
                                           "mb_per_s", mb / sec, "tokens", (json_int_t)tok));
        else
            session_printf(s, "  %-14s %7.1f MB/s  %6.2f s  %11llu tokens", name, mb / sec, sec, tok);
        tokcache_remove(root, e.key, e2);
    }
    unlink(corpus);
    rmdir(root);
    rmdir(base);
    if (rc) return session_error(s, rc, "bench data: %s", err);
    return LM_OK;
}
