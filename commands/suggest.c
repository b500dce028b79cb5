/* suggest.c — nearest-candidate choice for "did you mean" messages (see suggest.h). The
 * distance is core's one edit distance (strdist.h), case-insensitive. Not a spelling
 * corrector over dictionaries. */
#include "suggest.h"

#include "strdist.h"

#include <string.h>

static int suggest_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

int suggest_distance(const char *a, const char *b)
{
    return strdist_edit(a, b, STRDIST_FOLD_CASE);
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
