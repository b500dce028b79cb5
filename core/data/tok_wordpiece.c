/* tok_wordpiece.c — BERT's WordPiece tokenizer over a user-given vocab.txt: the
 * BasicTokenizer (drop control characters, whitespace -> space, CJK ideographs as words,
 * optional lowercasing with accent stripping, split at whitespace and punctuation) then
 * greedy longest-match-first WordPiece with "##" continuations, "[UNK]" for a word longer
 * than 100 characters or one the pieces cannot cover. Follows Hugging Face tokenizers'
 * BertNormalizer + BertPreTokenizer + WordPiece (checked against its npm build, see
 * tests/test_wordpiece.c). Unicode categories and decompositions come from utf8proc.
 * Also the reference WikiText-2 pipeline (vocab_from=train, see tokenizer.h): the pieces
 * lowercased, "<eos>" per line, a vocabulary built from the training text.
 * Not BERT's special-token handling: "[CLS]", "[SEP]" are neither added nor kept whole. */
#include "err.h"
#include "regfile.h"
#include "private/tok_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define WP_MAX_CHARS 100   /* BERT's max_input_chars_per_word */

/* BERT's pieces (vocab.txt), the matching vocabulary; in vocab_from=train mode it is kept
 * beside the tokenizer's own (trained) vocabulary. */
typedef struct {
    WordMap map;
    char *bytes;
    size_t *off;          /* (n+1) */
    int n, unk;           /* unk: the id of "[UNK]" */
    char *lbytes;         /* vocab_from=train: each piece lowercased (Python's str.lower) */
    size_t *loff;         /* (n+1) */
    int *lid;             /* (n) vocab_from=train: the tokenizer's id of each lowered piece */
} Pieces;

static void pieces_free(void *p)
{
    Pieces *pc = p;
    if (!pc) return;
    wordmap_free(&pc->map);
    free(pc->bytes); free(pc->off); free(pc->lbytes); free(pc->loff); free(pc->lid); free(pc);
}

/* Pieces from n strings (pointer, length); LM_EFORMAT when one repeats or [UNK] lacks. */
static int pieces_make(const char *const *w, const size_t *wl, int n, Pieces **out, char *err)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += wl[i];
    Pieces *pc = calloc(1, sizeof *pc);
    if (pc) {
        pc->bytes = malloc(total + 1);
        pc->off = calloc((size_t)n + 1, sizeof *pc->off);
    }
    if (!pc || !pc->bytes || !pc->off) {
        pieces_free(pc);
        return err_set(err, LM_ENOMEM, "wordpiece: out of memory");
    }
    pc->n = n;
    pc->unk = -1;
    for (int i = 0; i < n; i++) {
        memcpy(pc->bytes + pc->off[i], w[i], wl[i]);
        pc->off[i + 1] = pc->off[i] + wl[i];
    }
    for (int i = 0; i < n; i++) {
        int u = wordmap_get(&pc->map, pc->bytes + pc->off[i], wl[i], 1);
        if (u == -2) { pieces_free(pc); return err_set(err, LM_ENOMEM, "wordpiece: out of memory"); }
        if (u != i) {
            pieces_free(pc);
            return err_set(err, LM_EFORMAT, "wordpiece vocabulary: piece %d '%.*s' repeats "
                           "piece %d (line %d repeats line %d)", i, (int)(wl[i] > 60 ? 60 : wl[i]),
                           w[i], u, i + 1, u + 1);
        }
        if (wl[i] == 5 && !memcmp(w[i], "[UNK]", 5)) pc->unk = i;
    }
    if (pc->unk < 0) {
        pieces_free(pc);
        return err_set(err, LM_EFORMAT, "wordpiece vocabulary: no [UNK] line (BERT's vocab.txt "
                       "has one; add it)");
    }
    *out = pc;
    return LM_OK;
}

/* ---- BERT's basic tokenization ---- */

static int is_cjk(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int is_punct(uint32_t c)
{
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
        (c >= 123 && c <= 126))
        return 1;
    utf8proc_category_t k = c < 0x110000 ? utf8proc_category((utf8proc_int32_t)c) : 0;
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

typedef struct { uint32_t *v; size_t n, cap; } CpBuf;

static int cp_push(CpBuf *b, uint32_t c)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        uint32_t *g = realloc(b->v, cap * sizeof *g);
        if (!g) return -1;
        b->v = g;
        b->cap = cap;
    }
    b->v[b->n++] = c;
    return 0;
}

