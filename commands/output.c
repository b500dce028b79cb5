/* output.c — one output record rendered as a JSON line or as text (see output.h). Not
 * here: what the commands say, or where the output goes. */
#include "output.h"

#include "err.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { OUT_STR, OUT_INT, OUT_REAL, OUT_BOOL } OutType;

typedef struct {
    char key[32];
    OutType type;
    int text_only;
    char *s;
    long i;
    double r;
} OutField;

struct Output {
    char event[32];
    OutField *f;           /* (n) */
    int n, cap;
    char **lines;          /* (n_lines) templates */
    int n_lines, cap_lines;
    int failed;            /* an allocation failed */
};

Output *output_create(const char *event)
{
    Output *o = calloc(1, sizeof *o);
    if (o && event)
        snprintf(o->event, sizeof o->event, "%s", event);
    return o;
}

void output_destroy(Output *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n; i++)
        free(o->f[i].s);
    for (int i = 0; i < o->n_lines; i++)
        free(o->lines[i]);
    free(o->f);
    free(o->lines);
    free(o);
}

static const OutField *find(const Output *o, const char *key, size_t len)
{
    for (int i = 0; i < o->n; i++)
        if (strlen(o->f[i].key) == len && !strncmp(o->f[i].key, key, len))
            return &o->f[i];
    return NULL;
}

/* The field named key (replaced if it exists, else appended), or NULL. */
static OutField *slot(Output *o, const char *key, OutType type, int text_only)
{
    if (!o || o->failed)
        return NULL;
    OutField *f = (OutField *)find(o, key, strlen(key));
    if (!f) {
        if (o->n == o->cap) {
            int cap = o->cap ? 2 * o->cap : 16;
            OutField *nf = realloc(o->f, (size_t)cap * sizeof *nf);
            if (!nf) {
                o->failed = 1;
                return NULL;
            }
            o->f = nf;
            o->cap = cap;
        }
        f = &o->f[o->n++];
        memset(f, 0, sizeof *f);
        snprintf(f->key, sizeof f->key, "%s", key);
    }
    free(f->s);
    f->s = NULL;
    f->type = type;
    f->text_only = text_only;
    return f;
}

static void put_str(Output *o, const char *key, const char *v, int text_only)
{
    OutField *f = slot(o, key, OUT_STR, text_only);
    if (f && !(f->s = strdup(v ? v : "")))
        o->failed = 1;
}

void output_str(Output *o, const char *key, const char *v) { put_str(o, key, v, 0); }
void output_text_str(Output *o, const char *key, const char *v) { put_str(o, key, v, 1); }

void output_int(Output *o, const char *key, long v)
{
    OutField *f = slot(o, key, OUT_INT, 0);
    if (f)
        f->i = v;
}

void output_real(Output *o, const char *key, double v)
{
    OutField *f = slot(o, key, OUT_REAL, 0);
    if (f)
        f->r = v;
}

void output_bool(Output *o, const char *key, int v)
{
    OutField *f = slot(o, key, OUT_BOOL, 0);
    if (f)
        f->i = v != 0;
}

void output_line(Output *o, const char *tmpl)
{
    if (!o || o->failed)
        return;
    if (o->n_lines == o->cap_lines) {
        int cap = o->cap_lines ? 2 * o->cap_lines : 4;
        char **nl = realloc(o->lines, (size_t)cap * sizeof *nl);
        if (!nl) {
            o->failed = 1;
            return;
        }
        o->lines = nl;
        o->cap_lines = cap;
    }
    if (!(o->lines[o->n_lines] = strdup(tmpl)))
        o->failed = 1;
    else
        o->n_lines++;
}

/* One field's value as text, with fmt (a printf conversion) or its type's default. */
static int field_text(const OutField *f, const char *fmt, char *buf, size_t cap)
{
    switch (f->type) {
    case OUT_STR: return snprintf(buf, cap, fmt ? fmt : "%s", f->s ? f->s : "");
    case OUT_INT: return snprintf(buf, cap, fmt ? fmt : "%ld", f->i);
    case OUT_BOOL: return snprintf(buf, cap, "%s", f->i ? "true" : "false");
    case OUT_REAL:
        if (fmt && !strcmp(fmt, "ppl")) {   /* a perplexity: metrics.h's one format */
            char p[METRIC_PPL_TEXT];
            return snprintf(buf, cap, "%s", metric_ppl_text(f->r, p));
        }
        if (!isfinite(f->r))
            return snprintf(buf, cap, "-");
        return snprintf(buf, cap, fmt ? fmt : "%g", f->r);
    }
    return 0;
}

