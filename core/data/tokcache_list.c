/* tokcache_list.c — reading the token cache (tokcache.h): a cache directory's meta.json,
 * whether it is fresh (sources as recorded, no file added, shards whole), `data list`'s
 * entries and `data rm`'s removal. Not a prepare (tokcache.c, tokcache_prep.c). */
#include "tokcache.h"

#include "corpus.h"
#include "dataset.h"
#include "err.h"
#include "private/tokcache_impl.h"
#include "shard.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tokcache_state_name(TokCacheState s)
{
    static const char *const n[] = { "fresh", "stale", "incomplete", "damaged" };
    return (unsigned)s < 4 ? n[s] : "?";
}

/* The folder and what it holds; a folder inside (none of lmlab's making: put there by
 * hand) goes too, a few levels deep; a symbolic link is removed, never followed. */
static int rm_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int bad = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[2200];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (!lstat(p, &st) && S_ISDIR(st.st_mode))
            bad |= depth < 8 ? rm_tree(p, depth + 1) != 0 : 1;
        else
            bad |= unlink(p) != 0;
    }
    closedir(d);
    return rmdir(dir) || bad ? -1 : 0;
}

int tokcache_rm_dir(const char *dir)
{
    return rm_tree(dir, 0);
}

json_t *tokcache_meta_load(const char *dir, char *why, size_t cap)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!m) {
        struct stat st;
        if (stat(path, &st)) snprintf(why, cap, "no meta.json: an interrupted prepare");
        else snprintf(why, cap, "meta.json unreadable: %s", je.text);
        return NULL;
    }
    const char *fmt = json_string_value(json_object_get(m, "format"));
    if (!fmt || strcmp(fmt, "lmlab-token-cache") || json_integer_value(json_object_get(m, "version")) != 1) {
        snprintf(why, cap, "meta.json is not an lmlab token cache's (version 1)");
        json_decref(m);
        return NULL;
    }
    return m;
}

void tokcache_check_fresh(const json_t *m, const Corpus *c, const char *dir, char *why, size_t cap,
                        int *damaged)
{
    const json_t *src = json_object_get(m, "sources");
    size_t n = json_array_size(src);
    why[0] = 0;
    *damaged = 0;
    for (size_t i = 0; i < n && !why[0]; i++) {
        const json_t *o = json_array_get(src, i);
        const char *p = json_string_value(json_object_get(o, "path"));
        unsigned long long size = (unsigned long long)json_integer_value(json_object_get(o, "size"));
        long long mt = (long long)json_integer_value(json_object_get(o, "mtime_ns"));
        struct stat st;
        if (!p || stat(p, &st)) {
            snprintf(why, cap, "'%s' is gone", p ? p : "?");
            break;
        }
        long long m2 = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        if ((unsigned long long)st.st_size != size)
            snprintf(why, cap, "'%s' changed since it was prepared (%llu -> %lld bytes)", p, size,
                     (long long)st.st_size);
        else if (m2 != mt)
            snprintf(why, cap, "'%s' changed since it was prepared (modified since, same size: the "
                     "next start compares its bytes)", p);
    }
    for (int i = 0; c && !why[0] && i < corpus_n_sources(c); i++) {
        const char *p = corpus_source(c, i)->path;
        size_t k = 0;
        for (; k < n; k++)
            if (!strcmp(p, json_string_value(json_object_get(json_array_get(src, k), "path")) ?: "")) break;
        if (k == n) snprintf(why, cap, "'%.400s' is new since it was prepared", p);
    }
    const json_t *splits = json_object_get(m, "splits");
    const char *name;
    const json_t *sp;
    json_object_foreach((json_t *)splits, name, sp) {
        const json_t *sh = json_object_get(sp, "shards");
        for (size_t i = 0; !why[0] && i < json_array_size(sh); i++) {
            const json_t *o = json_array_get(sh, i);
            char path[1300], msg[LM_ERR_LEN];
            unsigned long long cnt;
            int w;
            snprintf(path, sizeof path, "%s/%s", dir, json_string_value(json_object_get(o, "file")) ?: "?");
            if (shard_check(path, &cnt, &w, msg)) {
                snprintf(why, cap, "%s", msg);
                *damaged = 1;
            } else if (cnt != (unsigned long long)json_integer_value(json_object_get(o, "tokens"))) {
                snprintf(why, cap, "shard '%.400s' holds %llu tokens, meta.json says %lld", path, cnt,
                         (long long)json_integer_value(json_object_get(o, "tokens")));
                *damaged = 1;
            }
        }
    }
}