/* Lowercase of c pushed (U+0130 -> "i" U+0307, the one multi-character lowercase). */
static int push_lower(CpBuf *b, uint32_t c)
{
    if (c == 0x130) return cp_push(b, 'i') || cp_push(b, 0x307);
    return cp_push(b, (uint32_t)utf8proc_tolower((utf8proc_int32_t)c));
}

/* BertNormalizer over len bytes into b: controls, NUL, U+FFFD and bytes that are not
 * UTF-8 dropped; whitespace -> ' '; CJK ideographs padded with spaces; lowercase:
 * NFD, nonspacing marks dropped, lowercased. -1 out of memory. */
static int wp_normalize(const char *text, size_t len, int lowercase, CpBuf *b)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        i += (size_t)tok_utf8_next(s, len, i, &c);
        if (c >= 0xDC80 && c <= 0xDCFF) continue;
        utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
        int ws = c == '\t' || c == '\n' || c == '\r' || k == UTF8PROC_CATEGORY_ZS ||
                 k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
        if (c == 0 || c == 0xFFFD || (!ws && k >= UTF8PROC_CATEGORY_CC && k <= UTF8PROC_CATEGORY_CO) ||
            (!ws && k == UTF8PROC_CATEGORY_CN))
            continue;
        int rc = 0;
        if (ws) {
            rc = cp_push(b, ' ');
        } else if (is_cjk(c)) {
            rc = cp_push(b, ' ') || cp_push(b, c) || cp_push(b, ' ');
        } else if (lowercase) {
            utf8proc_int32_t d[32];
            int last = 0;
            utf8proc_ssize_t nd = utf8proc_decompose_char((utf8proc_int32_t)c, d, 32,
                                                          UTF8PROC_DECOMPOSE, &last);
            for (utf8proc_ssize_t j = 0; !rc && j < nd && j < 32; j++)
                if (utf8proc_category(d[j]) != UTF8PROC_CATEGORY_MN) rc = push_lower(b, (uint32_t)d[j]);
        } else {
            rc = cp_push(b, c);
        }
        if (rc) return -1;
    }
    return 0;
}

/* ---- WordPiece ---- */

typedef int (*PieceFn)(void *ctx, int piece);

typedef struct {
    const Pieces *pc;
    char word[4 * WP_MAX_CHARS + 1];      /* a word's UTF-8 */
    char key[4 * WP_MAX_CHARS + 3];       /* "##" + part of it */
    size_t coff[WP_MAX_CHARS + 1];        /* byte offset of each character */
    int ids[WP_MAX_CHARS];
} WpState;

/* The pieces of one pre-token w (n code points), greedy longest match first. */
static int wp_word(WpState *st, const uint32_t *w, size_t n, PieceFn fn, void *ctx)
{
    const Pieces *pc = st->pc;
    if (n > WP_MAX_CHARS) return fn(ctx, pc->unk);
    st->coff[0] = 0;
    for (size_t k = 0; k < n; k++)
        st->coff[k + 1] = st->coff[k] + (size_t)tok_utf8_put(w[k], st->word + st->coff[k]);
    int m = 0;
    for (size_t start = 0; start < n;) {
        int id = -1;
        size_t end = n, p = start ? 2 : 0;
        memcpy(st->key, "##", 2);
        memcpy(st->key + p, st->word + st->coff[start], st->coff[n] - st->coff[start]);
        for (; end > start; end--) {
            id = wordmap_get((WordMap *)&pc->map, st->key, p + st->coff[end] - st->coff[start], 0);
            if (id >= 0) break;
        }
        if (id < 0) return fn(ctx, pc->unk);   /* the word cannot be covered */
        st->ids[m++] = id;
        start = end;
    }
    for (int k = 0; k < m; k++)
        if (fn(ctx, st->ids[k])) return -1;
    return 0;
}

/* BERT's pre-tokenizer over normalized code points (whitespace is ' ' by now): words
 * split at spaces, each punctuation character a word of its own. */
