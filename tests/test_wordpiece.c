/* test_wordpiece.c — the wordpiece and basic_english tokenizers. WordPiece against an
 * independent implementation: Hugging Face tokenizers (npm build) over bert-base-uncased's
 * 30,522 pieces gave the ids in tests/fixtures/wordpiece_expected_{uncased,cased}.txt for
 * every line of data/wikitext-small/test.txt and tests/fixtures/wordpiece_extra.txt
 * (accents, CJK, Unicode punctuation, controls, words over 100 characters); made by
 * tests/fixtures/wordpiece_expected.js. Every piece must agree. Then the reference
 * WikiText-2 pipeline's vocabulary (vocab_from=train), save/load round trips, bad vocab
 * files, and basic_english against torchtext's recipe (values worked out by hand from
 * torchtext's regular expressions and Vocab ordering). */
#include "check.h"
#include "err.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *read_file(const char *dir_env, const char *fallback, const char *rel, size_t *len)
{
    char path[2048];
    const char *d = getenv(dir_env);
    snprintf(path, sizeof path, "%s/%s", d ? d : fallback, rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) exit(1);
    fclose(f);
    s[n] = 0;
    *len = (size_t)n;
    return s;
}

static char vocab_path[2048];

/* Splits s in place at '\n' (a last empty piece dropped); returns the count. */
static int split_lines(char *s, size_t n, char **line, int cap)
{
    int k = 0;
    for (size_t i = 0; i < n && k < cap;) {
        char *nl = memchr(s + i, '\n', n - i);
        line[k++] = s + i;
        if (!nl) break;
        *nl = 0;
        i = (size_t)(nl - s) + 1;
    }
    return k;
}

/* Every line encoded alone must give the expected ids; returns the mismatching lines. */
static int compare(const Tokenizer *t, char **in, int n_in, char **exp, int n_exp,
                   long *pieces)
{
    int bad = 0;
    char err[LM_ERR_LEN];
    *pieces = 0;
    for (int i = 0; i < n_in && i < n_exp; i++) {
        int *ids;
        size_t n;
        if (tokenizer_encode(t, in[i], strlen(in[i]), &ids, &n, err)) { bad++; continue; }
        char *p = exp[i];
        size_t k = 0;
        int ok = 1;
        while (*p) {
            long e = strtol(p, &p, 10);
            if (k >= n || ids[k] != e) {
                if (ok && bad < 5)
                    fprintf(stderr, "line %d piece %zu: expected %ld '%s', got %d '%s'\n", i + 1,
                            k, e, tokenizer_token_text(t, (int)e), k < n ? ids[k] : -1,
                            k < n ? tokenizer_token_text(t, ids[k]) : "(none)");
                ok = 0;
            }
            k++;
            while (*p == ' ') p++;
        }
        if (k != n) ok = 0;
        *pieces += (long)k;
        bad += !ok;
        free(ids);
    }
    return bad + abs(n_in - n_exp);
}

static void test_parity(int lowercase, const char *expected_file, long want_pieces)
{
    size_t n1, n2, n3;
    char *wiki = read_file("LMLAB_SOURCE", LMLAB_DATA_DIR "/..", "data/wikitext-small/test.txt", &n1);
    char *extra = read_file("LMLAB_FIXTURES", ".", "wordpiece_extra.txt", &n2);
    char *exp = read_file("LMLAB_FIXTURES", ".", expected_file, &n3);
    static char *in[4096], *ex[4096];
    int n_in = split_lines(wiki, n1, in, 4096);
    n_in += split_lines(extra, n2, in + n_in, 4096 - n_in);
    int n_ex = split_lines(exp, n3, ex, 4096);
    TokenizerOptions o = { .vocab_path = vocab_path, .lowercase = lowercase };
    Tokenizer *t = NULL;
    char err[LM_ERR_LEN];
    int rc = tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err);
    CHECK(rc == LM_OK && tokenizer_vocab_size(t) == 30522, "wordpiece from %s: %s", vocab_path, err);
    if (rc) return;
    long pieces;
    int bad = compare(t, in, n_in, ex, n_ex, &pieces);
    printf("  lowercase=%d: %d lines, %ld pieces compared with Hugging Face tokenizers, %d "
           "lines differ\n", lowercase, n_in, pieces, bad);
    CHECK(bad == 0 && n_in == 508 && pieces == want_pieces, "parity (%d bad lines, %ld pieces)",
          bad, pieces);
    /* the saved form rebuilds the same tokenizer */
    char *json = tokenizer_save(t);
    Tokenizer *u = NULL;
    CHECK(json && tokenizer_load(json, &u, err) == LM_OK, "load: %s", err);
    if (u) {
        CHECK(tokenizer_hash(u) == tokenizer_hash(t), "same hash after load");
        CHECK(compare(u, in, 40, ex, 40, &pieces) == 0, "loaded tokenizer encodes the same");
    }
    /* decoding: a space before each word, continuations glued */
    int *ids;
    size_t n;
    tokenizer_encode(t, "unaffable tokenizers!", 21, &ids, &n, err);
    char *back = tokenizer_decode(t, ids, n);
    CHECK(back && !strcmp(back, " unaffable tokenizers !"), "decode: '%s'", back ? back : "(null)");
    free(back); free(ids); free(json);
    tokenizer_destroy(u);
    tokenizer_destroy(t);
    free(wiki); free(extra); free(exp);
}

