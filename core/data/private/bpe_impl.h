/* bpe_impl.h — what bpe.c (the Bpe object, the pre-split, encoding) shares with
 * bpe_train.c (learning the merges): the pair key and its hash, the map of a text's
 * distinct chunks and the chunk boundary. Private to core/data. Not the interface:
 * bpe.h is. */
#ifndef LM_BPE_IMPL_H
#define LM_BPE_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* The key of pair (a, b) in the open-addressing tables (never 0, which marks an empty
 * slot), and a key's hash. */
static inline uint64_t pair_key(int a, int b)
{
    return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1;
}

static inline size_t hash64(uint64_t k)
{
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33;
    return (size_t)k;
}

/* The distinct chunks of one text: chunk bytes (pointing into the text) -> an entry with
 * two values for the user (training: the count; encoding: where its ids are, how many). */
typedef struct {
    const unsigned char *s;       /* the text */
    size_t *slot, cap;            /* (cap) entry index + 1, 0 = empty */
    size_t n, ecap;
    size_t *start, *len, *val, *val2;  /* (ecap) */
} ChunkMap;

/* Frees the map's arrays (not the text). */
void bpe_chunkmap_free(ChunkMap *c);
/* Entry of the chunk s[i..i+L), added with values 0 (*added = 1) when new; -1 when out
 * of memory. */
long bpe_chunkmap_get(ChunkMap *c, size_t i, size_t L, int *added);

/* The end of the pre-split chunk starting at byte i of s (len bytes): a contraction
 * ('s 't 'm 'd 're 've 'll), an optional space followed by a run of letters (ASCII letters
 * and all bytes >= 0x80), of digits, or of other non-space bytes, or a run of whitespace
 * (whose last space is left to the next word when one follows, like GPT-2's \s+(?!\S)). */
size_t bpe_chunk_end(const unsigned char *s, size_t len, size_t i);

#endif
