/* tokcache_impl.h — what tokcache.c (the cache: keys, meta.json, freshness, list, rm)
 * shares with tokcache_prep.c (one prepare: the passes over the corpus, the tokenizer,
 * threaded encoding, shards, the split). Private to core/data. Not an API for others. */
#ifndef LM_TOKCACHE_IMPL_H
#define LM_TOKCACHE_IMPL_H

#include "corpus.h"
#include "shard.h"
#include "tokcache.h"

/* What one prepare made, for meta.json. */
typedef struct {
    Tokenizer *own;             /* the tokenizer built (NULL when req->given is used) */
    const Tokenizer *tok;       /* the one used: own or req->given */
    int eot;                    /* its end-of-text id, -1 none */
    int width;                  /* bytes per token in the shards */
    int has[3];                 /* the split exists */
    unsigned long long tokens[3], docs[3];
    int n_shards[3];
    unsigned long long *shard_tokens[3];   /* (n_shards[s]) malloc'd */
    unsigned long long valid_chars;        /* code points of the valid split (bits per char) */
    unsigned long long text_bytes;         /* text read in the encode pass */
    unsigned long long content_hash;       /* FNV-1a chained over every source's bytes */
    unsigned long long shard_bytes;        /* written */
    CorpusSkips skips;
    double seconds;
} TokCachePrep;

/* Prepares req's corpus c into the empty directory tmp: shards, tokenizer built (not yet
 * saved). est_bytes: the estimate of the shards' size, for the disk-full message.
 * LM_OK or a status with err set; out is filled as far as it got (free it either way). */
int tokcache_prepare(const TokCacheRequest *req, Corpus *c, const char *tmp, const char *key,
                     TokCacheProgressFn fn, void *ud, TokCachePrep *out, char *err);

void tokcache_prep_free(TokCachePrep *p);

/* Where a piece may be cut (CorpusCutFn): line for the tokenizers of this project (char,
 * word, bpe, basic_english, wordpiece), strict for others (GPT-2's regex). */
size_t tokcache_cut_line(const char *s, size_t n, void *ud);
size_t tokcache_cut_strict(const char *s, size_t n, void *ud);

/* tokcache_split.c: the stream's "all" shards in tmp (writer a, finished) renamed and cut
 * into train (the first (size_t)(train_frac * N) tokens) and valid; documents per split
 * from the token positions after each document (doc_ends; lost: too many to keep, all
 * counted in train). Fills pr's splits. LM_OK, LM_EIO, LM_ENOSPC, LM_ENOMEM. */
int tokcache_cut_stream(const TokCacheRequest *r, const char *tmp, ShardWriter *a,
                        const unsigned long long *doc_ends, size_t n_doc_ends, int doc_ends_lost,
                        TokCachePrep *pr, char *err);

/* The code points of the valid split's decoded text into pr->valid_chars (dataset.c's
 * n_chars for the word-like and BPE tokenizers). LM_OK, LM_EIO, LM_ENOMEM. */
int tokcache_count_valid_chars(const char *tmp, TokCachePrep *pr, char *err);

/* An estimate of the shards' bytes for c with the tokenizer's kind and width: the text
 * (compressed sources counted at a typical ratio) over typical bytes per token. */
unsigned long long tokcache_estimate_bytes(const Corpus *c, TokenizerKind kind, int width);

/* tokcache_list.c: dir/meta.json (NULL with why set when missing, unreadable or not a
 * cache's); whether meta's sources are c's files as they are now (c NULL: sizes and
 * mtimes only) and its shards whole ("" in why, else why not; *damaged: the shards are
 * what is wrong); removing a cache directory (its files, then it; 0 or -1). */
#include <jansson.h>
json_t *tokcache_meta_load(const char *dir, char *why, size_t cap);
void tokcache_check_fresh(const json_t *m, const Corpus *c, const char *dir, char *why, size_t cap,
                          int *damaged);
int tokcache_rm_dir(const char *dir);

#endif
