/* tokshard_util.h — the tests' writer of token files as the readers expect them: llm.c
 * shards (1,024-byte header, uint16 or uint32 tokens; a count can be forged for the
 * truncated-shard tests), nanoGPT's headerless uint16 files, and an lmlab token cache
 * folder (meta.json per docs/data.md, tokenizer.json, shards). Header-only, tests only:
 * lmlab's own writer is the cache's (tokcache). */
#ifndef LM_TOKSHARD_UTIL_H
#define LM_TOKSHARD_UTIL_H

#include "tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes ids as an llm.c shard (width 2 or 4); header_count < 0: the true count. */
static inline int tokshard_write(const char *path, const int *ids, size_t n, int width,
                                 long long header_count)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int32_t h[256] = {0};
    h[0] = width == 2 ? 20240520 : 20240801;
    h[1] = width == 2 ? 1 : 7;
    h[2] = (int32_t)(header_count < 0 ? (long long)n : header_count);
    int ok = fwrite(h, sizeof h, 1, f) == 1;
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char b[4] = {(unsigned char)ids[i], (unsigned char)(ids[i] >> 8),
                              (unsigned char)(ids[i] >> 16), (unsigned char)(ids[i] >> 24)};
        ok = fwrite(b, (size_t)width, 1, f) == 1;
    }
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Writes ids as nanoGPT's headerless uint16 file. */
static inline int tokshard_write_raw16(const char *path, const int *ids, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = 1;
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char b[2] = {(unsigned char)ids[i], (unsigned char)(ids[i] >> 8)};
        ok = fwrite(b, 2, 1, f) == 1;
    }
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* An lmlab cache in dir (existing): tok's tokenizer.json, the train ids cut into shards
 * of at most `per_shard` tokens, valid in one shard, and meta.json last. */
static inline int tokshard_write_cache(const char *dir, const Tokenizer *tok, const int *train,
                                       size_t n_train, const int *valid, size_t n_valid,
                                       size_t per_shard)
{
    char p[1200];
    int width = tokenizer_vocab_size(tok) <= 65536 ? 2 : 4;
    char *json = tokenizer_save(tok);
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    FILE *f = fopen(p, "wb");
    if (!f || !json || fputs(json, f) < 0) return -1;
    fclose(f);
    free(json);
    char shards[4096] = "";
    size_t k = 0;
    for (size_t at = 0; at < n_train; at += per_shard, k++) {
        size_t n = n_train - at < per_shard ? n_train - at : per_shard;
        snprintf(p, sizeof p, "%s/train_%06zu.bin", dir, k);
        if (tokshard_write(p, train + at, n, width, -1)) return -1;
        size_t len = strlen(shards);
        snprintf(shards + len, sizeof shards - len, "%s{\"file\":\"train_%06zu.bin\",\"tokens\":%zu}",
                 k ? "," : "", k, n);
    }
    snprintf(p, sizeof p, "%s/valid_000000.bin", dir);
    if (tokshard_write(p, valid, n_valid, width, -1)) return -1;
    snprintf(p, sizeof p, "%s/meta.json", dir);
    if (!(f = fopen(p, "wb"))) return -1;
    fprintf(f, "{\"format\":\"lmlab-token-cache\",\"version\":1,\"key\":\"0123456789abcdef\","
            "\"tokenizer\":{\"kind\":\"%s\",\"hash\":\"%016llx\",\"vocab_size\":%d,"
            "\"file\":\"tokenizer.json\"},\"eot\":-1,\"sources\":[],"
            "\"options\":{\"train_frac\":0.9,\"text_key\":\"text\",\"strict\":false},"
            "\"splits\":{\"train\":{\"tokens\":%zu,\"documents\":1,\"shards\":[%s]},"
            "\"valid\":{\"tokens\":%zu,\"documents\":1,\"shards\":[{\"file\":"
            "\"valid_000000.bin\",\"tokens\":%zu}]}},\"skipped\":{},\"created\":0,"
            "\"prepare_seconds\":0}\n",
            tokenizer_kind_name(tokenizer_kind(tok)), tokenizer_hash(tok),
            tokenizer_vocab_size(tok), n_train, shards, n_valid, n_valid);
    return fclose(f) == 0 ? 0 : -1;
}

#endif
