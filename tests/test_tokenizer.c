/* test_tokenizer.c — char, word and BPE tokenizers: ids against Python's recipes (values
 * computed once with python3 and hard-coded below), exact round trips, BPE determinism,
 * JSON save/load round trips and rejection of corrupted JSON. Prints encoding speeds
 * (MB/s) and the BPE training time; no timing is asserted. */
#include "check.h"
#include "err.h"
#include "rng.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads data/<rel> from $LMLAB_SOURCE (meson sets it), else LMLAB_DATA_DIR. */
static char *read_data(const char *rel, size_t *len)
{
    char path[2048];
    const char *src = getenv("LMLAB_SOURCE");
    if (src) snprintf(path, sizeof path, "%s/data/%s", src, rel);
    else snprintf(path, sizeof path, "%s/%s", LMLAB_DATA_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) exit(1);
    fclose(f);
    s[n] = 0;
    *len = (size_t)n;
    return s;
}

static Tokenizer *train(TokenizerKind k, const char *s, size_t n, int V)
{
    char err[LM_ERR_LEN] = "";
    Tokenizer *t = NULL;
    int rc = tokenizer_train(k, s, n, V, &t, err);
    CHECK(rc == LM_OK && t, "train %s: %s", tokenizer_kind_name(k), err);
    return t;
}

/* Encodes, decodes and compares bytes; returns the ids (caller frees). */
static int *round_trip(const Tokenizer *t, const char *s, size_t n, size_t *m, const char *what)
{
    char err[LM_ERR_LEN] = "";
    int *ids = NULL;
    int rc = tokenizer_encode(t, s, n, &ids, m, err);
    CHECK(rc == LM_OK, "%s encode: %s", what, err);
    char *back = tokenizer_decode(t, ids, *m);
    CHECK(back && !memcmp(back, s, n), "%s: decode(encode(text)) differs from the text", what);
    free(back);
    return ids;
}

static void speed(const Tokenizer *t, const char *s, size_t n)
{
    char err[LM_ERR_LEN];
    int *ids;
    size_t m;
    double t0 = now();
    tokenizer_encode(t, s, n, &ids, &m, err);
    double dt = now() - t0;
    printf("  encode %-4s (V=%5d): %.2f MB in %.4f s = %.1f MB/s, %zu tokens\n",
           tokenizer_kind_name(tokenizer_kind(t)), tokenizer_vocab_size(t), n / 1e6, dt,
           n / 1e6 / dt, m);
    free(ids);
}

