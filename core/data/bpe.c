/* bpe.c — byte-level BPE (see bpe.h): the Bpe object (merges, rank table, token bytes),
 * the pre-split into chunks with the map of a text's distinct chunks, and encoding, which
 * merges each distinct chunk once per call, lowest rank first, through a min-heap over a
 * linked list of symbols. Training is bpe_train.c. Not a regex engine, not a GPT-2
 * vocabulary. */
#include "bpe.h"
#include "private/bpe_impl.h"

#include "err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct Bpe {
    int n_merges;
    int *merges;          /* (n_merges, 2) */
    uint64_t *rank_key;   /* (rank_cap) open addressing: pair key, 0 = empty */
    int *rank_val;        /* (rank_cap) merge index */
    size_t rank_cap;
    size_t *off;          /* (256 + n_merges + 1) byte offsets of each token */
    unsigned char *bytes; /* token bytes, concatenated */
};

/* ---- small shared helpers ---- */

static size_t hash_bytes(const unsigned char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
    return (size_t)(h ^ (h >> 29));
}

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

void bpe_chunkmap_free(ChunkMap *c)
{
    free(c->slot); free(c->start); free(c->len); free(c->val); free(c->val2);
}

static int chunkmap_grow(ChunkMap *c)
{
    size_t nc = c->cap ? 2 * c->cap : 4096, *ns = calloc(nc, sizeof *ns);
    if (!ns) return -1;
    for (size_t u = 0; u < c->n; u++) {
        size_t h = hash_bytes(c->s + c->start[u], c->len[u]) & (nc - 1);
        while (ns[h]) h = (h + 1) & (nc - 1);
        ns[h] = u + 1;
    }
    free(c->slot);
    c->slot = ns;
    c->cap = nc;
    size_t **arr[4] = { &c->start, &c->len, &c->val, &c->val2 };
    for (int k = 0; k < 4; k++) {
        size_t *a = realloc(*arr[k], nc / 2 * sizeof *a);
        if (!a) return -1;
        *arr[k] = a;
    }
    c->ecap = nc / 2;
    return 0;
}

/* Entry of the chunk s[i..i+L), added with values 0 (*added = 1) when new; -1 when out
 * of memory. */
long bpe_chunkmap_get(ChunkMap *c, size_t i, size_t L, int *added)
{
    if (2 * (c->n + 1) > c->cap && chunkmap_grow(c)) return -1;
    size_t h = hash_bytes(c->s + i, L) & (c->cap - 1);
    for (; c->slot[h]; h = (h + 1) & (c->cap - 1)) {
        size_t u = c->slot[h] - 1;
        if (c->len[u] == L && !memcmp(c->s + c->start[u], c->s + i, L)) {
            *added = 0;
            return (long)u;
        }
    }
    size_t u = c->n++;
    c->start[u] = i; c->len[u] = L; c->val[u] = 0; c->val2[u] = 0;
    c->slot[h] = u + 1;
    *added = 1;
    return (long)u;
}

enum { CL_SPACE, CL_LETTER, CL_DIGIT, CL_OTHER };

static int byte_class(unsigned char c)
{
    if (c == ' ' || (c >= '\t' && c <= '\r')) return CL_SPACE;
    if ((c | 32) >= 'a' && (c | 32) <= 'z') return CL_LETTER;
    if (c >= 0x80) return CL_LETTER;
    if (c >= '0' && c <= '9') return CL_DIGIT;
    return CL_OTHER;
}

/* The end of the pre-split chunk starting at byte i of s (len bytes): a contraction
 * ('s 't 'm 'd 're 've 'll), an optional space followed by a run of letters (ASCII letters
 * and all bytes >= 0x80), of digits, or of other non-space bytes, or a run of whitespace
 * (whose last space is left to the next word when one follows, like GPT-2's \s+(?!\S)). */
size_t bpe_chunk_end(const unsigned char *s, size_t len, size_t i)
{
    if (s[i] == '\'' && i + 1 < len) {
        unsigned char c = s[i + 1];
        if (c == 's' || c == 't' || c == 'm' || c == 'd') return i + 2;
        if (i + 2 < len && ((c == 'r' && s[i + 2] == 'e') || (c == 'v' && s[i + 2] == 'e') ||
                            (c == 'l' && s[i + 2] == 'l')))
            return i + 3;
    }
    size_t j = i;
    if (s[i] == ' ' && i + 1 < len && byte_class(s[i + 1]) != CL_SPACE) j = i + 1;
    int k = byte_class(s[j]);
    size_t e = j + 1;
    while (e < len && byte_class(s[e]) == k) e++;
    if (k == CL_SPACE && e < len && e - i > 1 && s[e - 1] == ' ') e--;
    return e;
}

/* ---- the Bpe object: merges, rank table, token bytes ---- */