/* ---- list and remove ---- */

static int is_key(const char *s)
{
    if (strlen(s) != TOKCACHE_KEY_LEN) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
}

static unsigned long long dir_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    unsigned long long t = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[2200];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!stat(p, &st) && S_ISREG(st.st_mode)) t += (unsigned long long)st.st_blocks * 512;
    }
    if (d) closedir(d);
    return t;
}

void tokcache_inspect(const char *dir, TokCacheEntry *e)
{
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s", dir);
    snprintf(e->key, sizeof e->key, "%.16s", base[0] == '.' && strlen(base) > 5 ? base + 5 : base);
    e->bytes = dir_bytes(dir);
    json_t *m = tokcache_meta_load(dir, e->why, sizeof e->why);
    if (!m) {
        e->state = TOKCACHE_INCOMPLETE;
        return;
    }
    const json_t *t = json_object_get(m, "tokenizer"), *sp = json_object_get(m, "splits");
    snprintf(e->tokenizer, sizeof e->tokenizer, "%s", json_string_value(json_object_get(t, "kind")) ?: "?");
    e->vocab_size = (int)json_integer_value(json_object_get(t, "vocab_size"));
    for (int s = 0; s < 3; s++)
        e->tokens[s] = (unsigned long long)json_integer_value(json_object_get(json_object_get(sp, dataset_split_name(s)), "tokens"));
    snprintf(e->sources, sizeof e->sources, "%s", json_string_value(json_object_get(m, "roots")) ?: "?");
    e->n_sources = (int)json_array_size(json_object_get(m, "sources"));
    e->created = (long long)json_integer_value(json_object_get(m, "created"));
    /* the files now: the roots listed again (a file added to a folder makes it stale) */
    Corpus *c = NULL;
    char err[LM_ERR_LEN];
    const json_t *o = json_object_get(m, "options");
    CorpusOptions co = { .text_key = json_string_value(json_object_get(o, "text_key")) };
    if (corpus_open(e->sources, &co, &c, err)) c = NULL;
    int damaged;
    tokcache_check_fresh(m, c, dir, e->why, sizeof e->why, &damaged);
    e->state = !e->why[0] ? TOKCACHE_FRESH : damaged ? TOKCACHE_DAMAGED : TOKCACHE_STALE;
    corpus_close(c);
    json_decref(m);
}

/* 1 when another process holds key's lock: its .tmp- directory is a prepare at work. */
static int being_prepared(const char *root, const char *key)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.lock", root, key);
    int fd = open(p, O_RDONLY | O_CLOEXEC), busy = 0;
    if (fd < 0) return 0;
    if (flock(fd, LOCK_SH | LOCK_NB)) busy = errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const TokCacheEntry *)a)->key, ((const TokCacheEntry *)b)->key);
}