static void test_char(const char *ts, size_t tn)
{
    Tokenizer *t = train(TOKENIZER_CHAR, ts, tn, 0);
    CHECK(tokenizer_vocab_size(t) == 65, "Tiny Shakespeare has 65 characters, got %d",
          tokenizer_vocab_size(t));
    /* python3: v = sorted(set(text)); [v.index(c) for c in '\n !AZaz'] == [0,1,2,13,38,39,64];
     * the notebook's tokenizer.encode('hello there') == [46,43,50,50,53,1,58,46,43,56,43] */
    const char *chars = "\n !AZaz";
    const int want[] = { 0, 1, 2, 13, 38, 39, 64 }, hello[] = { 46, 43, 50, 50, 53, 1, 58, 46, 43, 56, 43 };
    char err[LM_ERR_LEN] = "";
    int *ids;
    size_t m;
    CHECK(tokenizer_encode(t, chars, 7, &ids, &m, err) == LM_OK && m == 7, "%s", err);
    for (int i = 0; i < 7; i++) CHECK(ids[i] == want[i], "char %d: id %d, want %d", i, ids[i], want[i]);
    free(ids);
    CHECK(tokenizer_encode(t, "hello there", 11, &ids, &m, err) == LM_OK && m == 11, "%s", err);
    for (int i = 0; i < 11; i++) CHECK(ids[i] == hello[i], "hello[%d] %d want %d", i, ids[i], hello[i]);
    free(ids);
    ids = round_trip(t, ts, tn, &m, "char Tiny Shakespeare");
    CHECK(m == tn, "one id per character: %zu vs %zu", m, tn);
    free(ids);
    CHECK(!strcmp(tokenizer_token_text(t, 0), "\\n"), "display of newline: '%s'", tokenizer_token_text(t, 0));
    char buf[8];
    CHECK(tokenizer_decode_token(t, 13, buf, sizeof buf) == 1 && buf[0] == 'A', "decode_token A");
    CHECK(tokenizer_decode_token(t, 65, buf, sizeof buf) == -1, "invalid id gives -1");
    int rc = tokenizer_encode(t, "ab\xc3\xa9", 4, &ids, &m, err);
    CHECK(rc == LM_EARG && strstr(err, "U+00E9") && strstr(err, "65 characters"),
          "unknown character: rc %d '%s'", rc, err);
    printf("  unknown character message: %s\n", err);
    tokenizer_destroy(t);

    /* UTF-8 and invalid bytes; python3: sorted(set(s.decode('utf-8', 'surrogateescape'))) */
    const char u[] = "h\xc3\xa9llo w\xc3\xb6rld \xe2\x82\xac\xf0\x9d\x84\x9e \xff\xc3( \xed\xa0\x80 \xc0\xaf\n";
    const unsigned want_cp[20] = { 0xa, 0x20, 0x28, 0x64, 0x68, 0x6c, 0x6f, 0x72, 0x77, 0xe9, 0xf6,
                                   0x20ac, 0xdc80, 0xdca0, 0xdcaf, 0xdcc0, 0xdcc3, 0xdced, 0xdcff, 0x1d11e };
    t = train(TOKENIZER_CHAR, u, sizeof u - 1, 0);
    CHECK(tokenizer_vocab_size(t) == 20, "20 symbols, got %d", tokenizer_vocab_size(t));
    char *json = tokenizer_save(t);
    char expect[512] = "{\"format\":\"lmlab-tokenizer\",\"version\":1,\"kind\":\"char\",\"vocab_size\":20,\"chars\":[";
    for (int i = 0; i < 20; i++)
        sprintf(expect + strlen(expect), "%u%s", want_cp[i], i < 19 ? "," : "]}");
    CHECK(json && !strcmp(json, expect), "char JSON\n got %s\nwant %s", json, expect);
    free(json);
    free(round_trip(t, u, sizeof u - 1, &m, "char UTF-8 + invalid bytes"));
    /* python3: len(s.decode('utf-8', 'surrogateescape')) == 26 */
    CHECK(m == 26, "26 symbols in the UTF-8 sample, got %zu", m);
    CHECK(tokenizer_count_chars(u, sizeof u - 1) == 26, "count_chars");
    tokenizer_destroy(t);
}

