/* safetext.c — escaping text for terminal output (see safetext.h). One pass over the
 * bytes: printable UTF-8 copied, everything a terminal would interpret written as a
 * visible escape. Not locale-dependent: the decoder is textcheck_utf8_char. */
#include "safetext.h"

#include "textcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The escape for code point cp (or raw byte when bad), or NULL when it prints as is. */
static const char *escape_of(unsigned cp, int bad, int flags, char *tmp, size_t cap)
{
    if (bad) {
        snprintf(tmp, cap, "\\x%02x", cp);
        return tmp;
    }
    if ((cp == '\n' || cp == '\t') && (flags & SAFETEXT_KEEP_NEWLINES))
        return NULL;
    switch (cp) {
    case 0x1B: return "\\e";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case 0x07: return "\\a";
    case 0x08: return "\\b";
    case '\\': return NULL;
    default: break;
    }
    if (cp < 0x20 || cp == 0x7F) {
        snprintf(tmp, cap, "\\x%02x", cp);
        return tmp;
    }
    if ((cp >= 0x80 && cp <= 0x9F) || textcheck_is_bidi(cp)) {   /* C1; bidi controls */
        snprintf(tmp, cap, "\\u%04x", cp);
        return tmp;
    }
    return NULL;
}

/* Escapes into out when out is not NULL; returns the full length needed (without NUL). */
static size_t escape_into(char *out, size_t cap, const char *in, int flags)
{
    const unsigned char *s = (const unsigned char *)(in ? in : "");
    size_t n = strlen((const char *)s), w = 0;
    int full = 0;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        int len = textcheck_utf8_char(s + i, n - i, &cp), bad = len == 0;
        if ((flags & SAFETEXT_PASS_HIGH) && s[i] >= 0x80) {
            cp = 'x';   /* printable: copied as the raw byte below */
            len = 1;
            bad = 0;
        }
        if (bad) {
            cp = s[i];
            len = 1;
        }
        char tmp[16];
        const char *esc = escape_of(cp, bad, flags, tmp, sizeof tmp);
        const char *piece = esc ? esc : (const char *)s + i;
        size_t plen = esc ? strlen(esc) : (size_t)len;
        if (out && !full && w + plen < cap)
            memcpy(out + w, piece, plen);
        else
            full = 1;
        if (!full || !out)
            w += plen;
        else if (out)
            break;
        i += (size_t)len;
    }
    if (out && cap)
        out[w < cap ? w : cap - 1] = 0;
    return w;
}

const char *safetext_escape(char *out, size_t cap, const char *in, int flags)
{
    if (cap)
        escape_into(out, cap, in, flags);
    return out;
}

char *safetext_dup(const char *in, int flags)
{
    size_t n = escape_into(NULL, 0, in, flags);
    char *out = malloc(n + 1);
    if (out)
        escape_into(out, n + 1, in, flags);
    return out;
}
