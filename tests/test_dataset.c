/* test_dataset.c — dataset loading (bundled names, the 0.9 split of a text file, WikiText
 * directory layouts, a given tokenizer, errors for missing files, directories without
 * splits, FIFOs, empty and too-short files) and the batchers (stream windows consecutive
 * with y shifted by one and an epoch wrap; random windows deterministic per seed and in
 * range; exact resume through get/set state). Expected sizes computed with python3. */
#include "check.h"
#include "dataset.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static void write_file(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text)) exit(1);
    fclose(f);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    char *s = malloc(*n + 1);
    if (fread(s, 1, *n, f) != *n) exit(1);
    fclose(f);
    s[*n] = 0;
    return s;
}

static void test_bundled(const char *data_dir)
{
    char err[LM_ERR_LEN] = "", path[1200];
    Dataset ds;
    int rc = dataset_load(&ds, "tinyshakespeare", TOKENIZER_CHAR, 0, 0.9, NULL, err);
    CHECK(rc == LM_OK, "tinyshakespeare: %s", err);
    /* python3: n = 1115394; int(0.9 * n) = 1003854 train, 111540 valid */
    CHECK(ds.n[SPLIT_TRAIN] == 1003854 && ds.n[SPLIT_VALID] == 111540 && ds.n[SPLIT_TEST] == 0,
          "0.9 split: %zu %zu %zu", ds.n[0], ds.n[1], ds.n[2]);
    CHECK(ds.n_chars == 111540, "n_chars %zu", ds.n_chars);
    CHECK(tokenizer_vocab_size(ds.tok) == 65 && !strcmp(ds.name, "tinyshakespeare"), "vocab, name");
    size_t n;
    snprintf(path, sizeof path, "%s/tinyshakespeare.txt", data_dir);
    char *raw = slurp(path, &n);
    CHECK(raw && ds.hash == tokenizer_fnv1a(raw, n, TOKENIZER_FNV_SEED), "hash of the raw bytes");
    int *all;
    size_t m;
    tokenizer_encode(ds.tok, raw, n, &all, &m, err);
    CHECK(m == 1115394 && !memcmp(all + 1003854, ds.split[SPLIT_VALID].mem, 111540 * sizeof(int)) &&
          !memcmp(all, ds.split[SPLIT_TRAIN].mem, 1003854 * sizeof(int)), "splits = the file's ids cut at 0.9");
    printf("  tinyshakespeare: %s, train %zu valid %zu, hash %016llx\n", ds.source, ds.n[0], ds.n[1], ds.hash);

    /* a given tokenizer (a clone of this one, for resuming) gives the same ids */
    char *json = tokenizer_save(ds.tok);
    Tokenizer *clone;
    tokenizer_load(json, &clone, err);
    Dataset d2;
    rc = dataset_load(&d2, path, TOKENIZER_WORD, 0, 0.9, clone, err);
    CHECK(rc == LM_OK && tokenizer_kind(d2.tok) == TOKENIZER_CHAR && d2.n[0] == ds.n[0] &&
          !memcmp(d2.split[1].mem, ds.split[1].mem, ds.n[1] * sizeof(int)), "given tokenizer: %s", err);
    CHECK(!strcmp(d2.name, path), "a path is its own name");
    dataset_free(&d2);
    free(json); free(all); free(raw);
    dataset_free(&ds);
    CHECK(ds.tok == NULL && ds.split[0].mem == NULL, "dataset_free zeroes");

    rc = dataset_load(&ds, "wikitext-small", TOKENIZER_WORD, 0, 0.9, NULL, err);
    CHECK(rc == LM_OK, "wikitext-small: %s", err);
    /* python3, word_language_model counting: 198351, 22658, 24560 tokens; train vocab 12745 */
    CHECK(ds.n[0] == 198351 && ds.n[1] == 22658 && ds.n[2] == 24560, "wikitext-small splits %zu %zu %zu",
          ds.n[0], ds.n[1], ds.n[2]);
    CHECK(tokenizer_vocab_size(ds.tok) == 12745, "vocab from train only: %d", tokenizer_vocab_size(ds.tok));
    CHECK(ds.n_chars == 114379, "valid characters %zu (python3: 114379)", ds.n_chars);
    printf("  wikitext-small (word): %s, vocab %d\n", ds.source, tokenizer_vocab_size(ds.tok));
    dataset_free(&ds);

    rc = dataset_load(&ds, "wikitext-small", TOKENIZER_BPE, 512, 0.9, NULL, err);
    CHECK(rc == LM_OK, "wikitext-small bpe: %s", err);
    snprintf(path, sizeof path, "%s/wikitext-small/valid.txt", data_dir);
    raw = slurp(path, &n);
    char *text = tokenizer_decode(ds.tok, ds.split[1].mem, ds.n[1]);
    CHECK(text && strlen(text) == n && !memcmp(text, raw, n), "BPE valid split decodes to valid.txt");
    free(text); free(raw);
    dataset_free(&ds);

    rc = dataset_load(&ds, "wikitext-small", TOKENIZER_CHAR, 0, 0.9, NULL, err);
    CHECK(rc == LM_OK && ds.n[1] == 114379 && ds.n_chars == 114379, "char over all splits: %s", err);
    dataset_free(&ds);

    /* python3 with torchtext's basic_english regular expressions and
     * build_vocab_from_iterator order: 11291 tokens (<unk> the , . of ... the last '♯'),
     * the valid split 22263 ids summing to 724469 mod 1000003 */
    rc = dataset_load(&ds, "wikitext-small", TOKENIZER_BASIC_ENGLISH, 0, 0.9, NULL, err);
    CHECK(rc == LM_OK && tokenizer_vocab_size(ds.tok) == 11291, "basic_english vocab: %s", err);
    if (!rc) {
        long sum = 0;
        for (size_t i = 0; i < ds.n[1]; i++) sum = (sum + ds.split[1].mem[i]) % 1000003;
        int first[] = { 9, 1017, 218, 19, 1145, 18, 96, 9, 1017, 218 };
        CHECK(ds.n[1] == 22263 && sum == 724469 && !memcmp(ds.split[1].mem, first, sizeof first) &&
              !strcmp(tokenizer_token_text(ds.tok, 1), "the") &&
              !strcmp(tokenizer_token_text(ds.tok, 11290), "\xe2\x99\xaf"),
              "basic_english valid split: %zu ids, sum %ld", ds.n[1], sum);
    }
    dataset_free(&ds);
}

