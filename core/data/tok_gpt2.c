/* tok_gpt2.c — GPT-2's tokenizer (`tokenizer=gpt2`): byte-level BPE over OpenAI's
 * vocab.bpe merges and encoder.json ids, giving the ids of tiktoken's "gpt2" encoding
 * (encode_ordinary: "<|endoftext|>" in the text is text). The vocabulary is fixed: it is
 * read from data/gpt2/ (or vocab=), never trained; the merges are saved in the tokenizer
 * JSON so a checkpoint carries its vocabulary (506,632 bytes of JSON).
 * Ids as tiktoken's data_gym_to_mergeable_bpe_ranks: 0..255 the bytes in GPT-2's
 * bytes_to_unicode order, 256 + k the k-th merge, then "<|endoftext|>" (50256); the
 * encoder.json of a copy must agree. Rank = id; a piece is merged as tiktoken's
 * byte_pair_merge does (lowest rank of the concatenated bytes first, leftmost on ties).
 * The pre-split (GPT-2's regex) and the merging are tok_gpt2_encode.c's. Not a trainer
 * and not tiktoken's other encodings (cl100k, o200k). */
#include "err.h"
#include "regfile.h"
#include "private/tok_gpt2.h"
#include "private/tok_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LMLAB_DATA_DIR
#define LMLAB_DATA_DIR "data"
#endif

#define GPT2_EOT_TEXT "<|endoftext|>"
#define GPT2_MAX_MERGES (1 << 22)

static void gpt2_impl_free(void *impl)
{
    Gpt2 *g = impl;
    if (!g) return;
    free(g->slot); free(g->pair); free(g->merges); free(g);
}

/* ---- GPT-2's bytes_to_unicode: the printable Latin-1 bytes stand for themselves, the
 * other 68 for U+0100 + n in byte order ---- */

static int printable_byte(int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

/* The byte order of ids 0..255: order[id] = byte (the printable ones first). */
static void byte_order(unsigned char order[256])
{
    int k = 0;
    for (int b = 0; b < 256; b++)
        if (printable_byte(b)) order[k++] = (unsigned char)b;
    for (int b = 0; b < 256; b++)
        if (!printable_byte(b)) order[k++] = (unsigned char)b;
}

/* The byte a code point of the byte alphabet stands for, -1 outside it. The 68 bytes
 * that are not printable (0..32, 127..160, 173) are U+0100.. in byte order. */
static int byte_of_cp(uint32_t cp)
{
    if (cp < 256) return printable_byte((int)cp) ? (int)cp : -1;
    uint32_t n = cp - 256;
    return n <= 32 ? (int)n : n <= 66 ? 127 + (int)(n - 33) : n == 67 ? 173 : -1;
}

/* Decodes the UTF-8 text s[0..n) of the byte alphabet into bytes out; its length, -1 when a
 * character is not of the alphabet. */
static long decode_symbols(const char *s, size_t n, unsigned char *out)
{
    long o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += (size_t)tok_utf8_next((const unsigned char *)s, n, i, &cp);
        int b = byte_of_cp(cp);
        if (b < 0) return -1;
        out[o++] = (unsigned char)b;
    }
    return o;
}

/* ---- the rank table (bytes -> id), open addressing over the token table ---- */

int tok_gpt2_rank(const Tokenizer *t, const unsigned char *p, size_t n)
{
    const Gpt2 *g = t->impl;
    uint64_t h = tok_gpt2_hash(p, n);
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t s = h & g->mask;; s = (s + 1) & g->mask) {
        uint64_t v = g->slot[s];
        if (!v) return -1;
        if ((uint32_t)(v >> 32) != tag) continue;
        uint32_t id = (uint32_t)v - 1;
        size_t o = t->off[id];
        if (t->off[id + 1] - o == n && !memcmp(t->bytes + o, p, n)) return (int)id;
    }
}

/* Adds token id (its bytes in place) to the table unless its bytes are there: the id
 * holding them, or -1 when added. */
static int rank_add(Tokenizer *t, int id)
{
    Gpt2 *g = t->impl;
    const unsigned char *p = (const unsigned char *)t->bytes + t->off[id];
    size_t n = t->off[id + 1] - t->off[id];
    uint64_t h = tok_gpt2_hash(p, n);
    size_t s = h & g->mask;
    for (; g->slot[s]; s = (s + 1) & g->mask) {
        uint32_t v = (uint32_t)g->slot[s];
        if (t->off[v] - t->off[v - 1] == n && !memcmp(t->bytes + t->off[v - 1], p, n))
            return (int)v - 1;
    }
    g->slot[s] = (h >> 32) << 32 | ((uint64_t)id + 1);
    if (n == 2) g->pair[p[0] << 8 | p[1]] = id;
    return -1;
}

