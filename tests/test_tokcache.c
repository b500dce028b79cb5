/* test_tokcache.c — the token cache (core/data/tokcache.c, tokcache_prep.c) against
 * dataset.c: the bundled corpora prepared with every trained tokenizer give the same
 * tokens, splits, tokenizer and character count as dataset_load (1 and 2 threads, one
 * shard and many small ones cut inside a shard); the shards' llm.c header and size; uint32
 * shards for a vocabulary over 65,536; fresh / stale / interrupted caches and what the
 * progress notes say; list and remove; the space check before a prepare; a directory's key
 * without walking it, the filesystem's root refused. Sources of every
 * kind are test_corpus.c's. */
#include "check.h"
#include "dataset.h"
#include "err.h"
#include "shard.h"
#include "tokcache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[256], root[300];
#define DATA_DIR_LEN 400
static char notes[8192];

static int collect(const TokCacheProgress *p, void *ud)
{
    (void)ud;
    if (p->message && strlen(notes) + strlen(p->message) + 2 < sizeof notes) {
        strcat(notes, p->message);
        strcat(notes, "\n");
    }
    return 0;
}

/* The n tokens of one split read back from the cache's shards (malloc'd). */
static int *read_split(const char *dir, const char *split, size_t *n)
{
    size_t cap = 1 << 16;
    int *ids = malloc(cap * sizeof *ids);
    *n = 0;
    for (int i = 0;; i++) {
        char p[1400];
        snprintf(p, sizeof p, "%s/%s_%06d.bin", dir, split, i);
        unsigned long long cnt;
        int w;
        char err[LM_ERR_LEN];
        if (access(p, F_OK)) break;
        if (shard_check(p, &cnt, &w, err)) {
            fprintf(stderr, "%s\n", err);
            break;
        }
        FILE *f = fopen(p, "rb");
        fseek(f, SHARD_HEADER_BYTES, SEEK_SET);
        for (unsigned long long k = 0; k < cnt; k++) {
            unsigned char b[4] = {0};
            if (fread(b, 1, (size_t)w, f) != (size_t)w) break;
            if (*n == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
            ids[(*n)++] = (int)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
        }
        fclose(f);
    }
    return ids;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
    b[n] = 0;
    fclose(f);
    return b;
}

/* One corpus and tokenizer: the cache equals dataset_load. */
static void same_as_dataset(const char *spec, TokenizerKind kind, const TokenizerOptions *opt,
                            int threads, unsigned long long shard_tokens, size_t piece)
{
    char err[LM_ERR_LEN], dir[1200];
    Dataset ds;
    int rc = dataset_load_opts(&ds, spec, kind, opt, 0.9, NULL, err);
    CHECK(rc == LM_OK, "dataset_load %s: %s", spec, err);
    if (rc) return;
    TokCacheRequest r = { .spec = spec, .kind = kind, .opt = *opt, .train_frac = (double)0.9f,
                          .threads = threads, .root = root, .shard_tokens = shard_tokens,
                          .piece_bytes = piece };
    r.train_frac = 0.9;   /* dataset_load was given 0.9 */
    rc = tokcache_ensure(&r, collect, NULL, dir, sizeof dir, err);
    CHECK(rc == LM_OK, "ensure %s %s: %s", spec, tokenizer_kind_name(kind), err);
    if (rc) {
        dataset_free(&ds);
        return;
    }
    const char *names[3] = { "train", "valid", "test" };
    for (int s = 0; s < 3; s++) {
        size_t n;
        int *ids = read_split(dir, names[s], &n);
        int same = n == ds.n[s] && (n == 0 || !memcmp(ids, ds.split[s].mem, n * sizeof *ids));
        CHECK(same, "%s %s t%d shard%llu piece%zu: %s split %zu tokens vs dataset's %zu", spec,
              tokenizer_kind_name(kind), threads, shard_tokens, piece, names[s], n, ds.n[s]);
        free(ids);
    }
    char p[1300];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    char *tj = slurp(p);
    Tokenizer *t = NULL;
    CHECK(tj && tokenizer_load(tj, &t, err) == LM_OK, "tokenizer.json loads: %s", err);
    CHECK(t && tokenizer_hash(t) == tokenizer_hash(ds.tok), "%s %s: same tokenizer as dataset_load",
          spec, tokenizer_kind_name(kind));
    snprintf(p, sizeof p, "%s/meta.json", dir);
    char *meta = slurp(p), want[64];
    snprintf(want, sizeof want, "\"chars\": %zu", ds.n_chars);
    CHECK(meta && strstr(meta, want), "%s %s: valid chars %zu in meta.json", spec,
          tokenizer_kind_name(kind), ds.n_chars);
    snprintf(want, sizeof want, "\"content_hash\": \"%016llx\"", ds.hash);
    CHECK(meta && strstr(meta, want), "%s: content hash as dataset.c's", spec);
    free(meta);
    free(tj);
    tokenizer_destroy(t);
    dataset_free(&ds);
}

static void test_same(const char *data_dir)
{
    char shakes[1200], wiki[1200];
    snprintf(shakes, sizeof shakes, "%s/tinyshakespeare.txt", data_dir);
    snprintf(wiki, sizeof wiki, "%s/wikitext-small", data_dir);
    TokenizerOptions o = {0};
    same_as_dataset(shakes, TOKENIZER_CHAR, &o, 1, 0, 0);
    same_as_dataset(shakes, TOKENIZER_CHAR, &o, 2, 100000, 3000);
    same_as_dataset(wiki, TOKENIZER_CHAR, &o, 2, 50000, 5000);
    TokenizerOptions w = { .vocab_size = 5000 };
    same_as_dataset(shakes, TOKENIZER_WORD, &w, 2, 30000, 2000);
    same_as_dataset(wiki, TOKENIZER_WORD, &o, 2, 0, 4096);
    TokenizerOptions b = { .vocab_size = 512 };
    same_as_dataset(shakes, TOKENIZER_BPE, &b, 2, 70000, 0);
    same_as_dataset(shakes, TOKENIZER_BPE, &b, 2, 0, 2500);
    same_as_dataset(wiki, TOKENIZER_BPE, &b, 2, 0, 3000);   /* lines begin with a space */
    same_as_dataset(wiki, TOKENIZER_BASIC_ENGLISH, &o, 2, 0, 4096);
    same_as_dataset(shakes, TOKENIZER_BASIC_ENGLISH, &o, 1, 0, 0);
    TokenizerOptions wp = { .vocab_from_train = 1 };
    char vocab[1200];
    snprintf(vocab, sizeof vocab, "%s/../tests/fixtures/wordpiece_vocab.txt", data_dir);
    wp.vocab_path = vocab;
    same_as_dataset(wiki, TOKENIZER_WORDPIECE, &wp, 2, 0, 4096);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text)) exit(1);
    fclose(f);
}