/* The reference WikiText-2 pipeline's vocabulary on wikitext-small's train split against
 * Hugging Face tokenizers + the same recipe in node (tests/fixtures/wordpiece_expected.js
 * wrote wordpiece_pipeline_vocab.txt, one token a line, ids in order). */
static void test_wordpiece_pipeline(void)
{
    Config c;
    char vocab[sizeof c.vocab], want_path[1024], err[LM_ERR_LEN];
    const char *fx = getenv("LMLAB_FIXTURES");
    snprintf(vocab, sizeof vocab, "%s/wordpiece_vocab.txt", fx ? fx : "tests/fixtures");
    snprintf(want_path, sizeof want_path, "%s/wordpiece_pipeline_vocab.txt", fx ? fx : "tests/fixtures");
    config_defaults(&c);
    snprintf(c.tokenizer, sizeof c.tokenizer, "wordpiece");
    snprintf(c.vocab, sizeof c.vocab, "%s", vocab);
    c.vocab_from_train = 1;
    TokenizerKind kind;
    TokenizerOptions opt;
    Dataset ds;
    CHECK(dataset_tokenizer_options(&c, &kind, &opt, err) == LM_OK && kind == TOKENIZER_WORDPIECE &&
          opt.vocab_from_train && !strcmp(opt.vocab_path, vocab), "options from the config");
    int rc = dataset_load_opts(&ds, "wikitext-small", kind, &opt, 0.9, NULL, err);
    CHECK(rc == LM_OK, "wordpiece pipeline: %s", err);
    if (rc) return;
    size_t n;
    char *want = slurp(want_path, &n);
    int id = 0, bad = 0;
    for (char *line = want, *nl; want && (nl = strchr(line, '\n')); line = nl + 1, id++) {
        *nl = 0;
        size_t len;
        const char *got = tokenizer_token_bytes(ds.tok, id, &len);
        if (!got || len != strlen(line) || memcmp(got, line, len)) {
            if (bad++ < 3) fprintf(stderr, "id %d: want '%s', got '%.*s'\n", id, line, (int)len, got ? got : "");
        }
    }
    CHECK(bad == 0 && id == tokenizer_vocab_size(ds.tok) && id == 9627,
          "pipeline vocabulary: %d of %d tokens differ from the node recipe's", bad, id);
    printf("  wordpiece pipeline on wikitext-small: %d tokens, %d differ from node's; train %zu ids\n",
           tokenizer_vocab_size(ds.tok), bad, ds.n[0]);
    free(want);
    dataset_free(&ds);
}

