/* matmul.c — precision dispatch, the registry of bf16 weight slabs and their packed-weight
 * caches, and per-thread scratch (see matmul.h). The registry is a small fixed table under
 * one mutex; a cache entry is packed (under that mutex) the first time a product asks for
 * it after the slab's version moved, so replicas sharing a slab pack each weight once.
 * Not a kernel: the arithmetic is cblas_sgemm's or gemm_bf16's. */
#include "matmul.h"

#include "err.h"
#include "gemm_bf16.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MATMUL_MAX_SLABS 32

typedef struct {
    const float *B;          /* the weight as the product sees it */
    int tb, ldb, K, N;
    unsigned long version;   /* the slab's version it was packed at */
    GemmBf16PackedB pk;
    size_t cap;              /* elements allocated at pk.data */
} CacheEntry;

typedef struct {
    const float *base;       /* NULL: a free row */
    size_t n;
    unsigned long version;
    CacheEntry *e;
    int n_e, cap_e;
} Slab;

static Slab g_slabs[MATMUL_MAX_SLABS];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local Slab *tl_slab;

/* ---- scratch: one block per thread, freed when the thread ends ---- */

static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void key_make(void)
{
    pthread_key_create(&g_key, free);
}

static void *thread_scratch(void)
{
    pthread_once(&g_once, key_make);
    void *s = pthread_getspecific(g_key);
    if (!s) {
        size_t bytes = (gemm_bf16_scratch_bytes() + 63) & ~(size_t)63;
        s = aligned_alloc(64, bytes);
        if (s && pthread_setspecific(g_key, s)) {
            free(s);
            s = NULL;
        }
    }
    return s;
}

/* ---- registry ---- */

/* The row of an attached slab (base not NULL), or a free row (base NULL); NULL if none. */
static Slab *find_slab(const float *base)
{
    for (int i = 0; i < MATMUL_MAX_SLABS; i++)
        if (g_slabs[i].base == base)
            return &g_slabs[i];
    return NULL;
}

static void slab_clear(Slab *s)
{
    for (int i = 0; i < s->n_e; i++)
        free(s->e[i].pk.data);
    free(s->e);
    s->e = NULL;
    s->n_e = s->cap_e = 0;
}

