/* tokenizer.c — the char, word and BPE tokenizers behind one handle (see tokenizer.h),
 * their JSON form and hash. Char ids follow the seed notebook (sorted(set(text))), word
 * ids PyTorch's word_language_model Dictionary (first appearance). BPE merging lives in
 * bpe.c. Not a streaming decoder of partial UTF-8: tokens are whole byte strings. */
#include "tokenizer.h"

#include "bpe.h"
#include "err.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* word -> entry index, open addressing over keys held as (pointer, length) */
typedef struct {
    int *slot;            /* (cap) entry + 1, 0 = empty */
    size_t cap;
    const char **key;     /* (ecap) */
    size_t *klen;         /* (ecap) */
    long long *count;     /* (ecap) occurrences, for training */
    int n, ecap;
} WordMap;

struct Tokenizer {
    TokenizerKind kind;
    int V;
    size_t *off;          /* (V+1) offsets of each token's bytes (word: the bare word) */
    char *bytes;
    size_t *doff;         /* (V+1) offsets of each token's display text, NUL-terminated */
    char *dtext;
    uint32_t *cps;        /* char: (V) sorted code points, U+DC80.. for invalid bytes */
    int ascii[128];       /* char: id of each ASCII character, -1 when absent */
    WordMap map;          /* word: word -> id */
    int unk, eos;         /* word: ids of <unk> and <eos> */
    Bpe *bpe;
    unsigned long long hash;
};

static const char *const KIND_NAMES[] = { "char", "word", "bpe" };

int tokenizer_kind_parse(const char *name, TokenizerKind *kind)
{
    for (int k = 0; k < 3; k++)
        if (name && !strcmp(name, KIND_NAMES[k])) {
            *kind = (TokenizerKind)k;
            return 0;
        }
    return -1;
}

const char *tokenizer_kind_name(TokenizerKind kind)
{
    return (unsigned)kind < 3 ? KIND_NAMES[kind] : "?";
}

unsigned long long tokenizer_fnv1a(const void *data, size_t n, unsigned long long h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* ---- UTF-8 ---- */

/* Decodes the code point at s[i] (strict UTF-8: no overlongs, surrogates or values above
 * U+10FFFF) and returns its length; an invalid byte b gives U+DC00 + b, length 1. */
static int utf8_next(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
{
    unsigned c = s[i];
    if (c < 0x80) { *cp = c; return 1; }
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t min = len == 4 ? 0x10000 : len == 3 ? 0x800 : 0x80;
    uint32_t v = c & (0x7F >> len);
    if (c < 0xC2 || c > 0xF4 || i + (size_t)len > n) goto bad;
    for (int k = 1; k < len; k++) {
        if ((s[i + k] & 0xC0) != 0x80) goto bad;
        v = v << 6 | (s[i + k] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) goto bad;
    *cp = v;
    return len;
bad:
    *cp = 0xDC00 + c;
    return 1;
}

/* Writes code point cp as UTF-8 (U+DC80..U+DCFF: the raw byte) and returns its length. */
static int utf8_put(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp >= 0xDC80 && cp <= 0xDCFF) { o[0] = (unsigned char)(cp - 0xDC00); return 1; }
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { o[0] = 0xC0 | cp >> 6; o[1] = 0x80 | (cp & 63); return 2; }
    if (cp < 0x10000) {
        o[0] = 0xE0 | cp >> 12; o[1] = 0x80 | (cp >> 6 & 63); o[2] = 0x80 | (cp & 63);
        return 3;
    }
    o[0] = 0xF0 | cp >> 18; o[1] = 0x80 | (cp >> 12 & 63); o[2] = 0x80 | (cp >> 6 & 63);
    o[3] = 0x80 | (cp & 63);
    return 4;
}

size_t tokenizer_count_chars(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t n = 0;
    uint32_t cp;
    for (size_t i = 0; i < len; n++) i += s[i] < 0x80 ? 1 : (size_t)utf8_next(s, len, i, &cp);
    return n;
}

static int utf8_valid(const char *p, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        i += (size_t)utf8_next((const unsigned char *)p, n, i, &cp);
        if (cp >= 0xDC80 && cp <= 0xDCFF) return 0;
    }
    return 1;
}

/* Printable form of len bytes into out (room for 4 * len + 1); returns its length. */
static size_t escape_bytes(const char *p, size_t len, char *out)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = utf8_next(s, len, i, &cp);
        if (cp == '\n' || cp == '\t' || cp == '\r' || cp == '\\') {
            out[o++] = '\\';
            out[o++] = cp == '\n' ? 'n' : cp == '\t' ? 't' : cp == '\r' ? 'r' : '\\';
        } else if (cp < 0x20 || cp == 0x7F || (cp >= 0xDC80 && cp <= 0xDCFF)) {
            o += (size_t)sprintf(out + o, "\\x%02X", s[i]);
        } else {
            memcpy(out + o, s + i, (size_t)k);
            o += (size_t)k;
        }
        i += (size_t)k;
    }
    out[o] = 0;
    return o;
}