/* A cache found fresh is used; a changed source makes it stale; an interrupted prepare
 * (a .tmp- directory) is named and removed. */
static void test_states(void)
{
    char src[400], dir[1200], dir2[1200], err[LM_ERR_LEN];
    snprintf(src, sizeof src, "%s/small.txt", tmpdir);
    char text[20000] = "";
    for (int i = 0; i < 400; i++) strcat(text, i % 3 ? "to be or not to be\n" : "that is the question\n");
    write_text(src, text);
    TokCacheRequest r = { .spec = src, .kind = TOKENIZER_WORD, .train_frac = 0.9, .threads = 2, .root = root };
    notes[0] = 0;
    CHECK(tokcache_ensure(&r, collect, NULL, dir, sizeof dir, err) == LM_OK, "first prepare: %s", err);
    CHECK(strstr(notes, "tokens) in "), "first prepare says so: %s", notes);
    notes[0] = 0;
    CHECK(tokcache_ensure(&r, collect, NULL, dir2, sizeof dir2, err) == LM_OK, "again: %s", err);
    CHECK(strstr(notes, "using the prepared tokens") && !strstr(notes, "tokens) in "), "second start uses the cache: %s", notes);
    CHECK(!strcmp(dir, dir2), "same directory");
    /* touched: same bytes, a new mtime: still fresh after its bytes are checked */
    struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = time(NULL) + 100 } };
    utimensat(AT_FDCWD, src, ts, 0);
    notes[0] = 0;
    CHECK(tokcache_ensure(&r, collect, NULL, dir2, sizeof dir2, err) == LM_OK, "touched: %s", err);
    CHECK(strstr(notes, "bytes unchanged (hash checked)") && strstr(notes, "using the prepared") &&
          !strstr(notes, "tokens) in "), "a touched source: checked, still fresh: %s", notes);
    notes[0] = 0;
    CHECK(tokcache_ensure(&r, collect, NULL, dir2, sizeof dir2, err) == LM_OK && !strstr(notes, "touched"),
          "and meta.json has the new mtime: %s", notes);
    /* same size, other bytes, a new mtime: stale */
    text[0] = 'T';
    write_text(src, text);
    ts[1].tv_sec = time(NULL) + 200;
    utimensat(AT_FDCWD, src, ts, 0);
    notes[0] = 0;
    CHECK(tokcache_ensure(&r, collect, NULL, dir2, sizeof dir2, err) == LM_OK, "same size: %s", err);
    CHECK(strstr(notes, "stale") && strstr(notes, "same size") && strstr(notes, "tokens) in "),
          "same size, other bytes: stale, prepared again: %s", notes);
    /* stale: the source grows */
    strcat(text, "whether tis nobler in the mind\n");
    write_text(src, text);
    notes[0] = 0;
    CHECK(tokcache_ensure(&r, collect, NULL, dir2, sizeof dir2, err) == LM_OK, "stale: %s", err);
    CHECK(strstr(notes, "stale") && strstr(notes, "changed since it was prepared") && strstr(notes, "tokens) in "),
          "a changed source: said stale and prepared again: %s", notes);
    size_t n;
    int *ids = read_split(dir2, "valid", &n);
    free(ids);
    CHECK(n > 0, "valid tokens after the re-prepare");
    /* an interrupted prepare: a temp dir without meta.json */
    char key[TOKCACHE_KEY_LEN + 1], tmp[1300];
    CHECK(tokcache_key(&r, key, err) == LM_OK, "key: %s", err);
    snprintf(tmp, sizeof tmp, "%s/.tmp-%s-999999", root, key);
    mkdir(tmp, 0755);
    char shard[1400];
    snprintf(shard, sizeof shard, "%s/all_000000.bin", tmp);
    write_text(shard, "half a shard");
    TokCacheEntry *e;
    int ne;
    CHECK(tokcache_list(root, &e, &ne, err) == LM_OK, "list: %s", err);
    int inc = 0, fresh = 0;
    for (int i = 0; i < ne; i++) {
        inc += e[i].state == TOKCACHE_INCOMPLETE && !strcmp(e[i].key, key);
        fresh += e[i].state == TOKCACHE_FRESH && !strcmp(e[i].key, key) && e[i].tokens[0] > 0;
    }
    free(e);
    CHECK(inc == 1 && fresh == 1, "list: the interrupted prepare is incomplete, the cache fresh (%d %d)", inc, fresh);
    notes[0] = 0;
    r.force = 1;
    CHECK(tokcache_ensure(&r, collect, NULL, dir2, sizeof dir2, err) == LM_OK, "after interrupt: %s", err);
    CHECK(strstr(notes, "interrupted prepare") && access(tmp, F_OK) != 0, "interrupted prepare named and removed: %s", notes);
    r.force = 0;
    /* a damaged shard makes the cache damaged: prepared again */
    char vs[1300];
    snprintf(vs, sizeof vs, "%s/valid_000000.bin", dir2);
    CHECK(truncate(vs, 1030) == 0, "truncate a shard");
    notes[0] = 0;
    CHECK(tokcache_ensure(&r, collect, NULL, dir2, sizeof dir2, err) == LM_OK, "damaged: %s", err);
    CHECK(strstr(notes, "damaged") && strstr(notes, "truncated"), "a truncated shard: damaged, prepared again: %s", notes);
    /* remove */
    CHECK(tokcache_remove(root, key, err) == LM_OK && access(dir2, F_OK) != 0, "remove: %s", err);
    CHECK(tokcache_remove(root, key, err) == LM_EARG && strstr(err, "no prepared tokens"), "remove twice: %s", err);
    CHECK(tokcache_remove(root, "zz", err) == LM_EARG && strstr(err, "not a cache key"), "remove a bad key: %s", err);
}

