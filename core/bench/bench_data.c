/* bench_data.c — generated token caches and timed `train` starts (see bench_data.h).
 * The shard layout is llm.c's (dev/data/data_common.py write_datafile), the folder the
 * cache contract's (docs/data.md). */
#include "bench_data.h"

#include "err.h"
#include "sysinfo.h"
#include "tokenizer.h"
#include "tokseq.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHARD_TOKENS 100000000ULL

static int write_all(int fd, const void *buf, size_t n, const char *path, char *err)
{
    const char *b = buf;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return err_set(err, errno == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot write '%s': %s",
                           path, w < 0 ? strerror(errno) : "short write");
        b += w;
        n -= (size_t)w;
    }
    return LM_OK;
}

/* One shard of n random ids below V; its pages dropped from the page cache after. */
static int write_shard(const char *path, uint64_t n, int V, uint64_t *state, char *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return err_set(err, LM_EIO, "cannot create '%s': %s", path, strerror(errno));
    int32_t h[256] = {TOKSEQ_MAGIC16, 1, (int32_t)n};
    int rc = write_all(fd, h, sizeof h, path, err);
    enum { CHUNK = 1 << 20 };
    uint16_t *buf = rc ? NULL : malloc(CHUNK * sizeof *buf);
    if (!rc && !buf) rc = err_set(err, LM_ENOMEM, "out of memory");
    for (uint64_t at = 0; !rc && at < n; at += CHUNK) {
        size_t k = n - at < CHUNK ? (size_t)(n - at) : CHUNK;
        for (size_t i = 0; i < k; i++) {   /* xorshift64 */
            uint64_t x = *state;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            *state = x;
            buf[i] = (uint16_t)((x >> 32) % (uint64_t)V);   /* little-endian machines */
        }
        rc = write_all(fd, buf, k * sizeof *buf, path, err);
    }
    free(buf);
    if (!rc && fdatasync(fd))
        rc = err_set(err, LM_EIO, "cannot sync '%s': %s", path, strerror(errno));
    if (!rc) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);   /* read cold by the start */
    if (close(fd) && !rc) rc = err_set(err, LM_EIO, "cannot close '%s'", path);
    return rc;
}

static int write_text(const char *path, const char *text, char *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return err_set(err, LM_EIO, "cannot create '%s': %s", path, strerror(errno));
    int rc = write_all(fd, text, strlen(text), path, err);
    close(fd);
    return rc;
}

/* The shards of one split and their meta.json entries appended to `list`. */
static int write_split(const char *dir, const char *split, uint64_t tokens, int V,
                       uint64_t *state, char *list, size_t cap, char *err)
{
    char path[1200];
    for (uint64_t at = 0, k = 0; at < tokens; at += SHARD_TOKENS, k++) {
        uint64_t n = tokens - at < SHARD_TOKENS ? tokens - at : SHARD_TOKENS;
        snprintf(path, sizeof path, "%s/%s_%06llu.bin", dir, split, (unsigned long long)k);
        int rc = write_shard(path, n, V, state, err);
        if (rc) return rc;
        size_t len = strlen(list);
        snprintf(list + len, cap - len, "%s{\"file\":\"%s_%06llu.bin\",\"tokens\":%llu}",
                 k ? "," : "", split, (unsigned long long)k, (unsigned long long)n);
    }
    return LM_OK;
}