static int wp_pretokenize(WpState *st, const CpBuf *b, PieceFn fn, void *ctx)
{
    size_t i = 0;
    while (i < b->n) {
        uint32_t c = b->v[i];
        if (c == ' ') { i++; continue; }
        size_t e = i + 1;
        if (!is_punct(c))
            while (e < b->n && b->v[e] != ' ' && !is_punct(b->v[e])) e++;
        if (wp_word(st, b->v + i, e - i, fn, ctx)) return -1;
        i = e;
    }
    return 0;
}

/* WordPiece over len bytes: fn gets each piece id; with eos, fn gets -1 at each line end
 * (and after a last line without '\n'). LM_OK or LM_ENOMEM. */
static int wp_run(const Pieces *pc, int lowercase, int eos, const char *text, size_t len,
                  PieceFn fn, void *ctx, char *err)
{
    WpState *st = malloc(sizeof *st);
    CpBuf b = { 0 };
    int rc = st ? LM_OK : LM_ENOMEM;
    for (size_t i = 0; !rc && i < len;) {
        const char *nl = eos ? memchr(text + i, '\n', len - i) : NULL;
        size_t e = nl ? (size_t)(nl - text) : len;
        st->pc = pc;
        b.n = 0;
        if (wp_normalize(text + i, e - i, lowercase, &b) || wp_pretokenize(st, &b, fn, ctx) ||
            (eos && fn(ctx, -1)))
            rc = LM_ENOMEM;
        i = nl ? e + 1 : len;
    }
    free(st);
    free(b.v);
    return rc ? err_set(err, LM_ENOMEM, "wordpiece: out of memory") : LM_OK;
}

/* ---- the tokenizer ---- */

static const Pieces *wp_pieces(const Tokenizer *t) { return ((const WordImpl *)t->impl)->extra; }

/* The lines of vocab.txt (trailing whitespace trimmed, as Hugging Face reads it) into
 * *buf, *w, *wl, *n. LM_EIO / LM_EFORMAT naming the file and line. */
static int read_vocab(const char *path, char **buf, const char ***w, size_t **wl, int *n,
                      char *err)
{
    *buf = NULL; *w = NULL; *wl = NULL; *n = 0;
    if (!path || !*path)
        return err_set(err, LM_EARG, "tokenizer=wordpiece needs vocab=PATH, a BERT vocab.txt "
                       "(one piece a line), e.g. bert-base-cased's");
    char e2[LM_ERR_LEN];
    FILE *f = regfile_fopen(path, e2);   /* a FIFO or device never blocks: refused */
    if (!f)   /* what the file is, where it comes from, and a way to try without it */
        return err_set(err, LM_EIO, "vocab=%s. It is BERT's WordPiece vocab.txt (one piece "
                       "a line; bert-base-cased's has 28996), read by tokenizer=wordpiece and "
                       "the paper presets; lmlab does not download it. Try tokenizer=word (the "
                       "training text's words, no file), or fetch https://huggingface.co/"
                       "bert-base-cased/resolve/main/vocab.txt and pass vocab=/its/path", e2);
    size_t cap = 1 << 16, len = 0, got;
    char *s = malloc(cap + 1);
    while (s && (got = fread(s + len, 1, cap - len, f)) > 0)
        if ((len += got) == cap) {
            char *g = cap < ((size_t)1 << 28) ? realloc(s, 2 * cap + 1) : NULL;
            if (!g) { free(s); s = NULL; break; }
            s = g; cap *= 2;
        }
    int bad = ferror(f);
    fclose(f);
    if (!s || bad) {
        free(s);
        return err_set(err, bad ? LM_EIO : LM_ENOMEM, "vocab=%s: %s", path,
                       bad ? "read error" : "out of memory (or larger than 256 MB)");
    }
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += s[i] == '\n';
    *w = malloc(sizeof **w * lines);
    *wl = malloc(sizeof **wl * lines);
    *buf = s;
    if (!*w || !*wl) return err_set(err, LM_ENOMEM, "vocab=%s: out of memory", path);
    for (size_t i = 0; i < len;) {
        char *nl = memchr(s + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - s) : len, k = e;
        int inner = 0;
        while (k > i && tok_is_space((unsigned char)s[k - 1])) k--;
        for (size_t j = i; j < k; j++) inner |= tok_is_space((unsigned char)s[j]);
        const char *why = k == i ? "empty" : inner ? "a piece with a space inside"
                          : !tok_utf8_valid(s + i, k - i) ? "not UTF-8" : NULL;
        if (why)
            return err_set(err, LM_EFORMAT, "vocab=%s: line %d is %s (a vocab.txt holds one "
                           "piece a line)", path, *n + 1, why);
        (*w)[*n] = s + i;
        (*wl)[(*n)++] = k - i;
        i = e + 1;
    }
    if (*n > (1 << 24)) return err_set(err, LM_EFORMAT, "vocab=%s: more than %d lines", path, 1 << 24);
    return LM_OK;
}

