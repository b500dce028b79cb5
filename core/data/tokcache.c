/* tokcache.c — the token cache's bookkeeping (see tokcache.h): keys, the lock that lets
 * one process prepare a key while others wait, finding a cache fresh, stale or
 * incomplete, meta.json (written last: temp + fsync + rename, then the directory renamed
 * into place), the space check before a prepare, list and remove. The prepare itself is
 * tokcache_prep.c. Not a reader of shards for training. */
#include "tokcache.h"

#include "dataset.h"
#include "err.h"
#include "outfile.h"
#include "private/tokcache_impl.h"
#include "shard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

const char *tokcache_state_name(TokCacheState s)
{
    static const char *const n[] = { "fresh", "stale", "incomplete", "damaged" };
    return (unsigned)s < 4 ? n[s] : "?";
}

int tokcache_root(const char *db_path, const char *tokens_dir, char *out, size_t cap, char *err)
{
    if (tokens_dir && *tokens_dir) {
        if (strlen(tokens_dir) + 1 > cap || strlen(tokens_dir) > 900)
            return err_set(err, LM_EARG, "tokens_dir= is too long");
        snprintf(out, cap, "%s", tokens_dir);
        return LM_OK;
    }
    const char *db = db_path && *db_path ? db_path : "lmlab.db";
    const char *slash = strrchr(db, '/');
    int dn = slash ? (int)(slash - db) : 1;
    const char *dir = slash ? (dn ? db : "/") : ".";
    if (slash && dn == 0) dn = 1;
    if ((size_t)dn + sizeof TOKCACHE_DIR_NAME + 2 > cap || dn > 900)
        return err_set(err, LM_EARG, "the run store's path is too long for the token cache");
    snprintf(out, cap, "%.*s/%s", dn, dir, TOKCACHE_DIR_NAME);
    return LM_OK;
}

int tokcache_request_config(TokCacheRequest *req, const Config *c, const char *root,
                            const Tokenizer *given, char *err)
{
    memset(req, 0, sizeof *req);
    int rc = dataset_tokenizer_options(c, &req->kind, &req->opt, err);
    if (rc) return rc;
    req->spec = c->data;
    req->given = given;
    req->train_frac = c->train_frac;
    req->text_key = c->text_key;
    req->strict = c->strict;
    req->threads = c->threads;
    req->root = root;
    return LM_OK;
}

static int builtin(TokenizerKind k)
{
    return k == TOKENIZER_CHAR || k == TOKENIZER_WORD || k == TOKENIZER_BPE ||
           k == TOKENIZER_BASIC_ENGLISH || k == TOKENIZER_WORDPIECE;
}

/* Where pieces may be cut for this request's tokenizer (tokcache_prep.c's rules). */
size_t tokcache_cut_line(const char *s, size_t n, void *ud);
size_t tokcache_cut_strict(const char *s, size_t n, void *ud);

static int open_corpus(const TokCacheRequest *r, Corpus **c, char *err)
{
    TokenizerKind k = r->given ? tokenizer_kind(r->given) : r->kind;
    CorpusOptions o = { .text_key = r->text_key, .strict = r->strict,
                        .cut = builtin(k) ? tokcache_cut_line : tokcache_cut_strict };
    return corpus_open(r->spec, &o, c, err);
}

/* The key of an opened corpus and request. */
static void key_of(const TokCacheRequest *r, const Corpus *c, char key[TOKCACHE_KEY_LEN + 1])
{
    char buf[8192], vocab[PATH_MAX] = "";
    if (r->opt.vocab_path && *r->opt.vocab_path && !realpath(r->opt.vocab_path, vocab))
        snprintf(vocab, sizeof vocab, "%s", r->opt.vocab_path);
    int n;
    if (r->given)
        n = snprintf(buf, sizeof buf, "tokenizer=%s given=%016llx",
                     tokenizer_kind_name(tokenizer_kind(r->given)), tokenizer_hash(r->given));
    else
        n = snprintf(buf, sizeof buf, "tokenizer=%s vocab_size=%d vocab=%s lowercase=%d "
                     "vocab_from_train=%d sample=%zu", tokenizer_kind_name(r->kind),
                     r->opt.vocab_size, vocab, r->opt.lowercase, r->opt.vocab_from_train,
                     r->vocab_sample ? r->vocab_sample : TOKCACHE_VOCAB_SAMPLE);
    snprintf(buf + n, sizeof buf - (size_t)n, " train_frac=%.17g text_key=%s strict=%d shard=%llu",
             corpus_has_splits(c) ? 0.0 : r->train_frac, r->text_key && *r->text_key ? r->text_key : "text",
             r->strict != 0, r->shard_tokens);
    unsigned long long h = tokenizer_fnv1a("lmlab-token-cache 1\n", 20, TOKENIZER_FNV_SEED);
    h = tokenizer_fnv1a(corpus_roots(c), strlen(corpus_roots(c)), h);
    h = tokenizer_fnv1a(buf, strlen(buf), h);
    snprintf(key, TOKCACHE_KEY_LEN + 1, "%016llx", h);
}