int tokcache_list(const char *root, TokCacheEntry **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(root);
    if (!d) return errno == ENOENT ? LM_OK : err_set(err, LM_EIO, "cannot read '%s': %s", root, strerror(errno));
    struct dirent *e;
    int cap = 0, rc = LM_OK;
    while (!rc && (e = readdir(d))) {
        int tmp = !strncmp(e->d_name, ".tmp-", 5) && strlen(e->d_name) > 5 + TOKCACHE_KEY_LEN;
        char k[TOKCACHE_KEY_LEN + 1];
        snprintf(k, sizeof k, "%.16s", tmp ? e->d_name + 5 : e->d_name);
        if (!(tmp ? is_key(k) : is_key(e->d_name))) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            TokCacheEntry *x = realloc(*out, (size_t)cap * sizeof *x);
            if (!x) {
                rc = err_set(err, LM_ENOMEM, "out of memory listing the token cache");
                break;
            }
            *out = x;
        }
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", root, e->d_name);
        TokCacheEntry *en = &(*out)[(*n)++];
        tokcache_inspect(p, en);
        if (tmp && being_prepared(root, k)) {
            const char *pid = strrchr(e->d_name, '-');
            snprintf(en->why, sizeof en->why, "being prepared now (process %s)", pid ? pid + 1 : "?");
        }
    }
    closedir(d);
    if (*n) qsort(*out, (size_t)*n, sizeof **out, cmp_entry);
    return rc;
}

int tokcache_find(const char *root, const char *key, char *dir, size_t cap)
{
    struct stat st;
    snprintf(dir, cap, "%s/%s", root, key);
    if (!stat(dir, &st)) return 1;
    DIR *d = opendir(root);
    struct dirent *e;
    char pre[40];
    snprintf(pre, sizeof pre, ".tmp-%s-", key);
    int found = 0;
    while (!found && d && (e = readdir(d)))
        if (!strncmp(e->d_name, pre, strlen(pre))) {
            snprintf(dir, cap, "%s/%s", root, e->d_name);
            found = 1;
        }
    if (d) closedir(d);
    return found;
}

int tokcache_in_use(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int used = 0;
    while (!used && d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".bin")) continue;
        char p[1300];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) continue;
        used = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;   /* tokseq's LOCK_SH */
        close(fd);
    }
    if (d) closedir(d);
    return used;
}

int tokcache_remove(const char *root, const char *key, char *err)
{
    if (!key || !is_key(key))
        return err_set(err, LM_EARG, "'%s' is not a cache key (16 hex digits, as `data list` shows)", key ? key : "");
    char p[1200], lk[1200];
    if (!tokcache_find(root, key, p, sizeof p))
        return err_set(err, LM_EARG, "no prepared tokens %s in '%s' (see `data list`)", key, root);
    /* the key's lock, as a prepare takes it: a prepare at work is not deleted under it */
    snprintf(lk, sizeof lk, "%s/%s.lock", root, key);
    int lock = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
        close(lock);
        char who[48] = "another process";
        DIR *d = opendir(root);   /* the prepare's work directory names its process */
        struct dirent *e;
        char pre[40];
        snprintf(pre, sizeof pre, ".tmp-%s-", key);
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, pre, strlen(pre)))
                snprintf(who, sizeof who, "process %.20s", e->d_name + strlen(pre));
        if (d) closedir(d);
        return err_set(err, LM_ESTATE, "%s is being prepared now by %s: deleting it would pull "
                       "the files from under that prepare; wait for it to end (or stop it), "
                       "then `data rm %s yes`", key, who, key);
    }
    snprintf(p, sizeof p, "%s/%s", root, key);
    struct stat st;
    int rc = LM_OK;
    if (!stat(p, &st) && tokcache_rm_dir(p))
        rc = err_set(err, LM_EIO, "cannot remove '%s': %s", p, strerror(errno));
    DIR *d = rc ? NULL : opendir(root);
    struct dirent *e;
    char pre[40];
    snprintf(pre, sizeof pre, ".tmp-%s-", key);
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, pre, strlen(pre))) continue;
        snprintf(p, sizeof p, "%s/%s", root, e->d_name);
        tokcache_rm_dir(p);
    }
    if (d) closedir(d);
    if (!rc) unlink(lk);   /* while held: a waiter granted it takes the new file (lock_key) */
    if (lock >= 0) close(lock);
    return rc;
}
