/* tokcache_prep.c — one prepare of the token cache (private/tokcache_impl.h): a first pass
 * over the corpus when the tokenizer is trained (the char vocabulary exactly, the others'
 * bounded sample), the tokenizer, then the encoding pass on every core into llm.c-layout
 * shards, and the train/valid cut of a stream at train_frac of its tokens. References:
 * nanoGPT data/openwebtext/prepare.py (EOT after each document), llm.c dev/data/fineweb.py
 * (shards of a fixed token count). Not the cache's bookkeeping (tokcache.c). */
#include "private/tokcache_impl.h"

#include "err.h"
#include "private/tok_impl.h"
#include "shard.h"
#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PREP_JOB_BYTES ((size_t)1 << 20)
#define PREP_JOBS_PER_THREAD 4

static double now_s(void) { return sysinfo_now(); }

/* ---- where a piece may be cut (CorpusCutFn) ---- */

static int ascii_space(unsigned char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }

/* After a '\n' followed by a byte that is not ASCII whitespace: no token of char, word,
 * bpe (its pre-split keeps whitespace runs whole), basic_english or wordpiece crosses it. */
size_t tokcache_cut_line(const char *s, size_t n, void *ud);
size_t tokcache_cut_strict(const char *s, size_t n, void *ud);

size_t tokcache_cut_line(const char *s, size_t n, void *ud)
{
    (void)ud;
    for (size_t e = n - 1; e > 0;) {
        const char *nl = memrchr(s, '\n', e);
        if (!nl) return 0;
        size_t p = (size_t)(nl - s) + 1;
        if (p < n && !ascii_space((unsigned char)s[p])) return p;
        e = (size_t)(nl - s);
    }
    return 0;
}

/* Stricter, for tokenizers with a GPT-2-style regex (\s+(?!\S) looks ahead across a
 * line end): a '\n' with a printable ASCII byte on each side. */
size_t tokcache_cut_strict(const char *s, size_t n, void *ud)
{
    (void)ud;
    for (size_t e = n - 1; e > 1;) {
        const char *nl = memrchr(s, '\n', e);
        if (!nl || nl == s) return 0;
        size_t p = (size_t)(nl - s) + 1;
        unsigned char a = (unsigned char)s[p - 2], b = p < n ? (unsigned char)s[p] : 0;
        if (p < n && a > 0x20 && a < 0x7f && b > 0x20 && b < 0x7f) return p;
        e = (size_t)(nl - s);
    }
    return 0;
}

static int builtin_kind(TokenizerKind k)
{
    return k == TOKENIZER_CHAR || k == TOKENIZER_WORD || k == TOKENIZER_BPE ||
           k == TOKENIZER_BASIC_ENGLISH || k == TOKENIZER_WORDPIECE;
}

/* 1 when building the tokenizer reads the text. */
static int needs_text(const TokCacheRequest *r)
{
    if (r->given) return 0;
    return r->kind == TOKENIZER_CHAR || r->kind == TOKENIZER_WORD || r->kind == TOKENIZER_BPE ||
           r->kind == TOKENIZER_BASIC_ENGLISH || (r->kind == TOKENIZER_WORDPIECE && r->opt.vocab_from_train);
}

/* The end-of-text id of t (GPT-2's "<|endoftext|>"), -1 when it has none. */
static int prep_eot(const Tokenizer *t)
{
    if (builtin_kind(tokenizer_kind(t))) return -1;
    for (int id = tokenizer_vocab_size(t) - 1; id >= 0; id--) {
        size_t n;
        const char *b = tokenizer_token_bytes(t, id, &n);
        if (b && n == 13 && !memcmp(b, "<|endoftext|>", 13)) return id;
    }
    return -1;
}

/* ---- progress ---- */

typedef struct {
    TokCacheProgressFn fn;
    void *ud;
    const char *key;
    double t0, last;
} Prog;

