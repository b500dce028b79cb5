/* tok_bpe.c — the byte-level BPE tokenizer behind the handle: training, merging and
 * encoding are bpe.c's; this file wraps a Bpe as a token table and saves it as "merges"
 * ([left, right] pairs). Not a GPT-2 pre-tokenizer: merges cross word boundaries. */
#include "bpe.h"
#include "err.h"
#include "private/tok_impl.h"

#include <stdlib.h>
#include <string.h>

static void bpe_free(void *impl) { bpe_destroy(impl); }

static int bpe_wrap(Bpe *b, Tokenizer **out, char *err)
{
    int V = bpe_vocab_size(b);
    size_t total = 0, len;
    for (int i = 0; i < V; i++) {
        bpe_token_bytes(b, i, &len);
        total += len;
    }
    Tokenizer *t = tok_alloc(TOKENIZER_BPE, V, total);
    if (!t) {
        bpe_destroy(b);
        return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    }
    t->impl = b;
    for (int i = 0; i < V; i++) {
        const unsigned char *p = bpe_token_bytes(b, i, &len);
        memcpy(t->bytes + t->off[i], p, len);
        t->off[i + 1] = t->off[i] + len;
    }
    return tok_done(t, out, err);
}

static int tbpe_train(const char *text, size_t len, const TokenizerOptions *opt,
                      Tokenizer **out, char *err)
{
    int vocab_size = opt->vocab_size;
    if (vocab_size < 256 || vocab_size > 256 + (1 << 20))
        return err_set(err, LM_EARG, "BPE vocabulary size %d: use 256 (bytes) + the number of "
                       "merges, e.g. 1256", vocab_size);
    Bpe *b;
    int rc = bpe_train(text, len, vocab_size - 256, &b, err);
    return rc ? rc : bpe_wrap(b, out, err);
}

static int tbpe_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                       char *err)
{
    return bpe_encode(t->impl, text, len, ids, n, err);
}

static int tbpe_save(const Tokenizer *t, json_t *o)
{
    int nm;
    const int *mg = bpe_merges(t->impl, &nm);
    json_t *body = json_array();
    for (int k = 0; body && k < nm; k++)
        json_array_append_new(body, json_pack("[ii]", mg[2 * k], mg[2 * k + 1]));
    return body && !json_object_set_new(o, "merges", body) ? 0 : -1;
}

static int tbpe_load(const json_t *o, int V, Tokenizer **out, char *err)
{
    const json_t *a = json_object_get(o, "merges");
    if (!json_is_array(a))
        return err_set(err, LM_EFORMAT, "tokenizer JSON: \"merges\" must be an array of %d "
                       "entries", V - 256);
    int n = V - 256;
    if (n < 0 || (size_t)n != json_array_size(a))
        return err_set(err, LM_EFORMAT, "tokenizer JSON: vocab_size %d does not match 256 + %zu "
                       "merges", V, json_array_size(a));
    int *mg = malloc(sizeof(int) * 2 * ((size_t)n + 1));
    if (!mg) return err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (int k = 0; k < 2 * n; k++) {
        const json_t *p = json_array_get(a, (size_t)k / 2), *v = json_array_get(p, (size_t)k % 2);
        if (json_array_size(p) != 2 || !json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > (1 << 24)) {   /* bpe_create checks the ids further */
            free(mg);
            return err_set(err, LM_EFORMAT, "tokenizer JSON: merges[%d] is not a pair of token ids", k / 2);
        }
        mg[k] = (int)json_integer_value(v);
    }
    Bpe *b;
    int rc = bpe_create(mg, n, &b, err);
    free(mg);
    return rc ? rc : bpe_wrap(b, out, err);
}

const TokenizerOps TOK_BPE_OPS = {
    .train = tbpe_train, .load = tbpe_load, .save = tbpe_save,
    .encode = tbpe_encode, .decoded = NULL, .free_impl = bpe_free,
};
