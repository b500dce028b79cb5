/* tokcache.c — the token cache's bookkeeping (see tokcache.h): keys, the lock that lets
 * one process prepare a key while others wait, finding a cache fresh, stale or
 * incomplete, meta.json (written last: temp + fsync + rename, then the directory renamed
 * into place) and the space check before a prepare. The prepare itself is tokcache_prep.c,
 * reading caches (fresh or not, list, remove) tokcache_list.c. Not a reader of shards. */
#include "tokcache.h"

#include "cstream.h"
#include "dataset.h"
#include "err.h"
#include "outfile.h"
#include "private/tokcache_impl.h"
#include "shard.h"
#include "sysinfo.h"

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

const char *tokcache_phase_name(TokCachePhase p)
{
    static const char *const n[] = { "note", "list", "scan", "vocab", "encode", "done" };
    return (unsigned)p < sizeof n / sizeof n[0] ? n[p] : "?";
}

/* The directory walk's progress as a TOKCACHE_LIST report; nonzero (Ctrl-C) stops it. */
typedef struct { TokCacheProgressFn fn; void *ud; double t0; } ListReport;

static int listed(unsigned long long entries, void *ud)
{
    ListReport *lr = ud;
    TokCacheProgress p = { .phase = TOKCACHE_LIST, .tokens = entries,
                           .seconds = sysinfo_now() - lr->t0, .eta_seconds = -1 };
    return lr->fn ? lr->fn(&p, lr->ud) : 0;
}

static int builtin(TokenizerKind k)
{
    return k == TOKENIZER_CHAR || k == TOKENIZER_WORD || k == TOKENIZER_BPE ||
           k == TOKENIZER_BASIC_ENGLISH || k == TOKENIZER_WORDPIECE;
}


/* roots_only: the spec resolved, its directories not walked (a key needs no more); else
 * fn hears the walk's progress (and stops it). */
static int open_corpus(const TokCacheRequest *r, int roots_only, TokCacheProgressFn fn,
                       void *ud, Corpus **c, char *err)
{
    TokenizerKind k = r->given ? tokenizer_kind(r->given) : r->kind;
    ListReport lr = { fn, ud, sysinfo_now() };
    CorpusOptions o = { .text_key = r->text_key, .strict = r->strict,
                        .cut = builtin(k) ? tokcache_cut_line : tokcache_cut_strict,
                        .piece = r->piece_bytes, .roots_only = roots_only,
                        .listed = listed, .listed_ud = &lr };
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
    int rc = open_corpus(req, 1, NULL, NULL, &c, err);
    if (rc) return rc;
    key_of(req, c, key);
    corpus_close(c);
    return LM_OK;
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
        tokcache_rm_dir(p);
        stop = note(fn, ud, TOKCACHE_NOTE, key, msg);
    }
    closedir(d);
    return stop;
}

/* "; skipped: 2 binary (the first: PATH (why)), ..." for what the corpus skipped, or ""
 * (meta.json keeps the same counts). */
static void skips_text(const CorpusSkips *k, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < CORPUS_SKIP_N && n < cap; i++)
        if (k->n[i])
            n += (size_t)snprintf(out + n, cap - n, "%s%llu %s (the first: %.300s)",
                                  n ? ", " : "; skipped: ", k->n[i], corpus_skip_name(i), k->first[i]);
}

/* The key's lock (root/<key>.lock), waited for when another process holds it. The lock
 * held is on the file the path names when it is granted: `data rm` unlinks the file while
 * it holds the lock, and a waiter granted the unlinked one takes the new file's instead
 * (else it and a process that created the new file would both prepare the key). */
static int lock_key(const char *root, const char *key, TokCacheProgressFn fn, void *ud, int *fd,
                    char *err)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.lock", root, key);
    for (int said = 0;;) {
        *fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (*fd < 0) return err_set(err, LM_EIO, "cannot create '%s': %s", p, strerror(errno));
        if (flock(*fd, LOCK_EX | LOCK_NB)) {
            if (!said++)
                note(fn, ud, TOKCACHE_NOTE, key, "another lmlab is preparing this corpus: waiting for it");
            while (flock(*fd, LOCK_EX) && errno == EINTR) {}
        }
        struct stat held, named;
        if (!fstat(*fd, &held) && !stat(p, &named) && held.st_ino == named.st_ino &&
            held.st_dev == named.st_dev)
            return LM_OK;
        close(*fd);   /* removed while waited for: the path's file now */
    }
}