int tokcache_key(const TokCacheRequest *req, char key[TOKCACHE_KEY_LEN + 1], char *err)
{
    Corpus *c;
    int rc = open_corpus(req, &c, err);
    if (rc) return rc;
    key_of(req, c, key);
    corpus_close(c);
    return LM_OK;
}

/* ---- removing directories ---- */

static int rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int bad = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[2200];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        bad |= unlink(p) != 0;
    }
    closedir(d);
    return rmdir(dir) || bad ? -1 : 0;
}

static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* ---- meta.json ---- */

static long long now_unix(void) { return (long long)time(NULL); }

static json_t *split_json(const TokCachePrep *p, int s)
{
    static const char *const pre[3] = { "train", "valid", "test" };
    json_t *sh = json_array();
    for (int i = 0; i < p->n_shards[s]; i++) {
        char f[64];
        snprintf(f, sizeof f, "%s_%06d.bin", pre[s], i);
        json_array_append_new(sh, json_pack("{s:s s:I}", "file", f, "tokens", (json_int_t)p->shard_tokens[s][i]));
    }
    json_t *o = json_pack("{s:I s:I s:o}", "tokens", (json_int_t)p->tokens[s], "documents",
                          (json_int_t)p->docs[s], "shards", sh);
    if (s == 1) json_object_set_new(o, "chars", json_integer((json_int_t)p->valid_chars));
    return o;
}

static char *meta_text(const TokCacheRequest *r, const Corpus *c, const char *key,
                       const TokCachePrep *p)
{
    char hash[17], chash[17];
    snprintf(hash, sizeof hash, "%016llx", tokenizer_hash(p->tok));
    snprintf(chash, sizeof chash, "%016llx", p->content_hash);
    json_t *src = json_array(), *splits = json_object(), *skipped = json_object(), *firsts = json_object();
    for (int i = 0; i < corpus_n_sources(c); i++) {
        const CorpusSource *s = corpus_source(c, i);
        char h[17];
        snprintf(h, sizeof h, "%016llx", s->hash);
        json_t *o = json_pack("{s:s s:I s:I}", "path", s->path, "size", (json_int_t)s->size,
                              "mtime_ns", (json_int_t)s->mtime_ns);
        json_object_set_new(o, "hash", s->hashed ? json_string(h) : json_null());
        if (s->split >= 0) json_object_set_new(o, "split", json_string(dataset_split_name(s->split)));
        json_array_append_new(src, o);
    }
    for (int s = 0; s < 3; s++)
        if (p->has[s]) json_object_set_new(splits, dataset_split_name(s), split_json(p, s));
    for (int k = 0; k < CORPUS_SKIP_N; k++) {
        json_object_set_new(skipped, corpus_skip_name(k), json_integer((json_int_t)p->skips.n[k]));
        if (p->skips.first[k][0]) json_object_set_new(firsts, corpus_skip_name(k), json_string(p->skips.first[k]));
    }
    json_t *m = json_pack("{s:s s:i s:s s:s s:{s:s s:s s:i s:s} s:i s:i s:o s:{s:f s:s s:b} s:o s:o s:o"
                          " s:s s:I s:I s:f s:s}",
        "format", "lmlab-token-cache", "version", 1, "key", key, "roots", corpus_roots(c),
        "tokenizer", "kind", tokenizer_kind_name(tokenizer_kind(p->tok)), "hash", hash,
        "vocab_size", tokenizer_vocab_size(p->tok), "file", "tokenizer.json",
        "eot", p->eot, "token_bytes", p->width, "sources", src,
        "options", "train_frac", corpus_has_splits(c) ? 0.0 : r->train_frac, "text_key",
        r->text_key && *r->text_key ? r->text_key : "text", "strict", r->strict != 0,
        "splits", splits, "skipped", skipped, "skipped_first", firsts,
        "content_hash", chash, "text_bytes", (json_int_t)p->text_bytes,
        "created", (json_int_t)now_unix(), "prepare_seconds", p->seconds,
        "layout", corpus_has_splits(c) ? "wikitext" : "stream");
    char *t = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
    json_decref(m);
    return t;
}

