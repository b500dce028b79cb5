/* tok_impl.h — what every tokenizer file (tok_*.c) shares with the handle in tokenizer.c:
 * the Tokenizer struct, the operations table a tokenizer kind fills in, the token-table
 * builder and the UTF-8 and word-map helpers. Private to core/data (reached by relative
 * include). Not a plugin interface: kinds are registered at compile time in tokenizer.c. */
#ifndef LM_TOK_IMPL_H
#define LM_TOK_IMPL_H

#include "tokenizer.h"

#include <jansson.h>
#include <stdint.h>

/* One tokenizer kind. Every function gets a tokenizer built by that kind. */
typedef struct {
    /* Trains from text (see tokenizer_train_opts). */
    int (*train)(const char *text, size_t len, const TokenizerOptions *opt, Tokenizer **out,
                 char *err);
    /* Rebuilds from the saved JSON object o ("vocab_size" = V already checked). */
    int (*load)(const json_t *o, int V, Tokenizer **out, char *err);
    /* Adds the kind's keys to the JSON object o; 0 ok, -1 out of memory. */
    int (*save)(const Tokenizer *t, json_t *o);
    /* As tokenizer_encode (ids, n zeroed by the caller). */
    int (*encode)(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                  char *err);
    /* The decoded bytes of token id into out (room for its stored length + 2): returns the
     * length. NULL: the stored bytes as they are. */
    size_t (*decoded)(const Tokenizer *t, int id, char *out);
    /* Frees t->impl (NULL: nothing to free). */
    void (*free_impl)(void *impl);
} TokenizerOps;

struct Tokenizer {
    const TokenizerOps *ops;
    TokenizerKind kind;
    int V;
    size_t *off;          /* (V+1) offsets of each token's stored bytes */
    char *bytes;
    size_t *xoff;         /* (V+1) offsets of each token's decoded bytes */
    char *xbytes;
    size_t *doff;         /* (V+1) offsets of each token's display text, NUL-terminated */
    char *dtext;
    void *impl;           /* the kind's own state, freed by ops->free_impl */
    int eot;              /* the end-of-text token's id, -1 when the kind has none */
    unsigned long long hash;
};

/* The ops of each kind (tok_char.c, tok_word.c, ...). */
/* Every kind's ops, one per line of tokenizers.def (tok_<name>.c defines it). */
#define TOKENIZER(suffix, name) extern const TokenizerOps TOK_##suffix##_OPS;
#include "tokenizers.def"
#undef TOKENIZER

/* A tokenizer of kind with V tokens whose stored bytes total n_bytes (off[0] = 0, the
 * rest for the caller to fill); NULL when out of memory. */
Tokenizer *tok_alloc(TokenizerKind kind, int V, size_t n_bytes);

/* Once off/bytes (and impl) are in place: the decoded and display tables and the hash.
 * On failure destroys t. LM_OK or LM_ENOMEM. */
int tok_finish(Tokenizer *t, char *err);

/* Builds t with tok_finish into *out, or destroys it: the common tail of every build. */
int tok_done(Tokenizer *t, Tokenizer **out, char *err);

/* ---- UTF-8 (strict: no overlongs, surrogates or values above U+10FFFF) ---- */

/* The code point at s[i] and its length; an invalid byte b gives U+DC00 + b, length 1. */
int tok_utf8_next(const unsigned char *s, size_t n, size_t i, uint32_t *cp);
/* Writes cp as UTF-8 (U+DC80..U+DCFF: the raw byte); returns its length. */
int tok_utf8_put(uint32_t cp, char *out);
/* 1 when the n bytes are valid UTF-8. */
int tok_utf8_valid(const char *p, size_t n);
/* Printable form of len bytes into out (room for 4 * len + 1); returns its length. */
size_t tok_escape_bytes(const char *p, size_t len, char *out);

/* ASCII whitespace: space, \t, \n, \v, \f, \r. */
static inline int tok_is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* ---- word -> entry index, open addressing over keys held as (pointer, length) ---- */
typedef struct {
    int *slot;            /* (cap) entry + 1, 0 = empty */
    size_t cap;
    const char **key;     /* (ecap) */
    size_t *klen;         /* (ecap) */
    long long *count;     /* (ecap) occurrences, for training */
    int n, ecap;
} WordMap;

void wordmap_free(WordMap *m);
/* Entry of word s (n bytes): found, or added (count 0) when add; -1 absent, -2 no memory.
 * With add = 0 it only reads m. */
int wordmap_get(WordMap *m, const char *s, size_t n, int add);
/* Counts one occurrence of word w (n bytes) in the WordMap ctx; -1 out of memory. */
int wordmap_count(void *ctx, const char *w, size_t n);
/* Fills m from the V stored tokens of t (each must be distinct): LM_OK, LM_EFORMAT naming
 * the repeated token, or LM_ENOMEM. */
int wordmap_index(WordMap *m, const Tokenizer *t, char *err);

/* ---- vocabularies of words (word, basic_english, wordpiece: tok_word.c) ---- */
typedef struct {
    WordMap map;          /* stored token -> id */
    int unk, eos;         /* ids of "<unk>" / "<eos>" ("[UNK]" for wordpiece), -1 absent */
    int lowercase;        /* wordpiece: BERT's uncased normalisation */
    int from_train;       /* wordpiece: the reference pipeline's vocabulary */
    void *extra;          /* the kind's further state (wordpiece: BERT's pieces), owned */
    void (*free_extra)(void *extra);
} WordImpl;

/* How tok_words_build sets up the WordImpl: unk from unk_name, eos from "<eos>", the rest
 * copied. extra is taken over: freed with free_extra also when the build fails. */
typedef struct {
    const char *unk_name;
    int lowercase, from_train;
    void *extra;
    void (*free_extra)(void *extra);
} WordsSetup;

/* A tokenizer of kind over n distinct words (pointer, length), ids in that order, with a
 * WordImpl set up from *su. LM_OK, LM_EFORMAT (a repeated word), LM_ENOMEM. */
int tok_words_build(TokenizerKind kind, const char *const *w, const size_t *wl, int n,
                    const WordsSetup *su, Tokenizer **out, char *err);
/* Adds the stored tokens as o[key] (strings; byte arrays for non-UTF-8). 0 ok, -1 no memory. */
int tok_words_save(const Tokenizer *t, json_t *o, const char *key);
/* Reads o[key] (V non-empty words without whitespace) and builds as tok_words_build. */
int tok_words_load(const json_t *o, const char *key, TokenizerKind kind, int V,
                   const WordsSetup *su, Tokenizer **out, char *err);
/* Frees a WordImpl (the free_impl of the word-vocabulary kinds). */
void tok_words_free(void *impl);
/* Ranks the n entries of m by falling count; ties by id (by_name = 0) or by bytes
 * (by_name = 1, Python's code point order). Returns a malloc'd array of n ids, NULL when
 * out of memory. */
int *tok_rank_words(const WordMap *m, int by_name);

#endif
