/* tok_gpt2_encode.c — encoding with GPT-2's tokenizer: the pre-split by GPT-2's regex
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * written out as a scanner (the alternatives in order, with the one backtrack the
 * lookahead asks for), then each piece as one token when it is one, else merged as
 * tiktoken's byte_pair_merge does: the adjacent pair whose concatenated bytes have the
 * lowest rank first, leftmost on ties. \s is Unicode White_Space (as tiktoken's Rust
 * regex has it: with U+0085, without U+FEFF), \p{L} and \p{N} utf8proc's categories.
 * A byte that is not UTF-8 is a character of its own, neither letter, number nor space.
 * A piece is merged with a rank scan when short and with an indexed heap (same order,
 * 20 bytes a byte) when long, so a megabyte of one character stays linear-logarithmic. A piece that had to be merged
 * is remembered in its thread's cache (pieces -> ids, about 4.6 MB, emptied when full or
 * when the thread meets another vocabulary), as a word comes back often. Not the
 * vocabulary (tok_gpt2.c). Reads the tokenizer only: many threads may encode with one. */
#include "err.h"
#include "private/tok_gpt2.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

enum { C_OTHER, C_LETTER, C_NUMBER, C_SPACE };

#define RANK_NONE 0x7FFFFFFF
#define SCAN_MAX 128            /* pieces up to this many bytes merge by scanning */

static inline int ascii_class(unsigned c)
{
    if ((unsigned)((c | 32) - 'a') < 26) return C_LETTER;
    if ((unsigned)(c - '0') < 10) return C_NUMBER;
    if (c == ' ' || (c >= 9 && c <= 13)) return C_SPACE;
    return C_OTHER;
}

/* The class of the character at s[i] (n bytes in all), its length in *len. */
static int class_at(const unsigned char *s, size_t n, size_t i, int *len)
{
    if (s[i] < 0x80) {
        *len = 1;
        return ascii_class(s[i]);
    }
    uint32_t c;
    *len = tok_utf8_next(s, n, i, &c);
    if (*len == 1) return C_OTHER;   /* not UTF-8 */
    if (c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
        c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000)
        return C_SPACE;
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    if (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO) return C_LETTER;
    if (k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO) return C_NUMBER;
    return C_OTHER;
}

/* The end of the run of class k starting at p. */
static size_t run_end(const unsigned char *s, size_t n, size_t p, int k)
{
    while (p < n) {
        int len;
        if (s[p] < 0x80) {
            if (ascii_class(s[p]) != k) break;
            p++;
        } else {
            if (class_at(s, n, p, &len) != k) break;
            p += (size_t)len;
        }
    }
    return p;
}

/* The end of the piece starting at i < n. */
static size_t piece_end(const unsigned char *s, size_t n, size_t i)
{
    unsigned c = s[i];
    int len, k;
    if (c == '\'' && i + 1 < n) {                              /* 's 't 're 've 'm 'll 'd */
        unsigned d = s[i + 1];
        if (d == 's' || d == 't' || d == 'm' || d == 'd') return i + 2;
        if (i + 2 < n && ((d == 'r' && s[i + 2] == 'e') || (d == 'v' && s[i + 2] == 'e') ||
                          (d == 'l' && s[i + 2] == 'l')))
            return i + 3;
    }
    if (c == ' ') {                                            /* ' ?' then a run */
        if (i + 1 < n && (k = class_at(s, n, i + 1, &len)) != C_SPACE)
            return run_end(s, n, i + 1 + (size_t)len, k);
        len = 1;
    } else if ((k = class_at(s, n, i, &len)) != C_SPACE) {
        return run_end(s, n, i + (size_t)len, k);
    }
    size_t last = i, p = i + (size_t)len;                      /* \s+(?!\S) | \s+ */
    while (p < n && class_at(s, n, p, &len) == C_SPACE) {
        last = p;
        p += (size_t)len;
    }
    if (p == n) return n;
    return last > i ? last : p;
}

/* ---- merging one piece ---- */

