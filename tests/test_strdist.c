/* test_strdist.c — the edit distance behind "did you mean" (strdist.h): empty strings,
 * a swap costing one edit, the classic kitten/sitting, the optimal-string-alignment
 * restriction (ca -> abc is 3, not Damerau's 2), case folding, long strings. */
#include "check.h"
#include "strdist.h"

#include <string.h>

int main(void)
{
    CHECK(strdist_edit("", "", 0) == 0 && strdist_edit("abc", "", 0) == 3, "empty");
    CHECK(strdist_edit("stpes", "steps", 0) == 1, "a swap is one edit");
    CHECK(strdist_edit("kitten", "sitting", 0) == 3, "kitten/sitting");
    CHECK(strdist_edit("ca", "abc", 0) == 3, "OSA, not full Damerau: %d",
          strdist_edit("ca", "abc", 0));
    CHECK(strdist_edit("LR", "lr", 0) == 2 && strdist_edit("LR", "lr", STRDIST_FOLD_CASE) == 0,
          "case");
    char long_a[300], long_b[300];
    memset(long_a, 'x', 299); long_a[299] = 0;
    memset(long_b, 'x', 199); long_b[199] = 0;
    CHECK(strdist_edit(long_a, long_b, 0) == 100, "long strings: %d",
          strdist_edit(long_a, long_b, 0));

    return check_summary();
}