/* Writes text to dir/name through a temporary file, fsync and rename. */
static int write_file(const char *dir, const char *name, const char *text, char *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    OutFile f;
    int rc = outfile_open(&f, path, err);
    if (rc) return rc;
    int e = outfile_write(&f, text, strlen(text));
    if (e) {
        outfile_abort(&f);
        return err_set(err, e == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    return outfile_commit(&f, path, err);
}

/* Loads dir/meta.json; NULL with why set when it is missing or not a cache's. */
static json_t *meta_load(const char *dir, char *why, size_t cap)
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

/* "" when meta's sources are c's files as they are now and its shards are whole; else
 * why not into why. damaged: 1 when the shards are what is wrong. */
static void check_fresh(const json_t *m, const Corpus *c, const char *dir, char *why, size_t cap,
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
        if ((unsigned long long)st.st_size != size || m2 != mt)
            snprintf(why, cap, "'%s' changed since it was prepared (%llu -> %lld bytes%s)", p, size,
                     (long long)st.st_size, m2 != mt ? ", modified since" : "");
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

/* ---- ensure ---- */

static int note(TokCacheProgressFn fn, void *ud, TokCachePhase ph, const char *key, const char *msg)
{
    TokCacheProgress p = { .phase = ph, .message = msg, .key = key, .eta_seconds = -1 };
    return fn ? fn(&p, ud) : 0;
}

static int mkdir_p(const char *dir, char *err)
{
    char p[1100];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) && errno != EEXIST) break;
        *s = '/';
    }
    if (mkdir(p, 0755) && errno != EEXIST)
        return err_set(err, errno == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot create the token cache "
                       "'%s': %s (set tokens_dir= to a writable folder)", dir, strerror(errno));
    return LM_OK;
}

static double mb(unsigned long long b) { return (double)b / 1e6; }

static unsigned long long free_bytes(const char *dir)
{
    struct statvfs v;
    if (statvfs(dir, &v)) return ~0ULL;
    return (unsigned long long)v.f_bavail * (unsigned long long)v.f_frsize;
}

/* Removes interrupted prepares of key (".tmp-<key>-*": their process is gone, since the
 * caller holds the key's lock), saying what was found. */
static int clear_incomplete(const char *root, const char *key, TokCacheProgressFn fn, void *ud)
{
    DIR *d = opendir(root);
    if (!d) return 0;
    char pre[40];
    snprintf(pre, sizeof pre, ".tmp-%s-", key);
    struct dirent *e;
    int stop = 0;
    while (!stop && (e = readdir(d))) {
        if (strncmp(e->d_name, pre, strlen(pre))) continue;
        char p[1200], msg[1500];
        snprintf(p, sizeof p, "%s/%s", root, e->d_name);
        snprintf(msg, sizeof msg, "found an interrupted prepare of %s (%s, no meta.json): removed "
                 "it, starting over", key, p);
        rm_dir(p);
        stop = note(fn, ud, TOKCACHE_NOTE, key, msg);
    }
    closedir(d);
    return stop;
}

/* The key's lock (root/<key>.lock), waited for when another process holds it. */
static int lock_key(const char *root, const char *key, TokCacheProgressFn fn, void *ud, int *fd,
                    char *err)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.lock", root, key);
    *fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0) return err_set(err, LM_EIO, "cannot create '%s': %s", p, strerror(errno));
    if (!flock(*fd, LOCK_EX | LOCK_NB)) return LM_OK;
    note(fn, ud, TOKCACHE_NOTE, key, "another lmlab is preparing this corpus: waiting for it");
    while (flock(*fd, LOCK_EX) && errno == EINTR) {}
    return LM_OK;
}

