/* corpus.c — resolving a data spec to files and reading them as text pieces (see
 * corpus.h). Files are read through cstream (decompression, content hash, change check);
 * jsonl lines are parsed with jansson. Not a tokenizer: pieces are cut where the caller's
 * cut function says encoding them apart is exact. */
#include "corpus.h"

#include "private/corpus_impl.h"

#include "cstream.h"
#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CORPUS_MAX_PIECE ((size_t)8 << 20)    /* a text piece with no cut grows to this */
#define CORPUS_MAX_LINE ((size_t)256 << 20)   /* a jsonl line longer than this is refused */


const char *corpus_skip_name(int kind)
{
    static const char *const n[] = { "binary", "bad_json", "missing_key", "empty_files", "unreadable",
                                     "repeated_dirs" };
    return (unsigned)kind < CORPUS_SKIP_N ? n[kind] : "?";
}

int corpus_n_sources(const Corpus *c) { return c->n; }
const CorpusSource *corpus_source(const Corpus *c, int i) { return &c->src[i]; }
int corpus_has_splits(const Corpus *c) { return c->has_splits; }
const char *corpus_roots(const Corpus *c) { return c->roots; }
unsigned long long corpus_content_hash(const Corpus *c) { return c->chain; }
const CorpusSkips *corpus_skips(const Corpus *c) { return &c->skips; }
unsigned long long corpus_raw_total(const Corpus *c)
{
    unsigned long long t = 0;
    for (int i = 0; i < c->n; i++) t += c->src[i].size;
    return t;
}
unsigned long long corpus_raw_done(const Corpus *c)
{
    return c->done_raw + (c->cs ? cstream_raw_done(c->cs) : 0);
}

void corpus_close(Corpus *c)
{
    if (!c) return;
    cstream_close(c->cs);
    free(c->src); free(c->roots); free(c->buf); free(c->doc);
    dirset_free(&c->dirs);
    free(c);
}

/* ---- reading ---- */

void corpus_rewind(Corpus *c)
{
    cstream_close(c->cs);
    c->cs = NULL;
    c->cur = -1;
    c->blen = c->bstart = c->scan = 0;
    c->eof = 1;
    c->done_raw = c->docs = 0;
    c->chain = 0xcbf29ce484222325ULL;
    c->skips = c->open_skips;
}

int corpus_ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

void corpus_skip_count(CorpusSkips *k, int kind, const char *fmt, ...)
{
    k->n[kind]++;
    if (k->first[kind][0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->first[kind], sizeof k->first[kind], fmt, ap);
    va_end(ap);
}

/* 0 text; otherwise a description of why the bytes are not text (dataset.c's rule: any
 * NUL, or over 10% control bytes other than \t \n \r \f \v). */
static const char *binary_why(const char *b, size_t n)
{
    size_t nul = 0, ctrl = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)b[i];
        nul += ch == 0;
        ctrl += (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\f' && ch != '\v') || ch == 0x7f;
    }
    if (nul) return "NUL bytes";
    if (ctrl * 10 > n) return "over 10% control bytes";
    return NULL;
}

/* Ends the current source: its hash checked against an earlier pass and kept. */
static int end_source(Corpus *c, int whole, char *err)
{
    CorpusSource *s = &c->src[c->cur];
    if (cstream_raw_size(c->cs) != s->size || cstream_mtime_ns(c->cs) != s->mtime_ns)
        return err_set(err, LM_EIO, "'%s' changed during the prepare (size %llu -> %llu bytes "
                       "or its time): prepare again when nothing writes it", s->path, s->size,
                       cstream_raw_size(c->cs));
    if (whole) {
        unsigned long long h = cstream_raw_hash(c->cs);
        if (s->hashed && s->hash != h)
            return err_set(err, LM_EIO, "'%s' changed during the prepare (its bytes differ from "
                           "the first pass): prepare again when nothing writes it", s->path);
        s->hash = h;
        s->hashed = 1;
    }
    c->chain = cstream_chain(c->cs);
    c->done_raw += s->size;
    cstream_close(c->cs);
    c->cs = NULL;
    c->blen = c->bstart = c->scan = 0;
    return LM_OK;
}

