/* tokformat.c — finding the token files of a corpus in its layout (see tokformat.h).
 * References: llm.c dev/data/ scripts (names like fineweb_train_000001.bin, tinyshakespeare_val
 * _000000.bin), nanoGPT data/openwebtext/prepare.py (train.bin, val.bin of np.uint16).
 * Not a writer, and no text: anything else is left to dataset.c's text path. */
#include "tokformat.h"

#include "err.h"
#include "tokenizer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tokformat_name(TokFormat f)
{
    static const char *const names[] = { "text", "lmlab token cache", "llm.c shards",
                                         "nanoGPT train.bin/val.bin", "token files" };
    return f <= TOKFORMAT_LIST ? names[f] : "?";
}

void tokformat_info_free(TokFormatInfo *info)
{
    free(info->tokenizer_json);
    memset(info, 0, sizeof *info);
}

static int is_file(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISREG(st.st_mode);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* Whether the file starts with an llm.c header (else it is read headerless). */
static int has_llmc_header(const char *path)
{
    unsigned char h[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 1;   /* tokseq_add_file will name the failure */
    ssize_t got = pread(fd, h, sizeof h, 0);
    close(fd);
    if (got != 8) return 0;
    uint32_t magic = h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24;
    uint32_t version = h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24;
    return (magic == TOKSEQ_MAGIC16 && version == 1) || (magic == TOKSEQ_MAGIC32 && version == 7);
}

/* Whether a .bin file given by name holds tokens: an llm.c shard by its header, or nanoGPT's
 * headerless train.bin/val.bin by their names. Any other .bin (an executable, an image) is
 * left to the text path, which refuses bytes that are not text and says why. A file that
 * cannot be opened counts as tokens, so tokseq_add_file names the failure. */
static int named_tokens(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!strcmp(base, "train.bin") || !strcmp(base, "val.bin")) return 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 1;
    close(fd);
    return has_llmc_header(path);
}

/* A hash standing for the files: names, sizes, and the first and last 64 KB of each. */
static unsigned long long files_hash(const TokSeq split[3])
{
    unsigned long long h = TOKENIZER_FNV_SEED;
    unsigned char *buf = malloc(65536);
    if (!buf) return h;
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < split[s].n_shards; i++) {
            const TokShard *sh = &split[s].shard[i];
            const char *base = strrchr(sh->path, '/');
            base = base ? base + 1 : sh->path;
            h = tokenizer_fnv1a(base, strlen(base), h);
            uint64_t size = sh->offset + sh->n * (uint64_t)sh->width;
            h = tokenizer_fnv1a(&size, sizeof size, h);
            ssize_t got = pread(sh->fd, buf, 65536, 0);
            if (got > 0) h = tokenizer_fnv1a(buf, (size_t)got, h);
            if (size > 65536 && (got = pread(sh->fd, buf, 65536, (off_t)(size - 65536))) > 0)
                h = tokenizer_fnv1a(buf, (size_t)got, h);
        }
    free(buf);
    return h;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the files of dir whose names hold `part` and end in .bin, sorted by name. */
static int add_matching(const char *dir, const char *part, TokSeq *s, char *err)
{
    DIR *d = opendir(dir);
    if (!d) return err_set(err, LM_EIO, "cannot list '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = LM_OK;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (!strstr(e->d_name, part) || !ends_with(e->d_name, ".bin")) continue;
        if (n == cap) {
            char **g = realloc(names, sizeof *g * (cap = cap ? 2 * cap : 16));
            if (!g) { rc = err_set(err, LM_ENOMEM, "out of memory listing '%s'", dir); break; }
            names = g;
        }
        if (!(names[n] = strdup(e->d_name))) rc = err_set(err, LM_ENOMEM, "out of memory");
        else n++;
    }
    closedir(d);
    if (!rc && n > 1) qsort(names, n, sizeof *names, cmp_str);   /* names is NULL when n is 0 */
    char path[1100];
    for (size_t i = 0; !rc && i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = tokseq_add_file(s, path, 0, 0, err);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

/* Reads a whole small file (meta.json, tokenizer.json). */
static int slurp(const char *path, char **out, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(err, LM_EIO, "cannot read '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    for (size_t got; b && (got = fread(b + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *g = realloc(b, (cap *= 2) + 1);
            if (!g) { free(b); b = NULL; }
            else b = g;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!b) return err_set(err, LM_ENOMEM, "out of memory reading '%s'", path);
    if (bad) { free(b); return err_set(err, LM_EIO, "cannot read '%s'", path); }
    b[n] = 0;
    *out = b;
    return LM_OK;
}

/* The splits and facts of a cache's meta.json. */
static int open_cache(const char *dir, TokSeq split[3], TokFormatInfo *info, char *err)
{
    static const char *const names[3] = { "train", "valid", "test" };
    char path[1100];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m) return err_set(err, LM_EFORMAT, "'%s' is not valid JSON (line %d: %s): the cache "
                           "is damaged; remove it (lmlab data rm) and prepare again", path,
                           je.line, je.text);
    int rc = LM_OK;
    const char *fmt = json_string_value(json_object_get(m, "format"));
    json_t *tok = json_object_get(m, "tokenizer"), *splits = json_object_get(m, "splits");
    const char *key = json_string_value(json_object_get(m, "key"));
    const char *hash = json_string_value(json_object_get(tok, "hash"));
    const char *kind = json_string_value(json_object_get(tok, "kind"));
    const char *tfile = json_string_value(json_object_get(tok, "file"));
    if (!fmt || strcmp(fmt, "lmlab-token-cache") || json_integer_value(json_object_get(m, "version")) != 1)
        rc = err_set(err, LM_EFORMAT, "'%s' is not an lmlab token cache of version 1 (format "
                     "'%s'): remove it or prepare again", path, fmt ? fmt : "?");
    else if (!key || !hash || !kind || !json_is_object(splits) || strlen(hash) != 16)
        rc = err_set(err, LM_EFORMAT, "'%s' lacks its key, tokenizer or splits: the cache is "
                     "damaged; remove it (lmlab data rm) and prepare again", path);
    json_t *src = json_object_get(m, "sources");
    const char *one = json_array_size(src) == 1
                          ? json_string_value(json_object_get(json_array_get(src, 0), "hash")) : NULL;
    unsigned long long all = TOKENIZER_FNV_SEED;   /* several: a hash of their content hashes */
    for (size_t i = 0; i < json_array_size(src); i++) {
        const char *h = json_string_value(json_object_get(json_array_get(src, i), "hash"));
        if (h) all = tokenizer_fnv1a(h, strlen(h), all);
    }
    if (!rc) {   /* one source: its content hash, what a run on the text recorded */
        info->key = one && strlen(one) == 16 ? strtoull(one, NULL, 16)
                    : json_array_size(src) > 1 ? all : strtoull(key, NULL, 16);
        snprintf(info->tokenizer_hash, sizeof info->tokenizer_hash, "%s", hash);
        snprintf(info->tokenizer_kind, sizeof info->tokenizer_kind, "%s", kind);
        info->vocab_size = (int)json_integer_value(json_object_get(tok, "vocab_size"));
        json_t *eot = json_object_get(m, "eot");
        info->eot = json_is_integer(eot) ? (int)json_integer_value(eot) : -1;
        info->documents = (uint64_t)json_integer_value(
            json_object_get(json_object_get(splits, "train"), "documents"));
        snprintf(path, sizeof path, "%s/%s", dir, tfile && !strchr(tfile, '/') ? tfile
                                                                               : "tokenizer.json");
        rc = slurp(path, &info->tokenizer_json, err);
    }
    for (int s = 0; !rc && s < 3; s++) {
        json_t *sh = json_object_get(json_object_get(splits, names[s]), "shards"), *e;
        size_t i;
        json_array_foreach(sh, i, e) {
            const char *f = json_string_value(json_object_get(e, "file"));
            json_int_t n = json_integer_value(json_object_get(e, "tokens"));
            if (!f || strchr(f, '/') || n <= 0) {
                rc = err_set(err, LM_EFORMAT, "%s/meta.json: shard %zu of %s has no file name "
                             "or token count: the cache is damaged; prepare again", dir, i,
                             names[s]);
                break;
            }
            snprintf(path, sizeof path, "%s/%s", dir, f);
            if ((rc = tokseq_add_file(&split[s], path, 0, (uint64_t)n, err))) break;
            split[s].cache = 1;
        }
    }
    json_decref(m);
    return rc;
}

/* A comma list of .bin files. */
static int open_list(const char *spec, TokSeq split[3], char *err)
{
    char item[1100];
    for (const char *p = spec; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len >= sizeof item) return err_set(err, LM_EARG, "a path of data= is too long");
        memcpy(item, p, len);
        item[len] = 0;
        p += len + (c != NULL);
        if (!len) continue;
        const char *base = strrchr(item, '/');
        base = base ? base + 1 : item;
        int s = strstr(base, "val") ? 1 : strstr(base, "test") ? 2 : 0;
        int rc = tokseq_add_file(&split[s], item, !has_llmc_header(item), 0, err);
        if (rc) return rc;
    }
    return LM_OK;
}

TokFormat tokformat_detect(const char *spec)
{
    if (!spec || strlen(spec) > 1000) return TOKFORMAT_NONE;
    char p[1100];
    struct stat st;
    if (strchr(spec, ',') || ends_with(spec, ".bin")) {
        char first[1100];
        snprintf(first, sizeof first, "%s", spec);
        char *c = strchr(first, ',');
        if (c) *c = 0;
        return ends_with(first, ".bin") && named_tokens(first) ? TOKFORMAT_LIST : TOKFORMAT_NONE;
    }
    if (stat(spec, &st) || !S_ISDIR(st.st_mode)) return TOKFORMAT_NONE;
    snprintf(p, sizeof p, "%s/meta.json", spec);
    if (is_file(p)) return TOKFORMAT_CACHE;
    snprintf(p, sizeof p, "%s/train.bin", spec);
    if (!stat(p, &st)) return TOKFORMAT_NANOGPT;   /* not a file: said when it is opened */
    DIR *d = opendir(spec);
    TokFormat f = TOKFORMAT_NONE;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strstr(e->d_name, "_train_") && ends_with(e->d_name, ".bin")) { f = TOKFORMAT_LLMC; break; }
    if (d) closedir(d);
    return f;
}