static int report(Prog *p, TokCachePhase ph, const Corpus *c, unsigned long long tokens, int force)
{
    double t = now_s();
    if (!p->fn || (!force && t - p->last < 0.1)) return 0;
    p->last = t;
    TokCacheProgress e = { .phase = ph, .key = p->key, .tokens = tokens, .seconds = t - p->t0,
                           .eta_seconds = -1 };
    if (c) {
        e.bytes_done = corpus_raw_done(c);
        e.bytes_total = corpus_raw_total(c);
        if (e.seconds > 0) e.mb_per_s = (double)e.bytes_done / 1e6 / e.seconds;
        if (e.bytes_done > 0 && e.bytes_total >= e.bytes_done)
            e.eta_seconds = e.seconds * (double)(e.bytes_total - e.bytes_done) / (double)e.bytes_done;
    }
    return p->fn(&e, p->ud);
}

/* ---- the first pass: the char set or the sample ---- */

typedef struct {
    uint8_t *cps;          /* char: (0x110000 / 8) bitmap of the code points seen */
    char *sample;          /* others: the first bytes of the train text */
    size_t n, cap, limit;
    int last_doc_end_nl;   /* the previous document ended with '\n' (or none yet) */
    unsigned long long text[3];   /* bytes of text per split (stream: [0]) */
} Scan;

static void scan_chars(Scan *s, const char *text, size_t len)
{
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        uint32_t cp = u[i];
        if (cp < 0x80) i++;
        else i += (size_t)tok_utf8_next(u, len, i, &cp);
        s->cps[cp >> 3] |= (uint8_t)(1u << (cp & 7));
    }
}

static int scan_sample(Scan *s, const CorpusPiece *p, int doc_start, char *err)
{
    size_t room = s->limit - s->n, sep = doc_start && s->n && !s->last_doc_end_nl;
    if (room == 0) return LM_OK;
    size_t k = p->len + sep < room ? p->len + sep : room;
    if (s->n + k > s->cap) {
        size_t cap = s->cap ? s->cap : (size_t)1 << 20;
        while (cap < s->n + k) cap *= 2;
        if (cap > s->limit) cap = s->limit;
        char *b = realloc(s->sample, cap + 1);
        if (!b) return err_set(err, LM_ENOMEM, "out of memory for the vocabulary sample (%zu bytes)", cap);
        s->sample = b;
        s->cap = cap;
    }
    if (sep) s->sample[s->n++] = '\n';
    memcpy(s->sample + s->n, p->text, k - sep);
    s->n += k - sep;
    return LM_OK;
}

static int scan_pass(const TokCacheRequest *r, Corpus *c, Prog *pg, Scan *s, char *err)
{
    int doc_start = 1, end = 0, split_mode = corpus_has_splits(c);
    s->last_doc_end_nl = 1;
    for (;;) {
        CorpusPiece p;
        int rc = corpus_next(c, &p, &end, err);
        if (rc || end) return rc;
        s->text[split_mode ? p.split : 0] += p.len;
        if (s->cps) scan_chars(s, p.text, p.len);
        else if (!split_mode || p.split == 0) rc = scan_sample(s, &p, doc_start, err);
        if (rc) return rc;
        doc_start = p.doc_end;
        if (p.doc_end) s->last_doc_end_nl = p.text[p.len - 1] == '\n';
        if (report(pg, TOKCACHE_SCAN, c, 0, 0)) return err_set(err, LM_ECANCEL, "prepare stopped");
        (void)r;
    }
}

/* The char tokenizer of the code points in s->cps: a text holding each once, laid out so
 * that decoding it gives the same symbols (lone continuation bytes first, lead bytes
 * last, each of them invalid there as where it was seen). */
static int build_char(Scan *s, Tokenizer **out, char *err)
{
    size_t n = 0;
    char *t = malloc(4 * 0x110000 + 1);
    if (!t) return err_set(err, LM_ENOMEM, "out of memory building the character set");
    for (uint32_t b = 0x80; b < 0xC0; b++)
        if (s->cps[(0xDC00 + b) >> 3] & (1u << ((0xDC00 + b) & 7))) t[n++] = (char)b;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        if (s->cps[cp >> 3] & (1u << (cp & 7))) n += (size_t)tok_utf8_put(cp, t + n);
    }
    for (uint32_t b = 0xC0; b < 0x100; b++)
        if (s->cps[(0xDC00 + b) >> 3] & (1u << ((0xDC00 + b) & 7))) t[n++] = (char)b;
    int rc = tokenizer_train(TOKENIZER_CHAR, t, n, 0, out, err);
    free(t);
    return rc;
}

