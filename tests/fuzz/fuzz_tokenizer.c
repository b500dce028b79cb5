/* fuzz_tokenizer.c — libFuzzer target for the tokenizers and the vocabulary loader.
 * The first byte picks what the rest is: (a) a training text for the char, word or BPE
 * tokenizer (tokenizer_train, then encode/decode of the text and of other bytes, every
 * token's bytes and display text, save -> load), or (b) a saved vocabulary (tokenizer_load
 * of hostile JSON, then encode/decode with what loaded); a first byte of 0xF0 or more:
 * (c) a training text for basic_english, or (d) a text for WordPiece (encoded with the
 * 30,522-piece fixture vocabulary, cased and uncased, and used to train the reference
 * pipeline's vocabulary over a small vocab.txt written once to /tmp); 0xE8..0xEF: (e) a
 * text for gpt2 (data/gpt2, loaded once).
 * Invariants: char, BPE and gpt2 decode(encode(text)) == text for any bytes they accept
 * (BPE and gpt2 accept all); word ids are all valid; ids out of range are refused (-1, "<invalid>",
 * skipped by decode); save -> load gives the same JSON and hash; a failure leaves a message
 * and no object.
 * Not built by meson: scripts/fuzz.sh builds and runs every target. By hand, from the
 * source root:
 *
 *   scripts/fuzz.sh 0 tokenizer     # builds /tmp/lmlab-fuzz/fuzz_tokenizer
 *   /tmp/lmlab-fuzz/fuzz_tokenizer -max_total_time=120 -max_len=8192 /tmp/tok_work \
 *     tests/fuzz/corpus/tokenizer
 *   mkdir /tmp/tok_min && /tmp/lmlab-fuzz/fuzz_tokenizer -merge=1 -use_counters=0 \
 *     /tmp/tok_min tests/fuzz/corpus/tokenizer /tmp/tok_work   # then replace the corpus
 */
#include "err.h"
#include "tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(c) \
    do { \
        if (!(c)) __builtin_trap(); \
    } while (0)

/* Every id's bytes and display form; out-of-range ids refused. */
static void fuzz_tokens(const Tokenizer *t)
{
    int V = tokenizer_vocab_size(t);
    FUZZ_ASSERT(V >= 0); /* 0: a char vocabulary of an empty text */
    char buf[8];
    for (int id = -1; id <= V; id++) {
        int n = tokenizer_decode_token(t, id, buf, sizeof buf);
        FUZZ_ASSERT((id < 0 || id >= V) ? n == -1 : n >= 0);
        const char *shown = tokenizer_token_text(t, id);
        FUZZ_ASSERT(shown);
        if (id < 0 || id >= V)
            FUZZ_ASSERT(strcmp(shown, "<invalid>") == 0);
    }
}

/* Encodes len bytes; for char/BPE checks the exact round trip. */
static void fuzz_encode(const Tokenizer *t, const char *text, size_t len)
{
    int *ids = NULL;
    size_t n = 0;
    char err[LM_ERR_LEN] = "";
    int rc = tokenizer_encode(t, text, len, &ids, &n, err);
    if (rc != LM_OK) {
        FUZZ_ASSERT(err[0] && tokenizer_kind(t) == TOKENIZER_CHAR);
        free(ids);
        return;
    }
    int V = tokenizer_vocab_size(t);
    for (size_t i = 0; i < n; i++)
        FUZZ_ASSERT(ids[i] >= 0 && ids[i] < V);
    char *back = tokenizer_decode(t, ids, n);
    FUZZ_ASSERT(back);
    if (tokenizer_kind(t) == TOKENIZER_CHAR || tokenizer_kind(t) == TOKENIZER_BPE ||
        tokenizer_kind(t) == TOKENIZER_GPT2)
        FUZZ_ASSERT(strlen(back) <= len && memcmp(back, text, strlen(back)) == 0 &&
                    (memchr(text, 0, len) || strlen(back) == len));
    free(back);
    if (n) { /* ids out of range are skipped */
        ids[0] = -7;
        ids[n - 1] = V;
        free(tokenizer_decode(t, ids, n));
    }
    free(ids);
}

/* save -> load gives the same vocabulary. */
static void fuzz_save_load(const Tokenizer *t)
{
    char err[LM_ERR_LEN];
    char *json = tokenizer_save(t);
    FUZZ_ASSERT(json);
    Tokenizer *u = NULL;
    FUZZ_ASSERT(tokenizer_load(json, &u, err) == LM_OK);
    char *again = tokenizer_save(u);
    FUZZ_ASSERT(again && strcmp(json, again) == 0);
    FUZZ_ASSERT(tokenizer_hash(t) == tokenizer_hash(u));
    FUZZ_ASSERT(tokenizer_vocab_size(t) == tokenizer_vocab_size(u));
    free(json);
    free(again);
    tokenizer_destroy(u);
}