int tokformat_open(const char *spec, TokSeq split[3], TokFormatInfo *info, char *err)
{
    memset(info, 0, sizeof *info);
    info->eot = -1;
    if (!spec || strlen(spec) > 1000) return LM_OK;
    TokFormat f = tokformat_detect(spec);
    if (f == TOKFORMAT_NONE) return LM_OK;
    int rc = LM_OK;
    char p[1100];
    if (f == TOKFORMAT_CACHE) {
        rc = open_cache(spec, split, info, err);
    } else if (f == TOKFORMAT_LLMC) {
        rc = add_matching(spec, "_train_", &split[0], err);
        if (!rc) rc = add_matching(spec, "_val_", &split[1], err);
        if (!rc) rc = add_matching(spec, "_test_", &split[2], err);
    } else if (f == TOKFORMAT_NANOGPT) {
        for (int s = 0; !rc && s < 2; s++) {
            snprintf(p, sizeof p, "%s/%s", spec, s ? "val.bin" : "train.bin");
            if (s == 1 && !is_file(p))
                break;   /* named below */
            rc = tokseq_add_file(&split[s], p, !has_llmc_header(p), 0, err);
        }
    } else {
        rc = open_list(spec, split, err);
    }
    for (int s = 0; !rc && s < 2; s++)
        if (split[s].n < 2)
            rc = err_set(err, LM_EFORMAT, "'%s' (%s) has %s %s split: a corpus of token files "
                         "needs a train and a validation split (%s)", spec, tokformat_name(f),
                         split[s].n_shards ? "a too short" : "no",
                         s ? "validation" : "train",
                         f == TOKFORMAT_LLMC ? "*_train_*.bin and *_val_*.bin"
                         : f == TOKFORMAT_NANOGPT ? "train.bin and val.bin"
                         : f == TOKFORMAT_LIST ? "name a file with 'val' in its name"
                         : "prepare it again");
    if (rc) {
        for (int s = 0; s < 3; s++) tokseq_free(&split[s]);
        tokformat_info_free(info);
        return rc;
    }
    info->format = f;
    if (f != TOKFORMAT_CACHE) info->key = files_hash(split);
    return LM_OK;
}
