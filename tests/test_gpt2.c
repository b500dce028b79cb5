/* test_gpt2.c — GPT-2's tokenizer (tokenizer=gpt2) against an independent implementation:
 * js-tiktoken's "gpt2" encoding (npm) encoded the 11 MB of tests/fixtures/gpt2_text.txt.xz
 * (man pages in 25 languages, /usr/share/doc, sources, generated Unicode, spaces, emoji,
 * contractions, numbers, code, long runs, the literal <|endoftext|>) into
 * tests/fixtures/gpt2_ids.u16.xz, made by tests/fixtures/gpt2_check.cjs; every id must
 * agree and decoding must give the text back. Then small cases worked out with js-tiktoken,
 * bytes that are not UTF-8, save/load round trips, and the bad inputs: files missing,
 * not a pair, malformed, vocab_size given, tampered JSON. */
#include "check.h"
#include "err.h"
#include "tokenizer.h"

#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char src_root[1024];

/* The whole of an .xz file, decompressed; exits when it cannot. */
static unsigned char *read_xz(const char *rel, size_t *len)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", src_root, rel);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *in = malloc(n);
    if (!in || fread(in, 1, n, f) != n) exit(1);
    fclose(f);
    size_t cap = 16 * n + 1024, got = 0;
    unsigned char *out = malloc(cap);
    lzma_stream s = LZMA_STREAM_INIT;
    if (!out || lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) exit(1);
    s.next_in = in;
    s.avail_in = n;
    for (;;) {
        s.next_out = out + got;
        s.avail_out = cap - got;
        lzma_ret r = lzma_code(&s, LZMA_FINISH);
        got = cap - s.avail_out;
        if (r == LZMA_STREAM_END) break;
        if (r != LZMA_OK && r != LZMA_BUF_ERROR) { fprintf(stderr, "%s: xz error %d\n", path, r); exit(1); }
        if (!(out = realloc(out, cap *= 2))) exit(1);
    }
    lzma_end(&s);
    free(in);
    *len = got;
    return out;
}

static Tokenizer *load_gpt2(const char *vocab, int vocab_size, int *rc, char *err)
{
    TokenizerOptions o = { .vocab_size = vocab_size, .vocab_path = vocab };
    Tokenizer *t = NULL;
    *rc = tokenizer_train_opts(TOKENIZER_GPT2, "", 0, &o, &t, err);
    return t;
}

static int same_ids(const Tokenizer *t, const char *s, size_t n, const int *want, size_t nw)
{
    int *ids;
    size_t k;
    char err[LM_ERR_LEN];
    if (tokenizer_encode(t, s, n, &ids, &k, err)) return 0;
    int ok = k == nw;
    for (size_t i = 0; ok && i < k; i++) ok = ids[i] == want[i];
    if (!ok) {
        fprintf(stderr, "  '%.*s' gave", (int)n, s);
        for (size_t i = 0; i < k; i++) fprintf(stderr, " %d", ids[i]);
        fprintf(stderr, "\n");
    }
    free(ids);
    return ok;
}

