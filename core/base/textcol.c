/* textcol.c — text table cells measured and fitted in terminal columns (see textcol.h).
 * Not a layout engine: the caller chooses each column's width. */
#include "textcol.h"

#include "textcheck.h"

#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6"   /* … */

/* Bytes of the character at s (1 for a byte that is not UTF-8); s is not at its end. */
static size_t char_len(const char *s)
{
    unsigned cp;
    int n = textcheck_utf8_char((const unsigned char *)s, strlen(s) < 4 ? strlen(s) : 4, &cp);
    return n > 0 ? (size_t)n : 1;
}

int textcol_width(const char *s)
{
    int w = 0;
    for (; s && *s; s += char_len(s)) w++;
    return w;
}

/* Appends n bytes of s to out (length *o, cap bytes) when they fit whole. */
static void put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
    if (*o + n >= cap) return;
    memcpy(out + *o, s, n);
    *o += n;
    out[*o] = 0;
}

const char *textcol_fit(char *out, size_t cap, const char *s, int w, TextcolCut cut)
{
    size_t o = 0;
    if (!cap) return out;
    out[0] = 0;
    s = s ? s : "";
    w = w < 1 ? 1 : w;
    int have = textcol_width(s), shown = have;
    if (have > w) {   /* w - 1 of its characters and the marker */
        shown = w;
        const char *p = s;
        if (cut == TEXTCOL_KEEP_END) {
            put(out, cap, &o, ELLIPSIS, sizeof ELLIPSIS - 1);
            for (int skip = have - (w - 1); skip > 0; skip--) p += char_len(p);
            put(out, cap, &o, p, strlen(p));
        } else {
            for (int k = 0; k < w - 1; k++) p += char_len(p);
            put(out, cap, &o, s, (size_t)(p - s));
            put(out, cap, &o, ELLIPSIS, sizeof ELLIPSIS - 1);
        }
    } else {
        put(out, cap, &o, s, strlen(s));
    }
    for (; shown < w; shown++) put(out, cap, &o, " ", 1);
    return out;
}