/* tiktoken's byte_pair_merge for m <= SCAN_MAX bytes: ids into out, their count. */
static size_t merge_scan(const Tokenizer *t, const unsigned char *p, size_t m, int *out)
{
    const Gpt2 *g = t->impl;
    size_t start[SCAN_MAX + 1];
    int rank[SCAN_MAX + 1], tok[SCAN_MAX + 1];
    size_t np = m + 1;                 /* parts, the last one the end */
    for (size_t k = 0; k < m; k++) {
        start[k] = k;
        tok[k] = g->byte_id[p[k]];
        int r = k + 1 < m ? g->pair[p[k] << 8 | p[k + 1]] : -1;
        rank[k] = r < 0 ? RANK_NONE : r;
    }
    start[m] = m;
    rank[m] = RANK_NONE;
    for (;;) {
        int best = RANK_NONE;
        size_t bi = 0;
        for (size_t k = 0; k + 1 < np; k++)
            if (rank[k] < best) { best = rank[k]; bi = k; }
        if (best == RANK_NONE) break;
        if (bi > 0) {                  /* the part before with the merged one */
            int r = tok_gpt2_rank(t, p + start[bi - 1], start[bi + 2] - start[bi - 1]);
            rank[bi - 1] = r < 0 ? RANK_NONE : r;
        }
        int r = bi + 3 < np ? tok_gpt2_rank(t, p + start[bi], start[bi + 3] - start[bi]) : -1;
        rank[bi] = r < 0 ? RANK_NONE : r;
        tok[bi] = best;
        size_t tail = np - (bi + 2);
        memmove(start + bi + 1, start + bi + 2, tail * sizeof *start);
        memmove(rank + bi + 1, rank + bi + 2, tail * sizeof *rank);
        memmove(tok + bi + 1, tok + bi + 2, tail * sizeof *tok);
        np--;
    }
    for (size_t k = 0; k + 1 < np; k++) out[k] = tok[k];
    return np - 1;
}

/* The long-piece merge's state: parts are a linked list indexed by their first byte; each
 * part with a mergeable pair (rank[a] != RANK_NONE: the rank of its bytes and the next
 * part's) sits once in a binary heap ordered (rank, position) = tiktoken's (lowest,
 * leftmost). 20 bytes a piece byte. */
typedef struct {
    uint32_t *nxt, *prv;   /* (m) neighbouring parts' first bytes; m = none */
    int *rank;             /* (m) */
    uint32_t *heap, *at;   /* (m) the heap of parts; each part's place in it (UINT32_MAX out) */
    uint32_t n;
} PairHeap;

static int heap_less(const PairHeap *h, uint32_t a, uint32_t b)
{
    return h->rank[a] < h->rank[b] || (h->rank[a] == h->rank[b] && a < b);
}

static void heap_set(PairHeap *h, uint32_t i, uint32_t a)
{
    h->heap[i] = a;
    h->at[a] = i;
}

static void heap_up(PairHeap *h, uint32_t i)
{
    uint32_t a = h->heap[i];
    while (i > 0 && heap_less(h, a, h->heap[(i - 1) / 2])) {
        heap_set(h, i, h->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(h, i, a);
}

static void heap_down(PairHeap *h, uint32_t i)
{
    uint32_t a = h->heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && heap_less(h, h->heap[c + 1], h->heap[c])) c++;
        if (!heap_less(h, h->heap[c], a)) break;
        heap_set(h, i, h->heap[c]);
        i = c;
    }
    heap_set(h, i, a);
}

static void heap_remove(PairHeap *h, uint32_t a)
{
    uint32_t i = h->at[a];
    if (i == UINT32_MAX) return;
    h->at[a] = UINT32_MAX;
    uint32_t last = h->heap[--h->n];
    if (last == a) return;
    heap_set(h, i, last);
    heap_up(h, i);
    heap_down(h, h->at[last]);
}

/* Part a's pair rank is now r (RANK_NONE: none): into, within or out of the heap. */
static void heap_rank(PairHeap *h, uint32_t a, int r)
{
    if (r == RANK_NONE) {
        heap_remove(h, a);
        h->rank[a] = r;
        return;
    }
    h->rank[a] = r;
    if (h->at[a] == UINT32_MAX) {
        heap_set(h, h->n++, a);
        heap_up(h, h->n - 1);
    } else {
        heap_up(h, h->at[a]);
        heap_down(h, h->at[a]);
    }
}

/* The rank of the bytes from part a to the end of the part after it (RANK_NONE when a is
 * the last part or they are no token). */
