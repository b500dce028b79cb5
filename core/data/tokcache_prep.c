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

static int printable(unsigned char ch) { return ch > 0x20 && ch < 0x7f; }

/* After a '\n' at s[p - 1] where a token or pre-split chunk always starts: the next byte
 * is not whitespace, or it is one space before a byte that is not (a run of whitespace
 * before a word gives its last space to the word, in bpe.c as in GPT-2's \s+(?!\S), so
 * the run ends at p in the whole text as in the piece). strict (GPT-2's regex, whose
 * \s+(?!\S) also looks past a line end): the '\n' must then not follow whitespace, and
 * "not whitespace" means a printable ASCII byte (Unicode spaces are \s there). */
static size_t cut_at(const char *s, size_t n, int strict)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t e = n - 1; e > 0;) {
        const char *nl = memrchr(s, '\n', e);
        if (!nl) return 0;
        size_t p = (size_t)(nl - s) + 1;
        e = (size_t)(nl - s);
        if (p + 1 >= n) continue;
        if (u[p] == ' ' && printable(u[p + 1])) return p;
        if (strict ? printable(u[p]) && p >= 2 && printable(u[p - 2]) : !ascii_space(u[p])) return p;
    }
    return 0;
}

size_t tokcache_cut_line(const char *s, size_t n, void *ud)
{
    (void)ud;
    return cut_at(s, n, 0);
}

size_t tokcache_cut_strict(const char *s, size_t n, void *ud)
{
    (void)ud;
    return cut_at(s, n, 1);
}