#define SAME(t, lit, ...) do { int w_[] = { __VA_ARGS__ }; \
    CHECK(same_ids(t, lit, sizeof lit - 1, w_, sizeof w_ / sizeof *w_), "%s", #lit); } while (0)

/* Threads sharing one tokenizer (each with its own cache of merged pieces) agree with
 * the single-threaded ids. */
typedef struct { const Tokenizer *t; const char *text; size_t len; int *ids; size_t n; int rc; } Job;

static void *encode_job(void *p)
{
    Job *j = p;
    char err[LM_ERR_LEN];
    j->rc = tokenizer_encode(j->t, j->text, j->len, &j->ids, &j->n, err);
    return NULL;
}

static void test_threads(const Tokenizer *t, const char *text, size_t len, const int *want, size_t nw)
{
    Job j[3];
    pthread_t th[3];
    for (int k = 0; k < 3; k++) {
        j[k] = (Job){ .t = t, .text = text, .len = len };
        CHECK(pthread_create(&th[k], NULL, encode_job, &j[k]) == 0, "thread %d", k);
    }
    for (int k = 0; k < 3; k++) {
        pthread_join(th[k], NULL);
        CHECK(j[k].rc == LM_OK && j[k].n == nw && !memcmp(j[k].ids, want, nw * sizeof *want),
              "thread %d: %zu ids, same as one thread", k, j[k].n);
        free(j[k].ids);
    }
}

/* The committed 10.6 MB against js-tiktoken's ids: every id, then the decode. */
static void test_fixture(const Tokenizer *t)
{
    size_t tn, idn;
    unsigned char *text = read_xz("tests/fixtures/gpt2_text.txt.xz", &tn);
    unsigned char *raw = read_xz("tests/fixtures/gpt2_ids.u16.xz", &idn);
    int *ids;
    size_t n;
    char err[LM_ERR_LEN];
    int rc = tokenizer_encode(t, (const char *)text, tn, &ids, &n, err);
    CHECK(rc == LM_OK, "%s", err);
    size_t want = idn / 2, bad = 0, first = (size_t)-1;
    for (size_t i = 0; i < n && i < want; i++)
        if (ids[i] != (raw[2 * i] | raw[2 * i + 1] << 8)) {
            if (!bad++) first = i;
        }
    printf("  fixture: %zu bytes, %zu ids (js-tiktoken %zu), %zu differ\n", tn, n, want, bad);
    CHECK(n == want && bad == 0, "first difference at id %zu", first);
    if (first != (size_t)-1) {
        size_t off = 0;
        for (size_t i = 0; i < first; i++) {
            size_t l;
            tokenizer_token_bytes(t, ids[i], &l);
            off += l;
        }
        fprintf(stderr, "  at byte %zu: '%.40s' lmlab %d, js-tiktoken %d\n", off,
                (const char *)text + off, ids[first], raw[2 * first] | raw[2 * first + 1] << 8);
    }
    char *back = tokenizer_decode(t, ids, n);
    CHECK(back && !memcmp(back, text, tn) && back[tn] == 0, "decode gives the text back");
    size_t cut = 0, k = 0;   /* the first ~2 MB, cut at a token boundary */
    while (k < n && cut < (2u << 20)) {
        size_t l;
        tokenizer_token_bytes(t, ids[k++], &l);
        cut += l;
    }
    int *part;
    size_t pn;
    CHECK(tokenizer_encode(t, (const char *)text, cut, &part, &pn, err) == LM_OK, "%s", err);
    test_threads(t, (const char *)text, cut, part, pn);
    free(part);
    free(back);
    free(ids);
    free(text);
    free(raw);
}

static void test_small(const Tokenizer *t)
{
    CHECK(tokenizer_vocab_size(t) == 50257, "V %d", tokenizer_vocab_size(t));
    CHECK(tokenizer_eot(t) == 50256, "eot %d", tokenizer_eot(t));
    size_t l;
    const char *b = tokenizer_token_bytes(t, 50256, &l);
    CHECK(l == 13 && !memcmp(b, "<|endoftext|>", 13), "50256 is <|endoftext|>");
    b = tokenizer_token_bytes(t, 0, &l);
    CHECK(l == 1 && b[0] == '!', "id 0 is '!'");
    b = tokenizer_token_bytes(t, 188, &l);
    CHECK(l == 1 && b[0] == 0, "id 188 is byte 0");
    SAME(t, "Hello world, it's   GPT-2's tokenizer!! 123 <|endoftext|> ok", 15496, 995, 11, 340,
         338, 220, 220, 402, 11571, 12, 17, 338, 11241, 7509, 3228, 17031, 1279, 91, 437, 1659,
         5239, 91, 29, 12876);
    SAME(t, " ", 220);
    SAME(t, "\n\n", 628);
    SAME(t, "  hello\n\n\nworld  ", 220, 23748, 628, 198, 6894, 220, 220);
    SAME(t, "I'M HERE'S 'S 's", 40, 6, 44, 15698, 6, 50, 705, 50, 705, 82);
    SAME(t, "\xc2\x85x\xef\xbb\xbfy", 126, 227, 87, 171, 119, 123, 88);   /* U+0085 is space, U+FEFF not */
    SAME(t, "x = \"<|endoftext|>\";\t\t\r\n", 87, 796, 33490, 91, 437, 1659, 5239, 91, 29, 8172,
         197, 197, 201, 198);
    SAME(t, "\xe4\xb8\xad\xe6\x96\x87\xf0\x9f\x98\x80 caf\xc3\xa9", 40792, 23877, 229, 47249, 222, 40304);
    int *ids;
    size_t n;
    char err[LM_ERR_LEN];
    CHECK(tokenizer_encode(t, "", 0, &ids, &n, err) == LM_OK && ids && n == 0, "empty text");
    free(ids);
}

/* Bytes that are not UTF-8: each a character of its own class, every byte kept. */
static void test_any_bytes(const Tokenizer *t)
{
    char err[LM_ERR_LEN];
    int *ids;
    size_t n;
    /* "ab" 397, 0xFF alone (byte id 255 - 68 + ... looked up), "cd" 10210 */
    unsigned char one = 0xFF;
    int *bid;
    size_t bn;
    CHECK(tokenizer_encode(t, (const char *)&one, 1, &bid, &bn, err) == LM_OK && bn == 1, "0xFF");
    int ff = bn == 1 ? bid[0] : -1;
    free(bid);
    SAME(t, "ab\xff" "cd", 397, ff, 10210);
    for (int b = 0; b < 256; b++) {   /* every byte alone is its own token and decodes back */
        char c = (char)b;
        CHECK(tokenizer_encode(t, &c, 1, &ids, &n, err) == LM_OK && n == 1, "byte %d", b);
        size_t l;
        const char *s = n == 1 ? tokenizer_token_bytes(t, ids[0], &l) : NULL;
        CHECK(s && l == 1 && s[0] == c, "byte %d decodes back", b);
        free(ids);
    }
    unsigned char *r = malloc(300000);
    unsigned x = 47;
    for (int i = 0; i < 300000; i++) {   /* random bytes, mostly high, runs of spaces */
        x = x * 1103515245u + 12345u;
        unsigned v = x >> 16;
        r[i] = (unsigned char)(v % 7 == 0 ? ' ' : v % 11 == 0 ? 'a' + v % 26 : v % 13 == 0 ? '\n' : v);
    }
    memcpy(r + 1000, "\xf4\x90\x80\x80\xed\xa0\x80\xc0\xaf\xe0\x80\xaf", 12);   /* > U+10FFFF, surrogate, overlongs */
    memset(r + 5000, ' ', 3000);                                               /* a long run: heap merge */
    CHECK(tokenizer_encode(t, (const char *)r, 300000, &ids, &n, err) == LM_OK, "%s", err);
    char *back = tokenizer_decode(t, ids, n);
    CHECK(back && !memcmp(back, r, 300000), "random bytes decode back");
    free(back);
    free(ids);
    free(r);
}

static void test_save_load(const Tokenizer *t)
{
    char *json = tokenizer_save(t), err[LM_ERR_LEN];
    CHECK(json != NULL, "save");
    size_t len = json ? strlen(json) : 0;
    printf("  saved tokenizer JSON: %zu bytes\n", len);
    CHECK(len > 400000 && len < 600000, "saved size %zu", len);
    Tokenizer *u = NULL;
    CHECK(tokenizer_load(json, &u, err) == LM_OK, "%s", err);
    if (u) {
        CHECK(tokenizer_hash(u) == tokenizer_hash(t), "same hash after load");
        CHECK(tokenizer_vocab_size(u) == 50257 && tokenizer_eot(u) == 50256, "V, eot after load");
        SAME(u, "Hello world, it's", 15496, 995, 11, 340, 338);
        tokenizer_destroy(u);
    }
    /* tampered: a merge line broken, vocab_size off, end_of_text missing */
    char *p = json ? strstr(json, "\\n") : NULL;
    if (p) {
        char *bad = strdup(json);
        bad[p - json + 2] = ' ';
        bad[p - json + 3] = ' ';
        CHECK(tokenizer_load(bad, &u, err) == LM_EFORMAT && strstr(err, "merge line"), "%s", err);
        free(bad);
    }
    if (json) {
        char *q = strstr(json, "\"vocab_size\":50257");
        CHECK(q != NULL, "vocab_size in JSON");
        if (q) {
            q[17] = '8';
            CHECK(tokenizer_load(json, &u, err) == LM_EFORMAT && strstr(err, "50258"), "%s", err);
            q[17] = '7';
        }
        q = strstr(json, "\"end_of_text\"");
        if (q) {
            q[1] = 'E';
            CHECK(tokenizer_load(json, &u, err) == LM_EFORMAT && strstr(err, "end_of_text"), "%s", err);
        }
    }
    free(json);
}

static void write_file(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(s, 1, n, f) != n) exit(1);
    fclose(f);
}