/* Lets go of the key's lock fd (-1: none held). refused: its file is removed first, while
 * still held (as `data rm` removes it: a waiter granted the removed file takes the path's
 * new one, lock_key), so a prepare refused after it took the lock (a setting its
 * tokenizer refuses, strict=true, no text, no room) leaves no 0-byte KEY.lock behind. */
static void unlock_key(const char *root, const char *key, int fd, int refused)
{
    if (fd < 0) return;
    if (refused) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s.lock", root, key);
        unlink(p);
    }
    close(fd);
}

static int prepare_into(const TokCacheRequest *r, Corpus *c, const char *key, const char *final,
                        TokCacheProgressFn fn, void *ud, char *err)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%ld", r->root, key, (long)getpid());
    tokcache_rm_dir(tmp);
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
            tokcache_rm_dir(old);
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
    if (rc) tokcache_rm_dir(tmp);
    if (!rc) {
        char msg[4000];
        int n = snprintf(msg, sizeof msg, "prepared %s: %llu train + %llu valid + %llu test tokens "
                         "(%s, %d tokens) in %.1f s, %.1f MB/s", key, p.tokens[0], p.tokens[1],
                         p.tokens[2], tokenizer_kind_name(tokenizer_kind(p.tok)),
                         tokenizer_vocab_size(p.tok), p.seconds,
                         p.seconds > 0 ? mb(corpus_raw_total(c)) / p.seconds : 0);
        skips_text(&p.skips, msg + n, sizeof msg - (size_t)n);
        note(fn, ud, TOKCACHE_DONE, key, msg);
    }
    free(tj);
    free(mj);
    tokcache_prep_free(&p);
    return rc;
}

/* Sources whose size is as recorded but whose mtime is not (a touch, a copy): their bytes
 * hashed again; when every one matches its recorded hash, meta.json takes the new mtimes
 * and the cache is fresh again (said so) instead of being prepared again. 1 fresh now. */
static int retouch(json_t *m, const Corpus *c, const char *dir, TokCacheProgressFn fn, void *ud,
                   const char *key)
{
    json_t *src = json_object_get(m, "sources");
    int touched = 0;
    for (size_t i = 0; i < json_array_size(src); i++) {
        json_t *o = json_array_get(src, i);
        const char *p = json_string_value(json_object_get(o, "path"));
        const char *h = json_string_value(json_object_get(o, "hash"));
        struct stat st;
        if (!p || stat(p, &st)) return 0;
        long long mt = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        if ((unsigned long long)st.st_size != (unsigned long long)json_integer_value(json_object_get(o, "size")))
            return 0;
        if (mt == (long long)json_integer_value(json_object_get(o, "mtime_ns"))) continue;
        if (!h) return 0;
        CStream *cs;
        char err[LM_ERR_LEN], buf[1 << 16], hx[17];
        size_t n = 1;
        if (cstream_open(p, &cs, err)) return 0;
        cstream_chain_from(cs, TOKENIZER_FNV_SEED);
        int rc = LM_OK;
        while (!rc && n) rc = cstream_read(cs, buf, sizeof buf, &n, err);
        snprintf(hx, sizeof hx, "%016llx", cstream_raw_hash(cs));
        long long mt2 = cstream_mtime_ns(cs);
        cstream_close(cs);
        if (rc || strcmp(hx, h)) return 0;
        json_object_set_new(o, "mtime_ns", json_integer((json_int_t)mt2));
        touched++;
    }
    char why[600];
    int damaged;
    tokcache_check_fresh(m, c, dir, why, sizeof why, &damaged);
    char *text = why[0] ? NULL : json_dumps(m, JSON_INDENT(1));
    char err[LM_ERR_LEN];
    int ok = text && write_file(dir, "meta.json", text, err) == LM_OK;
    free(text);
    if (ok) {
        char msg[300];
        snprintf(msg, sizeof msg, "%d source%s of %s touched since the prepare, bytes unchanged (hash "
                 "checked): the tokens are still fresh", touched, touched == 1 ? "" : "s", key);
        note(fn, ud, TOKCACHE_NOTE, key, msg);
    }
    return ok;
}

/* A run that starts from a checkpoint (resume, fork, init_from) brings its tokenizer
 * (r->given), keyed by its hash. The cache its settings would name is used instead when it
 * is fresh and holds that very tokenizer (a resume of a run that prepared it): the corpus
 * is not prepared a second time under the other key. 1 used (dir_out set), 0 not, -1 the
 * user stopped it. */
