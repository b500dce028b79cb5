/* safetext.h — making stored or model-generated text safe to print on a terminal: control
 * characters (ESC, BEL, CR, DEL, C1 controls ...) are shown escaped (`\e`, `\a`, `\x7f`,
 * `\u009b`) and bytes that are not UTF-8 as `\xNN`, so a run name or a sample cannot
 * retitle, clear or reprogram the user's terminal. Printable UTF-8 is kept as is.
 * Not for JSON output (jansson escapes there) and not a validator (textcheck.h). */
#ifndef LM_SAFETEXT_H
#define LM_SAFETEXT_H

#include <stddef.h>

enum {
    SAFETEXT_KEEP_NEWLINES = 1,  /* '\n' and '\t' are kept (samples, notes) */
    SAFETEXT_PASS_HIGH = 2       /* bytes >= 0x80 pass unchanged (a stream may split a
                                    UTF-8 character between pieces); ASCII controls are
                                    still escaped */
};

/* Writes the escaped form of in into out (cap bytes, always NUL-terminated when cap > 0;
 * truncated at a character boundary when it does not fit). Returns out, so it can be
 * used as a printf argument. in NULL reads as "". */
const char *safetext_escape(char *out, size_t cap, const char *in, int flags);

/* The escaped form of in, malloc'd (caller frees); NULL when out of memory. */
char *safetext_dup(const char *in, int flags);

#endif