static void test_files(void)
{
    char err[LM_ERR_LEN], dir[] = "/tmp/lmlab_gpt2_XXXXXX", p[2200], q[2200];
    int rc;
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    Tokenizer *t = load_gpt2(dir, 0, &rc, err);
    CHECK(!t && rc == LM_EIO && strstr(err, "vocab.bpe"), "empty folder: %s", err);
    snprintf(p, sizeof p, "%s/nowhere", dir);
    t = load_gpt2(p, 0, &rc, err);
    CHECK(!t && rc == LM_EIO && strstr(err, "nowhere"), "missing path: %s", err);
    /* a small pair: bytes, 2 merges, <|endoftext|> */
    snprintf(p, sizeof p, "%s/vocab.bpe", dir);
    write_file(p, "#version: 0.2\nh e\nhe l\n", 23);
    t = load_gpt2(p, 0, &rc, err);
    CHECK(!t && rc == LM_EIO && strstr(err, "encoder.json"), "no encoder beside: %s", err);
    snprintf(q, sizeof q, "%s/encoder.json", dir);
    /* encoder.json from the real one's first 256 entries would be long; build it */
    FILE *f = fopen(q, "wb");
    fputs("{", f);
    for (int b = 0, k = 0; k < 2; k++)   /* printable first, then the rest (U+0100 + n) */
        for (int c = 0, n = 0; c < 256; c++) {
            int pr = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174;
            if (pr != (k == 0)) continue;
            unsigned cp = pr ? (unsigned)c : 256u + (unsigned)n++;
            if (cp == '"' || cp == '\\') fprintf(f, "\"\\%c\": %d, ", cp, b++);
            else if (cp < 0x80) fprintf(f, "\"%c\": %d, ", cp, b++);
            else fprintf(f, "\"\\u%04x\": %d, ", cp, b++);
        }
    fputs("\"he\": 256, \"hel\": 257, \"<|endoftext|>\": 258}", f);
    fclose(f);
    t = load_gpt2(dir, 0, &rc, err);
    CHECK(t && rc == LM_OK, "small pair: %s", err);
    if (t) {
        CHECK(tokenizer_vocab_size(t) == 259 && tokenizer_eot(t) == 258, "V %d", tokenizer_vocab_size(t));
        SAME(t, "hello help", 257, 75, 78, 220, 257, 79);   /* "hel" l o " " "hel" p */
        tokenizer_destroy(t);
    }
    t = load_gpt2(q, 0, &rc, err);   /* the encoder's path: vocab.bpe beside it */
    CHECK(t && rc == LM_OK, "by encoder.json's path: %s", err);
    tokenizer_destroy(t);
    t = load_gpt2(dir, 1000, &rc, err);
    CHECK(!t && rc == LM_EARG && strstr(err, "vocab_size"), "vocab_size given: %s", err);
    write_file(p, "#version: 0.2\nh e\nhe x\n", 23);   /* not the encoder's pair */
    t = load_gpt2(dir, 0, &rc, err);
    CHECK(!t && rc == LM_EFORMAT && strstr(err, "not a pair"), "mismatch: %s", err);
    write_file(p, "#version: 0.2\nh e\nhel l\n", 24);   /* "hel" is not a token yet */
    t = load_gpt2(dir, 0, &rc, err);
    CHECK(!t && rc == LM_EFORMAT && strstr(err, "line 2"), "bad merge: %s", err);
    write_file(p, "#version: 0.2\nh e\nh e\n", 22);
    t = load_gpt2(dir, 0, &rc, err);
    CHECK(!t && rc == LM_EFORMAT && strstr(err, "again"), "repeated merge: %s", err);
    write_file(q, "{\"a\": ", 6);
    write_file(p, "#version: 0.2\nh e\nhe l\n", 23);
    t = load_gpt2(dir, 0, &rc, err);
    CHECK(!t && rc == LM_EFORMAT && strstr(err, "encoder.json"), "bad JSON: %s", err);
    unlink(p);
    unlink(q);
    rmdir(dir);
}

int main(void)
{
    const char *s = getenv("LMLAB_SOURCE");
    snprintf(src_root, sizeof src_root, "%s", s ? s : LMLAB_DATA_DIR "/..");
    char vocab[1100], err[LM_ERR_LEN];
    snprintf(vocab, sizeof vocab, "%s/data/gpt2", src_root);
    int rc;
    Tokenizer *t = load_gpt2(vocab, 0, &rc, err);
    CHECK(t != NULL, "load data/gpt2: %s", err);
    if (!t) return check_summary();
    Tokenizer *d = load_gpt2(vocab, 50257, &rc, err);   /* vocab_size=50257 is allowed */
    CHECK(d && tokenizer_hash(d) == tokenizer_hash(t), "vocab_size=50257: %s", err);
    tokenizer_destroy(d);
    test_small(t);
    test_any_bytes(t);
    test_save_load(t);
    test_files();
    test_fixture(t);
    tokenizer_destroy(t);
    return check_summary();
}
