/* cmd_tokenize.c — `tokenize TEXT`: the pieces and ids of TEXT under the current settings'
 * tokenizer (tokenizer, vocab_size, vocab, lowercase, vocab_from_train, data: the one
 * `train` would build), one "id piece" pair a line, or one JSON object with --json.
 * Not a model command: it never uses the open model's tokenizer. */
#include "dataset.h"
#include "dataset_cache.h"
#include "err.h"
#include "session.h"
#include "cmd_tokenize.h"
#include "tokenizer.h"

#include <stdlib.h>
#include <string.h>


/* argv[1..] joined by single spaces (quote TEXT to keep its own spacing); NULL: no memory. */
static char *join_words(int argc, const LexWord *argv)
{
    size_t n = 1;
    for (int i = 1; i < argc; i++) n += strlen(argv[i].text) + 1;
    char *t = malloc(n), *p = t;
    if (!t) return NULL;
    for (int i = 1; i < argc; i++) {
        size_t k = strlen(argv[i].text);
        memcpy(p, argv[i].text, k);
        p += k;
        if (i + 1 < argc) *p++ = ' ';
    }
    *p = 0;
    return t;
}

static void print_pieces(Session *s, const Tokenizer *tok, const int *ids, size_t n)
{
    if (s->json) {
        json_t *a = json_array(), *pieces = json_array();
        for (size_t i = 0; i < n; i++) {
            json_array_append_new(a, json_integer(ids[i]));
            json_array_append_new(pieces, json_string(tokenizer_token_text(tok, ids[i])));
        }
        session_emit_json(s, json_pack("{s:s s:i s:o s:o}", "tokenizer",
                                       tokenizer_kind_name(tokenizer_kind(tok)), "vocab",
                                       tokenizer_vocab_size(tok), "ids", a, "pieces", pieces));
        return;
    }
    session_printf(s, "tokenizer=%s (%d tokens): %zu pieces",
                   tokenizer_kind_name(tokenizer_kind(tok)), tokenizer_vocab_size(tok), n);
    for (size_t i = 0; i < n; i++)
        session_printf(s, "%8d  %s", ids[i], tokenizer_token_text(tok, ids[i]));
}

int cmd_tokenize(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2)
        return session_error(s, LM_EARG, "tokenize needs a text: tokenize \"The cat sat.\"");
    char err[LM_ERR_LEN];
    TokenizerKind kind;
    TokenizerOptions opt;
    Dataset ds;
    if (config_validate(&s->cfg, err) || dataset_tokenizer_options(&s->cfg, &kind, &opt, err))
        return session_error(s, LM_EARG, "%s", err);
    if (dataset_load_prepared(&ds, &s->cfg, s->db_path, NULL, err))
        return session_error(s, LM_EIO, "%s", err);
    char *text = join_words(argc, argv);
    int *ids = NULL;
    size_t n = 0;
    int rc = text ? tokenizer_encode(ds.tok, text, strlen(text), &ids, &n, err)
                  : err_set(err, LM_ENOMEM, "out of memory");
    if (rc)
        session_error(s, rc, "%s", err);
    else
        print_pieces(s, ds.tok, ids, n);
    free(ids);
    free(text);
    dataset_free(&ds);
    return rc;
}
