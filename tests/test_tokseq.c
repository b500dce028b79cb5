/* test_tokseq.c — reading token files as they are (tokseq.h, tokformat.h, dataset's
 * dataset_open_tokens): llm.c shards of uint16 and uint32 tokens, nanoGPT's headerless
 * train.bin/val.bin, a comma list, an lmlab cache folder; reads across shard boundaries;
 * the bad inputs (a truncated shard, a forged header count, an odd headerless size, an id
 * beyond the vocabulary with its file and position, a cache made by another tokenizer, a
 * tokenizer without a vocabulary of its own, a folder without a validation split); and
 * 64-bit positions over sparse shards of a logical size past 2^32 tokens (stream and
 * random batching, epochs, reads at the far end), without 4 GB of disk. */
#include "check.h"
#include "dataset.h"
#include "err.h"
#include "tokformat.h"
#include "tokshard_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp[256];

static void path_in(char *p, size_t cap, const char *sub, const char *name)
{
    snprintf(p, cap, "%s/%s%s%s", tmp, sub, *sub ? "/" : "", name);
}

static void mkdir_in(const char *sub)
{
    char p[512];
    path_in(p, sizeof p, sub, "");
    mkdir(p, 0755);
}

/* A wordpiece vocabulary of V lines ([UNK] first): a tokenizer that covers ids < V. */
static TokenizerOptions wordpiece_vocab(int V)
{
    static char p[512];
    path_in(p, sizeof p, "", "vocab.txt");
    FILE *f = fopen(p, "w");
    fprintf(f, "[UNK]\n");
    for (int i = 1; i < V; i++) fprintf(f, "w%d\n", i);
    fclose(f);
    TokenizerOptions o = {.vocab_path = p};
    return o;
}

static void test_llmc(void)
{
    enum { N = 5000 };
    static int ids[N];
    for (int i = 0; i < N; i++) ids[i] = (i * 7919) % 300;
    char p[512], err[LM_ERR_LEN];
    mkdir_in("llmc");
    path_in(p, sizeof p, "llmc", "tiny_train_000001.bin");
    CHECK(!tokshard_write(p, ids, 3000, 2, -1), "write");
    path_in(p, sizeof p, "llmc", "tiny_train_000002.bin");
    CHECK(!tokshard_write(p, ids + 3000, 1500, 4, -1), "write uint32");
    path_in(p, sizeof p, "llmc", "tiny_val_000000.bin");
    CHECK(!tokshard_write(p, ids + 4500, 500, 2, -1), "write");
    TokenizerOptions o = wordpiece_vocab(300);
    Dataset ds;
    int found = 0;
    path_in(p, sizeof p, "", "llmc");
    int rc = dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err);
    CHECK(rc == LM_OK && found && ds.format == TOKFORMAT_LLMC, "llm.c folder: %s", err);
    CHECK(ds.n[0] == 4500 && ds.n[1] == 500 && ds.split[0].n_shards == 2, "sizes %zu %zu",
          ds.n[0], ds.n[1]);
    int out[600];
    CHECK(tokseq_read(&ds.split[0], 2800, 400, out, err) == LM_OK &&
          !memcmp(out, ids + 2800, sizeof(int) * 400), "a read across uint16 -> uint32: %s", err);
    CHECK(tokseq_read(&ds.split[1], 0, 500, out, err) == LM_OK &&
          !memcmp(out, ids + 4500, sizeof(int) * 500), "valid: %s", err);
    CHECK(tokseq_read(&ds.split[0], 4400, 200, out, err) == LM_EARG, "past the end refused");
    CHECK(dataset_resident_bytes(&ds) < 4096, "nothing held: %llu bytes",
          dataset_resident_bytes(&ds));
    dataset_free(&ds);

    /* an id beyond the vocabulary: refused at open (the first window), naming file and position */
    ids[4600] = 299;
    o = wordpiece_vocab(299);   /* ids < 299 only */
    path_in(p, sizeof p, "llmc", "tiny_val_000000.bin");
    tokshard_write(p, ids + 4500, 500, 2, -1);
    path_in(p, sizeof p, "", "llmc");
    rc = dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "tiny_") && strstr(err, "beyond the tokenizer's vocabulary of 299"),
          "id beyond vocab: %s", err);
    printf("  %s\n", err);

    /* a truncated shard, and a header that lies */
    o = wordpiece_vocab(300);
    path_in(p, sizeof p, "llmc", "tiny_val_000000.bin");
    tokshard_write(p, ids + 4500, 500, 2, -1);
    truncate(p, 1024 + 999);
    path_in(p, sizeof p, "", "llmc");
    rc = dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "truncated") && strstr(err, "500 tokens") &&
          strstr(err, "2023 bytes"), "truncated: %s", err);
    printf("  %s\n", err);
    path_in(p, sizeof p, "llmc", "tiny_val_000000.bin");
    tokshard_write(p, ids + 4500, 500, 2, 700);
    path_in(p, sizeof p, "", "llmc");
    CHECK(dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err) == LM_EFORMAT &&
          strstr(err, "700 tokens"), "forged count: %s", err);
    path_in(p, sizeof p, "llmc", "tiny_val_000000.bin");
    FILE *f = fopen(p, "wb");
    fputs("not a shard at all, just some text that is long enough", f);
    fclose(f);
    path_in(p, sizeof p, "", "llmc");
    CHECK(dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err) == LM_EFORMAT,
          "not a shard: %s", err);
    path_in(p, sizeof p, "llmc", "tiny_val_000000.bin");
    unlink(p);
    path_in(p, sizeof p, "", "llmc");
    CHECK(dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err) == LM_EFORMAT &&
          strstr(err, "no validation split"), "no val: %s", err);

    /* a tokenizer that learns its vocabulary from text cannot name the ids */
    path_in(p, sizeof p, "llmc", "tiny_val_000000.bin");
    tokshard_write(p, ids + 4500, 500, 2, -1);
    path_in(p, sizeof p, "", "llmc");
    CHECK(dataset_open_tokens(&ds, p, TOKENIZER_CHAR, &o, NULL, &found, err) == LM_EARG &&
          strstr(err, "without their vocabulary"), "char: %s", err);
}

