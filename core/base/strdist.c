/* strdist.c — optimal string alignment distance (strdist.h): Wagner-Fischer dynamic
 * programming with the transposition case, three rolling rows on the stack. Not a
 * general Damerau-Levenshtein (a substring is never edited twice). */
#include "strdist.h"

#include <string.h>

static int fold(unsigned char c, unsigned flags)
{
    return (flags & STRDIST_FOLD_CASE) && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int strdist_edit(const char *a, const char *b, unsigned flags)
{
    size_t la0 = strlen(a), lb0 = strlen(b);
    int la = la0 > STRDIST_MAX_LEN ? STRDIST_MAX_LEN : (int)la0;
    int lb = lb0 > STRDIST_MAX_LEN ? STRDIST_MAX_LEN : (int)lb0;
    long ea = (long)(la0 - (size_t)la), eb = (long)(lb0 - (size_t)lb);
    int extra = (int)(ea > eb ? ea - eb : eb - ea);
    int rows[3][STRDIST_MAX_LEN + 1];
    int *pp = rows[0], *p = rows[1], *c = rows[2];
    for (int j = 0; j <= lb; j++)
        p[j] = j;
    for (int i = 1; i <= la; i++) {
        c[0] = i;
        int ai = fold((unsigned char)a[i - 1], flags);
        for (int j = 1; j <= lb; j++) {
            int bj = fold((unsigned char)b[j - 1], flags);
            int d = min3(p[j] + 1, c[j - 1] + 1, p[j - 1] + (ai != bj));
            if (i > 1 && j > 1 && ai == fold((unsigned char)b[j - 2], flags) &&
                fold((unsigned char)a[i - 2], flags) == bj && pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            c[j] = d;
        }
        int *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    return p[lb] + extra;
}
