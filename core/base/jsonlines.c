/* jsonlines.c — a JSON array re-encoded as it streams, one compact line per element (see
 * jsonlines.h). What json_dumps of json_loads did, token by token: whitespace between
 * tokens dropped, the array's brackets and commas dropped, structure kept; a string
 * without escapes or bytes outside printable ASCII copied (its dump is itself), any other
 * string decoded and dumped by jansson itself; an integer read by strtoll and written by
 * "%lld", a real read by strtod and written as jansson's dump writes it (jsonp_dtostr:
 * "%.16g", ".0" added to what would read as an integer, the exponent's '+' and leading
 * zeros dropped, the locale's decimal point as '.'). test_jsonlines compares the lines
 * with jansson's on a document, and the reals on a million values. Not a validator. */
#include "jsonlines.h"
#include "jsonval.h"
#include "err.h"

#include <errno.h>
#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JL_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16) | JSON_ENCODE_ANY)
#define JL_OUT_MAX 65536

enum { JL_BETWEEN, JL_STRING, JL_ESCAPE, JL_NUMBER, JL_WORD, JL_END };

void jsonlines_init(JsonLines *j, const char *extra, JsonLinesPut put, void *ud)
{
    memset(j, 0, sizeof *j);
    snprintf(j->extra, sizeof j->extra, "%s", extra ? extra : "");
    j->put = put;
    j->ud = ud;
}

void jsonlines_free(JsonLines *j)
{
    free(j->tok);
    free(j->out);
    j->tok = j->out = NULL;
}

static int fail(JsonLines *j, int status)
{
    if (!j->status) j->status = status;
    return j->status;
}

static void flush(JsonLines *j)
{
    if (j->status || !j->nout) return;
    j->out[j->nout] = 0;
    if (j->put(j->ud, j->out, j->nout)) fail(j, LM_EIO);
    j->nout = 0;
}

/* n bytes of output, put in pieces of at most JL_OUT_MAX. */
static void emit(JsonLines *j, const char *t, size_t n)
{
    if (!j->out && !(j->out = malloc(JL_OUT_MAX + 1))) {
        fail(j, LM_ENOMEM);
        return;
    }
    while (n && !j->status) {
        size_t k = JL_OUT_MAX - j->nout < n ? JL_OUT_MAX - j->nout : n;
        memcpy(j->out + j->nout, t, k);
        j->nout += k, t += k, n -= k;
        if (j->nout == JL_OUT_MAX) flush(j);
    }
}

static void emit_c(JsonLines *j, char c)
{
    emit(j, &c, 1);
}

static void tok_add(JsonLines *j, char c)
{
    if (j->ntok + 2 > j->captok) {
        size_t cap = j->captok ? 2 * j->captok : 256;
        char *t = realloc(j->tok, cap);
        if (!t) {
            fail(j, LM_ENOMEM);
            return;
        }
        j->tok = t, j->captok = cap;
    }
    j->tok[j->ntok++] = c;
    j->tok[j->ntok] = 0;
}

/* A real's text as jansson dumps it at precision 16 (its jsonp_dtostr). */
static size_t real_text(char *buf, size_t cap, double v)
{
    int n = snprintf(buf, cap, "%.16g", v);
    if (n < 0 || (size_t)n + 3 > cap) return 0;
    const char *point = localeconv()->decimal_point;
    char *q = *point != '.' ? strchr(buf, *point) : NULL;
    if (q) *q = '.';
    if (!strchr(buf, '.') && !strchr(buf, 'e')) {
        buf[n++] = '.', buf[n++] = '0';
        buf[n] = 0;
    }
    char *start = strchr(buf, 'e');
    if (start) {   /* "1e+05" -> "1e5", "1e-05" -> "1e-5" */
        char *end = ++start + 1;
        if (*start == '-') start++;
        while (*end == '0') end++;
        if (end != start) {
            memmove(start, end, strlen(end) + 1);
            n -= (int)(end - start);
        }
    }
    return (size_t)n;
}

/* A number token: its value as json_loads reads it, dumped as json_dumps writes it. */
static void end_number(JsonLines *j)
{
    char buf[64], *end;
    size_t n;
    errno = 0;
    if (!strpbrk(j->tok, ".eE")) {
        long long v = strtoll(j->tok, &end, 10);
        if (*end || errno) {
            fail(j, LM_EFORMAT);
            return;
        }
        n = (size_t)snprintf(buf, sizeof buf, "%lld", v);
    } else {
        char num[80];
        const char *point = localeconv()->decimal_point;
        snprintf(num, sizeof num, "%s", j->tok);   /* jansson reads in the locale's form */
        char *q = *point != '.' ? strchr(num, '.') : NULL;
        if (q) *q = *point;
        double v = strtod(num, &end);
        if (*end || j->ntok >= sizeof num || (errno == ERANGE && isinf(v)) ||
            !(n = real_text(buf, sizeof buf, v))) {
            fail(j, LM_EFORMAT);
            return;
        }
    }
    emit(j, buf, n);
}