static void test_nanogpt_and_list(void)
{
    enum { N = 3000 };
    static int ids[N];
    for (int i = 0; i < N; i++) ids[i] = (i * 31) % 250;
    char p[512], q[1100], err[LM_ERR_LEN];
    mkdir_in("nano");
    path_in(p, sizeof p, "nano", "train.bin");
    tokshard_write_raw16(p, ids, 2500);
    path_in(p, sizeof p, "nano", "val.bin");
    tokshard_write_raw16(p, ids + 2500, 500);
    TokenizerOptions o = wordpiece_vocab(250);
    Dataset ds;
    int found;
    path_in(p, sizeof p, "", "nano");
    int rc = dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err);
    CHECK(rc == LM_OK && ds.format == TOKFORMAT_NANOGPT && ds.n[0] == 2500 && ds.n[1] == 500,
          "nanoGPT: %s", err);
    int out[500];
    CHECK(tokseq_read(&ds.split[1], 0, 500, out, err) == LM_OK &&
          !memcmp(out, ids + 2500, sizeof out), "val.bin ids: %s", err);
    dataset_free(&ds);
    /* the same files as a list */
    char a[512], b[512];
    path_in(a, sizeof a, "nano", "train.bin");
    path_in(b, sizeof b, "nano", "val.bin");
    snprintf(q, sizeof q, "%s,%s", a, b);
    rc = dataset_open_tokens(&ds, q, TOKENIZER_WORDPIECE, &o, NULL, &found, err);
    CHECK(rc == LM_OK && ds.format == TOKFORMAT_LIST && ds.n[0] == 2500 && ds.n[1] == 500,
          "list: %s", err);
    dataset_free(&ds);
    /* an odd size */
    int fd = open(b, O_WRONLY | O_APPEND);
    CHECK(write(fd, "x", 1) == 1, "append");
    close(fd);
    rc = dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "odd size"), "odd: %s", err);
    /* text is not token files */
    path_in(p, sizeof p, "", "vocab.txt");
    CHECK(dataset_open_tokens(&ds, p, TOKENIZER_CHAR, &o, NULL, &found, err) == LM_OK && !found,
          "text: not found");
    /* a headerless .bin not named train.bin/val.bin is not token files either (the text
     * path refuses it as binary), alone or first in a list; named so, it is */
    path_in(p, sizeof p, "", "prog.bin");
    tokshard_write_raw16(p, ids, 2500);
    CHECK(dataset_open_tokens(&ds, p, TOKENIZER_WORDPIECE, &o, NULL, &found, err) == LM_OK && !found,
          "a headerless prog.bin is not token files: %s", err);
    snprintf(q, sizeof q, "%s,%s", p, b);
    CHECK(dataset_open_tokens(&ds, q, TOKENIZER_WORDPIECE, &o, NULL, &found, err) == LM_OK && !found,
          "nor first in a list: %s", err);
    CHECK(tokformat_detect(a) == TOKFORMAT_LIST, "train.bin by its name is token files");
    path_in(p, sizeof p, "", "shard.bin");
    tokshard_write(p, ids, 2500, 2, -1);
    CHECK(tokformat_detect(p) == TOKFORMAT_LIST, "an llm.c shard by its header is token files");
}