/* ---- building from the merges text ---- */

/* The merge lines of text (len bytes): "#version" first line and the last newline
 * skipped. *starts: (count + 1) line starts, the last one past the end + 1 when the text
 * does not end in a newline. The count, or -1 (bad text) / -2 (no memory) with the
 * message (src names the origin). */
static long merge_lines(const char *text, size_t len, const char *src, size_t **starts,
                        char *err)
{
    size_t i = 0, n = 0;
    if (len >= 8 && !memcmp(text, "#version", 8)) {
        const char *nl = memchr(text, '\n', len);
        i = nl ? (size_t)(nl - text) + 1 : len;
    }
    for (size_t k = i; k < len; k++) n += text[k] == '\n';
    if (len > i && text[len - 1] != '\n') n++;
    if (n > GPT2_MAX_MERGES) {
        err_set(err, LM_EFORMAT, "%s: more than %d merges", src, GPT2_MAX_MERGES);
        return -1;
    }
    size_t *st = malloc((n + 1) * sizeof *st);
    if (!st) { err_set(err, LM_ENOMEM, "gpt2 tokenizer: out of memory"); return -2; }
    size_t k = 0;
    for (size_t p = i; p < len && k < n;) {
        st[k++] = p;
        const char *nl = memchr(text + p, '\n', len - p);
        p = nl ? (size_t)(nl - text) + 1 : len;
    }
    st[n] = len + (len > i && text[len - 1] != '\n');   /* one past the last line's end + 1 */
    *starts = st;
    return (long)n;
}

/* A tokenizer from the merges (vocab.bpe's text, or the saved "merges"); src names the
 * origin in messages. */
static int gpt2_build(const char *text, size_t len, const char *src, Tokenizer **out,
                      char *err)
{
    size_t *st;
    long nm = merge_lines(text, len, src, &st, err);
    if (nm < 0) return nm == -2 ? LM_ENOMEM : LM_EFORMAT;
    int V = 256 + (int)nm + 1;
    /* token bytes: each merge line decodes to at most its own length */
    Tokenizer *t = tok_alloc(TOKENIZER_GPT2, V, 256 + len + sizeof GPT2_EOT_TEXT);
    Gpt2 *g = t ? calloc(1, sizeof *g) : NULL;
    if (t) t->impl = g;
    size_t cap = 1;
    while (cap < 2 * (size_t)V) cap <<= 1;
    if (g) {
        g->slot = calloc(cap, sizeof *g->slot);
        g->pair = malloc(65536 * sizeof *g->pair);
        if (g->pair) for (int k = 0; k < 65536; k++) g->pair[k] = -1;
        g->merges = malloc(len + 1);
        g->mask = cap - 1;
        g->eot = V - 1;
    }
    if (!g || !g->slot || !g->pair || !g->merges) {
        free(st);
        tokenizer_destroy(t);
        return err_set(err, LM_ENOMEM, "gpt2 tokenizer: out of memory");
    }
    unsigned char order[256];
    byte_order(order);
    for (int id = 0; id < 256; id++) {
        t->bytes[id] = (char)order[id];
        t->off[id + 1] = (size_t)id + 1;
        g->byte_id[order[id]] = id;
        rank_add(t, id);
    }
    int rc = LM_OK;
    size_t mlen = 0;
    for (long k = 0; k < nm && !rc; k++) {
        const char *line = text + st[k];
        size_t ll = st[k + 1] - st[k] - 1;
        const char *sp = memchr(line, ' ', ll);
        int id = 256 + (int)k;
        unsigned char *dst = (unsigned char *)t->bytes + t->off[id];
        long a = sp ? decode_symbols(line, (size_t)(sp - line), dst) : -1;
        long b = a > 0 ? decode_symbols(sp + 1, ll - (size_t)(sp - line) - 1, dst + a) : -1;
        int known = b > 0 && tok_gpt2_rank(t, dst, (size_t)a) >= 0 && tok_gpt2_rank(t, dst + a, (size_t)b) >= 0;
        if (!known) {
            rc = err_set(err, LM_EFORMAT, "%s: merge line %ld '%.*s' is not two tokens made "
                         "before it, separated by one space (a GPT-2 vocab.bpe line reads "
                         "like 'Ġ t')", src, k + 1, (int)(ll > 60 ? 60 : ll), line);
            break;
        }
        t->off[id + 1] = t->off[id] + (size_t)(a + b);
        int dup = rank_add(t, id);
        if (dup >= 0)
            rc = err_set(err, LM_EFORMAT, "%s: merge line %ld '%.*s' makes token %d again",
                         src, k + 1, (int)(ll > 60 ? 60 : ll), line, dup);
        memcpy(g->merges + mlen, line, ll);
        mlen += ll;
        g->merges[mlen++] = '\n';
    }
    free(st);
    if (rc) {
        tokenizer_destroy(t);
        return rc;
    }
    g->n_merges = (int)nm;
    g->merges_len = mlen ? mlen - 1 : 0;   /* without the last newline */
    g->merges[g->merges_len] = 0;
    memcpy(t->bytes + t->off[V - 1], GPT2_EOT_TEXT, sizeof GPT2_EOT_TEXT - 1);
    t->off[V] = t->off[V - 1] + sizeof GPT2_EOT_TEXT - 1;
    t->eot = V - 1;
    return tok_done(t, out, err);
}

