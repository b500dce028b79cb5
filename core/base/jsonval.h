/* jsonval.h — the two JSON value forms every JSON lmlab writes shares (the run store's
 * export, `--json` output): a number that is null when not finite, and a string whose
 * bytes that are not UTF-8 become \\xNN rather than a lost value. Not a JSON writer
 * (jansson is) and not display formatting. */
#ifndef LM_BASE_JSONVAL_H
#define LM_BASE_JSONVAL_H

struct json_t;

/* A JSON number for v, null when v is NaN or infinite (new reference). */
struct json_t *jsonval_num(double v);
/* A JSON string of text ("" for NULL); each byte that is not UTF-8 becomes the four
 * characters \xNN, valid characters are kept (new reference). */
struct json_t *jsonval_str(const char *text);

#endif
