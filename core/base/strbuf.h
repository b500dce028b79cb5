/* strbuf.h — a growable text buffer written with printf formats: the markdown of the
 * TensorBoard export's texts (core/run/tboard.c), the store's compare table
 * (core/store/runstore_query.c) and the command table's help (commands/cmdtable_help.c).
 * Not a general string library: append only, and running out of memory is a flag the
 * caller reads once at the end rather than a status per call. */
#ifndef LM_STRBUF_H
#define LM_STRBUF_H

#include <stddef.h>

typedef struct {
    char *p;          /* the text, NUL-terminated (NULL while empty); malloc'd, caller frees */
    size_t n, cap;    /* its length and the room allocated */
    int oom;          /* set when growing failed: later writes do nothing */
} StrBuf;

/* Appends printf(fmt, ...) to b (zero-initialised to start), growing it as needed; on
 * failure to grow sets b->oom and leaves the text as it was. */
void strbuf_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