static int prepare_into(const TokCacheRequest *r, Corpus *c, const char *key, const char *final,
                        TokCacheProgressFn fn, void *ud, char *err)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%ld", r->root, key, (long)getpid());
    rm_dir(tmp);
    if (mkdir(tmp, 0755))
        return err_set(err, errno == ENOSPC ? LM_ENOSPC : LM_EIO, "cannot create '%s': %s", tmp, strerror(errno));
    unsigned long long free0 = free_bytes(r->root);
    TokCachePrep p;
    int rc = tokcache_prepare(r, c, tmp, key, fn, ud, &p, err);
    char *tj = NULL, *mj = NULL;
    if (!rc && !(tj = tokenizer_save(p.tok))) rc = err_set(err, LM_ENOMEM, "out of memory saving the tokenizer");
    if (!rc) rc = write_file(tmp, "tokenizer.json", tj, err);
    if (!rc && !(mj = meta_text(r, c, key, &p))) rc = err_set(err, LM_ENOMEM, "out of memory writing meta.json");
    if (!rc) rc = write_file(tmp, "meta.json", mj, err);   /* last: the directory is whole */
    if (!rc) {
        char old[1200];
        snprintf(old, sizeof old, "%s/.old-%s-%ld", r->root, key, (long)getpid());
        int had = !rename(final, old);
        if (rename(tmp, final)) {
            rc = err_set(err, LM_EIO, "cannot move the prepared tokens into '%s': %s", final, strerror(errno));
            if (had) rename(old, final);
        } else if (had) {
            rm_dir(old);
        }
        sync_dir(r->root);
    }
    if (rc == LM_ENOSPC) {
        double done = corpus_raw_total(c) ? (double)corpus_raw_done(c) / (double)corpus_raw_total(c) : 0;
        unsigned long long need = done > 0.01 ? (unsigned long long)((double)p.shard_bytes / done)
                                              : tokcache_estimate_bytes(c, tokenizer_kind(p.tok), p.width);
        err_set(err, LM_ENOSPC, "the disk filled while preparing the tokens (%.0f MB of shards written, "
                "%.0f%% of the corpus read): this corpus needs about %.0f MB in '%s', which had %.0f MB "
                "free; nothing was kept: free space or set tokens_dir= to another disk", mb(p.shard_bytes),
                100 * done, mb(need), r->root, mb(free0));
    }
    if (rc) rm_dir(tmp);
    if (!rc) {
        char msg[600];
        snprintf(msg, sizeof msg, "prepared %s: %llu train + %llu valid + %llu test tokens (%s, %d "
                 "tokens) in %.1f s, %.1f MB/s", key, p.tokens[0], p.tokens[1], p.tokens[2],
                 tokenizer_kind_name(tokenizer_kind(p.tok)), tokenizer_vocab_size(p.tok), p.seconds,
                 p.seconds > 0 ? mb(corpus_raw_total(c)) / p.seconds : 0);
        note(fn, ud, TOKCACHE_DONE, key, msg);
    }
    free(tj);
    free(mj);
    tokcache_prep_free(&p);
    return rc;
}

