/* textcheck.h — validation of text settings when they are set (run name, sample prompt,
 * notes, tags, paths): the text must be valid UTF-8 and hold no control characters, so
 * it can be stored, written into a checkpoint's JSON metadata and printed safely.
 * Not an output escaper (see safetext.h for that). */
#ifndef LM_TEXTCHECK_H
#define LM_TEXTCHECK_H

#include <stddef.h>

/* Flags for textcheck_value. */
enum {
    TEXTCHECK_ALLOW_NEWLINE = 1   /* newline and tab are accepted (prompts, notes) */
};

/* Checks value for the setting `what` (used in the message). LM_OK, or LM_EARG with a
 * message naming the setting, the byte offset and the offending byte or character:
 * invalid UTF-8 (bad lead byte, truncated or overlong sequence, surrogate, above
 * U+10FFFF), C0 controls (except newline and tab with TEXTCHECK_ALLOW_NEWLINE), DEL, and
 * C1 controls U+0080..U+009F. */
int textcheck_value(const char *what, const char *value, int flags, char *err);

/* 1 when cp is a bidirectional formatting control (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069): printed raw, "x\u202egnp.exe" reads as "xexe.png", so every output
 * shows them escaped (issue 46 item 10). */
int textcheck_is_bidi(unsigned cp);

/* Decodes one UTF-8 character at s (at most n bytes). Returns its length (1..4) with the
 * code point in *cp, or 0 when the bytes are not valid UTF-8. Shared with safetext.c. */
int textcheck_utf8_char(const unsigned char *s, size_t n, unsigned *cp);

#endif
