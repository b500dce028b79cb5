/* corpus.c — resolving a data spec to files and reading them as text pieces (see
 * corpus.h). Files are read through cstream (decompression, content hash, change check);
 * jsonl lines are parsed with jansson. Not a tokenizer: pieces are cut where the caller's
 * cut function says encoding them apart is exact. */
#include "corpus.h"

#include "cstream.h"
#include "private/dirset.h"
#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LMLAB_DATA_DIR
#define LMLAB_DATA_DIR "data"
#endif

#define CORPUS_MAX_PIECE ((size_t)8 << 20)    /* a text piece with no cut grows to this */
#define CORPUS_MAX_LINE ((size_t)256 << 20)   /* a jsonl line longer than this is refused */

struct Corpus {
    CorpusSource *src;
    int n, cap, has_splits;
    char *roots;
    char text_key[256];
    CorpusOptions opt;
    unsigned long long listed;  /* directory entries walked (CorpusOptions.listed) */
    DirSet dirs;                /* the directories walked, by identity */
    /* the pass */
    int cur;                    /* source being read; n at the end */
    CStream *cs;
    char *buf;                  /* (bcap) bytes read but not yet given */
    size_t blen, bcap, bstart;
    int eof;                    /* the current source is read to its end */
    int first_piece;            /* no piece of the current source given yet */
    unsigned long long line;    /* jsonl: line number of the next line */
    char *doc;                  /* jsonl: the current document's text */
    size_t doc_cap;
    unsigned long long done_raw, docs, chain;
    CorpusSkips skips, open_skips;
    size_t target;              /* text: bytes to gather before looking for a cut */
    size_t scan;                /* jsonl: bytes of buf[bstart..] known to hold no '\n' */
};

const char *corpus_skip_name(int kind)
{
    static const char *const n[] = { "binary", "bad_json", "missing_key", "empty_files", "unreadable",
                                     "repeated_dirs" };
    return (unsigned)kind < CORPUS_SKIP_N ? n[kind] : "?";
}

int corpus_n_sources(const Corpus *c) { return c->n; }
const CorpusSource *corpus_source(const Corpus *c, int i) { return &c->src[i]; }
int corpus_has_splits(const Corpus *c) { return c->has_splits; }
const char *corpus_roots(const Corpus *c) { return c->roots; }
unsigned long long corpus_content_hash(const Corpus *c) { return c->chain; }
const CorpusSkips *corpus_skips(const Corpus *c) { return &c->skips; }
unsigned long long corpus_raw_total(const Corpus *c)
{
    unsigned long long t = 0;
    for (int i = 0; i < c->n; i++) t += c->src[i].size;
    return t;
}
unsigned long long corpus_raw_done(const Corpus *c)
{
    return c->done_raw + (c->cs ? cstream_raw_done(c->cs) : 0);
}

void corpus_close(Corpus *c)
{
    if (!c) return;
    cstream_close(c->cs);
    free(c->src); free(c->roots); free(c->buf); free(c->doc);
    dirset_free(&c->dirs);
    free(c);
}

/* ---- resolving the spec ---- */

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static CorpusFormat format_of(const char *path)
{
    static const char *const ext[] = { ".jsonl", ".jsonl.gz", ".jsonl.xz", ".jsonl.zst" };
    for (int i = 0; i < 4; i++)
        if (ends_with(path, ext[i])) return CORPUS_JSONL;
    return CORPUS_TEXT;
}