static int pair_rank(const Tokenizer *t, const PairHeap *h, const unsigned char *p, uint32_t a,
                     uint32_t m)
{
    uint32_t b = h->nxt[a];
    if (b >= m) return RANK_NONE;
    uint32_t e = h->nxt[b] < m ? h->nxt[b] : m;
    int r = tok_gpt2_rank(t, p + a, e - a);
    return r < 0 ? RANK_NONE : r;
}

/* tiktoken's byte_pair_merge for a long piece (len bytes) in len log len: the lowest pair
 * merged, then the pairs on both sides of the new part re-ranked. LM_OK, LM_ENOMEM, or
 * LM_EARG for a piece of 4 GB or more; ids into out, their count in *k. */
static int merge_heap(const Tokenizer *t, const unsigned char *p, size_t len, int *out, size_t *k)
{
    const Gpt2 *g = t->impl;
    if (len >= UINT32_MAX) return LM_EARG;
    uint32_t m = (uint32_t)len;
    PairHeap h = { malloc(m * sizeof *h.nxt), malloc(m * sizeof *h.prv), malloc(m * sizeof *h.rank),
                   malloc(m * sizeof *h.heap), malloc(m * sizeof *h.at), 0 };
    int rc = h.nxt && h.prv && h.rank && h.heap && h.at ? LM_OK : LM_ENOMEM;
    for (uint32_t i = 0; !rc && i < m; i++) {
        h.nxt[i] = i + 1;
        h.prv[i] = i ? i - 1 : m;
        h.at[i] = UINT32_MAX;
        int r = i + 1 < m ? g->pair[p[i] << 8 | p[i + 1]] : -1;
        h.rank[i] = r < 0 ? RANK_NONE : r;
        if (r >= 0) heap_set(&h, h.n++, i);
    }
    for (uint32_t i = h.n / 2; !rc && i-- > 0;) heap_down(&h, i);   /* heapify */
    while (!rc && h.n) {
        uint32_t a = h.heap[0], b = h.nxt[a];
        heap_remove(&h, b);                    /* b joins a */
        h.nxt[a] = h.nxt[b];
        if (h.nxt[b] < m) h.prv[h.nxt[b]] = a;
        heap_rank(&h, a, pair_rank(t, &h, p, a, m));
        if (h.prv[a] < m) heap_rank(&h, h.prv[a], pair_rank(t, &h, p, h.prv[a], m));
    }
    size_t n = 0;
    for (uint32_t i = 0; !rc && i < m; i = h.nxt[i]) {
        uint32_t e = h.nxt[i] < m ? h.nxt[i] : m;
        out[n++] = e - i == 1 ? g->byte_id[p[i]] : tok_gpt2_rank(t, p + i, e - i);
    }
    *k = n;
    free(h.nxt); free(h.prv); free(h.rank); free(h.heap); free(h.at);
    return rc;
}

/* ---- the thread's cache of merged pieces ---- */

#define CACHE_SLOTS (1u << 16)
#define CACHE_ENTRIES (1u << 15)
#define CACHE_KEY_BYTES (1u << 21)
#define CACHE_IDS (1u << 19)
#define CACHE_MAX_PIECE 255

typedef struct {
    unsigned long long vocab;           /* tokenizer_hash of the entries' vocabulary */
    uint32_t slot[CACHE_SLOTS];         /* entry + 1, 0 empty */
    uint32_t key_off[CACHE_ENTRIES], ids_off[CACHE_ENTRIES];
    uint16_t key_len[CACHE_ENTRIES], n_ids[CACHE_ENTRIES];
    uint32_t n, key_used, ids_used;
    unsigned char keys[CACHE_KEY_BYTES];
    int ids[CACHE_IDS];
} PieceCache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_ok;

static void cache_make_key(void) { cache_key_ok = !pthread_key_create(&cache_key, free); }

static void cache_clear(PieceCache *c)
{
    memset(c->slot, 0, sizeof c->slot);
    c->n = c->key_used = c->ids_used = 0;
}

/* The calling thread's cache for t's vocabulary; NULL (no cache) when out of memory. */
static PieceCache *cache_get(const Tokenizer *t)
{
    pthread_once(&cache_once, cache_make_key);
    if (!cache_key_ok) return NULL;
    PieceCache *c = pthread_getspecific(cache_key);
    if (!c) {
        if (!(c = calloc(1, sizeof *c))) return NULL;
        if (pthread_setspecific(cache_key, c)) { free(c); return NULL; }
        c->vocab = t->hash;
    }
    if (c->vocab != t->hash) {
        cache_clear(c);
        c->vocab = t->hash;
    }
    return c;
}

