/* sample.c — generation with incremental decoding or window recompute (see sample.h). */
#include "sample.h"

#include "crossentropy.h"
#include "err.h"
#include "sysinfo.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sample_options_default(SampleOptions *o)
{
    o->n_tokens = 200;
    o->temperature = 0.8f;
    o->top_k = 0;
    o->top_p = 1.0f;
    o->seed = 1337;
    o->use_cache = 1;
    o->slide_positions = 0;
}

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

/* Picks a token from logits (V) (modified in place): greedy, temperature, top-k, top-p. */
static int sample_pick(float *logits, int V, const SampleOptions *o, Rng *rng)
{
    int best = 0;
    for (int v = 1; v < V; v++)
        if (logits[v] > logits[best])
            best = v;
    if (o->temperature <= 0)
        return best;
    softmax_forward(logits, logits, 1, V, o->temperature);
    float cutoff = 0;
    if ((o->top_k > 0 && o->top_k < V) || o->top_p < 1.0f) {
        float *sorted = malloc((size_t)V * sizeof(float));
        if (sorted) {
            memcpy(sorted, logits, (size_t)V * sizeof(float));
            qsort(sorted, (size_t)V, sizeof(float), cmp_desc);
            int k = o->top_k > 0 && o->top_k < V ? o->top_k : V;
            double acc = 0;
            for (int i = 0; i < k; i++) {
                acc += sorted[i];
                cutoff = sorted[i];
                if (acc >= o->top_p)
                    break;
            }
            free(sorted);
        }
    }
    double total = 0;
    for (int v = 0; v < V; v++)
        if (logits[v] >= cutoff)
            total += logits[v];
    double r = rng_uniform(rng) * total, acc = 0;
    for (int v = 0; v < V; v++) {
        if (logits[v] < cutoff)
            continue;
        acc += logits[v];
        if (r < acc)
            return v;
    }
    return best;
}

typedef struct {
    Model *m;
    DecodeState *ds;
    int *ctx;              /* the whole token history */
    size_t n, cap;
    int pos;               /* next cache position */
    int slide;             /* re-prime at bptt (SampleOptions.slide_positions) */
    float *logits;
} Gen;

static int ctx_push(Gen *g, int token)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 1024;
        int *c = realloc(g->ctx, cap * sizeof(int));
        if (!c)
            return LM_ENOMEM;
        g->ctx = c;
        g->cap = cap;
    }
    g->ctx[g->n++] = token;
    return LM_OK;
}

/* Logits for the next token after the history, through the cache or a recompute. */
static int next_logits(Gen *g, int fed_token)
{
    Model *m = g->m;
    int V = m->vocab, bptt = m->cfg.bptt;
    if (g->ds) {
        int rc = g->slide && g->pos >= bptt
                     ? LM_ESTATE : m->ops->decode_step(m, g->ds, fed_token, g->pos, g->logits);
        if (rc == LM_OK) {
            g->pos++;
            return LM_OK;
        }
        /* past the cache's reach (or bptt when sliding): re-prime with the last bptt/2
         * tokens, which includes the one just fed */
        size_t keep = (size_t)(bptt / 2 > 0 ? bptt / 2 : 1);
        if (keep > g->n)
            keep = g->n;
        g->pos = 0;
        for (size_t i = g->n - keep; i < g->n; i++) {
            if ((rc = m->ops->decode_step(m, g->ds, g->ctx[i], g->pos, g->logits)))
                return rc;
            g->pos++;
        }
        return LM_OK;
    }
    int T = g->n < (size_t)bptt ? (int)g->n : bptt;
    const int *win = g->ctx + g->n - T;
    int rc = model_forward(m, win, NULL, 1, T, NULL, NULL);
    if (rc)
        return rc;
    const float *all = m->ops->logits(m);
    if (!all)
        return LM_ESTATE;
    memcpy(g->logits, all + (size_t)(T - 1) * V, (size_t)V * sizeof(float));
    return LM_OK;
}

static int prime(Gen *g, const int *ids, size_t n)
{
    int rc = LM_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = ctx_push(g, ids[i]);
    if (rc || !g->ds)
        return rc ? rc : next_logits(g, 0);
    size_t start = n > (size_t)g->m->cfg.bptt ? n - (size_t)g->m->cfg.bptt : 0;
    for (size_t i = start; i < n && !rc; i++)
        rc = next_logits(g, ids[i]);
    return rc;
}

/* The prompt's tokens (*ids malloc'd, *n of them); an empty prompt starts from token 0
 * (the newline for char-level). LM_OK, or the tokenizer's status / LM_ENOMEM with err. */
static int encode_prompt(const Tokenizer *tok, const char *prompt, int **ids, size_t *n,
                         char *err)
{
    int rc = tokenizer_encode_prompt(tok, prompt ? prompt : "", prompt ? strlen(prompt) : 0, ids, n,
                              err);
    if (rc || *n)
        return rc;
    free(*ids);
    if (!(*ids = calloc(1, sizeof(int))))
        return err_set(err, LM_ENOMEM, "out of memory");
    *n = 1;
    return LM_OK;
}