int bench_data_write_cache(const char *dir, uint64_t tokens, int V, char *err)
{
    char text[128], path[1200];
    if (V < 2 || V > 90) return err_set(err, LM_EARG, "bench data: vocabulary %d (2..90)", V);
    for (int i = 0; i < V; i++) text[i] = (char)('!' + i);
    Tokenizer *tok = NULL;
    int rc = tokenizer_train(TOKENIZER_CHAR, text, (size_t)V, 0, &tok, err);
    if (rc) return rc;
    if (mkdir(dir, 0755) && errno != EEXIST) {
        tokenizer_destroy(tok);
        return err_set(err, LM_EIO, "cannot create '%s': %s", dir, strerror(errno));
    }
    char *json = tokenizer_save(tok);
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    rc = json ? write_text(path, json, err) : err_set(err, LM_ENOMEM, "out of memory");
    free(json);
    size_t cap = 64 * 1024;
    char *train = calloc(1, cap), *valid = calloc(1, cap), *meta = malloc(2 * cap + 1024);
    uint64_t state = 0x9e3779b97f4a7c15ULL, n_valid = tokens / 100 > 2 ? tokens / 100 : 2;
    if (!rc && (!train || !valid || !meta)) rc = err_set(err, LM_ENOMEM, "out of memory");
    if (!rc) rc = write_split(dir, "train", tokens, V, &state, train, cap, err);
    if (!rc) rc = write_split(dir, "valid", n_valid, V, &state, valid, cap, err);
    if (!rc) {
        snprintf(meta, 2 * cap + 1024, "{\"format\":\"lmlab-token-cache\",\"version\":1,"
                 "\"key\":\"bench%011llx\",\"tokenizer\":{\"kind\":\"char\",\"hash\":\"%016llx\","
                 "\"vocab_size\":%d,\"file\":\"tokenizer.json\"},\"eot\":-1,\"sources\":[],"
                 "\"options\":{\"train_frac\":0.99,\"text_key\":\"text\",\"strict\":false},"
                 "\"splits\":{\"train\":{\"tokens\":%llu,\"documents\":1,\"shards\":[%s]},"
                 "\"valid\":{\"tokens\":%llu,\"documents\":1,\"shards\":[%s]}},\"skipped\":{},"
                 "\"created\":0,\"prepare_seconds\":0}\n", (unsigned long long)tokens,
                 tokenizer_hash(tok), V, (unsigned long long)tokens, train,
                 (unsigned long long)n_valid, valid);
        snprintf(path, sizeof path, "%s/meta.json", dir);
        rc = write_text(path, meta, err);
    }
    free(train);
    free(valid);
    free(meta);
    tokenizer_destroy(tok);
    return rc;
}

/* Reads what the child wrote; notes the first step's time. 1 at end of output. */
static int drain(int fd, char *line, size_t cap, size_t *len, double t0, BenchDataStart *out)
{
    char buf[4096];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got <= 0) return got == 0 || errno != EINTR;
    for (ssize_t i = 0; i < got; i++) {
        if (buf[i] != '\n') {
            if (*len + 1 < cap) line[(*len)++] = buf[i];
            continue;
        }
        line[*len] = 0;
        if (out->first_step_s < 0 && strstr(line, "\"event\":\"step\""))
            out->first_step_s = sysinfo_now() - t0;
        if (*len) snprintf(out->last_line, sizeof out->last_line, "%.255s", line);
        *len = 0;
    }
    return 0;
}

int bench_data_start(const char *exe, const char *work, const char *const *args,
                     double timeout_s, BenchDataStart *out, char *err)
{
    memset(out, 0, sizeof *out);
    out->first_step_s = -1;
    char db[1200];
    snprintf(db, sizeof db, "%s/bench.db", work);
    const char *argv[64] = {exe, "--db", db, "--json", "train"};
    int n = 5;
    for (int i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
    argv[n] = NULL;
    int pfd[2];
    if (pipe(pfd)) return err_set(err, LM_EIO, "bench data: pipe: %s", strerror(errno));
    double t0 = sysinfo_now();
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return err_set(err, LM_EIO, "bench data: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    char line[4096];
    size_t len = 0;
    for (int done = 0; !done;) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        double left = timeout_s - (sysinfo_now() - t0);
        if (left <= 0) {
            kill(pid, SIGKILL);
            snprintf(out->last_line, sizeof out->last_line, "no end after %.0f s", timeout_s);
            break;
        }
        if (poll(&p, 1, (int)(left * 1000) + 1) > 0)
            done = drain(pfd[0], line, sizeof line, &len, t0, out);
    }
    close(pfd[0]);
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
    out->total_s = sysinfo_now() - t0;
    out->peak_rss_kb = ru.ru_maxrss;
    out->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return LM_OK;
}