/* The tokens of train then valid (malloc'd). */
static int *read_all_splits(const char *dir, size_t *n)
{
    size_t a, b;
    int *t = read_split(dir, "train", &a), *v = read_split(dir, "valid", &b);
    t = realloc(t, (a + b + 1) * sizeof *t);
    memcpy(t + a, v, b * sizeof *v);
    free(v);
    *n = a + b;
    return t;
}

/* gpt2 (a pre-trained vocabulary with an end-of-text token): every document is followed
 * by 50256, and pieces cut a few KB apart give the tokens of each document encoded whole
 * (the strict cut against GPT-2's regex, on texts whose lines begin with spaces too). */
static void test_gpt2(const char *data_dir)
{
    char err[LM_ERR_LEN], dir[1200], d[600], files[3][1300];
    Tokenizer *g = NULL;
    if (tokenizer_train(TOKENIZER_GPT2, "", 0, 0, &g, err) != LM_OK) {
        CHECK(0, "gpt2 loads: %s", err);
        return;
    }
    CHECK(tokenizer_eot(g) == 50256, "gpt2's end of text is 50256");
    snprintf(d, sizeof d, "%s/docs", tmpdir);
    mkdir(d, 0755);
    snprintf(files[0], sizeof files[0], "%s/tinyshakespeare.txt", data_dir);
    snprintf(files[1], sizeof files[1], "%s/wikitext-small/valid.txt", data_dir);
    snprintf(files[2], sizeof files[2], "%s/wikitext-small/test.txt", data_dir);
    size_t cap = 1 << 20, n = 0;
    int *want = malloc(cap * sizeof *want);
    for (int i = 0; i < 3; i++) {
        char link[1400];
        snprintf(link, sizeof link, "%s/%d.txt", d, i);
        symlink(files[i], link);
        char *text = slurp(files[i]);
        int *ids;
        size_t k;
        tokenizer_encode(g, text, strlen(text), &ids, &k, err);
        while (n + k + 1 > cap) want = realloc(want, (cap *= 2) * sizeof *want);
        memcpy(want + n, ids, k * sizeof *ids);
        n += k;
        want[n++] = 50256;
        free(ids);
        free(text);
    }
    for (int pass = 0; pass < 2; pass++) {
        TokCacheRequest r = { .spec = d, .kind = TOKENIZER_GPT2, .train_frac = 0.9, .threads = 2,
                              .root = root, .piece_bytes = pass ? 3000 : 0, .force = 1 };
        CHECK(tokcache_ensure(&r, NULL, NULL, dir, sizeof dir, err) == LM_OK, "gpt2 prepare: %s", err);
        size_t got_n;
        int *got = read_all_splits(dir, &got_n);
        size_t diff = 0;
        while (diff < got_n && diff < n && got[diff] == want[diff]) diff++;
        CHECK(got_n == n && diff == n, "gpt2, pieces of %s: %zu tokens vs %zu encoded whole, first "
              "difference at %zu", pass ? "3 KB" : "1 MB", got_n, n, diff);
        free(got);
        char p[1300];
        snprintf(p, sizeof p, "%s/meta.json", dir);
        char *meta = slurp(p);
        long docs = 0;
        for (const char *q = meta; q && (q = strstr(q, "\"documents\": ")); q++) docs += atol(q + 13);
        CHECK(meta && strstr(meta, "\"eot\": 50256") && docs == 3, "meta.json: eot 50256, 3 documents (%ld)", docs);
        free(meta);
    }
    free(want);
    tokenizer_destroy(g);
}