/* ---- word map ---- */

static size_t hash_str(const char *s, size_t n)
{
    unsigned long long h = tokenizer_fnv1a(s, n, TOKENIZER_FNV_SEED);
    return (size_t)(h ^ h >> 31);
}

static void wordmap_free(WordMap *m)
{
    free(m->slot); free(m->key); free(m->klen); free(m->count);
    memset(m, 0, sizeof *m);
}

static int wordmap_grow(WordMap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 1024;
    int *ns = calloc(cap, sizeof *ns), e = (int)(cap / 2);
    const char **k = realloc(m->key, sizeof *k * (size_t)e);
    if (k) m->key = k;
    size_t *l = k ? realloc(m->klen, sizeof *l * (size_t)e) : NULL;
    if (l) m->klen = l;
    long long *c = l ? realloc(m->count, sizeof *c * (size_t)e) : NULL;
    if (c) m->count = c;
    if (!ns || !c) { free(ns); return -1; }
    for (int u = 0; u < m->n; u++) {
        size_t h = hash_str(m->key[u], m->klen[u]) & (cap - 1);
        while (ns[h]) h = (h + 1) & (cap - 1);
        ns[h] = u + 1;
    }
    free(m->slot);
    m->slot = ns; m->cap = cap; m->ecap = e;
    return 0;
}

/* Entry of word s (n bytes): found, or added (count 0) when add; -1 absent, -2 no memory. */
static int wordmap_get(WordMap *m, const char *s, size_t n, int add)
{
    if (add && 2 * (size_t)(m->n + 1) > m->cap && wordmap_grow(m)) return -2;
    if (!m->cap) return -1;
    size_t h = hash_str(s, n) & (m->cap - 1);
    for (; m->slot[h]; h = (h + 1) & (m->cap - 1)) {
        int u = m->slot[h] - 1;
        if (m->klen[u] == n && !memcmp(m->key[u], s, n)) return u;
    }
    if (!add) return -1;
    m->key[m->n] = s; m->klen[m->n] = n; m->count[m->n] = 0;
    m->slot[h] = ++m->n;
    return m->n - 1;
}

static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Calls fn for every word of text and for "<eos>" at each line end; stops on nonzero. */
typedef int (*WordFn)(void *ctx, const char *w, size_t n);

static int for_each_word(const char *text, size_t len, WordFn fn, void *ctx)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        if (s[i] == '\n') {
            if (fn(ctx, "<eos>", 5)) return -1;
            i++;
        } else if (is_space(s[i])) {
            i++;
        } else {
            size_t e = i + 1;
            while (e < len && !is_space(s[e])) e++;
            if (fn(ctx, text + i, e - i)) return -1;
            i = e;
        }
    }
    if (len && s[len - 1] != '\n' && fn(ctx, "<eos>", 5)) return -1;
    return 0;
}

/* ---- construction ---- */

void tokenizer_destroy(Tokenizer *t)
{
    if (!t) return;
    free(t->off); free(t->bytes); free(t->doff); free(t->dtext); free(t->cps);
    wordmap_free(&t->map);
    bpe_destroy(t->bpe);
    free(t);
}

static Tokenizer *tok_alloc(TokenizerKind kind, int V, size_t n_bytes)
{
    Tokenizer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->kind = kind;
    t->V = V;
    t->off = calloc((size_t)V + 1, sizeof *t->off);
    t->bytes = malloc(n_bytes + 1);
    t->doff = malloc(((size_t)V + 1) * sizeof *t->doff);
    t->dtext = malloc(4 * n_bytes + (size_t)V + 1);
    if (!t->off || !t->bytes || !t->doff || !t->dtext) {
        tokenizer_destroy(t);
        return NULL;
    }
    return t;
}

