/* suggest.h — "did you mean" for command names, keys and values: an optimal string
 * alignment (restricted Damerau-Levenshtein) distance, case-insensitive, and a chooser
 * of the nearest candidate. Not a fuzzy finder: one best answer or none. */
#ifndef LM_SUGGEST_H
#define LM_SUGGEST_H

/* Edits (insert, delete, substitute, swap of two adjacent bytes) turning a into b,
 * ignoring ASCII case: strdist_edit (core/base/strdist.h) with STRDIST_FOLD_CASE.
 * Bytes, not code points. Strings longer than SUGGEST_MAX_LEN bytes are compared on
 * their first SUGGEST_MAX_LEN bytes plus the length difference. Never allocates. */
#define SUGGEST_MAX_LEN 127 /* = STRDIST_MAX_LEN */
int suggest_distance(const char *a, const char *b);

/* The candidate nearest to word, or NULL when none is near enough. In order:
 *   1. the candidate with the smallest distance <= max(1, strlen(word)/3)
 *      (ties: the first in the list);
 *   2. otherwise, when word has at least 2 bytes, the shortest candidate that starts
 *      with word (ignoring case);
 * NULL entries in candidates are skipped. The result points into candidates. */
const char *suggest_nearest(const char *word, const char *const *candidates, int n);

#endif
