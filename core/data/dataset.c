/* dataset.c — loading corpora: token files opened (tokformat.h, read later by tokseq.h)
 * or a text read whole and tokenized into int32 ids (see dataset.h).
 * References: the seed notebook's prepare_data, PyTorch examples word_language_model
 * (data.py Corpus). Not a downloader; text is read whole, regular files only (a corpus
 * too large to hold goes through a prepared token cache). */
#include "dataset.h"

#include "corpus.h"
#include "err.h"
#include "regfile.h"
#include "sysinfo.h"
#include "tokformat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LMLAB_DATA_DIR
#define LMLAB_DATA_DIR "data"
#endif

typedef struct {
    char *text[3];
    size_t len[3];
    char path[3][1100];   /* the files read ("" for a missing test split) */
    char dir[1024];       /* the directory, for a WikiText layout */
    const char *const *names;  /* its three file names */
    int is_dir;
} Raw;

const char *dataset_split_name(int split)
{
    static const char *const names[] = { "train", "valid", "test" };
    return split >= 0 && split < 3 ? names[split] : "?";
}

/* Refuses bytes that are not text: any NUL (executables, images, archives, UTF-16), or
 * more than 10% control bytes other than tab, newline, CR, form feed and vertical tab
 * (bytes >= 0x80 are left alone: UTF-8 and Latin-1 text use them). */
static int check_text(const char *path, const char *b, size_t n, char *err)
{
    size_t nul = 0, ctrl = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        nul += c == 0;
        ctrl += (c < 0x20 && !strchr("\t\n\r\f\v", c)) || c == 0x7f;
    }
    if (nul)
        return err_set(err, LM_EFORMAT, "'%s' looks binary, not text: %zu NUL byte%s in %zu "
                       "bytes (an executable, image, archive or UTF-16 file?): give a text "
                       "file (UTF-8)", path, nul, nul == 1 ? "" : "s", n);
    if (ctrl * 10 > n)
        return err_set(err, LM_EFORMAT, "'%s' looks binary, not text: %.0f%% of its bytes are "
                       "control characters: give a text file (UTF-8)", path,
                       100.0 * (double)ctrl / (double)n);
    return LM_OK;
}