/* ---- the files: vocab.bpe (merges) and encoder.json (ids, checked) ---- */

/* encoder.json (path) must map every token to the id the merges give it. */
static int check_encoder(const Tokenizer *t, const char *path, char *err)
{
    unsigned char *buf;
    size_t size;
    int rc = regfile_read(path, 64u << 20, &buf, &size, err);
    if (rc) return rc;
    json_error_t je;
    json_t *o = json_loadb((const char *)buf, size, JSON_REJECT_DUPLICATES, &je);
    free(buf);
    if (!json_is_object(o)) {
        json_decref(o);
        return o ? err_set(err, LM_EFORMAT, "%s: not a JSON object of token -> id", path)
                 : err_set(err, LM_EFORMAT, "%s: %s (line %d, column %d)", path, je.text, je.line, je.column);
    }
    unsigned char *tmp = malloc(json_object_size(o) ? 4096 : 1);
    const char *key;
    json_t *v;
    if (json_object_size(o) != (size_t)t->V)
        rc = err_set(err, LM_EFORMAT, "%s has %zu tokens but the merges make %d (256 bytes + %d "
                     "merges + " GPT2_EOT_TEXT "): the two files are not a pair", path,
                     json_object_size(o), t->V, t->V - 257);
    json_object_foreach(o, key, v) {
        if (rc || !tmp) break;
        size_t kl = strlen(key);
        long id = json_is_integer(v) ? (long)json_integer_value(v) : -2, want;
        if (!strcmp(key, GPT2_EOT_TEXT)) {
            want = t->V - 1;
        } else {
            long n = kl < 4096 ? decode_symbols(key, kl, tmp) : -1;
            want = n > 0 ? tok_gpt2_rank(t, tmp, (size_t)n) : -1;
            if (want < 0) {
                rc = err_set(err, LM_EFORMAT, "%s: '%.60s' is no token the merges make (the files "
                             "are not a pair, or it is not in GPT-2's byte alphabet)", path, key);
                break;
            }
        }
        if (id != want)
            rc = err_set(err, LM_EFORMAT, "%s: '%.60s' is id %ld, but the merges make it %ld "
                         "(the files are not a pair)", path, key, id, want);
    }
    if (!rc && !tmp) rc = err_set(err, LM_ENOMEM, "gpt2 tokenizer: out of memory");
    free(tmp);
    json_decref(o);
    return rc;
}

static int is_dir(const char *p)
{
    struct stat s;
    return !stat(p, &s) && S_ISDIR(s.st_mode);
}

static int is_file(const char *p)
{
    struct stat s;
    return !stat(p, &s) && !S_ISDIR(s.st_mode);
}

/* In dir, the first existing of the names a and b into out; 0 found, -1 none. */
static int find_in(const char *dir, const char *a, const char *b, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", dir, a);
    if (is_file(out)) return 0;
    snprintf(out, cap, "%s/%s", dir, b);
    return is_file(out) ? 0 : -1;
}

/* The two files from vocab= (a folder, or either file with the other beside it) or, when
 * vocab is empty, from gpt2/ in $LMLAB_DATA or the bundled data folder. */
