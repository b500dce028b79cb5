/* cmd_tokenize.c — `tokenize TEXT`: the pieces and ids of TEXT as typed (no end-of-line
 * token after it: tokenizer_encode_prompt, what `sample` and `coeffs` feed a model) under
 * the open model's tokenizer when a model is open (`open ID`) and no tokenizer setting
 * changed since (then, and with no model open, the current settings'
 * (tokenizer, vocab_size, vocab, lowercase, vocab_from_train, data: the one `train` would
 * build)); one "id piece" pair a line, or one JSON object with --json.
 * Not here: opening a model (cmd_model.c). */
#include "dataset.h"
#include "err.h"
#include "session.h"
#include "cmd_tokenize.h"
#include "tokenizer.h"

#include <stdio.h>
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

/* whose: "" for the settings' tokenizer, else the open model's source. */
static void print_pieces(Session *s, const Tokenizer *tok, const int *ids, size_t n,
                         const char *whose)
{
    if (s->json) {
        json_t *a = json_array(), *pieces = json_array();
        for (size_t i = 0; i < n; i++) {
            json_array_append_new(a, json_integer(ids[i]));
            json_array_append_new(pieces, json_string(tokenizer_token_text(tok, ids[i])));
        }
        session_emit_json(s, json_pack("{s:s s:i s:s s:o s:o}", "tokenizer",
                                       tokenizer_kind_name(tokenizer_kind(tok)), "vocab",
                                       tokenizer_vocab_size(tok), "of",
                                       whose[0] ? whose : "settings", "ids", a,
                                       "pieces", pieces));
        return;
    }
    session_printf(s, "tokenizer=%s (%d tokens%s%s): %zu pieces",
                   tokenizer_kind_name(tokenizer_kind(tok)), tokenizer_vocab_size(tok),
                   whose[0] ? ", of the open model " : "", whose, n);
    for (size_t i = 0; i < n; i++)
        session_printf(s, "%8d  %s", ids[i], tokenizer_token_text(tok, ids[i]));
}

int cmd_tokenize(Session *s, int argc, const LexWord *argv)
{
    if (argc < 2)
        return session_error(s, LM_EARG, "tokenize needs a text: tokenize \"The cat sat.\"");
    char err[LM_ERR_LEN];
    char *text = join_words(argc, argv);
    if (!text)
        return session_error(s, LM_ENOMEM, "out of memory");
    int *ids = NULL, rc;
    size_t n = 0;
    if (s->view && s->view_tok && !s->tok_settings_newer) {   /* the open model's: what its
                                                                  sample and coeffs see */
        if ((rc = tokenizer_encode_prompt(s->view_tok, text, strlen(text), &ids, &n, err)))
            session_error(s, rc, "%s", err);
        else {
            char whose[64];
            if (s->view_run > 0)
                snprintf(whose, sizeof whose, "run #%ld", s->view_run);
            else
                snprintf(whose, sizeof whose, "%.60s", s->view_source);
            print_pieces(s, s->view_tok, ids, n, whose);
        }
        free(ids);
        free(text);
        return rc;
    }
    TokenizerKind kind;
    TokenizerOptions opt;
    Dataset ds;
    if (config_validate(&s->cfg, err) || dataset_tokenizer_options(&s->cfg, &kind, &opt, err)) {
        free(text);
        return session_error(s, LM_EARG, "%s", err);
    }
    if (dataset_load_opts(&ds, s->cfg.data, kind, &opt, s->cfg.train_frac, NULL, err)) {
        free(text);
        return session_error(s, LM_EIO, "%s", err);
    }
    if ((rc = tokenizer_encode_prompt(ds.tok, text, strlen(text), &ids, &n, err)))
        session_error(s, rc, "%s", err);
    else
        print_pieces(s, ds.tok, ids, n, "");
    free(ids);
    free(text);
    dataset_free(&ds);
    return rc;
}