/* The tokenizer of r: given, or built (after a first pass over c when it reads text). */
static int make_tokenizer(const TokCacheRequest *r, Corpus *c, Prog *pg, TokCachePrep *o, char *err)
{
    if (r->given) {
        o->tok = r->given;
        return LM_OK;
    }
    if (!needs_text(r)) {
        int rc = tokenizer_train_opts(r->kind, "", 0, &r->opt, &o->own, err);
        o->tok = o->own;
        return rc;
    }
    Scan s = { .limit = r->vocab_sample ? r->vocab_sample : TOKCACHE_VOCAB_SAMPLE };
    if (r->kind == TOKENIZER_CHAR && !(s.cps = calloc(0x110000 / 8, 1)))
        return err_set(err, LM_ENOMEM, "out of memory for the character set");
    int rc = scan_pass(r, c, pg, &s, err);
    unsigned long long total = s.text[0] + s.text[1] + s.text[2];
    if (!rc && total == 0)
        rc = err_set(err, LM_EFORMAT, "'%s' holds no text to build a vocabulary from (every file "
                     "empty or skipped)", corpus_roots(c));
    if (!rc) rc = report(pg, TOKCACHE_VOCAB, c, 0, 1) ? err_set(err, LM_ECANCEL, "prepare stopped") : LM_OK;
    if (!rc && s.cps) {
        rc = build_char(&s, &o->own, err);
    } else if (!rc) {
        size_t n = s.n;
        if (!corpus_has_splits(c)) {   /* the first train_frac of the text, as dataset.c */
            double want = r->train_frac * (double)s.text[0];
            if (want < (double)n) n = (size_t)want;
        }
        rc = tokenizer_train_opts(r->kind, s.sample ? s.sample : "", n, &r->opt, &o->own, err);
    }
    free(s.cps);
    free(s.sample);
    o->tok = o->own;
    corpus_rewind(c);
    return rc;
}

/* ---- the encoding pass ---- */

typedef struct {
    char *text;             /* (cap) pieces of one split, one after another */
    size_t len, cap;
    size_t *seg;            /* (nseg) end offset of each piece */
    int *seg_end;           /* (nseg) the piece ends a document */
    size_t *seg_tok;        /* (nseg) tokens of the job after the piece (EOT included) */
    int nseg, segcap, split;
    int *ids;               /* (n) the tokens, EOT after each document end */
    size_t n, icap;
    int rc;
    char err[LM_ERR_LEN];
} Job;

typedef struct {
    Job *jobs;
    int n;
    atomic_int next;
    const Tokenizer *tok;
    int eot;
} Work;

static void job_free(Job *j)
{
    free(j->text); free(j->seg); free(j->seg_end); free(j->seg_tok); free(j->ids);
}

static int job_add(Job *j, const CorpusPiece *p)
{
    if (j->len + p->len > j->cap) {
        size_t cap = j->cap ? j->cap : PREP_JOB_BYTES;
        while (cap < j->len + p->len) cap *= 2;
        char *t = realloc(j->text, cap);
        if (!t) return -1;
        j->text = t;
        j->cap = cap;
    }
    if (j->nseg == j->segcap) {
        int cap = j->segcap ? 2 * j->segcap : 64;
        size_t *s = realloc(j->seg, (size_t)cap * sizeof *s);
        if (s) j->seg = s;
        int *e = realloc(j->seg_end, (size_t)cap * sizeof *e);
        if (e) j->seg_end = e;
        size_t *t = realloc(j->seg_tok, (size_t)cap * sizeof *t);
        if (t) j->seg_tok = t;
        if (!s || !e || !t) return -1;
        j->segcap = cap;
    }
    memcpy(j->text + j->len, p->text, p->len);
    j->len += p->len;
    j->seg[j->nseg] = j->len;
    j->seg_end[j->nseg++] = p->doc_end;
    j->split = p->split < 0 ? 0 : p->split;
    return 0;
}

static int job_append(Job *j, const int *ids, size_t n)
{
    if (j->n + n > j->icap) {
        size_t cap = j->icap ? j->icap : 1 << 16;
        while (cap < j->n + n) cap *= 2;
        int *b = realloc(j->ids, cap * sizeof *b);
        if (!b) return -1;
        j->ids = b;
        j->icap = cap;
    }
    memcpy(j->ids + j->n, ids, n * sizeof *ids);
    j->n += n;
    return 0;
}

