/* cmd_bench_tok.c — `bench tokenizer [tokenizer=A,B,...] [file=PATH]`: how many MB/s each
 * tokenizer encodes on one core (core/bench/bench_tok.c), each built as `train` would build
 * it from the session's settings (vocab_size, vocab, lowercase). The text is file=, or the
 * bundled corpora (tinyshakespeare and wikitext-small, 2.4 MB of English). Default
 * tokenizers: every kind, wordpiece only when vocab= names its vocab.txt. Not a prepare
 * benchmark (that is `bench data`, on all cores). */
#include "cmd_bench.h"

#include "bench_tok.h"
#include "dataset.h"
#include "err.h"
#include "output.h"
#include "regfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LMLAB_DATA_DIR
#define LMLAB_DATA_DIR "data"
#endif

/* The bundled corpora joined (from $LMLAB_DATA or the data folder), or file. */
static int read_text(const char *file, char **text, size_t *len, char *label, size_t cap,
                     char *err)
{
    if (file && *file) {
        snprintf(label, cap, "%s", file);
        return regfile_read(file, (size_t)4 << 30, (unsigned char **)text, len, err);
    }
    static const char *const parts[] = { "tinyshakespeare.txt", "wikitext-small/train.txt",
                                         "wikitext-small/valid.txt", "wikitext-small/test.txt" };
    const char *env = getenv("LMLAB_DATA"), *dir = env && *env ? env : LMLAB_DATA_DIR;
    snprintf(label, cap, "the bundled tinyshakespeare + wikitext-small");
    *text = NULL;
    *len = 0;
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
        char path[1200];
        unsigned char *b;
        size_t n;
        snprintf(path, sizeof path, "%s/%s", dir, parts[k]);
        int rc = regfile_read(path, (size_t)1 << 30, &b, &n, err);
        char *grown = rc ? NULL : realloc(*text, *len + n + 1);
        if (!grown) {
            free(b);
            free(*text);
            *text = NULL;
            return rc ? rc : err_set(err, LM_ENOMEM, "out of memory");
        }
        memcpy(grown + *len, b, n);
        *len += n;
        grown[*len] = 0;
        *text = grown;
        free(b);
    }
    return LM_OK;
}

/* One kind: its options as `train` would have them, then the measure. */
static int bench_one(Session *s, TokenizerKind kind, const char *text, size_t len)
{
    char err[LM_ERR_LEN];
    Config c = s->cfg;
    snprintf(c.tokenizer, sizeof c.tokenizer, "%s", tokenizer_kind_name(kind));
    TokenizerKind k;
    TokenizerOptions opt;
    BenchTokResult r;
    int rc = dataset_tokenizer_options(&c, &k, &opt, err);
    rc = rc ? rc : bench_tok_encode(kind, &opt, text, len, &r, err);
    if (rc) return session_error(s, rc, "bench tokenizer=%s: %s", tokenizer_kind_name(kind), err);
    Output *o = output_create("bench-tokenizer");
    output_str(o, "tokenizer", tokenizer_kind_name(kind));
    output_int(o, "vocab", r.vocab);
    output_real(o, "build_s", r.build_s);
    output_int(o, "bytes", (long)r.bytes);
    output_int(o, "tokens", (long)r.tokens);
    output_real(o, "bytes_per_token", r.tokens ? (double)r.bytes / (double)r.tokens : 0);
    output_int(o, "passes", r.passes);
    output_real(o, "mb_per_s", r.mb_per_s);
    output_real(o, "mb_per_cpu_s", r.mb_per_cpu_s);
    output_real(o, "first_mb_per_cpu_s", r.first_mb_per_cpu_s);
    output_line(o, "{tokenizer:%-14s} V={vocab:%-6ld} built in {build_s:%.2f} s; {tokens} tokens "
                "({bytes_per_token:%.2f} bytes/token): {mb_per_s:%.1f} MB/s on one core, "
                "{mb_per_cpu_s:%.1f} MB per CPU-second (best of {passes} passes; the first "
                "{first_mb_per_cpu_s:%.1f})");
    return output_emit(s, o);
}

int cmd_bench_tokenizer_list(Session *s, const char *list, TokenizerKind *kinds)
{
    TokenizerKind own[TOKENIZER_N_KINDS], *k = kinds ? kinds : own;
    int n = 0;
    if (list && *list && strcmp(list, "all")) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", list);
        for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            if (n == TOKENIZER_N_KINDS || tokenizer_kind_parse(w, &k[n])) {
                session_error(s, LM_EARG, "bench: tokenizer=%s: '%s' is not a tokenizer (`help "
                              "set tokenizer` lists them; give a comma list)", list, w);
                return -1;
            }
            n++;
        }
    } else {
        for (int j = 0; j < TOKENIZER_N_KINDS; j++)
            if (j != TOKENIZER_WORDPIECE || s->cfg.vocab[0]) k[n++] = (TokenizerKind)j;
    }
    return n;
}

int cmd_bench_tokenizer(Session *s, const char *list, const char *file)
{
    char err[LM_ERR_LEN], label[1100];
    TokenizerKind kinds[TOKENIZER_N_KINDS];
    int n = cmd_bench_tokenizer_list(s, list, kinds);
    if (n < 0) return LM_EARG;
    char *text;
    size_t len;
    int rc = read_text(file, &text, &len, label, sizeof label, err);
    if (rc) return session_error(s, rc, "bench tokenizer: %s", err);
    if (!len) {
        free(text);
        return session_error(s, LM_EARG, "bench tokenizer: %s is empty", label);
    }
    Output *o = output_create("bench-tokenizer-text");
    output_str(o, "text", label);
    output_int(o, "bytes", (long)len);
    output_line(o, "encoding {bytes} bytes of {text} on one core:");
    output_emit(s, o);
    for (int i = 0; i < n; i++) rc |= bench_one(s, kinds[i], text, len);
    free(text);
    return rc ? LM_EIO : LM_OK;
}