/* Appends len bytes of piece to the growing text *out (*len_io used, *cap allocated),
 * always terminated. LM_OK or LM_ENOMEM (*out unchanged). */
static int append(char **out, size_t *len_io, size_t *cap, const char *piece, size_t len)
{
    if (*len_io + len + 1 > *cap) {
        size_t want = (*len_io + len + 1) * 2;
        char *p = realloc(*out, want);
        if (!p)
            return LM_ENOMEM;
        *out = p;
        *cap = want;
    }
    memcpy(*out + *len_io, piece, len);
    *len_io += len;
    (*out)[*len_io] = 0;
    return LM_OK;
}

int sample_generate(Model *m, const Tokenizer *tok, const char *prompt, const SampleOptions *o,
                    SampleCallback cb, void *ud, char **text, SampleStats *stats, char *err)
{
    if (o->n_tokens < 1 || o->n_tokens > 1000000 || o->top_p <= 0 || o->top_p > 1 ||
        o->top_k < 0 || !(o->temperature >= 0))
        return err_set(err, LM_EARG, "sampling options out of range: tokens 1..1000000, "
                       "top_p in (0,1], top_k >= 0, temp >= 0");
    int *ids = NULL;
    size_t n = 0;
    int rc = encode_prompt(tok, prompt, &ids, &n, err);
    if (rc)
        return rc;
    const char *sep = tokenizer_join(tok, prompt);
    Gen g = {.m = m, .slide = o->slide_positions};
    g.logits = malloc((size_t)m->vocab * sizeof(float));
    char *out = NULL;
    size_t out_len = 0, out_cap = 0;
    int was_training = m->training;
    m->training = 0;
    if (o->use_cache && m->ops->decode_create)
        g.ds = m->ops->decode_create(m, NULL);
    double t0 = sysinfo_now();
    Rng rng;
    rng_seed(&rng, o->seed);
    rc = g.logits ? prime(&g, ids, n) : LM_ENOMEM;
    int generated = 0;
    for (; !rc && generated < o->n_tokens; generated++) {
        int next = sample_pick(g.logits, m->vocab, o, &rng);
        char piece[256];
        int len = tokenizer_decode_token(tok, next, piece + 1, sizeof piece - 1), at = 1;
        if (generated == 0 && *sep && len > 0 && !isspace((unsigned char)piece[1]))
            piece[0] = *sep, at = 0, len++;   /* "the cat" + "house" -> "the cat house" */
        memmove(piece, piece + at, sizeof piece - 1);
        if (len > 0 && text && (rc = append(&out, &out_len, &out_cap, piece, (size_t)len)))
            break;
        if ((rc = ctx_push(&g, next)))
            break;
        if (cb && len > 0 && cb(ud, piece, (size_t)len)) {
            generated++;
            break;
        }
        if (generated + 1 < o->n_tokens)
            rc = next_logits(&g, next);
    }
    double dt = sysinfo_now() - t0;
    if (stats) {
        stats->prompt_tokens = (int)n;
        stats->generated = generated;
        stats->seconds = dt;
        stats->tokens_per_s = dt > 0 ? generated / dt : 0;
        stats->cached = g.ds != NULL;
    }
    if (g.ds)
        m->ops->decode_destroy(g.ds);
    m->training = was_training;
    free(g.ctx);
    free(g.logits);
    free(ids);
    if (rc) {
        free(out);
        return err_set(err, rc, "sampling failed: %s", err_name(rc));
    }
    if (text)
        *text = out ? out : strdup("");
    else
        free(out);
    return LM_OK;
}

int sample_unknown_words(const Tokenizer *tok, const char *prompt, char *list, size_t cap)
{
    int *ids = NULL, unk = -1, count = 0;
    size_t n = 0, used = 0;
    if (cap) list[0] = 0;
    if (tokenizer_kind(tok) != TOKENIZER_WORD || !prompt)
        return 0;
    if (tokenizer_encode(tok, "<unk>", 5, &ids, &n, NULL) == LM_OK && n >= 1)
        unk = ids[0];
    free(ids);
    for (const char *p = prompt; unk >= 0 && *p;) {
        size_t len = strcspn(p, " \t\n\v\f\r");
        ids = NULL;
        if (len && !(len == 5 && !memcmp(p, "<unk>", 5)) &&
            tokenizer_encode(tok, p, len, &ids, &n, NULL) == LM_OK && n >= 1 && ids[0] == unk) {
            count++;
            if (used + len + 2 < cap) {
                used += (size_t)snprintf(list + used, cap - used, "%s%.*s", used ? " " : "",
                                         (int)len, p);
            }
        }
        free(ids);
        p += len;
        p += strspn(p, " \t\n\v\f\r");
    }
    return count;
}