/* Each piece lowercased as Python's str.lower (the reference's Field(lower=True)). */
static int pieces_lower(Pieces *pc)
{
    CpBuf b = { 0 };
    pc->lbytes = malloc(2 * pc->off[pc->n] + 1);   /* a lowercase is at most 3/2 as long */
    pc->loff = calloc((size_t)pc->n + 1, sizeof *pc->loff);
    pc->lid = malloc(sizeof *pc->lid * ((size_t)pc->n + 1));
    if (!pc->lbytes || !pc->loff || !pc->lid) return -1;
    for (int i = 0; i < pc->n; i++) {
        const unsigned char *p = (const unsigned char *)pc->bytes + pc->off[i];
        size_t n = pc->off[i + 1] - pc->off[i], o = pc->loff[i];
        b.n = 0;
        for (size_t k = 0; k < n;) {
            uint32_t c;
            k += (size_t)tok_utf8_next(p, n, k, &c);
            if (push_lower(&b, c)) { free(b.v); return -1; }
        }
        for (size_t k = 0; k < b.n; k++) o += (size_t)tok_utf8_put(b.v[k], pc->lbytes + o);
        pc->loff[i + 1] = o;
    }
    free(b.v);
    return 0;
}

/* Once t (vocab_from=train) is built: the id of each lowered piece, <unk> when absent. */
static void pieces_link(const Tokenizer *t)
{
    const WordImpl *wi = t->impl;
    Pieces *pc = wi->extra;
    for (int i = 0; i < pc->n; i++) {
        int id = wordmap_get((WordMap *)&wi->map, pc->lbytes + pc->loff[i],
                             pc->loff[i + 1] - pc->loff[i], 0);
        pc->lid[i] = id < 0 ? wi->unk : id;
    }
}

static int wp_check(Tokenizer *t, Tokenizer **out, char *err)
{
    const WordImpl *wi = t->impl;
    if (wi->unk >= 0 && (!wi->from_train || wi->eos >= 0)) {
        if (wi->from_train) pieces_link(t);
        return LM_OK;
    }
    const char *lacks = !wi->from_train ? "[UNK]" : wi->unk < 0 ? "<unk>" : "<eos>";
    *out = NULL;
    tokenizer_destroy(t);
    return err_set(err, LM_EFORMAT, "the wordpiece vocabulary lacks %s", lacks);
}

static int count_piece(void *ctx, int piece)
{
    if (piece >= 0) ((long long *)ctx)[piece]++;
    return 0;
}

static const char *const SPECIALS[4] = { "<unk>", "<pad>", "<sos>", "<eos>" };

/* The reference run's vocabulary: SPECIALS, then the lowered pieces of text by falling
 * count, ties in code point order (torchtext's Vocab), at most vocab_size (> 0). */