/* llm.c's header and size; uint32 shards for more than 65,536 tokens. */
static void test_layout(void)
{
    char src[400], dir[1200], err[LM_ERR_LEN];
    snprintf(src, sizeof src, "%s/many.txt", tmpdir);
    FILE *f = fopen(src, "w");
    for (int i = 0; i < 80000; i++) fprintf(f, "w%d%s", i, i % 10 == 9 ? "\n" : " ");
    fclose(f);
    TokCacheRequest r = { .spec = src, .kind = TOKENIZER_WORD, .train_frac = 0.9, .threads = 2, .root = root };
    CHECK(tokcache_ensure(&r, NULL, NULL, dir, sizeof dir, err) == LM_OK, "prepare many words: %s", err);
    char p[1300];
    snprintf(p, sizeof p, "%s/train_000000.bin", dir);
    int32_t h[256];
    f = fopen(p, "rb");
    CHECK(f && fread(h, sizeof h, 1, f) == 1, "read the header");
    if (f) fclose(f);
    struct stat st;
    stat(p, &st);
    CHECK(h[0] == 20240801 && h[1] == 7, "uint32 shard: llm.c's magic 20240801 version 7 (%d %d)", h[0], h[1]);
    CHECK(st.st_size == 1024 + 4LL * h[2] && h[2] == 79200, "size = 1024 + 4 * count (%d, %lld)", h[2], (long long)st.st_size);
    for (int i = 3; i < 256; i++) CHECK(h[i] == 0, "header word %d is 0", i);
    /* uint16 */
    TokCacheRequest c = r;
    c.kind = TOKENIZER_CHAR;
    CHECK(tokcache_ensure(&c, NULL, NULL, dir, sizeof dir, err) == LM_OK, "prepare chars: %s", err);
    snprintf(p, sizeof p, "%s/valid_000000.bin", dir);
    f = fopen(p, "rb");
    CHECK(f && fread(h, sizeof h, 1, f) == 1, "read the header");
    if (f) fclose(f);
    stat(p, &st);
    CHECK(h[0] == 20240520 && h[1] == 1 && st.st_size == 1024 + 2LL * h[2], "uint16 shard: 20240520 v1, size %lld for %d",
          (long long)st.st_size, h[2]);
}

