/* tok_word.c — the word tokenizer, as PyTorch's word_language_model: words split at ASCII
 * whitespace, "<eos>" at each line end, ids in order of first appearance (its
 * Dictionary), unknown words -> "<unk>". Also the word-vocabulary helpers the
 * basic_english and wordpiece kinds share (build, save, load, rank by count). Saved as
 * "words". Not a normaliser: words are byte strings, compared exactly. */
#include "err.h"
#include "private/tok_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- shared word vocabularies ---- */

static void words_free(void *impl)
{
    WordImpl *w = impl;
    wordmap_free(&w->map);
    if (w->extra) w->free_extra(w->extra);
    free(w);
}

int tok_words_build(TokenizerKind kind, const char *const *w, const size_t *wl, int n,
                    const WordsSetup *su, Tokenizer **out, char *err)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += wl[i];
    Tokenizer *t = tok_alloc(kind, n, total);
    WordImpl *wi = t ? calloc(1, sizeof *wi) : NULL;
    if (!wi) {
        tokenizer_destroy(t);
        if (su->extra) su->free_extra(su->extra);
        return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    }
    t->impl = wi;
    wi->lowercase = su->lowercase;
    wi->from_train = su->from_train;
    wi->extra = su->extra;
    wi->free_extra = su->free_extra;
    wi->unk = wi->eos = -1;
    const char *unk_name = su->unk_name;
    for (int i = 0; i < n; i++) {
        memcpy(t->bytes + t->off[i], w[i], wl[i]);
        t->off[i + 1] = t->off[i] + wl[i];
        if (wl[i] == strlen(unk_name) && !memcmp(w[i], unk_name, wl[i])) wi->unk = i;
        if (wl[i] == 5 && !memcmp(w[i], "<eos>", 5)) wi->eos = i;
    }
    int rc = tok_finish(t, err);
    if (rc) return rc;
    if ((rc = wordmap_index(&wi->map, t, err))) {
        tokenizer_destroy(t);
        return rc;
    }
    *out = t;
    return LM_OK;
}

int tok_words_save(const Tokenizer *t, json_t *o, const char *key)
{
    json_t *a = json_array();
    for (int i = 0; a && i < t->V; i++) {
        json_t *v = NULL;
        const char *w = t->bytes + t->off[i];
        size_t n = t->off[i + 1] - t->off[i];
        if (tok_utf8_valid(w, n)) {
            v = json_stringn(w, n);
        } else if ((v = json_array())) {
            for (size_t k = 0; k < n; k++) json_array_append_new(v, json_integer((unsigned char)w[k]));
        }
        if (json_array_append_new(a, v)) {
            json_decref(a);
            return -1;
        }
    }
    return a && !json_object_set_new(o, key, a) ? 0 : -1;
}

/* Word i of the JSON into buf (a string, or an array of byte values); its length or -1. */
static long json_word(const json_t *v, char *buf, size_t cap)
{
    size_t n = json_is_string(v) ? json_string_length(v) : json_is_array(v) ? json_array_size(v) : 0;
    if (n == 0 || n >= cap) return -1;
    for (size_t k = 0; k < n; k++) {
        json_int_t b = json_is_string(v) ? (unsigned char)json_string_value(v)[k]
                                         : json_is_integer(json_array_get(v, k))
                                               ? json_integer_value(json_array_get(v, k)) : -1;
        if (b < 0 || b > 255 || tok_is_space((unsigned char)b)) return -1;
        buf[k] = (char)b;
    }
    return (long)n;
}

int tok_words_load(const json_t *o, const char *key, TokenizerKind kind, int V,
                   const WordsSetup *su, Tokenizer **out, char *err)
{
    const json_t *a = json_object_get(o, key);
    if ((!json_is_array(a) || json_array_size(a) != (size_t)V) && su->extra)
        su->free_extra(su->extra);
    if (!json_is_array(a) || json_array_size(a) != (size_t)V)
        return err_set(err, LM_EFORMAT, "tokenizer JSON: \"%s\" must be an array of %d entries",
                       key, V);
    size_t total = 0, at = 0;
    for (int i = 0; i < V; i++) {
        const json_t *v = json_array_get(a, (size_t)i);
        total += json_is_string(v) ? json_string_length(v) : json_array_size(v);
    }
    char *buf = malloc(total + 1);
    const char **w = malloc(sizeof *w * ((size_t)V + 1));
    size_t *wl = malloc(sizeof *wl * ((size_t)V + 1));
    int rc = buf && w && wl ? LM_OK : err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (int i = 0; !rc && i < V; i++) {
        long n = json_word(json_array_get(a, (size_t)i), buf + at, total + 1 - at);
        if (n < 0)
            rc = err_set(err, LM_EFORMAT, "tokenizer JSON: %s[%d] is not a non-empty word "
                         "without spaces", key, i);
        else {
            w[i] = buf + at;
            wl[i] = (size_t)n;
            at += (size_t)n;
        }
    }
    if (!rc) rc = tok_words_build(kind, w, wl, V, su, out, err);
    else if (su->extra) su->free_extra(su->extra);
    free(buf); free(w); free(wl);
    return rc;
}

/* One entry to rank: everything the comparators need (qsort has no context argument, and
 * a static one would race when two threads train). */
typedef struct { long long count; const char *key; size_t len; int id; } Ranked;