static void job_encode(Job *j, const Tokenizer *tok, int eot)
{
    size_t start = 0;
    j->n = 0;
    for (int s = 0; s < j->nseg && !j->rc; s++) {
        int *ids;
        size_t k;
        j->rc = tokenizer_encode(tok, j->text + start, j->seg[s] - start, &ids, &k, j->err);
        if (!j->rc && job_append(j, ids, k)) j->rc = err_set(j->err, LM_ENOMEM, "out of memory encoding");
        free(ids);
        if (!j->rc && j->seg_end[s] && eot >= 0 && job_append(j, &eot, 1))
            j->rc = err_set(j->err, LM_ENOMEM, "out of memory encoding");
        j->seg_tok[s] = j->n;
        start = j->seg[s];
    }
}

static void *work_run(void *arg)
{
    Work *w = arg;
    for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->n;) job_encode(&w->jobs[i], w->tok, w->eot);
    return NULL;
}

/* Encodes the jobs on threads (the caller's thread is one of them). */
static void run_jobs(Work *w, int threads)
{
    pthread_t th[256];
    int started = 0;
    atomic_store(&w->next, 0);
    for (int t = 1; t < threads && t < 256 && t < w->n; t++)
        if (!pthread_create(&th[started], NULL, work_run, w)) started++;
    work_run(w);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
}

typedef struct {
    const char *tmp;        /* the directory being filled */
    ShardWriter *w[3];      /* stream: w[0] "all"; splits: train, valid, test */
    unsigned long long *doc_ends;   /* stream: token position after each document */
    size_t n_doc_ends, cap_doc_ends;
    int doc_ends_lost;      /* too many documents to keep each end */
} Out;

static int out_write(Out *o, const Job *j, int stream, TokCachePrep *pr, char *err)
{
    int s = stream ? 0 : j->split;
    int rc = shard_writer_put(o->w[s], j->ids, j->n, err);
    if (rc) return rc;
    unsigned long long pos = shard_writer_tokens(o->w[s]) - j->n;
    for (int g = 0; g < j->nseg; g++) {   /* the document ends, for the splits' counts */
        if (!j->seg_end[g]) continue;
        pr->docs[s]++;
        if (!stream || o->doc_ends_lost) continue;
        if (o->n_doc_ends == o->cap_doc_ends) {
            size_t cap = o->cap_doc_ends ? 2 * o->cap_doc_ends : 4096;
            unsigned long long *d = cap <= ((size_t)1 << 25) ? realloc(o->doc_ends, cap * sizeof *d) : NULL;
            if (!d) {
                o->doc_ends_lost = 1;
                continue;
            }
            o->doc_ends = d;
            o->cap_doc_ends = cap;
        }
        o->doc_ends[o->n_doc_ends++] = pos + j->seg_tok[g];
    }
    return LM_OK;
}

/* Reads the pieces into jobs (one split each, about PREP_JOB_BYTES), encodes them on the
 * threads and writes them in order. */