static void test_dirs(void)
{
    char err[LM_ERR_LEN] = "", d[300];
    Dataset ds;
    snprintf(d, sizeof d, "%s/wiki", tmpdir);
    mkdir(d, 0700);
    write_file(d, "wiki.train.tokens", " \n = A = \n \n the cat sat on the mat . \n");
    write_file(d, "wiki.valid.tokens", " \n = B = \n the dog \xc3\xa9 . \n");
    write_file(d, "wiki.test.tokens", "the end \n");
    int rc = dataset_load(&ds, d, TOKENIZER_WORD, 0, 0.5, NULL, err);
    /* train: <eos> | = A = <eos> | <eos> | the cat sat on the mat . <eos> -> 14 tokens */
    CHECK(rc == LM_OK && ds.n[0] == 14 && ds.n[1] == 10 && ds.n[2] == 3, "wiki layout: %s %zu %zu %zu",
          err, ds.n[0], ds.n[1], ds.n[2]);
    CHECK(strstr(ds.source, "wiki.valid.tokens") != NULL, "source names the files: %s", ds.source);
    dataset_free(&ds);
    rc = dataset_load(&ds, d, TOKENIZER_CHAR, 0, 0.5, NULL, err);
    CHECK(rc == LM_OK && ds.n[1] == 24 && ds.n_chars == 24, "char layout: %s %zu", err, ds.n[1]);
    dataset_free(&ds);

    snprintf(d, sizeof d, "%s/txt", tmpdir);
    mkdir(d, 0700);
    write_file(d, "train.txt", "hello world\nhello there\n");
    write_file(d, "valid.txt", "hello world\n");
    rc = dataset_load(&ds, d, TOKENIZER_CHAR, 0, 0.9, NULL, err);
    CHECK(rc == LM_OK && ds.n[0] == 24 && ds.n[1] == 12 && ds.n[2] == 0 && ds.split[2].mem == NULL,
          "txt layout without test: %s", err);
    dataset_free(&ds);

    /* a given tokenizer that cannot encode the text */
    Tokenizer *small;
    tokenizer_train(TOKENIZER_CHAR, "abc", 3, 0, &small, err);
    rc = dataset_load(&ds, d, TOKENIZER_CHAR, 0, 0.9, small, err);
    CHECK(rc == LM_EARG && strstr(err, "given tokenizer") && strstr(err, "train.txt") && ds.tok == NULL,
          "given tokenizer that cannot encode: %d %s", rc, err);
    printf("  %s\n", err);
}

static void expect_error(const char *spec, int want, const char *needle, const char *what)
{
    char err[LM_ERR_LEN] = "";
    Dataset ds;
    int rc = dataset_load(&ds, spec, TOKENIZER_CHAR, 0, 0.9, NULL, err);
    CHECK(rc == want && strstr(err, needle), "%s: rc %d (want %d), '%s'", what, rc, want, err);
    CHECK(ds.tok == NULL && ds.split[0].mem == NULL, "%s: ds zeroed", what);
    printf("  %-22s %s\n", what, err);
}

