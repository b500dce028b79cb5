/* dataset.h — a corpus as token ids (train, valid, test) and the batchers that cut
 * (B,T) windows from a split for training and evaluation. Follows the seed recipes:
 * a single text file splits like the notebook's prepare_data (first train_frac of the
 * tokens), stream batching like PyTorch word_language_model's batchify/get_batch, random
 * batching like the notebook's get_batch (nanoGPT). Not a streaming loader: every split
 * is held in memory as int32 ids (a few MB for the corpora lmlab targets). */
#ifndef LM_DATASET_H
#define LM_DATASET_H

#include <stddef.h>

#include "config.h"
#include "rng.h"
#include "tokenizer.h"

enum { SPLIT_TRAIN, SPLIT_VALID, SPLIT_TEST };

typedef struct {
    char name[256];           /* "tinyshakespeare", "wikitext-small", or the path given */
    char source[1024];        /* resolved path(s) */
    unsigned long long hash;  /* FNV-1a of the raw bytes of every file read, in order */
    Tokenizer *tok;           /* owned */
    int *split[3];            /* (n[s]) token ids of train, valid, test */
    size_t n[3];              /* test may be empty (n = 0, split NULL) */
    size_t n_chars;           /* code points of the valid split, for bits per character */
} Dataset;

/* Loads spec into *ds (caller-owned struct; free with dataset_free).
 * spec: a bundled name without '/' (looked up in $LMLAB_DATA, then LMLAB_DATA_DIR, as
 *   "<dir>/<name>.txt" or a "<dir>/<name>/" directory), else a path:
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

/* Frees the splits and the tokenizer and zeroes *ds; a zeroed Dataset is a no-op. */
void dataset_free(Dataset *ds);

/* "train", "valid", "test" ("?" otherwise). */
const char *dataset_split_name(int split);

typedef enum { BATCH_STREAM, BATCH_RANDOM } BatchMode;

/* "stream" | "random" -> *mode. 0 ok, -1 unknown. */
int batcher_mode_parse(const char *name, BatchMode *mode);

typedef struct {
    const int *data;          /* (n) token ids, not owned */
    size_t n;
    int B, T;
    BatchMode mode;
    size_t stream_len;        /* stream: tokens per stream, n / B */
    size_t per_epoch;         /* random: batches per epoch, n / (B*T), at least 1 */
    size_t pos;               /* stream: offset of the next window in each stream;
                                 random: batches drawn in this epoch */
    unsigned long long epoch; /* completed epochs */
    Rng rng;                  /* random: window starts */
} Batcher;

/* Sets up batching of data (n ids, kept by the caller while b is used) into (B,T)
 * windows. Stream: the data trimmed to a multiple of B and cut into B contiguous streams,
 * read in consecutive windows of T. Random: B windows with starts uniform over
 * [0, n - T - 1) per batch, n / (B*T) batches to an epoch. */
void batcher_init(Batcher *b, const int *data, size_t n, int B, int T, BatchMode mode,
                  unsigned long long seed);

/* Writes the next batch: x, y (B, L) batch-major and packed, y[b,t] the token after
 * x[b,t], and returns L: T, or less for the last window of a stream epoch (and, in random
 * mode, when n < T + 2: n - 2). *new_epoch (may be NULL) is 1 when this call started a
 * new epoch. Returns 0 when the data is too short for any window (stream: n < 2B;
 * random: n < 3). x and y need room for B*T ints. Never allocates. */
int batcher_next(Batcher *b, int *x, int *y, int *new_epoch);

/* Fractional epochs done (epoch + the fraction of the current one). */
double batcher_epoch(const Batcher *b);

/* The state for an exact resume: pos, epoch and the RNG. set_state on a batcher
 * initialised with the same data, B, T and mode continues the same sequence. */
void batcher_get_state(const Batcher *b, unsigned long long state[4]);
void batcher_set_state(Batcher *b, const unsigned long long state[4]);

#endif
