/* tokcache.h — the token cache: a corpus (corpus.h) tokenized once into llm.c-layout
 * shards (shard.h) in <root>/<16 hex key>/ beside the run store, with tokenizer.json and
 * meta.json (written last, atomically: a directory without it is an incomplete prepare).
 * The key is the corpus's resolved paths plus the tokenizer's kind and options (or a given
 * tokenizer's hash) plus the split options; meta.json records each source's size, mtime
 * and content hash, so a source changed since makes the cache stale. Preparing streams
 * (the corpus is never held whole), trains the vocabulary on a bounded sample (see
 * docs/data_prepare.md), encodes on every core and reports progress through a callback.
 * Not a reader for training: the dataset side opens dir/meta.json and maps the shards. */
#ifndef LM_TOKCACHE_H
#define LM_TOKCACHE_H

#include <stddef.h>

#include "config.h"
#include "tokenizer.h"

#define TOKCACHE_DIR_NAME "lmlab-tokens"
#define TOKCACHE_KEY_LEN 16
/* Bytes of text the trained tokenizers (word, bpe, basic_english, wordpiece's
 * vocab_from_train) are trained on at most: the first train_frac of the corpus's text as
 * today, capped here (the char vocabulary is always exact over the whole corpus). */
#define TOKCACHE_VOCAB_SAMPLE ((size_t)64 << 20)

typedef struct {
    const char *spec;           /* data=: bundled name, file, directory, .jsonl, compressed, list */
    TokenizerKind kind;         /* the tokenizer to build, with opt (ignored when given) */
    TokenizerOptions opt;
    const Tokenizer *given;     /* a tokenizer to use as it is (not owned), or NULL */
    double train_frac;          /* share of the stream's tokens in train (the rest: valid);
                                   ignored by a WikiText layout (its files are the splits) */
    const char *text_key;       /* jsonl: the document's key; NULL = "text" */
    int strict;                 /* refuse binary documents and bad jsonl lines */
    int threads;                /* encoding threads; 0 = every core */
    const char *root;           /* the cache root (tokcache_root) */
    int force;                  /* prepare again even when a fresh cache exists */
    size_t vocab_sample;        /* 0 = TOKCACHE_VOCAB_SAMPLE */
    unsigned long long shard_tokens; /* tokens per shard; 0 = SHARD_MAX_TOKENS (tests: small) */
    size_t piece_bytes;         /* text read before a piece is cut; 0 = 1 MiB (tests: small) */
} TokCacheRequest;

typedef enum {
    TOKCACHE_NOTE,              /* message: what was found (fresh, stale, incomplete) or done */
    TOKCACHE_LIST,              /* listing a directory's files: tokens = entries so far */
    TOKCACHE_SCAN,              /* first pass: reading, hashing, collecting the vocabulary sample */
    TOKCACHE_VOCAB,             /* training the tokenizer */
    TOKCACHE_ENCODE,            /* second pass: encoding and writing shards */
    TOKCACHE_DONE               /* the cache is in place (message says so) */
} TokCachePhase;

typedef struct {
    TokCachePhase phase;
    const char *message;        /* NOTE / DONE: one line for the user; else NULL */
    const char *key;            /* the cache's key */
    unsigned long long bytes_done, bytes_total;   /* source bytes on disk in this pass */
    unsigned long long tokens;  /* tokens written so far */
    double seconds;             /* since this pass began */
    double mb_per_s;            /* source MB/s in this pass */
    double eta_seconds;         /* < 0: unknown */
} TokCacheProgress;

/* "note", "list", "scan", "vocab", "encode", "done". */
const char *tokcache_phase_name(TokCachePhase p);

/* Called from the preparing thread at most ~10 times a second and at each phase change;
 * returning nonzero stops the prepare (LM_ECANCEL, nothing kept). */
typedef int (*TokCacheProgressFn)(const TokCacheProgress *p, void *ud);

