/* test_jsonlines.c — jsonlines (core/base/jsonlines.h) gives, for each element of a JSON
 * array fed in pieces of any size, the bytes jansson's compact ASCII dump (16 digits) gives
 * of that element after json_loads of the whole array, with the extra member appended to
 * objects: a document of every kind of value (strings with quotes, controls, non-ASCII and
 * astral characters, integers at their limits, reals of every magnitude, nesting, empty
 * containers, scalar elements), a million reals of random bits and as many of training's
 * shapes; a document that is not an array is refused; a failing sink stops it; text
 * escaped as a JSON string's inside as jansson writes it, bytes that are not UTF-8 as \xNN.
 * Not the export (test_export_bounded runs `--json export` through the command). */
#include "check.h"
#include "err.h"
#include "jsonlines.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16))

/* What the sink received. */
typedef struct {
    char *p;
    size_t n, cap;
    int fail_after;   /* > 0: the sink fails on that call */
    int calls;
    size_t biggest;
} Got;

static int got_put(void *ud, const char *text, size_t n)
{
    Got *g = ud;
    if (g->fail_after && ++g->calls >= g->fail_after) return -1;
    if (strlen(text) != n) return -1;   /* NUL-terminated, n its length */
    if (g->n + n + 1 > g->cap) {
        g->cap = (g->n + n + 1) * 2;
        g->p = realloc(g->p, g->cap);
    }
    memcpy(g->p + g->n, text, n);
    g->n += n;
    g->p[g->n] = 0;
    if (n > g->biggest) g->biggest = n;
    return 0;
}

/* The old way: json_loads the whole document, each element dumped on its line with
 * "event":"export" added to objects (malloc'd). */
static char *expected(const char *doc)
{
    json_t *a = json_loads(doc, JSON_DECODE_ANY, NULL);
    size_t cap = strlen(doc) * 2 + 64, n = 0, i;
    char *out = malloc(cap);
    out[0] = 0;
    json_t *e;
    json_array_foreach(a, i, e) {
        if (json_is_object(e)) json_object_set_new(e, "event", json_string("export"));
        char *t = json_dumps(e, FLAGS | JSON_ENCODE_ANY);
        n += (size_t)snprintf(out + n, cap - n, "%s\n", t);
        free(t);
    }
    json_decref(a);
    return out;
}

/* doc through jsonlines in pieces of `piece` bytes (0: random 1..9) into *g. */
static int run(const char *doc, size_t piece, Got *g)
{
    JsonLines j;
    jsonlines_init(&j, "\"event\":\"export\"", got_put, g);
    size_t n = strlen(doc);
    int rc = LM_OK;
    for (size_t at = 0; at < n && !rc;) {
        size_t k = piece ? piece : 1 + (size_t)rand() % 9;
        if (k > n - at) k = n - at;
        rc = jsonlines_write(&j, doc + at, k);
        at += k;
    }
    if (!rc) rc = jsonlines_finish(&j);
    jsonlines_free(&j);
    return rc;
}

static void check_doc(const char *what, const char *doc)
{
    char *want = expected(doc);
    static const size_t PIECES[] = {0, 1, 7, 4096, 1 << 20};
    for (size_t p = 0; p < sizeof PIECES / sizeof *PIECES; p++) {
        Got g = {0};
        int rc = run(doc, PIECES[p], &g);
        CHECK(rc == LM_OK && !strcmp(g.p ? g.p : "", want), "%s, pieces of %zu: rc %d\n got  %.300s\n"
              " want %.300s", what, PIECES[p], rc, g.p ? g.p : "", want);
        CHECK(g.biggest <= 65536, "%s: a put of %zu bytes", what, g.biggest);
        free(g.p);
    }
    free(want);
}