static void test_errors(void)
{
    char p[300], q[300];
    snprintf(p, sizeof p, "%s/missing.txt", tmpdir);
    expect_error(p, LM_EIO, "missing.txt", "missing file");
    expect_error("no-such-corpus", LM_EIO, "bundled", "unknown name");
    snprintf(p, sizeof p, "%s/emptydir", tmpdir);
    mkdir(p, 0700);
    expect_error(p, LM_EIO, "train.txt", "directory, no files");
    snprintf(p, sizeof p, "%s/novalid", tmpdir);
    mkdir(p, 0700);
    write_file(p, "train.txt", "abc\n");
    expect_error(p, LM_EIO, "valid.txt", "directory, no valid");
    snprintf(p, sizeof p, "%s/fifo", tmpdir);
    CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    expect_error(p, LM_EARG, "FIFO", "FIFO");
    expect_error("/dev/null", LM_EARG, "device", "device");
    write_file(tmpdir, "empty.txt", "");
    snprintf(p, sizeof p, "%s/empty.txt", tmpdir);
    expect_error(p, LM_EFORMAT, "empty", "empty file");
    write_file(tmpdir, "short.txt", "ab");
    snprintf(q, sizeof q, "%s/short.txt", tmpdir);
    expect_error(q, LM_EFORMAT, "too short", "too short");
    char err[LM_ERR_LEN];
    Dataset ds;
    write_file(tmpdir, "ok.txt", "abcdefghij");
    snprintf(q, sizeof q, "%s/ok.txt", tmpdir);
    CHECK(dataset_load(&ds, q, TOKENIZER_CHAR, 0, 1.0, NULL, err) == LM_EARG, "train_frac 1 refused");
    CHECK(dataset_load(&ds, q, TOKENIZER_CHAR, 0, 0.5, NULL, err) == LM_OK && ds.n[0] == 5, "ok: %s", err);
    dataset_free(&ds);
}

/* A TokSeq over a copy of n ids in memory (the batchers read a TokSeq); kept to the end. */
static const TokSeq *seq_of(const int *data, size_t n)
{
    static TokSeq pool[16];
    static int used;
    int *ids = malloc(sizeof(int) * (n ? n : 1));
    memcpy(ids, data, sizeof(int) * n);
    TokSeq *s = &pool[used++ % 16];
    tokseq_free(s);
    tokseq_init_memory(s, ids, n);
    return s;
}

static void test_stream(void)
{
    enum { N = 103, B = 4, T = 5 };
    int data[N], x[B * T], y[B * T], ne;
    for (int i = 0; i < N; i++) data[i] = i;
    Batcher b;
    batcher_init(&b, seq_of(data, N), B, T, BATCH_STREAM, 1);
    /* streams of 103 / 4 = 25 tokens; windows at 0, 5, 10, 15 (T) and 20 (4 = 25 - 1 - 20) */
    const int lens[] = { 5, 5, 5, 5, 4 };
    int ok = 1;
    for (int k = 0; k < 5; k++) {
        int L = batcher_next(&b, x, y, &ne, NULL);
        CHECK(L == lens[k] && ne == 0, "window %d: length %d new_epoch %d", k, L, ne);
        for (int r = 0; r < B; r++)
            for (int t = 0; t < L; t++)
                ok &= x[r * L + t] == r * 25 + 5 * k + t && y[r * L + t] == x[r * L + t] + 1;
    }
    CHECK(ok, "stream windows consecutive, y shifted by one, (B,L) packed");
    CHECK(fabs(batcher_epoch(&b) - 1.0) < 1e-12, "one epoch done: %g", batcher_epoch(&b));
    int L = batcher_next(&b, x, y, &ne, NULL);
    CHECK(L == 5 && ne == 1 && b.epoch == 1 && x[0] == 0 && x[5] == 25, "wrap: L %d ne %d x0 %d", L, ne, x[0]);
    CHECK(fabs(batcher_epoch(&b) - (1 + 5.0 / 24)) < 1e-12, "fractional epoch %g", batcher_epoch(&b));
    int tiny[5] = { 0 };
    batcher_init(&b, seq_of(tiny, 5), 4, 5, BATCH_STREAM, 1);
    CHECK(batcher_next(&b, x, y, &ne, NULL) == 0, "too short for 4 streams: 0");
}

