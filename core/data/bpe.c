/* bpe.c — byte-level BPE training and encoding (see bpe.h). Training keeps pair counts
 * and, per pair, the chunks that contain it, so a merge touches only those chunks (the
 * scheme of HuggingFace tokenizers' BpeTrainer), with a lazy max-heap of pair counts.
 * Encoding merges each distinct chunk once per call, lowest rank first, through a min-heap
 * over a linked list of symbols. Not a regex engine, not a GPT-2 vocabulary. */
#include "bpe.h"

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

static uint64_t pair_key(int a, int b) { return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1; }

static size_t hash64(uint64_t k)
{
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33;
    return (size_t)k;
}

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

/* The distinct chunks of one text: chunk bytes (pointing into the text) -> an entry with
 * two values for the user (training: the count; encoding: where its ids are, how many). */
typedef struct {
    const unsigned char *s;       /* the text */
    size_t *slot, cap;            /* (cap) entry index + 1, 0 = empty */
    size_t n, ecap;
    size_t *start, *len, *val, *val2;  /* (ecap) */
} ChunkMap;

static void chunkmap_free(ChunkMap *c)
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
static long chunkmap_get(ChunkMap *c, size_t i, size_t L, int *added)
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
static size_t bpe_chunk_end(const unsigned char *s, size_t len, size_t i)
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

/* ---- training ---- */

typedef struct { int *v; int n, cap; } IntVec;

typedef struct { long long count; uint64_t key; int p; } HeapItem;

typedef struct {
    /* unique chunks ("words") and their symbols */
    int n_words;
    int **sym; int *len; long long *freq; int *stamp;
    int *arena;
    /* pairs: open-addressing map key -> index, then parallel arrays */
    uint64_t *map_key; int *map_val; size_t map_cap;
    int n_pairs, pair_cap;
    uint64_t *pkey; long long *pcount; IntVec *where; int *pstamp;
    HeapItem *heap; int heap_n, heap_cap;
    int *touched; int n_touched, touched_cap;
    int oom;
} BpeTrainer;

static int vec_push(IntVec *v, int x)
{
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 4;
        int *nv = realloc(v->v, sizeof(int) * (size_t)cap);
        if (!nv) return -1;
        v->v = nv; v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}

static int grow(void **p, size_t elem, int need, int *cap)
{
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *np = realloc(*p, elem * (size_t)c);
    if (!np) return -1;
    *p = np; *cap = c;
    return 0;
}

static int heap_before(const HeapItem *x, const HeapItem *y)
{
    return x->count > y->count || (x->count == y->count && x->key < y->key);
}

static void heap_push(BpeTrainer *tr, long long count, int p)
{
    if (grow((void **)&tr->heap, sizeof(HeapItem), tr->heap_n + 1, &tr->heap_cap)) {
        tr->oom = 1;
        return;
    }
    HeapItem it = { count, tr->pkey[p], p };
    int i = tr->heap_n++;
    while (i > 0 && heap_before(&it, &tr->heap[(i - 1) / 2])) {
        tr->heap[i] = tr->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    tr->heap[i] = it;
}

static HeapItem heap_pop(BpeTrainer *tr)
{
    HeapItem top = tr->heap[0], last = tr->heap[--tr->heap_n];
    int i = 0, n = tr->heap_n;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_before(&tr->heap[c + 1], &tr->heap[c])) c++;
        if (!heap_before(&tr->heap[c], &last)) break;
        tr->heap[i] = tr->heap[c];
        i = c;
    }
    if (n) tr->heap[i] = last;
    return top;
}