/* A token file changed under an open sequence: written in place (the same size, a new
 * modification time) or truncated is refused at the next read, naming what changed; one
 * replaced by rename keeps the old inode open, still the same tokens, and reads on. */
static void test_changed_under(void)
{
    enum { N = 1000 };
    static int ids[N];
    for (int i = 0; i < N; i++) ids[i] = (i * 7) % 250;
    char p[512], q[512], err[LM_ERR_LEN];
    mkdir_in("chg");
    path_in(p, sizeof p, "chg", "train.bin");
    tokshard_write_raw16(p, ids, N);
    TokSeq s = {0};
    s.vocab = 250;
    int out[N];
    CHECK(tokseq_add_file(&s, p, 1, 0, err) == LM_OK, "open: %s", err);
    CHECK(tokseq_read(&s, 0, N, out, err) == LM_OK && !memcmp(out, ids, sizeof out), "read");
    path_in(q, sizeof q, "chg", "new.bin");   /* replaced by rename: the old tokens read on */
    tokshard_write_raw16(q, ids + 1, N - 1);
    CHECK(!rename(q, p), "rename");
    CHECK(tokseq_read(&s, 0, N, out, err) == LM_OK && !memcmp(out, ids, sizeof out),
          "a file replaced by rename: %s", err);
    tokseq_free(&s);
    s.vocab = 250;
    CHECK(tokseq_add_file(&s, p, 1, 0, err) == LM_OK, "open: %s", err);
    int fd = open(p, O_WRONLY);
    unsigned char zero[64] = {0};
    struct timespec later[2] = {{0, UTIME_OMIT}, {2000000000, 0}};   /* a time of its own */
    CHECK(fd >= 0 && pwrite(fd, zero, sizeof zero, 0) == (ssize_t)sizeof zero &&
          !futimens(fd, later), "write in place");
    int rc = tokseq_read(&s, 100, 10, out, err);
    CHECK(rc == LM_EIO && strstr(err, "train.bin' was changed while this run read it (modified "
                                        "at ") && strstr(err, "written in place or touched") &&
          strstr(err, "put the file back as it was"), "written in place: %d %s", rc, err);
    CHECK(!ftruncate(fd, 100), "truncate");
    close(fd);
    tokseq_free(&s);
    s.vocab = 250;
    CHECK(tokseq_add_file(&s, p, 1, 0, err) == LM_OK, "open: %s", err);
    CHECK(!truncate(p, 40), "truncate");
    rc = tokseq_read(&s, 10, 5, out, err);
    CHECK(rc == LM_EIO && strstr(err, "its size went from 100 to 40 bytes"), "truncated: %s", err);
    tokseq_free(&s);
}

static void test_cache(void)
{
    const char *text = "the quick brown fox jumps over the lazy dog. ";
    Tokenizer *tok = NULL, *other = NULL;
    char err[LM_ERR_LEN], p[512];
    CHECK(tokenizer_train(TOKENIZER_CHAR, text, strlen(text), 0, &tok, err) == LM_OK, "%s", err);
    CHECK(tokenizer_train(TOKENIZER_CHAR, "abc", 3, 0, &other, err) == LM_OK, "%s", err);
    enum { N = 4000 };
    static int ids[N];
    int V = tokenizer_vocab_size(tok);
    for (int i = 0; i < N; i++) ids[i] = (i * 13) % V;
    mkdir_in("cache");
    path_in(p, sizeof p, "", "cache");
    CHECK(!tokshard_write_cache(p, tok, ids, 3600, ids + 3600, 400, 1000), "cache");
    Dataset ds;
    int found;
    int rc = dataset_open_tokens(&ds, p, TOKENIZER_CHAR, NULL, NULL, &found, err);
    CHECK(rc == LM_OK && ds.format == TOKFORMAT_CACHE && ds.split[0].n_shards == 4 &&
          ds.n[0] == 3600 && ds.n[1] == 400 && ds.n_chars == 400 &&
          tokenizer_hash(ds.tok) == tokenizer_hash(tok) && ds.hash == 0x0123456789abcdefULL,
          "cache: %s", err);
    int out[1200];
    CHECK(tokseq_read(&ds.split[0], 900, 1200, out, err) == LM_OK &&
          !memcmp(out, ids + 900, sizeof out), "across three shards: %s", err);
    dataset_free(&ds);
    /* another kind named */
    rc = dataset_open_tokens(&ds, p, TOKENIZER_WORD, NULL, NULL, &found, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "prepared with tokenizer=char"), "kind: %s", err);
    printf("  %s\n", err);
    /* a checkpoint's tokenizer that is not the cache's */
    rc = dataset_open_tokens(&ds, p, TOKENIZER_CHAR, NULL, other, &found, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "made by another tokenizer"), "other: %s", err);
    printf("  %s\n", err);
    /* a shard that does not hold what meta.json lists */
    path_in(p, sizeof p, "cache", "train_000001.bin");
    tokshard_write(p, ids, 999, 2, -1);
    path_in(p, sizeof p, "", "cache");
    rc = dataset_open_tokens(&ds, p, TOKENIZER_CHAR, NULL, NULL, &found, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "listing says 1000"), "listing: %s", err);
    tokenizer_destroy(tok);
}