static int add_source(Corpus *c, const char *path, int split, int required, char *err)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        CorpusSource *s = realloc(c->src, (size_t)cap * sizeof *s);
        if (!s) return err_set(err, LM_ENOMEM, "out of memory listing the corpus's files");
        c->src = s;
        c->cap = cap;
    }
    CorpusSource *s = &c->src[c->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->format = format_of(path);
    s->split = split;
    s->required = required;
    struct stat st;
    if (!stat(path, &st)) {
        s->size = (unsigned long long)st.st_size;
        s->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
    return LM_OK;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(((const CorpusSource *)a)->path, ((const CorpusSource *)b)->path);
}

/* A WikiText layout in dir: its split files added (train and valid required). 1 found,
 * 0 not a layout, < 0 error (status negated). */
static int add_layout(Corpus *c, const char *dir, char *err)
{
    static const char *const layouts[2][3] = {
        { "wiki.train.tokens", "wiki.valid.tokens", "wiki.test.tokens" },
        { "train.txt", "valid.txt", "test.txt" },
    };
    for (int l = 0; l < 2; l++) {
        char p[3][1100];
        struct stat st;
        for (int s = 0; s < 3; s++) snprintf(p[s], sizeof p[s], "%.1000s/%s", dir, layouts[l][s]);
        if (stat(p[0], &st)) continue;
        if (stat(p[1], &st))
            return -err_set(err, LM_EIO, "directory '%s' has %s but no %s: add the validation "
                            "split", dir, layouts[l][0], layouts[l][1]);
        for (int s = 0; s < 3; s++) {
            if (s == 2 && stat(p[2], &st)) break;
            int rc = add_source(c, p[s], s, s < 2, err);
            if (rc) return -rc;
        }
        return 1;
    }
    return 0;
}

int corpus_placeholder_error(const char *item, char *err)
{
    if (strncmp(item, "/path/to/", 9)) return LM_OK;
    if (strstr(item, "wikitext"))
        return err_set(err, LM_EIO, "no dataset '%s': that is the preset's placeholder; pass "
                       "data=DIR, a folder with wiki.train.tokens, wiki.valid.tokens and "
                       "wiki.test.tokens (WikiText, e.g. https://wikitext.smerity.com/"
                       "wikitext-2-v1.zip unpacked), or data=wikitext-small (bundled) to try "
                       "the preset's settings", item);
    return err_set(err, LM_EIO, "no dataset '%s': that is the preset's placeholder; pass "
                   "data= the corpus its comment names (a file or a folder), or "
                   "data=wikitext-small (bundled) to try the preset's settings", item);
}

/* One item of the spec: a bundled name or a path, to its absolute form in abs. */
static int resolve_item(const char *item, char *abs, size_t cap, char *err)
{
    const char *dirs[2] = { getenv("LMLAB_DATA"), LMLAB_DATA_DIR };
    char cand[PATH_MAX + 16], real[PATH_MAX];
    struct stat st;
    for (int d = 0; d < 2 && !strchr(item, '/'); d++) {
        if (!dirs[d] || !*dirs[d]) continue;
        snprintf(cand, sizeof cand, "%s/%s.txt", dirs[d], item);
        if (!stat(cand, &st) && !S_ISDIR(st.st_mode) && realpath(cand, real)) break;
        snprintf(cand, sizeof cand, "%s/%s", dirs[d], item);
        if (!stat(cand, &st) && S_ISDIR(st.st_mode) && realpath(cand, real)) break;
        cand[0] = 0;
    }
    if (strchr(item, '/') || !cand[0]) {
        if (!realpath(item, real)) {
            if (corpus_placeholder_error(item, err)) return LM_EIO;
            if (strchr(item, '/'))
                return err_set(err, LM_EIO, "no dataset '%s': %s", item, strerror(errno));
            return err_set(err, LM_EIO, "no dataset '%s': no such file or directory, and no bundled "
                           "corpus of that name in %s (bundled: tinyshakespeare, wikitext-small)",
                           item, dirs[0] && *dirs[0] ? dirs[0] : LMLAB_DATA_DIR);
        }
    }
    if (strlen(real) >= cap || strlen(real) > 1000)
        return err_set(err, LM_EARG, "dataset path too long: '%.80s...'", real);
    snprintf(abs, cap, "%s", real);
    return LM_OK;
}

/* What abs (resolved) is when it is the filesystem's root or one of its system
 * directories, else NULL: no corpus, and walking one reads the disk (or /proc's endless
 * links) before any error. */
static const char *system_dir(const char *abs)
{
    static const char *const sys[] = { "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32",
        "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr", "/var", NULL };
    if (!strcmp(abs, "/")) return "the root of the filesystem";
    for (int i = 0; sys[i]; i++)
        if (!strcmp(abs, sys[i])) return "a system directory";
    return NULL;
}

static int system_dir_error(const char *abs, char *err)
{
    const char *what = system_dir(abs);
    return what ? err_set(err, LM_EARG, "'%s' is %s, not a corpus (lmlab reads every file "
                          "under a directory): give the directory of your text files", abs, what)
                : LM_OK;
}

static void count_skip(CorpusSkips *k, int kind, const char *what, const char *why)
{
    k->n[kind]++;
    if (!k->first[kind][0]) snprintf(k->first[kind], sizeof k->first[kind], "%.1000s (%s)", what, why);
}

/* A directory p found in the walk (st: its target's): 1 when it is entered, 0 when it
 * was already listed (counted), else an error: a link to / or a system directory. */
static int enter_dir(Corpus *c, const char *p, const struct stat *st, char *err)
{
    struct stat lst;
    char real[PATH_MAX];
    const char *what;
    if (!lstat(p, &lst) && S_ISLNK(lst.st_mode) && realpath(p, real) && (what = system_dir(real)))
        return -err_set(err, LM_EARG, "'%s' is a link to '%s', %s, not part of a corpus: remove "
                        "the link, or give the directories of your text files", p, real, what);
    int seen = dirset_add(&c->dirs, st);
    if (seen < 0) return -err_set(err, LM_ENOMEM, "out of memory listing the corpus's files");
    if (seen) count_skip(&c->open_skips, CORPUS_SKIP_REPEATED_DIR, p, "a directory already listed: a "
                         "link to it, or to a directory holding it");
    return !seen;
}

/* Every file under dir (dot names skipped), unsorted. Each directory is entered once, so
 * symlink loops end; depth bounds plain nesting. */
static int walk(Corpus *c, const char *dir, int depth, char *err)
{
    if (depth > 64) return err_set(err, LM_EARG, "'%s': directories nested over 64 deep", dir);
    DIR *d = opendir(dir);
    if (!d) {
        count_skip(&c->open_skips, CORPUS_SKIP_UNREADABLE, dir, strerror(errno));
        return LM_OK;
    }
    struct dirent *e;   /* (unreadable directories are kept in open_skips for every pass) */
    int rc = LM_OK;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (++c->listed % CORPUS_LIST_EVERY == 0 && c->opt.listed &&
            c->opt.listed(c->listed, c->opt.listed_ud)) {
            rc = err_set(err, LM_ECANCEL, "listing the files under '%s' stopped (%llu looked "
                         "at)", dir, c->listed);
            break;
        }
        char p[1100];
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p) continue;
        struct stat st;
        if (stat(p, &st)) {   /* a dangling link, or no permission to look */
            count_skip(&c->open_skips, CORPUS_SKIP_UNREADABLE, p, strerror(errno));
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            rc = add_source(c, p, -1, 0, err);
            continue;
        }
        int in = enter_dir(c, p, &st, err);
        rc = in < 0 ? -in : in ? walk(c, p, depth + 1, err) : LM_OK;
    }
    closedir(d);
    return rc;
}