/* Appends a rendered template to buf[*len..cap). */
static void render_line(const Output *o, const char *t, char *buf, size_t cap, size_t *len)
{
    for (const char *p = t; *p && *len + 1 < cap;) {
        const char *close = *p == '{' && p[1] != '{' ? strchr(p, '}') : NULL;
        if (!close) {
            buf[(*len)++] = *p;
            p += *p == '{' && p[1] == '{' ? 2 : 1; /* "{{" is one brace */
            continue;
        }
        const char *colon = memchr(p + 1, ':', (size_t)(close - p - 1));
        size_t klen = (size_t)((colon ? colon : close) - p - 1);
        char fmt[32] = "", piece[1024];
        if (colon)
            snprintf(fmt, sizeof fmt, "%.*s", (int)(close - colon - 1), colon + 1);
        const OutField *f = find(o, p + 1, klen);
        int k = f ? field_text(f, fmt[0] ? fmt : NULL, piece, sizeof piece)
                  : snprintf(piece, sizeof piece, "{%.*s?}", (int)klen, p + 1);
        size_t n = k < 0 ? 0 : (size_t)k < sizeof piece ? (size_t)k : sizeof piece - 1;
        if (n > cap - 1 - *len)
            n = cap - 1 - *len;
        memcpy(buf + *len, piece, n);
        *len += n;
        p = close + 1;
    }
    buf[*len] = 0;
}

size_t output_render_text(const Output *o, char *buf, size_t cap)
{
    size_t len = 0;
    if (!cap)
        return 0;
    buf[0] = 0;
    for (int i = 0; o && i < o->n_lines; i++) {
        if (i && len + 1 < cap) {
            buf[len++] = '\n';
            buf[len] = 0;
        }
        render_line(o, o->lines[i], buf, cap, &len);
    }
    return len;
}

static json_t *to_json(const Output *o)
{
    json_t *j = json_object();
    if (j && o->event[0])
        json_object_set_new(j, "event", json_string(o->event));
    for (int i = 0; j && i < o->n; i++) {
        const OutField *f = &o->f[i];
        json_t *v = f->text_only ? NULL
                    : f->type == OUT_STR ? json_string(f->s ? f->s : "")
                    : f->type == OUT_INT ? json_integer(f->i)
                    : f->type == OUT_BOOL ? json_boolean(f->i)
                    : isfinite(f->r) ? json_real(f->r) : NULL;
        if (v)
            json_object_set_new(j, f->key, v);
    }
    return j;
}

int output_emit(Session *s, Output *o)
{
    if (!o || o->failed) {
        output_destroy(o);
        return session_error(s, LM_ENOMEM, "out of memory writing the output");
    }
    if (s->json) {
        session_emit_json(s, to_json(o));
    } else {
        char line[8192];
        for (int i = 0; i < o->n_lines; i++) {
            size_t len = 0;
            render_line(o, o->lines[i], line, sizeof line, &len);
            session_printf(s, "%s", line);
        }
    }
    output_destroy(o);
    return LM_OK;
}

void output_sparkline(const float *v, int n, int unicode, char *buf, size_t cap)
{
    static const char *const BARS[8] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ASCII[] = "__..--==";
    float lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) lo = fminf(lo, v[i]), hi = fmaxf(hi, v[i]);
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && o + 4 < cap; i++) {
        int k = !isfinite(v[i]) ? 0 : hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7.0f + 0.5f) : 3;
        k = k < 0 ? 0 : k > 7 ? 7 : k;
        if (unicode) o += (size_t)snprintf(buf + o, cap - o, "%s", BARS[k]);
        else buf[o++] = ASCII[k], buf[o] = 0;
    }
}

