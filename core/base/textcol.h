/* textcol.h — the cells of the text tables lmlab prints (compare, runs, the store's
 * compare): a cell's width in terminal columns, and a cell fitted to its column (cut with
 * '…' when too long, padded with spaces when short), so every value sits under its
 * column. A UTF-8 character counts as one column (bytes that are not UTF-8 as one each);
 * East Asian wide characters are not measured. Not an escaper (safetext.h): the caller
 * passes text that is safe to print. */
#ifndef LM_TEXTCOL_H
#define LM_TEXTCOL_H

#include <stddef.h>

#define TEXTCOL_MAX 40   /* the widest column a table gives a label or a value */

/* How a cell too long for its column is cut. */
typedef enum {
    TEXTCOL_KEEP_START,  /* "a-long-valu…": values, names */
    TEXTCOL_KEEP_END     /* "…layers.3.attn.w (last)": series names, whose end tells
                            them apart */
} TextcolCut;

/* Columns s takes on a terminal (s NULL reads as ""). */
int textcol_width(const char *s);

/* s fitted to exactly w columns (w >= 1) into out (cap bytes, always NUL-terminated when
 * cap > 0): padded with spaces when shorter, cut at a character boundary with '…' in
 * place of what was cut when longer. Returns out, so it can be a printf argument. */
const char *textcol_fit(char *out, size_t cap, const char *s, int w, TextcolCut cut);

#endif