static int encode_pass(const TokCacheRequest *r, Corpus *c, Prog *pg, Out *out, TokCachePrep *pr,
                       char *err)
{
    int threads = r->threads > 0 ? r->threads : sysinfo_cores();
    if (threads < 1) threads = 1;
    int J = threads * PREP_JOBS_PER_THREAD, stream = !corpus_has_splits(c), rc = LM_OK, end = 0;
    int count_chars = !stream && tokenizer_kind(pr->tok) != TOKENIZER_CHAR;
    Job *jobs = calloc((size_t)J, sizeof *jobs);
    if (!jobs) return err_set(err, LM_ENOMEM, "out of memory for the encoding jobs");
    Work w = { .jobs = jobs, .tok = pr->tok, .eot = pr->eot };
    CorpusPiece p;
    int pending = 0;
    while (!rc && !end) {
        int nj = 0;
        while (!rc && nj < J) {
            Job *j = &jobs[nj];
            j->len = 0;
            j->nseg = 0;
            j->rc = 0;
            while (!rc && j->len < PREP_JOB_BYTES) {
                if (!pending) rc = corpus_next(c, &p, &end, err);
                if (rc || end) break;
                pending = 0;
                int split = p.split < 0 ? 0 : p.split;
                if (j->nseg && split != j->split) {
                    pending = 1;
                    break;
                }
                if (job_add(j, &p)) rc = err_set(err, LM_ENOMEM, "out of memory reading the corpus");
                pr->text_bytes += p.len;
                if (count_chars && split == 1) pr->valid_chars += tokenizer_count_chars(p.text, p.len);
            }
            if (j->nseg) nj++;
            if (end) break;
        }
        if (rc || nj == 0) break;
        w.n = nj;
        run_jobs(&w, threads);
        for (int i = 0; !rc && i < nj; i++) {
            Job *j = &jobs[i];
            if (j->rc) {
                rc = err_set(err, j->rc, "encoding '%s': %s", corpus_roots(c), j->err);
                break;
            }
            int s = stream ? 0 : j->split;
            if (!out->w[s]) {
                static const char *const pre[3] = { "train", "valid", "test" };
                rc = shard_writer_create(out->tmp, stream ? "all" : pre[s],
                                         pr->width, r->shard_tokens, &out->w[s], err);
                if (rc) break;
            }
            rc = out_write(out, j, stream, pr, err);
        }
        unsigned long long tok = 0;
        for (int s = 0; s < 3; s++) tok += out->w[s] ? shard_writer_tokens(out->w[s]) : 0;
        if (!rc && report(pg, TOKCACHE_ENCODE, c, tok, 0)) rc = err_set(err, LM_ECANCEL, "prepare stopped");
    }
    for (int i = 0; i < J; i++) job_free(&jobs[i]);
    free(jobs);
    for (int s = 0; !rc && s < 3; s++)
        if (out->w[s]) rc = shard_writer_finish(out->w[s], err);
    return rc;
}

/* ---- the stream's cut into train and valid ---- */