static int wp_train_vocab(Pieces *pc, const char *text, size_t len, const TokenizerOptions *opt,
                          Tokenizer **out, char *err)
{
    long long *cnt = calloc((size_t)pc->n + 1, sizeof *cnt);
    WordMap m = { 0 };
    int *order = NULL, rc = cnt && !pieces_lower(pc) ? LM_OK : LM_ENOMEM;
    if (!rc) rc = wp_run(pc, opt->lowercase, 1, text, len, count_piece, cnt, err);
    for (int i = 0; !rc && i < pc->n; i++) {
        int u = cnt[i] ? wordmap_get(&m, pc->lbytes + pc->loff[i], pc->loff[i + 1] - pc->loff[i], 1) : -1;
        if (u == -2) rc = LM_ENOMEM;
        else if (u >= 0) m.count[u] += cnt[i];
    }
    for (int k = 0; !rc && k < 4; k++) {
        int u = wordmap_get(&m, SPECIALS[k], 5, 0);
        if (u >= 0) m.count[u] = -1;                /* torchtext drops them from the counts */
    }
    const char **w = rc ? NULL : malloc(sizeof *w * ((size_t)m.n + 4));
    size_t *wl = w ? malloc(sizeof *wl * ((size_t)m.n + 4)) : NULL;
    if (!rc && (!wl || !(order = tok_rank_words(&m, 1)))) rc = LM_ENOMEM;
    int n = 0;
    for (int k = 0; !rc && k < 4; k++) { w[n] = SPECIALS[k]; wl[n++] = 5; }
    for (int k = 0; !rc && k < m.n && (opt->vocab_size <= 0 || n < opt->vocab_size); k++)
        if (m.count[order[k]] > 0) { w[n] = m.key[order[k]]; wl[n++] = m.klen[order[k]]; }
    if (!rc) {
        WordsSetup su = { "<unk>", opt->lowercase, 1, pc, pieces_free };
        pc = NULL;   /* taken over */
        rc = tok_words_build(TOKENIZER_WORDPIECE, w, wl, n, &su, out, err);
        if (!rc) rc = wp_check(*out, out, err);
    } else if (rc == LM_ENOMEM) {
        err_set(err, rc, "wordpiece: out of memory");
    }
    pieces_free(pc);
    wordmap_free(&m);
    free(cnt); free(order); free(w); free(wl);
    return rc;
}

static int wp_train(const char *text, size_t len, const TokenizerOptions *opt, Tokenizer **out,
                    char *err)
{
    char *buf;
    const char **w;
    size_t *wl;
    int n;
    Pieces *pc = NULL;
    if (!opt->vocab_from_train && opt->vocab_size)
        return err_set(err, LM_EARG, "vocab_size=%d: wordpiece takes its vocabulary from the "
                       "vocab file as it is; use vocab_size=0 (or vocab_from_train=true, whose "
                       "built vocabulary vocab_size limits)", opt->vocab_size);
    if (opt->vocab_size < 0 || (opt->vocab_size > 0 && opt->vocab_size < 5))
        return err_set(err, LM_EARG, "wordpiece vocabulary size %d: use 0 (all pieces) or at "
                       "least 5 (<unk> <pad> <sos> <eos> and a piece)", opt->vocab_size);
    int rc = read_vocab(opt->vocab_path, &buf, &w, &wl, &n, err);
    if (!rc) rc = pieces_make(w, wl, n, &pc, err);
    if (!rc && opt->vocab_from_train) {
        rc = wp_train_vocab(pc, text, len, opt, out, err);
    } else if (!rc) {
        WordsSetup su = { "[UNK]", opt->lowercase, 0, pc, pieces_free };
        rc = tok_words_build(TOKENIZER_WORDPIECE, w, wl, n, &su, out, err);
        if (!rc) rc = wp_check(*out, out, err);
    }
    free(buf); free(w); free(wl);
    return rc;
}

typedef struct { const Tokenizer *t; int *ids; size_t n, cap; int fail; } WpEnc;

static int encode_piece(void *ctx, int piece)
{
    WpEnc *e = ctx;
    const WordImpl *wi = e->t->impl;
    if (e->n == e->cap) {
        size_t cap = 2 * e->cap + 64;
        int *g = realloc(e->ids, sizeof *g * cap);
        if (!g) return e->fail = -1;
        e->ids = g;
        e->cap = cap;
    }
    e->ids[e->n++] = !wi->from_train ? piece : piece < 0 ? wi->eos : wp_pieces(e->t)->lid[piece];
    return 0;
}

