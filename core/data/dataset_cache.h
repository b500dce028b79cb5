/* dataset_cache.h — a configuration's data through the token cache (tokcache.h): a text
 * corpus (a file, a folder, .jsonl, compressed, a list) is tokenized once into a cache
 * folder and read from there (tokseq.h, never held); token files named directly need no
 * cache. What `train` does on first use, and what `show model` looks up without
 * preparing. Not here: preparing (tokcache.c), reading (dataset.c, tokformat.c). */
#ifndef LM_DATASET_CACHE_H
#define LM_DATASET_CACHE_H

#include "config.h"
#include "tokcache.h"
#include "tokenizer.h"

#include <stddef.h>

/* The cache folder of c's data under root into dir (cap bytes): found fresh, or prepared
 * now when prepare is 1 (fn reports, may be NULL; see tokcache_ensure), or "" (LM_OK)
 * when data= names token files already, or prepare is 0 and no fresh cache exists.
 * given (not owned, may be NULL): the tokenizer a checkpoint fixes (resume, init_from).
 * LM_OK or tokcache_ensure's errors. */
int dataset_cache_dir(const Config *c, const char *root, const Tokenizer *given, int prepare,
                      TokCacheProgressFn fn, void *ud, char *dir, size_t cap, char *err);

#endif