/* Index of pair (a,b), created with count 0 when new; -1 when out of memory. */
static int pair_index(BpeTrainer *tr, int a, int b)
{
    uint64_t k = pair_key(a, b);
    if (2 * (size_t)(tr->n_pairs + 1) > tr->map_cap) {
        size_t cap = tr->map_cap ? 2 * tr->map_cap : 1024;
        uint64_t *nk = calloc(cap, sizeof *nk);
        int *nv = malloc(sizeof(int) * cap);
        if (!nk || !nv) { free(nk); free(nv); return -1; }
        for (size_t i = 0; i < tr->map_cap; i++)
            if (tr->map_key[i]) {
                size_t h = hash64(tr->map_key[i]) & (cap - 1);
                while (nk[h]) h = (h + 1) & (cap - 1);
                nk[h] = tr->map_key[i];
                nv[h] = tr->map_val[i];
            }
        free(tr->map_key); free(tr->map_val);
        tr->map_key = nk; tr->map_val = nv; tr->map_cap = cap;
    }
    size_t h = hash64(k) & (tr->map_cap - 1);
    for (; tr->map_key[h]; h = (h + 1) & (tr->map_cap - 1))
        if (tr->map_key[h] == k) return tr->map_val[h];
    int p = tr->n_pairs, cap = tr->pair_cap;
    if (grow((void **)&tr->pkey, sizeof(uint64_t), p + 1, &cap)) return -1;
    cap = tr->pair_cap;
    if (grow((void **)&tr->pcount, sizeof(long long), p + 1, &cap)) return -1;
    cap = tr->pair_cap;
    if (grow((void **)&tr->pstamp, sizeof(int), p + 1, &cap)) return -1;
    cap = tr->pair_cap;
    if (grow((void **)&tr->where, sizeof(IntVec), p + 1, &cap)) return -1;
    tr->pair_cap = cap;
    tr->pkey[p] = k; tr->pcount[p] = 0; tr->pstamp[p] = -1;
    tr->where[p] = (IntVec){ 0 };
    tr->map_key[h] = k; tr->map_val[h] = p;
    tr->n_pairs++;
    return p;
}

/* Adds delta to the count of (a,b); on an increase records word w as a holder and the
 * pair as touched by merge m (to be pushed on the heap). */
static void pair_add(BpeTrainer *tr, int a, int b, long long delta, int w, int m)
{
    int p = pair_index(tr, a, b);
    if (p < 0) { tr->oom = 1; return; }
    tr->pcount[p] += delta;
    if (delta <= 0) return;
    IntVec *v = &tr->where[p];
    if ((v->n == 0 || v->v[v->n - 1] != w) && vec_push(v, w)) tr->oom = 1;
    if (tr->pstamp[p] != m) {
        tr->pstamp[p] = m;
        if (grow((void **)&tr->touched, sizeof(int), tr->n_touched + 1, &tr->touched_cap))
            tr->oom = 1;
        else
            tr->touched[tr->n_touched++] = p;
    }
}

/* Replaces every (a,b) in word w, left to right, by token t, adjusting neighbour pairs. */
static void word_merge(BpeTrainer *tr, int w, int a, int b, int t, int m)
{
    int *s = tr->sym[w], L = tr->len[w], o = 0;
    long long f = tr->freq[w];
    for (int i = 0; i < L;) {
        if (i + 1 < L && s[i] == a && s[i + 1] == b) {
            if (o > 0) {
                pair_add(tr, s[o - 1], a, -f, w, m);
                pair_add(tr, s[o - 1], t, f, w, m);
            }
            if (i + 2 < L) {
                pair_add(tr, b, s[i + 2], -f, w, m);
                pair_add(tr, t, s[i + 2], f, w, m);
            }
            s[o++] = t;
            i += 2;
        } else {
            s[o++] = s[i++];
        }
    }
    tr->len[w] = o;
}

/* Counts the distinct chunks of text and lays out their bytes as symbols. */
static int bpe_trainer_load_words(BpeTrainer *tr, const unsigned char *s, size_t len)
{
    ChunkMap c = { .s = s };
    size_t total = 0;
    int added;
    for (size_t i = 0; i < len;) {
        size_t e = bpe_chunk_end(s, len, i);
        if (e - i >= 2) {
            long u = chunkmap_get(&c, i, e - i, &added);
            if (u < 0) goto oom;
            c.val[u]++;
            total += added ? e - i : 0;
        }
        i = e;
    }
    size_t nu = c.n;
    tr->n_words = (int)nu;
    tr->arena = malloc(sizeof(int) * (total + 1));
    tr->sym = malloc(sizeof(int *) * (nu + 1));
    tr->len = malloc(sizeof(int) * (nu + 1));
    tr->freq = malloc(sizeof(long long) * (nu + 1));
    tr->stamp = malloc(sizeof(int) * (nu + 1));
    if (!tr->arena || !tr->sym || !tr->len || !tr->freq || !tr->stamp) goto oom;
    for (size_t u = 0, at = 0; u < nu; u++) {
        tr->sym[u] = tr->arena + at;
        tr->len[u] = (int)c.len[u];
        tr->freq[u] = (long long)c.val[u];
        tr->stamp[u] = -1;
        for (size_t k = 0; k < c.len[u]; k++) tr->arena[at++] = s[c.start[u] + k];
    }
    chunkmap_free(&c);
    return 0;
oom:
    chunkmap_free(&c);
    return -1;
}

