/* tok_util.c — helpers the tokenizer kinds share (private/tok_impl.h): strict UTF-8
 * decoding and encoding, the escaped display form of token bytes, and the word map
 * (word -> id, open addressing). Not Unicode-aware beyond UTF-8: categories and
 * normalisation are tok_wordpiece.c's business (utf8proc). */
#include "err.h"
#include "private/tok_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tok_utf8_next(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
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

int tok_utf8_put(uint32_t cp, char *out)
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

int tok_utf8_valid(const char *p, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        i += (size_t)tok_utf8_next((const unsigned char *)p, n, i, &cp);
        if (cp >= 0xDC80 && cp <= 0xDCFF) return 0;
    }
    return 1;
}

size_t tok_escape_bytes(const char *p, size_t len, char *out)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = tok_utf8_next(s, len, i, &cp);
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

void wordmap_free(WordMap *m)
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

int wordmap_get(WordMap *m, const char *s, size_t n, int add)
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

int wordmap_count(void *ctx, const char *w, size_t n)
{
    int u = wordmap_get(ctx, w, n, 1);
    if (u < 0) return -1;
    ((WordMap *)ctx)->count[u]++;
    return 0;
}

int wordmap_index(WordMap *m, const Tokenizer *t, char *err)
{
    for (int i = 0; i < t->V; i++) {
        int u = wordmap_get(m, t->bytes + t->off[i], t->off[i + 1] - t->off[i], 1);
        if (u == -2) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
        if (u != i) return err_set(err, LM_EFORMAT, "word %d '%.40s' repeats word %d", i,
                                   t->dtext + t->doff[i], u);
    }
    return LM_OK;
}