static void test_word(void)
{
    size_t n, nv, m;
    char *tr = read_data("wikitext-small/train.txt", &n), *va = read_data("wikitext-small/valid.txt", &nv);
    Tokenizer *t = train(TOKENIZER_WORD, tr, n, 0);
    /* python3, PyTorch word_language_model Dictionary over train.txt: 12745 words,
     * 198351 tokens, first ids <eos> = 0, '=' = 1, 'Robert' = 2, '<unk>' = 3 */
    CHECK(tokenizer_vocab_size(t) == 12745, "word vocab %d", tokenizer_vocab_size(t));
    int *ids = round_trip(t, "", 0, &m, "empty");
    free(ids);
    char err[LM_ERR_LEN];
    CHECK(tokenizer_encode(t, tr, n, &ids, &m, err) == LM_OK && m == 198351, "train tokens %zu", m);
    CHECK(ids[0] == 0 && ids[1] == 1 && ids[2] == 2 && ids[3] == 3, "first ids %d %d %d %d",
          ids[0], ids[1], ids[2], ids[3]);
    free(ids);
    char buf[16];
    CHECK(tokenizer_decode_token(t, 2, buf, sizeof buf) == 7 && !strcmp(buf, "Robert "), "decode_token word");
    CHECK(tokenizer_decode_token(t, 0, buf, sizeof buf) == 1 && !strcmp(buf, "\n"), "decode_token eos");
    CHECK(tokenizer_decode_token(t, 2, buf, 3) == 7 && !memcmp(buf, "Rob", 3), "truncated decode_token");
    /* round trip on valid: ids -> text -> the same ids (spacing is normalised) */
    CHECK(tokenizer_encode(t, va, nv, &ids, &m, err) == LM_OK, "%s", err);
    char *text = tokenizer_decode(t, ids, m);
    int *ids2;
    size_t m2;
    CHECK(tokenizer_encode(t, text, strlen(text), &ids2, &m2, err) == LM_OK && m2 == m &&
          !memcmp(ids, ids2, m * sizeof(int)), "word round trip on valid.txt (%zu vs %zu)", m, m2);
    free(text); free(ids); free(ids2);
    tokenizer_destroy(t);

    /* a capped vocabulary: the most frequent words, the rest -> <unk> */
    t = train(TOKENIZER_WORD, tr, n, 100);
    CHECK(tokenizer_vocab_size(t) == 100, "capped vocab %d", tokenizer_vocab_size(t));
    CHECK(tokenizer_encode(t, "the zebraxyz\n", 13, &ids, &m, err) == LM_OK && m == 3, "%s", err);
    CHECK(!strcmp(tokenizer_token_text(t, ids[0]), "the") &&
          !strcmp(tokenizer_token_text(t, ids[1]), "<unk>") &&
          !strcmp(tokenizer_token_text(t, ids[2]), "<eos>"), "capped encode");
    free(ids);
    tokenizer_destroy(t);
    /* no <unk> in the text: appended; the last line without a newline still gets <eos> */
    t = train(TOKENIZER_WORD, "b a b\nc", 7, 0);
    CHECK(tokenizer_vocab_size(t) == 5, "b a <eos> c <unk>: %d", tokenizer_vocab_size(t));
    CHECK(tokenizer_encode(t, "b a b\nc", 7, &ids, &m, err) == LM_OK && m == 6 && ids[0] == 0 &&
          ids[1] == 1 && ids[3] == 2 && ids[4] == 3 && ids[5] == 2, "tiny word encode");
    free(ids);
    /* a prompt is encoded as typed (issue 49 item 3): no <eos> after an unended last line,
       one for each line end typed */
    CHECK(tokenizer_encode_prompt(t, "b a c", 5, &ids, &m, err) == LM_OK && m == 3 &&
          ids[2] == 3, "prompt \"b a c\" is 3 tokens without <eos> (%zu)", m);
    free(ids);
    CHECK(tokenizer_encode_prompt(t, "b a\nc\n", 6, &ids, &m, err) == LM_OK && m == 5 &&
          ids[2] == 2 && ids[4] == 2, "typed line ends keep their <eos> (%zu)", m);
    free(ids);
    tokenizer_destroy(t);
    free(tr);
    free(va);
}