static int stop_in_encode(const TokCacheProgress *p, void *ud)
{
    (void)ud;
    return p->phase == TOKCACHE_ENCODE;
}

/* A given tokenizer (a checkpoint's: resume, init_from) is used as it is and keyed by its
 * hash; a prepare stopped by its progress callback keeps nothing. */
static void test_given_and_stop(const char *data_dir)
{
    char shakes[1200], dir[1200], err[LM_ERR_LEN], key[TOKCACHE_KEY_LEN + 1];
    snprintf(shakes, sizeof shakes, "%s/tinyshakespeare.txt", data_dir);
    Tokenizer *t;
    const char *text = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ .,;:!?'-&$3\n";
    CHECK(tokenizer_train(TOKENIZER_CHAR, text, strlen(text), 0, &t, err) == LM_OK, "train: %s", err);
    TokCacheRequest r = { .spec = shakes, .kind = TOKENIZER_WORD, .given = t, .train_frac = 0.9,
                          .threads = 2, .root = root };
    CHECK(tokcache_ensure(&r, NULL, NULL, dir, sizeof dir, err) == LM_OK, "given: %s", err);
    char p[1300], want[64];
    snprintf(p, sizeof p, "%s/meta.json", dir);
    char *meta = slurp(p);
    snprintf(want, sizeof want, "\"hash\": \"%016llx\"", tokenizer_hash(t));
    CHECK(meta && strstr(meta, want) && strstr(meta, "\"kind\": \"char\""), "the given tokenizer is the cache's");
    free(meta);
    char k1[TOKCACHE_KEY_LEN + 1];
    tokcache_key(&r, k1, err);
    r.given = NULL;
    tokcache_key(&r, key, err);
    CHECK(strcmp(k1, key), "a given tokenizer gives another key than training one");
    /* a fresh cache prepared again (force) and stopped: the fresh one stays */
    TokCacheRequest f = r;
    f.given = t;
    f.force = 1;
    CHECK(tokcache_ensure(&f, stop_in_encode, NULL, dir, sizeof dir, err) == LM_ECANCEL, "forced, stopped: %s", err);
    f.force = 0;
    notes[0] = 0;
    CHECK(tokcache_ensure(&f, collect, NULL, dir, sizeof dir, err) == LM_OK && strstr(notes, "using the prepared"),
          "the fresh cache survives a stopped forced prepare: %s", notes);
    /* stopped: nothing kept */
    r.kind = TOKENIZER_BPE;
    r.opt.vocab_size = 300;
    CHECK(tokcache_ensure(&r, stop_in_encode, NULL, dir, sizeof dir, err) == LM_ECANCEL, "stopped: %s", err);
    snprintf(p, sizeof p, "%s/%s", root, key);
    CHECK(access(p, F_OK) != 0, "a stopped prepare keeps no cache");
    TokCacheEntry *e;
    int n, tmps = 0;
    tokcache_list(root, &e, &n, err);
    for (int i = 0; i < n; i++) tmps += !strcmp(e[i].key, key);
    free(e);
    CHECK(tmps == 0, "and no temporary directory");
    tokenizer_destroy(t);
}

