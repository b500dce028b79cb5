/* tok_basic_english.c — torchtext's get_tokenizer("basic_english") with the vocabulary
 * of build_vocab_from_iterator(specials=["<unk>"]), the recipe of PyTorch's transformer
 * tutorial on WikiText-2 (28,782 tokens on its training split). Words: the text
 * lowercased (Python's str.lower, simple mappings plus U+0130), "'" "." "," "(" ")" "!"
 * "?" split off as words, '"' dropped, ";" ":" and "<br />" read as spaces, split at
 * Unicode whitespace. Ids: <unk>, then words by falling count, ties in code point order.
 * Not exact for the context-dependent final sigma (Python lowercases a word-final
 * capital sigma to U+03C2; here always U+03C3). No <eos>: the tutorial adds none. */
#include "err.h"
#include "private/tok_impl.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* Python's str.isspace. */
static int py_space(uint32_t c)
{
    return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Lowercased text with the first three of torchtext's substitutions (' -> " '  ",
 * '"' -> "", . -> " . "), malloc'd in *out (*n bytes); -1 out of memory. */
static int be_lower(const char *text, size_t len, char **out, size_t *n)
{
    const unsigned char *s = (const unsigned char *)text;
    char *o = malloc(4 * len + 8);
    size_t m = 0;
    if (!o) return -1;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t k = (size_t)tok_utf8_next(s, len, i, &c);
        if (c == '\'') { memcpy(o + m, " '  ", 4); m += 4; }
        else if (c == '.') { memcpy(o + m, " . ", 3); m += 3; }
        else if (c == '"') { }
        else if (c >= 0xDC80 && c <= 0xDCFF) o[m++] = (char)s[i];   /* not UTF-8: kept */
        else if (c == 0x130) { o[m++] = 'i'; m += (size_t)tok_utf8_put(0x307, o + m); }
        else m += (size_t)tok_utf8_put((uint32_t)utf8proc_tolower((utf8proc_int32_t)c), o + m);
        i += k;
    }
    *out = o;
    *n = m;
    return 0;
}

typedef int (*BeFn)(void *ctx, const char *w, size_t n);

/* Calls fn for each word of text (pointers into a scratch copy); -1 when fn fails or
 * memory runs out. */
static int be_words(const char *text, size_t len, BeFn fn, void *ctx)
{
    char *b;
    size_t n, start = 0, i = 0;
    if (be_lower(text, len, &b, &n)) return -1;
    const unsigned char *s = (const unsigned char *)b;
    int rc = 0;
    while (!rc && i < n) {
        uint32_t c;
        size_t k = (size_t)tok_utf8_next(s, n, i, &c);
        int br = c == '<' && n - i >= 6 && !memcmp(b + i, "<br />", 6);
        int own = c == ',' || c == '(' || c == ')' || c == '!' || c == '?';
        if (!br && !own && !py_space(c) && c != ';' && c != ':') {
            i += k;
            continue;
        }
        if (i > start) rc = fn(ctx, b + start, i - start);
        if (!rc && own) rc = fn(ctx, b + i, 1);
        i += br ? 6 : k;
        start = i;
    }
    if (!rc && n > start) rc = fn(ctx, b + start, n - start);
    free(b);
    return rc;
}

static const WordsSetup BE_SETUP = { .unk_name = "<unk>" };

static int be_check(Tokenizer *t, Tokenizer **out, char *err)
{
    if (((const WordImpl *)t->impl)->unk >= 0) return LM_OK;
    *out = NULL;
    tokenizer_destroy(t);
    return err_set(err, LM_EFORMAT, "the basic_english vocabulary lacks <unk>");
}

/* The words are copied: be_words' pointers die with its scratch copy. */
typedef struct { WordMap m; char **own; size_t n_own, cap; } BeCount;