/* Builds the display texts, the word map and the hash once token bytes are in place. */
static int tok_finish(Tokenizer *t, char *err)
{
    t->doff[0] = 0;
    for (int i = 0; i < t->V; i++)
        t->doff[i + 1] = t->doff[i] + 1 +
            escape_bytes(t->bytes + t->off[i], t->off[i + 1] - t->off[i], t->dtext + t->doff[i]);
    if (t->kind == TOKENIZER_WORD) {
        t->unk = t->eos = -1;
        for (int i = 0; i < t->V; i++) {
            const char *w = t->bytes + t->off[i];
            size_t n = t->off[i + 1] - t->off[i];
            int u = wordmap_get(&t->map, w, n, 1);
            if (u == -2) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
            if (u != i) return err_set(err, LM_EFORMAT, "word %d '%.40s' repeats word %d", i,
                                       t->dtext + t->doff[i], u);
            if (n == 5 && !memcmp(w, "<unk>", 5)) t->unk = i;
            if (n == 5 && !memcmp(w, "<eos>", 5)) t->eos = i;
        }
        if (t->unk < 0 || t->eos < 0)
            return err_set(err, LM_EFORMAT, "the word vocabulary lacks %s",
                           t->unk < 0 ? "<unk>" : "<eos>");
    }
    char *json = tokenizer_save(t);
    if (!json) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    t->hash = tokenizer_fnv1a(json, strlen(json), TOKENIZER_FNV_SEED);
    free(json);
    return LM_OK;
}

/* A char tokenizer over cps (n sorted distinct code points). */
static int char_build(const uint32_t *cps, int n, Tokenizer **out, char *err)
{
    Tokenizer *t = tok_alloc(TOKENIZER_CHAR, n, 4 * (size_t)n);
    if (!t || !(t->cps = malloc(sizeof(uint32_t) * ((size_t)n + 1)))) {
        tokenizer_destroy(t);
        return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    }
    memset(t->ascii, -1, sizeof t->ascii);
    for (int i = 0; i < n; i++) {
        t->cps[i] = cps[i];
        if (cps[i] < 128) t->ascii[cps[i]] = i;
        t->off[i + 1] = t->off[i] + (size_t)utf8_put(cps[i], t->bytes + t->off[i]);
    }
    int rc = tok_finish(t, err);
    if (rc) tokenizer_destroy(t);
    *out = rc ? NULL : t;
    return rc;
}

static int char_train(const char *text, size_t len, Tokenizer **out, char *err)
{
    const unsigned char *s = (const unsigned char *)text;
    uint8_t *seen = calloc(0x110000 / 8, 1);
    uint32_t *cps = malloc(sizeof(uint32_t) * 0x110000 / 64);  /* grown below if needed */
    int n = 0, cap = 0x110000 / 64, rc;
    if (!seen || !cps) goto oom;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += s[i] < 0x80 ? (cp = s[i], 1) : (size_t)utf8_next(s, len, i, &cp);
        seen[cp >> 3] |= (uint8_t)(1u << (cp & 7));
    }
    for (uint32_t cp = 0; cp < 0x110000; cp++)
        if (seen[cp >> 3] >> (cp & 7) & 1) {
            if (n == cap) {
                uint32_t *g = realloc(cps, sizeof(uint32_t) * (size_t)(cap *= 2));
                if (!g) goto oom;
                cps = g;
            }
            cps[n++] = cp;
        }
    /* an empty vocabulary could be neither saved nor loaded back */
    rc = n ? char_build(cps, n, out, err)
           : err_set(err, LM_EARG, "char tokenizer: the text is empty, no characters to build "
                     "a vocabulary from");
    free(seen);
    free(cps);
    return rc;
oom:
    free(seen);
    free(cps);
    return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
}