/* 1 when building the tokenizer reads the text. */
static int needs_text(const TokCacheRequest *r)
{
    if (r->given) return 0;
    return r->kind == TOKENIZER_CHAR || r->kind == TOKENIZER_WORD || r->kind == TOKENIZER_BPE ||
           r->kind == TOKENIZER_BASIC_ENGLISH || (r->kind == TOKENIZER_WORDPIECE && r->opt.vocab_from_train);
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
    int after, after_known; /* the byte after the sample, once the sample is full */
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
    if (room == 0) {
        if (!s->after_known && p->len) s->after = sep ? '\n' : (unsigned char)p->text[0];
        s->after_known = 1;
        return LM_OK;
    }
    size_t k = p->len + sep < room ? p->len + sep : room;
    if (k - sep < p->len) {
        s->after = (unsigned char)p->text[k - sep];
        s->after_known = 1;
    }
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
    Scan s = { .limit = r->vocab_sample ? r->vocab_sample : TOKCACHE_VOCAB_SAMPLE, .after = -1 };
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
        int next = s.after;
        if (!corpus_has_splits(c)) {   /* the first train_frac of the text, as dataset.c */
            double want = r->train_frac * (double)s.text[0];
            if (want < (double)n) {
                n = (size_t)want;
                next = (unsigned char)s.sample[n];
            }
        }
        n = tokenizer_sample_end(s.sample, n, next);
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
        /* a piece cut inside a line (no line end in 8 MiB) is not a line's end: no <eos> */
        j->rc = (j->seg_end[s] ? tokenizer_encode : tokenizer_encode_prompt)(
            tok, j->text + start, j->seg[s] - start, &ids, &k, j->err);
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
/* Starts threads - 1 helpers on w's jobs (the caller's thread joins in with work_run
 * after reading the next batch); their count into *started. */
static void start_helpers(Work *w, int threads, pthread_t *th, int *started)
{
    *started = 0;
    atomic_store(&w->next, 0);
    for (int t = 1; t < threads && t < 256 && t < w->n; t++)
        if (!pthread_create(&th[*started], NULL, work_run, w)) (*started)++;
}

static void finish_jobs(Work *w, pthread_t *th, int started)
{
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

/* The reading side of the encoding pass: pieces into up to J jobs (one split each, about
 * PREP_JOB_BYTES); *nj filled. A piece of another split waits in *p (*pending). */
typedef struct {
    Corpus *c;
    CorpusPiece p;
    int pending, end, count_chars;
} Reader;

static int fill_jobs(Reader *rd, Job *jobs, int J, int *nj, TokCachePrep *pr, char *err)
{
    int rc = LM_OK;
    *nj = 0;
    while (!rc && *nj < J && !rd->end) {
        Job *j = &jobs[*nj];
        j->len = 0;
        j->nseg = 0;
        j->rc = 0;
        while (!rc && j->len < PREP_JOB_BYTES) {
            if (!rd->pending) rc = corpus_next(rd->c, &rd->p, &rd->end, err);
            if (rc || rd->end) break;
            rd->pending = 0;
            int split = rd->p.split < 0 ? 0 : rd->p.split;
            if (j->nseg && split != j->split) {
                rd->pending = 1;
                break;
            }
            if (job_add(j, &rd->p)) rc = err_set(err, LM_ENOMEM, "out of memory reading the corpus");
            pr->text_bytes += rd->p.len;
            if (rd->count_chars && split == 1) pr->valid_chars += tokenizer_count_chars(rd->p.text, rd->p.len);
        }
        if (j->nseg) (*nj)++;
    }
    return rc;
}

/* Writes encoded jobs in order into the split's writer (created on first use). */
static int write_jobs(const TokCacheRequest *r, Out *out, Job *jobs, int nj, int stream,
                      TokCachePrep *pr, const char *roots, char *err)
{
    static const char *const pre[3] = { "train", "valid", "test" };
    int rc = LM_OK;
    for (int i = 0; !rc && i < nj; i++) {
        Job *j = &jobs[i];
        if (j->rc) return err_set(err, j->rc, "encoding '%s': %s", roots, j->err);
        int s = stream ? 0 : j->split;
        if (!out->w[s])
            rc = shard_writer_create(out->tmp, stream ? "all" : pre[s], pr->width, r->shard_tokens,
                                     &out->w[s], err);
        if (!rc) rc = out_write(out, j, stream, pr, err);
    }
    return rc;
}

/* Reads, encodes on the threads and writes in order; the next batch is read while the
 * helpers encode the current one (two sets of jobs). */
static int encode_pass(const TokCacheRequest *r, Corpus *c, Prog *pg, Out *out, TokCachePrep *pr,
                       char *err)
{
    int threads = r->threads > 0 ? r->threads : sysinfo_cores();
    if (threads < 1) threads = 1;
    int J = threads * PREP_JOBS_PER_THREAD, stream = !corpus_has_splits(c), rc = LM_OK, cur = 0;
    Job *jobs[2] = { calloc((size_t)J, sizeof(Job)), calloc((size_t)J, sizeof(Job)) };
    if (!jobs[0] || !jobs[1]) {
        free(jobs[0]);
        free(jobs[1]);
        return err_set(err, LM_ENOMEM, "out of memory for the encoding jobs");
    }
    Reader rd = { .c = c, .count_chars = !stream && tokenizer_kind(pr->tok) != TOKENIZER_CHAR };
    int nj[2] = { 0, 0 };
    rc = fill_jobs(&rd, jobs[0], J, &nj[0], pr, err);
    while (!rc && nj[cur] > 0) {
        Work w = { .jobs = jobs[cur], .n = nj[cur], .tok = pr->tok, .eot = pr->eot };
        pthread_t th[256];
        int started;
        start_helpers(&w, threads, th, &started);
        rc = fill_jobs(&rd, jobs[1 - cur], J, &nj[1 - cur], pr, err);
        finish_jobs(&w, th, started);
        if (!rc) rc = write_jobs(r, out, jobs[cur], nj[cur], stream, pr, corpus_roots(c), err);
        unsigned long long tok = 0;
        for (int s = 0; s < 3; s++) tok += out->w[s] ? shard_writer_tokens(out->w[s]) : 0;
        if (!rc && report(pg, TOKCACHE_ENCODE, c, tok, 0)) rc = err_set(err, LM_ECANCEL, "prepare stopped");
        cur = 1 - cur;
    }
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < J; i++) job_free(&jobs[k][i]);
        free(jobs[k]);
    }
    for (int s = 0; !rc && s < 3; s++)
        if (out->w[s]) rc = shard_writer_finish(out->w[s], err);
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
    pr->eot = tokenizer_eot(pr->tok);
    pr->width = shard_width(tokenizer_vocab_size(pr->tok));
    pg.t0 = now_s();
    if (report(&pg, TOKCACHE_ENCODE, c, 0, 1)) return err_set(err, LM_ECANCEL, "prepare stopped");
    Out o = { .tmp = tmp };
    rc = encode_pass(r, c, &pg, &o, pr, err);
    for (int s = 0; s < 3; s++) pr->shard_bytes += o.w[s] ? shard_writer_bytes(o.w[s]) : 0;
    if (!rc && !corpus_has_splits(c)) {
        rc = tokcache_cut_stream(r, tmp, o.w[0], o.doc_ends, o.n_doc_ends, o.doc_ends_lost, pr, err);
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
    else if (!rc && !corpus_has_splits(c)) rc = tokcache_count_valid_chars(tmp, pr, err);
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
