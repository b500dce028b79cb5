/* corpus_open.c — resolving a data spec to the files a corpus reads (see corpus.h): bundled
 * names, comma lists, WikiText layouts, directory walks (each directory entered once;
 * system directories refused). Reading them is corpus.c's. */
#include "private/corpus_impl.h"

#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LMLAB_DATA_DIR
#define LMLAB_DATA_DIR "data"
#endif

static CorpusFormat format_of(const char *path)
{
    static const char *const ext[] = { ".jsonl", ".jsonl.gz", ".jsonl.xz", ".jsonl.zst" };
    for (int i = 0; i < 4; i++)
        if (corpus_ends_with(path, ext[i])) return CORPUS_JSONL;
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
    if (seen) corpus_skip_count(&c->open_skips, CORPUS_SKIP_REPEATED_DIR, "%.1000s (a directory already "
                          "listed: a link to it, or to a directory holding it)", p);
    return !seen;
}

/* Every file under dir (dot names skipped), unsorted. Each directory is entered once, so
 * symlink loops end; depth bounds plain nesting. */
static int walk(Corpus *c, const char *dir, int depth, char *err)
{
    if (depth > 64) return err_set(err, LM_EARG, "'%s': directories nested over 64 deep", dir);
    DIR *d = opendir(dir);
    if (!d) {
        corpus_skip_count(&c->open_skips, CORPUS_SKIP_UNREADABLE, "%.1000s (%s)", dir, strerror(errno));
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
            corpus_skip_count(&c->open_skips, CORPUS_SKIP_UNREADABLE, "%.1000s (%s)", p, strerror(errno));
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

