/* tokenizer.c — the tokenizer handle (see tokenizer.h): the registry of kinds, dispatch
 * of train/encode/load to each kind's operations (private/tok_impl.h), and what every
 * kind shares: the token table, decoding, display text, the JSON envelope and the hash.
 * Not a tokenizer itself: each kind lives in its own tok_<kind>.c. */
#include "tokenizer.h"

#include "err.h"
#include "private/tok_impl.h"

#include <stdlib.h>
#include <string.h>

/* The registry: one line per kind, in TokenizerKind order. */
static const TokenizerOps *const KINDS[TOKENIZER_N_KINDS] = {
#define TOKENIZER(suffix, name) [TOKENIZER_##suffix] = &TOK_##suffix##_OPS,
#include "tokenizers.def"
#undef TOKENIZER
};
static const char *const NAMES[TOKENIZER_N_KINDS] = {
#define TOKENIZER(suffix, name) [TOKENIZER_##suffix] = name,
#include "tokenizers.def"
#undef TOKENIZER
};

/* "char, word, ..." for messages. */
static const char KIND_LIST[] = ""
#define TOKENIZER(suffix, name) name ", "
#include "tokenizers.def"
#undef TOKENIZER
    ;

int tokenizer_kind_parse(const char *name, TokenizerKind *kind)
{
    for (int k = 0; k < TOKENIZER_N_KINDS; k++)
        if (name && !strcmp(name, NAMES[k])) {
            *kind = (TokenizerKind)k;
            return 0;
        }
    return -1;
}

const char *tokenizer_kind_name(TokenizerKind kind)
{
    return (unsigned)kind < TOKENIZER_N_KINDS ? NAMES[kind] : "?";
}

unsigned long long tokenizer_fnv1a(const void *data, size_t n, unsigned long long h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

size_t tokenizer_count_chars(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t n = 0;
    uint32_t cp;
    for (size_t i = 0; i < len; n++) i += s[i] < 0x80 ? 1 : (size_t)tok_utf8_next(s, len, i, &cp);
    return n;
}

/* ---- construction ---- */

void tokenizer_destroy(Tokenizer *t)
{
    if (!t) return;
    if (t->impl && t->ops->free_impl) t->ops->free_impl(t->impl);
    free(t->off); free(t->bytes); free(t->xoff); free(t->xbytes); free(t->doff); free(t->dtext);
    free(t);
}

Tokenizer *tok_alloc(TokenizerKind kind, int V, size_t n_bytes)
{
    Tokenizer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ops = KINDS[kind];
    t->kind = kind;
    t->V = V;
    t->eot = -1;
    t->off = calloc((size_t)V + 1, sizeof *t->off);
    t->bytes = malloc(n_bytes + 1);
    t->xoff = calloc((size_t)V + 1, sizeof *t->xoff);
    t->xbytes = malloc(n_bytes + 2 * (size_t)V + 1);
    t->doff = malloc(((size_t)V + 1) * sizeof *t->doff);
    t->dtext = malloc(4 * n_bytes + (size_t)V + 1);
    if (!t->off || !t->bytes || !t->xoff || !t->xbytes || !t->doff || !t->dtext) {
        tokenizer_destroy(t);
        return NULL;
    }
    return t;
}

int tok_finish(Tokenizer *t, char *err)
{
    t->doff[0] = 0;
    for (int i = 0; i < t->V; i++) {
        const char *w = t->bytes + t->off[i];
        size_t n = t->off[i + 1] - t->off[i];
        t->doff[i + 1] = t->doff[i] + 1 + tok_escape_bytes(w, n, t->dtext + t->doff[i]);
        char *x = t->xbytes + t->xoff[i];
        if (t->ops->decoded) {
            n = t->ops->decoded(t, i, x);
        } else {
            memcpy(x, w, n);
        }
        t->xoff[i + 1] = t->xoff[i] + n;
    }
    char *json = tokenizer_save(t);
    if (!json) {
        tokenizer_destroy(t);
        return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    }
    t->hash = tokenizer_fnv1a(json, strlen(json), TOKENIZER_FNV_SEED);
    free(json);
    return LM_OK;
}

int tok_done(Tokenizer *t, Tokenizer **out, char *err)
{
    int rc = tok_finish(t, err);
    *out = rc ? NULL : t;
    return rc;
}

size_t tokenizer_sample_end(const char *text, size_t n, int next)
{
    const unsigned char *s = (const unsigned char *)text;
    if (n == 0 || next < 0 || tok_is_space((unsigned char)next) || tok_is_space(s[n - 1]))
        return n;
    size_t e = n;
    while (e > 0 && !tok_is_space(s[e - 1])) e--;
    return e ? e : n;
}

int tokenizer_train_opts(TokenizerKind kind, const char *text, size_t len,
                         const TokenizerOptions *opt, Tokenizer **out, char *err)
{
    *out = NULL;
    if ((unsigned)kind >= TOKENIZER_N_KINDS)
        return err_set(err, LM_EARG, "unknown tokenizer kind %d", kind);
    return KINDS[kind]->train(text, len, opt, out, err);
}

int tokenizer_train(TokenizerKind kind, const char *text, size_t len, int vocab_size,
                    Tokenizer **out, char *err)
{
    TokenizerOptions opt = { .vocab_size = vocab_size };
    return tokenizer_train_opts(kind, text, len, &opt, out, err);
}

TokenizerKind tokenizer_kind(const Tokenizer *t) { return t->kind; }

int tokenizer_vocab_size(const Tokenizer *t) { return t->V; }

unsigned long long tokenizer_hash(const Tokenizer *t) { return t->hash; }

int tokenizer_eot(const Tokenizer *t) { return t->eot; }

/* ---- encoding and decoding ---- */

int tokenizer_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                     char *err)
{
    *ids = NULL;
    *n = 0;
    return t->ops->encode(t, text, len, ids, n, err);
}

