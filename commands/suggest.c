/* suggest.c — edit distance and nearest-candidate choice for "did you mean" messages
 * (see suggest.h). The distance is the optimal string alignment variant of
 * Damerau-Levenshtein (Wagner-Fischer DP with a transposition case), three rolling rows
 * on the stack. Not a spelling corrector over dictionaries. */
#include "suggest.h"

#include <string.h>

static int suggest_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int suggest_min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int suggest_distance(const char *a, const char *b)
{
    size_t la0 = strlen(a), lb0 = strlen(b);
    int la = la0 > SUGGEST_MAX_LEN ? SUGGEST_MAX_LEN : (int)la0;
    int lb = lb0 > SUGGEST_MAX_LEN ? SUGGEST_MAX_LEN : (int)lb0;
    long ea = (long)(la0 - (size_t)la), eb = (long)(lb0 - (size_t)lb);
    int extra = (int)(ea > eb ? ea - eb : eb - ea);
    int rows[3][SUGGEST_MAX_LEN + 1];
    int *pp = rows[0], *p = rows[1], *c = rows[2];
    for (int j = 0; j <= lb; j++) p[j] = j;
    for (int i = 1; i <= la; i++) {
        c[0] = i;
        int ai = suggest_lower((unsigned char)a[i - 1]);
        for (int j = 1; j <= lb; j++) {
            int bj = suggest_lower((unsigned char)b[j - 1]);
            int cost = ai != bj;
            int d = suggest_min3(p[j] + 1, c[j - 1] + 1, p[j - 1] + cost);
            if (i > 1 && j > 1 && ai == suggest_lower((unsigned char)b[j - 2]) &&
                suggest_lower((unsigned char)a[i - 2]) == bj && pp[j - 2] + 1 < d)
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

static int suggest_has_prefix(const char *s, const char *prefix)
{
    for (; *prefix; s++, prefix++)
        if (!*s || suggest_lower((unsigned char)*s) != suggest_lower((unsigned char)*prefix))
            return 0;
    return 1;
}

const char *suggest_nearest(const char *word, const char *const *candidates, int n)
{
    int len = (int)strlen(word);
    int limit = len / 3 > 1 ? len / 3 : 1;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int i = 0; i < n; i++) {
        if (!candidates[i]) continue;
        int d = suggest_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    if (best || len < 2) return best;
    size_t best_len = 0;
    for (int i = 0; i < n; i++) {
        if (!candidates[i] || !suggest_has_prefix(candidates[i], word)) continue;
        size_t l = strlen(candidates[i]);
        if (!best || l < best_len) {
            best = candidates[i];
            best_len = l;
        }
    }
    return best;
}
