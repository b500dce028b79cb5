/* test_output.c — one output record rendered as text or as a JSON line: placeholders
 * with and without formats, text-only fields, replaced fields, non-finite reals (left out
 * of the JSON, "-" in text), perplexities ({x:ppl}), literal braces, an unknown key, and both modes through a
 * session's writer. */
#include "check.h"
#include "metrics.h"
#include "output.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

static char got[4096];

static void capture(void *ud, int kind, const char *text)
{
    (void)ud; (void)kind;
    strncat(got, text, sizeof got - strlen(got) - 2);
    strcat(got, "\n");
}

static Output *sample_record(void)
{
    Output *o = output_create("stop");
    output_int(o, "run", 12);
    output_str(o, "status", "running");
    output_str(o, "status", "stopped");        /* replaces */
    output_real(o, "loss", 1.23456);
    output_real(o, "best_val", NAN);
    output_bool(o, "ok", 1);
    output_text_str(o, "elapsed", "1:05");
    output_line(o, "run #{run} {status} loss {loss:%.3f} best {best_val:%.4f} after {elapsed}");
    output_line(o, "{{literal} 100% {nosuch} {name:%-4s}|");
    output_str(o, "name", "ab");
    return o;
}

int main(void)
{
    char buf[512];
    Output *o = sample_record();
    output_render_text(o, buf, sizeof buf);
    CHECK(!strcmp(buf, "run #12 stopped loss 1.235 best - after 1:05\n"
                       "{literal} 100% {nosuch?} ab  |"), "text: '%s'", buf);
    /* a perplexity in metrics.h's one format: 4 digits past 1e6 (a diverged run's ppl
     * printed 136 digits with %.3f), "inf" where exp(loss) overflowed */
    Output *p = output_create("eval");
    output_real(p, "a", 12.34567);
    output_real(p, "b", exp(311.7555));
    output_real(p, "c", exp(1528.65));
    output_real(p, "d", NAN);
    output_line(p, "{a:ppl} {b:ppl} {c:ppl} {d:ppl}");
    output_render_text(p, buf, sizeof buf);
    CHECK(!strcmp(buf, "12.346 2.476e+135 inf nan"), "perplexities: '%s'", buf);
    output_destroy(p);
    /* every ETA: the pace over the steps left, or what is left of time_budget if sooner */
    CHECK(metric_eta(100, 1000, 10, 0) == 90, "pace: %g", metric_eta(100, 1000, 10, 0));
    CHECK(metric_eta(6000, 100000, 5.5, 25) == 19.5, "time_budget=25 ends it first: %g",
          metric_eta(6000, 100000, 5.5, 25));
    CHECK(metric_eta(900, 1000, 90, 600) == 10, "steps end it first: %g", metric_eta(900, 1000, 90, 600));
    CHECK(metric_eta(10, 1000, 30, 25) == 0 && metric_eta(1000, 1000, 9, 0) == 0, "past either end: 0");
    CHECK(isnan(metric_eta(0, 1000, 0, 25)), "before the first step: unknown");
    size_t n = output_render_text(o, buf, 10);
    CHECK(n == 9 && !strcmp(buf, "run #12 s"), "truncated: %zu '%s'", n, buf);
    output_destroy(o);

    Session s;
    session_init(&s, "/nonexistent/never-opened.db");
    session_set_writer(&s, capture, NULL);
    got[0] = 0;
    CHECK(output_emit(&s, sample_record()) == LM_OK, "emit text");
    CHECK(strstr(got, "run #12 stopped loss 1.235") && strstr(got, "\n{literal}"), "%s", got);
    s.json = 1;
    got[0] = 0;
    CHECK(output_emit(&s, sample_record()) == LM_OK, "emit json");
    json_t *j = json_loads(got, 0, NULL);
    CHECK(j != NULL, "not one JSON line: %s", got);
    CHECK(j && !strcmp(json_string_value(json_object_get(j, "event")), "stop") &&
          json_integer_value(json_object_get(j, "run")) == 12 &&
          !strcmp(json_string_value(json_object_get(j, "status")), "stopped") &&
          fabs(json_real_value(json_object_get(j, "loss")) - 1.23456) < 1e-12 &&
          json_is_true(json_object_get(j, "ok")), "fields: %s", got);
    CHECK(j && !json_object_get(j, "best_val") && !json_object_get(j, "elapsed"),
          "NaN and text-only fields left out: %s", got);
    CHECK(j && json_object_size(j) == 6, "6 keys (event run status loss ok name): %s", got);
    json_decref(j);
    got[0] = 0;
    CHECK(output_emit(&s, NULL) == LM_ENOMEM && strstr(got, "out of memory"), "NULL: %s", got);
    session_free(&s);
    return check_summary();
}