/* Opens the next readable source; *end when none is left. */
static int open_next(Corpus *c, int *end, char *err)
{
    while (++c->cur < c->n) {
        CorpusSource *s = &c->src[c->cur];
        char msg[LM_ERR_LEN];
        int rc = cstream_open(s->path, &c->cs, msg);
        if (rc == LM_ENOMEM) return err_set(err, rc, "%s", msg);
        if (rc && s->required) return err_set(err, rc, "%s", msg);
        if (rc) {
            if (c->opt.strict) return err_set(err, rc, "%s (strict=true refuses it; without it the "
                                              "file is skipped and counted)", msg);
            corpus_skip_count(&c->skips, CORPUS_SKIP_UNREADABLE, "%s", msg);
            c->done_raw += s->size;
            continue;
        }
        cstream_chain_from(c->cs, c->chain);
        c->eof = 0;
        c->first_piece = 1;
        c->line = 1;
        c->target = c->opt.piece;
        return LM_OK;
    }
    *end = 1;
    return LM_OK;
}

/* Reads until buf[bstart..blen) holds want bytes or the source ends; compacts first. */
static int gather(Corpus *c, size_t want, char *err)
{
    if (c->bstart) {
        memmove(c->buf, c->buf + c->bstart, c->blen - c->bstart);
        c->blen -= c->bstart;
        c->bstart = 0;
    }
    while (!c->eof && c->blen < want) {
        if (c->bcap - c->blen < ((size_t)1 << 16) || c->bcap < want) {
            size_t cap = c->bcap ? 2 * c->bcap : want + ((size_t)1 << 20);
            while (cap < want) cap *= 2;
            char *b = realloc(c->buf, cap);
            if (!b) return err_set(err, LM_ENOMEM, "out of memory reading '%s' (%zu bytes)",
                                   c->src[c->cur].path, cap);
            c->buf = b;
            c->bcap = cap;
        }
        size_t k, ask = want - c->blen < ((size_t)1 << 12) ? (size_t)1 << 12 : want - c->blen;
        if (ask > c->bcap - c->blen) ask = c->bcap - c->blen;
        int rc = cstream_read(c->cs, c->buf + c->blen, ask, &k, err);
        if (rc) return rc;
        c->blen += k;
        c->eof = k == 0;
    }
    return LM_OK;
}

/* Where a piece with no allowed cut is cut anyway: after the last '\n'; else before the
 * last space that starts a word (" w": GPT-2's pre-tokens begin there, so its ids are
 * the whole line's, and no word is split); else before the last UTF-8 lead byte; never at
 * n, so a byte stays for the next piece. */
static size_t fallback_cut(const char *s, size_t n)
{
    const char *nl = n > 1 ? memrchr(s, '\n', n - 1) : NULL;
    if (nl) return (size_t)(nl - s) + 1;
    for (size_t p = n - 1; p > 0; p--)
        if (s[p - 1] != ' ' && s[p] == ' ' && p + 1 < n && (unsigned char)s[p + 1] > ' ' &&
            (unsigned char)s[p + 1] < 0x7f)
            return p;
    size_t i = n - 1;
    while (i > 1 && ((unsigned char)s[i] & 0xc0) == 0x80) i--;
    return i ? i : n - 1;
}

static size_t default_cut(const char *s, size_t n, void *ud)
{
    (void)ud;
    const char *nl = n > 1 ? memrchr(s, '\n', n - 1) : NULL;
    return nl ? (size_t)(nl - s) + 1 : 0;
}

/* The next piece of a text source; p->len = 0 when the source is done. */
static int next_text(Corpus *c, CorpusPiece *p, char *err)
{
    const CorpusSource *s = &c->src[c->cur];
    for (;;) {
        int rc = gather(c, c->target, err);
        if (rc) return rc;
        if (c->blen == 0) {
            if (c->first_piece && s->required && s->split != 2)
                return err_set(err, LM_EFORMAT, "'%s' is empty: give a file with text in it", s->path);
            if (c->first_piece && s->split < 0) corpus_skip_count(&c->skips, CORPUS_SKIP_EMPTY, "%s", s->path);
            return end_source(c, 1, err);
        }
        size_t cut = c->blen;
        if (!c->eof) {
            cut = (c->opt.cut ? c->opt.cut : default_cut)(c->buf, c->blen, c->opt.cut_ud);
            if (cut >= c->blen) cut = 0;
            if (!cut && c->target < CORPUS_MAX_PIECE) {
                c->target *= 2;
                continue;
            }
            if (!cut) cut = fallback_cut(c->buf, c->blen);
        }
        c->target = c->opt.piece;
        unsigned long long at = cstream_raw_done(c->cs);
        const char *why = binary_why(c->buf, cut);
        int first = c->first_piece;
        c->first_piece = 0;
        c->bstart = cut;
        if (why && first && s->required)   /* a file the user named: refused, not skipped */
            return err_set(err, LM_EFORMAT, "'%s' looks binary, not text (%s in its first %zu "
                           "bytes): give a text file (UTF-8)%s", s->path, why, cut,
                           corpus_ends_with(s->path, ".bin") ? "; a .bin is read as tokens only when it "
                           "is an llm.c shard (its header) or nanoGPT's train.bin/val.bin" : "");
        if (why && c->opt.strict)
            return err_set(err, LM_EFORMAT, "'%s' is not text (%s%s): remove it from the corpus, or "
                           "prepare without strict=true to skip it", s->path, why,
                           first ? "" : " in a piece further in");
        if (why && first) {   /* a binary file found in a folder: skipped whole */
            corpus_skip_count(&c->skips, CORPUS_SKIP_BINARY, "%s (%s)", s->path, why);
            return end_source(c, 0, err);
        }
        if (why) {
            corpus_skip_count(&c->skips, CORPUS_SKIP_BINARY, "%s (%s before byte %llu on disk)", s->path, why, at);
            continue;
        }
        p->text = c->buf;
        p->len = cut;
        p->doc_end = c->eof && cut == c->blen;
        return LM_OK;
    }
}

