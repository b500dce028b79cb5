/* output.h — one output record, rendered in one place: as one JSON object (the session's
 * --json mode) or as text lines for people. A handler gives each value once, typed and
 * named (those fields, in order, are the JSON object), and writes its text lines as
 * templates whose {key} or {key:FMT} placeholders are filled from the same fields
 * (FMT a printf conversion for the field's type, e.g. {loss:%.4f}, {name:%-20s}; "{{"
 * is a literal brace; a non-finite real prints "-"). Values only people need (a duration
 * as "m:ss") are text-only fields. Not here: what the commands say (cmd_*.c), where
 * output goes (session.c). */
#ifndef LM_OUTPUT_H
#define LM_OUTPUT_H

#include "session.h"

typedef struct Output Output;

/* A new record; event names it in JSON ("event": ...), NULL for none. NULL only when out
 * of memory (every function below accepts NULL and output_emit then reports it). */
Output *output_create(const char *event);

/* Fields, in JSON order. A later field with the same key replaces the earlier value.
 * A non-finite real is left out of the JSON (and prints "-"). Strings are copied. */
void output_str(Output *o, const char *key, const char *v);
void output_int(Output *o, const char *key, long v);
void output_real(Output *o, const char *key, double v);
void output_bool(Output *o, const char *key, int v);
/* A string only the text lines use (not in the JSON). */
void output_text_str(Output *o, const char *key, const char *v);

/* Adds a text line (a template, see above). Lines are only rendered in text mode. */
void output_line(Output *o, const char *tmpl);

/* Renders o into buf as the text lines joined by '\n' (for tests and callers that need
 * the text). Returns the length written (truncated to cap - 1). */
size_t output_render_text(const Output *o, char *buf, size_t cap);

/* Writes o the way the session wants (a JSON line, or each text line) and frees it.
 * LM_OK, or LM_ENOMEM (reported) when building the record ran out of memory. */
int output_emit(Session *s, Output *o);

/* v[0..n) as a sparkline into buf (cap bytes, always terminated): eight block heights in
 * UTF-8 when unicode, else "__..--==" in ASCII; a non-finite value is the lowest. */
void output_sparkline(const float *v, int n, int unicode, char *buf, size_t cap);

/* Frees o without writing it. NULL is a no-op. */
void output_destroy(Output *o);

#endif