static int wp_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                     char *err)
{
    const WordImpl *wi = t->impl;
    WpEnc e = { t, malloc(sizeof(int) * 64), 0, 64, 0 };
    int rc = e.ids ? wp_run(wi->extra, wi->lowercase, wi->from_train, text, len, encode_piece,
                            &e, err)
                   : err_set(err, LM_ENOMEM, "wordpiece: out of memory");
    if (rc) {
        free(e.ids);
        return rc;
    }
    *ids = e.ids;
    *n = e.n;
    return LM_OK;
}

/* A space and the piece; "##x" -> "x"; <eos> -> "\n". */
static size_t wp_decoded(const Tokenizer *t, int id, char *out)
{
    const WordImpl *wi = t->impl;
    const char *p = t->bytes + t->off[id];
    size_t n = t->off[id + 1] - t->off[id];
    if (wi->from_train && id == wi->eos) {
        out[0] = '\n';
        return 1;
    }
    if (n > 2 && p[0] == '#' && p[1] == '#') {
        memcpy(out, p + 2, n - 2);
        return n - 2;
    }
    out[0] = ' ';
    memcpy(out + 1, p, n);
    return n + 1;
}

static int wp_save(const Tokenizer *t, json_t *o)
{
    const WordImpl *wi = t->impl;
    const Pieces *pc = wi->extra;
    json_t *a = json_array();
    for (int i = 0; a && i < pc->n; i++)
        if (json_array_append_new(a, json_stringn(pc->bytes + pc->off[i], pc->off[i + 1] - pc->off[i]))) {
            json_decref(a);
            return -1;
        }
    if (!a || json_object_set_new(o, "lowercase", json_boolean(wi->lowercase)) ||
        json_object_set_new(o, "vocab_from", json_string(wi->from_train ? "train" : "file")) ||
        json_object_set_new(o, "pieces", a))
        return -1;
    return wi->from_train ? tok_words_save(t, o, "words") : 0;
}

static int wp_load(const json_t *o, int V, Tokenizer **out, char *err)
{
    const json_t *a = json_object_get(o, "pieces"), *lc = json_object_get(o, "lowercase");
    const char *from = json_string_value(json_object_get(o, "vocab_from"));
    if (!json_is_boolean(lc) || !from || (strcmp(from, "file") && strcmp(from, "train")))
        return err_set(err, LM_EFORMAT, "tokenizer JSON: wordpiece needs \"lowercase\" (true or "
                       "false) and \"vocab_from\" (\"file\" or \"train\")");
    int train = !strcmp(from, "train");
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n < 1 || n > (1 << 24) || (!train && n != (size_t)V))
        return err_set(err, LM_EFORMAT, "tokenizer JSON: \"pieces\" must be an array of %s "
                       "pieces", train ? "1 or more" : "vocab_size");
    const char **w = malloc(sizeof *w * n);
    size_t *wl = malloc(sizeof *wl * n);
    int rc = w && wl ? LM_OK : err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        const json_t *v = json_array_get(a, i);
        w[i] = json_string_value(v);
        wl[i] = json_string_length(v);
        for (size_t k = 0; w[i] && k < wl[i]; k++)
            if (tok_is_space((unsigned char)w[i][k])) w[i] = NULL;
        if (!w[i] || !wl[i])
            rc = err_set(err, LM_EFORMAT, "tokenizer JSON: pieces[%zu] is not a non-empty "
                         "string without spaces", i);
    }
    Pieces *pc = NULL;
    if (!rc) rc = pieces_make(w, wl, (int)n, &pc, err);
    if (!rc && train && pieces_lower(pc)) {
        pieces_free(pc);
        rc = err_set(err, LM_ENOMEM, "tokenizer: out of memory");
    }
    if (!rc) {
        WordsSetup su = { train ? "<unk>" : "[UNK]", json_is_true(lc), train, pc, pieces_free };
        rc = train ? tok_words_load(o, "words", TOKENIZER_WORDPIECE, V, &su, out, err)
                   : tok_words_build(TOKENIZER_WORDPIECE, w, wl, V, &su, out, err);
        if (!rc) rc = wp_check(*out, out, err);
    }
    free(w); free(wl);
    return rc;
}

const TokenizerOps TOK_WORDPIECE_OPS = {
    .train = wp_train, .load = wp_load, .save = wp_save,
    .encode = wp_encode, .decoded = wp_decoded, .free_impl = tok_words_free,
};
