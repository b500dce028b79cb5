/* tok_gpt2.h — what GPT-2's tokenizer files share (tok_gpt2.c builds and saves the
 * vocabulary, tok_gpt2_encode.c pre-splits and merges): the rank table. Private to
 * core/data. Not a general BPE interface (bpe.h is lmlab's own trainable BPE). */
#ifndef LM_TOK_GPT2_H
#define LM_TOK_GPT2_H

#include "tok_impl.h"

#include <stdint.h>
#include <string.h>

/* The state of a gpt2 tokenizer (Tokenizer.impl). Token id's bytes are the Tokenizer's
 * stored bytes; the rank of a byte string is the id of the token with those bytes. */
typedef struct {
    uint64_t *slot;       /* (mask + 1) the token hashed there: its hash's top 32 bits << 32
                             | its id + 1; 0 empty */
    size_t mask;
    int *pair;            /* (65536) the id of each two-byte token (b0 << 8 | b1), -1 none */
    int byte_id[256];     /* the id of each single byte */
    char *merges;         /* vocab.bpe's merge lines joined by '\n' (saved as "merges") */
    size_t merges_len;
    int n_merges, eot;
} Gpt2;

/* The hash of n bytes the rank table uses (low bits: the slot; top 32: the tag). */
static inline uint64_t tok_gpt2_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 29);
}

/* The id of the token whose bytes are p[0..n) (its BPE rank), -1 when there is none.
 * "<|endoftext|>" is not in the table: in text it is text. */
int tok_gpt2_rank(const Tokenizer *t, const unsigned char *p, size_t n);

/* The encode op of gpt2 (as tokenizer_encode): GPT-2's regex pre-split, each piece
 * merged as tiktoken's byte_pair_merge. Any bytes: one that is not UTF-8 is a piece
 * character of its own class (neither letter, number nor space). */
int tok_gpt2_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                    char *err);

#endif
