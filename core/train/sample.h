/* sample.h — text generation: prompt, temperature, top-k, top-p (nucleus), greedy, seed;
 * tokens streamed to a callback as they are produced. Uses the model's incremental
 * cache when it has one (Dispatcher heads=1: per-level cache; MSA: key/value cache;
 * recurrent: hidden state; linear: sliding window) and otherwise recomputes the window.
 * Past the cache's reach (MSA and learned positions: bptt; sinusoidal Dispatcher: 5000
 * positions, the reference's max_len) the context slides: the cache is re-primed with
 * the last bptt/2 tokens, so a long text costs one half-window pass every bptt/2 tokens
 * instead of a full pass per token. Not here: where the weights come from. */
#ifndef LM_SAMPLE_H
#define LM_SAMPLE_H

#include "model.h"
#include "tokenizer.h"

#include <stdint.h>

typedef struct {
    int n_tokens;          /* tokens to generate */
    float temperature;     /* <= 0: greedy */
    int top_k;             /* 0 = off */
    float top_p;           /* 1 = off */
    uint64_t seed;
    int use_cache;         /* 1 (default): incremental decoding when the model has it */
    int slide_positions;   /* 1: cached decoding re-primes whenever the position reaches
                              bptt, so positions stay inside the training window;
                              0 (default): they count on to the cache's reach */
} SampleOptions;

typedef struct {
    int prompt_tokens, generated;
    double seconds, tokens_per_s;
    int cached;            /* 1 when the incremental cache was used */
} SampleStats;

/* Receives each generated token's bytes; return non-zero to stop early. */
typedef int (*SampleCallback)(void *ud, const char *piece, size_t len);

void sample_options_default(SampleOptions *o);

/* Generates after `prompt` with m (allocated for at least B=1, T=bptt; switched to eval
 * mode and back). *text (malloc'd, may be NULL to skip) receives the generated text.
 * LM_EARG: prompt not encodable (the message names the character) or bad options. */
int sample_generate(Model *m, const Tokenizer *tok, const char *prompt, const SampleOptions *o,
                    SampleCallback cb, void *ud, char **text, SampleStats *stats, char *err);

/* The words of prompt that a word tokenizer does not know (encoded as <unk>), space
 * separated into list (cap bytes, truncated at a word); returns how many there are.
 * 0 for char and bpe tokenizers, which encode every text exactly or refuse it. */
int sample_unknown_words(const Tokenizer *tok, const char *prompt, char *list, size_t cap);

#endif
