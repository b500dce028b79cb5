/* bench_tok.h — how fast each tokenizer encodes on one core: a tokenizer is built as a run
 * would build it (trained on the text for the trainable kinds, read from its files for
 * wordpiece and gpt2), then one thread encodes the whole text until a second has passed
 * (at least twice), and the best pass gives MB/s, in wall time and per CPU-second of the
 * thread. `bench tokenizer` prints it; `bench data`
 * (prepare MB/s on all cores) may reuse it. Not a test: nothing here asserts. */
#ifndef LM_BENCH_TOK_H
#define LM_BENCH_TOK_H

#include "tokenizer.h"

#include <stddef.h>

typedef struct {
    TokenizerKind kind;
    int vocab;            /* the built tokenizer's V */
    double build_s;       /* building (training, or reading its files) */
    size_t bytes, tokens; /* of one pass over the text */
    int passes;
    double best_s;        /* the fastest pass */
    double mb_per_s;      /* bytes / best_s / 1e6 */
    double best_cpu_s;    /* the least CPU time of a pass (its thread's) */
    double mb_per_cpu_s;  /* bytes / best_cpu_s / 1e6: what other jobs on the machine
                             do not change (wall time does: a descheduled thread waits) */
    double first_cpu_s;   /* the first pass's CPU time: caches cold (gpt2 remembers merged
                             pieces per thread, so later passes over the same text gain) */
    double first_mb_per_cpu_s;
} BenchTokResult;

/* Builds a tokenizer of kind (opt as `train` would pass; word, bpe, basic_english learn
 * from at most the first 1 MB of text, char from all of it) and times encoding the len
 * bytes of text on the calling thread. LM_OK, or the build's or encoder's status with the
 * message in err (a missing vocab file, out of memory). */
int bench_tok_encode(TokenizerKind kind, const TokenizerOptions *opt, const char *text,
                     size_t len, BenchTokResult *r, char *err);

#endif