static int encode_is(const Tokenizer *t, const char *text, const int *want, size_t n_want)
{
    int *ids;
    size_t n;
    char err[LM_ERR_LEN];
    if (tokenizer_encode(t, text, strlen(text), &ids, &n, err)) return 0;
    int ok = n == n_want && !memcmp(ids, want, n * sizeof *ids);
    if (!ok) {
        fprintf(stderr, "'%s' ->", text);
        for (size_t i = 0; i < n; i++) fprintf(stderr, " %d:%s", ids[i], tokenizer_token_text(t, ids[i]));
        fprintf(stderr, "\n");
    }
    free(ids);
    return ok;
}

/* The reference run: pieces lowercased, <eos> per line, torchtext's Vocab order. */
static void test_pipeline(void)
{
    const char *text = "The cat. The dog!\nthe Cat unaffable\n";
    TokenizerOptions o = { .vocab_path = vocab_path, .lowercase = 1, .vocab_from_train = 1 };
    Tokenizer *t = NULL;
    char err[LM_ERR_LEN];
    int rc = tokenizer_train_opts(TOKENIZER_WORDPIECE, text, strlen(text), &o, &t, err);
    CHECK(rc == LM_OK, "pipeline: %s", err);
    if (rc) return;
    /* bert-base-uncased: unaffable = una ##ffa ##ble. Counts: the 3, cat 2, then 1 each in
     * code point order: ! ##ble ##ffa . dog una */
    const char *want[] = { "<unk>", "<pad>", "<sos>", "<eos>", "the", "cat", "!", "##ble",
                           "##ffa", ".", "dog", "una" };
    CHECK(tokenizer_vocab_size(t) == 12, "pipeline vocabulary of 12, got %d", tokenizer_vocab_size(t));
    for (int i = 0; i < 12 && i < tokenizer_vocab_size(t); i++)
        CHECK(!strcmp(tokenizer_token_text(t, i), want[i]), "id %d: want %s, got %s", i, want[i],
              tokenizer_token_text(t, i));
    int ids[] = { 4, 10, 0, 3, 11, 8, 7, 3 };
    CHECK(encode_is(t, "THE dog zebra\nunaffable", ids, 8), "pipeline encoding with <eos> and <unk>");
    char *back = tokenizer_decode(t, ids, 8);
    CHECK(back && !strcmp(back, " the dog <unk>\n unaffable\n"), "pipeline decode '%s'", back);
    free(back);
    char *json = tokenizer_save(t);
    Tokenizer *u = NULL;
    CHECK(json && tokenizer_load(json, &u, err) == LM_OK && tokenizer_hash(u) == tokenizer_hash(t) &&
          encode_is(u, "THE dog zebra\nunaffable", ids, 8), "pipeline save/load: %s", err);
    tokenizer_destroy(u);
    free(json);
    o.vocab_size = 6;
    Tokenizer *s = NULL;
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, text, strlen(text), &o, &s, err) == LM_OK &&
          tokenizer_vocab_size(s) == 6, "vocab_size=6 keeps <unk> <pad> <sos> <eos> the cat");
    tokenizer_destroy(s);
    tokenizer_destroy(t);
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "wb");
    fputs(s, f);
    fclose(f);
}