static int settings_cache(const TokCacheRequest *r, const Corpus *c, TokCacheProgressFn fn,
                          void *ud, char *dir_out, size_t cap)
{
    TokCacheRequest byset = *r;
    byset.given = NULL;
    char key[TOKCACHE_KEY_LEN + 1], final[1200], why[600], want[17], err[LM_ERR_LEN];
    key_of(&byset, c, key);
    snprintf(final, sizeof final, "%s/%s", r->root, key);
    struct stat st;
    int lock = -1, used = 0;
    if (stat(final, &st) || lock_key(r->root, key, fn, ud, &lock, err))
        return 0;
    json_t *m = tokcache_meta_load(final, why, sizeof why);
    int damaged = 0;
    if (m)
        tokcache_check_fresh(m, c, final, why, sizeof why, &damaged);
    const char *h = m ? json_string_value(json_object_get(json_object_get(m, "tokenizer"),
                                                          "hash")) : NULL;
    snprintf(want, sizeof want, "%016llx", tokenizer_hash(r->given));
    if (m && !why[0] && h && !strcmp(h, want)) {
        char msg[1400];
        snprintf(msg, sizeof msg, "using the prepared tokens %s (%s): the checkpoint's tokenizer",
                 key, final);
        snprintf(dir_out, cap, "%s", final);
        used = note(fn, ud, TOKCACHE_DONE, key, msg) ? -1 : 1;
    }
    json_decref(m);
    close(lock);
    return used;
}

int tokcache_ensure(const TokCacheRequest *r, TokCacheProgressFn fn, void *ud, char *dir_out,
                    size_t cap, char *err)
{
    if (!r->root || !*r->root) return err_set(err, LM_EARG, "no token cache folder (tokcache_root)");
    if (!r->given && !(r->train_frac > 0 && r->train_frac < 1))
        return err_set(err, LM_EARG, "train_frac %g: use a fraction between 0 and 1, e.g. 0.9", r->train_frac);
    Corpus *c;
    int rc = open_corpus(r, 0, fn, ud, &c, err);
    if (rc) return rc;
    int reused = r->given && !r->force ? settings_cache(r, c, fn, ud, dir_out, cap) : 0;
    if (reused) {
        corpus_close(c);
        return reused < 0 ? err_set(err, LM_ECANCEL, "stopped") : LM_OK;
    }
    char key[TOKCACHE_KEY_LEN + 1], final[1200], why[600], msg[1500];
    key_of(r, c, key);
    int lock = -1, stop = 0;
    rc = mkdir_p(r->root, err);
    if (!rc) rc = lock_key(r->root, key, fn, ud, &lock, err);
    snprintf(final, sizeof final, "%s/%s", r->root, key);
    if (!rc) stop = clear_incomplete(r->root, key, fn, ud);
    struct stat st;
    if (!rc && !stop && !stat(final, &st)) {
        json_t *m = tokcache_meta_load(final, why, sizeof why);
        int damaged = 0;
        if (m) tokcache_check_fresh(m, c, final, why, sizeof why, &damaged);
        if (m && why[0] && !damaged && !r->force && retouch(m, c, final, fn, ud, key))
            why[0] = 0;
        if (m && !why[0] && !r->force) {
            snprintf(msg, sizeof msg, "using the prepared tokens %s (%s)", key, final);
            stop = note(fn, ud, TOKCACHE_DONE, key, msg);
            snprintf(dir_out, cap, "%s", final);
            json_decref(m);
            corpus_close(c);
            unlock_key(r->root, key, lock, stop);
            return stop ? err_set(err, LM_ECANCEL, "stopped") : LM_OK;
        }
        json_decref(m);
        if (r->force && !why[0])
            snprintf(msg, sizeof msg, "preparing %s again (force=true)", key);
        else
            snprintf(msg, sizeof msg, "the prepared tokens %s are %s: %s; preparing again", key,
                     !m ? "incomplete" : damaged ? "damaged" : "stale", why);
        stop = note(fn, ud, TOKCACHE_NOTE, key, msg);
        /* stale, damaged or incomplete: useless, and its space may be needed; a fresh one
         * prepared again (force) stays until the new one is whole (prepare_into swaps) */
        if ((why[0] || !m) && tokcache_rm_dir(final))
            rc = err_set(err, LM_EIO, "cannot remove the old tokens in '%s': %s", final, strerror(errno));
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
    unlock_key(r->root, key, lock, rc != LM_OK);
    return rc;
}

