/* tok_char.c — the character tokenizer: the vocabulary is the sorted distinct code points
 * of the text, as the seed notebook's sorted(set(text)), so ids agree with it for UTF-8;
 * a byte that is not UTF-8 is its own symbol (U+DC80 + byte - 0x80, Python's
 * surrogateescape). Saved as "chars" (code points). Not lenient: a character outside the
 * vocabulary is an error naming it, never a silent <unk>. */
#include "err.h"
#include "private/tok_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t *cps;        /* (V) sorted code points, U+DC80.. for invalid bytes */
    int ascii[128];       /* id of each ASCII character, -1 when absent */
} CharImpl;

static void char_free(void *impl)
{
    CharImpl *c = impl;
    free(c->cps);
    free(c);
}

/* A char tokenizer over cps (n sorted distinct code points). */
static int char_build(const uint32_t *cps, int n, Tokenizer **out, char *err)
{
    Tokenizer *t = tok_alloc(TOKENIZER_CHAR, n, 4 * (size_t)n);
    CharImpl *c = t ? calloc(1, sizeof *c) : NULL;
    if (t) t->impl = c;
    if (!c || !(c->cps = malloc(sizeof(uint32_t) * ((size_t)n + 1)))) {
        tokenizer_destroy(t);
        return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    }
    memset(c->ascii, -1, sizeof c->ascii);
    for (int i = 0; i < n; i++) {
        c->cps[i] = cps[i];
        if (cps[i] < 128) c->ascii[cps[i]] = i;
        t->off[i + 1] = t->off[i] + (size_t)tok_utf8_put(cps[i], t->bytes + t->off[i]);
    }
    return tok_done(t, out, err);
}

static int char_train(const char *text, size_t len, const TokenizerOptions *opt,
                      Tokenizer **out, char *err)
{
    (void)opt;   /* the vocabulary size is the text's */
    const unsigned char *s = (const unsigned char *)text;
    uint8_t *seen = calloc(0x110000 / 8, 1);
    uint32_t *cps = malloc(sizeof(uint32_t) * 0x110000 / 64);  /* grown below if needed */
    int n = 0, cap = 0x110000 / 64, rc;
    if (!seen || !cps) goto oom;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += s[i] < 0x80 ? (cp = s[i], 1) : (size_t)tok_utf8_next(s, len, i, &cp);
        seen[cp >> 3] |= (uint8_t)(1u << (cp & 7));
    }
    for (uint32_t cp = 0; cp < 0x110000; cp++)
        if (seen[cp >> 3] >> (cp & 7) & 1) {
            if (n == cap) {
                uint32_t *g = realloc(cps, sizeof(uint32_t) * (size_t)(cap *= 2));
                if (!g) goto oom;
                cps = g;
            }
            cps[n++] = cp;
        }
    /* an empty vocabulary could be neither saved nor loaded back */
    rc = n ? char_build(cps, n, out, err)
           : err_set(err, LM_EARG, "char tokenizer: the text is empty, no characters to build "
                     "a vocabulary from");
    free(seen);
    free(cps);
    return rc;
oom:
    free(seen);
    free(cps);
    return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
}

static int char_find(const Tokenizer *t, uint32_t cp)
{
    const CharImpl *c = t->impl;
    if (cp < 128) return c->ascii[cp];
    int lo = 0, hi = t->V - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (c->cps[mid] == cp) return mid;
        if (c->cps[mid] < cp) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

static int char_encode_into(const Tokenizer *t, const unsigned char *s, size_t len, int *out,
                            char *err)
{
    for (size_t i = 0, m = 0; i < len; m++) {
        uint32_t cp;
        size_t at = i;
        i += s[i] < 0x80 ? (cp = s[i], 1) : (size_t)tok_utf8_next(s, len, i, &cp);
        out[m] = char_find(t, cp);
        if (out[m] >= 0) continue;
        if (cp >= 0xDC80 && cp <= 0xDCFF)
            return err_set(err, LM_EARG, "byte 0x%02X at byte offset %zu (not valid UTF-8) is "
                           "not in the vocabulary of %d characters (give UTF-8 text)", s[at],
                           at, t->V);
        char shown[16];
        tok_escape_bytes((const char *)s + at, i - at, shown);
        return err_set(err, LM_EARG, "character '%s' (U+%04X) at byte offset %zu is not in the "
                       "vocabulary of %d characters (a char tokenizer knows only the "
                       "characters of the text it was built from: leave this one out)", shown,
                       (unsigned)cp, at, t->V);
    }
    return LM_OK;
}

static int char_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                       char *err)
{
    int *out = malloc(sizeof(int) * (len + 1));
    if (!out) return err_set(err, LM_ENOMEM, "out of memory encoding %zu bytes", len);
    int rc = char_encode_into(t, (const unsigned char *)text, len, out, err);
    if (rc) {
        free(out);
        return rc;
    }
    size_t m = tokenizer_count_chars(text, len);
    int *shrunk = realloc(out, sizeof(int) * (m + 1));
    *ids = shrunk ? shrunk : out;
    *n = m;
    return LM_OK;
}

static int char_save(const Tokenizer *t, json_t *o)
{
    const CharImpl *c = t->impl;
    json_t *a = json_array();
    for (int i = 0; a && i < t->V; i++)
        if (json_array_append_new(a, json_integer(c->cps[i]))) {
            json_decref(a);
            return -1;
        }
    return a && !json_object_set_new(o, "chars", a) ? 0 : -1;
}

static int char_load(const json_t *o, int V, Tokenizer **out, char *err)
{
    const json_t *a = json_object_get(o, "chars");
    if (!json_is_array(a) || json_array_size(a) != (size_t)V)
        return err_set(err, LM_EFORMAT, "tokenizer JSON: \"chars\" must be an array of %d "
                       "entries", V);
    uint32_t *cps = malloc(sizeof(uint32_t) * ((size_t)V + 1));
    if (!cps) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (int i = 0; i < V; i++) {
        json_t *v = json_array_get(a, (size_t)i);
        json_int_t c = json_is_integer(v) ? json_integer_value(v) : -1;
        if (c < 0 || c > 0x10FFFF || (c >= 0xD800 && c < 0xDC80) || (c > 0xDCFF && c <= 0xDFFF) ||
            (i > 0 && (uint32_t)c <= cps[i - 1])) {
            free(cps);
            return err_set(err, LM_EFORMAT, "tokenizer JSON: chars[%d] is not a valid code point "
                           "above the one before it", i);
        }
        cps[i] = (uint32_t)c;
    }
    int rc = char_build(cps, V, out, err);
    free(cps);
    return rc;
}

const TokenizerOps TOK_CHAR_OPS = {
    .train = char_train, .load = char_load, .save = char_save,
    .encode = char_encode, .decoded = NULL, .free_impl = char_free,
};