static void test_bad_vocab(void)
{
    Tokenizer *t = NULL;
    char err[LM_ERR_LEN], path[] = "/tmp/lmlab_wp_vocab_XXXXXX";
    TokenizerOptions o = { 0 };
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err) == LM_EARG &&
          strstr(err, "vocab=PATH"), "no vocab path: %s", err);
    o.vocab_path = vocab_path;
    o.vocab_size = 1000;
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err) == LM_EARG &&
          strstr(err, "vocab_size=0"), "vocab_size with a vocab file: %s", err);
    o.vocab_size = 0;
    o.vocab_path = "/nonexistent/vocab.txt";
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err) == LM_EIO, "missing file: %s", err);
    int fd = mkstemp(path);
    if (fd < 0) return;
    o.vocab_path = path;
    write_file(path, "a\nb\n##c\n");
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err) == LM_EFORMAT &&
          strstr(err, "[UNK]"), "no [UNK]: %s", err);
    write_file(path, "[UNK]\na\nb\na\n");
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err) == LM_EFORMAT &&
          strstr(err, "line 4 repeats line 2"), "repeated piece: %s", err);
    write_file(path, "[UNK]\na\n\nb\n");
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err) == LM_EFORMAT &&
          strstr(err, "line 3 is empty"), "empty line: %s", err);
    write_file(path, "[UNK]\r\nab\r\n##c\r\n");   /* CRLF is trimmed as Hugging Face does */
    CHECK(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &t, err) == LM_OK, "CRLF vocab: %s", err);
    int want[] = { 1, 2, 0 };
    CHECK(t && encode_is(t, "abc x", want, 3), "ab ##c, [UNK]");
    tokenizer_destroy(t);
    close(fd);
    remove(path);
}

static void test_basic_english(void)
{
    const char *text = "Hello, World! It's a \"test\": (ok) <br />end.\nb a b c a b; y x\n";
    Tokenizer *t = NULL;
    char err[LM_ERR_LEN];
    TokenizerKind k;
    CHECK(tokenizer_kind_parse("basic_english", &k) == 0 && k == TOKENIZER_BASIC_ENGLISH, "parse");
    CHECK(tokenizer_train(TOKENIZER_BASIC_ENGLISH, text, strlen(text), 0, &t, err) == LM_OK, "%s", err);
    if (!t) return;
    /* counts: a 3, b 3 (a tie: code point order), then 1 each in code point order */
    const char *want[] = { "<unk>", "a", "b", "!", "'", "(", ")", ",", ".", "c", "end", "hello",
                           "it", "ok", "s", "test", "world", "x", "y" };
    int V = tokenizer_vocab_size(t);
    CHECK(V == 19, "19 tokens, got %d", V);
    for (int i = 0; i < 19 && i < V; i++)
        CHECK(!strcmp(tokenizer_token_text(t, i), want[i]), "id %d: want '%s', got '%s'", i,
              want[i], tokenizer_token_text(t, i));
    int ids[] = { 11, 7, 16, 3, 12, 4, 14, 1, 15, 5, 13, 6, 10, 8, 0 };
    CHECK(encode_is(t, "HELLO, world! it's a \"test\": (ok) <br />end. zzz", ids, 15), "encoding");
    char *back = tokenizer_decode(t, ids, 3);
    CHECK(back && !strcmp(back, "hello , world "), "decode '%s'", back);
    free(back);
    char *json = tokenizer_save(t);
    Tokenizer *u = NULL;
    CHECK(json && tokenizer_load(json, &u, err) == LM_OK && tokenizer_hash(u) == tokenizer_hash(t),
          "basic_english save/load: %s", err);
    tokenizer_destroy(u);
    free(json);
    Tokenizer *s = NULL;
    CHECK(tokenizer_train(TOKENIZER_BASIC_ENGLISH, text, strlen(text), 3, &s, err) == LM_OK &&
          tokenizer_vocab_size(s) == 3, "vocab_size=3: <unk> a b");
    tokenizer_destroy(s);
    tokenizer_destroy(t);
}

int main(void)
{
    const char *fx = getenv("LMLAB_FIXTURES");
    snprintf(vocab_path, sizeof vocab_path, "%s/wordpiece_vocab.txt", fx ? fx : ".");
    TokenizerKind k;
    CHECK(tokenizer_kind_parse("wordpiece", &k) == 0 && k == TOKENIZER_WORDPIECE, "parse");
    printf("wordpiece parity:\n");
    test_parity(1, "wordpiece_expected_uncased.txt", 30134);
    test_parity(0, "wordpiece_expected_cased.txt", 29972);
    printf("reference pipeline:\n");
    test_pipeline();
    printf("bad vocab files:\n");
    test_bad_vocab();
    printf("basic_english:\n");
    test_basic_english();
    return check_summary();
}