int matmul_bf16_attach(const float *slab, size_t n, char *err)
{
    if (!slab || !n)
        return err_set(err, LM_EARG, "no weights to attach");
    if (gemm_bf16_select_kernel() == GEMM_BF16_NONE)
        return err_set(err, LM_EARG, "this CPU has no AVX512-BF16 (bf16 dot products)");
    pthread_mutex_lock(&g_mu);
    Slab *s = find_slab(slab);
    if (!s)
        s = find_slab(NULL);
    int rc = LM_OK;
    if (!s) {
        rc = err_set(err, LM_ENOMEM, "more than %d bf16 models at once", MATMUL_MAX_SLABS);
    } else {
        slab_clear(s);
        s->base = slab;
        s->n = n;
        s->version++;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

void matmul_bf16_detach(const float *slab)
{
    if (!slab)
        return;
    pthread_mutex_lock(&g_mu);
    Slab *s = find_slab(slab);
    if (s) {
        slab_clear(s);
        s->base = NULL;
        s->n = 0;
    }
    pthread_mutex_unlock(&g_mu);
}

void matmul_weights_changed(const float *slab)
{
    if (!slab)
        return;
    pthread_mutex_lock(&g_mu);
    Slab *s = find_slab(slab);
    if (s)
        s->version++;
    pthread_mutex_unlock(&g_mu);
}

const void *matmul_scope_enter(const float *slab)
{
    const void *prev = tl_slab;
    if (!slab) {
        tl_slab = NULL;
        return prev;
    }
    pthread_mutex_lock(&g_mu);
    tl_slab = find_slab(slab);
    pthread_mutex_unlock(&g_mu);
    return prev;
}

void matmul_scope_exit(const void *prev)
{
    tl_slab = (Slab *)prev;
}

int matmul_bf16_active(void)
{
    return tl_slab != NULL;
}

/* The cached pack of weight B (op(B) K x N), packed now if missing or stale; NULL when
 * memory runs out (the caller packs per call). Under g_mu. */
static const GemmBf16PackedB *cached_pack(Slab *s, int tb, int K, int N, const float *B,
                                          int ldb)
{
    CacheEntry *e = NULL;
    for (int i = 0; i < s->n_e && !e; i++) {
        CacheEntry *c = &s->e[i];
        if (c->B == B && c->tb == tb && c->ldb == ldb && c->K == K && c->N == N)
            e = c;
    }
    if (!e) {
        if (s->n_e == s->cap_e) {
            int cap = s->cap_e ? 2 * s->cap_e : 16;
            CacheEntry *ne = realloc(s->e, (size_t)cap * sizeof *ne);
            if (!ne)
                return NULL;
            s->e = ne;
            s->cap_e = cap;
        }
        e = &s->e[s->n_e++];
        *e = (CacheEntry){.B = B, .tb = tb, .ldb = ldb, .K = K, .N = N};
    }
    if (e->version != s->version || !e->pk.data) {
        size_t need = gemm_bf16_packed_b_elems(K, N);
        if (need > e->cap) {
            uint16_t *d = aligned_alloc(64, (need * 2 + 63) & ~(size_t)63);
            if (!d)
                return NULL;
            free(e->pk.data);
            e->pk.data = d;
            e->cap = need;
        }
        gemm_bf16_pack_b(&e->pk, tb, K, N, B, ldb);
        e->version = s->version;
    }
    return &e->pk;
}

int matmul_packs(void)
{
    const char *e = getenv(MATMUL_PACKS_ENV);
    return tl_slab && !(e && !strcmp(e, "0")) && thread_scratch();
}

size_t matmul_packed_elems(int K, int N)
{
    return gemm_bf16_packed_b_elems(K, N);
}

GemmBf16PackedB matmul_packed_b(uint16_t *data, int K, int N)
{
    return gemm_bf16_packed_b(data, K, N);
}

void matmul_pack_b(GemmBf16PackedB *pk, uint16_t *data, CBLAS_TRANSPOSE tb, int K, int N,
                   const float *B, int ldb)
{
    pk->data = data;
    gemm_bf16_pack_b(pk, tb != CblasNoTrans, K, N, B, ldb);
}

void matmul_pack_b_rows(GemmBf16PackedB *pk, int k0, int kc, const float *rows, int ldb)
{
    gemm_bf16_pack_b_rows(pk, k0, kc, rows, ldb);
}

GemmBf16PackedB matmul_packed_rows(const GemmBf16PackedB *pk, int k0, int kc)
{
    return gemm_bf16_packed_rows(pk, k0, kc);
}

void matmul_packed(CBLAS_TRANSPOSE ta, int M, float alpha, const float *A, int lda,
                   const GemmBf16PackedB *pb, float beta, float *C, int ldc)
{
    int t_a = ta != CblasNoTrans, N = pb->N, K = pb->K;
    const char *e = getenv(MATMUL_PACKS_ENV);
    void *scratch = e && !strcmp(e, "fp32") ? NULL : thread_scratch();
    if (scratch) {
        gemm_bf16(gemm_bf16_select_kernel(), t_a, 0, M, N, K, alpha, A, lda, NULL, 0, pb, beta,
                  C, ldc, scratch);
        return;
    }
    for (int i = 0; i < M; i++)   /* no scratch: bf16 values, fp32 sums, row by row */
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) {
                float a = t_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                s += gemm_bf16_to_float(gemm_bf16_round(a)) * gemm_bf16_packed_value(pb, k, j);
            }
            float *c = &C[(size_t)i * ldc + j];
            *c = alpha * s + (beta == 0.0f ? 0.0f : beta * *c);
        }
}

void matmul(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    Slab *s = tl_slab;
    void *scratch = s ? thread_scratch() : NULL;
    if (!scratch) {
        cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    int t_a = ta != CblasNoTrans, t_b = tb != CblasNoTrans;
    GemmBf16PackedB pk = {0};   /* a copy: the entry table may move under other threads */
    pthread_mutex_lock(&g_mu);
    if (B >= s->base && B < s->base + s->n && M > 0 && N > 0 && K > 0) {
        const GemmBf16PackedB *c = cached_pack(s, t_b, K, N, B, ldb);
        if (c)
            pk = *c;
    }
    pthread_mutex_unlock(&g_mu);
    gemm_bf16(gemm_bf16_select_kernel(), t_a, t_b, M, N, K, alpha, A, lda, B, ldb,
              pk.data ? &pk : NULL, beta, C, ldc, scratch);
}
