/* corpus_impl.h — what corpus.c (reading the files as pieces) shares with corpus_open.c
 * (resolving a data spec to files: bundled names, lists, directory walks, layouts).
 * Private to core/data. */
#ifndef LM_CORPUS_IMPL_H
#define LM_CORPUS_IMPL_H

#include "corpus.h"
#include "cstream.h"
#include "dirset.h"

struct Corpus {
    CorpusSource *src;
    int n, cap, has_splits;
    char *roots;
    char text_key[256];
    CorpusOptions opt;
    unsigned long long listed;  /* directory entries walked (CorpusOptions.listed) */
    DirSet dirs;                /* the directories walked, by identity */
    /* the pass */
    int cur;                    /* source being read; n at the end */
    CStream *cs;
    char *buf;                  /* (bcap) bytes read but not yet given */
    size_t blen, bcap, bstart;
    int eof;                    /* the current source is read to its end */
    int first_piece;            /* no piece of the current source given yet */
    unsigned long long line;    /* jsonl: line number of the next line */
    char *doc;                  /* jsonl: the current document's text */
    size_t doc_cap;
    unsigned long long done_raw, docs, chain;
    CorpusSkips skips, open_skips;
    size_t target;              /* text: bytes to gather before looking for a cut */
    size_t scan;                /* jsonl: bytes of buf[bstart..] known to hold no '\n' */
};

/* s ends with suf. */
int corpus_ends_with(const char *s, const char *suf);

/* Counts one skip of kind in k; the first one's description (printf-style) is kept. */
void corpus_skip_count(CorpusSkips *k, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