/* Reads a whole regular file of text. Empty files are an error unless allow_empty. */
static int read_file(const char *path, int allow_empty, char **buf, size_t *len, char *err)
{
    struct stat st;
    *buf = NULL;
    *len = 0;
    if (stat(path, &st))
        return err_set(err, LM_EIO, "cannot read '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return err_set(err, LM_EARG, "'%s' is not a regular file (%s): give a text file",
                       path, S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
    /* what the text will hold resident: its bytes and up to 4 bytes of ids per byte, the
     * encoder's allocation up front, and the split's copy: about 9 bytes a byte */
    double need = 9.0 * (double)st.st_size, have = sysinfo_mem_available();
    if (have > 0 && need > 0.85 * have)
        return err_set(err, LM_ENOMEM, "reading '%s' (%.2f GiB of text) into memory as token "
                       "ids needs about %.2f GiB but %.2f GiB is available: prepare it once as "
                       "token shards (lmlab data prepare %s), which train without holding "
                       "the corpus", path, (double)st.st_size / (1 << 30), need / (1 << 30),
                       have / (1 << 30), path);
    unsigned char *raw;   /* opened without blocking and checked again (regfile) */
    size_t n;
    int rc = regfile_read(path, SIZE_MAX - 1, &raw, &n, err);
    if (rc)
        return rc;
    char *b = (char *)raw;
    if (n == 0 && !allow_empty) {
        free(b);
        return err_set(err, LM_EFORMAT, "'%s' is empty: give a file with text in it", path);
    }
    rc = check_text(path, b, n, err);
    if (rc) {
        free(b);
        return rc;
    }
    *buf = b;
    *len = n;
    return LM_OK;
}

static int path_kind(const char *path)   /* 0 missing, 1 directory, 2 anything else */
{
    struct stat st;
    if (stat(path, &st)) return 0;
    return S_ISDIR(st.st_mode) ? 1 : 2;
}

/* Resolves spec to a file (raw->path[0]) or a directory (raw->is_dir, raw->path[0]). */
static int resolve(const char *spec, Dataset *ds, Raw *raw, char *err)
{
    const char *dirs[2] = { getenv("LMLAB_DATA"), LMLAB_DATA_DIR };
    char cand[1024];
    if (!spec || !*spec) return err_set(err, LM_EARG, "no dataset given: name a bundled corpus "
                                        "(tinyshakespeare, wikitext-small), a file or a directory");
    if (strlen(spec) > 960) return err_set(err, LM_EARG, "dataset path too long (%zu bytes)", strlen(spec));
    snprintf(ds->name, sizeof ds->name, "%.255s", spec);   /* a label: may be cut */
    for (int d = 0; d < 2 && !strchr(spec, '/'); d++) {
        if (!dirs[d] || !*dirs[d]) continue;
        snprintf(cand, sizeof cand, "%s/%s.txt", dirs[d], spec);
        if (path_kind(cand) == 2) {
            snprintf(raw->path[0], sizeof raw->path[0], "%s", cand);
            return LM_OK;
        }
        snprintf(cand, sizeof cand, "%s/%s", dirs[d], spec);
        if (path_kind(cand) == 1) {
            snprintf(raw->dir, sizeof raw->dir, "%s", cand);
            raw->is_dir = 1;
            return LM_OK;
        }
    }
    int k = path_kind(spec);
    if (k == 0 && corpus_placeholder_error(spec, err)) return LM_EIO;   /* a preset's, as given */
    if (k == 0 && strchr(spec, '/'))
        return err_set(err, LM_EIO, "no dataset '%s': no such file or directory", spec);
    if (k == 0)
        return err_set(err, LM_EIO, "no dataset '%s': no such file or directory, and no bundled "
                       "corpus of that name in %s (bundled: tinyshakespeare, wikitext-small)",
                       spec, dirs[0] && *dirs[0] ? dirs[0] : LMLAB_DATA_DIR);
    snprintf(k == 1 ? raw->dir : raw->path[0], sizeof raw->dir, "%s", spec);
    raw->is_dir = k == 1;
    return LM_OK;
}

/* Reads the split files of a WikiText-layout directory. */
static int read_dir(Raw *raw, char *err)
{
    static const char *const layouts[2][3] = {
        { "wiki.train.tokens", "wiki.valid.tokens", "wiki.test.tokens" },
        { "train.txt", "valid.txt", "test.txt" },
    };
    const char *dir = raw->dir;
    int l = 0;
    for (; l < 2; l++) {
        char p[1100];
        snprintf(p, sizeof p, "%s/%s", dir, layouts[l][0]);
        if (path_kind(p)) break;
    }
    if (l == 2)
        return err_set(err, LM_EIO, "directory '%s' has no wiki.train.tokens or train.txt: a "
                       "dataset directory holds wiki.{train,valid,test}.tokens or "
                       "{train,valid,test}.txt (test optional)", dir);
    raw->names = layouts[l];
    for (int s = 0; s < 3; s++) {
        snprintf(raw->path[s], sizeof raw->path[s], "%s/%s", dir, layouts[l][s]);
        if (s == 2 && !path_kind(raw->path[s])) {
            raw->path[s][0] = 0;
            break;
        }
        if (s == 1 && !path_kind(raw->path[s]))
            return err_set(err, LM_EIO, "directory '%s' has %s but no %s: add the validation split",
                           dir, layouts[l][0], layouts[l][1]);
        int rc = read_file(raw->path[s], s == 2, &raw->text[s], &raw->len[s], err);
        if (rc) return rc;
    }
    return LM_OK;
}

/* The tokenizer for the raw text: given, or trained as dataset.h describes. */
static int make_tokenizer(Dataset *ds, const Raw *raw, TokenizerKind kind,
                          const TokenizerOptions *opt, double train_frac, Tokenizer *given,
                          char *err)
{
    if (given) {
        ds->tok = given;
        return LM_OK;
    }
    if (kind != TOKENIZER_CHAR) {
        size_t n = raw->is_dir ? raw->len[0] : (size_t)(train_frac * (double)raw->len[0]);
        n = tokenizer_sample_end(raw->text[0], n, n < raw->len[0] ? (unsigned char)raw->text[0][n] : -1);
        return tokenizer_train_opts(kind, raw->text[0], n, opt, &ds->tok, err);
    }
    if (!raw->is_dir) return tokenizer_train(kind, raw->text[0], raw->len[0], 0, &ds->tok, err);
    size_t total = raw->len[0] + raw->len[1] + raw->len[2], at = 0;
    char *all = malloc(total + 1);
    if (!all) return err_set(err, LM_ENOMEM, "out of memory joining the splits (%zu bytes)", total);
    for (int s = 0; s < 3; s++) {
        if (raw->len[s]) memcpy(all + at, raw->text[s], raw->len[s]);
        at += raw->len[s];
    }
    int rc = tokenizer_train(kind, all, total, 0, &ds->tok, err);
    free(all);
    return rc;
}

static int encode_split(Dataset *ds, const Raw *raw, int s, int given, char *err)
{
    char msg[LM_ERR_LEN];
    int *ids = NULL;
    size_t n = 0;
    int rc = tokenizer_encode(ds->tok, raw->text[s], raw->len[s], &ids, &n, msg);
    if (!rc) tokseq_init_memory(&ds->split[s], ids, n);
    ds->n[s] = n;
    if (rc == LM_EARG && given)
        return err_set(err, rc, "'%s' cannot be encoded with the given tokenizer (from another "
                       "dataset?): %s", raw->path[s], msg);
    if (rc) return err_set(err, rc, "'%s': %s", raw->path[s], msg);
    return LM_OK;
}

/* Encodes the text and fills the splits. */
static int encode_all(Dataset *ds, const Raw *raw, double train_frac, int given, char *err)
{
    if (raw->is_dir) {
        for (int s = 0; s < 3; s++) {
            int rc = raw->path[s][0] ? encode_split(ds, raw, s, given, err) : LM_OK;
            if (rc) return rc;
        }
        ds->n_chars = tokenizer_kind(ds->tok) == TOKENIZER_CHAR
                          ? ds->n[SPLIT_VALID] : tokenizer_count_chars(raw->text[1], raw->len[1]);
        return LM_OK;
    }
    int rc = encode_split(ds, raw, 0, given, err);
    if (rc) return rc;
    size_t n = ds->n[0], k = (size_t)(train_frac * (double)n);
    int *all = ds->split[SPLIT_TRAIN].mem, *valid = malloc(sizeof(int) * (n - k + 1));
    if (!valid) return err_set(err, LM_ENOMEM, "out of memory splitting the data");
    memcpy(valid, all + k, sizeof(int) * (n - k));
    tokseq_init_memory(&ds->split[SPLIT_VALID], valid, n - k);
    ds->n[SPLIT_VALID] = n - k;
    int *shrunk = realloc(all, sizeof(int) * (k + 1));
    tokseq_init_memory(&ds->split[SPLIT_TRAIN], shrunk ? shrunk : all, k);
    ds->n[SPLIT_TRAIN] = k;
    if (tokenizer_kind(ds->tok) == TOKENIZER_CHAR) {
        ds->n_chars = n - k;
    } else {   /* BPE: exact; word: the text as decoded (spaces normalised) */
        char *text = tokenizer_decode(ds->tok, valid, n - k);
        if (!text) return err_set(err, LM_ENOMEM, "out of memory counting characters");
        ds->n_chars = tokenizer_count_chars(text, strlen(text));
        free(text);
    }
    return LM_OK;
}

static void raw_free(Raw *raw)
{
    for (int s = 0; s < 3; s++) free(raw->text[s]);
}

int dataset_load(Dataset *ds, const char *spec, TokenizerKind kind, int vocab_size,
                 double train_frac, Tokenizer *given, char *err)
{
    TokenizerOptions opt = { .vocab_size = vocab_size };
    return dataset_load_opts(ds, spec, kind, &opt, train_frac, given, err);
}

int dataset_load_opts(Dataset *ds, const char *spec, TokenizerKind kind,
                      const TokenizerOptions *opt, double train_frac, Tokenizer *given,
                      char *err)
{
    Raw raw;
    memset(&raw, 0, sizeof raw);
    memset(ds, 0, sizeof *ds);
    int found = 0, rc = dataset_open_tokens(ds, spec, kind, opt, given, &found, err);
    if (rc || found)
        return rc;
    ds->eot = -1;
    rc = resolve(spec, ds, &raw, err);
    if (!rc && !raw.is_dir && !(train_frac > 0 && train_frac < 1))
        rc = err_set(err, LM_EARG, "train_frac %g: use a fraction between 0 and 1, e.g. 0.9",
                     train_frac);
    if (!rc) rc = raw.is_dir ? read_dir(&raw, err) : read_file(raw.path[0], 0, &raw.text[0], &raw.len[0], err);
    if (rc) {
        tokenizer_destroy(given);
        raw_free(&raw);
        return rc;
    }
    ds->hash = TOKENIZER_FNV_SEED;
    for (int s = 0; s < 3; s++) ds->hash = tokenizer_fnv1a(raw.text[s], raw.len[s], ds->hash);
    if (raw.is_dir)
        snprintf(ds->source, sizeof ds->source, "%.900s/{%s,%s%s%s}", raw.dir, raw.names[0],
                 raw.names[1], raw.path[2][0] ? "," : "", raw.path[2][0] ? raw.names[2] : "");
    else
        snprintf(ds->source, sizeof ds->source, "%.1000s", raw.path[0]);
    rc = make_tokenizer(ds, &raw, kind, opt, train_frac, given, err);
    if (!rc) rc = encode_all(ds, &raw, train_frac, given != NULL, err);
    for (int s = 0; !rc && s < 2; s++)
        if (ds->n[s] < 2)
            rc = err_set(err, LM_EFORMAT, "'%s': the %s split has only %zu tokens, too short to "
                         "train on: use a larger text%s", raw.is_dir ? raw.path[s] : raw.path[0],
                         dataset_split_name(s), ds->n[s], raw.is_dir ? "" : " or another train_frac");
    raw_free(&raw);
    if (rc) {
        if (!ds->tok) tokenizer_destroy(given);
        dataset_free(ds);
    }
    return rc;
}

int dataset_tokenizer_options(const Config *c, TokenizerKind *kind, TokenizerOptions *opt,
                              char *err)
{
    if (tokenizer_kind_parse(c->tokenizer, kind))
        return err_set(err, LM_EARG, "tokenizer=%s: unknown (use char, word, bpe, wordpiece, "
                       "basic_english or gpt2)", c->tokenizer);
    opt->vocab_size = *kind == TOKENIZER_BPE && c->vocab_size == 0 ? 1024 : c->vocab_size;
    opt->vocab_path = c->vocab;
    opt->lowercase = c->lowercase;
    opt->vocab_from_train = c->vocab_from_train;
    return LM_OK;
}

int dataset_load_config(Dataset *ds, const Config *c, Tokenizer *given, char *err)
{
    TokenizerKind kind;
    TokenizerOptions opt;
    memset(ds, 0, sizeof *ds);
    int rc = dataset_tokenizer_options(c, &kind, &opt, err);
    if (rc) return rc;
    return dataset_load_opts(ds, c->data, kind, &opt, c->train_frac, given, err);
}

void dataset_free(Dataset *ds)
{
    tokenizer_destroy(ds->tok);
    for (int s = 0; s < 3; s++) tokseq_free(&ds->split[s]);
    memset(ds, 0, sizeof *ds);
}

unsigned long long dataset_resident_bytes(const Dataset *ds)
{
    unsigned long long b = 0;
    for (int s = 0; s < 3; s++) b += tokseq_resident_bytes(&ds->split[s]);
    return b;
}

/* The tokenizer of token files (see dataset_open_tokens); LM_OK with ds->tok set. */
static int tokens_tokenizer(Dataset *ds, const char *spec, const TokFormatInfo *info,
                            TokenizerKind kind, const TokenizerOptions *opt, Tokenizer *given,
                            char *err)
{
    if (info->format == TOKFORMAT_CACHE) {
        Tokenizer *own = NULL;
        char msg[LM_ERR_LEN], h[17];
        int rc = tokenizer_load(info->tokenizer_json, &own, msg);
        if (rc) return err_set(err, rc, "%s/tokenizer.json: %s: the cache is damaged; remove "
                               "it (lmlab data rm) and prepare again", spec, msg);
        snprintf(h, sizeof h, "%016llx", tokenizer_hash(own));
        Tokenizer *use = given ? given : own;
        char uh[17];
        snprintf(uh, sizeof uh, "%016llx", tokenizer_hash(use));
        if (strcmp(h, info->tokenizer_hash))
            rc = err_set(err, LM_EFORMAT, "%s: tokenizer.json (hash %s) is not the tokenizer "
                         "meta.json names (%s): the cache is damaged; prepare again", spec, h,
                         info->tokenizer_hash);
        else if (given && strcmp(uh, h))
            rc = err_set(err, LM_EFORMAT, "'%s' was made by another tokenizer (%s, vocabulary "
                         "%d, hash %s) than the checkpoint's (%s, vocabulary %d, hash %s): its "
                         "ids mean other tokens: give the source corpus (prepared again with the "
                         "checkpoint's tokenizer) or start without init_from", spec,
                         info->tokenizer_kind, tokenizer_vocab_size(own), h,
                         tokenizer_kind_name(tokenizer_kind(given)),
                         tokenizer_vocab_size(given), uh);
        else if (!given && tokenizer_kind(own) != kind)
            rc = err_set(err, LM_EFORMAT, "'%s' was prepared with tokenizer=%s (vocabulary %d), "
                         "not tokenizer=%s: set tokenizer=%s, or prepare the corpus with %s",
                         spec, info->tokenizer_kind, tokenizer_vocab_size(own),
                         tokenizer_kind_name(kind), info->tokenizer_kind,
                         tokenizer_kind_name(kind));
        if (given || rc) tokenizer_destroy(own);   /* kept only when it is the one used */
        if (rc) return rc;
        ds->tok = use;
        return LM_OK;
    }
    if (given) {
        ds->tok = given;
        return LM_OK;
    }
    int fixed = (kind == TOKENIZER_WORDPIECE && !opt->vocab_from_train) ||
                !strcmp(tokenizer_kind_name(kind), "gpt2");
    char msg[LM_ERR_LEN];
    if (!fixed || tokenizer_train_opts(kind, "", 0, opt, &ds->tok, msg))
        return err_set(err, LM_EARG, "'%s' (%s) holds token ids without their vocabulary, and "
                       "tokenizer=%s %s: name the tokenizer that made them (tokenizer=gpt2 for "
                       "llm.c's and nanoGPT's GPT-2 files; wordpiece with vocab=), or init_from= "
                       "a checkpoint whose tokenizer did", spec, tokformat_name(info->format),
                       tokenizer_kind_name(kind), fixed ? msg : "learns its vocabulary from "
                       "text");
    return LM_OK;
}

int dataset_open_tokens(Dataset *ds, const char *spec, TokenizerKind kind,
                        const TokenizerOptions *opt, Tokenizer *given, int *found, char *err)
{
    TokFormatInfo info;
    *found = 0;
    memset(ds, 0, sizeof *ds);
    int rc = tokformat_open(spec, ds->split, &info, err);
    if (!rc && info.format == TOKFORMAT_NONE)
        return LM_OK;   /* given stays the caller's: the text path takes it */
    *found = 1;
    if (rc) {
        tokenizer_destroy(given);
        memset(ds, 0, sizeof *ds);
        return rc;
    }
    rc = tokens_tokenizer(ds, spec, &info, kind, opt, given, err);
    if (rc) tokenizer_destroy(given);   /* failed before ds took it */
    int V = ds->tok ? tokenizer_vocab_size(ds->tok) : 0;
    if (!rc && info.format == TOKFORMAT_CACHE && info.vocab_size != V)
        rc = err_set(err, LM_EFORMAT, "%s/meta.json says a vocabulary of %d but its "
                     "tokenizer.json has %d: the cache is damaged; prepare again", spec,
                     info.vocab_size, V);
    int *win = rc ? NULL : malloc(65536 * sizeof *win);
    if (!rc && !win) rc = err_set(err, LM_ENOMEM, "out of memory");
    for (int s = 0; s < 3 && !rc; s++) {
        ds->split[s].vocab = V;
        ds->n[s] = ds->split[s].n;
        for (int i = 0; i < ds->split[s].n_shards && !rc; i++) {  /* a wrong tokenizer: now */
            const TokShard *sh = &ds->split[s].shard[i];
            rc = tokseq_check(&ds->split[s], sh->start, sh->n < 65536 ? sh->n : 65536, win,
                              65536, err);
        }
    }
    free(win);
    if (!rc) {
        snprintf(ds->name, sizeof ds->name, "%.255s", spec);
        snprintf(ds->source, sizeof ds->source, "%.1000s", spec);
        ds->hash = info.key;
        ds->format = info.format;
        ds->eot = info.eot;
        ds->n_chars = tokenizer_kind(ds->tok) == TOKENIZER_CHAR ? ds->n[SPLIT_VALID] : 0;
    }
    tokformat_info_free(&info);
    if (rc) dataset_free(ds);
    return rc;
}