/* A prepare that cannot fit is refused before it starts. */
/* Cuts that fall inside a line or a word: a line longer than a piece's 8 MiB, prepared
 * with the word tokenizer, has one <eos> (where it ends, as dataset_load gives), not one
 * more where the piece was cut; the vocabulary's first train_frac of the text, cut inside
 * "delta", takes no fragment "del" (both paths: dataset_load and the cache). */
static void test_cuts(void)
{
    char src[400], dir[1200], err[LM_ERR_LEN];
    snprintf(src, sizeof src, "%s/long_line.txt", tmpdir);
    FILE *f = fopen(src, "wb");
    const char *words[] = { "alpha ", "beta ", "gamma ", "delta " };
    size_t len = 0;
    for (int i = 0; len < ((size_t)9 << 20); i++) {
        fputs(words[i % 4], f);
        len += strlen(words[i % 4]);
    }
    fputs("end", f);   /* no line end at all */
    fclose(f);
    TokenizerOptions opt = { 0 };
    same_as_dataset(src, TOKENIZER_WORD, &opt, 2, 0, 0);
    Dataset ds;
    CHECK(dataset_load_opts(&ds, src, TOKENIZER_WORD, &opt, 0.9, NULL, err) == LM_OK, "load: %s", err);
    int *nl = NULL, id = -1;
    size_t k = 0;
    if (tokenizer_encode(ds.tok, "\n", 1, &nl, &k, err) == LM_OK && k == 1) id = nl[0];
    free(nl);
    long eos = 0;
    for (int s = 0; s < 3; s++)
        for (size_t i = 0; i < ds.n[s]; i++) eos += ds.split[s].mem[i] == id;
    CHECK(id >= 0 && eos == 1 && ds.n[1] && ds.split[1].mem[ds.n[1] - 1] == id,
          "one <eos> (id %d), at the end: %ld", id, eos);
    dataset_free(&ds);

    snprintf(src, sizeof src, "%s/vocab_cut.txt", tmpdir);
    char text[400] = "";
    for (int i = 0; i < 11; i++) strcat(text, "alpha beta gamma delta\n");   /* 0.9 of 253: "del|ta" */
    write_text(src, text);
    CHECK(dataset_load_opts(&ds, src, TOKENIZER_WORD, &opt, 0.9, NULL, err) == LM_OK, "load: %s", err);
    CHECK(tokenizer_vocab_size(ds.tok) == 6, "dataset_load: 4 words, <unk>, <eos>, no fragment: %d",
          tokenizer_vocab_size(ds.tok));
    dataset_free(&ds);
    TokCacheRequest r = { .spec = src, .kind = TOKENIZER_WORD, .train_frac = 0.9, .threads = 1, .root = root };
    CHECK(tokcache_ensure(&r, NULL, NULL, dir, sizeof dir, err) == LM_OK, "prepare: %s", err);
    char p[1300];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    char *tj = slurp(p);
    Tokenizer *t = NULL;
    CHECK(tj && tokenizer_load(tj, &t, err) == LM_OK, "tokenizer.json loads: %s", err);
    CHECK(t && tokenizer_vocab_size(t) == 6, "the cache: no fragment: %d", t ? tokenizer_vocab_size(t) : -1);
    tokenizer_destroy(t);
    free(tj);
    CHECK(tokenizer_sample_end("ab cd", 4, 'd') == 3 && tokenizer_sample_end("ab cd", 3, 'c') == 3 &&
          tokenizer_sample_end("ab cd", 5, -1) == 5 && tokenizer_sample_end("abcd", 2, 'c') == 2 &&
          tokenizer_sample_end("ab c", 4, ' ') == 4, "tokenizer_sample_end's cases");
}