/* The id the kind appends after a last line without '\n' (the corpus rule of word and a
 * trained wordpiece: "<eos>" ends every line), or -1 for kinds that add none. */
static int tokenizer_tail_eos(const Tokenizer *t)
{
    const WordImpl *wi = t->impl;
    if (t->kind == TOKENIZER_WORD || (t->kind == TOKENIZER_WORDPIECE && wi && wi->from_train))
        return wi ? wi->eos : -1;
    return -1;
}

int tokenizer_encode_prompt(const Tokenizer *t, const char *text, size_t len, int **ids,
                            size_t *n, char *err)
{
    int rc = tokenizer_encode(t, text, len, ids, n, err);
    int eos = tokenizer_tail_eos(t);
    if (!rc && eos >= 0 && len && text[len - 1] != '\n' && *n && (*ids)[*n - 1] == eos)
        (*n)--;   /* typed without a line end: no end-of-line token */
    return rc;
}

const char *tokenizer_token_bytes(const Tokenizer *t, int id, size_t *len)
{
    if (id < 0 || id >= t->V) return NULL;
    *len = t->off[id + 1] - t->off[id];
    return t->bytes + t->off[id];
}

int tokenizer_decode_token(const Tokenizer *t, int id, char *buf, size_t cap)
{
    if (id < 0 || id >= t->V) return -1;
    size_t n = t->xoff[id + 1] - t->xoff[id];
    memcpy(buf, t->xbytes + t->xoff[id], n < cap ? n : cap);
    if (n < cap) buf[n] = 0;
    return (int)n;
}

char *tokenizer_decode(const Tokenizer *t, const int *ids, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < t->V) total += t->xoff[ids[i] + 1] - t->xoff[ids[i]];
    char *s = malloc(total + 1), *p = s;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < t->V) {
            size_t k = t->xoff[ids[i] + 1] - t->xoff[ids[i]];
            memcpy(p, t->xbytes + t->xoff[ids[i]], k);
            p += k;
        }
    *p = 0;
    return s;
}

const char *tokenizer_token_text(const Tokenizer *t, int id)
{
    if (id < 0 || id >= t->V) return "<invalid>";
    return t->dtext + t->doff[id];
}

/* ---- JSON ---- */

char *tokenizer_save(const Tokenizer *t)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "format", json_string("lmlab-tokenizer"));
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "kind", json_string(tokenizer_kind_name(t->kind)));
    json_object_set_new(o, "vocab_size", json_integer(t->V));
    char *s = t->ops->save(t, o) ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

int tokenizer_load(const char *json, Tokenizer **out, char *err)
{
    *out = NULL;
    json_error_t je;
    json_t *o = json_loads(json, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
    if (!o) return err_set(err, LM_EFORMAT, "tokenizer JSON: %s (line %d, column %d)", je.text, je.line, je.column);
    const char *fmt = json_string_value(json_object_get(o, "format"));
    const json_t *ver = json_object_get(o, "version"), *vs = json_object_get(o, "vocab_size");
    TokenizerKind kind = TOKENIZER_CHAR;
    int rc = LM_OK;
    if (!json_is_object(o) || !fmt || strcmp(fmt, "lmlab-tokenizer"))
        rc = err_set(err, LM_EFORMAT, "not an lmlab tokenizer (no \"format\": \"lmlab-tokenizer\")");
    else if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: unsupported version (this lmlab reads 1)");
    else if (tokenizer_kind_parse(json_string_value(json_object_get(o, "kind")), &kind))
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: \"kind\" must be one of %.*s",
                     (int)sizeof KIND_LIST - 3, KIND_LIST);
    else if (!json_is_integer(vs) || json_integer_value(vs) < 1 || json_integer_value(vs) > (1 << 24))
        rc = err_set(err, LM_EFORMAT, "tokenizer JSON: \"vocab_size\" must be an integer in 1..%d", 1 << 24);
    if (!rc) rc = KINDS[kind]->load(o, (int)json_integer_value(vs), out, err);
    json_decref(o);
    return rc;
}

const char *tokenizer_join(const Tokenizer *t, const char *prompt)
{
    size_t n = prompt ? strlen(prompt) : 0;
    if (t->kind != TOKENIZER_WORD || n == 0 || strchr(" \t\n\v\f\r", prompt[n - 1]))
        return "";
    return " ";
}
