/* bpe.h — byte-level byte-pair encoding (Sennrich et al. 2016; byte-level as in GPT-2):
 * training a merge list on a text, and encoding bytes with it. The internals of the BPE
 * tokenizer; tokenizer.h is the interface the rest of lmlab uses. Not a GPT-2
 * compatible tokenizer: the pre-split is simple hand-written code, not GPT-2's regex, and
 * no byte-to-unicode remapping is done (tokens are raw bytes).
 *
 * Tokens 0..255 are the bytes; token 256+k is merge k, the concatenation of its pair. */
#ifndef LM_BPE_H
#define LM_BPE_H

#include <stddef.h>

typedef struct Bpe Bpe;   /* heap object: bpe_train / bpe_create, bpe_destroy */

/* Learns up to n_merges merges on text (any bytes). The text is first cut into chunks
 * (bpe_chunk_end) so merges never cross a chunk; pair counts are taken over unique
 * chunks weighted by their frequency and updated incrementally after each merge. The most
 * frequent pair is merged first, ties going to the smallest (left id, right id); training
 * stops early when no pair occurs twice. Same text, same merges. LM_OK, or LM_EARG /
 * LM_ENOMEM with a message in err (LM_ERR_LEN bytes). */
int bpe_train(const char *text, size_t len, int n_merges, Bpe **out, char *err);

/* Builds a BPE from a merge list merges (n_merges, 2), e.g. a saved one. Validates that
 * each merge refers only to earlier tokens and that no pair repeats: LM_EFORMAT
 * otherwise, LM_ENOMEM when out of memory. */
int bpe_create(const int *merges, int n_merges, Bpe **out, char *err);

/* Frees everything; NULL is a no-op. */
void bpe_destroy(Bpe *b);

/* 256 + the number of merges. */
int bpe_vocab_size(const Bpe *b);

/* The merge list (n_merges, 2), owned by b. */
const int *bpe_merges(const Bpe *b, int *n_merges);

/* The bytes of token id (0 <= id < bpe_vocab_size), owned by b; *len gets their count. */
const unsigned char *bpe_token_bytes(const Bpe *b, int id, size_t *len);

/* Encodes len bytes (exact for any bytes, NUL included): *ids is malloc'd (caller frees),
 * *n the count. Chunks are encoded once per call (a per-call cache) by applying merges in
 * rank order with a priority queue. LM_OK or LM_ENOMEM. Thread-safe: b is read only. */
int bpe_encode(const Bpe *b, const char *text, size_t len, int **ids, size_t *n, char *err);

#endif