static void fuzz_train_opts(TokenizerKind kind, const TokenizerOptions *o, const char *text,
                            size_t len)
{
    size_t cut = len / 2; /* train on the first half, encode both halves */
    Tokenizer *t = NULL;
    char err[LM_ERR_LEN] = "";
    if (tokenizer_train_opts(kind, text, len - cut, o, &t, err) != LM_OK) {
        FUZZ_ASSERT(err[0] && t == NULL);
        return;
    }
    fuzz_tokens(t);
    fuzz_encode(t, text, len - cut);
    fuzz_encode(t, text + (len - cut), cut);
    fuzz_encode(t, "", 0);
    fuzz_save_load(t);
    tokenizer_destroy(t);
}

static void fuzz_train(TokenizerKind kind, int vocab, const char *text, size_t len)
{
    TokenizerOptions o = { .vocab_size = vocab };
    fuzz_train_opts(kind, &o, text, len);
}

/* WordPiece: the fixture vocabulary (loaded once) on the text, then the reference
 * pipeline trained on it over a small vocab.txt. */
static void fuzz_wordpiece(int vocab, const char *text, size_t len)
{
    static Tokenizer *wp[2];
    static const char small[] = "/tmp/lmlab_fuzz_wp_vocab.txt";
    char err[LM_ERR_LEN];
    if (!wp[0]) {
        for (int lc = 0; lc < 2; lc++) {
            TokenizerOptions o = { .vocab_path = LMLAB_DATA_DIR "/../tests/fixtures/wordpiece_vocab.txt",
                                   .lowercase = lc };
            FUZZ_ASSERT(tokenizer_train_opts(TOKENIZER_WORDPIECE, "", 0, &o, &wp[lc], err) == LM_OK);
        }
        FILE *f = fopen(small, "w");
        FUZZ_ASSERT(f);
        fputs("[UNK]\nthe\n##s\na\n##b\nb\n.\n,\n\xc3\xa9\n##\xc3\xa9\ncaf\n##e\n", f);
        fclose(f);
    }
    fuzz_encode(wp[vocab & 1], text, len);
    TokenizerOptions o = { .vocab_path = small, .lowercase = vocab >> 1 & 1,
                           .vocab_from_train = 1, .vocab_size = vocab >> 2 };
    fuzz_train_opts(TOKENIZER_WORDPIECE, &o, text, len);
}

/* gpt2 over the bundled files: the text encoded and decoded back. */
static void fuzz_gpt2(const char *text, size_t len)
{
    static Tokenizer *g;
    char err[LM_ERR_LEN];
    if (!g) {
        TokenizerOptions o = { .vocab_path = LMLAB_DATA_DIR "/gpt2" };
        FUZZ_ASSERT(tokenizer_train_opts(TOKENIZER_GPT2, "", 0, &o, &g, err) == LM_OK);
    }
    fuzz_encode(g, text, len);
}

static void fuzz_load(const char *json)
{
    Tokenizer *t = (Tokenizer *)1;
    char err[LM_ERR_LEN] = "";
    if (tokenizer_load(json, &t, err) != LM_OK) {
        FUZZ_ASSERT(err[0] && t == NULL);
        return;
    }
    fuzz_tokens(t);
    static const char probe[] = "The cat sat.\n<unk> caf\xc3\xa9 \xff\x00z";
    fuzz_encode(t, probe, sizeof probe - 1);
    fuzz_save_load(t);
    tokenizer_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 2, size - 2);
    text[size - 2] = 0;
    int mode = data[0] % 4, vocab = data[1];
    size_t len = size - 2;
    if (data[0] >= 0xF8)
        fuzz_wordpiece(vocab, text, len);
    else if (data[0] >= 0xF0)
        fuzz_train(TOKENIZER_BASIC_ENGLISH, vocab % 16, text, len);
    else if (data[0] >= 0xE8)
        fuzz_gpt2(text, len);
    else if (mode == 0)
        fuzz_train(TOKENIZER_CHAR, 0, text, len);
    else if (mode == 1)
        fuzz_train(TOKENIZER_WORD, vocab % 16, text, len);
    else if (mode == 2)
        fuzz_train(TOKENIZER_BPE, 250 + vocab, text, len);
    else
        fuzz_load(text);
    free(text);
    return 0;
}