/* Adds the files of one resolved item (roots_only: a directory's files are not listed). */
static int add_item(Corpus *c, const char *abs, int n_items, char *err)
{
    struct stat st;
    if (stat(abs, &st)) return err_set(err, LM_EIO, "cannot read '%s': %s", abs, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return add_source(c, abs, -1, 1, err);
    if (system_dir_error(abs, err)) return LM_EARG;
    int l = add_layout(c, abs, err);
    if (l < 0) return -l;
    if (l > 0) {
        c->has_splits = 1;
        if (n_items > 1)
            return err_set(err, LM_EARG, "'%s' is a WikiText-layout directory (its own train, "
                           "valid and test files): it cannot be part of a list; give it alone", abs);
        return LM_OK;
    }
    if (c->opt.roots_only) return LM_OK;
    int seen = dirset_add(&c->dirs, &st);
    if (seen < 0) return err_set(err, LM_ENOMEM, "out of memory listing the corpus's files");
    if (seen)
        return err_set(err, LM_EARG, "'%s' is listed twice (given twice, or inside another "
                       "directory of the list, or linked from it): give it once", abs);
    int first = c->n;
    int rc = walk(c, abs, 0, err);
    if (rc) return rc;
    if (c->n == first)
        return err_set(err, LM_EARG, "directory '%s' has no files (dot files are skipped): give a "
                       "directory of text or .jsonl files", abs);
    qsort(c->src + first, (size_t)(c->n - first), sizeof *c->src, cmp_path);
    return LM_OK;
}

int corpus_open(const char *spec, const CorpusOptions *opt, Corpus **out, char *err)
{
    *out = NULL;
    if (!spec || !*spec)
        return err_set(err, LM_EARG, "no dataset given: name a bundled corpus (tinyshakespeare, "
                       "wikitext-small), a file, a directory, or a comma list of them");
    Corpus *c = calloc(1, sizeof *c);
    size_t n_commas = 0;
    for (const char *p = spec; *p; p++) n_commas += *p == ',';
    char *items = strdup(spec);
    if (!c || !items || !(c->roots = calloc(n_commas + 1, PATH_MAX + 1))) {
        free(items);
        corpus_close(c);
        return err_set(err, LM_ENOMEM, "out of memory reading the dataset spec");
    }
    c->opt = *opt;
    snprintf(c->text_key, sizeof c->text_key, "%s", opt->text_key && *opt->text_key ? opt->text_key : "text");
    c->opt.text_key = c->text_key;
    if (!c->opt.piece) c->opt.piece = (size_t)1 << 20;
    struct stat st;
    int whole = !stat(spec, &st);   /* a path with a comma in its name */
    int n_items = 1, rc = LM_OK;
    for (const char *p = spec; !whole && *p; p++) n_items += *p == ',';
    char *save = NULL, *it = whole ? items : strtok_r(items, ",", &save);
    for (; !rc && it; it = whole ? NULL : strtok_r(NULL, ",", &save)) {
        char abs[PATH_MAX];
        if (!*it) continue;
        rc = resolve_item(it, abs, sizeof abs, err);
        if (!rc) rc = add_item(c, abs, n_items, err);
        if (!rc) {
            if (c->roots[0]) strcat(c->roots, ",");
            strcat(c->roots, abs);
        }
    }
    free(items);
    if (!rc && c->n == 0 && !opt->roots_only)
        rc = err_set(err, LM_EARG, "dataset '%s' names no file", spec);
    if (rc) {
        corpus_close(c);
        return rc;
    }
    corpus_rewind(c);
    *out = c;
    return LM_OK;
}

/* ---- reading ---- */

void corpus_rewind(Corpus *c)
{
    cstream_close(c->cs);
    c->cs = NULL;
    c->cur = -1;
    c->blen = c->bstart = c->scan = 0;
    c->eof = 1;
    c->done_raw = c->docs = 0;
    c->chain = 0xcbf29ce484222325ULL;
    c->skips = c->open_skips;
}

static void skip_note(Corpus *c, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void skip_note(Corpus *c, int kind, const char *fmt, ...)
{
    c->skips.n[kind]++;
    if (c->skips.first[kind][0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->skips.first[kind], sizeof c->skips.first[kind], fmt, ap);
    va_end(ap);
}

/* 0 text; otherwise a description of why the bytes are not text (dataset.c's rule: any
 * NUL, or over 10% control bytes other than \t \n \r \f \v). */
static const char *binary_why(const char *b, size_t n)
{
    size_t nul = 0, ctrl = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)b[i];
        nul += ch == 0;
        ctrl += (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\f' && ch != '\v') || ch == 0x7f;
    }
    if (nul) return "NUL bytes";
    if (ctrl * 10 > n) return "over 10% control bytes";
    return NULL;
}

/* Ends the current source: its hash checked against an earlier pass and kept. */
static int end_source(Corpus *c, int whole, char *err)
{
    CorpusSource *s = &c->src[c->cur];
    if (cstream_raw_size(c->cs) != s->size || cstream_mtime_ns(c->cs) != s->mtime_ns)
        return err_set(err, LM_EIO, "'%s' changed during the prepare (size %llu -> %llu bytes "
                       "or its time): prepare again when nothing writes it", s->path, s->size,
                       cstream_raw_size(c->cs));
    if (whole) {
        unsigned long long h = cstream_raw_hash(c->cs);
        if (s->hashed && s->hash != h)
            return err_set(err, LM_EIO, "'%s' changed during the prepare (its bytes differ from "
                           "the first pass): prepare again when nothing writes it", s->path);
        s->hash = h;
        s->hashed = 1;
    }
    c->chain = cstream_chain(c->cs);
    c->done_raw += s->size;
    cstream_close(c->cs);
    c->cs = NULL;
    c->blen = c->bstart = c->scan = 0;
    return LM_OK;
}

/* Opens the next readable source; *end when none is left. */
static int open_next(Corpus *c, int *end, char *err)
{
    while (++c->cur < c->n) {
        CorpusSource *s = &c->src[c->cur];
        char msg[LM_ERR_LEN];
        int rc = cstream_open(s->path, &c->cs, msg);
        if (rc == LM_ENOMEM) return err_set(err, rc, "%s", msg);
        if (rc && s->required) return err_set(err, rc, "%s", msg);
        if (rc) {
            if (c->opt.strict) return err_set(err, rc, "%s (strict=true refuses it; without it the "
                                              "file is skipped and counted)", msg);
            skip_note(c, CORPUS_SKIP_UNREADABLE, "%s", msg);
            c->done_raw += s->size;
            continue;
        }
        cstream_chain_from(c->cs, c->chain);
        c->eof = 0;
        c->first_piece = 1;
        c->line = 1;
        c->target = c->opt.piece;
        return LM_OK;
    }
    *end = 1;
    return LM_OK;
}

/* Reads until buf[bstart..blen) holds want bytes or the source ends; compacts first. */
static int gather(Corpus *c, size_t want, char *err)
{
    if (c->bstart) {
        memmove(c->buf, c->buf + c->bstart, c->blen - c->bstart);
        c->blen -= c->bstart;
        c->bstart = 0;
    }
    while (!c->eof && c->blen < want) {
        if (c->bcap - c->blen < ((size_t)1 << 16) || c->bcap < want) {
            size_t cap = c->bcap ? 2 * c->bcap : want + ((size_t)1 << 20);
            while (cap < want) cap *= 2;
            char *b = realloc(c->buf, cap);
            if (!b) return err_set(err, LM_ENOMEM, "out of memory reading '%s' (%zu bytes)",
                                   c->src[c->cur].path, cap);
            c->buf = b;
            c->bcap = cap;
        }
        size_t k, ask = want - c->blen < ((size_t)1 << 12) ? (size_t)1 << 12 : want - c->blen;
        if (ask > c->bcap - c->blen) ask = c->bcap - c->blen;
        int rc = cstream_read(c->cs, c->buf + c->blen, ask, &k, err);
        if (rc) return rc;
        c->blen += k;
        c->eof = k == 0;
    }
    return LM_OK;
}

/* Where a piece with no allowed cut is cut anyway: after the last '\n'; else before the
 * last space that starts a word (" w": GPT-2's pre-tokens begin there, so its ids are
 * the whole line's, and no word is split); else before the last UTF-8 lead byte; never at
 * n, so a byte stays for the next piece. */
static size_t fallback_cut(const char *s, size_t n)
{
    const char *nl = n > 1 ? memrchr(s, '\n', n - 1) : NULL;
    if (nl) return (size_t)(nl - s) + 1;
    for (size_t p = n - 1; p > 0; p--)
        if (s[p - 1] != ' ' && s[p] == ' ' && p + 1 < n && (unsigned char)s[p + 1] > ' ' &&
            (unsigned char)s[p + 1] < 0x7f)
            return p;
    size_t i = n - 1;
    while (i > 1 && ((unsigned char)s[i] & 0xc0) == 0x80) i--;
    return i ? i : n - 1;
}

static size_t default_cut(const char *s, size_t n, void *ud)
{
    (void)ud;
    const char *nl = n > 1 ? memrchr(s, '\n', n - 1) : NULL;
    return nl ? (size_t)(nl - s) + 1 : 0;
}

/* The next piece of a text source; p->len = 0 when the source is done. */
static int next_text(Corpus *c, CorpusPiece *p, char *err)
{
    const CorpusSource *s = &c->src[c->cur];
    for (;;) {
        int rc = gather(c, c->target, err);
        if (rc) return rc;
        if (c->blen == 0) {
            if (c->first_piece && s->required && s->split != 2)
                return err_set(err, LM_EFORMAT, "'%s' is empty: give a file with text in it", s->path);
            if (c->first_piece && s->split < 0) skip_note(c, CORPUS_SKIP_EMPTY, "%s", s->path);
            return end_source(c, 1, err);
        }
        size_t cut = c->blen;
        if (!c->eof) {
            cut = (c->opt.cut ? c->opt.cut : default_cut)(c->buf, c->blen, c->opt.cut_ud);
            if (cut >= c->blen) cut = 0;
            if (!cut && c->target < CORPUS_MAX_PIECE) {
                c->target *= 2;
                continue;
            }
            if (!cut) cut = fallback_cut(c->buf, c->blen);
        }
        c->target = c->opt.piece;
        unsigned long long at = cstream_raw_done(c->cs);
        const char *why = binary_why(c->buf, cut);
        int first = c->first_piece;
        c->first_piece = 0;
        c->bstart = cut;
        if (why && first && s->required)   /* a file the user named: refused, not skipped */
            return err_set(err, LM_EFORMAT, "'%s' looks binary, not text (%s in its first %zu "
                           "bytes): give a text file (UTF-8)%s", s->path, why, cut,
                           ends_with(s->path, ".bin") ? "; a .bin is read as tokens only when it "
                           "is an llm.c shard (its header) or nanoGPT's train.bin/val.bin" : "");
        if (why && c->opt.strict)
            return err_set(err, LM_EFORMAT, "'%s' is not text (%s%s): remove it from the corpus, or "
                           "prepare without strict=true to skip it", s->path, why,
                           first ? "" : " in a piece further in");
        if (why && first) {   /* a binary file found in a folder: skipped whole */
            skip_note(c, CORPUS_SKIP_BINARY, "%s (%s)", s->path, why);
            return end_source(c, 0, err);
        }
        if (why) {
            skip_note(c, CORPUS_SKIP_BINARY, "%s (%s before byte %llu on disk)", s->path, why, at);
            continue;
        }
        p->text = c->buf;
        p->len = cut;
        p->doc_end = c->eof && cut == c->blen;
        return LM_OK;
    }
}

/* The next document of a jsonl source; p->len = 0 when the source is done. */
static int next_jsonl(Corpus *c, CorpusPiece *p, char *err)
{
    const CorpusSource *s = &c->src[c->cur];
    for (;;) {
        const char *line = c->buf + c->bstart, *nl = NULL;
        size_t avail = c->blen - c->bstart;
        if (c->scan < avail) nl = memchr(line + c->scan, '\n', avail - c->scan);
        if (!nl && !c->eof) {
            if (avail > CORPUS_MAX_LINE)
                return err_set(err, LM_EFORMAT, "'%s' line %llu is longer than %zu MB: a jsonl file "
                               "holds one document a line", s->path, c->line, CORPUS_MAX_LINE >> 20);
            c->scan = avail;
            int rc = gather(c, avail + ((size_t)1 << 20), err);
            if (rc) return rc;
            continue;
        }
        if (!nl && avail == 0) return end_source(c, 1, err);
        size_t len = nl ? (size_t)(nl - line) : avail;
        unsigned long long ln = c->line++;
        c->bstart += len + (nl != NULL);
        c->scan = 0;
        size_t k = 0;
        while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r')) k++;
        if (k == len) continue;   /* a blank line */
        json_error_t je;
        json_t *o = json_loadb(line, len, JSON_ALLOW_NUL, &je);
        const json_t *v = o ? json_object_get(o, c->text_key) : NULL;
        int kind = !o || !json_is_object(o) ? CORPUS_SKIP_BAD_JSON
                   : !json_is_string(v) ? CORPUS_SKIP_MISSING_KEY : -1;
        if (kind >= 0) {
            json_decref(o);
            if (c->opt.strict)
                return err_set(err, LM_EFORMAT, "'%s' line %llu: %s: fix the line or prepare without "
                               "strict=true to skip it", s->path, ln, kind == CORPUS_SKIP_BAD_JSON
                               ? (o ? "not a JSON object" : je.text) : "no string value for the "
                               "text key (text_key= names another)");
            skip_note(c, kind, "%s:%llu", s->path, ln);
            continue;
        }
        size_t n = json_string_length(v);
        if (n + 1 > c->doc_cap) {
            char *d = realloc(c->doc, n + 1);
            if (!d) {
                json_decref(o);
                return err_set(err, LM_ENOMEM, "out of memory for '%s' line %llu", s->path, ln);
            }
            c->doc = d;
            c->doc_cap = n + 1;
        }
        memcpy(c->doc, json_string_value(v), n);
        json_decref(o);
        if (n == 0) continue;
        const char *why = binary_why(c->doc, n);
        if (why && c->opt.strict)
            return err_set(err, LM_EFORMAT, "'%s' line %llu is not text (%s): remove it, or prepare "
                           "without strict=true to skip it", s->path, ln, why);
        if (why) {
            skip_note(c, CORPUS_SKIP_BINARY, "%s:%llu (%s)", s->path, ln, why);
            continue;
        }
        p->text = c->doc;
        p->len = n;
        p->doc_end = 1;
        return LM_OK;
    }
}

int corpus_next(Corpus *c, CorpusPiece *p, int *end, char *err)
{
    memset(p, 0, sizeof *p);
    *end = 0;
    for (;;) {
        if (!c->cs) {
            int rc = open_next(c, end, err);
            if (rc || *end) return rc;
        }
        const CorpusSource *s = &c->src[c->cur];
        int rc = s->format == CORPUS_JSONL ? next_jsonl(c, p, err) : next_text(c, p, err);
        if (rc) return rc;
        if (p->len) {
            p->split = s->split;
            p->source = c->cur;
            c->docs += p->doc_end;
            return LM_OK;
        }
    }
}