/* Sparse llm.c shards of 2^31 - 1 uint16 tokens each (8 GB logical, no disk), markers
 * written at chosen positions: reads, batching and epochs past 2^32 tokens. */
static void test_large(void)
{
    const uint64_t per = 2147483647ULL;
    char p[512], err[LM_ERR_LEN];
    mkdir_in("big");
    TokSeq s = {0};
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "big_train_%06d.bin", k);
        path_in(p, sizeof p, "big", name);
        CHECK(!tokshard_write(p, NULL, 0, 2, (long long)per), "header");
        CHECK(!truncate(p, (off_t)(1024 + per * 2)), "sparse size");
        int fd = open(p, O_WRONLY);
        unsigned char one[2] = {7, 0}, last[2] = {9, 0};
        pwrite(fd, one, 2, 1024);                              /* first token = 7 */
        pwrite(fd, last, 2, (off_t)(1024 + (per - 1) * 2));    /* last token = 9 */
        close(fd);
        CHECK(tokseq_add_file(&s, p, 0, 0, err) == LM_OK, "add: %s", err);
    }
    s.vocab = 10;
    CHECK(s.n == 3 * per && s.n > (1ULL << 32), "logical size %llu", (unsigned long long)s.n);
    int out[4];
    CHECK(tokseq_read(&s, 2 * per - 2, 4, out, err) == LM_OK && out[0] == 0 && out[1] == 9 &&
          out[2] == 7 && out[3] == 0, "across shards 1-2 at %llu: %d %d %d %d",
          (unsigned long long)(2 * per - 2), out[0], out[1], out[2], out[3]);
    CHECK(tokseq_read(&s, 3 * per - 1, 1, out, err) == LM_OK && out[0] == 9, "the last token");
    /* stream: 2 streams of 3.2e9 tokens; the second starts past 2^32 - 2^31 */
    Batcher b;
    int x[2 * 4], y[2 * 4], ne;
    batcher_init(&b, &s, 2, 4, BATCH_STREAM, 1);
    CHECK(b.stream_len == s.n / 2, "stream length");
    unsigned long long st[4];
    batcher_get_state(&b, st);
    st[0] = b.stream_len - 3, st[1] = 5;
    batcher_set_state(&b, st);
    int L = batcher_next(&b, x, y, &ne, err);
    CHECK(L == 2 && ne == 0, "the stream's last window: L %d", L);
    L = batcher_next(&b, x, y, &ne, err);
    CHECK(L == 4 && ne == 1 && b.epoch == 6 && x[0] == 7, "wrap to epoch 6: L %d ne %d x0 %d", L,
          ne, x[0]);
    /* random: starts drawn over 6.4e9 positions reach past 2^32 */
    batcher_init(&b, &s, 2, 4, BATCH_RANDOM, 3);
    CHECK(b.per_epoch == s.n / 8, "batches per epoch %llu", (unsigned long long)b.per_epoch);
    for (int k = 0; k < 64; k++)
        CHECK(batcher_next(&b, x, y, NULL, err) == 4, "random: %s", err);
    st[0] = b.per_epoch - 1, st[1] = 1ULL << 33, st[2] = 1, st[3] = 3;
    batcher_set_state(&b, st);
    CHECK(batcher_next(&b, x, y, &ne, err) == 4 && ne == 0, "last batch of an epoch");
    CHECK(batcher_next(&b, x, y, &ne, err) == 4 && ne == 1 && b.epoch == (1ULL << 33) + 1,
          "epochs counted past 2^32");
    CHECK(batcher_epoch(&b) > 8589934592.0, "fractional epoch %.1f", batcher_epoch(&b));
    tokseq_free(&s);
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "big_train_%06d.bin", k);
        path_in(p, sizeof p, "big", name);
        unlink(p);
    }
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/lmlab_test_tokseq_XXXXXX");
    if (!mkdtemp(tmp)) return 1;
    test_llmc();
    test_nanogpt_and_list();
    test_changed_under();
    test_cache();
    test_large();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", tmp);
    return check_summary();
}