/* A string token (its quotes included): copied when its dump is itself, else decoded and
 * dumped by jansson. */
static void end_string(JsonLines *j)
{
    int plain = 1;
    for (size_t i = 1; i + 1 < j->ntok && plain; i++) {
        unsigned char c = (unsigned char)j->tok[i];
        plain = c >= 0x20 && c < 0x7f && c != '\\';
    }
    if (plain) {
        emit(j, j->tok, j->ntok);
        return;
    }
    json_t *v = json_loadb(j->tok, j->ntok, JSON_DECODE_ANY, NULL);
    char *t = v ? json_dumps(v, JL_FLAGS) : NULL;
    if (t) emit(j, t, strlen(t));
    else fail(j, v ? LM_ENOMEM : LM_EFORMAT);
    free(t);
    json_decref(v);
}

/* The end of an element of the array: its object's extra member, and the line's end. */
static void end_element(JsonLines *j, char close, char last)
{
    if (close == '}' && j->elem_obj && j->extra[0]) {
        if (last != '{') emit_c(j, ',');
        emit(j, j->extra, strlen(j->extra));
    }
    if (close) emit_c(j, close);
    emit_c(j, '\n');
}

/* The token in progress is complete: written (a scalar element ends its line). */
static void end_token(JsonLines *j)
{
    if (j->state == JL_NUMBER) end_number(j);
    else if (j->state == JL_STRING) end_string(j);
    else emit(j, j->tok, j->ntok);   /* true, false, null */
    if (j->depth == 1) end_element(j, 0, 0);
    j->state = JL_BETWEEN;
}

static void start_token(JsonLines *j, int state, char c)
{
    if (j->depth < 1) {
        fail(j, LM_EFORMAT);
        return;
    }
    j->state = state;
    j->ntok = 0;
    tok_add(j, c);
}

/* One byte between tokens. */
static void between(JsonLines *j, char c)
{
    char *last = &j->last;
    switch (c) {
    case ' ': case '\t': case '\n': case '\r':
        return;
    case '[': case '{':
        if (j->depth == 0 && c == '[') {
            j->depth = 1;
            return;
        }
        if (j->depth == 0) break;
        if (j->depth == 1) j->elem_obj = c == '{';
        j->depth++;
        emit_c(j, c);
        *last = c;
        return;
    case ']': case '}':
        if (j->depth == 1 && c == ']') {
            j->depth = 0;
            j->state = JL_END;
            return;
        }
        if (j->depth < 2) break;
        if (--j->depth == 1) end_element(j, c, *last);
        else emit_c(j, c);
        *last = c;
        return;
    case ',':
        if (j->depth > 1) emit_c(j, c), *last = c;
        return;
    case ':':
        emit_c(j, c);
        *last = c;
        return;
    case '"':
        start_token(j, JL_STRING, c);
        *last = c;
        return;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            start_token(j, JL_NUMBER, c);
            *last = c;
            return;
        }
        if (c >= 'a' && c <= 'z') {
            start_token(j, JL_WORD, c);
            *last = c;
            return;
        }
    }
    fail(j, LM_EFORMAT);
}

int jsonlines_write(JsonLines *j, const char *p, size_t n)
{
    for (size_t i = 0; i < n && !j->status; i++) {
        char c = p[i];
        switch (j->state) {
        case JL_STRING:
            tok_add(j, c);
            if (c == '\\') j->state = JL_ESCAPE;
            else if (c == '"') end_token(j);
            continue;
        case JL_ESCAPE:
            tok_add(j, c);
            j->state = JL_STRING;
            continue;
        case JL_NUMBER:
            if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' ||
                c == '-') {
                tok_add(j, c);
                continue;
            }
            end_token(j);
            break;
        case JL_WORD:
            if (c >= 'a' && c <= 'z') {
                tok_add(j, c);
                continue;
            }
            end_token(j);
            break;
        case JL_END:
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') fail(j, LM_EFORMAT);
            continue;
        }
        if (!j->status) between(j, c);
    }
    return j->status;
}

int jsonlines_finish(JsonLines *j)
{
    if (!j->status && j->state != JL_END) fail(j, LM_EFORMAT);
    flush(j);
    return j->status;
}

int jsonlines_put_string(const char *text, size_t n, JsonLinesPut put, void *ud)
{
    json_t *v = json_stringn(text, n);
    if (!v) {   /* not UTF-8: its bytes that are not as \xNN */
        char *c = strndup(text, n);
        v = c ? jsonval_str(c) : NULL;
        free(c);
    }
    char *t = v ? json_dumps(v, JL_FLAGS) : NULL;
    json_decref(v);
    if (!t) return LM_ENOMEM;
    size_t k = strlen(t);   /* "..." */
    t[k - 1] = 0;
    int rc = put(ud, t + 1, k - 2) ? LM_EIO : LM_OK;
    free(t);
    return rc;
}