int tokcache_ensure(const TokCacheRequest *r, TokCacheProgressFn fn, void *ud, char *dir_out,
                    size_t cap, char *err)
{
    if (!r->root || !*r->root) return err_set(err, LM_EARG, "no token cache folder (tokcache_root)");
    if (!r->given && !(r->train_frac > 0 && r->train_frac < 1))
        return err_set(err, LM_EARG, "train_frac %g: use a fraction between 0 and 1, e.g. 0.9", r->train_frac);
    Corpus *c;
    int rc = open_corpus(r, &c, err);
    if (rc) return rc;
    char key[TOKCACHE_KEY_LEN + 1], final[1200], why[600], msg[1500];
    key_of(r, c, key);
    int lock = -1, stop = 0;
    rc = mkdir_p(r->root, err);
    if (!rc) rc = lock_key(r->root, key, fn, ud, &lock, err);
    snprintf(final, sizeof final, "%s/%s", r->root, key);
    if (!rc) stop = clear_incomplete(r->root, key, fn, ud);
    struct stat st;
    if (!rc && !stop && !stat(final, &st)) {
        json_t *m = meta_load(final, why, sizeof why);
        int damaged = 0;
        if (m) check_fresh(m, c, final, why, sizeof why, &damaged);
        if (m && !why[0] && !r->force) {
            snprintf(msg, sizeof msg, "using the prepared tokens %s (%s)", key, final);
            stop = note(fn, ud, TOKCACHE_DONE, key, msg);
            snprintf(dir_out, cap, "%s", final);
            json_decref(m);
            corpus_close(c);
            close(lock);
            return stop ? err_set(err, LM_ECANCEL, "stopped") : LM_OK;
        }
        json_decref(m);
        snprintf(msg, sizeof msg, "the prepared tokens %s are %s: %s; preparing again", key,
                 r->force && !why[0] ? "kept no longer (force)" : !m ? "incomplete" : damaged ? "damaged" : "stale",
                 why[0] ? why : "asked to");
        stop = note(fn, ud, TOKCACHE_NOTE, key, msg);
        if (rm_dir(final)) rc = err_set(err, LM_EIO, "cannot remove the old tokens in '%s': %s", final, strerror(errno));
    }
    if (!rc && stop) rc = err_set(err, LM_ECANCEL, "prepare stopped");
    if (!rc) {   /* will it fit? (an estimate from the sources' sizes) */
        TokenizerKind k = r->given ? tokenizer_kind(r->given) : r->kind;
        int V = r->given ? tokenizer_vocab_size(r->given) : r->opt.vocab_size;
        int width = V > 0 ? shard_width(V) : (k == TOKENIZER_CHAR || k == TOKENIZER_BPE ? 2 : 4);
        unsigned long long need = tokcache_estimate_bytes(c, k, width), have = free_bytes(r->root);
        if (need > have)
            rc = err_set(err, LM_ENOSPC, "the prepared tokens would need about %.0f MB (%.0f MB of "
                         "sources) but '%s' has %.0f MB free: free space or set tokens_dir= to another "
                         "disk", mb(need), mb(corpus_raw_total(c)), r->root, mb(have));
    }
    if (!rc) rc = prepare_into(r, c, key, final, fn, ud, err);
    if (!rc) snprintf(dir_out, cap, "%s", final);
    corpus_close(c);
    if (lock >= 0) close(lock);
    return rc;
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
    json_t *m = meta_load(dir, e->why, sizeof e->why);
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
    check_fresh(m, c, dir, e->why, sizeof e->why, &damaged);
    e->state = !e->why[0] ? TOKCACHE_FRESH : damaged ? TOKCACHE_DAMAGED : TOKCACHE_STALE;
    corpus_close(c);
    json_decref(m);
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
        tokcache_inspect(p, &(*out)[(*n)++]);
    }
    closedir(d);
    if (*n) qsort(*out, (size_t)*n, sizeof **out, cmp_entry);
    return rc;
}

int tokcache_remove(const char *root, const char *key, char *err)
{
    if (!key || !is_key(key))
        return err_set(err, LM_EARG, "'%s' is not a cache key (16 hex digits, as `data list` shows)", key ? key : "");
    char p[1200];
    int found = 0;
    snprintf(p, sizeof p, "%s/%s", root, key);
    struct stat st;
    if (!stat(p, &st)) {
        found = 1;
        if (rm_dir(p)) return err_set(err, LM_EIO, "cannot remove '%s': %s", p, strerror(errno));
    }
    DIR *d = opendir(root);
    struct dirent *e;
    char pre[40];
    snprintf(pre, sizeof pre, ".tmp-%s-", key);
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, pre, strlen(pre))) continue;
        snprintf(p, sizeof p, "%s/%s", root, e->d_name);
        found = 1;
        rm_dir(p);
    }
    if (d) closedir(d);
    snprintf(p, sizeof p, "%s/%s.lock", root, key);
    unlink(p);
    if (!found) return err_set(err, LM_EARG, "no prepared tokens %s in '%s' (see `data list`)", key, root);
    return LM_OK;
}