static int rank_find(const Bpe *b, int x, int y)
{
    uint64_t k = pair_key(x, y);
    size_t m = b->rank_cap - 1;
    for (size_t h = hash64(k) & m;; h = (h + 1) & m) {
        if (b->rank_key[h] == k) return b->rank_val[h];
        if (b->rank_key[h] == 0) return -1;
    }
}

void bpe_destroy(Bpe *b)
{
    if (!b) return;
    free(b->merges); free(b->rank_key); free(b->rank_val); free(b->off); free(b->bytes);
    free(b);
}

int bpe_create(const int *merges, int n_merges, Bpe **out, char *err)
{
    *out = NULL;
    if (n_merges < 0 || n_merges > (1 << 22))
        return err_set(err, LM_EFORMAT, "BPE: %d merges is out of range", n_merges);
    Bpe *b = calloc(1, sizeof *b);
    size_t total = 256;
    for (int k = 0; k < n_merges; k++)
        for (int s = 0; s < 2; s++) {
            int t = merges[2 * k + s];
            if (t < 0 || t >= 256 + k) {
                bpe_destroy(b);
                return err_set(err, LM_EFORMAT, "BPE merge %d refers to token %d, which does "
                               "not exist yet (tokens 0..%d)", k, t, 255 + k);
            }
        }
    if (b) {
        b->n_merges = n_merges;
        b->rank_cap = pow2_at_least(2 * (size_t)n_merges + 2);
        b->merges = malloc(sizeof(int) * 2 * (size_t)(n_merges + 1));
        b->rank_key = calloc(b->rank_cap, sizeof(uint64_t));
        b->rank_val = malloc(sizeof(int) * b->rank_cap);
        b->off = malloc(sizeof(size_t) * (size_t)(256 + n_merges + 1));
    }
    if (!b || !b->merges || !b->rank_key || !b->rank_val || !b->off) {
        bpe_destroy(b);
        return err_set(err, LM_ENOMEM, "BPE: out of memory for %d merges", n_merges);
    }
    memcpy(b->merges, merges, sizeof(int) * 2 * (size_t)n_merges);
    for (int t = 0; t <= 256; t++) b->off[t] = (size_t)t;
    for (int k = 0; k < n_merges; k++) {
        int x = merges[2 * k], y = merges[2 * k + 1];
        int prev = rank_find(b, x, y);
        if (prev >= 0) {
            bpe_destroy(b);
            return err_set(err, LM_EFORMAT, "BPE merge %d repeats the pair (%d, %d) of merge %d",
                           k, x, y, prev);
        }
        uint64_t key = pair_key(x, y);
        size_t h = hash64(key) & (b->rank_cap - 1);
        while (b->rank_key[h]) h = (h + 1) & (b->rank_cap - 1);
        b->rank_key[h] = key;
        b->rank_val[h] = k;
        total += (b->off[x + 1] - b->off[x]) + (b->off[y + 1] - b->off[y]);
        b->off[257 + k] = total;
    }
    b->bytes = malloc(total ? total : 1);
    if (!b->bytes) {
        bpe_destroy(b);
        return err_set(err, LM_ENOMEM, "BPE: out of memory for token bytes");
    }
    for (int t = 0; t < 256; t++) b->bytes[t] = (unsigned char)t;
    for (int k = 0; k < n_merges; k++) {
        int x = merges[2 * k], y = merges[2 * k + 1];
        size_t lx = b->off[x + 1] - b->off[x];
        memcpy(b->bytes + b->off[256 + k], b->bytes + b->off[x], lx);
        memcpy(b->bytes + b->off[256 + k] + lx, b->bytes + b->off[y], b->off[y + 1] - b->off[y]);
    }
    *out = b;
    return LM_OK;
}

int bpe_vocab_size(const Bpe *b) { return 256 + b->n_merges; }

const int *bpe_merges(const Bpe *b, int *n_merges)
{
    *n_merges = b->n_merges;
    return b->merges;
}

const unsigned char *bpe_token_bytes(const Bpe *b, int id, size_t *len)
{
    *len = b->off[id + 1] - b->off[id];
    return b->bytes + b->off[id];
}

/* ---- encoding ---- */

typedef struct { int rank, pos; } RankItem;

typedef struct {
    int *sym, *nxt, *prv;  /* (cap) the chunk's symbols as a linked list */
    RankItem *heap;        /* (cap) */
    int cap, heap_n;
} Scratch;

static int rank_before(RankItem x, RankItem y)
{
    return x.rank < y.rank || (x.rank == y.rank && x.pos < y.pos);
}

