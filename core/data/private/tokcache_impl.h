/* tokcache_impl.h — what tokcache.c (the cache: keys, meta.json, freshness, list, rm)
 * shares with tokcache_prep.c (one prepare: the passes over the corpus, the tokenizer,
 * threaded encoding, shards, the split). Private to core/data. Not an API for others. */
#ifndef LM_TOKCACHE_IMPL_H
#define LM_TOKCACHE_IMPL_H

#include "corpus.h"
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

/* An estimate of the shards' bytes for c with the tokenizer's kind and width: the text
 * (compressed sources counted at a typical ratio) over typical bytes per token. */
unsigned long long tokcache_estimate_bytes(const Corpus *c, TokenizerKind kind, int width);

#endif