/* count tokens of shard path from token `from` into ids. */
static int read_tokens(const char *path, int width, unsigned long long from, size_t count,
                       int *ids, char *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(err, LM_EIO, "cannot read '%s': %s", path, strerror(errno));
    unsigned char *b = malloc(count * (size_t)width);
    ssize_t want = (ssize_t)(count * (size_t)width);
    ssize_t r = b ? pread(fd, b, (size_t)want, (off_t)(SHARD_HEADER_BYTES + from * (unsigned long long)width)) : -1;
    close(fd);
    if (r != want) {
        free(b);
        return err_set(err, b ? LM_EIO : LM_ENOMEM, "cannot read '%s' back", path);
    }
    for (size_t i = 0; i < count; i++)
        ids[i] = width == 2 ? (int)(b[2 * i] | b[2 * i + 1] << 8)
                            : (int)((uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
                                    (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24);
    free(b);
    return LM_OK;
}

#define PREP_CHUNK ((size_t)1 << 20)

/* Copies tokens [from, from + n) of shard src into a new writer's shards (prefix). */
static int copy_tail(const char *tmp, const char *src, int width, unsigned long long from,
                     unsigned long long n, unsigned long long max, char *err)
{
    ShardWriter *w;
    int *ids = malloc(PREP_CHUNK * sizeof *ids);
    int rc = ids ? shard_writer_create(tmp, "valid", width, max, &w, err)
                 : err_set(err, LM_ENOMEM, "out of memory cutting the splits");
    if (!ids || rc) {
        free(ids);
        return rc ? rc : LM_ENOMEM;
    }
    for (unsigned long long d = 0; !rc && d < n;) {
        size_t k = n - d < PREP_CHUNK ? (size_t)(n - d) : PREP_CHUNK;
        rc = read_tokens(src, width, from + d, k, ids, err);
        if (!rc) rc = shard_writer_put(w, ids, k, err);
        d += k;
    }
    if (!rc) rc = shard_writer_finish(w, err);
    shard_writer_destroy(w);
    free(ids);
    return rc;
}

static int rename_shard(const char *tmp, const char *from, const char *prefix, int i, char *err)
{
    char to[1200];
    snprintf(to, sizeof to, "%s/%s_%06d.bin", tmp, prefix, i);
    if (rename(from, to)) return err_set(err, LM_EIO, "cannot rename '%s': %s", from, strerror(errno));
    return LM_OK;
}

/* The first (size_t)(train_frac * N) tokens of the stream are train, the rest valid
 * (dataset.c's cut): whole shards are renamed, the one holding the cut is cut in two. */
static int cut_stream(const TokCacheRequest *r, Out *o, TokCachePrep *pr, char *err)
{
    ShardWriter *a = o->w[0];
    unsigned long long N = a ? shard_writer_tokens(a) : 0;
    unsigned long long k = (unsigned long long)(size_t)(r->train_frac * (double)N), cum = 0;
    int ns = a ? shard_writer_count(a) : 0, t = 0, v = 0, rc = LM_OK;
    for (int s = 0; s < 2; s++)
        if (!(pr->shard_tokens[s] = calloc((size_t)ns + 1, sizeof **pr->shard_tokens)))
            return err_set(err, LM_ENOMEM, "out of memory cutting the splits");
    for (int i = 0; !rc && i < ns; i++) {
        unsigned long long cnt = shard_writer_tokens_of(a, i);
        char src[1200];
        snprintf(src, sizeof src, "%s/all_%06d.bin", o->tmp, i);
        if (cum + cnt <= k) {
            rc = rename_shard(o->tmp, src, "train", t, err);
            pr->shard_tokens[0][t++] = cnt;
        } else if (cum >= k) {
            rc = rename_shard(o->tmp, src, "valid", v, err);
            pr->shard_tokens[1][v++] = cnt;
        } else {
            unsigned long long head = k - cum;
            rc = copy_tail(o->tmp, src, pr->width, head, cnt - head, r->shard_tokens, err);
            pr->shard_tokens[1][v++] = cnt - head;
            if (!rc) rc = shard_truncate(src, head, pr->width, err);
            if (!rc) rc = rename_shard(o->tmp, src, "train", t, err);
            pr->shard_tokens[0][t++] = head;
        }
        cum += cnt;
    }
    pr->n_shards[0] = t;
    pr->n_shards[1] = v;
    pr->tokens[0] = k;
    pr->tokens[1] = N - k;
    pr->has[0] = pr->has[1] = 1;
    unsigned long long docs = pr->docs[0];
    if (!o->doc_ends_lost) {
        pr->docs[0] = 0;
        for (size_t i = 0; i < o->n_doc_ends; i++) pr->docs[0] += o->doc_ends[i] <= k;
        pr->docs[1] = docs - pr->docs[0];
    }
    return rc;
}

/* Code points of the valid split's decoded text (dataset.c's n_chars for word and bpe). */
static int count_valid_chars(const char *tmp, TokCachePrep *pr, char *err)
{
    int *ids = malloc(PREP_CHUNK * sizeof *ids);
    if (!ids) return err_set(err, LM_ENOMEM, "out of memory counting characters");
    char carry[8];
    size_t nc = 0;
    int rc = LM_OK;
    for (int i = 0; !rc && i < pr->n_shards[1]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/valid_%06d.bin", tmp, i);
        for (unsigned long long d = 0; !rc && d < pr->shard_tokens[1][i];) {
            size_t k = pr->shard_tokens[1][i] - d < PREP_CHUNK ? (size_t)(pr->shard_tokens[1][i] - d) : PREP_CHUNK;
            rc = read_tokens(path, pr->width, d, k, ids, err);
            char *text = rc ? NULL : tokenizer_decode(pr->tok, ids, k);
            if (!rc && !text) rc = err_set(err, LM_ENOMEM, "out of memory counting characters");
            if (rc) break;
            size_t tl = strlen(text);
            char *all = malloc(nc + tl + 1);
            if (!all) {
                free(text);
                rc = err_set(err, LM_ENOMEM, "out of memory counting characters");
                break;
            }
            memcpy(all, carry, nc);
            memcpy(all + nc, text, tl);
            size_t n = nc + tl, keep = 0;   /* an unfinished UTF-8 sequence waits for more */
            for (size_t b = 1; b <= 3 && b <= n; b++) {
                unsigned char ch = (unsigned char)all[n - b];
                if ((ch & 0xc0) == 0x80) continue;
                size_t need = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
                if (need > b && ch >= 0xC2 && ch <= 0xF4) keep = b;
                break;
            }
            pr->valid_chars += tokenizer_count_chars(all, n - keep);
            memcpy(carry, all + n - keep, keep);
            nc = keep;
            free(all);
            free(text);
            d += k;
        }
    }
    pr->valid_chars += tokenizer_count_chars(carry, nc);
    free(ids);
    return rc;
}

int tokcache_prepare(const TokCacheRequest *r, Corpus *c, const char *tmp, const char *key,
                     TokCacheProgressFn fn, void *ud, TokCachePrep *pr, char *err)
{
    memset(pr, 0, sizeof *pr);
    double t0 = now_s();
    Prog pg = { .fn = fn, .ud = ud, .key = key, .t0 = t0 };
    if (needs_text(r) && report(&pg, TOKCACHE_SCAN, c, 0, 1))
        return err_set(err, LM_ECANCEL, "prepare stopped");
    int rc = make_tokenizer(r, c, &pg, pr, err);
    if (rc) return rc;
    pr->eot = prep_eot(pr->tok);
    pr->width = shard_width(tokenizer_vocab_size(pr->tok));
    pg.t0 = now_s();
    if (report(&pg, TOKCACHE_ENCODE, c, 0, 1)) return err_set(err, LM_ECANCEL, "prepare stopped");
    Out o = { .tmp = tmp };
    rc = encode_pass(r, c, &pg, &o, pr, err);
    for (int s = 0; s < 3; s++) pr->shard_bytes += o.w[s] ? shard_writer_bytes(o.w[s]) : 0;
    if (!rc && !corpus_has_splits(c)) {
        rc = cut_stream(r, &o, pr, err);
    } else if (!rc) {
        for (int s = 0; s < 3; s++) {
            if (!o.w[s]) continue;
            pr->has[s] = 1;
            pr->tokens[s] = shard_writer_tokens(o.w[s]);
            pr->n_shards[s] = shard_writer_count(o.w[s]);
            if (!(pr->shard_tokens[s] = calloc((size_t)pr->n_shards[s] + 1, sizeof **pr->shard_tokens))) {
                rc = err_set(err, LM_ENOMEM, "out of memory");
                break;
            }
            for (int i = 0; i < pr->n_shards[s]; i++) pr->shard_tokens[s][i] = shard_writer_tokens_of(o.w[s], i);
        }
    }
    for (int s = 0; !rc && s < 2; s++)
        if (pr->tokens[s] < 2)
            rc = err_set(err, LM_EFORMAT, "'%s': the %s split has only %llu tokens, too short to "
                         "train on: use a larger text%s", corpus_roots(c), s ? "valid" : "train",
                         pr->tokens[s], corpus_has_splits(c) ? "" : " or another train_frac");
    if (!rc && tokenizer_kind(pr->tok) == TOKENIZER_CHAR) pr->valid_chars = pr->tokens[1];
    else if (!rc && !corpus_has_splits(c)) rc = count_valid_chars(tmp, pr, err);
    pr->content_hash = corpus_content_hash(c);
    pr->skips = *corpus_skips(c);
    for (int s = 0; s < 3; s++) shard_writer_destroy(o.w[s]);
    free(o.doc_ends);
    pr->seconds = now_s() - t0;
    return rc;
}

void tokcache_prep_free(TokCachePrep *p)
{
    tokenizer_destroy(p->own);
    for (int s = 0; s < 3; s++) free(p->shard_tokens[s]);
    memset(p, 0, sizeof *p);
}

unsigned long long tokcache_estimate_bytes(const Corpus *c, TokenizerKind kind, int width)
{
    double text = 0;
    for (int i = 0; i < corpus_n_sources(c); i++) {
        const CorpusSource *s = corpus_source(c, i);
        const char *p = s->path;
        size_t n = strlen(p);
        double ratio = n > 3 && !strcmp(p + n - 3, ".gz") ? 3.5 : n > 3 && !strcmp(p + n - 3, ".xz") ? 5
                       : n > 4 && !strcmp(p + n - 4, ".zst") ? 4 : 1;
        text += ratio * (double)s->size;
    }
    double per_token = kind == TOKENIZER_CHAR ? 1.0 : kind == TOKENIZER_BPE ? 2.0 : 4.0;
    return (unsigned long long)(text / per_token * width) + 4096ULL * (unsigned long long)corpus_n_sources(c);
}