/* The slot of piece p (m bytes): its entry's or the empty one where it would go. */
static uint32_t *cache_slot(PieceCache *c, const unsigned char *p, size_t m)
{
    for (uint32_t s = (uint32_t)tok_gpt2_hash(p, m) & (CACHE_SLOTS - 1);; s = (s + 1) & (CACHE_SLOTS - 1)) {
        uint32_t e = c->slot[s];
        if (!e || (c->key_len[e - 1] == m && !memcmp(c->keys + c->key_off[e - 1], p, m)))
            return &c->slot[s];
    }
}

/* Remembers that piece p (m bytes) is the k ids; empties the cache first when full. */
static void cache_put(PieceCache *c, const unsigned char *p, size_t m, const int *ids, size_t k)
{
    if (c->n == CACHE_ENTRIES || c->key_used + m > CACHE_KEY_BYTES || c->ids_used + k > CACHE_IDS)
        cache_clear(c);
    uint32_t *s = cache_slot(c, p, m), e = c->n++;
    memcpy(c->keys + c->key_used, p, m);
    memcpy(c->ids + c->ids_used, ids, k * sizeof *ids);
    c->key_off[e] = c->key_used;
    c->key_len[e] = (uint16_t)m;
    c->ids_off[e] = c->ids_used;
    c->n_ids[e] = (uint16_t)k;
    c->key_used += (uint32_t)m;
    c->ids_used += (uint32_t)k;
    *s = e + 1;
}

/* ---- the encode op ---- */

/* merge_heap with the message of its failure. */
static int merge_long(const Tokenizer *t, const unsigned char *p, size_t m, int *out, size_t *k,
                      char *err)
{
    int rc = merge_heap(t, p, m, out, k);
    if (rc == LM_EARG)
        return err_set(err, rc, "a run of %zu bytes of one kind of character (no space, letter, "
                       "digit or other character between): GPT-2's pre-split makes it one piece, "
                       "and pieces of 4 GB or more are not encoded", m);
    return rc ? err_set(err, rc, "out of memory merging a piece of %zu bytes (%zu MB needed)", m,
                        m * 20 >> 20) : LM_OK;
}

int tok_gpt2_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                    char *err)
{
    const Gpt2 *g = t->impl;
    const unsigned char *s = (const unsigned char *)text;
    PieceCache *c = cache_get(t);
    size_t cap = len / 3 + 64, k = 0;
    int *out = malloc(cap * sizeof *out);
    if (!out) return err_set(err, LM_ENOMEM, "out of memory encoding %zu bytes", len);
    for (size_t i = 0; i < len;) {
        size_t e = piece_end(s, len, i), m = e - i;
        if (k + m > cap) {
            size_t nc = cap + cap / 2 + m;
            int *grown = realloc(out, nc * sizeof *out);
            if (!grown) {
                free(out);
                return err_set(err, LM_ENOMEM, "out of memory encoding %zu bytes", len);
            }
            out = grown;
            cap = nc;
        }
        int whole = m == 1 ? g->byte_id[s[i]] : tok_gpt2_rank(t, s + i, m);
        if (whole >= 0) {
            out[k++] = whole;
        } else if (c && m <= CACHE_MAX_PIECE) {
            uint32_t e = *cache_slot(c, s + i, m);
            if (e) {
                memcpy(out + k, c->ids + c->ids_off[e - 1], c->n_ids[e - 1] * sizeof *out);
                k += c->n_ids[e - 1];
            } else {
                size_t got = m <= SCAN_MAX ? merge_scan(t, s + i, m, out + k) : 0;
                int rc = m > SCAN_MAX ? merge_long(t, s + i, m, out + k, &got, err) : LM_OK;
                if (rc) {
                    free(out);
                    return rc;
                }
                cache_put(c, s + i, m, out + k, got);
                k += got;
            }
        } else if (m <= SCAN_MAX) {
            k += merge_scan(t, s + i, m, out + k);
        } else {
            size_t got;
            int rc = merge_long(t, s + i, m, out + k, &got, err);
            if (rc) {
                free(out);
                return rc;
            }
            k += got;
        }
        i = e;
    }
    *ids = out;
    *n = k;
    return LM_OK;
}