/* A word tokenizer over n words (pointer, length), ids in that order. */
static int word_build(const char *const *w, const size_t *wl, int n, Tokenizer **out, char *err)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += wl[i];
    Tokenizer *t = tok_alloc(TOKENIZER_WORD, n, total);
    if (!t) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (int i = 0; i < n; i++) {
        memcpy(t->bytes + t->off[i], w[i], wl[i]);
        t->off[i + 1] = t->off[i] + wl[i];
    }
    int rc = tok_finish(t, err);
    if (rc) tokenizer_destroy(t);
    *out = rc ? NULL : t;
    return rc;
}

static int count_word(void *ctx, const char *w, size_t n)
{
    int u = wordmap_get(ctx, w, n, 1);
    if (u < 0) return -1;
    ((WordMap *)ctx)->count[u]++;
    return 0;
}

typedef struct { long long count; int id; } Ranked;

static int by_count(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

static int word_train(const char *text, size_t len, int vocab_size, Tokenizer **out, char *err)
{
    WordMap m = { 0 };
    int rc = LM_ENOMEM, n_keep = 0;
    Ranked *order = NULL;
    char *keep = NULL;
    const char **w = NULL;
    size_t *wl = NULL;
    if (for_each_word(text, len, count_word, &m) || count_word(&m, "<eos>", 5) ||
        count_word(&m, "<unk>", 5))
        goto done;
    int n = m.n, eos = wordmap_get(&m, "<eos>", 5, 0), unk = wordmap_get(&m, "<unk>", 5, 0);
    order = malloc(sizeof *order * (size_t)n);
    keep = calloc((size_t)n, 1);
    w = malloc(sizeof *w * (size_t)n);
    wl = malloc(sizeof *wl * (size_t)n);
    if (!order || !keep || !w || !wl) goto done;
    m.count[eos] = (long long)1 << 62;   /* always kept */
    m.count[unk] = -1;                   /* kept apart, never ranked */
    for (int i = 0; i < n; i++) order[i] = (Ranked){ m.count[i], i };
    qsort(order, (size_t)n, sizeof *order, by_count);
    int limit = vocab_size > 0 && vocab_size - 1 < n ? vocab_size - 1 : n;
    for (int i = 0; i < limit; i++) keep[order[i].id] = 1;
    keep[unk] = 1;
    for (int i = 0; i < n; i++)
        if (keep[i]) {
            w[n_keep] = m.key[i];
            wl[n_keep++] = m.klen[i];
        }
    rc = word_build(w, wl, n_keep, out, err);
done:
    if (rc == LM_ENOMEM) err_set(err, rc, "word tokenizer: out of memory");
    wordmap_free(&m);
    free(order); free(keep); free(w); free(wl);
    return rc;
}

static int bpe_wrap(Bpe *b, Tokenizer **out, char *err)
{
    int V = bpe_vocab_size(b);
    size_t total = 0, len;
    for (int i = 0; i < V; i++) {
        bpe_token_bytes(b, i, &len);
        total += len;
    }
    Tokenizer *t = tok_alloc(TOKENIZER_BPE, V, total);
    if (!t) {
        bpe_destroy(b);
        return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    }
    t->bpe = b;
    for (int i = 0; i < V; i++) {
        const unsigned char *p = bpe_token_bytes(b, i, &len);
        memcpy(t->bytes + t->off[i], p, len);
        t->off[i + 1] = t->off[i] + len;
    }
    int rc = tok_finish(t, err);
    if (rc) tokenizer_destroy(t);
    *out = rc ? NULL : t;
    return rc;
}

int tokenizer_train(TokenizerKind kind, const char *text, size_t len, int vocab_size,
                    Tokenizer **out, char *err)
{
    *out = NULL;
    if (kind == TOKENIZER_CHAR) return char_train(text, len, out, err);
    if (kind == TOKENIZER_WORD) {
        if (vocab_size < 0 || vocab_size == 1)
            return err_set(err, LM_EARG, "word vocabulary size %d: use 0 (all words) or at "
                           "least 2 (<unk> and <eos>)", vocab_size);
        return word_train(text, len, vocab_size, out, err);
    }
    if (kind != TOKENIZER_BPE) return err_set(err, LM_EARG, "unknown tokenizer kind %d", kind);
    if (vocab_size < 256 || vocab_size > 256 + (1 << 20))
        return err_set(err, LM_EARG, "BPE vocabulary size %d: use 256 (bytes) + the number of "
                       "merges, e.g. 1256", vocab_size);
    Bpe *b;
    int rc = bpe_train(text, len, vocab_size - 256, &b, err);
    return rc ? rc : bpe_wrap(b, out, err);
}

void tokenizer_destroy(Tokenizer *t);

TokenizerKind tokenizer_kind(const Tokenizer *t) { return t->kind; }

int tokenizer_vocab_size(const Tokenizer *t) { return t->V; }

unsigned long long tokenizer_hash(const Tokenizer *t) { return t->hash; }

/* ---- encoding and decoding ---- */

static int char_find(const Tokenizer *t, uint32_t cp)
{
    if (cp < 128) return t->ascii[cp];
    int lo = 0, hi = t->V - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (t->cps[mid] == cp) return mid;
        if (t->cps[mid] < cp) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

static int char_encode(const Tokenizer *t, const unsigned char *s, size_t len, int *out, char *err)
{
    for (size_t i = 0, m = 0; i < len; m++) {
        uint32_t cp;
        size_t at = i;
        i += s[i] < 0x80 ? (cp = s[i], 1) : (size_t)utf8_next(s, len, i, &cp);
        out[m] = char_find(t, cp);
        if (out[m] >= 0) continue;
        if (cp >= 0xDC80 && cp <= 0xDCFF)
            return err_set(err, LM_EARG, "byte 0x%02X at byte offset %zu (not valid UTF-8) is "
                           "not in the vocabulary of %d characters", s[at], at, t->V);
        char shown[16];
        escape_bytes((const char *)s + at, i - at, shown);
        return err_set(err, LM_EARG, "character '%s' (U+%04X) at byte offset %zu is not in the "
                       "vocabulary of %d characters", shown, (unsigned)cp, at, t->V);
    }
    return LM_OK;
}

typedef struct { const Tokenizer *t; int *out; size_t n; } WordEnc;

static int encode_word(void *ctx, const char *w, size_t n)
{
    WordEnc *e = ctx;
    int id = wordmap_get((WordMap *)&e->t->map, w, n, 0);   /* lookup only: no write */
    e->out[e->n++] = id < 0 ? e->t->unk : id;
    return 0;
}

int tokenizer_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                     char *err)
{
    *ids = NULL;
    *n = 0;
    if (t->kind == TOKENIZER_BPE) return bpe_encode(t->bpe, text, len, ids, n, err);
    int *out = malloc(sizeof(int) * (len + 1));
    if (!out) return err_set(err, LM_ENOMEM, "out of memory encoding %zu bytes", len);
    size_t m;
    if (t->kind == TOKENIZER_CHAR) {
        int rc = char_encode(t, (const unsigned char *)text, len, out, err);
        if (rc) {
            free(out);
            return rc;
        }
        m = tokenizer_count_chars(text, len);
    } else {
        WordEnc e = { t, out, 0 };
        for_each_word(text, len, encode_word, &e);
        m = e.n;
    }
    int *shrunk = realloc(out, sizeof(int) * (m + 1));
    *ids = shrunk ? shrunk : out;
    *n = m;
    return LM_OK;
}

/* Length of token id as decoded (word: plus a space; <eos>: a newline). */
static size_t token_len(const Tokenizer *t, int id)
{
    if (t->kind == TOKENIZER_WORD) return id == t->eos ? 1 : t->off[id + 1] - t->off[id] + 1;
    return t->off[id + 1] - t->off[id];
}

static void token_copy(const Tokenizer *t, int id, char *dst, size_t n)
{
    if (t->kind == TOKENIZER_WORD && id == t->eos) {
        dst[0] = '\n';
    } else if (t->kind == TOKENIZER_WORD) {
        memcpy(dst, t->bytes + t->off[id], n - 1);
        dst[n - 1] = ' ';
    } else {
        memcpy(dst, t->bytes + t->off[id], n);
    }
}

int tokenizer_decode_token(const Tokenizer *t, int id, char *buf, size_t cap)
{
    if (id < 0 || id >= t->V) return -1;
    int eos = t->kind == TOKENIZER_WORD && id == t->eos;
    const char *src = eos ? "\n" : t->bytes + t->off[id];
    size_t raw = eos ? 1 : t->off[id + 1] - t->off[id], n = token_len(t, id);
    memcpy(buf, src, raw < cap ? raw : cap);
    if (n > raw && raw < cap) buf[raw] = ' ';
    if (n < cap) buf[n] = 0;
    return (int)n;
}

char *tokenizer_decode(const Tokenizer *t, const int *ids, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < t->V) total += token_len(t, ids[i]);
    char *s = malloc(total + 1), *p = s;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < t->V) {
            size_t k = token_len(t, ids[i]);
            token_copy(t, ids[i], p, k);
            p += k;
        }
    *p = 0;
    return s;
}