/* The cache root for a run store at db_path: tokens_dir when set and non-empty, else
 * "<directory of db_path>/lmlab-tokens". LM_OK or LM_EARG (too long). */
int tokcache_root(const char *db_path, const char *tokens_dir, char *out, size_t cap, char *err);

/* A request from a configuration: data, tokenizer and its options (dataset_tokenizer_options),
 * train_frac, text_key, strict, threads; root and given as passed (given may be NULL).
 * Strings point into c. LM_OK or LM_EARG. */
int tokcache_request_config(TokCacheRequest *req, const Config *c, const char *root,
                            const Tokenizer *given, char *err);

/* The key of a request (16 hex + NUL into key): resolves the spec (corpus_open with
 * roots_only) without listing a directory's files or reading any: instant for any
 * directory. LM_OK or corpus_open's errors (a missing path, a system directory). */
int tokcache_key(const TokCacheRequest *req, char key[TOKCACHE_KEY_LEN + 1], char *err);

/* The cache of req, prepared now or found fresh: its directory into dir_out. A cache
 * found incomplete (no meta.json: an interrupted prepare) or stale (a source changed, a
 * file added or gone) is said so through fn (TOKCACHE_NOTE) and prepared again; a fresh
 * one is said so and used. Refused before starting when the disk cannot hold the
 * estimated shards (LM_ENOSPC with the space needed and free). On any failure nothing of
 * the new prepare is kept (an older cache stays as it was). LM_OK; LM_EIO, LM_EFORMAT,
 * LM_EARG from reading the corpus and building the tokenizer (messages name the file);
 * LM_ENOSPC (the disk filled: the message says how much space is needed); LM_ECANCEL. */
int tokcache_ensure(const TokCacheRequest *req, TokCacheProgressFn fn, void *ud,
                    char *dir_out, size_t cap, char *err);

/* ---- listing and removing (lmlab data list | rm) ---- */

typedef enum { TOKCACHE_FRESH, TOKCACHE_STALE, TOKCACHE_INCOMPLETE, TOKCACHE_DAMAGED } TokCacheState;

typedef struct {
    char key[TOKCACHE_KEY_LEN + 1];
    char dir[1100];
    TokCacheState state;
    char why[512];              /* stale / incomplete / damaged: what; fresh: "" */
    unsigned long long bytes;   /* on disk */
    unsigned long long tokens[3];  /* train, valid, test */
    char tokenizer[32];         /* kind name */
    int vocab_size;
    char sources[1024];         /* the corpus's roots (comma list), or the first sources */
    int n_sources;
    long long created;          /* unix seconds; 0 unknown */
} TokCacheEntry;

/* "fresh", "stale", "incomplete", "damaged". */
const char *tokcache_state_name(TokCacheState s);

/* Every cache directory under root (sorted by key) into *out (malloc'd, caller frees),
 * *n entries; a missing root is 0 entries. LM_OK, LM_EIO, LM_ENOMEM. */
int tokcache_list(const char *root, TokCacheEntry **out, int *n, char *err);

/* The state of one cache directory (as tokcache_list fills an entry). */
void tokcache_inspect(const char *dir, TokCacheEntry *e);

/* 1 when key has a cache directory under root, or the .tmp- directory of a prepare (at
 * work or interrupted), whose path goes into dir (cap bytes); else 0. */
int tokcache_find(const char *root, const char *key, char *dir, size_t cap);

/* 1 when a process reads a shard of cache directory dir (tokseq holds a shared flock on
 * each token file it has open): deleting it frees its space only when that reader ends. */
int tokcache_in_use(const char *dir);

/* Removes the cache of key under root (its directory, every file in it, an interrupted
 * prepare's .tmp- directory, its lock file), holding the key's lock. LM_OK, LM_EARG (not a
 * 16-hex key, or no such cache), LM_ESTATE (a prepare of the key is at work: nothing
 * removed; the message names its process), LM_EIO. */
int tokcache_remove(const char *root, const char *key, char *err);

#endif
