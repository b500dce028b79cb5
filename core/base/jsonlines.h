/* jsonlines.h — a JSON array, written in pieces, re-encoded as it streams into one line per
 * element (JSON Lines): each line the bytes jansson's
 * json_dumps(e, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16)) gives for that
 * element e of json_loads(the whole array), with a member of the caller's appended to each
 * object, as `--json export` printed them after parsing the export whole (1.6 GB for a run
 * of 1 M steps). Memory holds one token (a string, a number) and 64 KiB of output, never
 * the document. And a piece of text escaped as the inside of such a JSON string. Not a
 * parser (no tree is built) and not a validator: the input is jansson's own dump. */
#ifndef LM_JSONLINES_H
#define LM_JSONLINES_H

#include <stddef.h>

/* Where the lines go: text (n bytes, NUL-terminated) in pieces, at most 64 KiB each and
 * cut anywhere (the text is ASCII); a non-zero return stops the stream with LM_EIO. */
typedef int (*JsonLinesPut)(void *ud, const char *text, size_t n);

#define JSONLINES_EXTRA_LEN 128

typedef struct {
    JsonLinesPut put;
    void *ud;
    char extra[JSONLINES_EXTRA_LEN];  /* the member added to each object ("" none) */
    int depth;          /* of the input: 1 inside the array, 2 inside an element, ... */
    int elem_obj;       /* the element being read is an object */
    char last;          /* the input's last byte outside tokens (a token's first) */
    int state;          /* between tokens, in a string (or after its backslash), a
                           number, a word (true, false, null), after the array */
    char *tok;          /* the token being read (grown) */
    size_t ntok, captok;
    char *out;          /* output not yet put */
    size_t nout, capout;
    int status;
} JsonLines;

/* Starts a stream into put(ud, ...); extra is a compact member such as "\"event\":\"x\""
 * appended last to every object element ("" or NULL: none; at most
 * JSONLINES_EXTRA_LEN - 1 bytes). Free with jsonlines_free. */
void jsonlines_init(JsonLines *j, const char *extra, JsonLinesPut put, void *ud);
/* Takes the next n bytes of the document. LM_OK, or the stream's error (LM_EFORMAT for
 * input that is not a JSON array of values, LM_EIO when put failed, LM_ENOMEM); after an
 * error every call returns it. */
int jsonlines_write(JsonLines *j, const char *p, size_t n);
/* Ends the document: puts what waits. LM_OK, or LM_EFORMAT when it did not end with the
 * array's ']', or the stream's earlier error. */
int jsonlines_finish(JsonLines *j);
void jsonlines_free(JsonLines *j);

/* Text (n bytes of whole UTF-8 characters) escaped as the inside of a JSON string, as
 * json_dumps with JSON_ENSURE_ASCII writes it (no quotes around it), put to put(ud, ...);
 * a byte that is not UTF-8 becomes the four characters \xNN (jsonval_str's rule).
 * LM_OK, LM_ENOMEM, or LM_EIO when put failed. */
int jsonlines_put_string(const char *text, size_t n, JsonLinesPut put, void *ud);

#endif