const char *tokenizer_token_text(const Tokenizer *t, int id)
{
    if (id < 0 || id >= t->V) return "<invalid>";
    return t->dtext + t->doff[id];
}

/* ---- JSON ---- */

static json_t *vocab_json(const Tokenizer *t)
{
    json_t *a = json_array();
    for (int i = 0; a && i < t->V; i++) {
        json_t *v = NULL;
        const char *w = t->bytes + t->off[i];
        size_t n = t->off[i + 1] - t->off[i];
        if (t->kind == TOKENIZER_CHAR) {
            v = json_integer(t->cps[i]);
        } else if (utf8_valid(w, n)) {
            v = json_stringn(w, n);
        } else if ((v = json_array())) {
            for (size_t k = 0; k < n; k++) json_array_append_new(v, json_integer((unsigned char)w[k]));
        }
        if (json_array_append_new(a, v)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

char *tokenizer_save(const Tokenizer *t)
{
    json_t *o = json_object(), *body;
    if (!o) return NULL;
    json_object_set_new(o, "format", json_string("lmlab-tokenizer"));
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "kind", json_string(KIND_NAMES[t->kind]));
    json_object_set_new(o, "vocab_size", json_integer(t->V));
    if (t->kind == TOKENIZER_BPE) {
        int nm;
        const int *mg = bpe_merges(t->bpe, &nm);
        body = json_array();
        for (int k = 0; body && k < nm; k++)
            json_array_append_new(body, json_pack("[ii]", mg[2 * k], mg[2 * k + 1]));
    } else {
        body = vocab_json(t);
    }
    const char *key = t->kind == TOKENIZER_CHAR ? "chars" : t->kind == TOKENIZER_WORD ? "words" : "merges";
    char *s = body && !json_object_set_new(o, key, body) ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static int load_chars(const json_t *a, int V, Tokenizer **out, char *err)
{
    uint32_t *cps = malloc(sizeof(uint32_t) * ((size_t)V + 1));
    if (!cps) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (int i = 0; i < V; i++) {
        json_t *v = json_array_get(a, (size_t)i);
        json_int_t c = json_is_integer(v) ? json_integer_value(v) : -1;
        if (c < 0 || c > 0x10FFFF || (c >= 0xD800 && c < 0xDC80) || (c > 0xDCFF && c <= 0xDFFF) ||
            (i > 0 && (uint32_t)c <= cps[i - 1])) {
            free(cps);
            return err_set(err, LM_EFORMAT, "tokenizer JSON: chars[%d] is not a valid code point "
                           "above the one before it", i);
        }
        cps[i] = (uint32_t)c;
    }
    int rc = char_build(cps, V, out, err);
    free(cps);
    return rc;
}

/* Word i of the JSON into buf (a string, or an array of byte values); its length or -1. */
static long json_word(const json_t *v, char *buf, size_t cap)
{
    size_t n = json_is_string(v) ? json_string_length(v) : json_is_array(v) ? json_array_size(v) : 0;
    if (n == 0 || n >= cap) return -1;
    for (size_t k = 0; k < n; k++) {
        json_int_t b = json_is_string(v) ? (unsigned char)json_string_value(v)[k]
                                         : json_is_integer(json_array_get(v, k))
                                               ? json_integer_value(json_array_get(v, k)) : -1;
        if (b < 0 || b > 255 || is_space((unsigned char)b)) return -1;
        buf[k] = (char)b;
    }
    return (long)n;
}

static int load_words(const json_t *a, int V, Tokenizer **out, char *err)
{
    size_t total = 0, at = 0;
    for (int i = 0; i < V; i++) {
        const json_t *v = json_array_get(a, (size_t)i);
        total += json_is_string(v) ? json_string_length(v) : json_array_size(v);
    }
    char *buf = malloc(total + 1);
    const char **w = malloc(sizeof *w * ((size_t)V + 1));
    size_t *wl = malloc(sizeof *wl * ((size_t)V + 1));
    int rc = buf && w && wl ? LM_OK : err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (int i = 0; !rc && i < V; i++) {
        long n = json_word(json_array_get(a, (size_t)i), buf + at, total + 1 - at);
        if (n < 0)
            rc = err_set(err, LM_EFORMAT, "tokenizer JSON: words[%d] is not a non-empty word "
                         "without spaces", i);
        else {
            w[i] = buf + at;
            wl[i] = (size_t)n;
            at += (size_t)n;
        }
    }
    if (!rc) rc = word_build(w, wl, V, out, err);
    free(buf); free(w); free(wl);
    return rc;
}

static int load_merges(const json_t *a, int V, Tokenizer **out, char *err)
{
    int n = V - 256;
    if (n < 0 || (size_t)n != json_array_size(a))
        return err_set(err, LM_EFORMAT, "tokenizer JSON: vocab_size %d does not match 256 + %zu "
                       "merges", V, json_array_size(a));
    int *mg = malloc(sizeof(int) * 2 * ((size_t)n + 1));
    if (!mg) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (int k = 0; k < 2 * n; k++) {
        const json_t *p = json_array_get(a, (size_t)k / 2), *v = json_array_get(p, (size_t)k % 2);
        if (json_array_size(p) != 2 || !json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > (1 << 24)) {   /* bpe_create checks the ids further */
            free(mg);
            return err_set(err, LM_EFORMAT, "tokenizer JSON: merges[%d] is not a pair of token ids", k / 2);
        }
        mg[k] = (int)json_integer_value(v);
    }
    Bpe *b;
    int rc = bpe_create(mg, n, &b, err);
    free(mg);
    return rc ? rc : bpe_wrap(b, out, err);
}

int tokenizer_load(const char *json, Tokenizer **out, char *err)
{
    *out = NULL;
    json_error_t je;
    json_t *o = json_loads(json, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
    if (!o) return err_set(err, LM_EFORMAT, "tokenizer JSON: %s (line %d, column %d)", je.text, je.line, je.column);
    const char *fmt = json_string_value(json_object_get(o, "format"));
    const json_t *ver = json_object_get(o, "version"), *vs = json_object_get(o, "vocab_size");
    TokenizerKind kind = TOKENIZER_CHAR;
    int rc = LM_OK;
    if (!json_is_object(o) || !fmt || strcmp(fmt, "lmlab-tokenizer"))
        rc = err_set(err, LM_EFORMAT, "not an lmlab tokenizer (no \"format\": \"lmlab-tokenizer\")");
    else if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: unsupported version (this lmlab reads 1)");
    else if (tokenizer_kind_parse(json_string_value(json_object_get(o, "kind")), &kind))
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: \"kind\" must be char, word or bpe");
    else if (!json_is_integer(vs) || json_integer_value(vs) < 1 || json_integer_value(vs) > (1 << 24))
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: \"vocab_size\" must be an integer in 1..%d", 1 << 24);
    if (rc) {
        json_decref(o);
        return rc;
    }
    int V = (int)json_integer_value(vs);
    const char *key = kind == TOKENIZER_CHAR ? "chars" : kind == TOKENIZER_WORD ? "words" : "merges";
    const json_t *a = json_object_get(o, key);
    if (!json_is_array(a) || (kind != TOKENIZER_BPE && json_array_size(a) != (size_t)V))
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: \"%s\" must be an array of %d entries", key,
                     kind == TOKENIZER_BPE ? V - 256 : V);
    else if (kind == TOKENIZER_CHAR)
        rc = load_chars(a, V, out, err);
    else if (kind == TOKENIZER_WORD)
        rc = load_words(a, V, out, err);
    else
        rc = load_merges(a, V, out, err);
    json_decref(o);
    return rc;
}

const char *tokenizer_join(const Tokenizer *t, const char *prompt)
{
    size_t n = prompt ? strlen(prompt) : 0;
    if (t->kind != TOKENIZER_WORD || n == 0 || strchr(" \t\n\v\f\r", prompt[n - 1]))
        return "";
    return " ";
}
