/* textcheck.c — validation of text settings (see textcheck.h): a strict UTF-8 decoder
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF) and the control
 * characters a terminal would act on. Not a normaliser: valid text is kept as typed. */
#include "textcheck.h"

#include "err.h"

#include <string.h>

int textcheck_utf8_char(const unsigned char *s, size_t n, unsigned *cp)
{
    if (n == 0)
        return 0;
    unsigned c = s[0];
    int len;
    unsigned min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2; min = 0x80; c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3; min = 0x800; c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4; min = 0x10000; c &= 0x07;
    } else {
        return 0;
    }
    if ((size_t)len > n)
        return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

static const char *control_name(unsigned cp)
{
    switch (cp) {
    case 0x1B: return "escape (\\e)";
    case '\n': return "newline (\\n)";
    case '\r': return "carriage return (\\r)";
    case '\t': return "tab (\\t)";
    case 0x07: return "bell (\\a)";
    case 0x08: return "backspace (\\b)";
    case 0x7F: return "delete (DEL)";
    default: return "control character";
    }
}

int textcheck_value(const char *what, const char *value, int flags, char *err)
{
    const unsigned char *s = (const unsigned char *)value;
    size_t n = strlen(value);
    for (size_t i = 0; i < n;) {
        unsigned cp;
        int len = textcheck_utf8_char(s + i, n - i, &cp);
        if (!len)
            return err_set(err, LM_EARG, "%s: byte %zu (0x%02x) is not valid UTF-8; use plain "
                           "UTF-8 text", what, i + 1, s[i]);
        int nl_ok = (flags & TEXTCHECK_ALLOW_NEWLINE) && (cp == '\n' || cp == '\t');
        if ((cp < 0x20 && !nl_ok) || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
            return err_set(err, LM_EARG, "%s: %s U+%04X at byte %zu is not allowed; use "
                           "printable text%s", what, control_name(cp), cp, i + 1,
                           (flags & TEXTCHECK_ALLOW_NEWLINE) ? " (newlines and tabs are fine)"
                                                             : "");
        i += (size_t)len;
    }
    return LM_OK;
}

int textcheck_is_bidi(unsigned cp)
{
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}