static void test_kinds(void)
{
    json_t *a = json_array(), *o = json_object(), *in = json_object();
    json_object_set_new(o, "id", json_integer(3));
    json_object_set_new(o, "name", json_string("a \"quoted\" \\ back/slash\ttab\nnl\x01\x1f\x7f"));
    json_object_set_new(o, "utf8", json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x80\xae"));
    json_object_set_new(o, "big", json_integer(INT64_MAX));
    json_object_set_new(o, "small", json_integer(INT64_MIN));
    json_object_set_new(o, "zero", json_integer(0));
    json_object_set_new(o, "neg", json_integer(-17));
    static const double R[] = {0.1, 0.003, 1e300, -1e-300, 5e-324, 1.797693134862315e308,
                               -0.0, 0.0, 1.0, 100.0, 1e15, 1e16, 1e17, 123456789012345678.0,
                               2.391355320164565, 1796001836.714939, 0.30000000000000004,
                               9.999999999999999e22, 1e-5, 1.5e-7, 6.02214076e23};
    json_t *reals = json_array();
    for (size_t i = 0; i < sizeof R / sizeof *R; i++) json_array_append_new(reals, json_real(R[i]));
    json_object_set_new(o, "reals", reals);
    json_object_set_new(o, "t", json_true());
    json_object_set_new(o, "f", json_false());
    json_object_set_new(o, "null", json_null());
    json_object_set_new(o, "empty_obj", json_object());
    json_object_set_new(o, "empty_arr", json_array());
    json_object_set_new(in, "deeper", json_pack("[i, [f, {s:s}], []]", 1, 2.5, "k\xc3\xa9y", "v"));
    json_object_set_new(o, "nested", in);
    json_object_set_new(o, "k\xc3\xa9y \"q\"", json_string(""));
    json_array_append_new(a, o);
    json_array_append_new(a, json_object());   /* {} gets the member alone */
    json_array_append_new(a, json_pack("{s:[{s:i},{}]}", "rows", "step", 1));
    json_array_append_new(a, json_integer(42));   /* scalars and arrays: a line each */
    json_array_append_new(a, json_real(-2.5e-8));
    json_array_append_new(a, json_string("line\nbreak"));
    json_array_append_new(a, json_null());
    json_array_append_new(a, json_pack("[i, s]", 1, "x"));
    /* as the export writes it (indent 1) and compact */
    char *doc = json_dumps(a, JSON_INDENT(1) | JSON_REAL_PRECISION(16));
    check_doc("every kind, indented", doc);
    free(doc);
    doc = json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17));
    check_doc("every kind, compact, 17 digits", doc);
    free(doc);
    check_doc("an empty array", "[]");
    check_doc("an empty array, spaced", " [ \n ] \n");
    json_decref(a);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A million reals of random bits, and a million of a training run's shapes (a loss, a
 * learning rate, a time), as the export dumps them, through the lines. */
static void test_reals(void)
{
    int bad = 0;
    for (int d = 0; d < 2000 && bad < 5; d++) {
        json_t *a = json_array();
        for (int i = 0; i < 1000; i++) {
            double v;
            if (d % 2) {
                uint64_t u = next();
                memcpy(&v, &u, sizeof v);
                if (!isfinite(v)) v = (double)(u >> 11);
            } else {
                long k = d * 1000L + i;
                double x[] = {4.0 / (1 + 0.01 * k), 0.001 * (k % 97), k * 0.0008, 1e9 + k * 0.37,
                              (float)(1.6 + 2.2 * exp(-k * 1e-6)), 1.0 / (k + 1)};
                v = x[i % 6];
            }
            json_array_append_new(a, json_real(v));
        }
        char *doc = json_dumps(a, JSON_INDENT(1) | JSON_REAL_PRECISION(16));
        char *want = expected(doc);
        Got g = {0};
        int rc = run(doc, 4096, &g);
        if (rc || !g.p || strcmp(g.p, want)) {
            bad++;
            size_t at = 0;
            while (g.p && g.p[at] && g.p[at] == want[at]) at++;
            CHECK(0, "reals (document %d): rc %d, differ at byte %zu: got %.40s want %.40s", d, rc,
                  at, g.p ? g.p + at : "", want + at);
        }
        free(g.p), free(want), free(doc);
        json_decref(a);
    }
    CHECK(bad == 0, "2,000,000 reals as jansson writes them after a round trip");
}

static void test_refused(void)
{
    static const char *const BAD[] = {"{}", "[1,", "[}", "[1]x", "[\"open", "1",
                                      "[1 2 ]}", "]"};
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        Got g = {0};
        int rc = run(BAD[i], 1, &g);
        CHECK(rc == LM_EFORMAT, "'%s' is not an array of values: rc %d", BAD[i], rc);
        free(g.p);
    }
    /* a sink that fails stops the stream with LM_EIO, and it stays stopped */
    json_t *a = json_array();
    for (int i = 0; i < 20000; i++) json_array_append_new(a, json_pack("{s:i}", "step", i));
    char *doc = json_dumps(a, JSON_INDENT(1));
    Got g = {.fail_after = 2};
    CHECK(run(doc, 4096, &g) == LM_EIO, "a failing sink: LM_EIO");
    free(g.p), free(doc);
    json_decref(a);
}

static void test_string(void)
{
    static const char *const S[] = {"run,step,metric,value\n1,2,loss,3.5\n", "", "a\"b\\c/d\te\r\n",
                                    "caf\xc3\xa9 \xf0\x9f\x98\x80 \x7f\x01"};
    for (size_t i = 0; i < sizeof S / sizeof *S; i++) {
        Got g = {0};
        CHECK(jsonlines_put_string(S[i], strlen(S[i]), got_put, &g) == LM_OK, "put string %zu", i);
        json_t *v = json_string(S[i]);
        char *t = json_dumps(v, FLAGS | JSON_ENCODE_ANY);
        t[strlen(t) - 1] = 0;
        CHECK(!strcmp(g.p ? g.p : "", t + 1), "string %zu: got %s want %s", i, g.p, t + 1);
        free(t), free(g.p);
        json_decref(v);
    }
    Got g = {0};
    CHECK(jsonlines_put_string("ok\xff\xc3", 4, got_put, &g) == LM_OK &&
          !strcmp(g.p, "ok\\\\xff\\\\xc3"), "bytes that are not UTF-8 as \\xNN: %s", g.p);
    free(g.p);
}

int main(void)
{
    test_kinds();
    test_reals();
    test_refused();
    test_string();
    return check_summary();
}