static void test_space(void)
{
    char dir[1200], err[LM_ERR_LEN];
    TokCacheRequest r = { .spec = "/dev/null", .kind = TOKENIZER_CHAR, .train_frac = 0.9, .root = root };
    CHECK(tokcache_ensure(&r, NULL, NULL, dir, sizeof dir, err) != LM_OK && strstr(err, "not a regular file"),
          "a device is refused: %s", err);
    r.spec = "";
    CHECK(tokcache_ensure(&r, NULL, NULL, dir, sizeof dir, err) == LM_EARG && strstr(err, "no dataset"), "empty spec: %s", err);
    r.spec = "/no/such/file.txt";
    CHECK(tokcache_ensure(&r, NULL, NULL, dir, sizeof dir, err) == LM_EIO && strstr(err, "/no/such/file.txt"), "missing: %s", err);
    char rt[1100];
    CHECK(tokcache_root("/a/b/runs.db", "", rt, sizeof rt, err) == LM_OK && !strcmp(rt, "/a/b/lmlab-tokens"), "root beside the store: %s", rt);
    CHECK(tokcache_root("runs.db", "", rt, sizeof rt, err) == LM_OK && !strcmp(rt, "./lmlab-tokens"), "root of a bare name: %s", rt);
    CHECK(tokcache_root("/x.db", "/t", rt, sizeof rt, err) == LM_OK && !strcmp(rt, "/t"), "tokens_dir wins: %s", rt);
}

/* A directory's key without walking it (`data rm DIR` answers at once for any DIR): the
 * key of a directory is the key its prepare uses; a tree the walk refuses (70 deep) still
 * has a key; the filesystem's root is refused, naming it. */
static void test_key_unwalked(void)
{
    char d[600], dir[1200], key[TOKCACHE_KEY_LEN + 1], err[LM_ERR_LEN];
    snprintf(d, sizeof d, "%s/keyed", tmpdir);
    mkdir(d, 0755);
    snprintf(dir, sizeof dir, "%s/keyed/a.txt", tmpdir);
    write_text(dir, "to be or not to be\nthat is the question\n");
    TokCacheRequest r = { .spec = d, .kind = TOKENIZER_CHAR, .train_frac = 0.9, .threads = 1,
                          .root = root };
    CHECK(tokcache_key(&r, key, err) == LM_OK && tokcache_ensure(&r, NULL, NULL, dir, sizeof dir,
          err) == LM_OK && strstr(dir, key), "the unwalked key is the prepare's: %s %s", key, dir);
    snprintf(d, sizeof d, "%s/deep", tmpdir);
    for (int i = 0; i <= 70; i++) {
        mkdir(d, 0755);
        if (i < 70) strcat(d, "/d");
    }
    snprintf(d, sizeof d, "%s/deep", tmpdir);
    CHECK(tokcache_key(&r, key, err) == LM_OK, "a tree its walk refuses has a key: %s", err);
    r.spec = "/";
    CHECK(tokcache_key(&r, key, err) == LM_EARG && strstr(err, "root of the filesystem"),
          "/ refused: %s", err);
}

int main(void)
{
    char data_dir[1024];
    const char *src = getenv("LMLAB_SOURCE");
    snprintf(data_dir, sizeof data_dir, "%s/data", src ? src : ".");
    setenv("LMLAB_DATA", data_dir, 1);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lmlab_test_tokcache_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    snprintf(root, sizeof root, "%s/lmlab-tokens", tmpdir);
    printf("same as dataset_load:\n");
    test_same(data_dir);
    printf("states:\n");
    test_states();
    printf("gpt2:\n");
    test_gpt2(data_dir);
    printf("layout:\n");
    test_layout();
    test_space();
    test_cuts();
    test_given_and_stop(data_dir);
    test_key_unwalked();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