static void test_bpe(const char *ts, size_t tn)
{
    double t0 = now();
    Tokenizer *a = train(TOKENIZER_BPE, ts, tn, 1256);
    double dt = now() - t0;
    printf("  BPE training on Tiny Shakespeare to 1256 tokens: %.3f s\n", dt);
    Tokenizer *b = train(TOKENIZER_BPE, ts, tn, 1256);
    CHECK(tokenizer_vocab_size(a) == 1256, "BPE vocab %d", tokenizer_vocab_size(a));
    char *ja = tokenizer_save(a), *jb = tokenizer_save(b);
    CHECK(ja && jb && !strcmp(ja, jb), "BPE training is deterministic");
    CHECK(tokenizer_hash(a) == tokenizer_hash(b), "equal hashes");
    /* the first merges, checked against a naive Python BPE over the same chunks */
    CHECK(!strcmp(tokenizer_token_text(a, 256), " t") && !strcmp(tokenizer_token_text(a, 257), "he"),
          "first merges '%s' '%s'", tokenizer_token_text(a, 256), tokenizer_token_text(a, 257));
    free(ja); free(jb);
    size_t m;
    int *ids = round_trip(a, ts, tn, &m, "bpe Tiny Shakespeare");
    CHECK(m < tn / 2, "1000 merges compress Tiny Shakespeare below half: %zu tokens", m);
    free(ids);
    /* random bytes with NULs and invalid UTF-8, plus a text with long runs */
    Rng r;
    rng_seed(&r, 7);
    size_t rn = 200000;
    char *rb = malloc(rn);
    for (size_t i = 0; i < rn; i++) rb[i] = (char)(rng_below(&r, 4) == 0 ? 0 : rng_below(&r, 256));
    free(round_trip(a, rb, rn, &m, "bpe random bytes"));
    Tokenizer *c = train(TOKENIZER_BPE, rb, rn, 400);
    free(round_trip(c, rb, rn, &m, "bpe trained on random bytes"));
    free(round_trip(c, ts, tn, &m, "bpe (random-byte merges) on Shakespeare"));
    memset(rb, 'a', 5000);
    memset(rb + 5000, ' ', 5000);
    free(round_trip(a, rb, rn, &m, "bpe long runs"));
    tokenizer_destroy(c);
    c = train(TOKENIZER_BPE, rb, 12000, 300);
    free(round_trip(c, rb, 12000, &m, "bpe trained on long runs"));
    CHECK(m < 2000, "long runs compress: %zu tokens", m);
    free(rb);
    tokenizer_destroy(a);
    tokenizer_destroy(b);
    tokenizer_destroy(c);
}

static void check_reload(const Tokenizer *t, const char *sample, size_t n, const char *what)
{
    char err[LM_ERR_LEN] = "", *j1 = tokenizer_save(t), *j2 = NULL;
    Tokenizer *u = NULL;
    int rc = tokenizer_load(j1, &u, err);
    CHECK(rc == LM_OK, "%s reload: %s", what, err);
    if (rc) return;
    j2 = tokenizer_save(u);
    CHECK(!strcmp(j1, j2), "%s: save(load(save(t))) == save(t)", what);
    CHECK(tokenizer_hash(t) == tokenizer_hash(u) && tokenizer_kind(t) == tokenizer_kind(u) &&
          tokenizer_vocab_size(t) == tokenizer_vocab_size(u), "%s: same hash, kind, size", what);
    int *a, *b;
    size_t na, nb;
    tokenizer_encode(t, sample, n, &a, &na, err);
    tokenizer_encode(u, sample, n, &b, &nb, err);
    CHECK(na == nb && !memcmp(a, b, na * sizeof(int)), "%s: same ids after reload", what);
    free(a); free(b); free(j1); free(j2);
    tokenizer_destroy(u);
}

static void expect_reject(const char *json, const char *what)
{
    char err[LM_ERR_LEN] = "";
    Tokenizer *t = (Tokenizer *)1;
    int rc = tokenizer_load(json, &t, err);
    CHECK(rc == LM_EFORMAT && t == NULL && err[0], "%s: rc %d", what, rc);
    printf("  rejects %-28s %s\n", what, err);
}