static void rank_push(Scratch *sc, int rank, int pos)
{
    RankItem it = { rank, pos };
    int i = sc->heap_n++;
    while (i > 0 && rank_before(it, sc->heap[(i - 1) / 2])) {
        sc->heap[i] = sc->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    sc->heap[i] = it;
}

static RankItem rank_pop(Scratch *sc)
{
    RankItem top = sc->heap[0], last = sc->heap[--sc->heap_n];
    int i = 0, n = sc->heap_n;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && rank_before(sc->heap[c + 1], sc->heap[c])) c++;
        if (!rank_before(sc->heap[c], last)) break;
        sc->heap[i] = sc->heap[c];
        i = c;
    }
    if (n) sc->heap[i] = last;
    return top;
}

static void push_pair(const Bpe *b, Scratch *sc, int i, int L)
{
    if (i < 0 || sc->nxt[i] >= L) return;
    int j = sc->nxt[i];
    int r = rank_find(b, sc->sym[i], sc->sym[j]);
    if (r >= 0) rank_push(sc, r, i);
}

/* Encodes one chunk s (L bytes) into out; returns the number of tokens. Each pair of
 * adjacent symbols sits in a min-heap by (rank, position); a popped entry still valid
 * (its pair unchanged) is merged and its two new neighbour pairs pushed. The heap holds
 * at most L - 1 + 2 merges entries < 3L. */
static int encode_chunk(const Bpe *b, Scratch *sc, const unsigned char *s, int L, int *out)
{
    sc->heap_n = 0;
    for (int i = 0; i < L; i++) {
        sc->sym[i] = s[i];
        sc->nxt[i] = i + 1;
        sc->prv[i] = i - 1;
    }
    for (int i = 0; i + 1 < L; i++) push_pair(b, sc, i, L);
    while (sc->heap_n > 0) {
        RankItem it = rank_pop(sc);
        int i = it.pos, j = sc->nxt[i];
        if (sc->sym[i] < 0 || j >= L || b->merges[2 * it.rank] != sc->sym[i] ||
            b->merges[2 * it.rank + 1] != sc->sym[j])
            continue;
        sc->sym[i] = 256 + it.rank;
        sc->sym[j] = -1;
        sc->nxt[i] = sc->nxt[j];
        if (sc->nxt[j] < L) sc->prv[sc->nxt[j]] = i;
        push_pair(b, sc, sc->prv[i], L);
        push_pair(b, sc, i, L);
    }
    int n = 0;
    for (int i = 0; i < L; i = sc->nxt[i]) out[n++] = sc->sym[i];
    return n;
}

static int scratch_reserve(Scratch *sc, int L)
{
    if (L <= sc->cap) return 0;
    int cap = sc->cap ? sc->cap : 64;
    while (cap < L) cap *= 2;
    free(sc->sym); free(sc->nxt); free(sc->prv); free(sc->heap);
    sc->sym = malloc(sizeof(int) * (size_t)cap);
    sc->nxt = malloc(sizeof(int) * (size_t)cap);
    sc->prv = malloc(sizeof(int) * (size_t)cap);
    sc->heap = malloc(sizeof(RankItem) * 3 * (size_t)cap);
    sc->cap = cap;
    return sc->sym && sc->nxt && sc->prv && sc->heap ? 0 : -1;
}

int bpe_encode(const Bpe *b, const char *text, size_t len, int **ids, size_t *n, char *err)
{
    const unsigned char *s = (const unsigned char *)text;
    int *out = malloc(sizeof(int) * (len ? len : 1)), added;
    Scratch sc = { 0 };
    ChunkMap c = { .s = s };   /* chunk -> its ids at out[val..val+val2) */
    size_t m = 0;
    *ids = NULL;
    *n = 0;
    if (!out) goto oom;
    for (size_t i = 0; i < len;) {
        size_t e = bpe_chunk_end(s, len, i), L = e - i;
        if (L == 1) {
            out[m++] = s[i];
            i = e;
            continue;
        }
        long u = bpe_chunkmap_get(&c, i, L, &added);
        if (u < 0) goto oom;
        if (added) {
            if (L > (size_t)1 << 30 || scratch_reserve(&sc, (int)L)) goto oom;
            c.val[u] = m;
            c.val2[u] = (size_t)encode_chunk(b, &sc, s + i, (int)L, out + m);
        } else {
            memcpy(out + m, out + c.val[u], sizeof(int) * c.val2[u]);
        }
        m += c.val2[u];
        i = e;
    }
    free(sc.sym); free(sc.nxt); free(sc.prv); free(sc.heap);
    bpe_chunkmap_free(&c);
    *ids = out;
    *n = m;
    return LM_OK;
oom:
    free(out);
    free(sc.sym); free(sc.nxt); free(sc.prv); free(sc.heap);
    bpe_chunkmap_free(&c);
    return err_set(err, LM_ENOMEM, "BPE: out of memory encoding %zu bytes", len);
}