static void bpe_trainer_free(BpeTrainer *tr)
{
    for (int p = 0; p < tr->n_pairs; p++) free(tr->where[p].v);
    free(tr->sym); free(tr->len); free(tr->freq); free(tr->stamp); free(tr->arena);
    free(tr->map_key); free(tr->map_val); free(tr->pkey); free(tr->pcount); free(tr->where);
    free(tr->pstamp); free(tr->heap); free(tr->touched);
}

/* The pair to merge next (count >= 2), or -1. Stale heap entries are refreshed. */
static int bpe_trainer_best(BpeTrainer *tr)
{
    while (tr->heap_n > 0) {
        HeapItem it = heap_pop(tr);
        long long c = tr->pcount[it.p];
        if (c == it.count) return c >= 2 ? it.p : -1;
        if (c > 0) heap_push(tr, c, it.p);
    }
    return -1;
}

static int bpe_trainer_run(BpeTrainer *tr, int n_merges, int *merges, int *done)
{
    for (int w = 0; w < tr->n_words; w++)
        for (int i = 0; i + 1 < tr->len[w]; i++)
            pair_add(tr, tr->sym[w][i], tr->sym[w][i + 1], tr->freq[w], w, -2);
    for (int k = 0; k < tr->n_touched; k++) heap_push(tr, tr->pcount[tr->touched[k]], tr->touched[k]);
    int m = 0;
    for (; m < n_merges && !tr->oom; m++) {
        int p = bpe_trainer_best(tr);
        if (p < 0) break;
        uint64_t key = tr->pkey[p] - 1;
        int a = (int)(key >> 32), b = (int)(uint32_t)key, t = 256 + m;
        merges[2 * m] = a;
        merges[2 * m + 1] = b;
        tr->n_touched = 0;
        int *ws = tr->where[p].v, nw = tr->where[p].n;   /* where[p] is not appended below */
        for (int k = 0; k < nw; k++) {
            int w = ws[k];
            if (tr->stamp[w] == m) continue;
            tr->stamp[w] = m;
            word_merge(tr, w, a, b, t, m);
        }
        tr->pcount[p] = 0;
        free(tr->where[p].v);
        tr->where[p] = (IntVec){ 0 };
        for (int k = 0; k < tr->n_touched; k++) heap_push(tr, tr->pcount[tr->touched[k]], tr->touched[k]);
    }
    *done = m;
    return tr->oom ? -1 : 0;
}

int bpe_train(const char *text, size_t len, int n_merges, Bpe **out, char *err)
{
    *out = NULL;
    if (n_merges < 0 || n_merges > (1 << 20))
        return err_set(err, LM_EARG, "BPE: %d merges is out of range (0..%d)", n_merges, 1 << 20);
    BpeTrainer tr;
    memset(&tr, 0, sizeof tr);
    int *merges = malloc(sizeof(int) * 2 * (size_t)(n_merges + 1)), done = 0;
    if (!merges || bpe_trainer_load_words(&tr, (const unsigned char *)text, len) ||
        bpe_trainer_run(&tr, n_merges, merges, &done)) {
        bpe_trainer_free(&tr);
        free(merges);
        return err_set(err, LM_ENOMEM, "BPE training: out of memory (%zu bytes of text)", len);
    }
    bpe_trainer_free(&tr);
    int rc = bpe_create(merges, done, out, err);
    free(merges);
    return rc;
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
        long u = chunkmap_get(&c, i, L, &added);
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
    chunkmap_free(&c);
    *ids = out;
    *n = m;
    return LM_OK;
oom:
    free(out);
    free(sc.sym); free(sc.nxt); free(sc.prv); free(sc.heap);
    chunkmap_free(&c);
    return err_set(err, LM_ENOMEM, "BPE: out of memory encoding %zu bytes", len);
}
