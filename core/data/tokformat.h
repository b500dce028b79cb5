/* tokformat.h — which token files make a corpus, for the three layouts read as they are:
 *   - an lmlab token cache: a folder with meta.json ("format": "lmlab-token-cache"),
 *     tokenizer.json and <split>_<NNNNNN>.bin shards (docs/data.md);
 *   - llm.c's shards: a folder of *_train_*.bin and *_val_*.bin (sorted by name);
 *   - nanoGPT's headerless uint16 train.bin and val.bin in a folder;
 *   - or a comma list of such .bin files (names with "val" are validation, "test" test,
 *     the rest train; each file's own header decides llm.c or headerless).
 * Not here: reading the tokens (tokseq.h), preparing a cache (tokcache). */
#ifndef LM_TOKFORMAT_H
#define LM_TOKFORMAT_H

#include "tokseq.h"

typedef enum { TOKFORMAT_NONE, TOKFORMAT_CACHE, TOKFORMAT_LLMC, TOKFORMAT_NANOGPT,
               TOKFORMAT_LIST } TokFormat;

typedef struct {
    TokFormat format;
    char *tokenizer_json;       /* a cache: its tokenizer.json (malloc'd), else NULL */
    char tokenizer_hash[17];    /* a cache: meta.json's tokenizer hash ("" otherwise) */
    char tokenizer_kind[32];    /* a cache: meta.json's tokenizer kind */
    int vocab_size;             /* a cache: meta.json's vocabulary (0 otherwise) */
    int eot;                    /* a cache: the end-of-text id, -1 for none */
    unsigned long long key;     /* the data's identity: a cache's single source's content
                                   hash (FNV-1a, the same as a text read whole gets), else
                                   its key; other files: a hash of their names, sizes and
                                   first and last 64 KB */
    uint64_t documents;         /* a cache: documents of the train split (0 unknown) */
} TokFormatInfo;

/* "lmlab token cache", "llm.c shards", "nanoGPT train.bin/val.bin", "token files". */
const char *tokformat_name(TokFormat f);

/* The layout spec names, without opening anything (TOKFORMAT_NONE: text). */
TokFormat tokformat_detect(const char *spec);

/* Opens spec's token files into split[0..2] (train, valid, test; zeroed by the caller)
 * when spec is one of the layouts above; info->format TOKFORMAT_NONE (and LM_OK) when it
 * is not (a text file, a WikiText folder: the caller reads text). LM_EFORMAT for a
 * cache's bad meta.json, a layout without a train or a validation split, and tokseq's
 * errors (truncated shard, count unlike the listing); LM_EIO, LM_ENOMEM. On failure the
 * splits are freed and info cleared. Free info with tokformat_info_free. */
int tokformat_open(const char *spec, TokSeq split[3], TokFormatInfo *info, char *err);

void tokformat_info_free(TokFormatInfo *info);

#endif
