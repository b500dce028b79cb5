/* dataset.h — a corpus as token ids (train, valid, test) and the batchers that cut
 * (B,T) windows from a split for training and evaluation. Follows the seed recipes:
 * a single text file splits like the notebook's prepare_data (first train_frac of the
 * tokens), stream batching like PyTorch word_language_model's batchify/get_batch, random
 * batching like the notebook's get_batch (nanoGPT). A split is a TokSeq (tokseq.h): token
 * files (an lmlab cache, llm.c's shards, nanoGPT's .bin) are read window by window with
 * pread and never held; a text read here is tokenized at load and held as int32 ids. */
#ifndef LM_DATASET_H
#define LM_DATASET_H

#include <stddef.h>

#include "config.h"
#include "tokenizer.h"
#include "tokseq.h"
#include "batcher.h"

enum { SPLIT_TRAIN, SPLIT_VALID, SPLIT_TEST };

typedef struct {
    char name[256];           /* "tinyshakespeare", "wikitext-small", or the path given */
    char source[1024];        /* resolved path(s) */
    unsigned long long hash;  /* FNV-1a of the raw bytes of every file read, in order */
    Tokenizer *tok;           /* owned */
    TokSeq split[3];          /* token ids of train, valid, test (in memory or files) */
    size_t n[3];              /* = split[s].n; test may be empty (n = 0) */
    size_t n_chars;           /* code points of the valid split, for bits per character
                                 (token files: known for char only, else 0) */
    int format;               /* TokFormat (tokformat.h): TOKFORMAT_NONE = text */
    int eot;                  /* a cache's end-of-text id, -1 for none or unknown */
} Dataset;

/* Loads spec into *ds (caller-owned struct; free with dataset_free).
 * spec: token files in a layout of tokformat.h (an lmlab cache folder, llm.c's shards,
 *   nanoGPT's train.bin/val.bin, a comma list of .bin files): opened, not read (see
 *   dataset_open_tokens), else a bundled name without '/' (looked up in $LMLAB_DATA, then
 *   LMLAB_DATA_DIR, as "<dir>/<name>.txt" or a "<dir>/<name>/" directory), else a path:
 *   - a text file: tokenized as a whole, the first train_frac (0 < train_frac < 1) of the
 *     tokens is train, the rest valid, test empty (the seed's prepare_data: the count is
 *     (size_t)(train_frac * n)). The char vocabulary covers the whole file; the others
 *     (word, BPE, basic_english, wordpiece's vocab_from_train) are trained on the first
 *     train_frac of the bytes.
 *   - a directory in WikiText layout: wiki.{train,valid,test}.tokens or
 *     {train,valid,test}.txt (test optional). All but char are trained on the train file
 *     only; the char vocabulary covers all files. train_frac is ignored.
 * kind / vocab_size: the tokenizer to train (see tokenizer_train). given != NULL: use that
 *   tokenizer instead (kind and vocab_size ignored); it belongs to ds from this call on,
 *   and is destroyed with ds, also when loading fails.
 * Only regular files are read (a FIFO or device is refused); empty train or valid files,
 * and train or valid splits under 2 tokens, are errors. Returns LM_OK, or LM_EIO (missing
 * path or file), LM_EARG (not a regular file, text the given tokenizer cannot encode,
 * bad train_frac), LM_EFORMAT (empty, too short, or binary: a NUL byte or over 10%
 * control bytes), LM_ENOMEM; the message in err names
 * the path and what to do. On failure *ds is left zeroed. */
int dataset_load(Dataset *ds, const char *spec, TokenizerKind kind, int vocab_size,
                 double train_frac, Tokenizer *given, char *err);

/* dataset_load with every tokenizer option (tokenizer_train_opts): the wordpiece
 * vocab.txt, lowercase, vocab_from_train. WordPiece's reference vocabulary is built from
 * the train split (the first train_frac of a single file). */
int dataset_load_opts(Dataset *ds, const char *spec, TokenizerKind kind,
                      const TokenizerOptions *opt, double train_frac, Tokenizer *given,
                      char *err);

/* The tokenizer kind and options of a configuration (tokenizer, vocab_size with bpe's
 * default of 1024, vocab, lowercase, vocab_from_train); opt->vocab_path points into c.
 * LM_OK or LM_EARG naming an unknown tokenizer. */
int dataset_tokenizer_options(const Config *c, TokenizerKind *kind,
                              TokenizerOptions *opt, char *err);

/* The dataset a configuration names, with its tokenizer and every tokenizer option
 * (dataset_tokenizer_options + dataset_load_opts): what `train`, `show model`, `import`
 * and `eval` all load. Same results as dataset_load_opts. */
int dataset_load_config(Dataset *ds, const Config *c, Tokenizer *given, char *err);

/* Token files: the splits of a tokformat.h layout with their tokenizer:
 *   - an lmlab cache: its tokenizer.json; refused (LM_EFORMAT) when kind is not the kind
 *     it was prepared with, or given is another tokenizer (its hash differs);
 *   - llm.c's or nanoGPT's files carry no vocabulary: given (a checkpoint's), else the
 *     kind named must have a fixed vocabulary (gpt2; wordpiece with vocab=).
 * Every id is checked against the vocabulary as it is read; the first 64 Ki tokens of
 * each file are checked here, so a wrong tokenizer is refused at once (file, position).
 * *found = 0 (LM_OK, nothing done) when spec is not token files. given: as dataset_load. */
int dataset_open_tokens(Dataset *ds, const char *spec, TokenizerKind kind,
                        const TokenizerOptions *opt, Tokenizer *given, int *found, char *err);

/* Bytes the dataset keeps in the process's own memory: ids held (text), the shard
 * tables and a pread window of B x T per reader (token files). */
unsigned long long dataset_resident_bytes(const Dataset *ds);

/* Frees the splits and the tokenizer and zeroes *ds; a zeroed Dataset is a no-op. */
void dataset_free(Dataset *ds);

/* "train", "valid", "test" ("?" otherwise). */
const char *dataset_split_name(int split);

#endif
