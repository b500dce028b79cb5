/* strdist.h — the one edit distance of core/, for "did you mean" messages over keys and
 * names: optimal string alignment (restricted Damerau-Levenshtein: insert, delete,
 * substitute, swap of two adjacent bytes). Not a fuzzy finder and not Unicode-aware. */
#ifndef LM_STRDIST_H
#define LM_STRDIST_H

/* Compare ignoring ASCII case. */
#define STRDIST_FOLD_CASE 1u

/* Strings longer than this are compared on their first STRDIST_MAX_LEN bytes, plus the
 * difference of the lengths beyond it. */
#define STRDIST_MAX_LEN 127

/* Edits turning a into b (bytes, not code points); flags: 0 or STRDIST_FOLD_CASE.
 * Never allocates, never fails. commands/suggest.c's "did you mean" uses it with
 * STRDIST_FOLD_CASE. */
int strdist_edit(const char *a, const char *b, unsigned flags);

#endif