static int by_count_then_id(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

static int by_count_then_name(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);
    if (c || x->len != y->len) return c ? c : x->len < y->len ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int *tok_rank_words(const WordMap *m, int by_name)
{
    Ranked *r = malloc(sizeof *r * ((size_t)m->n + 1));
    int *order = malloc(sizeof *order * ((size_t)m->n + 1));
    if (!r || !order) {
        free(r);
        free(order);
        return NULL;
    }
    for (int i = 0; i < m->n; i++) r[i] = (Ranked){ m->count[i], m->key[i], m->klen[i], i };
    qsort(r, (size_t)m->n, sizeof *r, by_name ? by_count_then_name : by_count_then_id);
    for (int i = 0; i < m->n; i++) order[i] = r[i].id;
    free(r);
    return order;
}

/* ---- the word tokenizer ---- */

static const WordsSetup WORD_SETUP = { .unk_name = "<unk>" };

/* Calls fn for every word of text and for "<eos>" at each line end; stops on nonzero. */
typedef int (*WordFn)(void *ctx, const char *w, size_t n);

static int for_each_word(const char *text, size_t len, WordFn fn, void *ctx)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        if (s[i] == '\n') {
            if (fn(ctx, "<eos>", 5)) return -1;
            i++;
        } else if (tok_is_space(s[i])) {
            i++;
        } else {
            size_t e = i + 1;
            while (e < len && !tok_is_space(s[e])) e++;
            if (fn(ctx, text + i, e - i)) return -1;
            i = e;
        }
    }
    if (len && s[len - 1] != '\n' && fn(ctx, "<eos>", 5)) return -1;
    return 0;
}

static int word_check(Tokenizer *t, Tokenizer **out, char *err)
{
    const WordImpl *wi = t->impl;
    if (wi->unk >= 0 && wi->eos >= 0) return LM_OK;
    const char *lacks = wi->unk < 0 ? "<unk>" : "<eos>";
    *out = NULL;
    tokenizer_destroy(t);
    return err_set(err, LM_EFORMAT, "the word vocabulary lacks %s", lacks);
}

static int word_train(const char *text, size_t len, const TokenizerOptions *opt,
                      Tokenizer **out, char *err)
{
    int vocab_size = opt->vocab_size;
    if (vocab_size < 0 || vocab_size == 1)
        return err_set(err, LM_EARG, "word vocabulary size %d: use 0 (all words) or at "
                       "least 2 (<unk> and <eos>)", vocab_size);
    WordMap m = { 0 };
    int rc = LM_ENOMEM, n_keep = 0, *order = NULL;
    char *keep = NULL;
    const char **w = NULL;
    size_t *wl = NULL;
    if (for_each_word(text, len, wordmap_count, &m) || wordmap_count(&m, "<eos>", 5) ||
        wordmap_count(&m, "<unk>", 5))
        goto done;
    int n = m.n, eos = wordmap_get(&m, "<eos>", 5, 0), unk = wordmap_get(&m, "<unk>", 5, 0);
    keep = calloc((size_t)n, 1);
    w = malloc(sizeof *w * (size_t)n);
    wl = malloc(sizeof *wl * (size_t)n);
    m.count[eos] = (long long)1 << 62;   /* always kept */
    m.count[unk] = -1;                   /* kept apart, never ranked */
    if (!keep || !w || !wl || !(order = tok_rank_words(&m, 0))) goto done;
    int limit = vocab_size > 0 && vocab_size - 1 < n ? vocab_size - 1 : n;
    for (int i = 0; i < limit; i++) keep[order[i]] = 1;
    keep[unk] = 1;
    for (int i = 0; i < n; i++)
        if (keep[i]) {
            w[n_keep] = m.key[i];
            wl[n_keep++] = m.klen[i];
        }
    rc = tok_words_build(TOKENIZER_WORD, w, wl, n_keep, &WORD_SETUP, out, err);
done:
    if (rc == LM_ENOMEM) err_set(err, rc, "word tokenizer: out of memory");
    wordmap_free(&m);
    free(order); free(keep); free(w); free(wl);
    return rc ? rc : word_check(*out, out, err);
}

typedef struct { const Tokenizer *t; int *out; size_t n; } WordEnc;

static int encode_word(void *ctx, const char *w, size_t n)
{
    WordEnc *e = ctx;
    const WordImpl *wi = e->t->impl;
    int id = wordmap_get((WordMap *)&wi->map, w, n, 0);   /* lookup only: no write */
    e->out[e->n++] = id < 0 ? wi->unk : id;
    return 0;
}

static int word_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                       char *err)
{
    int *out = malloc(sizeof(int) * (len + 1));
    if (!out) return err_set(err, LM_ENOMEM, "out of memory encoding %zu bytes", len);
    WordEnc e = { t, out, 0 };
    for_each_word(text, len, encode_word, &e);
    int *shrunk = realloc(out, sizeof(int) * (e.n + 1));
    *ids = shrunk ? shrunk : out;
    *n = e.n;
    return LM_OK;
}

/* The word and a space; <eos> -> "\n". */
static size_t word_decoded(const Tokenizer *t, int id, char *out)
{
    const WordImpl *wi = t->impl;
    if (id == wi->eos) {
        out[0] = '\n';
        return 1;
    }
    size_t n = t->off[id + 1] - t->off[id];
    memcpy(out, t->bytes + t->off[id], n);
    out[n] = ' ';
    return n + 1;
}

static int word_save(const Tokenizer *t, json_t *o) { return tok_words_save(t, o, "words"); }

static int word_load(const json_t *o, int V, Tokenizer **out, char *err)
{
    int rc = tok_words_load(o, "words", TOKENIZER_WORD, V, &WORD_SETUP, out, err);
    return rc ? rc : word_check(*out, out, err);
}

const TokenizerOps TOK_WORD_OPS = {
    .train = word_train, .load = word_load, .save = word_save,
    .encode = word_encode, .decoded = word_decoded, .free_impl = tok_words_free,
};

void tok_words_free(void *impl) { words_free(impl); }