static int be_count(void *ctx, const char *w, size_t n)
{
    BeCount *c = ctx;
    int u = wordmap_get(&c->m, w, n, 0);
    if (u < 0) {
        if (c->n_own == c->cap) {
            size_t cap = 2 * c->cap + 1024;
            char **g = realloc(c->own, sizeof *g * cap);
            if (!g) return -1;
            c->own = g;
            c->cap = cap;
        }
        char *copy = malloc(n);
        if (!copy) return -1;
        memcpy(copy, w, n);
        c->own[c->n_own++] = copy;
        if ((u = wordmap_get(&c->m, copy, n, 1)) < 0) return -1;
    }
    c->m.count[u]++;
    return 0;
}

static int be_train(const char *text, size_t len, const TokenizerOptions *opt, Tokenizer **out,
                    char *err)
{
    if (opt->vocab_size < 0 || opt->vocab_size == 1)
        return err_set(err, LM_EARG, "basic_english vocabulary size %d: use 0 (all words) or "
                       "at least 2 (<unk> and a word)", opt->vocab_size);
    BeCount c = { 0 };
    int rc = LM_ENOMEM, *order = NULL, n = 0;
    const char **w = NULL;
    size_t *wl = NULL;
    if (be_words(text, len, be_count, &c)) goto done;
    int unk = wordmap_get(&c.m, "<unk>", 5, 0);
    if (unk >= 0) c.m.count[unk] = -1;   /* a special: not counted */
    w = malloc(sizeof *w * ((size_t)c.m.n + 1));
    wl = malloc(sizeof *wl * ((size_t)c.m.n + 1));
    if (!w || !wl || !(order = tok_rank_words(&c.m, 1))) goto done;
    w[n] = "<unk>";
    wl[n++] = 5;
    for (int k = 0; k < c.m.n && (opt->vocab_size <= 0 || n < opt->vocab_size); k++)
        if (c.m.count[order[k]] > 0) { w[n] = c.m.key[order[k]]; wl[n++] = c.m.klen[order[k]]; }
    rc = tok_words_build(TOKENIZER_BASIC_ENGLISH, w, wl, n, &BE_SETUP, out, err);
    if (!rc) rc = be_check(*out, out, err);
done:
    if (rc == LM_ENOMEM) err_set(err, rc, "basic_english tokenizer: out of memory");
    for (size_t k = 0; k < c.n_own; k++) free(c.own[k]);
    free(c.own);
    wordmap_free(&c.m);
    free(order); free(w); free(wl);
    return rc;
}

typedef struct { const Tokenizer *t; int *ids; size_t n, cap; } BeEnc;

static int be_encode_word(void *ctx, const char *w, size_t n)
{
    BeEnc *e = ctx;
    const WordImpl *wi = e->t->impl;
    if (e->n == e->cap) {
        size_t cap = 2 * e->cap + 64;
        int *g = realloc(e->ids, sizeof *g * cap);
        if (!g) return -1;
        e->ids = g;
        e->cap = cap;
    }
    int id = wordmap_get((WordMap *)&wi->map, w, n, 0);
    e->ids[e->n++] = id < 0 ? wi->unk : id;
    return 0;
}

static int be_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                     char *err)
{
    BeEnc e = { t, malloc(sizeof(int) * 64), 0, 64 };
    if (!e.ids || be_words(text, len, be_encode_word, &e)) {
        free(e.ids);
        return err_set(err, LM_ENOMEM, "out of memory encoding %zu bytes", len);
    }
    *ids = e.ids;
    *n = e.n;
    return LM_OK;
}

/* The word and a space. */
static size_t be_decoded(const Tokenizer *t, int id, char *out)
{
    size_t n = t->off[id + 1] - t->off[id];
    memcpy(out, t->bytes + t->off[id], n);
    out[n] = ' ';
    return n + 1;
}

static int be_save(const Tokenizer *t, json_t *o) { return tok_words_save(t, o, "words"); }

static int be_load(const json_t *o, int V, Tokenizer **out, char *err)
{
    int rc = tok_words_load(o, "words", TOKENIZER_BASIC_ENGLISH, V, &BE_SETUP, out, err);
    return rc ? rc : be_check(*out, out, err);
}

const TokenizerOps TOK_BASIC_ENGLISH_OPS = {
    .train = be_train, .load = be_load, .save = be_save,
    .encode = be_encode, .decoded = be_decoded, .free_impl = tok_words_free,
};