static int locate_files(const char *vocab, char *merges, char *encoder, size_t cap, char *err)
{
    char dir[1024];
    if (!vocab || !*vocab) {
        const char *env = getenv("LMLAB_DATA");
        snprintf(dir, sizeof dir, "%s/gpt2", env && *env ? env : LMLAB_DATA_DIR);
        if (env && *env && !is_dir(dir)) snprintf(dir, sizeof dir, "%s/gpt2", LMLAB_DATA_DIR);
        if (find_in(dir, "vocab.bpe", "merges.txt", merges, cap) ||
            find_in(dir, "encoder.json", "vocab.json", encoder, cap))
            return err_set(err, LM_EIO, "tokenizer=gpt2: no vocab.bpe and encoder.json in %s "
                           "(lmlab ships them in data/gpt2/; or give vocab=FOLDER holding "
                           "GPT-2's two files)", dir);
        return LM_OK;
    }
    if (strlen(vocab) > 900) return err_set(err, LM_EARG, "vocab=: path too long");
    if (is_dir(vocab)) {
        if (find_in(vocab, "vocab.bpe", "merges.txt", merges, cap) ||
            find_in(vocab, "encoder.json", "vocab.json", encoder, cap))
            return err_set(err, LM_EIO, "vocab=%s: tokenizer=gpt2 needs vocab.bpe (or merges.txt) "
                           "and encoder.json (or vocab.json) in that folder", vocab);
        return LM_OK;
    }
    if (!is_file(vocab))
        return err_set(err, LM_EIO, "vocab=%s: %s (tokenizer=gpt2 takes a folder holding "
                       "vocab.bpe and encoder.json, or the path of either)", vocab, strerror(errno));
    const char *slash = strrchr(vocab, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - vocab) : 1, slash ? vocab : ".");
    if (!dir[0]) snprintf(dir, sizeof dir, "/");
    size_t n = strlen(vocab);
    int is_json = n >= 5 && !strcmp(vocab + n - 5, ".json");
    snprintf(is_json ? encoder : merges, cap, "%s", vocab);
    if (is_json ? find_in(dir, "vocab.bpe", "merges.txt", merges, cap)
                : find_in(dir, "encoder.json", "vocab.json", encoder, cap))
        return err_set(err, LM_EIO, "vocab=%s: tokenizer=gpt2 needs %s beside it in %s", vocab,
                       is_json ? "vocab.bpe (or merges.txt)" : "encoder.json (or vocab.json)", dir);
    return LM_OK;
}

static int gpt2_train(const char *text, size_t len, const TokenizerOptions *opt,
                      Tokenizer **out, char *err)
{
    (void)text; (void)len;
    char merges[1100], encoder[1100];
    int rc = locate_files(opt->vocab_path, merges, encoder, sizeof merges, err);
    unsigned char *buf = NULL;
    size_t size = 0;
    rc = rc ? rc : regfile_read(merges, 256u << 20, &buf, &size, err);
    if (rc) return rc;
    if (!tok_utf8_valid((const char *)buf, size)) {
        free(buf);
        return err_set(err, LM_EFORMAT, "%s: not UTF-8 text (a GPT-2 vocab.bpe is)", merges);
    }
    Tokenizer *t;
    rc = gpt2_build((const char *)buf, size, merges, &t, err);
    free(buf);
    if (!rc && (rc = check_encoder(t, encoder, err))) tokenizer_destroy(t);
    if (!rc && opt->vocab_size && opt->vocab_size != t->V) {
        rc = err_set(err, LM_EARG, "vocab_size=%d: tokenizer=gpt2 has its files' %d tokens; "
                     "leave vocab_size unset", opt->vocab_size, t->V);
        tokenizer_destroy(t);
    }
    *out = rc ? NULL : t;
    return rc;
}

static int gpt2_save(const Tokenizer *t, json_t *o)
{
    const Gpt2 *g = t->impl;
    json_t *m = json_stringn(g->merges, g->merges_len);
    return m && !json_object_set_new(o, "merges", m) &&
           !json_object_set_new(o, "end_of_text", json_string(GPT2_EOT_TEXT)) ? 0 : -1;
}

static int gpt2_load(const json_t *o, int V, Tokenizer **out, char *err)
{
    const json_t *m = json_object_get(o, "merges");
    const char *eot = json_string_value(json_object_get(o, "end_of_text"));
    if (!json_is_string(m) || !eot || strcmp(eot, GPT2_EOT_TEXT))
        return err_set(err, LM_EFORMAT, "tokenizer JSON: gpt2 needs \"merges\" (vocab.bpe's "
                       "lines) and \"end_of_text\": \"" GPT2_EOT_TEXT "\"");
    Tokenizer *t;
    int rc = gpt2_build(json_string_value(m), json_string_length(m), "tokenizer JSON merges", &t, err);
    if (!rc && t->V != V) {
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: vocab_size %d does not match the %d "
                     "tokens of its %d merges", V, t->V, t->V - 257);
        tokenizer_destroy(t);
    }
    *out = rc ? NULL : t;
    return rc;
}

const TokenizerOps TOK_GPT2_OPS = {
    .train = gpt2_train, .load = gpt2_load, .save = gpt2_save,
    .encode = tok_gpt2_encode, .decoded = NULL, .free_impl = gpt2_impl_free,
};
