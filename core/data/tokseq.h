/* tokseq.h — a split's token ids as one sequence with 64-bit positions, held in memory
 * (int32 ids of a text tokenized at load) or over token shard files that are never held:
 * each read is a pread of the window asked for into the caller's buffer, so the process's
 * own memory does not grow with the corpus and nothing is mapped (the kernel's page cache
 * keeps what was read, reclaimable and shared by every process reading the same files; a
 * long run pins none of it). Files: llm.c's shard layout (a 1,024-byte header of 256
 * little-endian int32: magic, version, token count; uint16 tokens for magic 20240520
 * version 1, uint32 for 20240801 version 7) and nanoGPT's headerless uint16 train.bin /
 * val.bin. Every id read is checked against the vocabulary (file and position named), and
 * every read against the file's size and modification time when it was opened (a file
 * written in place or truncated under a run would give other tokens without an error).
 * Not here: which files make a corpus (tokformat.h), writing shards (tokcache). */
#ifndef LM_TOKSEQ_H
#define LM_TOKSEQ_H

#include <stddef.h>
#include <stdint.h>

#define TOKSEQ_MAGIC16 20240520   /* llm.c: uint16 tokens, version 1 */
#define TOKSEQ_MAGIC32 20240801   /* llm.c: uint32 tokens, version 7 */
#define TOKSEQ_HEADER 1024        /* bytes of an llm.c header */

typedef struct {
    int fd;
    int width;                 /* bytes per token: 2 or 4 */
    uint64_t offset;           /* bytes before the first token: TOKSEQ_HEADER or 0 */
    uint64_t start, n;         /* logical position of its first token; its tokens */
    int64_t size;              /* st_size when opened */
    int64_t mtime_ns;          /* st_mtim when opened: a write in place changes it */
    char path[1024];
} TokShard;

typedef struct {
    int *mem;                  /* in memory: (n) ids, owned; NULL over files */
    TokShard *shard;           /* over files: (n_shards), in order */
    int n_shards;
    uint64_t n;                /* tokens of the whole sequence */
    int vocab;                 /* ids >= vocab are refused on reading (0: not checked) */
    int cache;                 /* lmlab's own prepared tokens (tokcache): an id beyond the
                                  vocabulary is damage, not another tokenizer's file */
} TokSeq;

/* A sequence over n ids in memory; takes ids (malloc'd) from the caller. */
void tokseq_init_memory(TokSeq *s, int *ids, uint64_t n);

/* Appends a token file to s (a zeroed TokSeq to start): headerless = nanoGPT's uint16
 * file, else an llm.c shard whose header must be valid and whose size must be exactly
 * 1024 + count * width. expect > 0: the token count a listing gives for it (a cache's
 * meta.json), checked too. LM_OK, LM_EIO (cannot open or read), LM_EFORMAT (not a token
 * file, truncated, or another count than expected; the message names the file, the
 * header's count and the size), LM_ENOMEM. */
int tokseq_add_file(TokSeq *s, const char *path, int headerless, uint64_t expect, char *err);

/* Reads ids [pos, pos + n) into out (n ints), across shard boundaries. LM_OK; LM_EARG
 * (past the end), LM_EIO (a read failed or came short, or the file's size or modification
 * time is no longer what it was when it was opened: it was written in place, truncated or
 * copied over while being read, so what was read may be other tokens; the message names
 * the file, what changed and what to do), LM_EFORMAT (an id >= s->vocab: the file, the
 * token's position in it and the vocabulary named). Never allocates; safe from several
 * threads at once. */
int tokseq_read(const TokSeq *s, uint64_t pos, size_t n, int *out, char *err);

/* Checks every id of [pos, pos + n) against s->vocab in windows of `scratch` (cap ints).
 * LM_OK or tokseq_read's errors. */
int tokseq_check(const TokSeq *s, uint64_t pos, uint64_t n, int *scratch, size_t cap,
                 char *err);

/* Bytes the sequence keeps in the process's own memory (the ids in memory; over files a
 * few hundred bytes per shard). */
uint64_t tokseq_resident_bytes(const TokSeq *s);

/* Bytes of the token files on disk (0 in memory). */
uint64_t tokseq_file_bytes(const TokSeq *s);

/* Closes the files, frees the ids and zeroes *s; a zeroed TokSeq is a no-op. */
void tokseq_free(TokSeq *s);

#endif
