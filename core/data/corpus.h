/* corpus.h — a corpus as the user has it, read as a stream of text pieces without ever
 * holding it whole: a text file; a directory of files (recursive, sorted by path, dot files
 * skipped); a WikiText-layout directory (wiki.{train,valid,test}.tokens or
 * {train,valid,test}.txt: its splits are given); `.jsonl` files (one JSON object a line,
 * the document in text_key); any file gzip/xz/zstd-compressed (cstream.h); and a comma
 * list of these. A document is a text file or a jsonl line; pieces of a long document are
 * cut where the caller's cut function allows, so encoding pieces one by one gives the
 * tokens of the whole. What cannot be read is counted and named (CorpusSkips), or refused
 * with strict. Not a tokenizer and not a cache (tokcache.h). */
#ifndef LM_CORPUS_H
#define LM_CORPUS_H

#include <stddef.h>

typedef enum { CORPUS_TEXT, CORPUS_JSONL } CorpusFormat;

typedef struct {
    char path[1100];            /* absolute */
    CorpusFormat format;
    int split;                  /* -1: the corpus's one stream; 0..2: a WikiText split */
    int required;               /* named by the user or a WikiText train/valid file: an
                                   unreadable or empty one is an error, not a skip */
    unsigned long long size;    /* on disk, at corpus_open */
    long long mtime_ns;
    unsigned long long hash;    /* FNV-1a of its bytes on disk, once read whole (hashed = 1) */
    int hashed;
} CorpusSource;

/* Where a piece may end: given n bytes (n > 0), the largest cut 0 < c <= n such that
 * encoding s[0..c) and the rest apart gives the tokens of the whole, or 0 for none. */
typedef size_t (*CorpusCutFn)(const char *s, size_t n, void *ud);

typedef struct {
    const char *text_key;       /* jsonl: the document's key; NULL = "text" */
    int strict;                 /* refuse (LM_EFORMAT) instead of skipping and counting */
    CorpusCutFn cut;            /* NULL: cut after any '\n' */
    void *cut_ud;
    size_t piece;               /* target piece size in bytes; 0 = 1 MiB */
    int roots_only;             /* resolve the items only (a WikiText layout is still
                                   found): a directory's files are not listed, so the
                                   corpus has its roots and no source (a cache key) */
    /* Told the entries a directory walk has looked at so far, every CORPUS_LIST_EVERY
     * and at the end; nonzero stops the walk (LM_ECANCEL). NULL: not told. */
    int (*listed)(unsigned long long entries, void *ud);
    void *listed_ud;
} CorpusOptions;

#define CORPUS_LIST_EVERY 4096

/* What was skipped, by kind, with the first of each named ("path", "path:line"). */
enum { CORPUS_SKIP_BINARY, CORPUS_SKIP_BAD_JSON, CORPUS_SKIP_MISSING_KEY, CORPUS_SKIP_EMPTY,
       CORPUS_SKIP_UNREADABLE, CORPUS_SKIP_REPEATED_DIR, CORPUS_SKIP_N };
typedef struct {
    unsigned long long n[CORPUS_SKIP_N];
    char first[CORPUS_SKIP_N][1200];
} CorpusSkips;

/* The meta.json names of the skip kinds ("binary", "bad_json", "missing_key",
 * "empty_files", "unreadable", "repeated_dirs": a directory reached again through a link). */
const char *corpus_skip_name(int kind);

typedef struct {
    const char *text;           /* owned by the corpus, valid until the next call */
    size_t len;
    int split;                  /* as its source's */
    int source;                 /* index of its source */
    int doc_end;                /* the piece ends a document */
} CorpusPiece;

typedef struct Corpus Corpus;   /* heap object: corpus_open / corpus_close */

/* Resolves spec (a bundled name without '/' looked up in $LMLAB_DATA then LMLAB_DATA_DIR,
 * a path, or a comma list of these) to its files, stat'ed and sorted; nothing is read yet.
 * The options are copied (text_key too). The filesystem's root and its system directories
 * (/usr, /proc, ...) are refused before anything under them is listed: their files are no
 * corpus, and listing them would walk the whole disk. LM_OK, LM_EIO (a missing path,
 * naming it), LM_EARG (an empty spec, a system directory, a WikiText directory in a list,
 * a directory with no file), LM_ENOMEM. */
int corpus_open(const char *spec, const CorpusOptions *opt, Corpus **out, char *err);
/* LM_EIO with a message saying what to pass when a missing item is a preset's placeholder
 * ("/path/to/..."); LM_OK otherwise. corpus_open and dataset.c's text path both use it. */
int corpus_placeholder_error(const char *item, char *err);
void corpus_close(Corpus *c);

int corpus_n_sources(const Corpus *c);
const CorpusSource *corpus_source(const Corpus *c, int i);
/* 1 when the splits come from a WikiText layout (every source's split >= 0). */
int corpus_has_splits(const Corpus *c);
/* The spec's items as resolved (absolute paths, comma-joined): the corpus's identity. */
const char *corpus_roots(const Corpus *c);

/* The next piece into *p; *end = 1 (and p->len = 0) after the last. Empty documents give
 * no piece. LM_OK, or an error from reading (cstream_read: corrupt, changed while read), a
 * strict refusal (LM_EFORMAT naming the file and line), a source whose bytes differ from
 * an earlier pass (LM_EIO: it changed during the prepare), LM_ENOMEM. */
int corpus_next(Corpus *c, CorpusPiece *p, int *end, char *err);

/* Back to the first source for another pass (skip counts start again). */
void corpus_rewind(Corpus *c);

/* Bytes read from disk in this pass, and the sources' total size on disk. */
unsigned long long corpus_raw_done(const Corpus *c);
unsigned long long corpus_raw_total(const Corpus *c);
/* FNV-1a of the bytes on disk of every source read in this pass, one after another (for
 * plain files: dataset.c's hash of the text). */
unsigned long long corpus_content_hash(const Corpus *c);
/* What was skipped in this pass. */
const CorpusSkips *corpus_skips(const Corpus *c);

#endif