/* The next document of a jsonl source; p->len = 0 when the source is done. */
static int next_jsonl(Corpus *c, CorpusPiece *p, char *err)
{
    const CorpusSource *s = &c->src[c->cur];
    for (;;) {
        const char *line = c->buf + c->bstart, *nl = NULL;
        size_t avail = c->blen - c->bstart;
        if (c->scan < avail) nl = memchr(line + c->scan, '\n', avail - c->scan);
        if (!nl && !c->eof) {
            if (avail > CORPUS_MAX_LINE)
                return err_set(err, LM_EFORMAT, "'%s' line %llu is longer than %zu MB: a jsonl file "
                               "holds one document a line", s->path, c->line, CORPUS_MAX_LINE >> 20);
            c->scan = avail;
            int rc = gather(c, avail + ((size_t)1 << 20), err);
            if (rc) return rc;
            continue;
        }
        if (!nl && avail == 0) return end_source(c, 1, err);
        size_t len = nl ? (size_t)(nl - line) : avail;
        unsigned long long ln = c->line++;
        c->bstart += len + (nl != NULL);
        c->scan = 0;
        size_t k = 0;
        while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r')) k++;
        if (k == len) continue;   /* a blank line */
        json_error_t je;
        json_t *o = json_loadb(line, len, JSON_ALLOW_NUL, &je);
        const json_t *v = o ? json_object_get(o, c->text_key) : NULL;
        int kind = !o || !json_is_object(o) ? CORPUS_SKIP_BAD_JSON
                   : !json_is_string(v) ? CORPUS_SKIP_MISSING_KEY : -1;
        if (kind >= 0) {
            json_decref(o);
            if (c->opt.strict)
                return err_set(err, LM_EFORMAT, "'%s' line %llu: %s: fix the line or prepare without "
                               "strict=true to skip it", s->path, ln, kind == CORPUS_SKIP_BAD_JSON
                               ? (o ? "not a JSON object" : je.text) : "no string value for the "
                               "text key (text_key= names another)");
            corpus_skip_count(&c->skips, kind, "%s:%llu", s->path, ln);
            continue;
        }
        size_t n = json_string_length(v);
        if (n + 1 > c->doc_cap) {
            char *d = realloc(c->doc, n + 1);
            if (!d) {
                json_decref(o);
                return err_set(err, LM_ENOMEM, "out of memory for '%s' line %llu", s->path, ln);
            }
            c->doc = d;
            c->doc_cap = n + 1;
        }
        memcpy(c->doc, json_string_value(v), n);
        json_decref(o);
        if (n == 0) continue;
        const char *why = binary_why(c->doc, n);
        if (why && c->opt.strict)
            return err_set(err, LM_EFORMAT, "'%s' line %llu is not text (%s): remove it, or prepare "
                           "without strict=true to skip it", s->path, ln, why);
        if (why) {
            corpus_skip_count(&c->skips, CORPUS_SKIP_BINARY, "%s:%llu (%s)", s->path, ln, why);
            continue;
        }
        p->text = c->doc;
        p->len = n;
        p->doc_end = 1;
        return LM_OK;
    }
}

int corpus_next(Corpus *c, CorpusPiece *p, int *end, char *err)
{
    memset(p, 0, sizeof *p);
    *end = 0;
    for (;;) {
        if (!c->cs) {
            int rc = open_next(c, end, err);
            if (rc || *end) return rc;
        }
        const CorpusSource *s = &c->src[c->cur];
        int rc = s->format == CORPUS_JSONL ? next_jsonl(c, p, err) : next_text(c, p, err);
        if (rc) return rc;
        if (p->len) {
            p->split = s->split;
            p->source = c->cur;
            c->docs += p->doc_end;
            return LM_OK;
        }
    }
}