static void test_save_load(const char *ts, size_t tn)
{
    const size_t sn = 20000;
    Tokenizer *t = train(TOKENIZER_CHAR, ts, tn, 0);
    check_reload(t, ts, sn, "char");
    CHECK(tokenizer_hash(t) != 0, "hash set");
    tokenizer_destroy(t);
    t = train(TOKENIZER_WORD, ts, tn, 3000);
    check_reload(t, ts, sn, "word");
    tokenizer_destroy(t);
    const char odd[] = "caf\xe9 na\xc3\xafve \x01x\n";   /* a non-UTF-8 word, a control byte */
    t = train(TOKENIZER_WORD, odd, sizeof odd - 1, 0);
    check_reload(t, odd, sizeof odd - 1, "word with non-UTF-8 bytes");
    CHECK(!strcmp(tokenizer_token_text(t, 0), "caf\\xE9") && !strcmp(tokenizer_token_text(t, 2), "\\x01x"),
          "escaped displays '%s' '%s'", tokenizer_token_text(t, 0), tokenizer_token_text(t, 2));
    tokenizer_destroy(t);
    t = train(TOKENIZER_BPE, ts, tn, 600);
    check_reload(t, ts, sn, "bpe");
    tokenizer_destroy(t);

    const char *head = "{\"format\":\"lmlab-tokenizer\",\"version\":1,";
    char buf[512];
    expect_reject("{\"format\":\"lmlab-tokenizer\",\"version\":1,\"kind\":\"char\",\"vocab_size\":2,\"chars\":[10,", "truncated JSON");
    expect_reject("{\"format\":\"other\",\"version\":1}", "wrong format");
    snprintf(buf, sizeof buf, "%s\"kind\":\"chr\",\"vocab_size\":2,\"chars\":[10,32]}", head);
    expect_reject(buf, "unknown kind");
    snprintf(buf, sizeof buf, "%s\"kind\":\"char\",\"vocab_size\":2,\"chars\":[32,10]}", head);
    expect_reject(buf, "unsorted chars");
    snprintf(buf, sizeof buf, "%s\"kind\":\"char\",\"vocab_size\":3,\"chars\":[10,32]}", head);
    expect_reject(buf, "vocab_size mismatch");
    snprintf(buf, sizeof buf, "%s\"kind\":\"char\",\"vocab_size\":1,\"chars\":[55296]}", head);
    expect_reject(buf, "surrogate code point");
    snprintf(buf, sizeof buf, "%s\"kind\":\"word\",\"vocab_size\":3,\"words\":[\"<unk>\",\"<eos>\",\"<unk>\"]}", head);
    expect_reject(buf, "duplicate word");
    snprintf(buf, sizeof buf, "%s\"kind\":\"word\",\"vocab_size\":2,\"words\":[\"<unk>\",\"a\"]}", head);
    expect_reject(buf, "word vocab without <eos>");
    snprintf(buf, sizeof buf, "%s\"kind\":\"word\",\"vocab_size\":3,\"words\":[\"<unk>\",\"<eos>\",\"a b\"]}", head);
    expect_reject(buf, "word with a space");
    snprintf(buf, sizeof buf, "%s\"kind\":\"bpe\",\"vocab_size\":257,\"merges\":[[300,5]]}", head);
    expect_reject(buf, "merge of a future token");
    snprintf(buf, sizeof buf, "%s\"kind\":\"bpe\",\"vocab_size\":258,\"merges\":[[1,2],[1,2]]}", head);
    expect_reject(buf, "repeated merge");
    snprintf(buf, sizeof buf, "%s\"kind\":\"bpe\",\"vocab_size\":258,\"merges\":[[1,2]]}", head);
    expect_reject(buf, "merge count mismatch");
    snprintf(buf, sizeof buf, "%s\"kind\":\"bpe\",\"vocab_size\":257,\"merges\":[[1,-2]]}", head);
    expect_reject(buf, "negative id");
}

int main(void)
{
    size_t tn;
    char *ts = read_data("tinyshakespeare.txt", &tn);
    TokenizerKind k;
    CHECK(tokenizer_kind_parse("bpe", &k) == 0 && k == TOKENIZER_BPE, "parse bpe");
    CHECK(tokenizer_kind_parse("chars", &k) == -1, "parse rejects 'chars'");
    CHECK(tokenizer_fnv1a("a", 1, TOKENIZER_FNV_SEED) == 0xaf63dc4c8601ec8cULL, "FNV-1a of 'a'");
    printf("char:\n");
    test_char(ts, tn);
    printf("word:\n");
    test_word();
    printf("bpe:\n");
    test_bpe(ts, tn);
    printf("save/load:\n");
    test_save_load(ts, tn);
    printf("speed on Tiny Shakespeare (%.2f MB):\n", tn / 1e6);
    char err[LM_ERR_LEN];
    for (int kind = 0; kind < 3; kind++) {
        Tokenizer *t = NULL;
        tokenizer_train((TokenizerKind)kind, ts, tn, kind == TOKENIZER_BPE ? 1256 : 0, &t, err);
        if (t) speed(t, ts, tn);
        tokenizer_destroy(t);
    }
    free(ts);
    return check_summary();
}
