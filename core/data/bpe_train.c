/* bpe_train.c — learning a byte-level BPE's merges (bpe_train, see bpe.h). Training keeps
 * pair counts and, per pair, the chunks that contain it, so a merge touches only those
 * chunks (the scheme of HuggingFace tokenizers' BpeTrainer), with a lazy max-heap of pair
 * counts. Not encoding and not the Bpe object (bpe.c). */
#include "bpe.h"
#include "private/bpe_impl.h"

#include "err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
            long u = bpe_chunkmap_get(&c, i, e - i, &added);
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
    bpe_chunkmap_free(&c);
    return 0;
oom:
    bpe_chunkmap_free(&c);
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