static void test_random(void)
{
    enum { N = 1000, B = 8, T = 16 };
    static int data[N];
    int x[B * T], y[B * T], x2[B * T], y2[B * T], ne;
    for (int i = 0; i < N; i++) data[i] = i;
    Batcher a, b, c;
    batcher_init(&a, seq_of(data, N), B, T, BATCH_RANDOM, 42);
    batcher_init(&b, seq_of(data, N), B, T, BATCH_RANDOM, 42);
    batcher_init(&c, seq_of(data, N), B, T, BATCH_RANDOM, 43);
    int same = 1, differ = 0, ok = 1, wraps = 0;
    for (int k = 0; k < 20; k++) {
        int L = batcher_next(&a, x, y, &ne, NULL);
        wraps += ne;
        CHECK(ne == (k == 7 || k == 14), "epoch of %d batches: call %d new_epoch %d", N / (B * T), k, ne);
        batcher_next(&b, x2, y2, NULL, NULL);
        same &= L == T && !memcmp(x, x2, sizeof x) && !memcmp(y, y2, sizeof y);
        batcher_next(&c, x2, y2, NULL, NULL);
        differ |= memcmp(x, x2, sizeof x) != 0;
        for (int r = 0; r < B; r++) {
            ok &= x[r * T] >= 0 && x[r * T] < N - T - 1;   /* start in [0, n - T - 1) */
            for (int t = 0; t < T; t++)
                ok &= x[r * T + t] == x[r * T] + t && y[r * T + t] == x[r * T + t] + 1;
        }
    }
    CHECK(same, "same seed, same batches");
    CHECK(differ, "another seed, other batches");
    CHECK(ok, "random windows contiguous, y shifted, starts in range");
    CHECK(wraps == 2 && a.epoch == 2, "two wraps in 20 batches of 7 per epoch: %d", wraps);
    int tiny[6] = { 0, 1, 2, 3, 4, 5 };
    batcher_init(&a, seq_of(tiny, 6), 2, 16, BATCH_RANDOM, 1);
    CHECK(batcher_next(&a, x, y, &ne, NULL) == 4 && x[0] == 0 && y[3] == 4, "short data: window n - 2");
}

static void test_resume(BatchMode mode)
{
    enum { N = 500, B = 3, T = 7 };
    static int data[N];
    int x[B * T], y[B * T], xr[B * T], yr[B * T], ne, ner;
    for (int i = 0; i < N; i++) data[i] = (i * 37) % 101;
    Batcher a, b;
    batcher_init(&a, seq_of(data, N), B, T, mode, 9);
    for (int k = 0; k < 30; k++) batcher_next(&a, x, y, &ne, NULL);
    unsigned long long st[4];
    batcher_get_state(&a, st);
    batcher_init(&b, seq_of(data, N), B, T, mode, 12345);
    batcher_set_state(&b, st);
    CHECK(batcher_epoch(&a) == batcher_epoch(&b), "epoch restored");
    int same = 1;
    for (int k = 0; k < 50; k++) {
        int L = batcher_next(&a, x, y, &ne, NULL), Lr = batcher_next(&b, xr, yr, &ner, NULL);
        same &= L == Lr && ne == ner && !memcmp(x, xr, sizeof(int) * B * L) &&
                !memcmp(y, yr, sizeof(int) * B * L);
    }
    CHECK(same, "%s: resumed batcher continues identically", mode == BATCH_STREAM ? "stream" : "random");
}

int main(void)
{
    char data_dir[1024];
    const char *src = getenv("LMLAB_SOURCE");
    if (src) {   /* the source tree's data/, whatever LMLAB_DATA_DIR was built with */
        snprintf(data_dir, sizeof data_dir, "%s/data", src);
        setenv("LMLAB_DATA", data_dir, 1);
    } else {
        snprintf(data_dir, sizeof data_dir, "%s", LMLAB_DATA_DIR);
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lmlab_test_dataset_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    BatchMode mode;
    CHECK(batcher_mode_parse("random", &mode) == 0 && mode == BATCH_RANDOM, "parse random");
    CHECK(batcher_mode_parse("shuffle", &mode) == -1, "parse rejects shuffle");
    CHECK(!strcmp(dataset_split_name(SPLIT_VALID), "valid"), "split names");
    printf("bundled:\n");
    test_bundled(data_dir);
    printf("directories:\n");
    test_dirs();
    printf("wordpiece pipeline:\n");
    test_wordpiece_pipeline();
    printf("errors:\n");
    test_errors();
    test_stream();
    test_random();
    test_resume(BATCH_STREAM);
    test_resume(BATCH_RANDOM);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
