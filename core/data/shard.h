/* shard.h — token shard files in llm.c's layout: a 1,024-byte header of 256 little-endian
 * int32 ([0] magic, [1] version, [2] token count, the rest 0), then the tokens
 * little-endian: uint16 (magic 20240520, version 1: llm.c's GPT-2 files) when the
 * vocabulary fits in 65,536, else uint32 (magic 20240801, version 7: llm.c's Llama-3
 * files). This file writes them (the prepare side) and checks a header; reading shards
 * for training is the dataset side's. Not a cache: tokcache.h names and keeps them. */
#ifndef LM_SHARD_H
#define LM_SHARD_H

#include <stddef.h>

#define SHARD_HEADER_BYTES 1024
#define SHARD_MAGIC_U16 20240520
#define SHARD_VERSION_U16 1
#define SHARD_MAGIC_U32 20240801
#define SHARD_VERSION_U32 7
#define SHARD_MAX_TOKENS 100000000ULL   /* lmlab's shards hold at most this many tokens */

/* Bytes per token for a vocabulary of V tokens: 2 or 4. */
int shard_width(int V);

/* Writes a split's tokens as shards "<dir>/<prefix>_NNNNNN.bin" (NNNNNN from 0), each of
 * at most max_tokens (0 = SHARD_MAX_TOKENS). */
typedef struct ShardWriter ShardWriter;

/* LM_OK or LM_ENOMEM; nothing is created until the first token. */
int shard_writer_create(const char *dir, const char *prefix, int width,
                        unsigned long long max_tokens, ShardWriter **out, char *err);

/* Appends n ids (each 0 <= id < 2^(8*width), else LM_EARG). LM_ENOSPC when the disk is
 * full, LM_EIO for other write failures (the message names the file). */
int shard_writer_put(ShardWriter *w, const int *ids, size_t n, char *err);

/* Finishes the open shard (header count written, fsync'd). LM_OK or as put. */
int shard_writer_finish(ShardWriter *w, char *err);

/* Shards written so far, and the tokens of shard i; total tokens. */
int shard_writer_count(const ShardWriter *w);
unsigned long long shard_writer_tokens_of(const ShardWriter *w, int i);
unsigned long long shard_writer_tokens(const ShardWriter *w);
/* Bytes written to disk so far (headers included). */
unsigned long long shard_writer_bytes(const ShardWriter *w);

/* Frees (closing without finishing: the open shard's file stays as it is). */
void shard_writer_destroy(ShardWriter *w);

/* Checks a shard file: header magic/version, and size = 1024 + count * width. *count and
 * *width. LM_OK, LM_EIO (cannot open), LM_EFORMAT naming the file and what is wrong
 * (truncated: the header's count and the size). */
int shard_check(const char *path, unsigned long long *count, int *width, char *err);

/* Sets the header's count of an existing shard to count and truncates it to match
 * (a split cut inside a shard). LM_OK or LM_EIO. */
int shard_truncate(const char *path, unsigned long long count, int width, char *err);

#endif
